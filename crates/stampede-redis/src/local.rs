//! An instance's local copies of fresh values
//! ([`CacheBuilder::local_copy`](crate::CacheBuilder::local_copy)), kept
//! coherent with Redis by server-assisted client-side caching where it can
//! be: a connection of their own asks Redis for `CLIENT TRACKING ON BCAST
//! PREFIX <prefix>value:` over RESP3, and every write or delete of a value
//! key, by any client, pushes an invalidation that drops this instance's
//! copy of it.
//!
//! - A copy is kept only while the tracking connection is up, and only if
//!   no invalidation for its key (its slot of [`SLOTS`]) came between the
//!   read's start and its reply: a write that raced the read cannot leave
//!   an older copy behind. The check and the insert, and an invalidation's
//!   epoch bump and removal, happen under the map's one lock.
//! - The connection lost (a Redis restart, a killed client, a heartbeat
//!   `PING` unanswered within the bound), every copy is dropped at once and
//!   none is kept until tracking is back: invalidations sent meanwhile are
//!   lost, and a copy that missed one would be stale.
//! - On a cluster, one such connection to each primary (`CLUSTER SLOTS`),
//!   their pushes merged: a key's invalidation comes from whichever
//!   primary holds its slot, before and after a slot moves between them.
//!   A change of the primaries, read again at every [`HEARTBEAT`], counts
//!   as a lost connection; until a heartbeat sees it, writes on a primary
//!   that just took slots go unheard ([`Tracking::Cluster`]).
//! - Where tracking cannot be had (a connection the service made itself, a
//!   server without RESP3 or `CLIENT TRACKING`, the test harness), copies
//!   are bounded in time alone, as they were: by the local-copy length and
//!   the value's TTL ([`Coherence::TimeBounded`]).
//!
//! Either way a copy never outlives the value's freshness.

use std::collections::HashMap;
use std::hash::BuildHasher;
use std::sync::atomic::{AtomicU64, AtomicU8, Ordering};
use std::sync::{Arc, Mutex, PoisonError, Weak};
use std::time::Duration;

use redis::{PushInfo, PushKind, Value as Reply};
use stampede::claim::Micros;
use stampede::flight::Value;

use crate::conn::{CONNECT_RETRY, CONNECT_TIMEOUT};

/// How the local copies of a cache stand ([`Cache::coherence`]).
///
/// [`Cache::coherence`]: crate::Cache::coherence
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Coherence {
    /// No local copies (the default: `local_copy` is zero).
    NoCopies,
    /// Copies bounded in time alone (the local-copy length and the
    /// value's TTL): a write on another instance is seen up to that late.
    /// A connection the service made itself
    /// ([`CacheBuilder::connection`](crate::CacheBuilder::connection)), or
    /// a Redis without RESP3 and `CLIENT TRACKING` (before 6.0).
    TimeBounded,
    /// Copies tracked: a write or delete of a value on any instance drops
    /// this instance's copy when Redis's invalidation arrives (on a
    /// cluster: every primary tracked).
    Tracked,
    /// The tracking connection is down (not made yet, or lost): no copy is
    /// kept or answered until it is back; every read goes to Redis.
    Suspended,
}

/// Slots of the invalidation epochs: a key's read and its invalidations
/// meet in the slot of its name's hash.
pub(crate) const SLOTS: usize = 64;

/// How often the tracking connection is checked with a `PING`: a lost
/// connection that no reset announced (a network partition) is noticed
/// within this and the reply's bound.
pub const HEARTBEAT: Duration = Duration::from_secs(1);

const TIME_BOUNDED: u8 = 0;
const TRACKED: u8 = 1;
const SUSPENDED: u8 = 2;

/// One copy: the value, its payload, until when it may answer (µs on the
/// driver's clock).
type Copy = (Value, Arc<Vec<u8>>, Micros);

