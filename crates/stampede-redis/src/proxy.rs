//! A fault-injecting TCP proxy in front of one Redis: what the instances
//! see when Redis is slow or gone, without touching the Redis itself.
//!
//! - [`FaultProxy::set_delay`]: every chunk of bytes, either way, waits this
//!   long before it is passed on (a slow network or an overloaded Redis).
//! - [`FaultProxy::set_down`]: the open connections are cut and new ones are
//!   closed as soon as they are accepted (Redis unreachable); back up, new
//!   connections are passed through again, so a reconnecting client
//!   recovers.
//!
//! The fleet uses it for the `redis_down` fault; the tests for a slow Redis.

use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::watch;
use tokio::task::JoinHandle;

/// A proxy on a free loopback port; stops when dropped.
pub struct FaultProxy {
    addr: SocketAddr,
    delay_us: Arc<AtomicU64>,
    down: watch::Sender<bool>,
    task: JoinHandle<()>,
}

impl FaultProxy {
    /// Listens on a free loopback port and forwards to `upstream`.
    pub async fn start(upstream: SocketAddr) -> std::io::Result<FaultProxy> {
        let listener = TcpListener::bind("127.0.0.1:0").await?;
        let addr = listener.local_addr()?;
        let delay_us = Arc::new(AtomicU64::new(0));
        let (down, _) = watch::channel(false);
        let (delay, watch_down) = (delay_us.clone(), down.clone());
        let task = tokio::spawn(async move {
            while let Ok((client, _)) = listener.accept().await {
                if *watch_down.borrow() {
                    drop(client);
                    continue;
                }
                let (delay, down) = (delay.clone(), watch_down.subscribe());
                tokio::spawn(async move {
                    if let Ok(server) = TcpStream::connect(upstream).await {
                        pipe(client, server, delay, down).await;
                    }
                });
            }
        });
        Ok(FaultProxy {
            addr,
            delay_us,
            down,
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

    pub fn set_down(&self, down: bool) {
        self.down.send_replace(down);
    }
}

impl Drop for FaultProxy {
    fn drop(&mut self) {
        self.set_down(true);
        self.task.abort();
    }
}

/// Passes bytes both ways until either side closes or the proxy goes down.
async fn pipe(
    client: TcpStream,
    server: TcpStream,
    delay: Arc<AtomicU64>,
    mut down: watch::Receiver<bool>,
) {
    let (cr, cw) = client.into_split();
    let (sr, sw) = server.into_split();
    let up = one_way(cr, sw, delay.clone());
    let back = one_way(sr, cw, delay);
    tokio::select! {
        _ = up => {}
        _ = back => {}
        _ = down.wait_for(|d| *d) => {}
    }
    // Dropping both halves of both sockets closes the connection.
}

async fn one_way(
    mut from: tokio::net::tcp::OwnedReadHalf,
    mut to: tokio::net::tcp::OwnedWriteHalf,
    delay: Arc<AtomicU64>,
) {
    let mut buf = vec![0u8; 16 * 1024];
    loop {
        let n = match from.read(&mut buf).await {
            Ok(0) | Err(_) => return,
            Ok(n) => n,
        };
        let d = delay.load(Ordering::SeqCst);
        if d > 0 {
            tokio::time::sleep(Duration::from_micros(d)).await;
        }
        if to.write_all(&buf[..n]).await.is_err() {
            return;
        }
    }
}
