//! Observability: `tracing` spans and `metrics` counters, each behind its
//! cargo feature (both off by default). Without the features every hook
//! here is an empty inline function.
//!
//! Spans (feature `tracing`), at the `INFO` level:
//! - `stampede.get`, one per [`Cache::get`](crate::Cache::get) (and per
//!   request of the driver behind it), covering the request's task:
//!   `key`, `role` (`reader` until it joins a flight, then `leader` or
//!   `follower`; `promoted` for a follower that took a flight over;
//!   `waiter` once it polls Redis for the value of another instance's
//!   claim holder) and `ending` (`Hit`, `Waited`, `Stale`, `Computed`,
//!   `Shared`, `Degraded`, `Error`, `Timeout`: the [`Source`](crate::Source)
//!   of the answer's value, or why it has none).
//! - `stampede.group`, one per
//!   [`Group::get_or_compute`](crate::Group::get_or_compute): `role`
//!   (`leader`, `follower`) and `outcome` (`ok`, `error`, `panicked`,
//!   `timed_out`).
//!
//! Counters (feature `metrics`), each with a `component` label (`cache` or
//! `group`), and a cache's with its name as `cache`
//! ([`CacheBuilder::name`](crate::CacheBuilder::name); empty if not given):
//! - [`FLIGHTS`]: flights started (a request became a flight's leader);
//! - [`FOLLOWERS`]: requests that joined a running flight;
//! - [`CLAIM_WINS`] and [`CLAIM_LOSSES`]: claims on Redis won and found
//!   held;
//! - [`STALE_SERVED`]: stale values answered;
//! - [`TIMEOUTS`]: requests answered at their deadline without a value;
//! - [`REDIS_ERRORS`]: Redis commands that failed or did not answer in
//!   time;
//! - [`RELEASES`]: claim releases, with an `outcome` label: `released`,
//!   `expired` (nobody held the claim) or `taken` (another holder did);
//! - [`HITS`] and [`MISSES`]: fresh values answered from Redis, and first
//!   reads that found nothing fresh; of the hits, [`WAITED`] came after
//!   waiting on another instance's claim and [`LOCAL_HITS`] from the local
//!   copy (the rest: read from Redis at once);
//! - [`ORIGIN_CALLS`] and [`ORIGIN_ERRORS`]: origin calls, and those that
//!   failed (an error, a panic, the origin timeout); with the histogram
//!   [`ORIGIN_SECONDS`], each call's length in seconds;
//! - the gauges [`IN_FLIGHT`] (requests, and commands left after their
//!   caller, still running) and [`BREAKER_OPEN`] (1 while the Redis
//!   breaker is open);
//! - the histogram [`GET_SECONDS`]: each cache request's length, in
//!   seconds, by `source` (where its value came from, or `Timeout`,
//!   `Degraded`, `OriginError`, a [`FailCause`](crate::cache::FailCause)'s
//!   name, `Error`);
//! - [`DECODE_MISSES`]: stored values that did not decode, read as misses
//!   (each also a `WARN` event in the request's span, feature `tracing`);
//! - [`DRAIN_REFUSED`]: requests refused because the cache was draining
//!   ([`CacheError::Draining`](crate::cache::CacheError::Draining)).
//! - [`AMBIGUOUS_CLAIMS`]: claims whose reply never came (a paused or slow
//!   Redis), released by their token right after;
//! - [`WRITES_REFUSED`]: fenced value writes refused because a newer fence
//!   had written.
//!
//! Warnings (feature `tracing`), `WARN` events with the cache's key prefix
//! (`prefix`) and the error (`error`), each kind at most once per
//! [`WARN_EVERY`] per cache, the next one saying how many were held back
//! (`held_back`): a Redis command that failed or timed out, a claim whose
//! reply never came (with its `key`), and a stored value that did not
//! decode (with its `key`).
//!
//! [`CacheStats`](crate::CacheStats) keeps running totals of some of them
//! (origin calls, decode misses, releases, ambiguous claims, Redis errors,
//! refused writes) whether the feature is on or not.

