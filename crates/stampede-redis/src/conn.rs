//! Where the Redis is and the one connection type every part of the crate
//! talks through: a single server behind a reconnecting connection manager,
//! or a Redis Cluster behind redis-rs's cluster client (which follows
//! `MOVED`/`ASK` and refreshes its slot map by itself).
//!
//! Every key the crate writes for one cache key carries the same hash tag
//! (`value:{k}`, `lock:{k}`, `fence:{k}`), so a value, its claim and its
//! fence live in one cluster slot: the Lua scripts and the poll's
//! `MULTI`/`EXEC` touch one node only, as a cluster requires.

use std::future::Future;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use redis::aio::{ConnectionLike, ConnectionManager, ConnectionManagerConfig};
use redis::cluster::ClusterClient;
use redis::cluster_async::ClusterConnection;
use redis::{Cmd, ErrorKind, Pipeline, RedisError, RedisFuture, RedisResult, Value};

/// How long connecting to one node may take before it counts as failed
/// (an unreachable address is an error, not a hang).
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(1);

/// How long one reply may take on the connection itself. The driver bounds
/// its commands tighter (`cache::REDIS_TIMEOUT`); this is the floor for
/// every other user (the claim store, the fleet's set-up).
pub const RESPONSE_TIMEOUT: Duration = Duration::from_secs(2);

/// One Redis server, or a cluster given by one or more of its nodes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Target {
    Single(String),
    Cluster(Vec<String>),
}

impl Target {
    /// `redis://host:port` is one server; several URLs separated by commas
    /// are the seed nodes of a cluster.
    pub fn parse(spec: &str) -> Target {
        let urls: Vec<String> = spec
            .split(',')
            .map(str::trim)
            .filter(|u| !u.is_empty())
            .map(String::from)
            .collect();
        match urls.len() {
            0 | 1 => Target::Single(spec.trim().to_string()),
            _ => Target::Cluster(urls),
        }
    }

    /// The same addresses read as a cluster's seed nodes (one is enough:
    /// the client learns the others from it).
    pub fn cluster(spec: &str) -> Target {
        match Target::parse(spec) {
            Target::Single(u) => Target::Cluster(vec![u]),
            c => c,
        }
    }

    pub fn is_cluster(&self) -> bool {
        matches!(self, Target::Cluster(_))
    }

    /// Opens the connection. A bad URL, a refused or unreachable address
    /// and a cluster that is not ready are errors, never a panic or a hang.
    pub async fn connect(&self) -> RedisResult<Conn> {
        self.connect_bounded(RESPONSE_TIMEOUT).await
    }

    /// As [`Target::connect`], with replies bounded by `response` (never
    /// less than [`RESPONSE_TIMEOUT`]): a caller that bounds its commands
    /// itself, for longer, is not cut short by the connection.
    pub async fn connect_bounded(&self, response: Duration) -> RedisResult<Conn> {
        match self {
            Target::Single(url) => {
                let client = redis::Client::open(url.as_str())?;
                let con =
                    ConnectionManager::new_with_config(client, manager_config(response)).await?;
                Ok(Conn::bounded(con))
            }
            Target::Cluster(urls) => {
                if urls.is_empty() {
                    return Err(RedisError::from((
                        ErrorKind::InvalidClientConfig,
                        "a cluster needs at least one node's URL",
                    )));
                }
                let client = ClusterClient::builder(urls.clone())
                    .connection_timeout(CONNECT_TIMEOUT)
                    .response_timeout(reply_bound(response))
                    .retries(3)
                    .build()?;
                Ok(Conn::from(client.get_async_connection().await?))
            }
        }
    }
}

/// The connection's own reply bound for a caller that bounds its commands
/// by `commands`: never less than [`RESPONSE_TIMEOUT`], and past
/// `commands` (the connection must not cut a command the caller still
/// allows).
pub(crate) fn reply_bound(commands: Duration) -> Duration {
    if commands < RESPONSE_TIMEOUT {
        RESPONSE_TIMEOUT
    } else {
        commands + Duration::from_millis(100)
    }
}

