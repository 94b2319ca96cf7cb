//! The cache a service adopts: string keys, typed values through a
//! [`Codec`], the origin as an async closure of the key, and the core's read
//! path run against a real Redis. The builder's setters are the read
//! path's options a service has; the core's teaching pitfalls (a flight key
//! that is not the cache key, no deadline) are not among them.
//!
//! ```no_run
//! use std::time::Duration;
//! use stampede_redis::cache::{Cache, ClaimMode, LoserPolicy};
//!
//! # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
//! let cache = Cache::builder()
//!     .redis("redis://127.0.0.1:6379")
//!     .singleflight(true)
//!     .claim(ClaimMode::Inner)
//!     .loser(LoserPolicy::Wait)
//!     .ttl(Duration::from_secs(60))
//!     .stale(Duration::from_secs(30))
//!     .deadline(Duration::from_millis(500))
//!     .origin(|key: String| async move {
//!         // The slow thing the cache stands in front of.
//!         Ok::<_, std::io::Error>(format!("profile of {key}"))
//!     })
//!     .build()
//!     .await?;
//! let got = cache.get("user:42").await?;
//! println!("{} ({:?})", got.value, got.source);
//! # Ok(())
//! # }
//! ```
//!
//! What happens in each case a service meets is in the crate's README and
//! on [`Cache::get`].

use std::fmt;
use std::future::Future;
use std::marker::PhantomData;
use std::sync::Arc;
use std::time::Duration;

use serde::de::DeserializeOwned;
use serde::Serialize;
use stampede::claim::Micros;
use stampede::metrics::Ending;

use stampede::read_path::Strategy;
pub use stampede::scenario::{ClaimMode, LoserPolicy, RedisErrorPolicy};

use crate::claim::MAX_KEY_BYTES;
use crate::conn::{Conn, Target};
pub use crate::driver::REDIS_TIMEOUT;
use crate::driver::{Driver, Origin, OriginFuture, Settings};

/// How values become the bytes stored in Redis, and back.
pub trait Codec<V>: Send + Sync + 'static {
    /// The bytes stored for `value`.
    fn encode(&self, value: &V) -> Result<Vec<u8>, String>;
    /// The value stored as `bytes`.
    fn decode(&self, bytes: &[u8]) -> Result<V, String>;
}

/// The default codec: serde JSON.
#[derive(Clone, Copy, Debug, Default)]
pub struct Json;

impl<V: Serialize + DeserializeOwned> Codec<V> for Json {
    fn encode(&self, value: &V) -> Result<Vec<u8>, String> {
        serde_json::to_vec(value).map_err(|e| e.to_string())
    }

    fn decode(&self, bytes: &[u8]) -> Result<V, String> {
        serde_json::from_slice(bytes).map_err(|e| e.to_string())
    }
}

/// Bytes stored as they are (`Vec<u8>` values).
#[derive(Clone, Copy, Debug, Default)]
pub struct Bytes;

impl Codec<Vec<u8>> for Bytes {
    fn encode(&self, value: &Vec<u8>) -> Result<Vec<u8>, String> {
        Ok(value.clone())
    }

    fn decode(&self, bytes: &[u8]) -> Result<Vec<u8>, String> {
        Ok(bytes.to_vec())
    }
}

/// Where an answer's value came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Source {
    /// A fresh value read from Redis.
    Hit,
    /// A fresh value read from Redis after waiting on another instance's
    /// claim: this request lost the claim (or took over a flight whose
    /// leader had) and polled until the holder's value was there.
    Waited,
    /// A stale value, served on purpose (within the stale window).
    Stale,
    /// This request ran the origin itself. (With fenced writes, if its
    /// write was refused as older, the value is the newer one read back.)
    Computed,
    /// Another request of this process ran the origin; this one waited on
    /// its flight.
    Shared,
}

/// A value and where it came from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Fetched<V> {
    pub value: V,
    pub source: Source,
}

