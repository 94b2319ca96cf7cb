//! A fault-injecting TCP proxy in front of one Redis: what the instances
//! see when Redis is slow, gone or hung, without touching the Redis itself.
//!
//! - [`FaultProxy::set_delay`]: every chunk of bytes, either way, waits this
//!   long before it is passed on (a slow network or an overloaded Redis).
//! - [`FaultProxy::set_down`]: the open connections are cut and new ones are
//!   closed as soon as they are accepted (Redis unreachable, a refused
//!   connection); back up, new connections are passed through again, so a
//!   reconnecting client recovers.
//! - [`FaultProxy::set_hang`]: the connections stay open and new ones are
//!   accepted, but nothing is answered: every byte either way is swallowed
//!   (a network partition, a paused or overloaded server), so a command
//!   fails only when its client gives up on it. A swallowed command never
//!   reaches Redis. When the hang ends, every connection that swallowed
//!   bytes is cut: its client's replies would no longer line up with its
//!   commands, so it must reconnect (as a client does once a partition
//!   has killed its TCP connection).
//!
//! The fleet uses it for the `redis_down` fault and the `redis` fault at a
//! moment; the tests for a slow Redis.

use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
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
    /// Connections held, bytes swallowed.
    Hang,
}

/// A proxy on a free loopback port; stops when dropped.
pub struct FaultProxy {
    addr: SocketAddr,
    delay_us: Arc<AtomicU64>,
    mode: watch::Sender<Mode>,
    /// Bytes swallowed while hung, either way (what a test can check).
    swallowed: Arc<AtomicU64>,
    task: JoinHandle<()>,
}

/// What each connection's pipe shares with the proxy.
#[derive(Clone)]
struct Shared {
    delay_us: Arc<AtomicU64>,
    swallowed: Arc<AtomicU64>,
}

impl FaultProxy {
    /// Listens on a free loopback port and forwards to `upstream`.
    pub async fn start(upstream: SocketAddr) -> std::io::Result<FaultProxy> {
        let listener = TcpListener::bind("127.0.0.1:0").await?;
        let addr = listener.local_addr()?;
        let shared = Shared {
            delay_us: Arc::new(AtomicU64::new(0)),
            swallowed: Arc::new(AtomicU64::new(0)),
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
            swallowed: shared.swallowed,
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

    /// Hung (hold and swallow) or up again (the hung connections cut).
    pub fn set_hang(&self, hang: bool) {
        self.mode
            .send_replace(if hang { Mode::Hang } else { Mode::Up });
    }

    /// Bytes swallowed so far while hung.
    pub fn swallowed(&self) -> u64 {
        self.swallowed.load(Ordering::SeqCst)
    }
}

impl Drop for FaultProxy {
    fn drop(&mut self) {
        self.set_down(true);
        self.task.abort();
    }
}

/// Passes bytes both ways until either side closes, the proxy goes down,
/// or a hang this connection swallowed bytes in ends.
async fn pipe(
    client: TcpStream,
    server: TcpStream,
    shared: Shared,
    mut mode: watch::Receiver<Mode>,
) {
    let (cr, cw) = client.into_split();
    let (sr, sw) = server.into_split();
    let hung = Arc::new(AtomicBool::new(false));
    let up = one_way(cr, sw, shared.clone(), mode.clone(), hung.clone());
    let back = one_way(sr, cw, shared, mode.clone(), hung.clone());
    tokio::pin!(up, back);
    loop {
        tokio::select! {
            _ = &mut up => return,
            _ = &mut back => return,
            changed = mode.changed() => {
                let now = *mode.borrow_and_update();
                if changed.is_err()
                    || now == Mode::Down
                    || (now == Mode::Up && hung.load(Ordering::SeqCst))
                {
                    // Dropping both halves of both sockets closes the
                    // connection.
                    return;
                }
            }
        }
    }
}

async fn one_way(
    mut from: tokio::net::tcp::OwnedReadHalf,
    mut to: tokio::net::tcp::OwnedWriteHalf,
    shared: Shared,
    mode: watch::Receiver<Mode>,
    hung: Arc<AtomicBool>,
) {
    let mut buf = vec![0u8; 16 * 1024];
    loop {
        let n = match from.read(&mut buf).await {
            Ok(0) | Err(_) => return,
            Ok(n) => n,
        };
        if *mode.borrow() == Mode::Hang {
            hung.store(true, Ordering::SeqCst);
            shared.swallowed.fetch_add(n as u64, Ordering::SeqCst);
            continue;
        }
        let d = shared.delay_us.load(Ordering::SeqCst);
        if d > 0 {
            tokio::time::sleep(Duration::from_micros(d)).await;
        }
        if to.write_all(&buf[..n]).await.is_err() {
            return;
        }
    }
}