pub(crate) struct LocalCopies {
    /// How long a copy lives (zero: none are kept).
    lives: Micros,
    state: AtomicU8,
    map: Mutex<HashMap<String, Copy>>,
    /// Bumped under the map's lock by each invalidation of a key of the
    /// slot (and by a lost connection, for every slot).
    epochs: [AtomicU64; SLOTS],
    hasher: foldhash::fast::FixedState,
    /// Keys invalidated (each key named by an invalidation message), and
    /// tracking connections lost.
    pub(crate) invalidations: AtomicU64,
    pub(crate) tracking_lost: AtomicU64,
}

impl LocalCopies {
    /// Copies living `lives` (µs; zero: none), bounded in time alone until
    /// tracking is started ([`LocalCopies::track`]).
    pub(crate) fn new(lives: Micros) -> LocalCopies {
        LocalCopies {
            lives,
            state: AtomicU8::new(TIME_BOUNDED),
            map: Mutex::new(HashMap::new()),
            epochs: std::array::from_fn(|_| AtomicU64::new(0)),
            hasher: foldhash::fast::FixedState::with_seed(0x5eed),
            invalidations: AtomicU64::new(0),
            tracking_lost: AtomicU64::new(0),
        }
    }

    pub(crate) fn on(&self) -> bool {
        self.lives > 0
    }

    pub(crate) fn coherence(&self) -> Coherence {
        if !self.on() {
            return Coherence::NoCopies;
        }
        match self.state.load(Ordering::SeqCst) {
            TRACKED => Coherence::Tracked,
            SUSPENDED => Coherence::Suspended,
            _ => Coherence::TimeBounded,
        }
    }

    fn slot(&self, key: &[u8]) -> usize {
        (self.hasher.hash_one(key) % SLOTS as u64) as usize
    }

    /// The live copy of `key` at `now`, if any.
    pub(crate) fn get(&self, key: &str, now: Micros) -> Option<(Value, Arc<Vec<u8>>)> {
        let map = self.map.lock().unwrap_or_else(PoisonError::into_inner);
        map.get(key)
            .filter(|(_, _, until)| now < *until)
            .map(|(v, b, _)| (*v, b.clone()))
    }

    /// Before a read of `key` is sent: what a copy of its reply will be
    /// checked against (`None`: no copy can be kept now).
    pub(crate) fn before_read(&self, key: &str) -> Option<u64> {
        if !self.on() || self.state.load(Ordering::SeqCst) == SUSPENDED {
            return None;
        }
        Some(self.epochs[self.slot(key.as_bytes())].load(Ordering::SeqCst))
    }

    /// A fresh value read: kept for the copies' length from `now`, never
    /// past its own freshness (`fresh_for`, µs), unless tracking went down
    /// or an invalidation of its slot came since the read's start (`epoch`,
    /// from [`LocalCopies::before_read`]).
    pub(crate) fn keep(
        &self,
        key: &str,
        epoch: u64,
        copy: (Value, Arc<Vec<u8>>),
        now: Micros,
        fresh_for: Micros,
    ) {
        let until = now + self.lives.min(fresh_for);
        let slot = self.slot(key.as_bytes());
        let mut map = self.map.lock().unwrap_or_else(PoisonError::into_inner);
        if self.state.load(Ordering::SeqCst) == SUSPENDED
            || self.epochs[slot].load(Ordering::SeqCst) != epoch
        {
            return;
        }
        map.insert(key.to_string(), (copy.0, copy.1, until));
    }

    /// This instance wrote or deleted `key`: its copy goes.
    pub(crate) fn forget(&self, key: &str) {
        let slot = self.slot(key.as_bytes());
        let mut map = self.map.lock().unwrap_or_else(PoisonError::into_inner);
        self.epochs[slot].fetch_add(1, Ordering::SeqCst);
        map.remove(key);
    }