/// Why [`Cache::get`] has no value.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CacheError {
    /// The request's deadline passed first. The work it started or joined
    /// goes on, and fills the cache for the next caller.
    Timeout,
    /// No value: the origin failed or timed out (this request's call, or
    /// the flight it waited on), a cached failure was found (negative
    /// caching), or the origin panicked.
    Failed,
    /// The loser policy answered with a degraded response (another
    /// instance holds the claim), or a Redis error under the closed policy.
    Degraded,
    /// The key is empty or longer than [`MAX_KEY_BYTES`].
    InvalidKey(String),
    /// [`Cache::set`] or [`Cache::invalidate`]: Redis failed or did not
    /// answer within the Redis timeout.
    Redis(String),
    /// [`Cache::set`]: the value did not encode.
    Encode(String),
    /// The bytes read did not decode. A stored value that does not decode
    /// is read as a miss and recomputed, so this is only met with a codec
    /// whose decode of the same bytes can fail once and not the next time.
    Decode(String),
}

impl fmt::Display for CacheError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CacheError::Timeout => f.write_str("the request's deadline passed"),
            CacheError::Failed => f.write_str("no value: the origin failed"),
            CacheError::Degraded => f.write_str("a degraded answer"),
            CacheError::InvalidKey(why) => write!(f, "invalid key: {why}"),
            CacheError::Redis(why) => write!(f, "Redis: {why}"),
            CacheError::Encode(why) => write!(f, "the value did not encode: {why}"),
            CacheError::Decode(why) => write!(f, "the stored value did not decode: {why}"),
        }
    }
}

impl std::error::Error for CacheError {}

/// Why [`CacheBuilder::build`] could not make a cache.
#[derive(Debug)]
pub enum BuildError {
    /// Something the builder needs was not given (the Redis URL, the
    /// origin).
    Missing(&'static str),
    /// The claim TTL breaks the rule TTL ≥ origin timeout + the write: a
    /// holder could still be computing (or writing) when its claim expires,
    /// and another instance would start a second recompute.
    ClaimTtl {
        /// The claim TTL asked for.
        claim_ttl: Duration,
        /// The origin call's bound ([`CacheBuilder::origin_timeout`]).
        origin_timeout: Duration,
        /// The write's bound: the Redis timeout
        /// ([`CacheBuilder::redis_timeout`]).
        write: Duration,
    },
    /// Redis refused the connection or the script load.
    Redis(redis::RedisError),
}

impl fmt::Display for BuildError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BuildError::Missing(what) => write!(f, "the cache builder needs {what}"),
            BuildError::ClaimTtl {
                claim_ttl,
                origin_timeout,
                write,
            } => write!(
                f,
                "the claim TTL ({} ms) is shorter than the origin timeout ({} ms) plus the write ({} ms): \
                 a holder could still be working when its claim expires; \
                 make the claim TTL at least {} ms, or the origin timeout shorter",
                claim_ttl.as_millis(),
                origin_timeout.as_millis(),
                write.as_millis(),
                (*origin_timeout + *write).as_millis()
            ),
            BuildError::Redis(e) => write!(f, "Redis: {e}"),
        }
    }
}

impl std::error::Error for BuildError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            BuildError::Redis(e) => Some(e),
            BuildError::Missing(_) | BuildError::ClaimTtl { .. } => None,
        }
    }
}

impl From<redis::RedisError> for BuildError {
    fn from(e: redis::RedisError) -> Self {
        BuildError::Redis(e)
    }
}

type TypedOrigin<V> = Arc<
    dyn Fn(String) -> std::pin::Pin<Box<dyn Future<Output = Result<V, String>> + Send>>
        + Send
        + Sync,
>;

/// The service's origin as the driver calls it: the typed closure, then the
/// codec.
struct ServiceOrigin<V, C> {
    origin: TypedOrigin<V>,
    codec: Arc<C>,
}

