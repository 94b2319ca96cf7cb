//! The read path on real I/O: each request runs the core's state machine
//! (`stampede::read_path::ReadPath`) in a task of its own, and this module
//! only performs the steps the machine emits — `GET` and the poll against
//! Redis, the claim and its release by script, the in-process flight table,
//! an admission semaphore, the origin, the value write. No stampede rule is
//! decided here: when to claim, when to wait, what a caller gets at its
//! deadline and what the work does after it are all the machine's.
//!
//! The caller gets its answer through a channel the moment the machine says
//! `Respond`; the task goes on with whatever work the machine still has
//! (write, settle, release), so a caller's deadline never cuts the work.
//!
//! Values live in one Redis string `value:{key}` (the layout of
//! [`row`](crate::row)): a header with the writer's fence, a negative-cache
//! mark, a version, when it stops being fresh and stale (wall-clock ms,
//! shared by every instance) and the recompute's delta, then the payload.

use std::any::Any;
use std::borrow::Cow;
use std::collections::HashMap;
use std::future::Future;
use std::hash::Hash;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::task::Poll;
use std::time::Duration;

use redis::Script;
use stampede::claim::Micros;
use stampede::flight::{LeaderTicket, Outcome, Value};
use stampede::metrics::Ending;
use stampede::read_path::{
    CacheReply, ClaimReply, FlightKey, FlightReply, Input, ReadPath, Step, Strategy,
};
#[cfg(feature = "harness")]
use stampede::scenario::Scenario;
use tokio::sync::{oneshot, OwnedSemaphorePermit, Semaphore};
use tokio::time::Instant;

use crate::breaker::{Admit, Breaker, Turned};
use crate::claim::{key_name, Release, Token, CLAIM_FENCED, RELEASE, WRITE_FENCED};
#[cfg(feature = "harness")]
use crate::conn::Target;
use crate::conn::{Conn, Link};
use crate::flights::{Flights, Joined, Woken};
use crate::group::CatchUnwind;
use crate::local::{Coherence, LocalCopies};
use crate::obs;
use crate::row::{foreign_type, stored_row, wall_ms, Header};

/// A value's content, shared by every caller it answers.
type Payload = Arc<Vec<u8>>;

/// A key the driver can serve: the conformance harness's `u32`, or a
/// service's `String`.
pub trait Key: Clone + Eq + Hash + Send + Sync + 'static {
    /// The key's name inside the Redis keys (`value:{name}`, `lock:{name}`,
    /// `fence:{name}`).
    fn name(&self) -> Cow<'_, str>;

    /// The number the core's state machine carries for this key. The
    /// driver never uses it to find anything (every step is performed for
    /// the request's own key), so any value is correct.
    fn machine_id(&self) -> u32 {
        0
    }
}

impl Key for u32 {
    fn name(&self) -> Cow<'_, str> {
        Cow::Owned(self.to_string())
    }

    fn machine_id(&self) -> u32 {
        *self
    }
}

impl Key for String {
    fn name(&self) -> Cow<'_, str> {
        Cow::Borrowed(self)
    }
}

/// An origin's error, whatever its type (a `String` or `&str` converts
/// with `.into()`).
pub type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// An origin's error as the callers of a flight share it.
pub type SharedError = Arc<dyn std::error::Error + Send + Sync>;

/// The origin's answer: a key's payload, or why there is none.
pub type OriginFuture = Pin<Box<dyn Future<Output = Result<Vec<u8>, BoxError>> + Send>>;

/// A computed value: its payload, and how long it stays fresh if not the
/// driver's value TTL.
#[derive(Debug)]
pub struct Fill {
    pub payload: Vec<u8>,
    /// This entry's TTL (fresh for this long, then stale for the stale
    /// window); `None`: the driver's.
    pub ttl: Option<Duration>,
}

/// [`Origin::fill`]'s answer.
pub type FillFuture = Pin<Box<dyn Future<Output = Result<Fill, BoxError>> + Send>>;

/// One request's own loader, run instead of the driver's origin if this
/// request is the one that computes (a per-call loader).
pub(crate) type Loader = Arc<dyn Fn() -> FillFuture + Send + Sync>;

/// What a service's origin is: anything that computes a key's payload.
pub trait Origin<K = u32>: Send + Sync + 'static {
    fn compute(&self, key: K) -> OriginFuture;

    /// The value for `key` with its own TTL, if it has one: what the
    /// driver calls. [`Origin::compute`]'s payload with the driver's TTL,
    /// unless said otherwise.
    fn fill(&self, key: K) -> FillFuture {
        let call = self.compute(key);
        Box::pin(async move {
            Ok(Fill {
                payload: call.await?,
                ttl: None,
            })
        })
    }

    /// A stored payload as its caller will read it: an error (the
    /// codec's words) if it cannot be served (written by another writer,
    /// or under another schema in a rolling deploy), a miss, counted once
    /// per request in [`Counters::decode_misses`], which the recompute
    /// overwrites; else what it decoded to, carried with the payload to
    /// the answer, so that an answer is decoded once
    /// ([`Decoded::nothing`] keeps nothing). Every payload, keeping
    /// nothing, unless said otherwise.
    fn decode(&self, _payload: &[u8]) -> Result<Decoded, String> {
        Ok(Decoded::nothing())
    }

    /// The test harness's holder faults (feature `harness` only): whether
    /// this request, which holds a claim (`won`: it has just won it), dies
    /// here without releasing it. Its caller gets an error, its flight
    /// passes to its oldest follower, and its claim blocks the key on
    /// every instance until its TTL. Never, unless said otherwise.
    #[cfg(feature = "harness")]
    fn holder_dies(&self, _won: bool) -> bool {
        false
    }
}

/// What [`Origin::decode`] made of a stored payload: the value its caller
/// gets, of the origin's own type, or nothing.
#[derive(Default)]
pub struct Decoded(Option<Box<dyn Any + Send>>);

impl Decoded {
    /// Nothing kept: the answer's payload is decoded where it is read.
    pub fn nothing() -> Decoded {
        Decoded(None)
    }

    /// `value`, kept for the answer.
    pub fn of<T: Send + 'static>(value: T) -> Decoded {
        Decoded(Some(Box::new(value)))
    }

    /// The value kept, if it is a `T`.
    pub fn take<T: 'static>(self) -> Option<T> {
        self.0?.downcast().ok().map(|v| *v)
    }
}

impl std::fmt::Debug for Decoded {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(if self.0.is_some() {
            "Decoded(..)"
        } else {
            "Decoded(nothing)"
        })
    }
}

/// Why a request has no value and no error of the origin's to give
/// ([`CacheError::Failed`](crate::CacheError::Failed)).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum FailCause {
    /// The origin call ran past the origin timeout
    /// ([`CacheBuilder::origin_timeout`](crate::CacheBuilder::origin_timeout)):
    /// this request's, or that of the flight it waited on in this process.
    /// The call itself may go on.
    OriginTimeout,
    /// The origin panicked (inside its future, or in the closure before
    /// its future existed): this request's call, or its flight's.
    OriginPanicked,
    /// A failure cached in Redis answered
    /// ([`CacheBuilder::negative_ttl`](crate::CacheBuilder::negative_ttl)):
    /// the origin failed within the negative TTL, on this instance or
    /// another, and is not called again until it ends.
    Remembered,
    /// Another instance held the claim and its origin call failed while
    /// this request waited on it: the holder's failure mark (`failed:{k}`),
    /// seen by this request's poll. Not remembered: the next request calls
    /// again.
    OtherInstance,
    /// The request's work ended without an answer (its runtime shut down
    /// under it).
    Unanswered,
}

impl FailCause {
    /// Its name: the `source` label of `stampede_get_seconds` for a request
    /// that failed so.
    pub fn name(self) -> &'static str {
        match self {
            FailCause::OriginTimeout => "OriginTimeout",
            FailCause::OriginPanicked => "OriginPanicked",
            FailCause::Remembered => "Remembered",
            FailCause::OtherInstance => "OtherInstance",
            FailCause::Unanswered => "Unanswered",
        }
    }
}

/// What a caller gets.
#[derive(Debug)]
pub struct Answer {
    pub ending: Ending,
    /// The payload, for the endings that carry one.
    pub value: Option<Arc<Vec<u8>>>,
    /// What the read that found `value` decoded it to ([`Origin::decode`]),
    /// for a hit, a value that came after waiting, or a stale one.
    pub decoded: Decoded,
    /// The request lost the claim to another instance (or took a flight
    /// over from a leader that did) and polled Redis for the value before
    /// it was answered.
    pub waited: bool,
    /// With [`Ending::Error`]: the origin's own error, when this request
    /// ran the origin or followed the flight whose leader did, and the
    /// origin returned one (not for a timeout, a panic or a cached
    /// failure).
    pub error: Option<SharedError>,
    /// With [`Ending::Error`] and no `error`: why.
    pub cause: Option<FailCause>,
}

impl Answer {
    /// An error with nothing more to say: a caller whose request's task
    /// ended without answering, or a holder the harness made die.
    fn failed() -> Answer {
        Answer {
            ending: Ending::Error,
            value: None,
            decoded: Decoded::nothing(),
            waited: false,
            error: None,
            cause: Some(FailCause::Unanswered),
        }
    }
}

/// Counts the conformance run compares with the simulation's.
#[derive(Debug, Default)]
pub struct Counters {
    pub requests: AtomicU64,
    pub recomputes: AtomicU64,
    pub claim_attempts: AtomicU64,
    pub claim_wins: AtomicU64,
    pub releases: AtomicU64,
    pub values_written: AtomicU64,
    /// Redis commands that failed or did not answer within the client's
    /// timeout ([`REDIS_TIMEOUT`] unless the scenario sets
    /// `redis_timeout_ms`).
    pub redis_errors: AtomicU64,
    /// Redis commands not sent because the instance's breaker was open
    /// (each answered with the error at once).
    pub redis_skipped: AtomicU64,
    /// Attempts a caller made again after one failed or timed out.
    pub retries: AtomicU64,
    /// Reads answered by the instance's local copy, with no round trip.
    pub local_hits: AtomicU64,
    /// Recomputes shed because no admission permit came in time.
    pub admission_shed: AtomicU64,
    /// Requests whose first read found nothing fresh (a miss or a stale value).
    pub misses: AtomicU64,
    /// Claim holders made to crash (the test harness's holder faults;
    /// feature `harness`).
    #[cfg(feature = "harness")]
    pub crashed: AtomicU64,
    /// Value writes refused because a newer fence had written.
    pub writes_refused: AtomicU64,
    /// Releases that found the request's own claim and deleted it.
    pub released: AtomicU64,
    /// Releases that found nobody holding the claim (it expired, or a claim
    /// whose reply never came had not been taken).
    pub release_expired: AtomicU64,
    /// Releases that found another holder's claim (this one's expired and
    /// was taken again), left alone.
    pub release_taken: AtomicU64,
    /// Stored values that did not decode, read as misses (and overwritten
    /// by the recompute).
    pub decode_misses: AtomicU64,
    /// Claims whose reply never came (the command failed or timed out after
    /// it was sent): it may have been taken all the same, so the request
    /// released it by its token, after it on the same connection.
    pub ambiguous_claims: AtomicU64,
    /// Requests whose task is still running (answered or not: a write, a
    /// settle or a release may still be under way).
    pub running: AtomicU64,
}

