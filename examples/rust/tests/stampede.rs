//! The read path against a throwaway redis-server per test: `make examples`.
//! No test asserts a tight time: they count origin calls and claims and
//! wait on gates or generous bounds, so that they hold on a loaded machine.
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use stampede_example::{Cache, Error, Origin};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::Semaphore;

const P: usize = 3; // processes (instances)
const C: usize = 50; // concurrent calls on each
const LONG: Duration = Duration::from_secs(20);

/// A redis-server on a free loopback port, stopped when dropped.
struct Server {
    child: Child,
    port: u16,
    url: String,
}

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
        for _ in 0..250 {
            if std::net::TcpStream::connect(("127.0.0.1", port)).is_ok() {
                break;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let url = format!("redis://127.0.0.1:{port}");
        Server { child, port, url }
    }

    /// Sends `signal` (STOP, CONT) to the server.
    fn signal(&self, signal: &str) {
        let pid = self.child.id().to_string();
        let ok = Command::new("kill")
            .args([&format!("-{signal}"), &pid])
            .status();
        assert!(ok.unwrap().success(), "kill -{signal}");
    }

    /// The test's own hand on the same Redis: one command, unbounded.
    async fn run(&self, args: &[&str]) -> Option<String> {
        run_on(&self.url, args).await
    }
}