    /// Redis says `key` changed.
    fn invalidate(&self, key: &[u8]) {
        self.invalidations.fetch_add(1, Ordering::Relaxed);
        let slot = self.slot(key);
        let mut map = self.map.lock().unwrap_or_else(PoisonError::into_inner);
        self.epochs[slot].fetch_add(1, Ordering::SeqCst);
        if let Ok(key) = std::str::from_utf8(key) {
            map.remove(key);
        }
    }

    /// Every copy goes (a flush on Redis, a connection lost), and with
    /// `state`, from now on.
    fn drop_all(&self, state: u8) {
        let mut map = self.map.lock().unwrap_or_else(PoisonError::into_inner);
        self.state.store(state, Ordering::SeqCst);
        for e in &self.epochs {
            e.fetch_add(1, Ordering::SeqCst);
        }
        map.clear();
    }

    /// Starts tracking for the value keys under `prefix` on `at` (its
    /// protocol made RESP3): the first connections are made here if `now`
    /// (tracked from the cache's first read), then followed, and made
    /// again when lost, in a task that lives as long as these copies do.
    /// Until every connection is up, no copy is kept; if the server
    /// refuses RESP3 or tracking, copies are bounded in time alone. Needs
    /// a tokio runtime.
    pub(crate) async fn track(
        self: &Arc<Self>,
        at: Tracking,
        prefix: String,
        reply_bound: Duration,
        now: bool,
    ) {
        if !self.on() {
            return;
        }
        self.state.store(SUSPENDED, Ordering::SeqCst);
        let at = at.resp3();
        let first = if now {
            open_all(&at, &prefix, reply_bound).await
        } else {
            Err(Ended::Lost)
        };
        let copies = Arc::downgrade(self);
        match first {
            Err(Ended::Unsupported) => self.drop_all(TIME_BOUNDED),
            Err(_) => {
                tokio::spawn(tracking(copies, at, prefix, reply_bound, None));
            }
            Ok(made) => {
                self.drop_all(TRACKED);
                tokio::spawn(tracking(copies, at, prefix, reply_bound, Some(made)));
            }
        }
    }
}

/// Where the tracking connections go.
#[derive(Clone)]
pub(crate) enum Tracking {
    /// One server.
    One(redis::ConnectionInfo),
    /// A cluster, given by its seed nodes: one connection to each primary
    /// (`CLUSTER SLOTS`), each with `BCAST`, so that a key's invalidation
    /// arrives from whichever primary holds its slot, before and after a
    /// slot moves between them. The primaries are read again at every
    /// [`HEARTBEAT`]: a change (a node added or gone, a failover) drops
    /// every copy, and tracking is made again on the new set.
    Cluster(Vec<redis::ConnectionInfo>),
}

impl Tracking {
    fn resp3(self) -> Tracking {
        let resp3 = |mut info: redis::ConnectionInfo| {
            info.redis.protocol = redis::ProtocolVersion::RESP3;
            info
        };
        match self {
            Tracking::One(info) => Tracking::One(resp3(info)),
            Tracking::Cluster(seeds) => Tracking::Cluster(seeds.into_iter().map(resp3).collect()),
        }
    }
}

/// Why a tracking connection ended.
enum Ended {
    /// The copies are gone (the cache was dropped): stop.
    Dropped,
    /// The server cannot track (no RESP3, no `CLIENT TRACKING`, no
    /// cluster where one was expected).
    Unsupported,
    /// Lost, or never made, or (a cluster) its primaries changed: try
    /// again.
    Lost,
}

/// The tracking connections (one per primary of a cluster), the pushes
/// of all of them, and the primaries they go to (empty: one server).
struct Made {
    cons: Vec<redis::aio::MultiplexedConnection>,
    pushed: tokio::sync::mpsc::UnboundedReceiver<PushInfo>,
    primaries: Vec<(String, u16)>,
}