/// Counts a request's task, or a command left to finish after its caller,
/// in [`Counters::running`] until it ends, however it ends.
struct Running<O, K>(Arc<Inner<O, K>>);

impl<O, K> Running<O, K> {
    fn start(inner: &Arc<Inner<O, K>>) -> Self {
        inner.counters.running.fetch_add(1, Ordering::SeqCst);
        obs::cache_gauge_add(obs::IN_FLIGHT, &inner.label, 1.0);
        Running(inner.clone())
    }
}

impl<O: Send + Sync + 'static, K: Send + Sync + 'static> Running<O, K> {
    /// `work` in a task of its own, counted until it ends.
    fn spawn(self, work: impl Future<Output = ()> + Send + 'static) {
        tokio::spawn(async move {
            let _running = self;
            work.await;
        });
    }
}

impl<O, K> Drop for Running<O, K> {
    fn drop(&mut self) {
        self.0.counters.running.fetch_sub(1, Ordering::SeqCst);
        obs::cache_gauge_add(obs::IN_FLIGHT, &self.0.label, -1.0);
    }
}

/// What the driver needs besides the read path's [`Strategy`].
#[derive(Clone, Copy, Debug)]
pub(crate) struct Settings {
    pub value_ttl: Duration,
    pub stale: Duration,
    /// TTL jitter as a fraction in [0, 1].
    pub jitter: f64,
    pub xfetch: bool,
    /// Concurrent recomputes allowed per instance (0 = no limit).
    pub admission: usize,
    /// How long one Redis command may take before it counts as failed.
    pub redis_timeout: Duration,
    /// After a Redis error or timeout, skip Redis for this long (zero: no
    /// breaker).
    pub redis_breaker: Duration,
    /// After its open period the breaker lets one probe through and waits
    /// for its answer (the cache's); off, it closes the moment the period
    /// ends (the simulation's, for the harness): [`crate::breaker`].
    pub half_open: bool,
    /// A failed or timed-out attempt is tried again, this many times at most.
    pub retries: u32,
    /// The full-jitter backoff's base: before retry n (from 0), a uniform
    /// pause up to `retry_backoff x 2^n`.
    pub retry_backoff: Duration,
    /// Keep a local copy of a fresh value read from Redis this long (zero:
    /// none).
    pub local_cache: Duration,
    /// A claim holder whose origin fails says so to the instances waiting
    /// on its claim (a failure mark, `failed:{k}`, for their polls): they
    /// answer the failure instead of taking the claim and calling the
    /// origin in turn. The cache's; not the simulation's (the harness).
    pub share_failures: bool,
    /// An unfenced write is refused when the stored row is newer (its
    /// version: when its computation started, or its set or delete), and
    /// a delete leaves a tombstone that says when: a fill in flight cannot
    /// land older data over a `set` or an `invalidate` (the cache's; the
    /// simulation's unfenced writes always land: the harness).
    pub newer_wins: bool,
    /// The connection is the service's own
    /// ([`CacheBuilder::connection`](crate::CacheBuilder::connection)):
    /// its reconnection is its own, and a long failure is said so
    /// ([`obs::own_connection_down`]).
    pub own_connection: bool,
}

impl Settings {
    #[cfg(feature = "harness")]
    pub(crate) fn from_scenario(scenario: &Scenario) -> Settings {
        let ms = |v: u32| Duration::from_millis(u64::from(v));
        Settings {
            value_ttl: ms(scenario.value_ttl_ms),
            stale: ms(scenario.stale_ms),
            jitter: scenario.jitter,
            xfetch: scenario.xfetch_beta > 0.0,
            admission: scenario.admission as usize,
            redis_timeout: ms(scenario.redis_timeout_ms),
            redis_breaker: ms(scenario.redis_breaker_ms),
            half_open: false,
            retries: scenario.retries,
            retry_backoff: ms(scenario.retry_backoff_ms),
            local_cache: ms(scenario.local_cache_ms),
            share_failures: false,
            newer_wins: false,
            own_connection: false,
        }
    }

    /// A service's defaults: no jitter, no XFetch, no admission limit, no
    /// fault, [`REDIS_TIMEOUT`], no breaker, no retries.
    pub(crate) const fn service() -> Settings {
        Settings {
            value_ttl: Duration::from_secs(10),
            stale: Duration::ZERO,
            jitter: 0.0,
            xfetch: false,
            admission: 0,
            redis_timeout: REDIS_TIMEOUT,
            redis_breaker: Duration::ZERO,
            half_open: true,
            retries: 0,
            retry_backoff: Duration::ZERO,
            local_cache: Duration::ZERO,
            share_failures: true,
            newer_wins: true,
            own_connection: false,
        }
    }
}

/// What a flight settles with, for each of its followers: the machine's
/// outcome, the leader's payload when it settled with a value, and its
/// origin's error when it failed with one.
type Settled = (
    Outcome,
    Option<Payload>,
    Option<SharedError>,
    Option<FailCause>,
);

pub(crate) struct Inner<O, K> {
    strategy: Strategy,
    /// Put before every Redis key this instance names (its value, claim
    /// and fence keys); empty: none.
    prefix: String,
    con: Link,
    release: Script,
    claim: Script,
    write_fenced: Script,
    /// The negative-cache mark, expiring with a hash it creates.
    negative: Script,
    /// Flights by the request's key and the machine's coalescing key (the
    /// same for every request of a key unless the key-mismatch pitfall
    /// salts it): the crate's one singleflight, the `Group`'s too. The
    /// leader's payload travels with the settle, so nothing is kept once a
    /// flight settles.
    flights: Flights<(K, FlightKey), Settled>,
    admission: Option<Arc<Semaphore>>,
    origin: O,
    epoch: Instant,
    value_ttl: Duration,
    stale: Duration,
    /// TTL jitter as a fraction: each written TTL is drawn from
    /// ttl x [1 - j, 1 + j], as the simulation draws it.
    jitter: f64,
    /// XFetch is on: fresh reads carry the expiry, delta and a draw.
    xfetch: bool,
    /// Draws for jitter and XFetch (they only have to vary).
    draws: AtomicU64,
    next_id: AtomicU64,
    counters: Counters,
    redis_timeout: Duration,
    /// The Redis breaker ([`Settings::redis_breaker`]).
    breaker: Breaker,
    /// The cache's name, its metrics' `cache` label.
    label: obs::Label,
    retries: u32,
    retry_backoff: Duration,
    /// See [`Settings::share_failures`].
    share_failures: bool,
    /// See [`Settings::own_connection`].
    own_connection: bool,
    /// See [`Settings::newer_wins`].
    newer_wins: bool,
    /// Since when every command sent has failed (µs on the driver's
    /// clock; 0: the last one sent was answered). Kept for the service's
    /// own connection only.
    failing_since: AtomicU64,
    /// The instance's local copies of fresh values a GET returned (none
    /// if `local_cache` is zero), by their value key: [`crate::local`].
    local: Arc<LocalCopies>,
    /// A drain has started: requests that arrive from now on are refused.
    draining: AtomicBool,
    /// The warnings' limits (feature `tracing`).
    warnings: obs::Warnings,
    /// Requests past the drain's gate whose caller's future has not
    /// returned yet (their task, if any, is counted in `running` before
    /// they leave the gate).
    entered: AtomicU64,
}

/// A request let in before the drain: counted in `entered` until its
/// caller's future returns or is dropped.
struct Entered<'a>(&'a AtomicU64);

impl Drop for Entered<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

/// A request that arrived after a drain started
/// ([`Cache::drain`](crate::Cache::drain)).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Draining;

/// One instance's read path: its own flight table and admission limit, a
/// connection to the shared Redis. Cheap to clone.
pub struct Driver<O, K = u32> {
    inner: Arc<Inner<O, K>>,
}

impl<O, K> Clone for Driver<O, K> {
    fn clone(&self) -> Self {
        Driver {
            inner: self.inner.clone(),
        }
    }
}

/// Marks a value as failed (negative caching): the mark goes into the
/// row's header, and a row that holds a value keeps its payload and its
/// own expiry; anything else (no row, a mark alone, a row not in the
/// layout) is replaced by a mark alone, which expires with the mark.
/// KEYS: the value; ARGV: the mark's end (wall-clock ms), how long it lasts
/// (ms).
const NEGATIVE: &str = include_str!("scripts/negative.lua");

/// Loads the driver's scripts on `con` (on every primary of a cluster), so
/// that the first claim of a burst is one round trip, not NOSCRIPT, a load
/// and a retry inside the command bound.
pub(crate) async fn load_scripts(con: &mut Conn) -> redis::RedisResult<()> {
    for script in [RELEASE, CLAIM_FENCED, WRITE_FENCED, NEGATIVE] {
        Script::new(script).load_async(con).await?;
    }
    Ok(())
}

/// What performing a step produced besides the machine's input.
enum Got {
    Nothing,
    /// A payload read, what it decoded to, why the row could not be read
    /// if it could not (a decode miss), and whose failure it answered if
    /// it was one (a negative mark, or a holder's failure mark).
    Read(
        Option<Arc<Vec<u8>>>,
        Decoded,
        Option<String>,
        Option<FailCause>,
    ),
    /// The payload computed (or read back), with its own TTL if it has one.
    Computed(Arc<Vec<u8>>, Option<Duration>),
    /// The origin failed: its own error if it returned one, else why.
    Failed(Result<SharedError, FailCause>),
    /// The claim was held by another instance; this request sent it then
    /// (wall-clock ms).
    Lost(u64),
    /// A flight's reply to this follower carried the leader's payload, or
    /// its origin's error, or why it failed without one.
    Shared(Option<Arc<Vec<u8>>>, Option<SharedError>, Option<FailCause>),
    Permit(OwnedSemaphorePermit),
}

type Op = Pin<Box<dyn Future<Output = (Input, Got)> + Send>>;

fn ready(input: Input) -> Op {
    Box::pin(async move { (input, Got::Nothing) })
}

#[cfg(feature = "harness")]
impl<O: Origin> Driver<O> {
    /// One instance for `scenario`'s read path (the core's, pitfalls
    /// included) against the Redis at `target` (a URL, several
    /// comma-separated URLs for a cluster, or a [`Target`]). For the test
    /// harness (feature `harness`): a service builds a
    /// [`Cache`](crate::Cache).
    pub async fn connect(
        target: impl Into<Target>,
        scenario: &Scenario,
        origin: O,
    ) -> redis::RedisResult<Self> {
        let settings = Settings::from_scenario(scenario);
        let con = target
            .into()
            .connect_bounded(settings.redis_timeout)
            .await?;
        Driver::with_connection(
            con,
            Strategy::from_scenario(scenario),
            settings,
            String::new(),
            origin,
        )
        .await
    }
}

impl<O: Origin<K>, K: Key> Driver<O, K> {
    /// One instance with this read path and these settings, on a
    /// connection already made: [`Target::connect_bounded`] with the Redis
    /// timeout (the connection's own reply bound must not cut a command the
    /// client timeout still allows), or the service's own.
    #[cfg(feature = "harness")]
    pub(crate) async fn with_connection(
        mut con: Conn,
        strategy: Strategy,
        settings: Settings,
        prefix: String,
        origin: O,
    ) -> redis::RedisResult<Self> {
        load_scripts(&mut con).await?;
        Ok(Driver::on_link(
            Link::ready(con),
            strategy,
            settings,
            prefix,
            "",
            origin,
        ))
    }

