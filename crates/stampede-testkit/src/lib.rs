//! Test support for `stampede-redis` and `stampede-fleet` (and their
//! benches): a throwaway `redis-server` on a free loopback port in a
//! temporary directory, no persistence, killed when dropped, pass or fail
//! ([`TestRedis`]); paused with `SIGSTOP` ([`TestRedis::pause`]), killed
//! and restarted on its port; a three-node Redis Cluster
//! ([`TestCluster`]); a probe of how late the runtime's timers fire
//! ([`LagProbe`]); and the benches' server and runtime ([`BenchRedis`],
//! [`bench_runtime`]). It knows nothing of the cache: what reads the
//! cache's rows stays with the cache's tests.

use std::net::TcpListener;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use tokio::time::sleep;

mod server;
pub use server::{free_port, spawn_server, temp_dir};

/// A throwaway Redis, killed on drop.
pub struct TestRedis {
    child: Child,
    dir: std::path::PathBuf,
    port: u16,
    pub url: String,
}

/// Waits until the server at `url` answers PING (10 s at most).
pub async fn wait_for_ping(url: &str) {
    for _ in 0..500 {
        if let Ok(c) = redis::Client::open(url) {
            if let Ok(mut con) = c.get_multiplexed_async_connection().await {
                if redis::cmd("PING")
                    .query_async::<String>(&mut con)
                    .await
                    .is_ok()
                {
                    return;
                }
            }
        }
        sleep(Duration::from_millis(20)).await;
    }
    panic!("redis-server did not answer on {url}");
}

impl TestRedis {
    pub async fn start() -> TestRedis {
        TestRedis::start_at(free_port()).await
    }

    /// On `port`: a Redis that comes up where a service already looks for
    /// it.
    pub async fn start_at(port: u16) -> TestRedis {
        let dir = temp_dir("test", port);
        let child = spawn_server(port, &dir, &[]);
        let url = format!("redis://127.0.0.1:{port}/");
        let r = TestRedis {
            child,
            dir,
            port,
            url,
        };
        wait_for_ping(&r.url).await;
        r
    }
}

impl TestRedis {
    /// Stops the server now (a Redis outage in the middle of a run).
    pub fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    /// Starts a fresh server on the same port (Redis coming back, empty).
    pub async fn restart(&mut self) {
        self.kill();
        self.child = spawn_server(self.port, &self.dir, &[]);
        wait_for_ping(&self.url).await;
    }
}

/// A `SIGSTOP` of the server (a paused Redis: its kernel still takes the
/// bytes sent to it, and it runs them when it resumes), undone by
/// `SIGCONT` when [`Paused::resume`] is called or the guard is dropped,
/// pass or fail: a test never leaves Redis stopped.
pub struct Paused {
    pid: u32,
    resumed: bool,
}

fn signal(pid: u32, sig: &str) {
    let ok = Command::new("kill")
        .arg(format!("-{sig}"))
        .arg(pid.to_string())
        .status()
        .is_ok_and(|s| s.success());
    assert!(ok, "kill -{sig} {pid}");
}

impl Paused {
    /// `SIGCONT`: Redis runs again, starting with what was sent meanwhile.
    pub fn resume(mut self) {
        self.resumed = true;
        signal(self.pid, "CONT");
    }
}

impl Drop for Paused {
    fn drop(&mut self) {
        if !self.resumed {
            signal(self.pid, "CONT");
        }
    }
}

impl TestRedis {
    /// A connection of the test's own.
    pub async fn connection(&self) -> redis::aio::MultiplexedConnection {
        redis::Client::open(self.url.as_str())
            .unwrap()
            .get_multiplexed_async_connection()
            .await
            .unwrap()
    }

    /// `PTTL key`: ms left, -1 with no expiry, -2 with no key.
    pub async fn pttl(&self, key: &str) -> i64 {
        redis::cmd("PTTL")
            .arg(key)
            .query_async(&mut self.connection().await)
            .await
            .unwrap()
    }