/// Follows the tracking connections `made` (if any) until one is lost,
/// then makes them again, until the copies are dropped or the server
/// refuses.
async fn tracking(
    copies: Weak<LocalCopies>,
    at: Tracking,
    prefix: String,
    reply_bound: Duration,
    mut made: Option<Made>,
) {
    loop {
        let ended = match made.take() {
            Some(made) => follow(&copies, &at, made, reply_bound).await,
            None => match open_all(&at, &prefix, reply_bound).await {
                Ok(made) => {
                    // Tracked from here: copies kept from now on are
                    // invalidated.
                    match copies.upgrade() {
                        Some(c) => c.drop_all(TRACKED),
                        None => return,
                    }
                    follow(&copies, &at, made, reply_bound).await
                }
                Err(ended) => ended,
            },
        };
        match ended {
            Ended::Dropped => return,
            Ended::Unsupported => {
                if let Some(c) = copies.upgrade() {
                    c.drop_all(TIME_BOUNDED);
                }
                return;
            }
            Ended::Lost => {}
        }
        if copies.strong_count() == 0 {
            return;
        }
        tokio::time::sleep(CONNECT_RETRY).await;
    }
}

/// Every tracking connection `at` needs, made, their pushes into one
/// channel.
async fn open_all(at: &Tracking, prefix: &str, reply_bound: Duration) -> Result<Made, Ended> {
    let (tx, pushed) = tokio::sync::mpsc::unbounded_channel::<PushInfo>();
    match at {
        Tracking::One(info) => Ok(Made {
            cons: vec![open(info, prefix, reply_bound, tx).await?],
            pushed,
            primaries: Vec::new(),
        }),
        Tracking::Cluster(seeds) => {
            let primaries = primaries(seeds, reply_bound).await?;
            let mut cons = Vec::with_capacity(primaries.len());
            for (host, port) in &primaries {
                let info = node(&seeds[0], host, *port).ok_or(Ended::Unsupported)?;
                cons.push(open(&info, prefix, reply_bound, tx.clone()).await?);
            }
            Ok(Made {
                cons,
                pushed,
                primaries,
            })
        }
    }
}

/// A cluster's primaries (host, port), sorted, from the first seed that
/// answers `CLUSTER SLOTS`.
async fn primaries(
    seeds: &[redis::ConnectionInfo],
    reply_bound: Duration,
) -> Result<Vec<(String, u16)>, Ended> {
    let mut ended = Ended::Lost;
    for seed in seeds {
        let config = redis::AsyncConnectionConfig::new()
            .set_connection_timeout(CONNECT_TIMEOUT)
            .set_response_timeout(reply_bound);
        let Ok(client) = redis::Client::open(seed.clone()) else {
            return Err(Ended::Unsupported);
        };
        let Ok(mut con) = client
            .get_multiplexed_async_connection_with_config(&config)
            .await
        else {
            continue;
        };
        match slots(&mut con, seed).await {
            Ok(p) if !p.is_empty() => return Ok(p),
            Ok(_) => {}
            Err(e) => {
                if refused(&e) {
                    ended = Ended::Unsupported;
                }
            }
        }
    }
    Err(ended)
}

/// The primaries in the `CLUSTER SLOTS` answer of the node `asked` (an
/// empty host is that node's own), sorted.
async fn slots(
    con: &mut redis::aio::MultiplexedConnection,
    asked: &redis::ConnectionInfo,
) -> redis::RedisResult<Vec<(String, u16)>> {
    let reply: Reply = redis::cmd("CLUSTER").arg("SLOTS").query_async(con).await?;
    let own = match &asked.addr {
        redis::ConnectionAddr::Tcp(host, _) => host.clone(),
        redis::ConnectionAddr::TcpTls { host, .. } => host.clone(),
        redis::ConnectionAddr::Unix(_) => String::new(),
    };
    Ok(primaries_in(&reply, &own))
}

