//! A fault-injecting TCP proxy in front of one Redis: what the instances
//! see when Redis is slow, gone or hung, without touching the Redis itself.
//!
//! - [`FaultProxy::set_delay`]: every chunk of bytes, either way, waits this
//!   long before it is passed on (a slow network or an overloaded Redis).
//! - [`FaultProxy::set_down`]: the open connections are cut and new ones are
//!   closed as soon as they are accepted (Redis unreachable, a refused
//!   connection); back up, new connections are passed through again, so a
//!   reconnecting client recovers.
//! - [`FaultProxy::set_hang`]: a paused Redis. The connections stay open and
//!   new ones are accepted, but nothing is passed on either way: the bytes
//!   that arrive are held, in order, so a command is answered only when the
//!   hang ends and fails only if its client gives up on it first. When the
//!   hang ends what was held is passed on, in the order it arrived, as a
//!   paused Redis runs what its kernel buffered for it when it resumes: a
//!   command whose client timed out still runs (a claim lands, a write is
//!   stored), and the replies still line up with the commands, so the
//!   connections are kept. A proxy taken down (or dropped) while hung drops
//!   what it held with the connections: a Redis that never resumes runs
//!   nothing.
//!
//! The fleet uses it for the `redis_down` fault and the `redis` fault at a
//! moment; the tests for a slow Redis.

use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::watch;
use tokio::task::JoinHandle;

/// What the proxy does with the bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Mode {
    /// Passed on (after the delay, if any).
    Up,
    /// Connections cut and refused.
    Down,
    /// Connections held, bytes held until the hang ends.
    Hang,
}

/// A proxy on a free loopback port; stops when dropped.
pub struct FaultProxy {
    addr: SocketAddr,
    delay_us: Arc<AtomicU64>,
    mode: watch::Sender<Mode>,
    /// Bytes held while hung, either way (what a test can check).
    held: Arc<AtomicU64>,
    /// Of those, the bytes passed on since.
    passed_on: Arc<AtomicU64>,
    task: JoinHandle<()>,
}

/// What each connection's pipe shares with the proxy.
#[derive(Clone)]
struct Shared {
    delay_us: Arc<AtomicU64>,
    held: Arc<AtomicU64>,
    passed_on: Arc<AtomicU64>,
}

impl FaultProxy {
    /// Listens on a free loopback port and forwards to `upstream`.
    pub async fn start(upstream: SocketAddr) -> std::io::Result<FaultProxy> {
        let listener = TcpListener::bind("127.0.0.1:0").await?;
        let addr = listener.local_addr()?;
        let shared = Shared {
            delay_us: Arc::new(AtomicU64::new(0)),
            held: Arc::new(AtomicU64::new(0)),
            passed_on: Arc::new(AtomicU64::new(0)),
        };
        let (mode, _) = watch::channel(Mode::Up);
        let (pipes, watch_mode) = (shared.clone(), mode.clone());
        let task = tokio::spawn(async move {
            while let Ok((client, _)) = listener.accept().await {
                if *watch_mode.borrow() == Mode::Down {
                    drop(client);
                    continue;
                }
                let (shared, mode) = (pipes.clone(), watch_mode.subscribe());
                tokio::spawn(async move {
                    if let Ok(server) = TcpStream::connect(upstream).await {
                        pipe(client, server, shared, mode).await;
                    }
                });
            }
        });
        Ok(FaultProxy {
            addr,
            delay_us: shared.delay_us,
            mode,
            held: shared.held,
            passed_on: shared.passed_on,
            task,
        })
    }

    /// Resolves the host and port of a `redis://` URL and starts a proxy
    /// in front of it.
    pub async fn in_front_of(url: &str) -> Result<FaultProxy, String> {
        let info = redis::Client::open(url)
            .map_err(|e| e.to_string())?
            .get_connection_info()
            .clone();
        let (host, port) = match &info.addr {
            redis::ConnectionAddr::Tcp(h, p) => (h.clone(), *p),
            other => return Err(format!("cannot proxy {other}: not a plain TCP address")),
        };
        let upstream = tokio::net::lookup_host((host.as_str(), port))
            .await
            .map_err(|e| format!("{host}:{port}: {e}"))?
            .next()
            .ok_or(format!("{host}:{port}: no address"))?;
        FaultProxy::start(upstream)
            .await
            .map_err(|e| format!("the proxy: {e}"))
    }