    /// One instance on `con`, made or still being made (its scripts
    /// loaded, or loaded before it is used: [`load_scripts`]).
    pub(crate) fn on_link(
        con: Link,
        strategy: Strategy,
        settings: Settings,
        prefix: String,
        name: &str,
        origin: O,
    ) -> Self {
        Driver {
            inner: Arc::new(Inner {
                strategy,
                prefix,
                con,
                release: Script::new(RELEASE),
                claim: Script::new(CLAIM_FENCED),
                write_fenced: Script::new(WRITE_FENCED),
                negative: Script::new(NEGATIVE),
                flights: Flights::new(),
                admission: (settings.admission > 0)
                    .then(|| Arc::new(Semaphore::new(settings.admission))),
                origin,
                epoch: Instant::now(),
                value_ttl: settings.value_ttl,
                stale: settings.stale,
                jitter: settings.jitter.clamp(0.0, 1.0),
                xfetch: settings.xfetch,
                draws: AtomicU64::new(0),
                next_id: AtomicU64::new(0),
                counters: Counters::default(),
                redis_timeout: settings.redis_timeout,
                breaker: Breaker::new(
                    settings.redis_breaker.as_micros() as Micros,
                    settings.half_open,
                ),
                label: obs::Label::new(name),
                retries: settings.retries,
                retry_backoff: settings.retry_backoff,
                share_failures: settings.share_failures,
                own_connection: settings.own_connection,
                newer_wins: settings.newer_wins,
                failing_since: AtomicU64::new(0),
                local: Arc::new(LocalCopies::new(settings.local_cache.as_micros() as Micros)),
                draining: AtomicBool::new(false),
                warnings: obs::Warnings::default(),
                entered: AtomicU64::new(0),
            }),
        }
    }

    pub fn counters(&self) -> &Counters {
        &self.inner.counters
    }

    /// The origin the driver was built with.
    pub fn origin(&self) -> &O {
        &self.inner.origin
    }

    /// Deletes `key`'s value from Redis, and this instance's local copy:
    /// the next request recomputes. (Other instances' local copies go when
    /// Redis's invalidation reaches them, or age out if not tracked.)
    /// Bounded by the Redis timeout.
    ///
    /// The cache's ([`Settings::newer_wins`]) leaves a tombstone in its
    /// place instead of deleting it: a row with nothing to serve that says
    /// when it was deleted (its version) and, with fenced writes, under a
    /// fencing number of its own; it lives as long as a fill may still be
    /// in flight (the claim TTL). A fill that started before it is refused
    /// when it writes, so the value deleted does not come back.
    pub async fn invalidate(&self, key: &K) -> redis::RedisResult<()> {
        let inner = &self.inner;
        self.drop_local(key);
        let mut con = inner.con.clone();
        let k = key.name();
        if !inner.newer_wins {
            let mut del = redis::cmd("DEL");
            del.arg(inner.value_key(&k));
            return bounded(inner, del.query_async::<i64>(&mut con))
                .await
                .map(drop);
        }
        let fence = own_fence(inner, &mut con, &k).await?;
        let version = (wall_ms() & 0xffff_ffff) as u32;
        let lives = (inner.strategy.claim_ttl / 1000).max(1);
        let mut tombstone = inner.write_fenced.key(inner.value_key(&k));
        tombstone
            .key(inner.fence_key(&k))
            .arg(&[] as &[u8])
            .arg(fence)
            .arg(version)
            .arg(0)
            .arg(0)
            .arg(0)
            .arg(lives)
            .arg(0);
        bounded(inner, tombstone.invoke_async::<i64>(&mut con))
            .await
            .map(drop)
    }

    /// Writes `payload` as `key`'s value now, fresh for `ttl` (the value
    /// TTL if `None`) and then stale for the stale window, and drops this
    /// instance's local
    /// copy. With fenced writes, under a fencing number of its own, taken
    /// first: a fill in flight under an older claim is refused when it
    /// writes after. False when it was itself refused as older (a fill
    /// under a newer claim wrote in between). Bounded by the Redis timeout
    /// (two commands with fencing).
    pub async fn set(
        &self,
        key: &K,
        payload: &[u8],
        ttl: Option<Duration>,
    ) -> redis::RedisResult<bool> {
        let inner = &self.inner;
        let k = key.name().into_owned();
        let mut con = inner.con.clone();
        self.drop_local(key);
        let fence = own_fence(inner, &mut con, &k).await?;
        let version = (wall_ms() & 0xffff_ffff) as u32;
        let written = write_value(inner, &mut con, &k, payload, fence, version, 0, ttl).await?;
        Ok(written == 1)
    }

    fn drop_local(&self, key: &K) {
        let inner = &self.inner;
        if inner.local.on() {
            inner.local.forget(&inner.value_key(&key.name()));
        }
    }

    /// How the local copies stand.
    pub(crate) fn coherence(&self) -> Coherence {
        self.inner.local.coherence()
    }

    /// Keeps the local copies coherent by tracking on the server or
    /// cluster `at` ([`LocalCopies::track`]), if there are any.
    /// `now`: the first connections are tried before this returns.
    pub(crate) async fn track(&self, at: crate::local::Tracking, now: bool) {
        let inner = &self.inner;
        let bound = crate::conn::reply_bound(inner.redis_timeout);
        inner
            .local
            .track(at, inner.prefix.clone(), bound, now)
            .await;
    }

    /// Keys invalidated by Redis's tracking, and tracking connections lost.
    pub(crate) fn tracking_counts(&self) -> (u64, u64) {
        let l = &self.inner.local;
        (
            l.invalidations.load(Ordering::Relaxed),
            l.tracking_lost.load(Ordering::Relaxed),
        )
    }

    /// Where the Redis breaker stands now.
    pub fn breaker(&self) -> crate::BreakerState {
        self.inner.breaker.state(|| self.inner.now())
    }

    /// Flights open in this instance's table right now (0 once every
    /// request's task has ended: a flight nobody leads must not remain).
    pub fn in_flight(&self) -> usize {
        self.inner.flights.in_flight()
    }

    #[cfg(feature = "harness")]
    /// The value for `key`, as the read path decides. The request's work
    /// goes on in its own task after the answer if the machine has more to
    /// do (a write, a settle, a release).
    ///
    /// With `retries` (the scenario's), an attempt that ends in an error or
    /// a timeout is tried again, as the simulation's callers do: once the
    /// failed attempt's task has ended (its work done, as a thread that
    /// stays with its work is free only then), after a full-jitter pause
    /// (uniform up to `retry_backoff_ms x 2^n` before retry n), with a
    /// deadline of its own (a client's per-attempt timeout, not one budget
    /// for all attempts). The answer is the last attempt's.
    pub async fn get(&self, key: K) -> Answer {
        self.get_since(key, None).await.0
    }

    #[cfg(feature = "harness")]
    /// As [`Driver::get`], for a request that arrived at `since` (its first
    /// attempt's deadline runs from then: it waited for a thread in an
    /// accept queue), also handing back the last attempt's task, which ends
    /// once that attempt's work has (the thread is busy until then).
    pub async fn get_since(
        &self,
        key: K,
        since: Option<Instant>,
    ) -> (Answer, tokio::task::JoinHandle<()>) {
        self.attempts(key, since, None).await
    }