/// The primaries named in a `CLUSTER SLOTS` reply, sorted, without
/// repeats: each range's third element is its primary (host, port, id).
fn primaries_in(reply: &Reply, own_host: &str) -> Vec<(String, u16)> {
    let text = |v: &Reply| match v {
        Reply::BulkString(b) => Some(String::from_utf8_lossy(b).into_owned()),
        Reply::SimpleString(s) => Some(s.clone()),
        _ => None,
    };
    let mut out = Vec::new();
    if let Reply::Array(ranges) = reply {
        for range in ranges {
            let Reply::Array(range) = range else { continue };
            let Some(Reply::Array(primary)) = range.get(2) else {
                continue;
            };
            let (Some(host), Some(Reply::Int(port))) =
                (primary.first().and_then(text), primary.get(1))
            else {
                continue;
            };
            let host = if host.is_empty() || host == "?" {
                own_host.to_string()
            } else {
                host
            };
            if let Ok(port) = u16::try_from(*port) {
                out.push((host, port));
            }
        }
    }
    out.sort();
    out.dedup();
    out
}

/// `seed`'s connection settings (credentials, TLS, protocol) for the node
/// at `host:port` (`None`: a seed not on TCP).
fn node(seed: &redis::ConnectionInfo, host: &str, port: u16) -> Option<redis::ConnectionInfo> {
    let mut info = seed.clone();
    info.addr = match &seed.addr {
        redis::ConnectionAddr::Tcp(..) => redis::ConnectionAddr::Tcp(host.to_string(), port),
        redis::ConnectionAddr::TcpTls {
            insecure,
            tls_params,
            ..
        } => redis::ConnectionAddr::TcpTls {
            host: host.to_string(),
            port,
            insecure: *insecure,
            tls_params: tls_params.clone(),
        },
        redis::ConnectionAddr::Unix(_) => return None,
    };
    Some(info)
}

/// A tracking connection made: RESP3, `CLIENT TRACKING ON BCAST PREFIX
/// <prefix>value:`, named `stampede-tracking`, its pushes sent to `tx`.
async fn open(
    info: &redis::ConnectionInfo,
    prefix: &str,
    reply_bound: Duration,
    tx: tokio::sync::mpsc::UnboundedSender<PushInfo>,
) -> Result<redis::aio::MultiplexedConnection, Ended> {
    let client = redis::Client::open(info.clone()).map_err(|_| Ended::Unsupported)?;
    let config = redis::AsyncConnectionConfig::new()
        .set_connection_timeout(CONNECT_TIMEOUT)
        .set_response_timeout(reply_bound)
        .set_push_sender(tx);
    let ended = |e: redis::RedisError| {
        if refused(&e) {
            Ended::Unsupported
        } else {
            Ended::Lost
        }
    };
    let mut con = client
        .get_multiplexed_async_connection_with_config(&config)
        .await
        .map_err(ended)?;
    let mut on = redis::cmd("CLIENT");
    on.arg("TRACKING")
        .arg("ON")
        .arg("BCAST")
        .arg("PREFIX")
        .arg(format!("{prefix}value:"));
    on.query_async::<()>(&mut con).await.map_err(ended)?;
    let mut name = redis::cmd("CLIENT");
    name.arg("SETNAME").arg("stampede-tracking");
    name.query_async::<()>(&mut con).await.map_err(ended)?;
    Ok(con)
}

