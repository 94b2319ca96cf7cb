//! Simulation throughput: the interview burst, a million-request burst, and
//! ten simulated minutes of steady traffic, closed-loop and open-loop. Criterion reports time per run;
//! the throughput line is events per second.

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use stampede::scenario::{preset, Arrivals, Scenario, Workload};
use stampede::sim::Fleet;

fn cases() -> Vec<(&'static str, Scenario)> {
    let burst = preset("burst").expect("burst preset");
    let million = Scenario {
        instances: 1000,
        threads: 1000,
        ..burst.clone()
    };
    let steady = Scenario {
        instances: 10,
        threads: 20,
        keys: 200,
        workload: Workload::Steady,
        value_ttl_ms: 5000,
        jitter: 0.2,
        duration_ms: 600_000,
        think_ms: 100,
        ..burst.clone()
    };
    // The same offered load arriving open-loop (about as many requests).
    let open = Scenario {
        arrivals: Arrivals::Open,
        rate_per_s: 1800,
        ..steady.clone()
    };
    vec![
        ("burst_40x200", burst),
        ("burst_1000x1000", million),
        ("steady_10min_10x20", steady),
        ("steady_open_10min_10x20", open),
    ]
}

fn bench(c: &mut Criterion) {
    let mut g = c.benchmark_group("sim");
    g.sample_size(10);
    for (name, s) in cases() {
        let events = Fleet::new(&s, 1).run().events;
        g.throughput(Throughput::Elements(events));
        g.bench_with_input(BenchmarkId::from_parameter(name), &s, |b, s| {
            b.iter(|| Fleet::new(s, 1).run())
        });
    }
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