    /// The cache's requests (no retries): as [`Driver::get`], with the
    /// first step, the machine's first read, performed in the caller's own
    /// future. A fresh value found there (the hit path) is answered there,
    /// with no task and no channel, and with the value `decode` read of its
    /// payload (decoded once, to tell a value it cannot read from a hit and
    /// for the caller alike; `None` for any other answer, and for a local
    /// copy, read when it was kept); anything else goes on, from the same
    /// machine, in a task of its own, as every request does. Dropping the
    /// caller's future during that first read drops the read alone (it has
    /// changed nothing); a deadline reached during it hands the command to
    /// a task of its own, as a pending command always is.
    ///
    /// Refused ([`Draining`]) once a drain has started.
    pub(crate) async fn get_inline<T: Send + 'static>(
        &self,
        key: K,
        loader: Option<Loader>,
        decode: Decode<O, T>,
    ) -> Result<(Answer, Option<T>), Draining> {
        let _entered = self.enter()?;
        #[cfg(feature = "tracing")]
        let span = obs::request_span(&key.name());
        let first = self.first_inline(
            key,
            loader,
            decode,
            #[cfg(feature = "tracing")]
            span.clone(),
        );
        #[cfg(feature = "tracing")]
        let first = tracing::Instrument::instrument(first, span);
        Ok(first.await)
    }

    /// A request let in, unless a drain has started.
    fn enter(&self) -> Result<Entered<'_>, Draining> {
        let inner = &self.inner;
        // Counted first, then the gate read (both sequentially consistent,
        // as the drain's flag and its read of the count): either this
        // request sees the drain, or the drain sees this request.
        inner.entered.fetch_add(1, Ordering::SeqCst);
        let entered = Entered(&inner.entered);
        if inner.draining.load(Ordering::SeqCst) {
            obs::count_cache(obs::DRAIN_REFUSED, &inner.label);
            return Err(Draining);
        }
        Ok(entered)
    }

    /// A read of `key`'s value alone, for a cache with nothing to compute
    /// it: its local copy while it lives, else one `GET`. The payload and
    /// what `decode` read of it (nothing for a local copy) if the value
    /// is fresh; `None` for anything else. Refused ([`Draining`]) once a
    /// drain has started.
    pub(crate) async fn read_only<T: Send + 'static>(
        &self,
        key: K,
        decode: Decode<O, T>,
    ) -> Result<Option<(Payload, Option<T>)>, Draining> {
        let _entered = self.enter()?;
        let inner = &self.inner;
        inner.counters.requests.fetch_add(1, Ordering::Relaxed);
        let (con, id) = (inner.con.clone(), key.machine_id());
        let r = read_op(inner.clone(), con, &key, id, true, decode).await;
        decode_miss(inner, &key, r.undecodable, &mut false);
        Ok(match (r.reply, r.bytes) {
            (CacheReply::Fresh(_) | CacheReply::FreshUntil { .. }, Some(bytes)) => {
                obs::count_cache(obs::HITS, &inner.label);
                Some((bytes, r.read))
            }
            _ => None,
        })
    }

    /// The fresh values of `keys` read at once: the local copies, then one
    /// `MGET` of the others' rows (one Redis; a cluster's keys live in many
    /// slots, and each is left to its own `get`). For each key, its payload
    /// and what `decode` read of it, or `None`: not fresh, or not read (a
    /// cluster, a Redis that failed). A fresh one is a request answered,
    /// counted as a hit (and kept as a local copy if they are on); the
    /// others are left, uncounted, to the `get` that follows, which reads
    /// again, coalesces and computes. Refused ([`Draining`]) once a drain
    /// has started.
    #[allow(clippy::type_complexity)]
    pub(crate) async fn read_many<T: Send + 'static>(
        &self,
        keys: &[K],
        decode: Decode<O, T>,
    ) -> Result<Vec<Option<(Payload, Option<T>)>>, Draining> {
        let _entered = self.enter()?;
        let inner = &self.inner;
        let mut out: Vec<Option<(Payload, Option<T>)>> = keys.iter().map(|_| None).collect();
        let names: Vec<String> = keys.iter().map(|k| inner.value_key(&k.name())).collect();
        let hit = |local: bool| {
            inner.counters.requests.fetch_add(1, Ordering::Relaxed);
            obs::count_cache(obs::HITS, &inner.label);
            if local {
                inner.counters.local_hits.fetch_add(1, Ordering::Relaxed);
                obs::count_cache(obs::LOCAL_HITS, &inner.label);
            }
        };
        let mut ask = Vec::new();
        for (i, name) in names.iter().enumerate() {
            let copy = inner.local.on().then(|| inner.local.get(name, inner.now()));
            match copy.flatten() {
                Some((_, bytes)) => {
                    hit(true);
                    out[i] = Some((bytes, None));
                }
                None => ask.push(i),
            }
        }
        if ask.is_empty() || inner.con.cluster() {
            return Ok(out);
        }
        let epochs: Vec<Option<u64>> = ask
            .iter()
            .map(|&i| inner.local.before_read(&names[i]))
            .collect();
        let mut mget = redis::cmd("MGET");
        for &i in &ask {
            mget.arg(&names[i]);
        }
        let mut con = inner.con.clone();
        let rows = bounded(inner, mget.query_async::<Vec<Option<Vec<u8>>>>(&mut con)).await;
        let Ok(rows) = rows else { return Ok(out) };
        let wall = wall_ms();
        for ((&i, row), epoch) in ask.iter().zip(rows).zip(epochs) {
            let r = reply_of(inner, keys[i].machine_id(), row, decode, wall);
            let (CacheReply::Fresh(v) | CacheReply::FreshUntil { value: v, .. }) = r.reply else {
                continue;
            };
            let Some(bytes) = r.bytes else { continue };
            hit(false);
            if let Some(epoch) = epoch {
                let now = inner.now();
                inner
                    .local
                    .keep(&names[i], epoch, (v, bytes.clone()), now, r.fresh_for);
            }
            out[i] = Some((bytes, r.read));
        }
        Ok(out)
    }

    /// The cache's name as its metrics' label.
    pub(crate) fn label(&self) -> &obs::Label {
        &self.inner.label
    }

    /// The Redis key names, with the driver's prefix.
    pub(crate) fn keys(&self) -> &Inner<O, K> {
        &self.inner
    }

    /// Starts a drain: every request that arrives from now on is refused
    /// ([`Draining`]); those already let in run to their end.
    pub(crate) fn start_drain(&self) {
        self.inner.draining.store(true, Ordering::SeqCst);
    }

    /// Requests let in and not ended: callers still in their first read,
    /// and tasks still running (0 once a drain has nothing left to wait
    /// for).
    pub(crate) fn unfinished(&self) -> u64 {
        let inner = &self.inner;
        inner.entered.load(Ordering::SeqCst) + inner.counters.running.load(Ordering::SeqCst)
    }

    /// See [`Driver::get_inline`]. Until it returns, the request is
    /// counted by its caller's gate (`entered`); a task it leaves work to
    /// is counted in `running` from before it is spawned.
    async fn first_inline<T: Send + 'static>(
        &self,
        key: K,
        loader: Option<Loader>,
        decode: Decode<O, T>,
        #[cfg(feature = "tracing")] span: tracing::Span,
    ) -> (Answer, Option<T>) {
        let inner = self.inner.clone();
        let s = inner.strategy;
        let id = inner.next_id.fetch_add(1, Ordering::Relaxed);
        // One clock read for the machine's start (its steps up to the read
        // take no time worth a second one).
        let start = inner.now();
        let mut m = ReadPath::new(&s, key.machine_id(), id, start);
        let step = m.resume(&s, Input::Start, start);
        let Step::CacheGet { key: read_key } = step else {
            // Every read path starts with a read; should one not, it runs
            // as any request does.
            return (self.attempts(key, None, loader).await.0, None);
        };
        inner.counters.requests.fetch_add(1, Ordering::Relaxed);
        let mut carried = Carried {
            loader,
            ..Carried::default()
        };
        let con = inner.con.clone();
        let read = read_op(
            inner.clone(),
            con,
            &key,
            read_key,
            m.is_first_read(),
            decode,
        );
        // The read is bounded by the Redis timeout. A deadline more than a
        // tick of tokio's timer (1 ms) past that bound cannot pass during
        // it: no timer is set for it then (the default 1 s deadline against
        // the 100 ms Redis timeout), and the read is awaited as it is.
        let bound = start + (inner.redis_timeout + Duration::from_millis(2)).as_micros() as Micros;
        let got = match m.deadline().filter(|&d| d < bound).map(|d| inner.at(d)) {
            Some(at) => {
                let mut read = Box::pin(read);
                tokio::select! {
                    r = &mut read => Some(r),
                    _ = tokio::time::sleep_until(at) => {
                        // The command was sent: its client waits for it to
                        // its timeout in a task of its own (see `drive`).
                        Running::start(&inner).spawn(async move {
                            let _ = read.await;
                        });
                        None
                    }
                }
            }
            _ => Some(read.await),
        };
        let (input, read) = match got {
            Some(r) => {
                let why = r.undecodable;
                decode_miss(&inner, &key, why, &mut carried.decode_missed);
                carried.cause = remembered(&r.reply);
                carried.read = r.bytes;
                (Input::Cache(r.reply), r.read)
            }
            None => (Input::DeadlinePassed, None),
        };
        let now = inner.now();
        let step = m.resume(&s, input, now);
        if let Step::Respond {
            ending: Ending::Hit,
            ..
        } = step
        {
            let answer = carried.answer(&inner.label, Ending::Hit, false);
            // Acknowledged as it is answered, at the same instant.
            let next = m.resume(&s, Input::Ack, now);
            if next != Step::Finish {
                // More work behind the answer (an early refresh).
                let running = Running::start(&inner);
                let task = drive(inner, key, m, Some(next), carried, None);
                #[cfg(feature = "tracing")]
                let task = tracing::Instrument::instrument(task, span);
                running.spawn(task);
            }
            return (answer, read);
        }
        // Not a hit: what the read decoded goes on with its payload (a
        // stale value answered from it is not decoded again).
        if let Some(read) = read {
            carried.decoded = Decoded::of(read);
        }
        let (tx, rx) = oneshot::channel();
        let running = Running::start(&inner);
        let task = drive(inner, key, m, Some(step), carried, Some(tx));
        #[cfg(feature = "tracing")]
        let task = tracing::Instrument::instrument(task, span);
        running.spawn(task);
        (rx.await.unwrap_or_else(|_| Answer::failed()), None)
    }

    async fn attempts(
        &self,
        key: K,
        since: Option<Instant>,
        loader: Option<Loader>,
    ) -> (Answer, tokio::task::JoinHandle<()>) {
        let mut attempt = 0;
        let mut since =
            since.map(|t| t.saturating_duration_since(self.inner.epoch).as_micros() as Micros);
        loop {
            let (answer, task) = self.attempt(key.clone(), since.take(), loader.clone());
            let answer = answer.await.unwrap_or_else(|_| Answer::failed());
            if !matches!(answer.ending, Ending::Error | Ending::Timeout)
                || attempt >= self.inner.retries
            {
                return (answer, task);
            }
            self.inner.counters.retries.fetch_add(1, Ordering::Relaxed);
            let _ = task.await;
            let cap = self.inner.retry_backoff.as_micros() as u64 * (1u64 << attempt.min(20));
            let pause = (self.inner.unit() * (cap + 1) as f64) as u64;
            tokio::time::sleep(Duration::from_micros(pause.max(1))).await;
            attempt += 1;
        }
    }

    /// One attempt in a task of its own: its answer, and the task (which
    /// ends once the attempt's work has).
    /// `since`: when its deadline starts (now if `None`).
    fn attempt(
        &self,
        key: K,
        since: Option<Micros>,
        loader: Option<Loader>,
    ) -> (oneshot::Receiver<Answer>, tokio::task::JoinHandle<()>) {
        let (tx, rx) = oneshot::channel();
        #[cfg(feature = "tracing")]
        let span = obs::request_span(&key.name());
        let task = run(self.inner.clone(), key, tx, since, loader);
        #[cfg(feature = "tracing")]
        let task = tracing::Instrument::instrument(task, span);
        (rx, tokio::spawn(task))
    }
}

impl<O, K> Inner<O, K> {
    /// `value:{k}`, after the prefix (one allocation: it is built on
    /// every read).
    pub(crate) fn value_key(&self, k: &str) -> String {
        key_name(&self.prefix, "value", k)
    }

    /// `lock:{k}`, after the prefix.
    pub(crate) fn lock_key(&self, k: &str) -> String {
        key_name(&self.prefix, "lock", k)
    }

    /// `fence:{k}`, after the prefix.
    pub(crate) fn fence_key(&self, k: &str) -> String {
        key_name(&self.prefix, "fence", k)
    }

    /// `failed:{k}`, after the prefix: a claim holder's origin failed
    /// then (wall-clock ms), for the instances that wait on its claim.
    pub(crate) fn failed_key(&self, k: &str) -> String {
        key_name(&self.prefix, "failed", k)
    }

    /// The longest a written value is kept (ms): its TTL at the top of the
    /// jitter, then the stale window.
    fn longest_keep_ms(&self) -> u64 {
        let ttl = self.value_ttl.as_millis() as f64 * (1.0 + self.jitter);
        ttl.ceil() as u64 + self.stale.as_millis() as u64
    }

    /// A uniform draw in [0, 1).
    fn unit(&self) -> f64 {
        let n = self.draws.fetch_add(1, Ordering::Relaxed);
        stampede::rng::Rng::new(n ^ (self as *const Self as u64)).unit()
    }

    fn now(&self) -> Micros {
        self.epoch.elapsed().as_micros() as Micros
    }

    fn at(&self, t: Micros) -> Instant {
        self.epoch + Duration::from_micros(t)
    }
}

/// What a request carries from one step to the next.
#[derive(Default)]
struct Carried {
    /// The request's own loader, if it has one (else the origin's).
    loader: Option<Loader>,
    /// The last payload read from Redis, and what it decoded to.
    read: Option<Payload>,
    decoded: Decoded,
    /// What this request computed, and its own TTL if it has one.
    computed: Option<Payload>,
    computed_ttl: Option<Duration>,
    /// This request's origin call failed with this error of the origin's.
    failed: Option<SharedError>,
    /// The payload a flight leader handed this follower, or its origin's
    /// error.
    shared: Option<Payload>,
    shared_error: Option<SharedError>,
    /// A read of this request met a row it cannot read, counted: the
    /// others it meets (its re-check's, its polls') are not counted again.
    decode_missed: bool,
    /// This request's origin call failed (with an error of the origin's
    /// or not).
    origin_failed: bool,
    /// Why this request failed without an error of the origin's: its
    /// origin call's timeout or panic, a failure mark read, or its flight
    /// leader's cause (the latest wins).
    cause: Option<FailCause>,
    /// This request lost the claim: when it sent the claim (wall-clock
    /// ms). A failure mark written since is its holder's.
    lost_at: Option<u64>,
}