impl<V: Send + 'static, C: Codec<V>> Origin<String> for ServiceOrigin<V, C> {
    fn compute(&self, key: String) -> OriginFuture {
        let call = (self.origin)(key);
        let codec = self.codec.clone();
        Box::pin(async move {
            let value = call.await?;
            codec.encode(&value)
        })
    }

    /// A stored value that does not decode is a miss.
    fn accepts(&self, payload: &[u8]) -> bool {
        self.codec.decode(payload).is_ok()
    }
}

/// A service's cache: one instance's read path against a shared Redis.
/// Cheap to clone (clones share the flight table and the connection).
pub struct Cache<V, C = Json> {
    driver: Driver<ServiceOrigin<V, C>, String>,
    codec: Arc<C>,
    _value: PhantomData<fn() -> V>,
}

impl<V, C> Clone for Cache<V, C> {
    fn clone(&self) -> Self {
        Cache {
            driver: self.driver.clone(),
            codec: self.codec.clone(),
            _value: PhantomData,
        }
    }
}

impl<V> Cache<V, Json> {
    /// A builder with the defaults listed on [`CacheBuilder`].
    pub fn builder() -> CacheBuilder<V, Json> {
        CacheBuilder::new()
    }
}

impl<V: Send + 'static, C: Codec<V>> Cache<V, C> {
    /// The value for `key`, as the read path decides.
    ///
    /// - A fresh value in Redis is a [`Source::Hit`]; one that came after
    ///   waiting on another instance's claim, [`Source::Waited`].
    /// - On a miss, one request per process runs the origin (with
    ///   singleflight) and, with a claim, one per fleet; the others wait on
    ///   it, poll Redis, serve stale or degrade, as [`LoserPolicy`] says.
    /// - **Cancel.** Dropping the returned future leaves without cancelling
    ///   anything: the request runs in a task of its own, so its origin
    ///   call, write and claim release go on and the followers still get
    ///   the value.
    /// - **Deadline.** The deadline bounds the caller's wait only:
    ///   [`CacheError::Timeout`] when it passes, while the work goes on.
    ///   The origin call has its own bound
    ///   ([`CacheBuilder::origin_timeout`]); past it the call counts as
    ///   failed.
    /// - **Error.** An origin error is [`CacheError::Failed`] for the
    ///   request that ran it and for every follower attached to its flight;
    ///   it is not remembered (the next request tries again), unless
    ///   [`CacheBuilder::negative_ttl`] caches it in Redis.
    /// - **Panic.** A panic inside the origin's future, or in the closure
    ///   before its future exists, is caught where it happens and counts as
    ///   an origin error: [`CacheError::Failed`] for the request and every
    ///   follower of its flight, the claim released, the key free again.
    /// - **Redis outage.** Every Redis command is bounded by
    ///   [`REDIS_TIMEOUT`]. A failed read
    ///   counts as a miss; a failed claim is won or lost as
    ///   [`RedisErrorPolicy`] says (open: compute without a lock; closed:
    ///   the loser policy); a failed write is dropped (the value is still
    ///   answered). Singleflight still holds inside the process.
    pub async fn get(&self, key: impl Into<String>) -> Result<Fetched<V>, CacheError> {
        let key = checked(key.into())?;
        let answer = self.driver.get(key).await;
        let source = match answer.ending {
            Ending::Hit if answer.waited => Source::Waited,
            Ending::Hit => Source::Hit,
            Ending::Stale => Source::Stale,
            Ending::Computed => Source::Computed,
            Ending::Shared => Source::Shared,
            Ending::Degraded => return Err(CacheError::Degraded),
            Ending::Timeout => return Err(CacheError::Timeout),
            Ending::Error => return Err(CacheError::Failed),
        };
        let bytes = answer.value.ok_or(CacheError::Failed)?;
        let value = self.codec.decode(&bytes).map_err(CacheError::Decode)?;
        Ok(Fetched { value, source })
    }

    /// Deletes `key`'s value from Redis (and this instance's local copy,
    /// if [`CacheBuilder::local_copy`] is on; other instances' copies
    /// answer until they age out): the next request recomputes. A fill in
    /// flight may still write its value after.
    pub async fn invalidate(&self, key: impl Into<String>) -> Result<(), CacheError> {
        let key = checked(key.into())?;
        self.driver
            .invalidate(&key)
            .await
            .map_err(|e| CacheError::Redis(e.to_string()))
    }

    /// Writes `value` as `key`'s value now: fresh for the value TTL, then
    /// stale for the stale window, as a fill writes it. With fenced writes,
    /// under a fencing number of its own, so a fill in flight under an
    /// older claim cannot overwrite it. `Ok(false)` when it was itself
    /// refused as older: a fill under a newer claim wrote in between, and
    /// its value stays.
    pub async fn set(&self, key: impl Into<String>, value: &V) -> Result<bool, CacheError> {
        let key = checked(key.into())?;
        let payload = self.codec.encode(value).map_err(CacheError::Encode)?;
        self.driver
            .set(&key, &payload)
            .await
            .map_err(|e| CacheError::Redis(e.to_string()))
    }

    /// For a graceful shutdown, once no new request is sent: waits until
    /// every request's task has ended (its flight settled and its waiters
    /// answered, its value written, its claim released), or `within` has
    /// passed. True when they all ended. A runtime shut down under running
    /// requests cuts them where they stand, and a claim one held then
    /// blocks its key on every instance until its TTL.
    pub async fn drain(&self, within: Duration) -> bool {
        let until = tokio::time::Instant::now() + within;
        while self.running() > 0 {
            if tokio::time::Instant::now() >= until {
                return false;
            }
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
        true
    }

    /// Flights open in this process right now (0 once every request's task
    /// has ended: nothing is kept).
    pub fn in_flight(&self) -> usize {
        self.driver.in_flight()
    }

    /// Requests whose task is still running (answered or not: a write, a
    /// settle or a release may still be under way).
    pub fn running(&self) -> u64 {
        self.driver
            .counters()
            .running
            .load(std::sync::atomic::Ordering::SeqCst)
    }

    /// How many times this process ran the origin.
    pub fn origin_calls(&self) -> u64 {
        self.driver
            .counters()
            .recomputes
            .load(std::sync::atomic::Ordering::SeqCst)
    }

    /// What this process's requests have counted so far.
    pub fn stats(&self) -> CacheStats {
        let c = self.driver.counters();
        let get = |a: &std::sync::atomic::AtomicU64| a.load(std::sync::atomic::Ordering::SeqCst);
        CacheStats {
            origin_calls: get(&c.recomputes),
            decode_misses: get(&c.decode_misses),
            released: get(&c.released),
            release_expired: get(&c.release_expired),
            release_taken: get(&c.release_taken),
            ambiguous_claims: get(&c.ambiguous_claims),
            redis_errors: get(&c.redis_errors),
            writes_refused: get(&c.writes_refused),
        }
    }
}