use std::sync::atomic::{AtomicU64, Ordering};

/// Counter: flights started.
pub const FLIGHTS: &str = "stampede_flights_total";
/// Counter: requests that joined a running flight.
pub const FOLLOWERS: &str = "stampede_followers_total";
/// Counter: claims won on Redis.
pub const CLAIM_WINS: &str = "stampede_claim_wins_total";
/// Counter: claims found held by another instance.
pub const CLAIM_LOSSES: &str = "stampede_claim_losses_total";
/// Counter: stale values answered.
pub const STALE_SERVED: &str = "stampede_stale_served_total";
/// Counter: requests whose deadline passed without a value.
pub const TIMEOUTS: &str = "stampede_timeouts_total";
/// Counter: Redis commands that failed or did not answer in time.
pub const REDIS_ERRORS: &str = "stampede_redis_errors_total";

/// Counter: claim releases, by what they found (`outcome`: `released`,
/// `expired` when nobody held the claim, `taken` when another holder did).
pub const RELEASES: &str = "stampede_releases_total";

/// Counter: requests answered with a fresh value read from Redis (or a
/// local copy), after waiting on another instance's claim or not.
pub const HITS: &str = "stampede_hits_total";
/// Counter: of the [`HITS`], those read after waiting on another
/// instance's claim (`Source::Waited`).
pub const WAITED: &str = "stampede_waited_total";
/// Counter: of the [`HITS`], those answered from this instance's local
/// copy with no round trip ([`CacheBuilder::local_copy`](crate::CacheBuilder::local_copy)).
pub const LOCAL_HITS: &str = "stampede_local_hits_total";
/// Counter: requests whose first read found nothing fresh (no value, a
/// stale one, or one that did not decode).
pub const MISSES: &str = "stampede_misses_total";
/// Counter: origin calls.
pub const ORIGIN_CALLS: &str = "stampede_origin_calls_total";
/// Counter: origin calls that failed, panicked or passed the origin
/// timeout.
pub const ORIGIN_ERRORS: &str = "stampede_origin_errors_total";
/// Histogram: each origin call's length, in seconds (to its answer, or to
/// the origin timeout).
pub const ORIGIN_SECONDS: &str = "stampede_origin_seconds";

/// Histogram: each [`Cache::get`](crate::Cache::get)'s (and
/// `get_with`'s) length, in seconds, from the call to its answer, by
/// `source`: the answer's [`Source`](crate::Source) (`Hit`, `Waited`,
/// `Stale`, `Computed`, `Shared`), or for an answer without a value
/// `Timeout`, `Degraded`, `OriginError` (the origin's own error,
/// [`CacheError::Origin`](crate::CacheError::Origin)), the
/// [`FailCause`](crate::cache::FailCause)'s name for
/// [`CacheError::Failed`](crate::CacheError::Failed) (`OriginTimeout`,
/// `OriginPanicked`, `Remembered`, `OtherInstance`, `Unanswered`), or
/// `Error` (any other error but a refusal while draining, which is not
/// recorded).
pub const GET_SECONDS: &str = "stampede_get_seconds";

/// When a cache request started, for [`GET_SECONDS`]: with the `metrics`
/// feature only (without it, nothing, and no clock read).
pub(crate) struct Started {
    #[cfg(feature = "metrics")]
    at: std::time::Instant,
}

impl Started {
    #[inline]
    pub(crate) fn now() -> Started {
        Started {
            #[cfg(feature = "metrics")]
            at: std::time::Instant::now(),
        }
    }

    /// Records the request's length under `source` (`None`: not recorded).
    #[inline]
    pub(crate) fn answered(self, label: &Label, source: Option<&'static str>) {
        #[cfg(feature = "metrics")]
        if let Some(source) = source {
            metrics::histogram!(
                GET_SECONDS,
                "component" => "cache",
                "cache" => label.name.clone(),
                "source" => source
            )
            .record(self.at.elapsed().as_secs_f64());
        }
        #[cfg(not(feature = "metrics"))]
        let _ = (label, source);
    }
}