    /// `EXISTS key`.
    pub async fn exists(&self, key: &str) -> bool {
        redis::cmd("EXISTS")
            .arg(key)
            .query_async(&mut self.connection().await)
            .await
            .unwrap()
    }

    /// Stores `row` as it is at `key` (a full Redis key name), with no
    /// expiry, replacing whatever the key held.
    pub async fn put(&self, key: &str, row: &[u8]) {
        let _: () = redis::cmd("SET")
            .arg(key)
            .arg(row)
            .query_async(&mut self.connection().await)
            .await
            .unwrap();
    }

    /// `SIGSTOP` the server until the guard resumes it (or is dropped).
    pub fn pause(&self) -> Paused {
        signal(self.child.id(), "STOP");
        Paused {
            pid: self.child.id(),
            resumed: false,
        }
    }
}

impl Drop for TestRedis {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// A port whose cluster bus port (port + 10000) is free as well.
pub fn free_cluster_port(taken: &[u16]) -> u16 {
    let seed = std::process::id() as u64
        ^ std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos() as u64);
    let mut rng = stampede::rng::Rng::new(seed);
    for _ in 0..1000 {
        let p = 20_000 + rng.below(25_000) as u16;
        if taken.contains(&p) || taken.contains(&(p + 10_000)) {
            continue;
        }
        let both = TcpListener::bind(("127.0.0.1", p))
            .and_then(|a| TcpListener::bind(("127.0.0.1", p + 10_000)).map(|b| (a, b)));
        if both.is_ok() {
            return p;
        }
    }
    panic!("no free port pair for a cluster node");
}

/// A throwaway three-node Redis Cluster (three primaries, no replicas) on
/// free loopback ports in a temporary directory; killed when dropped.
pub struct TestCluster {
    children: Vec<Child>,
    dir: std::path::PathBuf,
    pub ports: Vec<u16>,
    /// The nodes' URLs, separated by commas: what `Target::parse` reads as
    /// a cluster.
    pub urls: String,
}

impl TestCluster {
    pub async fn start() -> TestCluster {
        let mut ports = Vec::new();
        for _ in 0..3 {
            ports.push(free_cluster_port(&ports));
        }
        let dir = temp_dir("cluster", ports[0]);
        let mut c = TestCluster {
            children: Vec::new(),
            dir,
            urls: ports
                .iter()
                .map(|p| format!("redis://127.0.0.1:{p}/"))
                .collect::<Vec<_>>()
                .join(","),
            ports: ports.clone(),
        };
        for p in &ports {
            let conf = c.dir.join(format!("nodes-{p}.conf"));
            let conf = conf.to_string_lossy().to_string();
            c.children.push(spawn_server(
                *p,
                &c.dir,
                &[
                    "--cluster-enabled",
                    "yes",
                    "--cluster-config-file",
                    &conf,
                    "--cluster-node-timeout",
                    "5000",
                ],
            ));
        }
        for p in &ports {
            wait_for_ping(&format!("redis://127.0.0.1:{p}/")).await;
        }
        let mut create = Command::new("redis-cli");
        create.arg("--cluster").arg("create");
        for p in &ports {
            create.arg(format!("127.0.0.1:{p}"));
        }
        let out = create
            .args(["--cluster-replicas", "0", "--cluster-yes"])
            .stdin(Stdio::null())
            .output()
            .expect("redis-cli on PATH");
        assert!(
            out.status.success(),
            "redis-cli --cluster create failed: {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        // Every node must see the whole cluster as ok before it is used.
        for p in &ports {
            let url = format!("redis://127.0.0.1:{p}/");
            let mut ok = false;
            for _ in 0..500 {
                let client = redis::Client::open(url.as_str()).unwrap();
                if let Ok(mut con) = client.get_multiplexed_async_connection().await {
                    let info: String = redis::cmd("CLUSTER")
                        .arg("INFO")
                        .query_async(&mut con)
                        .await
                        .unwrap_or_default();
                    if info.contains("cluster_state:ok") {
                        ok = true;
                        break;
                    }
                }
                sleep(Duration::from_millis(20)).await;
            }
            assert!(ok, "node {p} never reported cluster_state:ok");
        }
        c
    }
}

impl TestCluster {
    /// A connection to the node on `port`.
    pub async fn node(&self, port: u16) -> redis::aio::MultiplexedConnection {
        redis::Client::open(format!("redis://127.0.0.1:{port}/"))
            .unwrap()
            .get_multiplexed_async_connection()
            .await
            .unwrap()
    }