/// What a [`Cache`]'s requests counted, since it was built ([`Cache::stats`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CacheStats {
    /// Origin calls.
    pub origin_calls: u64,
    /// Stored values that did not decode, read as misses (the recompute
    /// overwrote them).
    pub decode_misses: u64,
    /// Claim releases that deleted the request's own claim.
    pub released: u64,
    /// Claim releases that found nobody holding the claim (it expired).
    pub release_expired: u64,
    /// Claim releases that found another holder's claim (left alone).
    pub release_taken: u64,
    /// Claims whose reply never came (a paused or slow Redis), released by
    /// their token right after.
    pub ambiguous_claims: u64,
    /// Redis commands that failed or did not answer within the Redis
    /// timeout.
    pub redis_errors: u64,
    /// Value writes refused because a newer fence had written.
    pub writes_refused: u64,
}

/// `key`, if a cache can take it: not empty, at most [`MAX_KEY_BYTES`].
fn checked(key: String) -> Result<String, CacheError> {
    if key.is_empty() {
        return Err(CacheError::InvalidKey("the key is empty".into()));
    }
    if key.len() > MAX_KEY_BYTES {
        return Err(CacheError::InvalidKey(format!(
            "the key is {} bytes long; the limit is {MAX_KEY_BYTES}",
            key.len()
        )));
    }
    Ok(key)
}

