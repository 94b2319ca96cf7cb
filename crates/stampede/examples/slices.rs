//! Times a million-thread fleet built and run in slices, the way the page
//! drives it: prints Fleet::new, the whole run, and the longest slice.
//! `cargo run --release -p stampede --example slices -- [instances] [threads] [budget]`
use stampede::{scenario::Scenario, sim::Fleet};
use std::time::{Duration, Instant};

fn main() {
    let arg = |i: usize, d: u64| {
        std::env::args()
            .nth(i)
            .and_then(|a| a.parse().ok())
            .unwrap_or(d)
    };
    let s = Scenario {
        instances: arg(1, 1000) as u32,
        threads: arg(2, 1000) as u32,
        ..Scenario::default()
    };
    let budget = arg(3, 2000) as usize;
    let t = Instant::now();
    let mut f = Fleet::new(&s, 1);
    let new = t.elapsed();
    let t = Instant::now();
    let (mut slices, mut worst) = (0, Duration::ZERO);
    loop {
        let t1 = Instant::now();
        let done = f.advance_to(u64::MAX, budget);
        worst = worst.max(t1.elapsed());
        slices += 1;
        if done || f.is_quiet() {
            break;
        }
    }
    println!(
        "{}x{} budget {budget}: new {new:?}, run {:?} in {slices} slices, longest slice {worst:?}",
        s.instances,
        s.threads,
        t.elapsed()
    );
}