    /// A fourth (fifth, ...) primary, empty: started, met by the first
    /// node, and known to every node before this returns (no slots yet:
    /// give it some with [`TestCluster::move_slot_of_to`]). Its port.
    pub async fn add_node(&mut self) -> u16 {
        let p = free_cluster_port(&self.ports);
        let conf = self.dir.join(format!("nodes-{p}.conf"));
        let conf = conf.to_string_lossy().to_string();
        self.children.push(spawn_server(
            p,
            &self.dir,
            &[
                "--cluster-enabled",
                "yes",
                "--cluster-config-file",
                &conf,
                "--cluster-node-timeout",
                "5000",
            ],
        ));
        wait_for_ping(&format!("redis://127.0.0.1:{p}/")).await;
        redis::cmd("CLUSTER")
            .arg("MEET")
            .arg("127.0.0.1")
            .arg(p)
            .query_async::<()>(&mut self.node(self.ports[0]).await)
            .await
            .unwrap();
        self.ports.push(p);
        let id: String = redis::cmd("CLUSTER")
            .arg("MYID")
            .query_async(&mut self.node(p).await)
            .await
            .unwrap();
        for &q in &self.ports {
            let mut known = false;
            for _ in 0..1000 {
                let nodes: String = redis::cmd("CLUSTER")
                    .arg("NODES")
                    .query_async(&mut self.node(q).await)
                    .await
                    .unwrap();
                let all_met = nodes.lines().count() == self.ports.len()
                    && !nodes.contains("handshake")
                    && nodes.contains(&id);
                if all_met {
                    known = true;
                    break;
                }
                sleep(Duration::from_millis(20)).await;
            }
            assert!(known, "node {q} never met node {p}");
        }
        // It serves nothing until it has learnt who holds every slot.
        let mut ok = false;
        for _ in 0..1000 {
            let info: String = redis::cmd("CLUSTER")
                .arg("INFO")
                .query_async(&mut self.node(p).await)
                .await
                .unwrap();
            if info.contains("cluster_state:ok") {
                ok = true;
                break;
            }
            sleep(Duration::from_millis(20)).await;
        }
        assert!(ok, "node {p} never reported cluster_state:ok");
        p
    }

    /// Moves the slot of `key` (its keys with it) from the node holding it
    /// to the next one, as a resharding does: `IMPORTING` on the target,
    /// `MIGRATING` on the source, `MIGRATE` of its keys, then `SETSLOT
    /// NODE` on every node. Returns (the source's port, the target's).
    pub async fn move_slot_of(&self, key: &str) -> (u16, u16) {
        self.move_slot(key, None).await
    }

    /// [`TestCluster::move_slot_of`] to the node on `port`.
    pub async fn move_slot_of_to(&self, key: &str, port: u16) -> (u16, u16) {
        self.move_slot(key, Some(port)).await
    }