/// Builds a [`Cache`]. Defaults: singleflight on, [`ClaimMode::Inner`],
/// [`LoserPolicy::Wait`], [`RedisErrorPolicy::Open`], a 1 s deadline, a
/// 3 s origin timeout, values fresh for 10 s, no stale window, a claim TTL
/// that follows the origin timeout (see [`CacheBuilder::claim_ttl`]: 3.2 s
/// with the other defaults), a 50 ms poll, a 100 ms Redis timeout
/// ([`REDIS_TIMEOUT`]), no breaker, no local
/// copy, no negative caching, no admission limit, no jitter, no XFetch, unfenced
/// writes. Every duration is a [`Duration`]; Redis keeps them in whole
/// milliseconds (a shorter one counts as 1 ms).
pub struct CacheBuilder<V, C = Json> {
    target: Option<Target>,
    /// The service's own connection, used instead of `target`.
    connection: Option<Conn>,
    strategy: Strategy,
    /// The claim TTL was given ([`CacheBuilder::claim_ttl`]); otherwise it
    /// follows the origin timeout.
    claim_ttl_given: bool,
    settings: Settings,
    origin: Option<TypedOrigin<V>>,
    codec: C,
}

fn micros(d: Duration) -> Micros {
    d.as_micros().min(u128::from(Micros::MAX)) as Micros
}

impl<V> CacheBuilder<V, Json> {
    fn new() -> Self {
        let ms = |v: u64| v * 1000;
        CacheBuilder {
            target: None,
            connection: None,
            claim_ttl_given: false,
            strategy: Strategy {
                singleflight: true,
                claim: ClaimMode::Inner,
                loser: LoserPolicy::Wait,
                redis_error: RedisErrorPolicy::Open,
                deadline: Some(ms(1000)),
                origin_timeout: Some(ms(3000)),
                claim_ttl: ms(5000),
                poll: ms(50),
                rtt: ms(1),
                negative_ttl: None,
                stale_while_revalidate: false,
                admission: false,
                admission_wait: ms(100),
                key_mismatch: false,
                xfetch_beta: 0.0,
                fenced_writes: false,
            },
            settings: Settings::service(),
            origin: None,
            codec: Json,
        }
    }
}

impl<V, C> CacheBuilder<V, C> {
    /// The Redis: a URL, several comma-separated URLs for a cluster, or a
    /// [`Target`].
    pub fn redis(mut self, target: impl Into<Target>) -> Self {
        self.target = Some(target.into());
        self
    }

    /// The service's own connection (a redis-rs `ConnectionManager`, or a
    /// cluster's `ClusterConnection`), instead of [`CacheBuilder::redis`]:
    /// the cache shares it and loads its scripts on it when built. Its own
    /// settings (reconnection, its reply timeout) stay the service's; the
    /// cache still bounds each command by its Redis timeout
    /// ([`CacheBuilder::redis_timeout`]).
    pub fn connection(mut self, connection: impl Into<Conn>) -> Self {
        self.connection = Some(connection.into());
        self
    }

    /// Coalesce the requests of one key inside the process.
    pub fn singleflight(mut self, on: bool) -> Self {
        self.strategy.singleflight = on;
        self
    }

    /// The claim across instances, on Redis.
    pub fn claim(mut self, mode: ClaimMode) -> Self {
        self.strategy.claim = mode;
        self
    }

    /// What a request that lost the claim does.
    pub fn loser(mut self, policy: LoserPolicy) -> Self {
        self.strategy.loser = policy;
        self
    }