/// The bounds the crate puts on a connection manager it makes (through
/// [`manager`], a URL or a client):
///
/// - connecting to the server may take [`CONNECT_TIMEOUT`] (1 s);
/// - a reply, the longer of [`RESPONSE_TIMEOUT`] and `redis_timeout`
///   (the cache's own bound on each command, which it applies itself);
/// - reconnecting after the connection drops (a Redis restart), 2 retries
///   at most 200 ms apart, and again at the next command: the cache is
///   back within about a quarter of a second of Redis.
///
/// redis-rs's own defaults (`ConnectionManager::new`) retry 6 times with
/// an exponential backoff and no reply bound: after a restart such a
/// manager was measured away for 102 s, every request served from the
/// origin meanwhile (issue 37). A manager's settings cannot be read back,
/// so [`CacheBuilder::build`](crate::CacheBuilder::build) takes no manager
/// the crate did not make ([`BuildError::Reconnection`](crate::BuildError::Reconnection)).
pub(crate) fn manager_config(redis_timeout: Duration) -> ConnectionManagerConfig {
    ConnectionManagerConfig::new()
        .set_connection_timeout(CONNECT_TIMEOUT)
        .set_response_timeout(reply_bound(redis_timeout))
        .set_number_of_retries(2)
        .set_max_delay(200)
}

impl From<&str> for Target {
    fn from(s: &str) -> Target {
        Target::parse(s)
    }
}

impl From<&String> for Target {
    fn from(s: &String) -> Target {
        Target::parse(s)
    }
}

impl From<String> for Target {
    fn from(s: String) -> Target {
        Target::parse(&s)
    }
}

impl From<&Target> for Target {
    fn from(t: &Target) -> Target {
        t.clone()
    }
}

/// A connection manager with the crate's reconnection bounds
/// (connecting within 1 s, a reply within the longer
/// of 2 s and `redis_timeout`, back within about a quarter of a second of
/// a Redis restart), for a service that shares one connection between its
/// own commands and a cache: hand a clone to
/// [`CacheBuilder::connection`](crate::CacheBuilder::connection), and send
/// the service's commands on another (a [`Conn`] is a redis-rs
/// `ConnectionLike`; [`Conn::manager`] gives the `ConnectionManager`
/// itself). Redis must be up: this connects now.
pub async fn manager(client: redis::Client, redis_timeout: Duration) -> RedisResult<Conn> {
    let config = manager_config(redis_timeout);
    Ok(Conn::bounded(
        ConnectionManager::new_with_config(client, config).await?,
    ))
}

/// A connection to one server or to a cluster; cheap to clone (both sides
/// multiplex one connection per node).
///
/// One server's is a redis-rs `ConnectionManager`: made by the crate (a
/// URL, [`manager`]), it reconnects within the crate's bounds; one a
/// service made itself (`Conn::from(manager)`) reconnects on its own
/// backoff, which cannot be read, and a cache refuses it
/// ([`BuildError::Reconnection`](crate::BuildError::Reconnection)).
#[derive(Clone)]
pub struct Conn(Kind);

#[derive(Clone)]
enum Kind {
    /// One server; `bounded`: made with [`manager_config`].
    Single {
        manager: ConnectionManager,
        bounded: bool,
    },
    Cluster(ClusterConnection),
}

impl Conn {
    /// A manager made with [`manager_config`].
    pub(crate) fn bounded(manager: ConnectionManager) -> Conn {
        Conn(Kind::Single {
            manager,
            bounded: true,
        })
    }

    /// One server's connection manager (`None`: a cluster's).
    pub fn manager(&self) -> Option<&ConnectionManager> {
        match &self.0 {
            Kind::Single { manager, .. } => Some(manager),
            Kind::Cluster(_) => None,
        }
    }

    /// Whether its reconnection is the crate's to bound: a manager the
    /// crate made, or a cluster's connection (redis-rs's cluster client
    /// reconnects each node at its next command). `false`: a manager a
    /// service made itself.
    pub fn reconnects_within_bounds(&self) -> bool {
        match &self.0 {
            Kind::Single { bounded, .. } => *bounded,
            Kind::Cluster(_) => true,
        }
    }

    /// Whether it is a cluster's.
    pub fn is_cluster(&self) -> bool {
        matches!(self.0, Kind::Cluster(_))
    }
}

/// A manager the service made: its reconnection settings cannot be read
/// back, so a cache refuses it at build
/// ([`BuildError::Reconnection`](crate::BuildError::Reconnection)); make it
/// with [`manager`] instead.
impl From<ConnectionManager> for Conn {
    fn from(manager: ConnectionManager) -> Conn {
        Conn(Kind::Single {
            manager,
            bounded: false,
        })
    }
}

impl From<ClusterConnection> for Conn {
    fn from(c: ClusterConnection) -> Conn {
        Conn(Kind::Cluster(c))
    }
}