impl Carried {
    /// The caller's answer for `ending` (`waited`: it polled for another
    /// holder's value), recorded on its span and counted.
    /// What the payload read decoded to goes with it (taken: a request is
    /// answered once).
    fn answer(&mut self, label: &obs::Label, ending: Ending, waited: bool) -> Answer {
        obs::record("ending", ending_name(ending, waited));
        match ending {
            Ending::Hit => {
                obs::count_cache(obs::HITS, label);
                if waited {
                    obs::count_cache(obs::WAITED, label);
                }
            }
            Ending::Stale => obs::count_cache(obs::STALE_SERVED, label),
            Ending::Timeout => obs::count_cache(obs::TIMEOUTS, label),
            _ => {}
        }
        let (value, decoded) = match ending {
            Ending::Hit | Ending::Stale => (self.read.clone(), std::mem::take(&mut self.decoded)),
            Ending::Computed => (self.computed.clone(), Decoded::nothing()),
            Ending::Shared => (self.shared.clone(), Decoded::nothing()),
            _ => (None, Decoded::nothing()),
        };
        let error = match ending {
            Ending::Error => self.failed.clone().or_else(|| self.shared_error.clone()),
            _ => None,
        };
        let cause = match ending {
            Ending::Error if error.is_none() => self.cause,
            _ => None,
        };
        Answer {
            ending,
            value,
            decoded,
            waited,
            error,
            cause,
        }
    }
}

/// One request: the machine, stepped until it finishes.
async fn run<O: Origin<K>, K: Key>(
    inner: Arc<Inner<O, K>>,
    key: K,
    answer: oneshot::Sender<Answer>,
    since: Option<Micros>,
    loader: Option<Loader>,
) {
    inner.counters.requests.fetch_add(1, Ordering::Relaxed);
    let _running = Running::start(&inner);
    let id = inner.next_id.fetch_add(1, Ordering::Relaxed);
    let m = ReadPath::new(
        &inner.strategy,
        key.machine_id(),
        id,
        since.unwrap_or_else(|| inner.now()),
    );
    let carried = Carried {
        loader,
        ..Carried::default()
    };
    drive(inner, key, m, None, carried, Some(answer)).await;
}

/// A request's machine stepped until it finishes: from its start, or (the
/// hit fast path) from `first`, the step its caller's future got to after
/// performing the first read itself, `carried` holding what that read
/// brought. `answer`: `None` once the caller has been answered.
async fn drive<O: Origin<K>, K: Key>(
    inner: Arc<Inner<O, K>>,
    key: K,
    mut m: ReadPath,
    mut first: Option<Step>,
    mut carried: Carried,
    mut answer: Option<oneshot::Sender<Answer>>,
) {
    let s = inner.strategy;
    let mut tokens: HashMap<u64, Token> = HashMap::new();
    // Held (never read) while the origin call runs: dropping it frees the
    // admission slot.
    let mut _permit: Option<OwnedSemaphorePermit> = None;
    let mut op: Option<Op> = None;
    // The pending operation is a Redis command.
    let mut op_is_command = false;
    // The request polled for another holder's value.
    let mut polled = false;
    let mut input = Input::Start;
    loop {
        let step = match first.take() {
            Some(step) => step,
            None => m.resume(&s, input, inner.now()),
        };
        match step {
            Step::Finish => return,
            Step::Respond { ending, .. } => {
                let answered = carried.answer(&inner.label, ending, polled);
                if let Some(a) = answer.take() {
                    let _ = a.send(answered);
                }
                input = Input::Ack;
                continue;
            }
            // Keep waiting for the operation already under way.
            Step::Wait => {}
            other => {
                if matches!(other, Step::Poll { .. }) && !polled {
                    polled = true;
                    obs::record("role", "waiter");
                }
                op_is_command = matches!(
                    other,
                    Step::CacheGet { .. }
                        | Step::Poll { .. }
                        | Step::Claim { .. }
                        | Step::Release { .. }
                        | Step::Unclaim { .. }
                        | Step::CacheSet { .. }
                        | Step::CacheSetNegative { .. }
                );
                op = Some(perform(
                    &inner,
                    &key,
                    other,
                    m.is_first_read(),
                    &mut tokens,
                    &carried,
                ));
            }
        }
        let Some(fut) = op.as_mut() else {
            // Nothing pending and nothing to do: a machine bug; answer.
            if let Some(a) = answer.take() {
                let _ = a.send(Answer::failed());
            }
            return;
        };
        let (got_input, got) = match m.deadline() {
            Some(d) => {
                tokio::select! {
                    r = fut => r,
                    _ = tokio::time::sleep_until(inner.at(d)) => {
                        if !m.work_outlives_caller() {
                            // Cancel the wait (a parked follower detaches).
                            // A Redis command already sent is not taken
                            // back: its client waits for it to its timeout
                            // (a hung one then counts as a Redis error and
                            // opens the breaker, as in the simulation), in a
                            // task of its own whose answer nobody reads.
                            if let Some(sent) = op.take().filter(|_| op_is_command) {
                                Running::start(&inner).spawn(async move {
                                    let _ = sent.await;
                                });
                            }
                        }
                        input = Input::DeadlinePassed;
                        continue;
                    }
                }
            }
            None => fut.await,
        };
        op = None;
        if let Input::Flight(FlightReply::Promoted(_)) = got_input {
            obs::record("role", "promoted");
        }
        // The test harness's holder faults (feature `harness`): its origin
        // says whether this request, holding a claim (`won`: just won),
        // dies here.
        #[cfg(feature = "harness")]
        if m.holds_claim() || matches!(got_input, Input::Claim(ClaimReply::Won { .. })) {
            let won = matches!(got_input, Input::Claim(ClaimReply::Won { .. }));
            if inner.origin.holder_dies(won) {
                // This holder dies. Its flight passes to its oldest
                // follower, its caller gets an error (if not answered yet),
                // and its claim is never released: it blocks every other
                // instance until its TTL.
                inner.counters.crashed.fetch_add(1, Ordering::Relaxed);
                if let Some(ticket) = m.leader_ticket() {
                    inner
                        .flights
                        .abandon(&(key.clone(), m.flight_key(&s)), ticket);
                }
                if let Some(a) = answer.take() {
                    let _ = a.send(Answer::failed());
                }
                return;
            }
        }
        match got {
            Got::Nothing => {}
            Got::Read(v, decoded, undecodable, mark) => {
                decode_miss(&inner, &key, undecodable, &mut carried.decode_missed);
                if mark.is_some() {
                    carried.cause = mark;
                }
                if v.is_some() {
                    carried.read = v;
                    carried.decoded = decoded;
                }
            }
            Got::Computed(v, ttl) => {
                carried.computed = Some(v);
                carried.computed_ttl = ttl;
            }
            Got::Failed(e) => {
                match e {
                    Ok(e) => carried.failed = Some(e),
                    Err(cause) => carried.cause = Some(cause),
                }
                carried.origin_failed = true;
            }
            Got::Lost(at) => carried.lost_at = Some(at),
            Got::Shared(v, e, cause) => {
                carried.shared = v;
                carried.shared_error = e;
                if cause.is_some() {
                    carried.cause = cause;
                }
            }
            Got::Permit(p) => _permit = Some(p),
        }
        if matches!(got_input, Input::Origin(_)) {
            // The origin call is over: its permit goes back.
            _permit = None;
        }
        input = got_input;
    }
}

/// An ending's name, as spans record it: [`Source`](crate::Source)'s for
/// a value (`waited`: a hit after polling for another holder's value is
/// `Waited`).
fn ending_name(ending: Ending, waited: bool) -> &'static str {
    match ending {
        Ending::Hit if waited => "Waited",
        Ending::Hit => "Hit",
        Ending::Stale => "Stale",
        Ending::Computed => "Computed",
        Ending::Shared => "Shared",
        Ending::Degraded => "Degraded",
        Ending::Error => "Error",
        Ending::Timeout => "Timeout",
    }
}

/// The machine's read of the value ([`Step::CacheGet`]) for the request's
/// own key: this instance's local copy while it lives, else a `GET` of
/// the value row, whose payload `decode` reads once (one it cannot read
/// is a miss). With the payload and what `decode` read of it, if
/// anything: a local copy is not read again (it was when it was kept).
fn read_op<O: Origin<K>, K: Key, T>(
    inner: Arc<Inner<O, K>>,
    mut con: Link,
    request_key: &K,
    key: u32,
    first_read: bool,
    decode: Decode<O, T>,
) -> impl Future<Output = Reading<T>> + Send + 'static
where
    T: Send + 'static,
{
    let value_key = inner.value_key(&request_key.name());
    let copies = inner.local.on();
    async move {
        let copy = copies
            .then(|| inner.local.get(&value_key, inner.now()))
            .flatten();
        if let Some((value, bytes)) = copy {
            inner.counters.local_hits.fetch_add(1, Ordering::Relaxed);
            if first_read {
                obs::count_cache(obs::LOCAL_HITS, &inner.label);
            }
            return Reading {
                bytes: Some(bytes),
                ..Reading::of(CacheReply::Fresh(value))
            };
        }
        // What a copy of the reply is checked against (`None`: none kept).
        let epoch = copies
            .then(|| inner.local.before_read(&value_key))
            .flatten();
        let reading = read_value(&inner, &mut con, &value_key, key, decode).await;
        if let (Some(epoch), Some(b)) = (epoch, &reading.bytes) {
            if let CacheReply::Fresh(v) | CacheReply::FreshUntil { value: v, .. } = reading.reply {
                let (now, fresh_for) = (inner.now(), reading.fresh_for);
                inner
                    .local
                    .keep(&value_key, epoch, (v, b.clone()), now, fresh_for);
            }
        }
        if first_read && reading.reply.is_miss() {
            inner.counters.misses.fetch_add(1, Ordering::Relaxed);
            obs::count_cache(obs::MISSES, &inner.label);
        }
        reading
    }
}

/// Performs one step: what the machine asked for, nothing more. Each kind
/// of step has its own function below.
fn perform<O: Origin<K>, K: Key>(
    inner: &Arc<Inner<O, K>>,
    request_key: &K,
    step: Step,
    first_read: bool,
    tokens: &mut HashMap<u64, Token>,
    carried: &Carried,
) -> Op {
    let inner = inner.clone();
    let con = inner.con.clone();
    // Every step is performed for the request's own key: the machine's
    // `u32` is only relayed back to it.
    let k = request_key.name().into_owned();
    match step {
        Step::CacheGet { key } => perform_cache_get(inner, con, request_key, key, first_read),
        Step::Poll { key } => perform_poll(inner, con, k, key, carried),
        Step::JoinFlight { key: fk } => perform_join_flight(&inner, request_key, fk),
        Step::TryLead { key: fk } => perform_try_lead(&inner, request_key, fk),
        Step::SettleFlight {
            key: fk,
            ticket,
            outcome,
        } => perform_settle_flight(&inner, request_key, fk, ticket, outcome, carried),
        Step::AbandonFlight { key: fk, ticket } => {
            perform_abandon_flight(&inner, request_key, fk, ticket)
        }
        Step::Claim { token, ttl, .. } => {
            // The machine's token names the attempt; Redis gets an
            // unguessable one in its place.
            let secret = tokens.entry(token.0).or_default().clone();
            perform_claim(inner, con, k, secret, ttl)
        }
        Step::Release { token, .. } => {
            let secret = tokens.get(&token.0).cloned();
            perform_release(inner, con, k, secret, carried)
        }
        // This driver answers a claim that timed out with `Error`, having
        // released it itself (`release_ambiguous`), so the machine does
        // not ask for this; were it asked, it is done the same way.
        Step::Unclaim { token, .. } => {
            let secret = tokens.get(&token.0).cloned();
            perform_unclaim(inner, con, k, secret)
        }
        Step::Admit { max_wait } => perform_admit(inner, max_wait),
        Step::Recompute { key, timeout } => {
            perform_recompute(inner, request_key, key, timeout, carried)
        }
        Step::CacheSet {
            key,
            value,
            delta,
            fence,
        } => perform_cache_set(inner, con, k, key, (value, delta, fence), carried),
        Step::CacheSetNegative { ttl, .. } => perform_cache_set_negative(inner, con, k, ttl),
        Step::Sleep { until } => perform_sleep(&inner, until),
        // Handled by the loop.
        Step::Respond { .. } | Step::Wait | Step::Finish => ready(Input::Ack),
    }
}

