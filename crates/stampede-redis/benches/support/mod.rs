//! For the benches: a throwaway redis-server (crates/stampede-testkit: a
//! free loopback port, a temporary directory, no persistence; killed on
//! drop), the hit path's fixture, and calls timed in a task of the
//! runtime. Each bench uses a part of it.
#![allow(dead_code)]

use std::time::{Duration, Instant};

/// The throwaway redis-server and the runtime, from the workspace's test
/// support (stampede-fleet's bench uses the same).
pub use stampede_testkit::{bench_runtime as runtime, BenchRedis};

/// `iters` calls in turn, timed inside a task of the runtime (where a
/// server's request handler runs), not on the thread blocked in
/// `block_on`: a call that hands work to another task is then not charged
/// a wake-up of the benchmark's own thread.
pub async fn in_task<F, Fut>(iters: u64, call: F) -> Duration
where
    F: Fn() -> Fut + Send + 'static,
    Fut: std::future::Future<Output = ()> + Send,
{
    tokio::spawn(async move {
        let t = Instant::now();
        for _ in 0..iters {
            call().await;
        }
        t.elapsed()
    })
    .await
    .unwrap()
}

/// Every Redis bound in the benches: far past any reply, so that a bench
/// holds on a loaded machine (a hit that took longer than the service's
/// 100 ms would be a miss there, and an assertion's panic here). A timer's
/// cost does not depend on its length.
pub const BENCH_TIMEOUT: Duration = Duration::from_secs(60);

/// The hit path's fixture (benches `hit_path` and `hit_ratio`): a cache
/// on one connection to `url` holding `value` fresh for an hour at `k`,
/// and `raw:k` holding the same payload's bytes alone, for a raw `GET` on
/// a clone of that connection (returned with the cache).
pub async fn hit_fixture(
    url: &str,
    value: &str,
) -> (stampede_redis::Cache<String>, stampede_redis::Conn) {
    let con = stampede_redis::Target::parse(url)
        .connect_bounded(BENCH_TIMEOUT)
        .await
        .unwrap();
    let cache: stampede_redis::Cache<String> = stampede_redis::Cache::builder()
        .connection(con.clone())
        .redis_timeout(BENCH_TIMEOUT)
        // Longer than the three Redis commands before an origin call
        // (build() refuses one that is not).
        .deadline(4 * BENCH_TIMEOUT)
        .ttl(Duration::from_secs(3600))
        .origin(|key: String| async move { Ok::<_, String>(key) })
        .build()
        .await
        .unwrap();
    assert!(cache.set("k", &value.to_string()).await.unwrap());
    let got = cache.get("k").await.unwrap();
    assert_eq!(got.source, stampede_redis::Source::Hit);
    let _: () = redis::cmd("SET")
        .arg("raw:k")
        .arg(serde_json::to_vec(value).unwrap())
        .query_async(&mut con.clone())
        .await
        .unwrap();
    (cache, con)
}

/// `n` raw `GET`s of `raw:k` in turn, each payload decoded as the cache
/// decodes a hit's (JSON to a `String`): their time, in seconds (the
/// benches `hit_ratio` and `coherence` pair it with a batch of hits).
pub async fn raw_gets(con: &mut impl redis::aio::ConnectionLike, n: usize) -> f64 {
    let t = Instant::now();
    for _ in 0..n {
        let bytes: Vec<u8> = redis::cmd("GET")
            .arg("raw:k")
            .query_async(con)
            .await
            .unwrap();
        let v: String = serde_json::from_slice(&bytes).unwrap();
        assert!(!v.is_empty());
    }
    t.elapsed().as_secs_f64()
}
