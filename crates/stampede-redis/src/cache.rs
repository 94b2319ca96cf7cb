//! The cache a service adopts: string keys, typed values through a
//! [`Codec`], the origin as an async closure of the key, and the core's read
//! path run against a real Redis. The builder's setters are the read
//! path's options a service has; the core's teaching pitfalls (a flight key
//! that is not the cache key, no deadline, the claim outside the flight)
//! are not among them.
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
//!     .origin_timeout(Duration::from_millis(200))
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
use std::pin::Pin;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use serde::de::DeserializeOwned;
use serde::Serialize;
use stampede::claim::Micros;
use stampede::metrics::Ending;

use stampede::read_path::Strategy;
use stampede::scenario::ClaimMode as CoreClaim;
pub use stampede::scenario::{LoserPolicy, RedisErrorPolicy};

pub use crate::breaker::BreakerState;
use crate::claim::MAX_KEY_BYTES;
use crate::conn::{manager_config, Conn, Link, Target};
use crate::driver::{
    load_scripts, BoxError, Decoded, Driver, Fill, FillFuture, Loader, Origin, OriginFuture,
    Settings, SharedError,
};
pub use crate::driver::{FailCause, REDIS_TIMEOUT};
pub use crate::local::Coherence;
use crate::local::Tracking;
use crate::obs;
use redis::aio::ConnectionManager;

/// The claim across instances a [`Cache`] takes on Redis
/// ([`CacheBuilder::claim`]).
///
/// The core's fourth order, the claim outside (every request claims before
/// it coalesces, so one instance sends a claim per caller and its losers
/// wait on their own instance's winner), is one of the page's teaching
/// pitfalls and is not offered here:
///
/// ```compile_fail,E0599
/// use stampede_redis::cache::{Cache, ClaimMode};
/// let _ = Cache::<String>::builder().claim(ClaimMode::Outer);
/// ```
///
/// nor can the core's own enum be passed in its place:
///
/// ```compile_fail,E0308
/// use stampede_redis::cache::Cache;
/// let _ = Cache::<String>::builder().claim(stampede::scenario::ClaimMode::Outer);
/// ```
///
/// The orders a service has:
///
/// ```
/// use stampede_redis::cache::{Cache, ClaimMode};
/// for mode in [ClaimMode::Off, ClaimMode::Inner, ClaimMode::Refresh] {
///     let _ = Cache::<String>::builder().claim(mode);
/// }
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ClaimMode {
    /// No cross-instance claim: each instance's flight computes.
    Off,
    /// Singleflight outside, claim inside: one claim attempt per instance
    /// and key (the default).
    Inner,
    /// The claim guards only the refresh of a stale value; a miss with
    /// nothing to serve coalesces in-process and computes without any
    /// claim, so no caller ever waits on a lock.
    Refresh,
}

impl ClaimMode {
    /// The core's order this one runs as.
    fn core(self) -> CoreClaim {
        match self {
            ClaimMode::Off => CoreClaim::Off,
            ClaimMode::Inner => CoreClaim::Inner,
            ClaimMode::Refresh => CoreClaim::Refresh,
        }
    }
}

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

/// Why [`Cache::get`] has no value. New causes may be added: a `match`
/// on it needs a `_` arm.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum CacheError {
    /// The request's deadline passed first. The work it started or joined
    /// goes on, and fills the cache for the next caller.
    Timeout,
    /// The origin (or [`Cache::get_with`]'s loader) returned an error:
    /// this request's call, or the call of the flight it waited on in this
    /// process. The error is the origin's own ([`OriginError::downcast_ref`]).
    Origin(OriginError),
    /// No value, and no error of the origin's to give; [`FailCause`] says
    /// why: the origin timed out ([`FailCause::OriginTimeout`]) or panicked
    /// ([`FailCause::OriginPanicked`]), for this request or the flight it
    /// waited on in this process; a failure cached in Redis answered
    /// ([`FailCause::Remembered`], negative caching); a fill on another
    /// instance failed while this request waited on its claim
    /// ([`FailCause::OtherInstance`]); or the request's work ended without
    /// an answer ([`FailCause::Unanswered`]).
    Failed(FailCause),
    /// [`Cache::get`] on a cache built without an origin, and no fresh
    /// value in Redis (or this instance's local copy): such a cache is
    /// filled with [`Cache::get_with`] or [`Cache::set`].
    NoOrigin,
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
    /// [`Cache::drain`] has started on this cache (or a clone): it takes
    /// no new request. Another instance of the service serves it.
    Draining,
    /// The bytes read did not decode. A stored value that does not decode
    /// is read as a miss and recomputed, so this is only met with a codec
    /// whose decode of the same bytes can fail once and not the next time.
    Decode(String),
}

impl fmt::Display for CacheError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CacheError::Timeout => f.write_str("the request's deadline passed"),
            CacheError::Origin(e) => write!(f, "the origin failed: {e}"),
            CacheError::Failed(cause) => f.write_str(match cause {
                FailCause::OriginTimeout => "no value: the origin call timed out",
                FailCause::OriginPanicked => "no value: the origin panicked",
                FailCause::Remembered => "no value: the origin failed recently (a cached failure)",
                FailCause::OtherInstance => {
                    "no value: the origin failed on the instance holding the claim"
                }
                FailCause::Unanswered => "no value: the request ended without an answer",
            }),
            CacheError::NoOrigin => {
                f.write_str("the cache has no origin: call get_with with a loader")
            }
            CacheError::Degraded => f.write_str("a degraded answer"),
            CacheError::InvalidKey(why) => write!(f, "invalid key: {why}"),
            CacheError::Redis(why) => write!(f, "Redis: {why}"),
            CacheError::Encode(why) => write!(f, "the value did not encode: {why}"),
            CacheError::Decode(why) => write!(f, "the stored value did not decode: {why}"),
            CacheError::Draining => f.write_str("the cache is draining: it takes no new request"),
        }
    }
}

impl std::error::Error for CacheError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            CacheError::Origin(e) => Some(e),
            _ => None,
        }
    }
}