    /// The URL to give the clients instead of the Redis's own.
    pub fn url(&self) -> String {
        format!("redis://{}/", self.addr)
    }

    pub fn set_delay(&self, delay: Duration) {
        self.delay_us
            .store(delay.as_micros() as u64, Ordering::SeqCst);
    }

    /// Down (cut and refuse) or up again.
    pub fn set_down(&self, down: bool) {
        self.mode
            .send_replace(if down { Mode::Down } else { Mode::Up });
    }

    /// Hung (connections held, bytes held) or up again (what was held
    /// passed on, in order).
    pub fn set_hang(&self, hang: bool) {
        self.mode
            .send_replace(if hang { Mode::Hang } else { Mode::Up });
    }

    /// Bytes held so far while hung (passed on since, or not).
    pub fn held(&self) -> u64 {
        self.held.load(Ordering::SeqCst)
    }

    /// Bytes held by a hang and not passed on yet (nor dropped with their
    /// connection): 0 once a resumed Redis has been sent all that waited.
    pub fn pending(&self) -> u64 {
        self.held()
            .saturating_sub(self.passed_on.load(Ordering::SeqCst))
    }
}

impl Drop for FaultProxy {
    fn drop(&mut self) {
        self.set_down(true);
        self.task.abort();
    }
}

/// Passes bytes both ways until either side closes or the proxy goes
/// down.
async fn pipe(
    client: TcpStream,
    server: TcpStream,
    shared: Shared,
    mut mode: watch::Receiver<Mode>,
) {
    let (cr, cw) = client.into_split();
    let (sr, sw) = server.into_split();
    let up = one_way(cr, sw, shared.clone(), mode.clone());
    let back = one_way(sr, cw, shared, mode.clone());
    tokio::pin!(up, back);
    loop {
        tokio::select! {
            _ = &mut up => return,
            _ = &mut back => return,
            changed = mode.changed() => {
                if changed.is_err() || *mode.borrow_and_update() == Mode::Down {
                    // Dropping both halves of both sockets closes the
                    // connection (and what a hang held with it).
                    return;
                }
            }
        }
    }
}

/// One direction: what is read is passed on (after the delay), or, while
/// hung, held until the hang ends and then passed on first, in order.
async fn one_way(
    mut from: tokio::net::tcp::OwnedReadHalf,
    mut to: tokio::net::tcp::OwnedWriteHalf,
    shared: Shared,
    mut mode: watch::Receiver<Mode>,
) {
    let mut buf = vec![0u8; 16 * 1024];
    let mut held: Vec<u8> = Vec::new();
    loop {
        tokio::select! {
            // Cancel-safe: a read that loses the race has read nothing.
            read = from.read(&mut buf) => {
                let n = match read {
                    Ok(0) | Err(_) => return,
                    Ok(n) => n,
                };
                if *mode.borrow() == Mode::Hang {
                    shared.held.fetch_add(n as u64, Ordering::SeqCst);
                    held.extend_from_slice(&buf[..n]);
                    continue;
                }
                // The hang ended and these bytes came before its news:
                // what was held goes first.
                if !held.is_empty() && !pass_on(&mut to, &mut held, &shared).await {
                    return;
                }
                delay(&shared).await;
                if to.write_all(&buf[..n]).await.is_err() {
                    return;
                }
            }
            changed = mode.changed() => {
                if changed.is_err() {
                    return;
                }
                let now = *mode.borrow_and_update();
                if now == Mode::Up && !held.is_empty() && !pass_on(&mut to, &mut held, &shared).await {
                    return;
                }
            }
        }
    }
}

/// Writes what a hang held (after the delay) and empties it; false when
/// the other side is gone.
async fn pass_on(
    to: &mut tokio::net::tcp::OwnedWriteHalf,
    held: &mut Vec<u8>,
    shared: &Shared,
) -> bool {
    delay(shared).await;
    let ok = to.write_all(held).await.is_ok();
    shared
        .passed_on
        .fetch_add(held.len() as u64, Ordering::SeqCst);
    held.clear();
    ok
}

async fn delay(shared: &Shared) {
    let d = shared.delay_us.load(Ordering::SeqCst);
    if d > 0 {
        tokio::time::sleep(Duration::from_micros(d)).await;
    }
}