/// [`Step::CacheGet`]: the value's read ([`read_op`]).
fn perform_cache_get<O: Origin<K>, K: Key>(
    inner: Arc<Inner<O, K>>,
    con: Link,
    request_key: &K,
    key: u32,
    first_read: bool,
) -> Op {
    let read = read_op(inner, con, request_key, key, first_read, decoded_by::<O, K>);
    Box::pin(async move {
        let r = read.await;
        let mark = remembered(&r.reply);
        let got = Got::Read(r.bytes, r.read.unwrap_or_default(), r.undecodable, mark);
        (Input::Cache(r.reply), got)
    })
}

/// [`Step::Poll`]: a waiting loser's look at the value, the claim and
/// its holder's failure mark.
fn perform_poll<O: Origin<K>, K: Key>(
    inner: Arc<Inner<O, K>>,
    mut con: Link,
    k: String,
    key: u32,
    carried: &Carried,
) -> Op {
    // Only a request that lost the claim looks for its holder's
    // failure.
    let lost_at = carried.lost_at.filter(|_| inner.share_failures);
    Box::pin(async move {
        // One transaction: the value, the claim and a failure mark
        // seen at one instant (two separate reads could see "no value"
        // before a holder's write and "no claim" after its release,
        // and claim for nothing).
        let (value_key, lock_key) = (inner.value_key(&k), inner.lock_key(&k));
        let failed_key = inner.failed_key(&k);
        let mut pipe = redis::pipe();
        pipe.atomic()
            .cmd("GET")
            .arg(&value_key)
            .cmd("EXISTS")
            .arg(&lock_key)
            .cmd("GET")
            .arg(&failed_key);
        let r = async {
            match pipe
                .query_async::<(Option<Vec<u8>>, bool, Option<u64>)>(&mut con)
                .await
            {
                // A row of another type fails the transaction: it is
                // no value, and the claim is read alone.
                Err(e) if foreign_type(&e) => {
                    let held = redis::cmd("EXISTS")
                        .arg(&lock_key)
                        .query_async::<bool>(&mut con)
                        .await?;
                    Ok((Some(Vec::new()), held, None))
                }
                r => r,
            }
        };
        match bounded(&inner, r).await {
            Ok((row, held, mark)) => {
                let r = reply_of(&inner, key, row, decoded_by::<O, K>, wall_ms());
                let claim_free = !held;
                // The holder this request waited on failed since it
                // lost the claim: its failure, as a negative mark says
                // it (the stale value, if servable, else the error).
                let theirs = matches!((mark, lost_at), (Some(m), Some(t)) if m >= t);
                let (cache, cause) = match r.reply {
                    CacheReply::Stale(v) if theirs => (CacheReply::Negative(Some(v)), None),
                    CacheReply::Miss if theirs => {
                        (CacheReply::Negative(None), Some(FailCause::OtherInstance))
                    }
                    reply => (reply, remembered(&reply)),
                };
                let got = Got::Read(r.bytes, r.read.unwrap_or_default(), r.undecodable, cause);
                (Input::Polled { cache, claim_free }, got)
            }
            // A failed or timed-out poll: the core's read path applies
            // the Redis error policy to it, as to a failed claim (open,
            // it claims; closed, it keeps waiting). Whether the claim
            // is held is not known.
            Err(_) => (
                Input::Polled {
                    cache: CacheReply::Error,
                    claim_free: false,
                },
                Got::Nothing,
            ),
        }
    })
}

/// [`Step::JoinFlight`]: lead the key's flight in this process, or follow it.
fn perform_join_flight<O: Origin<K>, K: Key>(
    inner: &Inner<O, K>,
    request_key: &K,
    fk: FlightKey,
) -> Op {
    match Flights::join(inner.flights.clone(), (request_key.clone(), fk)) {
        Joined::Lead(t, _) => {
            obs::count_cache(obs::FLIGHTS, &inner.label);
            obs::record("role", "leader");
            ready(Input::Flight(FlightReply::Lead(t)))
        }
        Joined::Remembered(o) => ready(Input::Flight(FlightReply::Shared(o))),
        Joined::Follow(mut follower) => {
            obs::count_cache(obs::FOLLOWERS, &inner.label);
            obs::record("role", "follower");
            // Dropped before its wait ends (the request's deadline, or
            // its task dropped), the follower leaves the flight, or
            // hands it on if it was promoted meanwhile.
            Box::pin(async move {
                match follower.wait().await {
                    Woken::Settled((o, payload, error, cause)) => (
                        Input::Flight(FlightReply::Shared(o)),
                        Got::Shared(payload, error, cause),
                    ),
                    Woken::Promoted(t) => (
                        Input::Flight(FlightReply::Promoted(t)),
                        Got::Shared(None, None, None),
                    ),
                }
            })
        }
    }
}

/// [`Step::TryLead`]: lead the key's flight if nobody does.
fn perform_try_lead<O: Origin<K>, K: Key>(
    inner: &Inner<O, K>,
    request_key: &K,
    fk: FlightKey,
) -> Op {
    let reply = match inner.flights.try_lead((request_key.clone(), fk)) {
        Some(t) => {
            obs::count_cache(obs::FLIGHTS, &inner.label);
            obs::record("role", "leader");
            FlightReply::Lead(t)
        }
        None => FlightReply::Busy,
    };
    ready(Input::Flight(reply))
}

/// [`Step::SettleFlight`]: the flight's outcome, with its payload or
/// error, to every follower.
fn perform_settle_flight<O: Origin<K>, K: Key>(
    inner: &Inner<O, K>,
    request_key: &K,
    fk: FlightKey,
    ticket: LeaderTicket,
    outcome: Outcome,
    carried: &Carried,
) -> Op {
    // The followers' payload: what this leader computed, or read
    // back when its re-check found the value already there. It
    // travels with the settle; nothing keeps it after.
    let payload = match outcome {
        Outcome::Fresh(_) => carried.computed.as_ref().or(carried.read.as_ref()).cloned(),
        _ => None,
    };
    let error = carried.failed.clone();
    let cause = match outcome {
        Outcome::Failed(_) if error.is_none() => carried.cause,
        _ => None,
    };
    let fk = (request_key.clone(), fk);
    inner
        .flights
        .settle(&fk, ticket, outcome, (outcome, payload, error, cause));
    ready(Input::Ack)
}

/// [`Step::AbandonFlight`]: the leader leaves before any work started.
fn perform_abandon_flight<O: Origin<K>, K: Key>(
    inner: &Inner<O, K>,
    request_key: &K,
    fk: FlightKey,
    ticket: LeaderTicket,
) -> Op {
    inner.flights.abandon(&(request_key.clone(), fk), ticket);
    ready(Input::Ack)
}

/// [`Step::Claim`]: the fenced claim, released by its token if its
/// reply never came.
fn perform_claim<O: Origin<K>, K: Key>(
    inner: Arc<Inner<O, K>>,
    mut con: Link,
    k: String,
    secret: Token,
    ttl: Micros,
) -> Op {
    inner
        .counters
        .claim_attempts
        .fetch_add(1, Ordering::Relaxed);
    let script = inner.claim.clone();
    // The fencing counter lives at least until a value written
    // under this claim expires: the claim, then the longest a
    // value is kept.
    let fence_life = (ttl / 1000).max(1) + inner.longest_keep_ms();
    Box::pin(async move {
        let at = wall_ms();
        let (r, sent): (Result<u64, _>, bool) = bounded_sent(
            &inner,
            script
                .key(inner.lock_key(&k))
                .key(inner.fence_key(&k))
                .key(inner.value_key(&k))
                .arg(secret.as_str())
                .arg((ttl / 1000).max(1))
                .arg(fence_life)
                .invoke_async(&mut con),
        )
        .await;
        if let (Err(e), true) = (&r, sent) {
            let (limit, now) = (&inner.warnings.unanswered, inner.now());
            obs::unanswered_claim(limit, now, &inner.prefix, &k, e);
            release_ambiguous(&inner, con, k, secret).await;
        }
        let (reply, got) = match r {
            Ok(0) => {
                obs::count_cache(obs::CLAIM_LOSSES, &inner.label);
                (ClaimReply::Held, Got::Lost(at))
            }
            Ok(fence) => {
                obs::count_cache(obs::CLAIM_WINS, &inner.label);
                inner.counters.claim_wins.fetch_add(1, Ordering::Relaxed);
                (ClaimReply::Won { fence }, Got::Nothing)
            }
            Err(_) => (ClaimReply::Error, Got::Nothing),
        };
        (Input::Claim(reply), got)
    })
}

/// [`Step::Release`]: the holder's failure mark if its origin failed,
/// then its release.
fn perform_release<O: Origin<K>, K: Key>(
    inner: Arc<Inner<O, K>>,
    mut con: Link,
    k: String,
    secret: Option<Token>,
    carried: &Carried,
) -> Op {
    inner.counters.releases.fetch_add(1, Ordering::Relaxed);
    let failed = carried.origin_failed && inner.share_failures;
    Box::pin(async move {
        if failed {
            mark_failed(&inner, &mut con, &k).await;
        }
        if let Some(secret) = secret {
            release_claim(&inner, &mut con, &k, &secret).await;
        }
        (Input::Ack, Got::Nothing)
    })
}

/// [`Step::Unclaim`]: the release of a claim whose reply timed out.
fn perform_unclaim<O: Origin<K>, K: Key>(
    inner: Arc<Inner<O, K>>,
    con: Link,
    k: String,
    secret: Option<Token>,
) -> Op {
    Box::pin(async move {
        if let Some(secret) = secret {
            release_ambiguous(&inner, con, k, secret).await;
        }
        (Input::Ack, Got::Nothing)
    })
}

/// [`Step::Admit`]: a slot for an origin call, within `max_wait`.
fn perform_admit<O: Origin<K>, K: Key>(inner: Arc<Inner<O, K>>, max_wait: Micros) -> Op {
    match &inner.admission {
        None => ready(Input::Admitted),
        Some(sem) => {
            let sem = sem.clone();
            Box::pin(async move {
                match tokio::time::timeout(Duration::from_micros(max_wait), sem.acquire_owned())
                    .await
                {
                    Ok(Ok(p)) => (Input::Admitted, Got::Permit(p)),
                    _ => {
                        inner
                            .counters
                            .admission_shed
                            .fetch_add(1, Ordering::Relaxed);
                        (Input::Shed, Got::Nothing)
                    }
                }
            })
        }
    }
}