/// One command on the Redis at `url`, unbounded: a string reply or None.
async fn run_on(url: &str, args: &[&str]) -> Option<String> {
    let client = redis::Client::open(url).unwrap();
    let mut conn = client.get_multiplexed_async_connection().await.unwrap();
    let mut cmd = redis::cmd(args[0]);
    for a in &args[1..] {
        cmd.arg(*a);
    }
    match cmd.query_async::<redis::Value>(&mut conn).await.unwrap() {
        redis::Value::BulkString(b) => Some(String::from_utf8(b).unwrap()),
        _ => None,
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// An origin that counts its calls; each sleeps `ms`, after a permit of
/// `gate` when one is given (the test opens it).
fn origin(calls: &Arc<AtomicU64>, ms: u64, fail: bool, gate: Option<Arc<Semaphore>>) -> Origin {
    let calls = calls.clone();
    Arc::new(move |key| {
        calls.fetch_add(1, Ordering::SeqCst);
        let gate = gate.clone();
        Box::pin(async move {
            if let Some(gate) = gate {
                let _ = gate.acquire().await.unwrap();
            }
            tokio::time::sleep(Duration::from_millis(ms)).await;
            if fail {
                Err("origin down".to_string())
            } else {
                Ok(format!("value of {key}"))
            }
        })
    })
}

/// An instance whose Redis commands are bounded by 2 s, not 100 ms: on a
/// loaded machine a slow answer must not be taken for a Redis failure
/// (which fails open, and would add origin calls to the counts). The
/// paused-Redis test keeps the 100 ms.
async fn instance(url: &str, origin: Origin) -> Cache {
    Cache::bounded(url, origin, Duration::from_secs(2)).await
}

async fn until(condition: impl Fn() -> bool) {
    for _ in 0..2000 {
        if condition() {
            return;
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    panic!("never happened");
}

/// P instances sharing the Redis, C concurrent gets on each, on `key`:
/// the claim attempts.
async fn burst(url: &str, origin: &Origin, key: &str, claim: bool) -> u64 {
    let mut fleet = Vec::new();
    for _ in 0..P {
        let mut cache = instance(url, origin.clone()).await;
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
    for cache in &fleet {
        assert_eq!(cache.group.in_flight(), 0, "flights left in the map");
    }
    fleet.iter().map(|c| c.claims.load(Ordering::SeqCst)).sum()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_burst_makes_one_origin_call() {
    let server = Server::start();
    let calls = Arc::new(AtomicU64::new(0));
    let claims = burst(
        &server.url,
        &origin(&calls, 100, false, None),
        "burst",
        true,
    )
    .await;
    let n = calls.load(Ordering::SeqCst);
    println!("rust: {P} processes x {C} calls -> {n} origin calls ({claims} claim attempts)");
    assert_eq!(n, 1);
    assert!(claims >= P as u64);
    let calls = Arc::new(AtomicU64::new(0));
    let o = origin(&calls, 100, false, None);
    assert_eq!(burst(&server.url, &o, "burst-sf", false).await, 0);
    assert_eq!(calls.load(Ordering::SeqCst), P as u64, "singleflight only");
}

/// While this instance's flight waits on its origin, another instance
/// writes the value: a caller finds it with its GET and answers at once.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_hit_never_enters_a_flight() {
    let server = Server::start();
    let (calls, gate) = (Arc::new(AtomicU64::new(0)), Arc::new(Semaphore::new(0)));
    let cache = instance(&server.url, origin(&calls, 0, false, Some(gate.clone()))).await;
    let c = cache.clone();
    let flight = tokio::spawn(async move { c.get("hot", LONG).await });
    until(|| calls.load(Ordering::SeqCst) == 1).await;
    server.run(&["SET", "value:hot", "cached"]).await;
    let hit = cache.get("hot", Duration::from_secs(10)).await;
    gate.add_permits(1);
    assert_eq!(hit, Ok("cached".to_string()));
    flight.await.unwrap().unwrap();
}

/// A caller whose first GET ends only after a flight settled starts the
/// next one: on a loaded machine the C callers can make a few flights,
/// never C.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_failure_is_shared_never_remembered() {
    let server = Server::start();
    let calls = Arc::new(AtomicU64::new(0));
    let cache = instance(&server.url, origin(&calls, 200, true, None)).await;
    let tasks: Vec<_> = (0..C)
        .map(|_| {
            let c = cache.clone();
            tokio::spawn(async move { c.get("failing", LONG).await })
        })
        .collect();
    for task in tasks {
        let got = task.await.unwrap();
        assert_eq!(got, Err(Error::Origin("origin down".into())));
    }
    let flights = calls.load(Ordering::SeqCst);
    assert!((1..=5).contains(&flights), "{flights} origin calls");
    assert_eq!(cache.group.in_flight(), 0);
    assert!(cache.get("failing", LONG).await.is_err());
    let n = calls.load(Ordering::SeqCst);
    assert_eq!(n, flights + 1, "the next call must try again");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_deadline_ends_the_wait_not_the_work() {
    let server = Server::start();
    let gate = Arc::new(Semaphore::new(0)); // the origin answers when the test says so
    let o = origin(&Arc::default(), 0, false, Some(gate.clone()));
    let cache = instance(&server.url, o).await;
    let got = cache.get("slow", Duration::from_millis(50)).await;
    assert_eq!(got, Err(Error::TimedOut));
    gate.add_permits(1); // the flight goes on and lands its value
    for _ in 0..1000 {
        if server.run(&["GET", "value:slow"]).await.as_deref() == Some("value of slow") {
            return;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!("the value did not land");
}

#[tokio::test]
async fn a_release_never_deletes_another_holders_claim() {
    let server = Server::start();
    let cache = instance(&server.url, origin(&Arc::default(), 0, false, None)).await;
    server
        .run(&["SET", "lock:held", "theirs", "PX", "10000"])
        .await;
    assert!(!cache.release("held", "mine").await);
    let holder = server.run(&["GET", "lock:held"]).await;
    assert_eq!(holder.as_deref(), Some("theirs"));
    assert!(cache.release("held", "theirs").await);
}

/// A holder died holding the claim (a token nobody releases): the pollers
/// claim again while they poll, and one takes over when its TTL runs out.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_killed_holders_claim_is_taken_over() {
    let server = Server::start();
    server
        .run(&["SET", "lock:dead", "a holder that died", "PX", "300"])
        .await;
    let calls = Arc::new(AtomicU64::new(0));
    burst(&server.url, &origin(&calls, 20, false, None), "dead", true).await;
    let n = calls.load(Ordering::SeqCst);
    assert_eq!(n, 1, "the poller that took the claim over computes");
    assert_eq!(
        server.run(&["GET", "lock:dead"]).await,
        None,
        "and releases it"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_poll_ends_and_leaves_no_flight() {
    let server = Server::start();
    let held = [
        "SET",
        "lock:stuck",
        "a holder that never writes",
        "PX",
        "60000",
    ];
    server.run(&held).await;
    let calls = Arc::new(AtomicU64::new(0));
    let mut cache = instance(&server.url, origin(&calls, 0, false, None)).await;
    cache.wait = Duration::from_millis(200);
    assert_eq!(cache.get("stuck", LONG).await, Err(Error::NoValue));
    assert_eq!(cache.group.in_flight(), 0);
    server.run(&["DEL", "lock:stuck"]).await;
    let got = cache.get("stuck", LONG).await;
    assert_eq!(got, Ok("value of stuck".to_string()));
    assert_eq!(calls.load(Ordering::SeqCst), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_value_written_during_the_poll_is_read() {
    let server = Server::start();
    let held = ["SET", "lock:polled", "another instance", "PX", "60000"];
    server.run(&held).await;
    let calls = Arc::new(AtomicU64::new(0));
    let mut cache = instance(&server.url, origin(&calls, 0, false, None)).await;
    cache.wait = Duration::from_secs(10); // ends long before the claim's TTL
    let c = cache.clone();
    let got = tokio::spawn(async move { c.get("polled", LONG).await });
    until(|| cache.claims.load(Ordering::SeqCst) >= 3).await; // polled, and claimed again
    server
        .run(&["SET", "value:polled", "written by the holder"])
        .await;
    let got = got.await.unwrap();
    assert_eq!(got, Ok("written by the holder".to_string()));
    assert_eq!(calls.load(Ordering::SeqCst), 0);
}

/// A proxy in front of `server`: before it forwards a claim on `lock` (a
/// command that names it and NX), it runs `before` on the server. Its URL.
async fn before_claim(
    server: &Server,
    lock: &'static str,
    before: &'static [&'static str],
) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("redis://{}", listener.local_addr().unwrap());
    let (port, server_url) = (server.port, server.url.clone());
    tokio::spawn(async move {
        while let Ok((client, _)) = listener.accept().await {
            let upstream = TcpStream::connect(("127.0.0.1", port)).await.unwrap();
            let (mut from_client, mut to_client) = client.into_split();
            let (mut from_redis, mut to_redis) = upstream.into_split();
            tokio::spawn(async move { tokio::io::copy(&mut from_redis, &mut to_client).await });
            let server_url = server_url.clone();
            tokio::spawn(async move {
                let mut buf = vec![0u8; 64 * 1024];
                while let Ok(n @ 1..) = from_client.read(&mut buf).await {
                    let chunk = &buf[..n];
                    let has = |w: &[u8]| chunk.windows(w.len()).any(|x| x == w);
                    if has(lock.as_bytes()) && has(b"NX") {
                        run_on(&server_url, before).await;
                    }
                    if to_redis.write_all(chunk).await.is_err() {
                        break;
                    }
                }
            });
        }
    });
    url
}

/// The last holder writes the value and releases between this instance's
/// first GET and its claim: the GET after the won claim finds it, and the
/// origin is not called.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn the_get_after_winning_finds_a_value_written_since_the_first() {
    let server = Server::start();
    let write = &["SET", "value:recheck", "written meanwhile"];
    let url = before_claim(&server, "lock:recheck", write).await;
    let calls = Arc::new(AtomicU64::new(0));
    let cache = instance(&url, origin(&calls, 0, false, None)).await;
    let got = cache.get("recheck", LONG).await;
    assert_eq!(got, Ok("written meanwhile".to_string()));
    assert_eq!(calls.load(Ordering::SeqCst), 0);
    assert_eq!(server.run(&["GET", "lock:recheck"]).await, None, "released");
}

#[tokio::test]
async fn redis_down_fails_open() {
    let o = origin(&Arc::default(), 0, false, None);
    let cache = Cache::new("redis://127.0.0.1:1", o).await; // nothing listens there
    assert_eq!(cache.get("k", LONG).await, Ok("value of k".to_string()));
}

/// Redis hangs (SIGSTOP): every command ends at its 100 ms bound, and every
/// caller gets the origin's value while Redis is still stopped.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn redis_paused_fails_open_within_the_timeouts() {
    let server = Server::start();
    let cache = Cache::new(&server.url, origin(&Arc::default(), 0, false, None)).await;
    server.signal("STOP");
    let tasks: Vec<_> = (0..C)
        .map(|_| {
            let c = cache.clone();
            tokio::spawn(async move { c.get("paused", LONG).await })
        })
        .collect();
    // 20 s: far past the bounds, only a hang reaches it.
    let got = tokio::time::timeout(Duration::from_secs(20), async {
        let mut got = Vec::new();
        for task in tasks {
            got.push(task.await.unwrap());
        }
        got
    })
    .await;
    server.signal("CONT");
    let got = got.expect("callers still waiting on a stopped Redis");
    assert!(got.iter().all(|g| *g == Ok("value of paused".to_string())));
}