/// Why [`CacheBuilder::build`] could not make a cache.
#[derive(Debug)]
pub enum BuildError {
    /// Something the builder needs was not given (the Redis URL or
    /// connection).
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
    /// The deadline leaves no time for the origin at all: it is no longer
    /// than the Redis commands a miss sends before its origin call (the
    /// read, and with a claim or singleflight the claim and the re-check),
    /// each bounded by the Redis timeout. With Redis down or paused, every
    /// miss would answer [`CacheError::Timeout`] before its origin is
    /// called ([`CacheBuilder::deadline`] gives the rule).
    Deadline {
        /// The deadline asked for ([`CacheBuilder::deadline`]).
        deadline: Duration,
        /// How many Redis commands a miss sends before its origin call.
        commands: u32,
        /// Each command's bound ([`CacheBuilder::redis_timeout`]).
        redis_timeout: Duration,
    },
    /// The key prefix has a `{` or a `}`: it would change the keys' hash
    /// tag ([`CacheBuilder::key_prefix`]).
    KeyPrefix(String),
    /// A redis-rs `ConnectionManager` the service made itself was handed
    /// to [`CacheBuilder::connection`]: how soon it comes back after a
    /// Redis restart is its own backoff, which the cache cannot read or
    /// bound (redis-rs's defaults, `ConnectionManager::new`, stayed away
    /// 102 s, every request going to the origin meanwhile). Give the cache
    /// the client ([`CacheBuilder::client`]), or make the shared manager
    /// with [`conn::manager`](crate::conn::manager).
    Reconnection,
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
            BuildError::Deadline {
                deadline,
                commands,
                redis_timeout,
            } => write!(
                f,
                "the deadline ({} ms) is not longer than the Redis commands a miss sends before its \
                 origin call ({commands} × the {} ms Redis timeout = {} ms): with Redis down, every \
                 miss would time out before its origin is called; make the deadline longer than \
                 {} ms plus the origin's time, or the Redis timeout shorter",
                deadline.as_millis(),
                redis_timeout.as_millis(),
                (*redis_timeout * *commands).as_millis(),
                (*redis_timeout * *commands).as_millis(),
            ),
            BuildError::KeyPrefix(p) => write!(
                f,
                "the key prefix {p:?} has a brace: it would change the keys' hash tag"
            ),
            BuildError::Reconnection => f.write_str(
                "a ConnectionManager made by the service was given to .connection(): its \
                 reconnection after a Redis restart is its own backoff, which the cache cannot \
                 read (redis-rs's defaults stayed away 102 s); give the cache the client with \
                 .client(client), or make the manager with \
                 stampede_redis::conn::manager(client, redis_timeout) and share that",
            ),
            BuildError::Redis(e) => write!(f, "Redis: {e}"),
        }
    }
}

impl std::error::Error for BuildError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            BuildError::Redis(e) => Some(e),
            BuildError::Missing(_)
            | BuildError::ClaimTtl { .. }
            | BuildError::Deadline { .. }
            | BuildError::Reconnection
            | BuildError::KeyPrefix(_) => None,
        }
    }
}

impl From<redis::RedisError> for BuildError {
    fn from(e: redis::RedisError) -> Self {
        BuildError::Redis(e)
    }
}

/// The origin's error, as [`CacheError::Origin`] carries it: the error the
/// origin (or the loader given to [`Cache::get_with`]) returned, of its own
/// type, shared by every caller of the flight that ran it.
///
/// [`OriginError::downcast_ref`] gives it back as its type; `Display` shows
/// it; [`std::error::Error::source`] is the origin's error itself. An
/// origin whose error is a `String` or a `&str` (which are not error
/// types) gives an error that displays the text and downcasts to neither.
///
/// Two `OriginError`s are equal when they are the same error (one flight's,
/// shared), not when their texts are.
#[derive(Clone)]
pub struct OriginError(SharedError);

impl OriginError {
    /// The origin's error as its own type `E`, if it is one.
    pub fn downcast_ref<E: std::error::Error + 'static>(&self) -> Option<&E> {
        self.0.downcast_ref::<E>()
    }

    /// The origin's error, whatever its type.
    pub fn get_ref(&self) -> &(dyn std::error::Error + Send + Sync + 'static) {
        &*self.0
    }
}

impl fmt::Debug for OriginError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("OriginError").field(&self.0).finish()
    }
}

impl fmt::Display for OriginError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&self.0, f)
    }
}

impl std::error::Error for OriginError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(&*self.0)
    }
}

impl PartialEq for OriginError {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

impl Eq for OriginError {}

/// A value from the service's origin or a loader, with its TTL if the
/// builder's [`CacheBuilder::ttl_for`] gives it one.
type TypedFill<V> = Pin<Box<dyn Future<Output = Result<V, BoxError>> + Send>>;

type TypedOrigin<V> = Arc<dyn Fn(String) -> TypedFill<V> + Send + Sync>;

/// Each entry's own TTL, from its key and value (`None`: the builder's).
type TtlFor<V> = Arc<dyn Fn(&str, &V) -> Option<Duration> + Send + Sync>;

/// The service's origin as the driver calls it: the typed closure (if the
/// builder has one), then the entry's TTL, then the codec.
struct ServiceOrigin<V, C> {
    origin: Option<TypedOrigin<V>>,
    codec: Arc<C>,
    ttl_for: Option<TtlFor<V>>,
}

/// `call`'s value, with its TTL and encoded, as the driver writes it. (A
/// value that does not encode fails the fill, with the codec's message.)
fn fill_of<V: Send + 'static, C: Codec<V>>(
    codec: Arc<C>,
    ttl_for: Option<TtlFor<V>>,
    key: String,
    call: TypedFill<V>,
) -> FillFuture {
    Box::pin(async move {
        let value = call.await?;
        let ttl = ttl_for.and_then(|f| f(&key, &value));
        let payload = codec.encode(&value)?;
        Ok(Fill { payload, ttl })
    })
}

impl<V: Send + 'static, C: Codec<V>> Origin<String> for ServiceOrigin<V, C> {
    fn compute(&self, key: String) -> OriginFuture {
        let fill = self.fill(key);
        Box::pin(async move { Ok(fill.await?.payload) })
    }

    fn fill(&self, key: String) -> FillFuture {
        match &self.origin {
            Some(origin) => {
                let call = origin(key.clone());
                fill_of(self.codec.clone(), self.ttl_for.clone(), key, call)
            }
            // `Cache::get` refuses a request before it gets here.
            None => Box::pin(async { Err("the cache has no origin".into()) }),
        }
    }

    /// A stored value that does not decode is a miss; one that does is
    /// kept for the answer, which does not decode it again.
    fn decode(&self, payload: &[u8]) -> Result<Decoded, String> {
        self.codec.decode(payload).map(Decoded::of)
    }
}