/// [`Step::Recompute`]: the origin call (or the request's loader), bounded,
/// a panic caught as its failure.
fn perform_recompute<O: Origin<K>, K: Key>(
    inner: Arc<Inner<O, K>>,
    request_key: &K,
    key: u32,
    timeout: Option<Micros>,
    carried: &Carried,
) -> Op {
    inner.counters.recomputes.fetch_add(1, Ordering::Relaxed);
    // The admission permit, if any, stays with this request until
    // the call's answer comes back (see `run`).
    // A panic in the origin, before its future exists or while it
    // is polled, is caught and answered as the origin's failure:
    // the machine settles the flight for every follower and
    // releases the claim, as for any error.
    let loader = carried.loader.clone();
    // `Err(Err(cause))`: a failure without an error of the origin's (a
    // panic, a timeout).
    type Call = Pin<Box<dyn Future<Output = Result<Fill, Result<BoxError, FailCause>>> + Send>>;
    let call: Call = match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| match loader {
        Some(loader) => loader(),
        None => inner.origin.fill(request_key.clone()),
    })) {
        Ok(call) => Box::pin(async move {
            CatchUnwind(call)
                .await
                .map_or(Err(Err(FailCause::OriginPanicked)), |r| r.map_err(Ok))
        }),
        Err(_) => Box::pin(async { Err(Err(FailCause::OriginPanicked)) }),
    };
    // The value's version is when its computation started: a
    // recompute that started earlier read older data, whenever it
    // ends.
    let version = (wall_ms() & 0xffff_ffff) as u32;
    Box::pin(async move {
        obs::count_cache(obs::ORIGIN_CALLS, &inner.label);
        let started = Instant::now();
        // Only an error the origin returned is kept for the
        // callers; a timeout or a panic is a failure without one.
        let r = match timeout {
            Some(t) => tokio::time::timeout(Duration::from_micros(t), call)
                .await
                .unwrap_or(Err(Err(FailCause::OriginTimeout))),
            None => call.await,
        };
        obs::cache_seconds(obs::ORIGIN_SECONDS, &inner.label, started.elapsed());
        if r.is_err() {
            obs::count_cache(obs::ORIGIN_ERRORS, &inner.label);
        }
        match r {
            Ok(fill) => (
                Input::Origin(Ok(Value::fresh(key, version))),
                Got::Computed(Arc::new(fill.payload), fill.ttl),
            ),
            Err(error) => (
                Input::Origin(Err(stampede::flight::Failure::Origin)),
                Got::Failed(error.map(SharedError::from)),
            ),
        }
    })
}

/// [`Step::CacheSet`]: the computed value's write; refused as older, the
/// newer value read back.
fn perform_cache_set<O: Origin<K>, K: Key>(
    inner: Arc<Inner<O, K>>,
    mut con: Link,
    k: String,
    key: u32,
    (value, delta, fence): (Value, Micros, Option<u64>),
    carried: &Carried,
) -> Op {
    let bytes = carried.computed.clone().unwrap_or_default();
    let ttl = carried.computed_ttl;
    Box::pin(async move {
        let written = write_value(
            &inner,
            &mut con,
            &k,
            &bytes,
            fence.unwrap_or(0),
            value.version,
            delta,
            ttl,
        )
        .await;
        // Counted as the simulation counts them: a write that
        // landed, or one the fence refused; a failed one is neither.
        match written {
            Ok(0) => {
                inner
                    .counters
                    .writes_refused
                    .fetch_add(1, Ordering::Relaxed);
                obs::count_cache(obs::WRITES_REFUSED, &inner.label);
                // Refused as older: a newer holder has written. Its
                // value, read back, is what this request's caller
                // and its flight's followers get (this one is
                // older); if it cannot be read, they get this one.
                let value_key = inner.value_key(&k);
                let Reading {
                    reply,
                    bytes: newer,
                    ..
                } = read_value(&inner, &mut con, &value_key, key, decoded_by::<O, K>).await;
                if let (CacheReply::Fresh(_) | CacheReply::FreshUntil { .. }, Some(newer)) =
                    (reply, newer)
                {
                    return (Input::Ack, Got::Computed(newer, None));
                }
            }
            Ok(_) => {
                inner
                    .counters
                    .values_written
                    .fetch_add(1, Ordering::Relaxed);
            }
            Err(_) => {}
        }
        (Input::Ack, Got::Nothing)
    })
}

/// [`Step::CacheSetNegative`]: the failure mark in the value's header.
fn perform_cache_set_negative<O: Origin<K>, K: Key>(
    inner: Arc<Inner<O, K>>,
    mut con: Link,
    k: String,
    ttl: Micros,
) -> Op {
    Box::pin(async move {
        let lasts = (ttl / 1000).max(1);
        let _ = bounded(
            &inner,
            inner
                .negative
                .key(inner.value_key(&k))
                .arg(wall_ms() + lasts)
                .arg(lasts)
                .invoke_async::<i64>(&mut con),
        )
        .await;
        (Input::Ack, Got::Nothing)
    })
}

/// [`Step::Sleep`]: wake at `until`.
fn perform_sleep<O: Origin<K>, K: Key>(inner: &Inner<O, K>, until: Micros) -> Op {
    let at = inner.at(until);
    Box::pin(async move {
        tokio::time::sleep_until(at).await;
        (Input::Woke, Got::Nothing)
    })
}

/// How long any one Redis command may take before the driver treats it as
/// failed. Without a bound, a Redis that went away leaves commands waiting
/// on reconnection, and a fail-open refresh would freeze until every
/// caller's deadline: the outage would decide what fail-open is for.
pub const REDIS_TIMEOUT: Duration = Duration::from_millis(100);

/// A Redis command bounded by the client's timeout ([`REDIS_TIMEOUT`]
/// unless the scenario says `redis_timeout_ms`); a late answer is an
/// error. Every error is counted.
///
/// The breaker ([`crate::breaker`]; `redis_breaker_ms`): once a command
/// has failed or timed out, the instance sends nothing for that long (from
/// when the failure is seen; each failure seen extends it) and every
/// command in that time fails at once, unsent, counted in `redis_skipped`.
/// Then the cache's breaker lets one command through, the probe, and the
/// others keep failing at once until it is answered: an answer closes the
/// breaker, a failure opens it for another period. (The harness's, as the
/// simulation's, lets every command through the moment the period ends.)
async fn bounded<O, K, T>(
    inner: &Inner<O, K>,
    f: impl Future<Output = redis::RedisResult<T>>,
) -> redis::RedisResult<T> {
    bounded_sent(inner, f).await.0
}

/// As [`bounded`], also saying whether the command was sent (false: the
/// breaker was open, nothing left the instance).
async fn bounded_sent<O, K, T>(
    inner: &Inner<O, K>,
    f: impl Future<Output = redis::RedisResult<T>>,
) -> (redis::RedisResult<T>, bool) {
    // Closed: one load, no clock read.
    match inner.breaker.admit(|| inner.now()) {
        Admit::Send => (unbroken(inner, f).await, true),
        Admit::Skip => {
            inner.counters.redis_skipped.fetch_add(1, Ordering::Relaxed);
            let skipped = redis::RedisError::from((
                redis::ErrorKind::IoError,
                "the Redis breaker is open: not sent",
            ));
            (Err(skipped), false)
        }
        Admit::SendClosed => {
            breaker_turned(inner, Turned::Closed);
            (unbroken(inner, f).await, true)
        }
        Admit::Probe(word) => {
            // Dropped before its answer (its caller left), the probe
            // tells nothing, and the next command is the probe.
            struct Out<'a>(&'a Breaker, u64);
            impl Drop for Out<'_> {
                fn drop(&mut self) {
                    self.0.probe_dropped(self.1);
                }
            }
            let out = Out(&inner.breaker, word);
            let r = unbroken(inner, f).await;
            std::mem::forget(out);
            if r.is_ok() {
                breaker_turned(inner, inner.breaker.probed(word));
            }
            (r, true)
        }
    }
}

/// The breaker's gauge ([`obs::BREAKER_OPEN`]), set on its transitions.
fn breaker_turned<O, K>(inner: &Inner<O, K>, turned: Turned) {
    match turned {
        Turned::Same => {}
        Turned::Opened => obs::cache_gauge(obs::BREAKER_OPEN, &inner.label, 1.0),
        Turned::Closed => obs::cache_gauge(obs::BREAKER_OPEN, &inner.label, 0.0),
    }
}

/// As [`bounded`], sent whether the breaker is open or not (a command that
/// must go out: a holder's release); its failure is counted and opens the
/// breaker as any command's does.
async fn unbroken<O, K, T>(
    inner: &Inner<O, K>,
    f: impl Future<Output = redis::RedisResult<T>>,
) -> redis::RedisResult<T> {
    let r = within(inner.redis_timeout, f).await;
    if inner.own_connection {
        own_connection(inner, r.as_ref().err());
    }
    if let Err(e) = &r {
        obs::redis_error(&inner.warnings.redis, inner.now(), &inner.prefix, e);
        obs::count_cache(obs::REDIS_ERRORS, &inner.label);
        inner.counters.redis_errors.fetch_add(1, Ordering::Relaxed);
        breaker_turned(inner, inner.breaker.failed(inner.now()));
    }
    r
}

/// With fenced writes, a fencing number of its own for a write that holds
/// no claim (a `set`, a delete's tombstone): the claim script with no
/// token, the number alone, newer than every claim taken so far. 0 without
/// fenced writes.
async fn own_fence<O, K>(inner: &Inner<O, K>, con: &mut Link, k: &str) -> redis::RedisResult<u64> {
    if !inner.strategy.fenced_writes {
        return Ok(0);
    }
    let mut next = inner.claim.key(inner.lock_key(k));
    next.key(inner.fence_key(k))
        .key(inner.value_key(k))
        .arg("")
        .arg(0)
        .arg(inner.longest_keep_ms().max(1));
    bounded(inner, next.invoke_async::<u64>(con)).await
}

/// How long every command on the service's own connection may fail before
/// the cache says so (a `WARN`, feature `tracing`).
pub const OWN_CONNECTION_DOWN: Duration = Duration::from_secs(5);

/// Watches the service's own connection: once every command sent has
/// failed for [`OWN_CONNECTION_DOWN`], a rate-limited `WARN` says its
/// reconnection is the service's (a manager made with redis-rs's defaults
/// can stay away for minutes after a restart).
fn own_connection<O, K>(inner: &Inner<O, K>, failed: Option<&redis::RedisError>) {
    let since = inner.failing_since.load(Ordering::Relaxed);
    let Some(e) = failed else {
        if since != 0 {
            inner.failing_since.store(0, Ordering::Relaxed);
        }
        return;
    };
    let now = inner.now().max(1);
    if since == 0 {
        let _ = inner
            .failing_since
            .compare_exchange(0, now, Ordering::Relaxed, Ordering::Relaxed);
    } else if now - since.min(now) >= OWN_CONNECTION_DOWN.as_micros() as Micros {
        let (limit, for_ms) = (&inner.warnings.own_connection, (now - since) / 1000);
        obs::own_connection_down(limit, now, &inner.prefix, for_ms, e);
    }
}