/// Follows the tracking connections until one is lost: each invalidation
/// drops its copies; at every [`HEARTBEAT`] a `PING` checks each, and on a
/// cluster `CLUSTER SLOTS` checks that the primaries are the ones tracked
/// (a change counts as a loss). Lost, every copy goes and none is kept
/// until tracking is made again.
async fn follow(
    copies: &Weak<LocalCopies>,
    at: &Tracking,
    mut made: Made,
    reply_bound: Duration,
) -> Ended {
    let mut beat = tokio::time::interval(HEARTBEAT);
    beat.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    beat.tick().await;
    let ended = loop {
        tokio::select! {
            push = made.pushed.recv() => {
                let Some(c) = copies.upgrade() else { break Ended::Dropped };
                match push {
                    Some(PushInfo { kind: PushKind::Invalidate, data }) => {
                        invalidated(&c, &data);
                    }
                    Some(PushInfo { kind: PushKind::Disconnection, .. }) | None => {
                        break Ended::Lost;
                    }
                    Some(_) => {}
                }
            }
            _ = beat.tick() => {
                if copies.strong_count() == 0 {
                    break Ended::Dropped;
                }
                if !alive(at, &mut made, reply_bound).await {
                    break Ended::Lost;
                }
            }
        }
    };
    if let Some(c) = copies.upgrade() {
        c.tracking_lost.fetch_add(1, Ordering::Relaxed);
        c.drop_all(SUSPENDED);
    }
    ended
}

/// Whether every tracking connection answers a `PING` within the bound
/// and, on a cluster, the primaries are still the ones tracked.
async fn alive(at: &Tracking, made: &mut Made, reply_bound: Duration) -> bool {
    for con in &mut made.cons {
        let ping = redis::cmd("PING");
        let ping = ping.query_async::<()>(con);
        if !matches!(tokio::time::timeout(reply_bound, ping).await, Ok(Ok(()))) {
            return false;
        }
    }
    let Tracking::Cluster(seeds) = at else {
        return true;
    };
    let Some(con) = made.cons.first_mut() else {
        return false;
    };
    let asked = made
        .primaries
        .first()
        .and_then(|(host, port)| node(&seeds[0], host, *port));
    let Some(asked) = asked else { return false };
    matches!(
        tokio::time::timeout(reply_bound, slots(con, &asked)).await,
        Ok(Ok(now)) if now == made.primaries
    )
}

/// An invalidation's keys (one array of names), or a flush (nil): every
/// copy of them goes.
fn invalidated(copies: &LocalCopies, data: &[Reply]) {
    match data.first() {
        Some(Reply::Array(keys)) => {
            for key in keys {
                if let Reply::BulkString(key) = key {
                    copies.invalidate(key);
                }
            }
        }
        _ => {
            copies.invalidations.fetch_add(1, Ordering::Relaxed);
            copies.drop_all(TRACKED);
        }
    }
}