/// A cache's first read: the stored payload decoded once, both to tell a
/// value of another schema (a miss, as [`Origin::decode`] says) from a hit
/// and for the caller.
fn decoded<V, C: Codec<V>>(origin: &ServiceOrigin<V, C>, payload: &[u8]) -> Result<V, String> {
    origin.codec.decode(payload)
}

/// A connection made, with the driver's scripts loaded on it.
async fn ready(mut con: Conn) -> Result<Link, BuildError> {
    load_scripts(&mut con).await?;
    Ok(Link::ready(con))
}

/// The connection `connect` makes, with the scripts loaded: at once if
/// Redis is there, else in the background ([`Link::background`]) while the
/// cache starts. A configuration that cannot be read (a bad URL) is the
/// service's mistake, and refused.
async fn lazily<A, F>(connect: A) -> Result<Link, BuildError>
where
    A: Fn() -> F + Send + Sync + 'static,
    F: Future<Output = redis::RedisResult<Conn>> + Send,
{
    let attempt = move || {
        let made = connect();
        async move {
            let mut con = made.await?;
            load_scripts(&mut con).await?;
            Ok::<_, redis::RedisError>(con)
        }
    };
    match attempt().await {
        Ok(con) => Ok(Link::ready(con)),
        Err(e) if e.kind() == redis::ErrorKind::InvalidClientConfig => Err(e.into()),
        Err(_) => Ok(Link::background(attempt)),
    }
}

/// A service's cache: one instance's read path against a shared Redis.
/// Cheap to clone (clones share the flight table and the connection).
pub struct Cache<V, C = Json> {
    driver: Driver<ServiceOrigin<V, C>, String>,
    _value: PhantomData<fn() -> V>,
}