/// Writes `payload` as `k`'s value, fresh for `ttl` (the value TTL if
/// `None`; jittered) and then stale for the stale window, under `fence` (0:
/// unfenced), bounded as every command is: 1 when written, 0 when refused
/// as older.
#[allow(clippy::too_many_arguments)]
async fn write_value<O, K>(
    inner: &Inner<O, K>,
    con: &mut Link,
    k: &str,
    payload: &[u8],
    fence: u64,
    version: u32,
    delta: Micros,
    ttl: Option<Duration>,
) -> redis::RedisResult<i64> {
    let now = wall_ms();
    let ttl = ttl.unwrap_or(inner.value_ttl).as_millis() as f64;
    let ttl = if inner.jitter > 0.0 {
        ttl * (1.0 - inner.jitter + 2.0 * inner.jitter * inner.unit())
    } else {
        ttl
    };
    let fresh = now + (ttl as u64).max(1);
    let stale = fresh + inner.stale.as_millis() as u64;
    let keep = (stale - now).max(1);
    bounded(
        inner,
        inner
            .write_fenced
            .key(inner.value_key(k))
            .key(inner.fence_key(k))
            .arg(payload)
            .arg(fence)
            .arg(version)
            .arg(fresh)
            .arg(stale)
            .arg(delta)
            .arg(keep)
            .arg(u8::from(inner.newer_wins))
            .invoke_async::<i64>(con),
    )
    .await
}

/// `f` bounded by `timeout`; a late answer is an error.
async fn within<T>(
    timeout: Duration,
    f: impl Future<Output = redis::RedisResult<T>>,
) -> redis::RedisResult<T> {
    tokio::time::timeout(timeout, f).await.unwrap_or_else(|_| {
        Err(redis::RedisError::from(std::io::Error::new(
            std::io::ErrorKind::TimedOut,
            "Redis did not answer in time",
        )))
    })
}

/// The compare-and-delete release of `secret`'s claim on `k`, counted by
/// what it found. It bypasses the breaker, as [`release_ambiguous`] does:
/// a holder's write that timed out opens the breaker, and a release the
/// breaker refused would leave the key locked on every instance for the
/// claim's TTL. A Redis error is counted as such (through [`unbroken`])
/// and nothing else: the claim then expires at its TTL.
async fn release_claim<O, K>(inner: &Inner<O, K>, con: &mut Link, k: &str, secret: &Token) {
    let reply = unbroken(
        inner,
        inner
            .release
            .key(inner.lock_key(k))
            .arg(secret.as_str())
            .invoke_async::<i64>(con),
    )
    .await;
    if let Ok(reply) = reply {
        count_release(inner, Release::of_reply(reply));
    }
}

/// A claim holder's origin failed: `failed:{k}` says when (wall-clock ms),
/// written before its release, so that a request waiting on the claim
/// sees the failure by the time it sees the claim free. It lives as long
/// as a request may wait (its deadline, or the claim TTL without one, and
/// at least two polls); a request that lost a claim after it was written
/// waits on another holder, and does not read it as its own.
async fn mark_failed<O, K>(inner: &Inner<O, K>, con: &mut Link, k: &str) {
    let s = &inner.strategy;
    let lives = s.deadline.unwrap_or(s.claim_ttl).max(2 * s.poll) / 1000;
    let mut set = redis::cmd("SET");
    set.arg(inner.failed_key(k))
        .arg(wall_ms())
        .arg("PX")
        .arg(lives.max(1));
    let _ = bounded(inner, set.query_async::<()>(con)).await;
}

fn count_release<O, K>(inner: &Inner<O, K>, found: Release) {
    let (counter, outcome) = match found {
        Release::Released => (&inner.counters.released, "released"),
        Release::Expired => (&inner.counters.release_expired, "expired"),
        Release::Taken => (&inner.counters.release_taken, "taken"),
    };
    counter.fetch_add(1, Ordering::Relaxed);
    obs::count_cache_outcome(obs::RELEASES, &inner.label, outcome);
}

/// A claim whose reply never came may have been taken all the same (a
/// paused Redis runs it when it resumes; the connection kept it): release
/// it by its token. The release is put on the connection now, after the
/// claim (one connection runs its commands in the order sent), before the
/// request goes on, so before its flight settles here; its answer is left
/// to a task of its own, which does not depend on the request or its
/// caller. It bypasses the breaker (it cleans up a command already sent)
/// and its failure is not counted as a Redis error: at worst the claim
/// expires at its TTL, as before.
async fn release_ambiguous<O, K>(inner: &Arc<Inner<O, K>>, con: Link, k: String, secret: Token)
where
    O: Send + Sync + 'static,
    K: Send + Sync + 'static,
{
    inner
        .counters
        .ambiguous_claims
        .fetch_add(1, Ordering::Relaxed);
    obs::count_cache(obs::AMBIGUOUS_CLAIMS, &inner.label);
    let task_inner = inner.clone();
    let mut release = Box::pin(async move {
        let mut con = con;
        let reply = within(
            task_inner.redis_timeout,
            task_inner
                .release
                .key(task_inner.lock_key(&k))
                .arg(secret.as_str())
                .invoke_async::<i64>(&mut con),
        )
        .await;
        if let Ok(reply) = reply {
            count_release(&task_inner, Release::of_reply(reply));
        }
    });
    // The first poll sends the command (on a connection that is up; one
    // being re-established sends it once it is).
    let done = std::future::poll_fn(|cx| Poll::Ready(release.as_mut().poll(cx).is_ready())).await;
    if !done {
        Running::start(inner).spawn(release);
    }
}

/// How a read tells a payload it can serve from one it cannot (another
/// writer's, or another schema's in a rolling deploy: a miss), as the
/// caller reads it: `Some` of the value read. The task's reads ask the
/// origin ([`Origin::decode`]: the value kept type-erased, with its
/// payload, for the answer); a cache's first read decodes the value its
/// caller gets as it is (a hit's answer needs nothing boxed). Either way
/// an answer's payload is decoded once.
type Decode<O, T> = fn(&O, &[u8]) -> Result<T, String>;

/// [`Origin::decode`] as a [`Decode`].
fn decoded_by<O: Origin<K>, K>(origin: &O, payload: &[u8]) -> Result<Decoded, String> {
    origin.decode(payload)
}

/// Reads the row `value_key` with one `GET` and says what the machine
/// should hear, with the payload and what `decode` read of it: the
/// header says at once whether the value is fresh, stale or gone, and the
/// payload is decoded once.
async fn read_value<O, K, T>(
    inner: &Inner<O, K>,
    con: &mut Link,
    value_key: &str,
    key: u32,
    decode: Decode<O, T>,
) -> Reading<T> {
    let mut get = redis::cmd("GET");
    get.arg(value_key);
    let read = async { stored_row(get.query_async::<Option<Vec<u8>>>(con).await) };
    match bounded(inner, read).await {
        Err(_) => Reading::of(CacheReply::Error),
        Ok(row) => reply_of(inner, key, row, decode, wall_ms()),
    }
}

/// What a read of a value row found, for the machine and the caller.
struct Reading<T> {
    /// What the machine hears.
    reply: CacheReply,
    /// The payload, if the row holds one that can be served.
    bytes: Option<Payload>,
    /// What the read's `decode` made of the payload.
    read: Option<T>,
    /// How long the value stays fresh from the read (µs; 0: not fresh).
    fresh_for: Micros,
    /// The row held something the service cannot read (a decode miss),
    /// and why.
    undecodable: Option<String>,
}

impl<T> Reading<T> {
    /// `reply`, with no payload.
    fn of(reply: CacheReply) -> Reading<T> {
        Reading {
            reply,
            bytes: None,
            read: None,
            fresh_for: 0,
            undecodable: None,
        }
    }
}

/// What a stored row means at `now` (wall-clock ms): fresh, stale, a
/// negative mark (with the stale value under it, if servable) or a miss;
/// with the payload, and what `decode` read of it (a payload it cannot
/// read is a miss, and so is a row not in the layout).
/// With XFetch on, a fresh read carries its expiry (on the driver's
/// clock), the stored recompute delta and a draw, for the machine to decide
/// on an early refresh.
fn reply_of<O, K, T>(
    inner: &Inner<O, K>,
    key: u32,
    row: Option<Vec<u8>>,
    decode: Decode<O, T>,
    now: u64,
) -> Reading<T> {
    let Some(mut row) = row else {
        return Reading::of(CacheReply::Miss);
    };
    let Some((header, at)) = Header::parse(&row) else {
        return Reading {
            undecodable: Some("the row is not in this version's layout".into()),
            ..Reading::of(CacheReply::Miss)
        };
    };
    let mut version = header.version;
    let mut read = None;
    let mut undecodable = None;
    // Nothing to serve past the stale window (a delete's tombstone has
    // none at all): not decoded.
    if now >= header.fresh_until.max(header.stale_until) {
        version = None;
    }
    if version.is_some() {
        match decode(&inner.origin, &row[at..]) {
            Ok(v) => read = Some(v),
            // A payload the service cannot read is no value at all: a miss.
            Err(e) => {
                undecodable = Some(e);
                version = None;
            }
        }
    }
    let bytes = version.map(|_| {
        row.drain(..at);
        Arc::new(row)
    });
    let value = version.map(|v| Value::fresh(key, v));
    let fresh_ok = now < header.fresh_until;
    let stale_ok = now < header.stale_until;
    let fresh_for = header.fresh_until.saturating_sub(now).saturating_mul(1000);
    let reply = match (value, fresh_ok, stale_ok, now < header.negative_until) {
        (Some(v), true, _, _) if inner.xfetch => CacheReply::FreshUntil {
            value: v,
            expires_at: inner.now().saturating_add(fresh_for),
            delta: header.delta,
            draw: (inner.unit() * f64::from(u32::MAX)) as u32,
        },
        (Some(v), true, _, _) => CacheReply::Fresh(v),
        (v, _, stale_ok, true) => CacheReply::Negative(v.filter(|_| stale_ok)),
        (Some(v), false, true, false) => CacheReply::Stale(v),
        _ => {
            return Reading {
                undecodable,
                ..Reading::of(CacheReply::Miss)
            }
        }
    };
    Reading {
        reply,
        bytes,
        read,
        fresh_for,
        undecodable,
    }
}

/// The cause a read's reply gives a request that ends in an error there: a
/// negative mark with nothing servable under it is a failure remembered.
fn remembered(reply: &CacheReply) -> Option<FailCause> {
    matches!(reply, CacheReply::Negative(None)).then_some(FailCause::Remembered)
}

/// A stored row that is not a value the service can read, counted once
/// per request (`counted`: this request's was already), with a warning
/// naming the key and why.
fn decode_miss<O, K: Key>(inner: &Inner<O, K>, key: &K, why: Option<String>, counted: &mut bool) {
    let Some(why) = why else { return };
    if std::mem::replace(counted, true) {
        return;
    }
    inner.counters.decode_misses.fetch_add(1, Ordering::Relaxed);
    obs::count_cache(obs::DECODE_MISSES, &inner.label);
    let (limit, now) = (&inner.warnings.decode, inner.now());
    obs::decode_miss(limit, now, &inner.prefix, &key.name(), &why);
}