impl ConnectionLike for Conn {
    fn req_packed_command<'a>(&'a mut self, cmd: &'a Cmd) -> RedisFuture<'a, Value> {
        match &mut self.0 {
            Kind::Single { manager, .. } => manager.req_packed_command(cmd),
            Kind::Cluster(c) => c.req_packed_command(cmd),
        }
    }

    fn req_packed_commands<'a>(
        &'a mut self,
        cmd: &'a Pipeline,
        offset: usize,
        count: usize,
    ) -> RedisFuture<'a, Vec<Value>> {
        match &mut self.0 {
            Kind::Single { manager, .. } => manager.req_packed_commands(cmd, offset, count),
            Kind::Cluster(c) => c.req_packed_commands(cmd, offset, count),
        }
    }

    fn get_db(&self) -> i64 {
        match &self.0 {
            Kind::Single { manager, .. } => manager.get_db(),
            Kind::Cluster(c) => c.get_db(),
        }
    }
}

/// How often a cache built while Redis was unreachable tries to connect
/// again, in the background, until it does.
pub const CONNECT_RETRY: Duration = Duration::from_millis(250);

/// The driver's connection: made, or still being made in the background
/// (a cache built while Redis was unreachable). Until it is made, every
/// command fails at once, unsent, as a Redis error: requests are served
/// under the Redis error policy (a failed read is a miss; open, a failed
/// claim is won and the origin is called). Cheap to clone: a clone made
/// after the connection landed holds it.
pub(crate) struct Link {
    shared: Arc<OnceLock<Conn>>,
    con: Option<Conn>,
}

impl Clone for Link {
    fn clone(&self) -> Link {
        Link {
            shared: self.shared.clone(),
            con: self.con.clone().or_else(|| self.shared.get().cloned()),
        }
    }
}

impl Link {
    /// A connection already made.
    pub(crate) fn ready(con: Conn) -> Link {
        let shared = Arc::new(OnceLock::new());
        let _ = shared.set(con.clone());
        Link {
            shared,
            con: Some(con),
        }
    }

    /// A connection made in the background: `attempt` (connect, and
    /// load the scripts) tried every [`CONNECT_RETRY`] until it succeeds,
    /// its connection then used by every clone. The attempts stop once
    /// every clone is dropped. Needs a tokio runtime.
    pub(crate) fn background<A, F>(attempt: A) -> Link
    where
        A: Fn() -> F + Send + 'static,
        F: Future<Output = RedisResult<Conn>> + Send,
    {
        let shared: Arc<OnceLock<Conn>> = Arc::new(OnceLock::new());
        let weak = Arc::downgrade(&shared);
        tokio::spawn(async move {
            while weak.strong_count() > 0 {
                if let Ok(con) = attempt().await {
                    if let Some(shared) = weak.upgrade() {
                        let _ = shared.set(con);
                    }
                    return;
                }
                tokio::time::sleep(CONNECT_RETRY).await;
            }
        });
        Link { shared, con: None }
    }

    /// Whether the connection is to a cluster (made, and of a cluster).
    pub(crate) fn cluster(&self) -> bool {
        let con = self.con.as_ref().or_else(|| self.shared.get());
        con.is_some_and(Conn::is_cluster)
    }

    /// Whether the connection is made.
    pub(crate) fn made(&self) -> bool {
        self.con.is_some() || self.shared.get().is_some()
    }

    /// The connection, once made.
    fn get(&mut self) -> Option<&mut Conn> {
        if self.con.is_none() {
            self.con = self.shared.get().cloned();
        }
        self.con.as_mut()
    }
}

fn not_connected() -> RedisError {
    RedisError::from((
        ErrorKind::IoError,
        "not connected to Redis yet: connecting in the background",
    ))
}

impl ConnectionLike for Link {
    fn req_packed_command<'a>(&'a mut self, cmd: &'a Cmd) -> RedisFuture<'a, Value> {
        match self.get() {
            Some(c) => c.req_packed_command(cmd),
            None => Box::pin(async { Err(not_connected()) }),
        }
    }

    fn req_packed_commands<'a>(
        &'a mut self,
        cmd: &'a Pipeline,
        offset: usize,
        count: usize,
    ) -> RedisFuture<'a, Vec<Value>> {
        match self.get() {
            Some(c) => c.req_packed_commands(cmd, offset, count),
            None => Box::pin(async { Err(not_connected()) }),
        }
    }

    fn get_db(&self) -> i64 {
        self.con.as_ref().map_or(0, ConnectionLike::get_db)
    }
}