/// An error that says the server will not track: an `ERR` answer (an
/// unknown command: `HELLO` or `CLIENT TRACKING` before Redis 6) or an
/// unknown error code (`NOPROTO`). Copies are then bounded in time alone.
/// Anything else (a lost or refused connection, a timeout, a server still
/// `LOADING` after a restart, a failed login) is tried again.
fn refused(e: &redis::RedisError) -> bool {
    matches!(
        e.kind(),
        redis::ErrorKind::ResponseError | redis::ErrorKind::ExtensionError
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn copy(n: u32) -> (Value, Arc<Vec<u8>>) {
        (Value::fresh(0, n), Arc::new(vec![n as u8]))
    }

    #[test]
    fn a_copy_lives_its_length_and_never_past_its_freshness() {
        let c = LocalCopies::new(1_000);
        let e = c.before_read("k").unwrap();
        c.keep("k", e, copy(1), 0, 5_000);
        assert!(c.get("k", 999).is_some());
        assert!(c.get("k", 1_000).is_none());
        let e = c.before_read("k").unwrap();
        c.keep("k", e, copy(2), 0, 300);
        assert!(c.get("k", 299).is_some());
        assert!(c.get("k", 300).is_none(), "past the value's freshness");
    }

    #[test]
    fn an_invalidation_during_the_read_keeps_no_copy() {
        let c = LocalCopies::new(1_000_000);
        c.state.store(TRACKED, Ordering::SeqCst);
        let e = c.before_read("k").unwrap();
        // The write that raced the read: its invalidation came first.
        c.invalidate(b"k");
        c.keep("k", e, copy(1), 0, 5_000_000);
        assert!(c.get("k", 1).is_none());
        // A read after it keeps its copy, which the next invalidation drops.
        let e = c.before_read("k").unwrap();
        c.keep("k", e, copy(2), 0, 5_000_000);
        assert!(c.get("k", 1).is_some());
        c.invalidate(b"k");
        assert!(c.get("k", 1).is_none());
    }

    #[test]
    fn suspended_keeps_and_answers_nothing() {
        let c = LocalCopies::new(1_000_000);
        c.state.store(TRACKED, Ordering::SeqCst);
        let e = c.before_read("k").unwrap();
        c.keep("k", e, copy(1), 0, 5_000_000);
        c.drop_all(SUSPENDED);
        assert_eq!(c.coherence(), Coherence::Suspended);
        assert!(c.get("k", 1).is_none(), "a copy outlived the connection");
        assert!(c.before_read("k").is_none());
        // A read that started before the loss keeps nothing either.
        c.keep("k", e, copy(2), 0, 5_000_000);
        assert!(c.get("k", 1).is_none());
    }

    #[test]
    fn a_flush_drops_every_copy() {
        let c = LocalCopies::new(1_000_000);
        c.state.store(TRACKED, Ordering::SeqCst);
        for k in ["a", "b"] {
            let e = c.before_read(k).unwrap();
            c.keep(k, e, copy(1), 0, 5_000_000);
        }
        invalidated(&c, &[Reply::Nil]);
        assert!(c.get("a", 1).is_none() && c.get("b", 1).is_none());
        invalidated(&c, &[Reply::Array(vec![Reply::BulkString(b"a".to_vec())])]);
        assert_eq!(c.invalidations.load(Ordering::Relaxed), 2);
    }

    #[test]
    fn only_an_answer_that_it_cannot_track_gives_up_on_tracking() {
        use redis::{ErrorKind, RedisError};
        let e = |kind, what: &'static str| RedisError::from((kind, what));
        assert!(refused(&e(
            ErrorKind::ResponseError,
            "unknown command 'HELLO'"
        )));
        assert!(refused(&e(ErrorKind::ExtensionError, "NOPROTO")));
        // Tried again: a restarting server, a refused or lost connection.
        assert!(!refused(&e(ErrorKind::BusyLoadingError, "LOADING")));
        assert!(!refused(&e(ErrorKind::IoError, "connection refused")));
        assert!(!refused(&e(ErrorKind::AuthenticationFailed, "WRONGPASS")));
    }

    /// `CLUSTER SLOTS`: each range's primary, once, sorted; an empty host
    /// is the node asked.
    #[test]
    fn a_clusters_primaries_are_read_from_its_slots() {
        let node = |host: &str, port: i64, id: &str| {
            Reply::Array(vec![
                Reply::BulkString(host.as_bytes().to_vec()),
                Reply::Int(port),
                Reply::BulkString(id.as_bytes().to_vec()),
            ])
        };
        let range = |a: i64, b: i64, primary: Reply, replica: Reply| {
            Reply::Array(vec![Reply::Int(a), Reply::Int(b), primary, replica])
        };
        let reply = Reply::Array(vec![
            range(
                0,
                5460,
                node("10.0.0.2", 7001, "b"),
                node("10.0.0.9", 7009, "r"),
            ),
            range(5461, 5470, node("", 7000, "a"), node("10.0.0.8", 7008, "s")),
            range(
                5471,
                10922,
                node("10.0.0.2", 7001, "b"),
                node("10.0.0.9", 7009, "r"),
            ),
        ]);
        assert_eq!(
            primaries_in(&reply, "seed"),
            vec![("10.0.0.2".to_string(), 7001), ("seed".to_string(), 7000)]
        );
        assert!(primaries_in(&Reply::Nil, "seed").is_empty());
    }

    #[test]
    fn no_copies_without_a_length() {
        let c = LocalCopies::new(0);
        assert_eq!(c.coherence(), Coherence::NoCopies);
        assert!(c.before_read("k").is_none());
    }
}
