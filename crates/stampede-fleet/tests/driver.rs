//! The read path on real I/O against a real Redis: a small fleet of
//! drivers (each an instance with its own flight table) bursts on one key,
//! and the counts agree with the simulation's for the same shape.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use stampede::metrics::Ending;
use stampede::scenario::Scenario;
use stampede::sim::Fleet;
use stampede_fleet::{Answer, Driver, Origin, OriginFuture};
use stampede_testkit::TestRedis;

/// An origin that sleeps for its latency and counts its calls.
#[derive(Clone)]
struct Slow {
    latency: Duration,
    calls: Arc<AtomicU64>,
}

impl Slow {
    fn new(ms: u64) -> Slow {
        Slow {
            latency: Duration::from_millis(ms),
            calls: Arc::new(AtomicU64::new(0)),
        }
    }
}

impl Origin for Slow {
    fn compute(&self, key: u32) -> OriginFuture {
        let (latency, calls) = (self.latency, self.calls.clone());
        Box::pin(async move {
            calls.fetch_add(1, Ordering::SeqCst);
            tokio::time::sleep(latency).await;
            Ok(format!("value of {key}").into_bytes())
        })
    }
}

async fn fleet(url: &str, s: &Scenario, origin: &Slow) -> Vec<Driver<Slow>> {
    let mut out = Vec::new();
    for _ in 0..s.instances {
        out.push(Driver::connect(url, s, origin.clone()).await.unwrap());
    }
    out
}

/// Every thread of every instance asks for key 0 at once.
async fn burst(drivers: &[Driver<Slow>], threads: u32) -> Vec<Answer> {
    let mut calls = Vec::new();
    for d in drivers {
        for _ in 0..threads {
            let d = d.clone();
            calls.push(tokio::spawn(async move { d.get(0).await }));
        }
    }
    let mut answers = Vec::new();
    for c in calls {
        answers.push(c.await.unwrap());
    }
    answers
}

fn payload(a: &Answer) -> Option<&[u8]> {
    a.value.as_deref().map(Vec::as_slice)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_real_burst_collapses_like_the_simulation() {
    let redis = TestRedis::start().await;
    let s = Scenario {
        instances: 4,
        threads: 50,
        ..Scenario::default()
    };
    let origin = Slow::new(200);
    let drivers = fleet(&redis.url, &s, &origin).await;
    let answers = burst(&drivers, s.threads).await;
    // Everyone got the value, computed once for the whole fleet.
    assert!(
        answers.iter().all(|a| payload(a) == Some(b"value of 0")),
        "{answers:?}"
    );
    assert_eq!(origin.calls.load(Ordering::SeqCst), 1);
    assert_eq!(
        answers
            .iter()
            .filter(|a| a.ending == Ending::Computed)
            .count(),
        1
    );
    // Singleflight outside, claim inside: one claim attempt per instance,
    // as the simulation counts for the same shape.
    let attempts: u64 = drivers
        .iter()
        .map(|d| d.counters().claim_attempts.load(Ordering::SeqCst))
        .sum();
    let sim = Fleet::new(&s, 1).run();
    assert_eq!((sim.recomputes, sim.claim_attempts), (1, 4));
    assert_eq!(attempts, sim.claim_attempts);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_slow_origin_still_refills_the_cache_after_every_caller_gave_up() {
    let redis = TestRedis::start().await;
    let s = Scenario {
        instances: 2,
        threads: 5,
        deadline_ms: 300,
        ..Scenario::default()
    };
    let origin = Slow::new(700);
    let drivers = fleet(&redis.url, &s, &origin).await;
    for a in burst(&drivers, s.threads).await {
        assert_eq!(a.ending, Ending::Timeout, "the callers' deadline is 300 ms");
    }
    // The work went on: the value lands, and the next caller hits it.
    tokio::time::sleep(Duration::from_millis(1500)).await;
    let next = drivers[1].get(0).await;
    assert_eq!(next.ending, Ending::Hit);
    assert_eq!(payload(&next), Some(b"value of 0".as_slice()));
    assert_eq!(
        origin.calls.load(Ordering::SeqCst),
        1,
        "one recompute, never cut short"
    );
}

/// Redis dies under a running fleet. Failing open (the default), the
/// refresh goes on: every request is answered with a value, one recompute
/// per instance, nobody waits past a deadline. Failing closed, nobody may
/// refresh and every caller times out, as the simulation says.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_redis_outage_does_not_freeze_the_refresh_when_failing_open() {
    let mut redis = TestRedis::start().await;
    let open = Scenario {
        instances: 3,
        threads: 10,
        ..Scenario::default()
    };
    let closed = Scenario {
        redis_error: stampede::scenario::RedisErrorPolicy::Closed,
        loser: stampede::scenario::LoserPolicy::Wait,
        ..open.clone()
    };
    let origin = Slow::new(100);
    let drivers = fleet(&redis.url, &open, &origin).await;
    let shut = fleet(&redis.url, &closed, &Slow::new(100)).await;
    redis.kill();
    let answers = burst(&drivers, open.threads).await;
    assert!(
        answers.iter().all(|a| payload(a) == Some(b"value of 0")),
        "{answers:?}"
    );
    assert_eq!(origin.calls.load(Ordering::SeqCst), 3, "one per instance");
    let sim = Fleet::new(
        &Scenario {
            redis_down: true,
            ..open
        },
        1,
    )
    .run();
    assert_eq!(sim.recomputes, 3);
    for a in burst(&shut, closed.threads).await {
        assert_eq!(a.ending, Ending::Timeout);
    }
}