/// Gauge: cache requests still running (answered or not: a write, a
/// settle or a release may still be under way), and commands left to
/// finish after their caller (a claim released by its token).
pub const IN_FLIGHT: &str = "stampede_in_flight";
/// Gauge: 1 while the Redis breaker ([`CacheBuilder::redis_breaker`](crate::CacheBuilder::redis_breaker))
/// is open or half open, 0 once it closes: its probe, the first command
/// after its open period, was answered (it reads 1 until then).
pub const BREAKER_OPEN: &str = "stampede_breaker_open";

/// A cache's name, its metrics' `cache` label
/// ([`CacheBuilder::name`](crate::CacheBuilder::name); empty if not
/// given). Cheap to clone.
#[derive(Clone, Debug)]
pub(crate) struct Label {
    #[cfg(feature = "metrics")]
    name: metrics::SharedString,
}

impl Label {
    pub(crate) fn new(name: &str) -> Label {
        #[cfg(feature = "metrics")]
        {
            Label {
                name: metrics::SharedString::from_shared(std::sync::Arc::from(name)),
            }
        }
        #[cfg(not(feature = "metrics"))]
        {
            let _ = name;
            Label {}
        }
    }
}

/// Adds one to the cache's counter `name`.
#[inline]
pub(crate) fn count_cache(name: &'static str, label: &Label) {
    #[cfg(feature = "metrics")]
    metrics::counter!(name, "component" => "cache", "cache" => label.name.clone()).increment(1);
    #[cfg(not(feature = "metrics"))]
    let _ = (name, label);
}

/// Adds one to the cache's counter `name` for `outcome`.
#[inline]
pub(crate) fn count_cache_outcome(name: &'static str, label: &Label, outcome: &'static str) {
    #[cfg(feature = "metrics")]
    metrics::counter!(name, "component" => "cache", "cache" => label.name.clone(), "outcome" => outcome)
        .increment(1);
    #[cfg(not(feature = "metrics"))]
    let _ = (name, label, outcome);
}

/// Records `d` in seconds in the cache's histogram `name`.
#[inline]
pub(crate) fn cache_seconds(name: &'static str, label: &Label, d: std::time::Duration) {
    #[cfg(feature = "metrics")]
    metrics::histogram!(name, "component" => "cache", "cache" => label.name.clone())
        .record(d.as_secs_f64());
    #[cfg(not(feature = "metrics"))]
    let _ = (name, label, d);
}

/// Sets the cache's gauge `name` to `v`.
#[inline]
pub(crate) fn cache_gauge(name: &'static str, label: &Label, v: f64) {
    #[cfg(feature = "metrics")]
    metrics::gauge!(name, "component" => "cache", "cache" => label.name.clone()).set(v);
    #[cfg(not(feature = "metrics"))]
    let _ = (name, label, v);
}

/// Adds `v` (negative: takes away) to the cache's gauge `name`.
#[inline]
pub(crate) fn cache_gauge_add(name: &'static str, label: &Label, v: f64) {
    #[cfg(feature = "metrics")]
    metrics::gauge!(name, "component" => "cache", "cache" => label.name.clone()).increment(v);
    #[cfg(not(feature = "metrics"))]
    let _ = (name, label, v);
}

/// Counter: stored values that did not decode, read as misses.
pub const DECODE_MISSES: &str = "stampede_decode_misses_total";

/// Counter: requests ([`Cache::get`](crate::Cache::get),
/// [`Cache::get_with`](crate::Cache::get_with)) refused because a drain
/// had started ([`Cache::drain`](crate::Cache::drain)): each answered
/// [`CacheError::Draining`](crate::cache::CacheError::Draining), with no
/// read, flight or claim.
pub const DRAIN_REFUSED: &str = "stampede_drain_refused_total";

/// Counter: claims whose reply never came (the Redis timeout passed: a
/// paused or slow Redis may still run them), each released by its token
/// right after, whatever it found
/// ([`CacheStats::ambiguous_claims`](crate::CacheStats::ambiguous_claims)).
pub const AMBIGUOUS_CLAIMS: &str = "stampede_ambiguous_claims_total";