impl<V, C> Clone for Cache<V, C> {
    fn clone(&self) -> Self {
        Cache {
            driver: self.driver.clone(),
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
    ///   anything but the first read: that read runs in the caller's own
    ///   future (a hit is answered there, with no task), and everything
    ///   after it in a task of its own, so its origin call, write and claim
    ///   release go on and the followers still get the value.
    /// - **Deadline.** The deadline bounds the caller's wait only:
    ///   [`CacheError::Timeout`] when it passes, while the work goes on.
    ///   The origin call has its own bound
    ///   ([`CacheBuilder::origin_timeout`]); past it the call counts as
    ///   failed.
    /// - **Error.** An origin error is [`CacheError::Origin`], the origin's
    ///   own error, for the request that ran it and for every follower
    ///   attached to its flight; the requests of other instances waiting
    ///   on its claim get [`CacheError::Failed`] with
    ///   [`FailCause::OtherInstance`] (or their stale value),
    ///   rather than each calling the origin in turn. It is not
    ///   remembered (the next request tries again), unless
    ///   [`CacheBuilder::negative_ttl`] caches it in Redis.
    /// - **Panic.** A panic inside the origin's future, or in the closure
    ///   before its future exists, is caught where it happens and counts as
    ///   an origin failure with no error: [`CacheError::Failed`] with
    ///   [`FailCause::OriginPanicked`] for the request and every follower
    ///   of its flight, the claim released, the key free again. (An origin
    ///   call past its timeout is likewise [`FailCause::OriginTimeout`].)
    /// - **Redis outage.** Every Redis command is bounded by
    ///   [`REDIS_TIMEOUT`]. A failed read
    ///   counts as a miss; a failed claim is won or lost as
    ///   [`RedisErrorPolicy`] says (open: compute without a lock; closed:
    ///   the loser policy); a failed write is dropped (the value is still
    ///   answered). Singleflight still holds inside the process.
    pub async fn get(&self, key: impl Into<String>) -> Result<Fetched<V>, CacheError> {
        let key = checked(key.into())?;
        let started = obs::Started::now();
        let got = if self.service().origin.is_none() {
            self.read_only(key).await
        } else {
            let answer = self.driver.get_inline(key, None, decoded).await;
            self.answered(answer.map_err(|_| CacheError::Draining)?)
        };
        started.answered(self.driver.label(), source_label(&got));
        got
    }

    /// As [`Cache::get`], with this call's own loader instead of the
    /// builder's origin (which a cache used only this way need not have),
    /// as moka's `try_get_with`: `init` runs only if this call is the one
    /// that computes; a call that coalesces with another (in this process,
    /// or across the fleet through the claim) gets that one's value, and
    /// `init` is dropped unpolled. It runs in the request's task, so it
    /// must be `Send + 'static`; like the origin, it is bounded by the
    /// origin timeout, and its error, of its own type, comes back in
    /// [`CacheError::Origin`] (to this caller and to the callers that
    /// waited on its flight). [`CacheBuilder::ttl_for`] applies to its
    /// value as to the origin's.
    pub async fn get_with<F, E>(
        &self,
        key: impl Into<String>,
        init: F,
    ) -> Result<Fetched<V>, CacheError>
    where
        F: Future<Output = Result<V, E>> + Send + 'static,
        E: Into<BoxError>,
    {
        let key = checked(key.into())?;
        let init: TypedFill<V> = Box::pin(async move { init.await.map_err(Into::into) });
        let once = Mutex::new(Some(init));
        let service = self.service();
        let (codec, ttl_for, for_key) =
            (service.codec.clone(), service.ttl_for.clone(), key.clone());
        let loader: Loader = Arc::new(move || {
            let init = once.lock().unwrap_or_else(PoisonError::into_inner).take();
            match init {
                Some(init) => fill_of(codec.clone(), ttl_for.clone(), for_key.clone(), init),
                None => Box::pin(async { Err("the loader was already run".into()) }),
            }
        });
        let started = obs::Started::now();
        let answer = self.driver.get_inline(key, Some(loader), decoded).await;
        let got = self.answered(answer.map_err(|_| CacheError::Draining)?);
        started.answered(self.driver.label(), source_label(&got));
        got
    }

    /// A cache without an origin: a fresh value in Redis (or this
    /// instance's local copy) is a [`Source::Hit`]; anything else is
    /// [`CacheError::NoOrigin`], with no claim and no flight.
    async fn read_only(&self, key: String) -> Result<Fetched<V>, CacheError> {
        let value = self.fresh(key).await?.ok_or(CacheError::NoOrigin)?;
        Ok(Fetched {
            value,
            source: Source::Hit,
        })
    }

    /// The values of `keys`, in their order, each as [`Cache::get`] gives
    /// it: the fresh ones read at once (the local copies, then one `MGET`
    /// of the others: one round trip for every hit), and every other key
    /// asked of [`Cache::get`], all at once, so each missing key coalesces
    /// and computes as `get` does (one origin call per key across the
    /// fleet, whoever else asks for it meanwhile). A key that is not valid
    /// is its own [`CacheError::InvalidKey`]; a cache without an origin
    /// answers [`CacheError::NoOrigin`] for the keys it has no fresh value
    /// of. On a cluster (keys in many slots) each key is its own `get`.
    pub async fn get_many<I, S>(&self, keys: I) -> Vec<Result<Fetched<V>, CacheError>>
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        let keys: Vec<Result<String, CacheError>> =
            keys.into_iter().map(|k| checked(k.into())).collect();
        let valid: Vec<(usize, String)> = keys
            .iter()
            .enumerate()
            .filter_map(|(i, k)| k.as_ref().ok().map(|k| (i, k.clone())))
            .collect();
        let names: Vec<String> = valid.iter().map(|(_, k)| k.clone()).collect();
        let read = match self.driver.read_many(&names, decoded).await {
            Ok(read) => read,
            Err(_) => return keys.iter().map(|_| Err(CacheError::Draining)).collect(),
        };
        let mut out: Vec<Option<Result<Fetched<V>, CacheError>>> =
            keys.into_iter().map(|k| k.err().map(Err)).collect();
        let mut rest = tokio::task::JoinSet::new();
        for ((i, key), found) in valid.into_iter().zip(read) {
            match found {
                Some((bytes, value)) => {
                    let value = match value {
                        Some(value) => Ok(value),
                        None => self
                            .service()
                            .codec
                            .decode(&bytes)
                            .map_err(CacheError::Decode),
                    };
                    out[i] = Some(value.map(|value| Fetched {
                        value,
                        source: Source::Hit,
                    }));
                }
                None => {
                    let cache = self.clone();
                    rest.spawn(async move { (i, cache.get(key).await) });
                }
            }
        }
        while let Some(done) = rest.join_next().await {
            if let Ok((i, got)) = done {
                out[i] = Some(got);
            }
        }
        out.into_iter()
            .map(|r| r.unwrap_or(Err(CacheError::Failed(FailCause::Unanswered))))
            .collect()
    }

    /// The fresh value of `key`, if there is one, without computing it:
    /// this instance's local copy while it lives, else one `GET` of Redis.
    /// No flight, no claim, no origin call, no write, whatever the cache's
    /// settings. `Ok(None)` when there is no fresh value: a miss, a stale
    /// value (even within the stale window), a cached failure, a value
    /// that does not decode, or a Redis that failed or did not answer
    /// within the Redis timeout (a `peek` sees what a `get` would find
    /// first, and leaves the rest to it).
    pub async fn peek(&self, key: impl Into<String>) -> Result<Option<V>, CacheError> {
        self.fresh(checked(key.into())?).await
    }

    /// What [`Cache::peek`] reads.
    async fn fresh(&self, key: String) -> Result<Option<V>, CacheError> {
        let read = self.driver.read_only(key, decoded).await;
        let Some((bytes, value)) = read.map_err(|_| CacheError::Draining)? else {
            return Ok(None);
        };
        match value {
            Some(value) => Ok(Some(value)),
            None => self
                .service()
                .codec
                .decode(&bytes)
                .map(Some)
                .map_err(CacheError::Decode),
        }
    }

    /// The Redis key holding `key`'s value, as this cache names it: with
    /// its [`CacheBuilder::key_prefix`] (`PREFIXvalue:{key}`).
    pub fn value_key(&self, key: &str) -> String {
        self.driver.keys().value_key(key)
    }

    /// The Redis key of `key`'s claim, with the cache's prefix
    /// (`PREFIXlock:{key}`).
    pub fn lock_key(&self, key: &str) -> String {
        self.driver.keys().lock_key(key)
    }

    /// The Redis key of `key`'s fencing counter, with the cache's prefix
    /// (`PREFIXfence:{key}`).
    pub fn fence_key(&self, key: &str) -> String {
        self.driver.keys().fence_key(key)
    }

    /// The origin, codec and per-entry TTL the cache was built with.
    fn service(&self) -> &ServiceOrigin<V, C> {
        self.driver.origin()
    }

    /// What a request's answer means for its caller; `read`, the value a
    /// hit's first read already decoded from the answer's payload, else
    /// the one the read that found it did (a stale value, a value that
    /// came after waiting: [`Answer::decoded`](crate::driver::Answer)); a
    /// payload neither read kept (a local copy's, a computed or shared
    /// one) is decoded here.
    fn answered(
        &self,
        (answer, read): (crate::driver::Answer, Option<V>),
    ) -> Result<Fetched<V>, CacheError> {
        let source = match answer.ending {
            Ending::Hit if answer.waited => Source::Waited,
            Ending::Hit => Source::Hit,
            Ending::Stale => Source::Stale,
            Ending::Computed => Source::Computed,
            Ending::Shared => Source::Shared,
            Ending::Degraded => return Err(CacheError::Degraded),
            Ending::Timeout => return Err(CacheError::Timeout),
            Ending::Error => {
                return Err(match answer.error {
                    Some(e) => CacheError::Origin(OriginError(e)),
                    None => CacheError::Failed(answer.cause.unwrap_or(FailCause::Unanswered)),
                })
            }
        };
        let value = match read.or_else(|| answer.decoded.take()) {
            Some(value) => value,
            None => {
                let unanswered = CacheError::Failed(FailCause::Unanswered);
                let bytes = answer.value.ok_or(unanswered)?;
                self.service()
                    .codec
                    .decode(&bytes)
                    .map_err(CacheError::Decode)?
            }
        };
        Ok(Fetched { value, source })
    }

    /// Deletes `key`'s value from Redis (and this instance's local copy,
    /// if [`CacheBuilder::local_copy`] is on; other instances' tracked
    /// copies go when Redis's invalidation reaches them, copies bounded in
    /// time alone when they age out: [`Coherence`]): the next request
    /// recomputes. A tombstone (a row with nothing to serve) stays for the
    /// claim TTL, so a fill already in flight cannot write the older value
    /// back: with fenced writes the tombstone takes a fencing number of its
    /// own, without it says when it was made, and an older fill's write is
    /// refused either way (the README's "Writes outside a fill").
    pub async fn invalidate(&self, key: impl Into<String>) -> Result<(), CacheError> {
        let key = checked(key.into())?;
        self.driver
            .invalidate(&key)
            .await
            .map_err(|e| CacheError::Redis(e.to_string()))
    }

    /// Writes `value` as `key`'s value now: fresh for the value TTL, then
    /// stale for the stale window, as a fill writes it. A fill already in
    /// flight cannot overwrite it: with fenced writes, the set takes a
    /// fencing number of its own, newer than the fill's claim; without, its
    /// version (now) is newer than the fill's (when its computation
    /// started). `Ok(false)` when it was itself refused as older: a fill
    /// under a newer claim wrote in between (or, unfenced, a row newer by
    /// this instance's clock), and that value stays.
    /// The value's TTL is [`CacheBuilder::ttl_for`]'s for it, if any, else
    /// the builder's [`CacheBuilder::ttl`].
    pub async fn set(&self, key: impl Into<String>, value: &V) -> Result<bool, CacheError> {
        let key = checked(key.into())?;
        let ttl = self.service().ttl_for.as_ref().and_then(|f| f(&key, value));
        self.write(key, value, ttl).await
    }

    /// As [`Cache::set`], fresh for `ttl` (a [`Duration`]; Redis keeps
    /// whole milliseconds, at least 1) instead of the builder's TTL, then
    /// stale for the stale window.
    pub async fn set_with_ttl(
        &self,
        key: impl Into<String>,
        value: &V,
        ttl: Duration,
    ) -> Result<bool, CacheError> {
        let key = checked(key.into())?;
        self.write(key, value, Some(ttl)).await
    }

    async fn write(
        &self,
        key: String,
        value: &V,
        ttl: Option<Duration>,
    ) -> Result<bool, CacheError> {
        let payload = self
            .service()
            .codec
            .encode(value)
            .map_err(CacheError::Encode)?;
        self.driver
            .set(&key, &payload, ttl)
            .await
            .map_err(|e| CacheError::Redis(e.to_string()))
    }

    /// For a graceful shutdown. From the call on, this cache and its clones
    /// refuse every new [`Cache::get`] and [`Cache::get_with`] with
    /// [`CacheError::Draining`] (refused rather than served without a
    /// claim, which would stampede the origin beside another instance's
    /// holder; see ARCHITECTURE.md; with the `metrics` feature each refusal
    /// is counted in `stampede_drain_refused_total`); [`Cache::set`] and
    /// [`Cache::invalidate`] still write. Then it waits until every request
    /// already let in has ended (its flight settled and its waiters
    /// answered, its value written, its claim released), or `within` has
    /// passed. True when they all ended. The drain is never undone: a
    /// service drains the cache it is about to drop. A runtime shut down
    /// under running requests cuts them where they stand, and a claim one
    /// held then blocks its key on every instance until its TTL.
    pub async fn drain(&self, within: Duration) -> bool {
        self.driver.start_drain();
        let until = tokio::time::Instant::now() + within;
        while self.driver.unfinished() > 0 {
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

    /// How this instance's local copies stand
    /// ([`CacheBuilder::local_copy`]): none, bounded in time alone, tracked
    /// (a write on any instance drops them), or suspended while the
    /// tracking connection is down.
    pub fn coherence(&self) -> Coherence {
        self.driver.coherence()
    }

    /// Where the Redis breaker stands now ([`CacheBuilder::redis_breaker`];
    /// always [`BreakerState::Closed`] without one).
    pub fn breaker(&self) -> BreakerState {
        self.driver.breaker()
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
            redis_skipped: get(&c.redis_skipped),
            invalidations: self.driver.tracking_counts().0,
            tracking_lost: self.driver.tracking_counts().1,
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
    /// Redis commands not sent because the breaker was open (or half
    /// open, its probe out): each failed at once
    /// ([`CacheBuilder::redis_breaker`]).
    pub redis_skipped: u64,
    /// Keys whose local copy Redis's tracking invalidated (a write or a
    /// delete, by any client; a flush counts once)
    /// ([`CacheBuilder::local_copy`]).
    pub invalidations: u64,
    /// Times the local copies' tracking connection was lost, every copy
    /// dropped with it.
    pub tracking_lost: u64,
    /// Value writes refused as older: a newer fence had written, or
    /// (unfenced) the stored row was newer: a `set`, an `invalidate`'s
    /// tombstone, or a fill that started later.
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

/// The `source` label of a request's answer in [`obs::GET_SECONDS`]
/// (`None`: a refusal while draining, not recorded).
fn source_label<V>(got: &Result<Fetched<V>, CacheError>) -> Option<&'static str> {
    Some(match got {
        Ok(f) => match f.source {
            Source::Hit => "Hit",
            Source::Waited => "Waited",
            Source::Stale => "Stale",
            Source::Computed => "Computed",
            Source::Shared => "Shared",
        },
        Err(CacheError::Draining) => return None,
        Err(CacheError::Timeout) => "Timeout",
        Err(CacheError::Degraded) => "Degraded",
        Err(CacheError::Origin(_)) => "OriginError",
        Err(CacheError::Failed(cause)) => cause.name(),
        Err(_) => "Error",
    })
}

/// Builds a [`Cache`]. Defaults: singleflight on, [`ClaimMode::Inner`],
/// [`LoserPolicy::Wait`], [`RedisErrorPolicy::Open`], a 1 s deadline, a
/// 3 s origin timeout, values fresh for 10 s, no stale window, a claim TTL
/// that follows the origin timeout (see [`CacheBuilder::claim_ttl`]: 3.2 s
/// with the other defaults), a 50 ms poll, a 100 ms Redis timeout
/// ([`REDIS_TIMEOUT`]), no breaker, no local
/// copy, no negative caching, no admission limit, no jitter, no XFetch, unfenced
/// writes, no key prefix, no origin (each setter's documentation gives its
/// default and its unit). Every duration is a [`Duration`]: those Redis
/// keeps (the value TTL, the stale window, the claim TTL, the negative
/// TTL, a per-entry TTL) in whole milliseconds (a shorter one counts as
/// 1 ms), the others on tokio's clock.
pub struct CacheBuilder<V, C = Json> {
    target: Option<Target>,
    /// The service's own client, the cache making the connection with its
    /// own bounds ([`manager_config`]); used instead of `target`.
    client: Option<redis::Client>,
    /// The service's own connection, used instead of `target` or `client`.
    connection: Option<Conn>,
    strategy: Strategy,
    /// The claim TTL was given ([`CacheBuilder::claim_ttl`]); otherwise it
    /// follows the origin timeout.
    claim_ttl_given: bool,
    /// The origin timeout was given ([`CacheBuilder::origin_timeout`]):
    /// the service said how long its origin may take, so the deadline is
    /// held to it.
    origin_timeout_given: bool,
    settings: Settings,
    origin: Option<TypedOrigin<V>>,
    ttl_for: Option<TtlFor<V>>,
    /// Put before every Redis key the cache names.
    prefix: String,
    /// The cache's name, its metrics' `cache` label.
    name: String,
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
            client: None,
            connection: None,
            claim_ttl_given: false,
            origin_timeout_given: false,
            strategy: Strategy {
                singleflight: true,
                claim: CoreClaim::Inner,
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
                // The driver releases a timed-out claim itself.
                release_timed_out_claims: true,
            },
            settings: Settings::service(),
            origin: None,
            ttl_for: None,
            prefix: String::new(),
            name: String::new(),
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

    /// The service's own connection, instead of [`CacheBuilder::redis`]:
    /// one server's connection manager made with the crate's reconnection
    /// bounds ([`conn::manager`](crate::conn::manager): back within about
    /// a quarter of a second of a Redis restart), shared with the
    /// service's own commands, or a cluster's `ClusterConnection`. The
    /// cache shares it and loads its scripts on it when built (Redis must
    /// be up then), and bounds each command by its Redis timeout
    /// ([`CacheBuilder::redis_timeout`]).
    ///
    /// **A redis-rs `ConnectionManager` the service made itself is refused
    /// at build** ([`BuildError::Reconnection`]): how soon it comes back
    /// after Redis restarts is its own backoff, which the cache can
    /// neither read nor bound (one made with redis-rs's defaults,
    /// `ConnectionManager::new`, was measured away for 102 s after a
    /// restart, every request going to the origin meanwhile). Make it
    /// with [`conn::manager`](crate::conn::manager), or hand the cache the
    /// client instead ([`CacheBuilder::client`]). Should every command on
    /// the connection fail for 5 s, the cache says so in a `WARN` (feature
    /// `tracing`, at most once a second).
    pub fn connection(mut self, connection: impl Into<Conn>) -> Self {
        self.connection = Some(connection.into());
        self
    }

    /// The service's own redis-rs `Client` (its URL, credentials, TLS),
    /// instead of [`CacheBuilder::redis`]: the cache makes its connection
    /// manager from it with its own bounds ([`conn::manager`](crate::conn::manager)'s: back within
    /// about a quarter of a second of a Redis restart), and, if Redis is
    /// not there when the cache is built, connects in the background as
    /// with a URL.
    pub fn client(mut self, client: redis::Client) -> Self {
        self.client = Some(client);
        self
    }

    /// A prefix put before every Redis key the cache writes or reads: the
    /// value `PREFIXvalue:{k}` (its negative-cache mark is in its header),
    /// the claim `PREFIXlock:{k}`, the fence `PREFIXfence:{k}`; so several
    /// services (or versions) can share a Redis, and an ACL can grant
    /// `~PREFIX*`. Text, used as given; no `{` or `}` (the `{k}` hash tag
    /// keeps a key's three Redis keys in one cluster slot, and a brace in
    /// the prefix would change it: [`BuildError::KeyPrefix`]). Default:
    /// none.
    pub fn key_prefix(mut self, prefix: impl Into<String>) -> Self {
        self.prefix = prefix.into();
        self
    }

    /// The cache's name: the `cache` label of every metric it reports
    /// (feature `metrics`), so that several caches in one process can be
    /// told apart. Default: empty.
    pub fn name(mut self, name: impl Into<String>) -> Self {
        self.name = name.into();
        self
    }

    /// Coalesce the requests of one key inside the process.
    pub fn singleflight(mut self, on: bool) -> Self {
        self.strategy.singleflight = on;
        self
    }

    /// The claim across instances, on Redis.
    pub fn claim(mut self, mode: ClaimMode) -> Self {
        self.strategy.claim = mode.core();
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

    /// How long a written value is fresh (a [`Duration`]; Redis keeps
    /// whole milliseconds, at least 1). Default: 10 s. An entry can have
    /// its own: [`CacheBuilder::ttl_for`], [`Cache::set_with_ttl`].
    pub fn ttl(mut self, ttl: Duration) -> Self {
        self.settings.value_ttl = ttl;
        self
    }

    /// How long after it stops being fresh a value may still be served
    /// stale (a [`Duration`], whole milliseconds); a non-zero window also
    /// turns on stale-while-revalidate (the stale value is answered at once
    /// and one request refreshes it). Default: zero, none.
    pub fn stale(mut self, window: Duration) -> Self {
        self.settings.stale = window;
        self.strategy.stale_while_revalidate = !window.is_zero();
        self
    }

    /// Each request's budget from its arrival (a [`Duration`], kept to the
    /// microsecond): it bounds the caller's wait, never the work. Default:
    /// 1 s.
    ///
    /// The rule: a miss sends up to three Redis commands before its origin
    /// call (the read; with a claim, the claim; with a claim or
    /// singleflight, the re-check), each bounded by the Redis timeout
    /// ([`CacheBuilder::redis_timeout`]). With Redis down or paused they
    /// can use that much of the deadline first: 300 ms with the defaults.
    ///
    /// - **deadline ≤ that Redis path**: no time is left for the origin at
    ///   all; [`CacheBuilder::build`] refuses it ([`BuildError::Deadline`],
    ///   naming the numbers).
    /// - **deadline < that Redis path + the origin timeout**
    ///   ([`CacheBuilder::origin_timeout`]): built, with one `WARN` event
    ///   (feature `tracing`) naming the numbers: with Redis down, a request
    ///   may answer [`CacheError::Timeout`] (a 504) before a slow origin
    ///   answers, though the origin's work goes on and fills the cache.
    ///   Only an origin timeout the service set counts: the 3 s default
    ///   bounds the origin's work, it does not say the origin takes that
    ///   long, so the defaults (1 s against 300 ms + 3 s) build quietly. Set
    ///   the origin timeout to what the origin really takes, and the
    ///   deadline to cover it.
    pub fn deadline(mut self, deadline: Duration) -> Self {
        self.strategy.deadline = Some(micros(deadline));
        self
    }

    /// The origin call's own bound (a [`Duration`], kept to the
    /// microsecond): past it the call counts as failed
    /// ([`CacheError::Failed`] with [`FailCause::OriginTimeout`]). Default:
    /// 3 s.
    pub fn origin_timeout(mut self, timeout: Duration) -> Self {
        self.strategy.origin_timeout = Some(micros(timeout));
        self.origin_timeout_given = true;
        self
    }

    /// How long a claim holds if its holder never releases it (a
    /// [`Duration`]; Redis keeps whole milliseconds, at least 1).
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
    /// it answers this instance's reads with no round trip. A copy never
    /// outlives the value's own freshness: it ends at the value's TTL if
    /// that comes first. Zero (the default) keeps none.
    ///
    /// On a Redis or a cluster the cache connects to itself
    /// ([`CacheBuilder::redis`], or [`CacheBuilder::client`]), the copies
    /// are kept coherent: a connection of their own (on a cluster, one to
    /// each primary, made again when the primaries change) asks Redis to
    /// track the value
    /// keys (`CLIENT TRACKING ON BCAST`, RESP3, Redis 6 or later), and a
    /// write or delete of a value by any client ([`Cache::set`],
    /// [`Cache::invalidate`], a fill on another instance) drops this
    /// instance's copy as soon as Redis's invalidation arrives. While that
    /// connection is down (not made yet, lost, or its heartbeat `PING`
    /// unanswered), no copy is kept or answered ([`Coherence::Suspended`]).
    /// On a cluster, a write on a primary that just took slots can go
    /// unseen until the next heartbeat sees the change (about a second,
    /// and the `CLUSTER SLOTS` reply's bound). On a connection the service
    /// made ([`CacheBuilder::connection`]), or on a Redis that cannot track,
    /// copies are bounded in time alone: a write elsewhere is seen up to
    /// this late ([`Coherence::TimeBounded`]). [`Cache::coherence`] says
    /// which.
    pub fn local_copy(mut self, for_: Duration) -> Self {
        self.settings.local_cache = for_;
        self
    }

    /// The breaker: after a Redis command fails or times out, send nothing
    /// to Redis for this long (each command fails at once, unsent, as
    /// [`CacheBuilder::on_redis_error`] says). Then it is half open: the
    /// next command goes out as a probe while the others still fail at
    /// once; the probe's answer closes the breaker, its failure (or
    /// timeout) opens it for this long again. So a Redis still down costs
    /// one command per period, not a burst of timeouts, and a Redis back is
    /// used again one round trip after the period ends. A probe whose
    /// caller left before its answer passes the probe to the next command.
    /// A holder's claim release is sent even while the breaker is open (a
    /// claim left would block its key on every instance). Where it stands:
    /// [`Cache::breaker`], [`CacheStats::redis_skipped`], and the gauge
    /// `stampede_breaker_open` (feature `metrics`). Zero (the default) is
    /// no breaker.
    pub fn redis_breaker(mut self, open_for: Duration) -> Self {
        self.settings.redis_breaker = open_for;
        self
    }

    /// How often a waiting loser re-reads Redis (a [`Duration`], at least
    /// 1 ms). Default: 50 ms.
    pub fn poll(mut self, every: Duration) -> Self {
        self.strategy.poll = micros(every).max(1000);
        self
    }

    /// Cache an origin failure in Redis for this long (a [`Duration`];
    /// whole milliseconds, at least 1); zero (the default) caches none.
    pub fn negative_ttl(mut self, ttl: Duration) -> Self {
        self.strategy.negative_ttl = (!ttl.is_zero()).then(|| micros(ttl));
        self
    }

    /// At most `max` origin calls at once in this process (a count; 0, the
    /// default, is no limit); a recompute that waits longer than `wait` (a
    /// [`Duration`]) for a slot is shed.
    pub fn admission(mut self, max: usize, wait: Duration) -> Self {
        self.settings.admission = max;
        self.strategy.admission = max > 0;
        self.strategy.admission_wait = micros(wait);
        self
    }

    /// Spread each written TTL over ttl × [1 − j, 1 + j]: `fraction` is a
    /// fraction of the TTL in [0, 1] (clamped). Default: 0, none.
    pub fn jitter(mut self, fraction: f64) -> Self {
        self.settings.jitter = fraction.clamp(0.0, 1.0);
        self
    }

    /// XFetch: refresh a fresh value early, with this eagerness `beta` (a
    /// factor with no unit, ≥ 0; 1 is XFetch's usual, 0 the default, off).
    pub fn xfetch(mut self, beta: f64) -> Self {
        let beta = beta.max(0.0);
        self.strategy.xfetch_beta = beta;
        self.settings.xfetch = beta > 0.0;
        self
    }

    /// Writes carry the claim's fencing number; older ones are refused. A
    /// switch; default off.
    pub fn fenced_writes(mut self, on: bool) -> Self {
        self.strategy.fenced_writes = on;
        self
    }

    /// The origin: any async closure of the key. Its error, of any error
    /// type (or a `String`), is kept: [`CacheError::Origin`] carries it to
    /// the caller and to its flight's followers
    /// ([`OriginError::downcast_ref`] gives back its type). Optional: a
    /// cache without one is read with [`Cache::get_with`].
    pub fn origin<F, Fut, E>(mut self, origin: F) -> Self
    where
        F: Fn(String) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<V, E>> + Send + 'static,
        E: Into<BoxError>,
    {
        self.origin = Some(Arc::new(move |key: String| {
            let fut = origin(key);
            Box::pin(async move { fut.await.map_err(Into::into) })
        }));
        self
    }

    /// Each entry's own TTL, from its key and value: `Some(ttl)` (a
    /// [`Duration`]; whole milliseconds, at least 1) is how long that
    /// entry stays fresh, `None` the builder's [`CacheBuilder::ttl`].
    /// Applied to every value the origin, a [`Cache::get_with`] loader or
    /// [`Cache::set`] writes (as moka's per-entry expiry). The stale
    /// window and the jitter apply after it as after the builder's TTL.
    pub fn ttl_for(
        mut self,
        f: impl Fn(&str, &V) -> Option<Duration> + Send + Sync + 'static,
    ) -> Self {
        self.ttl_for = Some(Arc::new(f));
        self
    }

    /// How values are stored ([`Json`] unless changed).
    pub fn codec<C2>(self, codec: C2) -> CacheBuilder<V, C2> {
        CacheBuilder {
            target: self.target,
            client: self.client,
            connection: self.connection,
            claim_ttl_given: self.claim_ttl_given,
            origin_timeout_given: self.origin_timeout_given,
            strategy: self.strategy,
            settings: self.settings,
            origin: self.origin,
            ttl_for: self.ttl_for,
            prefix: self.prefix,
            name: self.name,
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
        if s.claim != CoreClaim::Off && s.claim_ttl < origin_timeout + write {
            return Err(BuildError::ClaimTtl {
                claim_ttl: Duration::from_micros(s.claim_ttl),
                origin_timeout: Duration::from_micros(origin_timeout),
                write: Duration::from_micros(write),
            });
        }
        Ok(s.claim_ttl)
    }

    /// How many Redis commands a miss sends before its origin call, each
    /// bounded by the Redis timeout: the read; with a claim, the claim;
    /// with a claim or a flight to lead, the re-check after winning.
    fn commands_before_origin(&self) -> u32 {
        let s = &self.strategy;
        let claim = s.claim != CoreClaim::Off;
        1 + u32::from(claim) + u32::from(claim || s.singleflight)
    }

    /// The deadline's rule ([`CacheBuilder::deadline`]): refused if it
    /// leaves the origin no time at all once the Redis commands before it
    /// have timed out; one `WARN` if it is shorter than those commands and
    /// the origin timeout.
    fn check_deadline(&self) -> Result<(), BuildError> {
        let Some(deadline) = self.strategy.deadline else {
            return Ok(());
        };
        let commands = self.commands_before_origin();
        let redis_timeout = self.settings.redis_timeout;
        let redis_path = micros(redis_timeout).saturating_mul(u64::from(commands));
        if deadline <= redis_path {
            return Err(BuildError::Deadline {
                deadline: Duration::from_micros(deadline),
                commands,
                redis_timeout,
            });
        }
        // The default origin timeout bounds the work, not what the origin
        // takes: only one the service gave says how long that is.
        let origin_timeout = self.strategy.origin_timeout.unwrap_or(0);
        if self.origin_timeout_given && deadline < redis_path.saturating_add(origin_timeout) {
            obs::short_deadline(
                &self.prefix,
                deadline / 1000,
                commands,
                redis_path / 1000,
                origin_timeout / 1000,
            );
        }
        Ok(())
    }

    /// Connects to Redis and loads the scripts.
    ///
    /// A Redis that cannot be reached (down, refusing, not there yet) does
    /// not stop the service: the cache is built all the same and connects
    /// in the background, trying every [`CONNECT_RETRY`](crate::conn::CONNECT_RETRY)
    /// (250 ms) until it is there. Meanwhile every Redis command fails at
    /// once, unsent, and requests are served as in any Redis outage, under
    /// [`CacheBuilder::on_redis_error`] (open, the default: from the
    /// origin, singleflight still coalescing each process's callers). A URL
    /// that cannot be read is refused ([`BuildError::Redis`]), as is a
    /// connection given with [`CacheBuilder::connection`] on which the
    /// scripts do not load.
    ///
    /// Refuses a claim TTL shorter than the origin timeout plus the write
    /// ([`BuildError::ClaimTtl`]), and a deadline no longer than the Redis
    /// commands on a miss's path ([`BuildError::Deadline`]); warns of one
    /// shorter than those commands plus the origin timeout (the rule:
    /// [`CacheBuilder::deadline`]).
    pub async fn build(mut self) -> Result<Cache<V, C>, BuildError> {
        self.strategy.claim_ttl = self.claim_ttl_to_use()?;
        self.check_deadline()?;
        if self.prefix.contains(['{', '}']) {
            return Err(BuildError::KeyPrefix(self.prefix));
        }
        let origin = ServiceOrigin {
            origin: self.origin,
            codec: Arc::new(self.codec),
            ttl_for: self.ttl_for,
        };
        let (strategy, mut settings) = (self.strategy, self.settings);
        settings.own_connection = self.connection.is_some();
        let bound = settings.redis_timeout;
        // Where the tracking connections for the local copies go: a Redis
        // or a cluster the cache connects to itself (not a connection the
        // service made, whose addresses it does not know).
        let info = |url: &String| {
            redis::Client::open(url.as_str())
                .ok()
                .map(|c| c.get_connection_info().clone())
        };
        let tracking = match (&self.connection, &self.client, &self.target) {
            (Some(_), _, _) => None,
            (None, Some(client), _) => Some(Tracking::One(client.get_connection_info().clone())),
            (None, None, Some(Target::Single(url))) => info(url).map(Tracking::One),
            (None, None, Some(Target::Cluster(urls))) => urls
                .iter()
                .map(info)
                .collect::<Option<Vec<_>>>()
                .filter(|seeds| !seeds.is_empty())
                .map(Tracking::Cluster),
            _ => None,
        };
        let con = match (self.connection, self.client, self.target) {
            (Some(con), _, _) => {
                if !con.reconnects_within_bounds() {
                    return Err(BuildError::Reconnection);
                }
                ready(con).await?
            }
            (None, Some(client), _) => {
                lazily(move || {
                    let client = client.clone();
                    async move {
                        let config = manager_config(bound);
                        let con = ConnectionManager::new_with_config(client, config).await?;
                        Ok(Conn::bounded(con))
                    }
                })
                .await?
            }
            (None, None, Some(target)) => {
                lazily(move || {
                    let target = target.clone();
                    async move { target.connect_bounded(bound).await }
                })
                .await?
            }
            (None, None, None) => {
                return Err(BuildError::Missing(
                    "a Redis (.redis(url), .client(client) or .connection(connection))",
                ))
            }
        };
        let made = con.made();
        let driver = Driver::on_link(con, strategy, settings, self.prefix, &self.name, origin);
        if let Some(info) = tracking {
            // Redis there: tracked from the first read. Not there: the
            // tracking connection is made in the background, as the
            // cache's own is.
            driver.track(info, made).await;
        }
        Ok(Cache {
            driver,
            _value: PhantomData,
        })
    }
}
