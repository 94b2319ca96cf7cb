//! The read path on real I/O against a real Redis: a small fleet of
//! drivers (each an instance with its own flight table) bursts on one key,
//! and the counts agree with the simulation's for the same shape.

mod common;

use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use common::TestRedis;
use stampede::metrics::Ending;
use stampede::scenario::Scenario;
use stampede::sim::Fleet;
use stampede_redis::{Driver, Origin};

/// An origin that sleeps for its latency and counts its calls.
#[derive(Clone)]
struct Slow {
    latency: Duration,
    calls: Arc<AtomicU64>,
}

impl Origin for Slow {
    fn compute(&self, key: u32) -> Pin<Box<dyn Future<Output = Result<Vec<u8>, String>> + Send>> {
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

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_real_burst_collapses_like_the_simulation() {
    let redis = TestRedis::start().await;
    let s = Scenario {
        instances: 4,
        threads: 50,
        ..Scenario::default()
    };
    let origin = Slow {
        latency: Duration::from_millis(200),
        calls: Arc::new(AtomicU64::new(0)),
    };
    let drivers = fleet(&redis.url, &s, &origin).await;
    for a in burst(&drivers, s.threads).await {
        assert_eq!(a.ending, Ending::Timeout, "the callers' deadline is 300 ms");
    }
    // The work went on: the value lands, and the next caller hits it.
    tokio::time::sleep(Duration::from_millis(1500)).await;
    let next = drivers[1].get(0).await;
    assert_eq!(next.ending, Ending::Hit);
    assert_eq!(
        next.value.as_deref().map(Vec::as_slice),
        Some(b"value of 0".as_slice())
    );
    assert_eq!(
        origin.calls.load(Ordering::SeqCst),
        1,
        "one recompute, never cut short"
    );
}