/// Counter: value writes refused as older: by the fence, a newer holder, a
/// set or a delete had written
/// ([`CacheBuilder::fenced_writes`](crate::CacheBuilder::fenced_writes));
/// unfenced, the stored row was newer (a set, a delete, a fill that
/// started later) ([`CacheStats::writes_refused`](crate::CacheStats::writes_refused)).
pub const WRITES_REFUSED: &str = "stampede_writes_refused_total";

/// How often a cache logs one kind of warning at most: a fault repeats
/// for every request while it lasts, its log line does not.
pub const WARN_EVERY: std::time::Duration = std::time::Duration::from_secs(1);

/// At most one warning of a kind per [`WARN_EVERY`]; those held back are
/// counted and the next one that goes out says how many.
#[derive(Debug, Default)]
#[cfg_attr(not(feature = "tracing"), allow(dead_code))]
pub(crate) struct Limit {
    /// The next warning may go out from then (µs on the cache's clock).
    next: AtomicU64,
    /// Warnings held back since the last that went out.
    held: AtomicU64,
}

#[cfg_attr(not(feature = "tracing"), allow(dead_code))]
impl Limit {
    /// `Some(held back since the last one)` if a warning may go out at
    /// `now` (µs on the cache's clock); `None`, counted, if not.
    pub(crate) fn admit(&self, now: u64) -> Option<u64> {
        let next = self.next.load(Ordering::Relaxed);
        let every = WARN_EVERY.as_micros() as u64;
        if now < next
            || self
                .next
                .compare_exchange(next, now + every, Ordering::Relaxed, Ordering::Relaxed)
                .is_err()
        {
            self.held.fetch_add(1, Ordering::Relaxed);
            return None;
        }
        Some(self.held.swap(0, Ordering::Relaxed))
    }
}

/// A cache's warnings, each kind limited on its own.
#[derive(Debug, Default)]
pub(crate) struct Warnings {
    pub(crate) redis: Limit,
    pub(crate) unanswered: Limit,
    pub(crate) decode: Limit,
    pub(crate) own_connection: Limit,
}

/// A stored value that did not decode was read as a miss: a `WARN` event
/// in the request's span (feature `tracing`), with the cache's key prefix,
/// the key and why; at most one per [`WARN_EVERY`] (`held_back`: how many
/// were not logged since the last).
#[inline]
pub(crate) fn decode_miss(limit: &Limit, now: u64, prefix: &str, key: &str, why: &str) {
    #[cfg(feature = "tracing")]
    if let Some(held_back) = limit.admit(now) {
        tracing::warn!(
            prefix,
            key,
            error = why,
            held_back,
            "the stored value did not decode: read as a miss"
        );
    }
    #[cfg(not(feature = "tracing"))]
    let _ = (limit, now, prefix, key, why);
}

/// The deadline is shorter than the Redis commands on a miss's path plus
/// the origin timeout: one `WARN` event when the cache is built (feature
/// `tracing`), with the numbers, in milliseconds, and the rule.
#[cold]
pub(crate) fn short_deadline(
    prefix: &str,
    deadline_ms: u64,
    commands: u32,
    redis_path_ms: u64,
    origin_timeout_ms: u64,
) {
    #[cfg(feature = "tracing")]
    tracing::warn!(
        prefix,
        deadline_ms,
        redis_commands = commands,
        redis_path_ms,
        origin_timeout_ms,
        "the deadline ({deadline_ms} ms) is shorter than the Redis commands before the origin call \
         ({commands} timeouts, {redis_path_ms} ms) plus the origin timeout ({origin_timeout_ms} ms): \
         with Redis down, a request may answer Timeout (a 504) before the origin answers; \
         the rule is deadline >= Redis path + origin timeout"
    );
    #[cfg(not(feature = "tracing"))]
    let _ = (
        prefix,
        deadline_ms,
        commands,
        redis_path_ms,
        origin_timeout_ms,
    );
}