    /// What a claim that Redis could not answer counts as.
    pub fn on_redis_error(mut self, policy: RedisErrorPolicy) -> Self {
        self.strategy.redis_error = policy;
        self
    }

    /// How long a written value is fresh.
    pub fn ttl(mut self, ttl: Duration) -> Self {
        self.settings.value_ttl = ttl;
        self
    }

    /// How long after it stops being fresh a value may still be served
    /// stale; a non-zero window also turns on stale-while-revalidate (the
    /// stale value is answered at once and one request refreshes it).
    pub fn stale(mut self, window: Duration) -> Self {
        self.settings.stale = window;
        self.strategy.stale_while_revalidate = !window.is_zero();
        self
    }

    /// Each request's budget from its arrival (bounds the wait, never the
    /// work).
    pub fn deadline(mut self, deadline: Duration) -> Self {
        self.strategy.deadline = Some(micros(deadline));
        self
    }

    /// The origin call's own bound: past it the call counts as failed.
    pub fn origin_timeout(mut self, timeout: Duration) -> Self {
        self.strategy.origin_timeout = Some(micros(timeout));
        self
    }

    /// How long a claim holds if its holder never releases it (at least
    /// 1 ms).
    ///
    /// The rule: **claim TTL ≥ origin timeout + the write** (the write is
    /// bounded by the Redis timeout), or a holder still computing loses its
    /// claim and another instance starts a second recompute.
    /// [`CacheBuilder::build`] refuses a TTL that breaks it
    /// ([`BuildError::ClaimTtl`], naming both numbers).
    ///
    /// Not given, it follows the rule with the holder's whole work: the
    /// re-check read, the admission queue (when [`CacheBuilder::admission`]
    /// is on), the origin timeout and the write. With the defaults, 100 ms
    /// + 3 s + 100 ms = 3.2 s.
    pub fn claim_ttl(mut self, ttl: Duration) -> Self {
        self.strategy.claim_ttl = micros(ttl).max(1000);
        self.claim_ttl_given = true;
        self
    }

    /// How long one Redis command may take before it counts as failed (a
    /// failed read is a miss, a failed claim follows
    /// [`CacheBuilder::on_redis_error`]); at least 1 ms. Default: 100 ms
    /// ([`REDIS_TIMEOUT`]).
    pub fn redis_timeout(mut self, timeout: Duration) -> Self {
        self.settings.redis_timeout = timeout.max(Duration::from_millis(1));
        self
    }

    /// Keep a local copy of each fresh value read from Redis for this long:
    /// it answers this instance's reads with no round trip until it ages
    /// out, whatever Redis holds meanwhile (so a write elsewhere, or an
    /// [`Cache::invalidate`] on another instance, is seen up to this late).
    /// Zero (the default) keeps none.
    pub fn local_copy(mut self, for_: Duration) -> Self {
        self.settings.local_cache = for_;
        self
    }

    /// The breaker: after a Redis command fails or times out, send nothing
    /// to Redis for this long (each command fails at once, unsent, as
    /// [`CacheBuilder::on_redis_error`] says). Zero (the default) is no
    /// breaker.
    pub fn redis_breaker(mut self, open_for: Duration) -> Self {
        self.settings.redis_breaker = open_for;
        self
    }

    /// How often a waiting loser re-reads Redis.
    pub fn poll(mut self, every: Duration) -> Self {
        self.strategy.poll = micros(every).max(1000);
        self
    }

    /// Cache an origin failure in Redis for this long.
    pub fn negative_ttl(mut self, ttl: Duration) -> Self {
        self.strategy.negative_ttl = (!ttl.is_zero()).then(|| micros(ttl));
        self
    }

    /// At most `max` origin calls at once in this process; a recompute that
    /// waits longer than `wait` for a slot is shed.
    pub fn admission(mut self, max: usize, wait: Duration) -> Self {
        self.settings.admission = max;
        self.strategy.admission = max > 0;
        self.strategy.admission_wait = micros(wait);
        self
    }