    async fn move_slot(&self, key: &str, to: Option<u16>) -> (u16, u16) {
        let mut ids = Vec::new();
        for &p in &self.ports {
            let id: String = redis::cmd("CLUSTER")
                .arg("MYID")
                .query_async(&mut self.node(p).await)
                .await
                .unwrap();
            ids.push(id);
        }
        let mut any = self.node(self.ports[0]).await;
        let slot: u16 = redis::cmd("CLUSTER")
            .arg("KEYSLOT")
            .arg(key)
            .query_async(&mut any)
            .await
            .unwrap();
        let mut from = None;
        for (i, &p) in self.ports.iter().enumerate() {
            let nodes: String = redis::cmd("CLUSTER")
                .arg("NODES")
                .query_async(&mut self.node(p).await)
                .await
                .unwrap();
            let mine = nodes.lines().find(|l| l.contains("myself")).unwrap();
            let owns = mine.split(' ').skip(8).any(|range| {
                let mut ends = range.splitn(2, '-').map(|e| e.parse::<u16>().ok());
                match (ends.next().flatten(), ends.next().flatten()) {
                    (Some(a), Some(b)) => a <= slot && slot <= b,
                    (Some(a), None) => a == slot,
                    _ => false,
                }
            });
            if owns {
                from = Some(i);
            }
        }
        let from = from.expect("a node owns the slot");
        let to = match to {
            Some(port) => self.ports.iter().position(|&p| p == port).unwrap(),
            None => (from + 1) % self.ports.len(),
        };
        let (src, dst) = (self.ports[from], self.ports[to]);
        let setslot = |state: &str, id: &str| {
            let mut c = redis::cmd("CLUSTER");
            c.arg("SETSLOT").arg(slot).arg(state).arg(id);
            c
        };
        let mut target = self.node(dst).await;
        let mut source = self.node(src).await;
        setslot("IMPORTING", &ids[from])
            .query_async::<()>(&mut target)
            .await
            .unwrap();
        setslot("MIGRATING", &ids[to])
            .query_async::<()>(&mut source)
            .await
            .unwrap();
        loop {
            let keys: Vec<String> = redis::cmd("CLUSTER")
                .arg("GETKEYSINSLOT")
                .arg(slot)
                .arg(100)
                .query_async(&mut source)
                .await
                .unwrap();
            if keys.is_empty() {
                break;
            }
            redis::cmd("MIGRATE")
                .arg("127.0.0.1")
                .arg(dst)
                .arg("")
                .arg(0)
                .arg(5000)
                .arg("KEYS")
                .arg(&keys)
                .query_async::<()>(&mut source)
                .await
                .unwrap();
        }
        for i in [to, from] {
            setslot("NODE", &ids[to])
                .query_async::<()>(&mut self.node(self.ports[i]).await)
                .await
                .unwrap();
        }
        for (i, &p) in self.ports.iter().enumerate() {
            if i != to && i != from {
                setslot("NODE", &ids[to])
                    .query_async::<()>(&mut self.node(p).await)
                    .await
                    .unwrap();
            }
        }
        (src, dst)
    }
}

impl Drop for TestCluster {
    fn drop(&mut self) {
        for c in &mut self.children {
            let _ = c.kill();
            let _ = c.wait();
        }
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// A task measuring how late this runtime's timers fire (it sleeps 5 ms at
/// a time): on a machine busy elsewhere, a deadline's wake-up, or a spread
/// arrival, comes this late. The worst lateness seen, once finished.
pub struct LagProbe {
    stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
    task: tokio::task::JoinHandle<Duration>,
}

impl LagProbe {
    pub fn start() -> LagProbe {
        use std::sync::atomic::{AtomicBool, Ordering};
        let stop = std::sync::Arc::new(AtomicBool::new(false));
        let stopped = stop.clone();
        let task = tokio::spawn(async move {
            let mut worst = Duration::ZERO;
            while !stopped.load(Ordering::Relaxed) {
                let due = tokio::time::Instant::now() + Duration::from_millis(5);
                tokio::time::sleep_until(due).await;
                worst = worst.max(tokio::time::Instant::now().saturating_duration_since(due));
            }
            worst
        });
        LagProbe { stop, task }
    }

    pub async fn finish(self) -> Duration {
        self.stop.store(true, std::sync::atomic::Ordering::Relaxed);
        self.task.await.unwrap()
    }
}

/// A throwaway redis-server for the benches (no async runtime needed to
/// start it), on a free loopback port; killed on drop.
pub struct BenchRedis {
    child: Child,
    dir: std::path::PathBuf,
    pub url: String,
}

impl BenchRedis {
    pub fn start() -> BenchRedis {
        let port = free_port();
        let dir = temp_dir("bench", port);
        let child = spawn_server(port, &dir, &[]);
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

/// The benches' runtime: 2 workers, with timers and I/O.
pub fn bench_runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap()
}
