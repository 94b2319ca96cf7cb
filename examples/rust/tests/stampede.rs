//! The read path against a throwaway redis-server per test: `make examples`.
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use stampede_example::{Cache, Error, Origin};

const P: usize = 3; // processes (instances)
const C: usize = 50; // concurrent calls on each
const LONG: Duration = Duration::from_secs(5);

/// A redis-server on a free loopback port, stopped when dropped.
struct Server(Child, String);

impl Server {
    fn start() -> Server {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let args = [
            "--port",
            &port.to_string(),
            "--bind",
            "127.0.0.1",
            "--save",
            "",
            "--appendonly",
            "no",
        ];
        let child = Command::new("redis-server")
            .args(args)
            .stdout(Stdio::null())
            .spawn()
            .expect("redis-server");
        for _ in 0..100 {
            if std::net::TcpStream::connect(("127.0.0.1", port)).is_ok() {
                break;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        Server(child, format!("redis://127.0.0.1:{port}"))
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn slow_origin(calls: &Arc<AtomicU64>, ms: u64, fail: bool) -> Origin {
    let calls = calls.clone();
    Arc::new(move |key| {
        calls.fetch_add(1, Ordering::SeqCst);
        Box::pin(async move {
            tokio::time::sleep(Duration::from_millis(ms)).await;
            if fail {
                Err("origin down".to_string())
            } else {
                Ok(format!("value of {key}"))
            }
        })
    })
}

/// P instances sharing the Redis, C concurrent gets on each, on a cold key.
async fn burst(url: &str, key: &str, claim: bool) -> (u64, u64) {
    let calls = Arc::new(AtomicU64::new(0));
    let mut fleet = Vec::new();
    for _ in 0..P {
        let mut cache = Cache::new(url, slow_origin(&calls, 100, false)).await;
        cache.claim = claim;
        fleet.push(cache);
    }
    let mut tasks = Vec::new();
    for cache in &fleet {
        for _ in 0..C {
            let (cache, key) = (cache.clone(), key.to_string());
            tasks.push(tokio::spawn(async move { cache.get(&key, LONG).await }));
        }
    }
    for task in tasks {
        assert_eq!(task.await.unwrap(), Ok(format!("value of {key}")));
    }
    let claims = fleet.iter().map(|c| c.claims.load(Ordering::SeqCst)).sum();
    (calls.load(Ordering::SeqCst), claims)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_burst_makes_one_origin_call() {
    let server = Server::start();
    let (calls, claims) = burst(&server.1, "burst", true).await;
    println!("rust: {P} processes x {C} calls -> {calls} origin calls ({claims} claim attempts)");
    assert_eq!((calls, claims), (1, P as u64));
    assert_eq!(
        burst(&server.1, "burst-sf", false).await,
        (P as u64, 0),
        "singleflight only"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_failure_is_shared_never_remembered() {
    let server = Server::start();
    let calls = Arc::new(AtomicU64::new(0));
    let cache = Cache::new(&server.1, slow_origin(&calls, 50, true)).await;
    let tasks: Vec<_> = (0..C)
        .map(|_| {
            let c = cache.clone();
            tokio::spawn(async move { c.get("failing", LONG).await })
        })
        .collect();
    for task in tasks {
        assert_eq!(
            task.await.unwrap(),
            Err(Error::Origin("origin down".into()))
        );
    }
    assert_eq!(calls.load(Ordering::SeqCst), 1);
    assert!(cache.get("failing", LONG).await.is_err());
    assert_eq!(
        calls.load(Ordering::SeqCst),
        2,
        "the next call must try again"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_deadline_ends_the_wait_not_the_work() {
    let server = Server::start();
    let cache = Cache::new(&server.1, slow_origin(&Arc::default(), 300, false)).await;
    let start = Instant::now();
    assert_eq!(
        cache.get("slow", Duration::from_millis(50)).await,
        Err(Error::TimedOut)
    );
    assert!(
        start.elapsed() < Duration::from_millis(150),
        "{:?}",
        start.elapsed()
    );
    tokio::time::sleep(Duration::from_millis(400)).await;
    let value: Option<String> = cache
        .run(redis::cmd("GET").arg("value:slow"))
        .await
        .unwrap();
    assert_eq!(value.as_deref(), Some("value of slow"));
}

#[tokio::test]
async fn a_release_never_deletes_another_holders_claim() {
    let server = Server::start();
    let cache = Cache::new(&server.1, slow_origin(&Arc::default(), 0, false)).await;
    let _: () = cache
        .run(
            redis::cmd("SET")
                .arg("lock:held")
                .arg("theirs")
                .arg("PX")
                .arg(10_000),
        )
        .await
        .unwrap();
    assert!(!cache.release("held", "mine").await);
    let holder: Option<String> = cache.run(redis::cmd("GET").arg("lock:held")).await.unwrap();
    assert_eq!(holder.as_deref(), Some("theirs"));
    assert!(cache.release("held", "theirs").await);
}

#[tokio::test]
async fn redis_down_fails_open() {
    let cache = Cache::new(
        "redis://127.0.0.1:1",
        slow_origin(&Arc::default(), 0, false),
    )
    .await; // nothing listens there
    assert_eq!(cache.get("k", LONG).await, Ok("value of k".to_string()));
}
