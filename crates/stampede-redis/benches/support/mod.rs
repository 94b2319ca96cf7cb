//! For the benches: a throwaway redis-server (a free loopback port, a
//! temporary directory, no persistence; killed on drop) and calls timed
//! in a task of the runtime. Shared by
//! `stampede-redis`'s benches and `stampede-fleet`'s (by path), each using
//! a part of it.
#![allow(dead_code)]

use std::process::Child;
use std::time::{Duration, Instant};

/// The server's process, as the tests start it.
#[path = "../../tests/common/server.rs"]
mod server;

/// A throwaway redis-server on a free loopback port, killed on drop.
pub struct BenchRedis {
    child: Child,
    dir: std::path::PathBuf,
    pub url: String,
}

impl BenchRedis {
    pub fn start() -> BenchRedis {
        let port = server::free_port();
        let dir = server::temp_dir("bench", port);
        let child = server::spawn_server(port, &dir, &[]);
        let url = format!("redis://127.0.0.1:{port}/");
        for _ in 0..200 {
            if std::net::TcpStream::connect(("127.0.0.1", port)).is_ok() {
                break;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        BenchRedis { child, dir, url }
    }
}

impl Drop for BenchRedis {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

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

/// A 2-worker runtime with its timers and I/O.
pub fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
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