    /// Spread each written TTL over ttl × [1 − j, 1 + j].
    pub fn jitter(mut self, fraction: f64) -> Self {
        self.settings.jitter = fraction.clamp(0.0, 1.0);
        self
    }

    /// XFetch: refresh a fresh value early, with this eagerness (0 = off).
    pub fn xfetch(mut self, beta: f64) -> Self {
        let beta = beta.max(0.0);
        self.strategy.xfetch_beta = beta;
        self.settings.xfetch = beta > 0.0;
        self
    }

    /// Writes carry the claim's fencing number; older ones are refused.
    pub fn fenced_writes(mut self, on: bool) -> Self {
        self.strategy.fenced_writes = on;
        self
    }

    /// The origin: any async closure of the key. Its error is reported as
    /// [`CacheError::Failed`] (the message goes nowhere else).
    pub fn origin<F, Fut, E>(mut self, origin: F) -> Self
    where
        F: Fn(String) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<V, E>> + Send + 'static,
        E: fmt::Display,
    {
        self.origin = Some(Arc::new(move |key: String| {
            let fut = origin(key);
            Box::pin(async move { fut.await.map_err(|e| e.to_string()) })
        }));
        self
    }

    /// How values are stored ([`Json`] unless changed).
    pub fn codec<C2>(self, codec: C2) -> CacheBuilder<V, C2> {
        CacheBuilder {
            target: self.target,
            connection: self.connection,
            claim_ttl_given: self.claim_ttl_given,
            strategy: self.strategy,
            settings: self.settings,
            origin: self.origin,
            codec,
        }
    }
}

impl<V: Send + 'static, C: Codec<V>> CacheBuilder<V, C> {
    /// The claim TTL the cache will use: the one given, if it keeps the rule
    /// (claim TTL ≥ origin timeout + the write), or the default that
    /// follows the origin timeout.
    fn claim_ttl_to_use(&self) -> Result<Micros, BuildError> {
        let s = &self.strategy;
        // Every builder has an origin timeout (the core's no-deadline
        // pitfall is not reachable from the builder).
        let origin_timeout = s.origin_timeout.unwrap_or(s.claim_ttl);
        let write = micros(self.settings.redis_timeout);
        if !self.claim_ttl_given {
            let recheck = write;
            let queue = if s.admission { s.admission_wait } else { 0 };
            return Ok(recheck + queue + origin_timeout + write);
        }
        if s.claim != ClaimMode::Off && s.claim_ttl < origin_timeout + write {
            return Err(BuildError::ClaimTtl {
                claim_ttl: Duration::from_micros(s.claim_ttl),
                origin_timeout: Duration::from_micros(origin_timeout),
                write: Duration::from_micros(write),
            });
        }
        Ok(s.claim_ttl)
    }

    /// Connects to Redis and loads the scripts.
    ///
    /// Refuses a claim TTL shorter than the origin timeout plus the write
    /// ([`BuildError::ClaimTtl`]).
    pub async fn build(mut self) -> Result<Cache<V, C>, BuildError> {
        self.strategy.claim_ttl = self.claim_ttl_to_use()?;
        let origin = self
            .origin
            .ok_or(BuildError::Missing("an origin (.origin(closure))"))?;
        let codec = Arc::new(self.codec);
        let origin = ServiceOrigin {
            origin,
            codec: codec.clone(),
        };
        let (strategy, settings) = (self.strategy, self.settings);
        let con = match (self.connection, self.target) {
            (Some(con), _) => con,
            (None, Some(target)) => target.connect_bounded(settings.redis_timeout).await?,
            (None, None) => {
                return Err(BuildError::Missing(
                    "a Redis (.redis(url) or .connection(connection))",
                ))
            }
        };
        let driver = Driver::with_connection(con, strategy, settings, origin).await?;
        Ok(Cache {
            driver,
            codec,
            _value: PhantomData,
        })
    }
}
