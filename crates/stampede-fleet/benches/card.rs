//! `fleet/card`: the card's scenario (40 instances x 200 threads, one key)
//! run for real by `stampede_fleet::fleet::run`, wall time from the first
//! connection to the last counter.
//!
//! Run: `cargo bench -p stampede-fleet --bench card` (redis-server on PATH).

use std::sync::Arc;
use std::time::Duration;

use criterion::{criterion_group, criterion_main, Criterion};
use stampede::scenario::preset;

use stampede_testkit::{bench_runtime as runtime, BenchRedis};

fn card(c: &mut Criterion) {
    let rt = runtime();
    let redis = BenchRedis::start();
    let mut g = c.benchmark_group("fleet");
    g.sample_size(10);
    g.measurement_time(Duration::from_secs(20));
    let card = preset("burst").unwrap();
    // Runs whose counts left the simulation's (1 recompute, 40 claim
    // attempts), and the Redis errors behind them: printed, not asserted.
    let tally = Arc::new(std::sync::Mutex::new((0u64, 0u64, 0u64)));
    g.bench_function("card", |b| {
        b.to_async(&rt).iter(|| {
            let (url, card, tally) = (redis.url.clone(), card.clone(), tally.clone());
            async move {
                let r = stampede_fleet::fleet::run(url.as_str(), &card)
                    .await
                    .unwrap();
                let mut t = tally.lock().unwrap();
                t.0 += 1;
                if (r.recomputes, r.claim_attempts) != (1, 40) {
                    t.1 += 1;
                }
                t.2 += r.redis_errors;
            }
        })
    });
    g.finish();
    let (runs, off, errors) = *tally.lock().unwrap();
    eprintln!(
        "fleet/card: {runs} runs, {off} not 1 recompute / 40 claim attempts, {errors} Redis errors"
    );
}

criterion_group!(benches, card);
criterion_main!(benches);