/// A Redis command failed or did not answer in time: a `WARN` event
/// (feature `tracing`) with the cache's key prefix and the error; at most
/// one per [`WARN_EVERY`] (`held_back`: how many were not logged since
/// the last).
#[inline]
pub(crate) fn redis_error(limit: &Limit, now: u64, prefix: &str, error: &dyn std::fmt::Display) {
    #[cfg(feature = "tracing")]
    if let Some(held_back) = limit.admit(now) {
        tracing::warn!(
            prefix,
            error = %error,
            held_back,
            "a Redis command failed or timed out"
        );
    }
    #[cfg(not(feature = "tracing"))]
    let _ = (limit, now, prefix, error);
}

/// Every command on the connection the service gave
/// ([`CacheBuilder::connection`](crate::CacheBuilder::connection)) has
/// failed for `for_ms`: a `WARN` event (feature `tracing`) with the
/// cache's key prefix, how long, and the last error, at most one per
/// [`WARN_EVERY`]. (One server's manager is one the crate made, with its
/// reconnection bounds, `conn::manager`: a manager made by the service is
/// refused at build. A cluster connection reconnects each node itself.)
#[inline]
pub(crate) fn own_connection_down(
    limit: &Limit,
    now: u64,
    prefix: &str,
    for_ms: u64,
    error: &dyn std::fmt::Display,
) {
    #[cfg(feature = "tracing")]
    if let Some(held_back) = limit.admit(now) {
        tracing::warn!(
            prefix,
            for_ms,
            error = %error,
            held_back,
            "every Redis command on the service's own connection has failed for a while"
        );
    }
    #[cfg(not(feature = "tracing"))]
    let _ = (limit, now, prefix, for_ms, error);
}

/// A claim's reply never came (it is released by its token): a `WARN`
/// event (feature `tracing`) with the cache's key prefix, the key and the
/// error; at most one per [`WARN_EVERY`].
#[inline]
pub(crate) fn unanswered_claim(
    limit: &Limit,
    now: u64,
    prefix: &str,
    key: &str,
    error: &dyn std::fmt::Display,
) {
    #[cfg(feature = "tracing")]
    if let Some(held_back) = limit.admit(now) {
        tracing::warn!(
            prefix,
            key,
            error = %error,
            held_back,
            "a claim's reply never came: released by its token"
        );
    }
    #[cfg(not(feature = "tracing"))]
    let _ = (limit, now, prefix, key, error);
}

/// Adds one to counter `name` for `component`.
#[inline]
pub(crate) fn count(name: &'static str, component: &'static str) {
    #[cfg(feature = "metrics")]
    metrics::counter!(name, "component" => component).increment(1);
    #[cfg(not(feature = "metrics"))]
    let _ = (name, component);
}

/// Records `field = value` on the current span (the request's, inside its
/// task).
#[inline]
pub(crate) fn record(field: &'static str, value: &'static str) {
    #[cfg(feature = "tracing")]
    tracing::Span::current().record(field, value);
    #[cfg(not(feature = "tracing"))]
    let _ = (field, value);
}

/// A span that is never entered: it opens when made and closes when
/// dropped, carrying what was recorded on it.
pub(crate) struct Span {
    #[cfg(feature = "tracing")]
    span: tracing::Span,
}

impl Span {
    /// `stampede.group` for a caller in `role`.
    #[inline]
    pub(crate) fn group(role: &'static str) -> Span {
        #[cfg(feature = "tracing")]
        {
            Span {
                span: tracing::info_span!("stampede.group", role, outcome = tracing::field::Empty),
            }
        }
        #[cfg(not(feature = "tracing"))]
        {
            let _ = role;
            Span {}
        }
    }

    #[inline]
    pub(crate) fn record(&self, field: &'static str, value: &'static str) {
        #[cfg(feature = "tracing")]
        self.span.record(field, value);
        #[cfg(not(feature = "tracing"))]
        let _ = (field, value);
    }
}

/// The request's span, `stampede.get`, around its task.
#[cfg(feature = "tracing")]
pub(crate) fn request_span(key: &str) -> tracing::Span {
    tracing::info_span!(
        "stampede.get",
        key,
        role = "reader",
        ending = tracing::field::Empty
    )
}
