//! Every knob of a simulated fleet in one serde struct, and its validation.
//! Validation never panics: out-of-range numbers are clamped and unknown or
//! garbled input falls back to the default, and every such decision is
//! reported as a [`Notice`] that says which knob and why.
//!
//! - [`presets`]: named scenarios, the interview card's and one per lesson
//!   (their words are the catalogue crate's).
//! - [`link`]: the compact share-link form, the knobs by name, the parsers.

mod link;
mod presets;

pub use link::*;
pub use presets::*;

use serde::{Deserialize, Serialize};
use std::fmt;

/// Upper bound on instances x threads: each thread owns a state machine slot,
/// and a million of them is what a browser tab can hold comfortably.
pub const MAX_TOTAL_THREADS: u64 = 1_000_000;
/// A shared URL longer than this is not parsed at all.
pub const MAX_QUERY_LEN: usize = 4096;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Workload {
    /// A hot key is missing at t=0 and every thread asks for it within `spread_ms`.
    Burst,
    /// Closed-loop traffic over time across keys; values expire and are refreshed.
    Steady,
    /// A restart: the cache is empty and threads ask for many distinct keys at once.
    Cold,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ClaimMode {
    /// No cross-instance claim.
    Off,
    /// Singleflight outside, claim inside: one claim attempt per instance.
    Inner,
    /// Claim outside: every thread claims, the winner then coalesces.
    Outer,
    /// The claim guards only the refresh of a stale value; a miss with
    /// nothing to serve coalesces in-process and computes without any claim,
    /// so no caller ever waits on a lock.
    Refresh,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum LoserPolicy {
    /// Serve the stale value if there is one; with nothing to serve, compute.
    Stale,
    /// Poll the cache until the value appears or the deadline passes.
    Wait,
    /// Answer at once with a degraded response.
    Degrade,
    /// Recompute anyway (duplicate work, but nobody waits).
    Compute,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum RedisErrorPolicy {
    /// A claim that errors counts as won: the refresh goes on without a lock.
    Open,
    /// A claim that errors counts as lost: the loser policy applies.
    Closed,
}

/// How steady traffic arrives.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Arrivals {
    /// Each thread sends its next request a think time after its last one
    /// ends: load falls when the service slows.
    Closed,
    /// Requests arrive at `rate_per_s` whatever the latency, as many
    /// independent users send them; an instance's threads are its pool, a
    /// request finding them busy waits in an accept queue (its deadline
    /// still runs) or, with the queue full, is rejected.
    Open,
}

/// What a Redis that is down does to a command sent to it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum RedisOutage {
    /// An error one round trip later (a refused connection).
    Error,
    /// No answer: the client gives up after `redis_timeout_ms` (a network
    /// partition, a paused or overloaded server).
    Hang,
}

/// A fault that starts at a moment of the run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum FaultKind {
    /// Redis is down (as `redis_outage` says: errors or hangs).
    Redis,
    /// Every origin call started meanwhile fails.
    Origin,
    /// Every origin call started meanwhile never answers.
    OriginHang,
    /// Every origin call started meanwhile takes ten times as long.
    OriginSlow,
    /// Whoever holds a claim at the start dies holding it (with nobody
    /// holding one, the next claim winner does).
    Holder,
    /// A deploy re-warms the cache at the start: every key holding a value
    /// is written again at that instant with the same TTL and no jitter, so
    /// they all expire together one `value_ttl_ms` later and the misses of
    /// every key land at once, however the TTLs were spread before.
    TtlSync,
}

impl FaultKind {
    pub const ALL: [FaultKind; 6] = [
        FaultKind::Redis,
        FaultKind::Origin,
        FaultKind::OriginHang,
        FaultKind::OriginSlow,
        FaultKind::Holder,
        FaultKind::TtlSync,
    ];

    /// Its name in a link and on the command line.
    pub fn name(self) -> &'static str {
        match self {
            FaultKind::Redis => "redis",
            FaultKind::Origin => "origin",
            FaultKind::OriginHang => "origin-hang",
            FaultKind::OriginSlow => "origin-slow",
            FaultKind::Holder => "holder",
            FaultKind::TtlSync => "ttl-sync",
        }
    }

    /// It happens at its start and has no duration (a holder dies, a deploy
    /// re-warms the cache).
    pub fn is_moment(self) -> bool {
        matches!(self, FaultKind::Holder | FaultKind::TtlSync)
    }

    pub fn from_name(name: &str) -> Option<FaultKind> {
        FaultKind::ALL.into_iter().find(|k| k.name() == name)
    }
}

/// `kind@start_ms+duration_ms`: a fault from `start_ms` for `duration_ms`
/// (to the end of the run when `None`). A holder or ttl-sync fault happens
/// at its start and has no duration.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Fault {
    pub kind: FaultKind,
    pub start_ms: u32,
    pub duration_ms: Option<u32>,
}

impl Fault {
    /// The fault is in force at `now_ms` (ms of virtual time, fractional).
    pub fn active_at(&self, now_ms: f64) -> bool {
        let start = f64::from(self.start_ms);
        now_ms >= start
            && self
                .duration_ms
                .is_none_or(|d| now_ms < start + f64::from(d))
    }
}

/// At most this many faults in one scenario.
pub const MAX_FAULTS: usize = 16;

/// Deliberate mistakes, each a switch, so the page can show its damage.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct Pitfalls {
    /// A failed result stays in the flight map and is handed to later callers.
    pub remember_failure: bool,
    /// Waiters and leaders have no deadline: a hung origin pins them forever.
    pub no_deadline: bool,
    /// The coalescing key differs from the cache key, so nothing coalesces.
    pub key_mismatch: bool,
    /// Waiters share one mutable value and the first of them changes it.
    pub mutable_result: bool,
    /// The release is a plain `DEL lock:key`, with no token checked: a
    /// holder whose claim expired mid-recompute deletes the claim another
    /// office took since, and the key is free for a third.
    pub plain_del: bool,
    /// The claim is `SET lock:key token NX` with no `PX`: it never expires,
    /// so a holder that dies holding it locks its key for good (only a
    /// release, which a dead holder never sends, clears it).
    pub no_expiry: bool,
}

impl Pitfalls {
    pub const NAMES: [&'static str; 6] = [
        "remember-failure",
        "no-deadline",
        "key-mismatch",
        "mutable-result",
        "plain-del",
        "no-expiry",
    ];

    /// Switches a pitfall on by its kebab-case name.
    pub fn enable(&mut self, name: &str) -> Result<(), String> {
        match name {
            "remember-failure" => self.remember_failure = true,
            "no-deadline" => self.no_deadline = true,
            "key-mismatch" => self.key_mismatch = true,
            "mutable-result" => self.mutable_result = true,
            "plain-del" => self.plain_del = true,
            "no-expiry" => self.no_expiry = true,
            other => {
                return Err(format!(
                    "unknown pitfall '{other}' (expected one of: {})",
                    Self::NAMES.join(", ")
                ))
            }
        }
        Ok(())
    }

    pub fn enabled(&self) -> Vec<&'static str> {
        let flags = [
            self.remember_failure,
            self.no_deadline,
            self.key_mismatch,
            self.mutable_result,
            self.plain_del,
            self.no_expiry,
        ];
        Self::NAMES
            .iter()
            .zip(flags)
            .filter(|(_, on)| *on)
            .map(|(n, _)| *n)
            .collect()
    }
}

/// One simulated world. Times are in milliseconds of virtual time.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Scenario {
    pub instances: u32,
    pub threads: u32,
    pub keys: u32,
    pub workload: Workload,
    pub singleflight: bool,
    pub claim: ClaimMode,
    pub loser: LoserPolicy,
    pub redis_error: RedisErrorPolicy,
    /// Mean origin latency for one recompute.
    pub recompute_ms: u32,
    /// Concurrent recomputes the origin absorbs before latency grows.
    pub origin_capacity: u32,
    pub claim_ttl_ms: u32,
    /// Redis round-trip time.
    pub rtt_ms: u32,
    /// Per-request deadline (ignored under the `no-deadline` pitfall). It
    /// ends the caller's wait, never a recompute that has started.
    pub deadline_ms: u32,
    /// The origin call's own timeout: past it the recompute counts as failed,
    /// its flight settles and its claim is released (ignored under the
    /// `no-deadline` pitfall).
    pub origin_timeout_ms: u32,
    /// How long a computed value stays fresh.
    pub value_ttl_ms: u32,
    /// TTL jitter as a fraction: each TTL is drawn from ttl * [1 - j, 1 + j].
    pub jitter: f64,
    /// How long after expiry a value may still be served stale (0 = never).
    pub stale_ms: u32,
    /// On a stale hit, answer stale at once and refresh behind, claim-guarded.
    pub stale_while_revalidate: bool,
    /// Probabilistic early expiration ("XFetch", Vattani, Chierichetti and
    /// Lowenstein, VLDB 2015): a reader of a fresh value refreshes it behind
    /// its answer when `now - delta * beta * ln(rand) >= expiry`, where
    /// delta is the last recompute's duration. 0 = off; 1 is the paper's
    /// default; larger refreshes earlier.
    pub xfetch_beta: f64,
    /// Each claim win takes a fencing number and the value write carries
    /// it; the cache refuses a write older than the one it holds, so a late
    /// holder (its claim expired mid-recompute) cannot overwrite newer data.
    pub fenced_writes: bool,
    /// Concurrent recomputes allowed per instance (0 = unlimited).
    pub admission: u32,
    /// How long a recompute may queue for an admission permit before it is
    /// shed with an explicit degraded answer.
    pub admission_wait_ms: u32,
    /// Cache a failure for this long so retries are damped (0 = off).
    pub negative_ttl_ms: u32,
    /// Probability that one recompute fails.
    pub fail_rate: f64,
    /// The origin fails every call started in [0, origin_outage_ms).
    pub origin_outage_ms: u32,
    /// The origin never answers.
    pub hang: bool,
    /// Redis is unreachable for the whole run: every command errors.
    pub redis_down: bool,
    /// The first claim winner dies right after winning, without releasing.
    pub holder_crash: bool,
    /// What a down Redis does to a command: errors at once, or hangs.
    pub redis_outage: RedisOutage,
    /// The Redis client's timeout: a command to a Redis that hangs fails
    /// after this long.
    pub redis_timeout_ms: u32,
    /// After a Redis error or timeout an instance stops asking Redis for
    /// this long and applies its `redis_error` policy at once (0 = no
    /// breaker).
    pub redis_breaker_ms: u32,
    /// Redis serves commands one at a time at this rate (0 = unlimited):
    /// a burst's commands queue, and a round trip is rtt plus the queue.
    pub redis_ops_per_ms: u32,
    /// An in-process copy of a value read from Redis, kept this long (0 =
    /// off): a hit on it costs no round trip.
    pub local_cache_ms: u32,
    /// Steady traffic: closed-loop threads, or open-loop arrivals at a rate.
    pub arrivals: Arrivals,
    /// Open-loop arrivals: requests a second across the fleet.
    pub rate_per_s: u32,
    /// A caller whose attempt failed or timed out tries again, this many
    /// times at most, each attempt with a deadline of its own.
    pub retries: u32,
    /// The pause before a retry: uniform up to this, doubled per attempt
    /// ("full jitter").
    pub retry_backoff_ms: u32,
    /// Faults that start at a moment (`f=redis@2000+3000,holder@5000`),
    /// beside the whole-run switches above.
    pub faults: Vec<Fault>,
    /// Key popularity for cold and steady traffic, as a Zipf exponent (0 =
    /// the workload's own: uniform for a cold start, a fixed skew towards
    /// key 0 for steady traffic).
    pub key_skew: f64,
    pub pitfalls: Pitfalls,
    /// Losers that wait poll the cache this often.
    pub poll_ms: u32,
    /// Burst arrivals land within this window.
    pub spread_ms: u32,
    /// Steady workload: how long traffic runs.
    pub duration_ms: u32,
    /// Steady workload: mean pause between one thread's requests.
    pub think_ms: u32,
}

impl Default for Scenario {
    fn default() -> Self {
        Scenario {
            instances: 40,
            threads: 200,
            keys: 1,
            workload: Workload::Burst,
            singleflight: true,
            claim: ClaimMode::Inner,
            loser: LoserPolicy::Wait,
            redis_error: RedisErrorPolicy::Open,
            recompute_ms: 200,
            origin_capacity: 64,
            claim_ttl_ms: 5000,
            rtt_ms: 1,
            deadline_ms: 1000,
            origin_timeout_ms: 3000,
            // Short enough that a steady run sees values expire and refresh.
            value_ttl_ms: 10_000,
            jitter: 0.0,
            stale_ms: 0,
            stale_while_revalidate: false,
            xfetch_beta: 0.0,
            fenced_writes: false,
            admission: 0,
            admission_wait_ms: 100,
            negative_ttl_ms: 0,
            fail_rate: 0.0,
            origin_outage_ms: 0,
            hang: false,
            redis_down: false,
            holder_crash: false,
            redis_outage: RedisOutage::Error,
            // The real driver's bound on a command.
            redis_timeout_ms: 100,
            redis_breaker_ms: 0,
            redis_ops_per_ms: 0,
            local_cache_ms: 0,
            key_skew: 0.0,
            faults: Vec::new(),
            retries: 0,
            retry_backoff_ms: 50,
            arrivals: Arrivals::Closed,
            rate_per_s: 2000,
            pitfalls: Pitfalls::default(),
            poll_ms: 50,
            spread_ms: 10,
            duration_ms: 60_000,
            think_ms: 1000,
        }
    }
}

/// Something validation changed or ignored, in words a visitor can act on.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Notice {
    pub knob: String,
    pub message: String,
}

impl fmt::Display for Notice {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.knob, self.message)
    }
}

impl Notice {
    pub fn new(knob: &str, message: String) -> Notice {
        Notice {
            knob: knob.to_string(),
            message,
        }
    }
}

/// The largest XFetch beta: at 10 a reader refreshes about ten recompute
/// durations before expiry, already far past useful.
pub const XFETCH_BETA_MAX: f64 = 10.0;
/// The largest key skew: at 3 nearly every request is for key 0.
pub const KEY_SKEW_MAX: f64 = 3.0;

/// "1200 is more than allowed (1 to 1000); clamped to 1000", in words a
/// visitor reads without knowing Rust's range syntax. A number too large to
/// hold at all is not repeated back as a wrapped or saturated value.
pub fn clamped(was: u32, lo: u32, hi: u32, now: u32) -> String {
    let shown = if was == u32::MAX {
        "that number".to_string()
    } else {
        was.to_string()
    };
    let side = if was > hi { "more" } else { "less" };
    format!("{shown} is {side} than allowed ({lo} to {hi}); clamped to {now}")
}

/// Inclusive bounds for every numeric knob: (name, min, max).
pub const U32_BOUNDS: [(&str, u32, u32); 25] = [
    ("instances", 1, 1000),
    ("threads", 1, 10_000),
    ("keys", 1, 1_000_000),
    ("recompute_ms", 1, 60_000),
    ("origin_capacity", 1, 1_000_000),
    ("claim_ttl_ms", 1, 600_000),
    ("rtt_ms", 0, 1000),
    ("deadline_ms", 1, 600_000),
    ("origin_timeout_ms", 1, 600_000),
    ("value_ttl_ms", 1, 86_400_000),
    ("stale_ms", 0, 86_400_000),
    ("admission", 0, 100_000),
    ("admission_wait_ms", 0, 600_000),
    ("negative_ttl_ms", 0, 600_000),
    ("origin_outage_ms", 0, 3_600_000),
    ("poll_ms", 1, 60_000),
    ("spread_ms", 0, 60_000),
    ("duration_ms", 1, 3_600_000),
    ("redis_timeout_ms", 1, 60_000),
    ("redis_breaker_ms", 0, 600_000),
    ("redis_ops_per_ms", 0, 1_000_000),
    ("local_cache_ms", 0, 86_400_000),
    ("retries", 0, 10),
    ("retry_backoff_ms", 0, 60_000),
    ("rate_per_s", 1, 10_000_000),
];
/// `think_ms` is validated on its own: 1..=600_000.
const THINK_BOUNDS: (u32, u32) = (1, 600_000);

impl Scenario {
    fn u32_field(&mut self, name: &str) -> Option<&mut u32> {
        Some(match name {
            "instances" => &mut self.instances,
            "threads" => &mut self.threads,
            "keys" => &mut self.keys,
            "recompute_ms" => &mut self.recompute_ms,
            "origin_capacity" => &mut self.origin_capacity,
            "claim_ttl_ms" => &mut self.claim_ttl_ms,
            "rtt_ms" => &mut self.rtt_ms,
            "deadline_ms" => &mut self.deadline_ms,
            "origin_timeout_ms" => &mut self.origin_timeout_ms,
            "value_ttl_ms" => &mut self.value_ttl_ms,
            "stale_ms" => &mut self.stale_ms,
            "admission" => &mut self.admission,
            "admission_wait_ms" => &mut self.admission_wait_ms,
            "negative_ttl_ms" => &mut self.negative_ttl_ms,
            "origin_outage_ms" => &mut self.origin_outage_ms,
            "poll_ms" => &mut self.poll_ms,
            "spread_ms" => &mut self.spread_ms,
            "duration_ms" => &mut self.duration_ms,
            "think_ms" => &mut self.think_ms,
            "redis_timeout_ms" => &mut self.redis_timeout_ms,
            "redis_breaker_ms" => &mut self.redis_breaker_ms,
            "redis_ops_per_ms" => &mut self.redis_ops_per_ms,
            "local_cache_ms" => &mut self.local_cache_ms,
            "retries" => &mut self.retries,
            "retry_backoff_ms" => &mut self.retry_backoff_ms,
            "rate_per_s" => &mut self.rate_per_s,
            _ => return None,
        })
    }

    /// Clamps every knob into range and returns what it changed. After this
    /// the simulation can rely on every invariant it needs (no zero TTLs,
    /// a bounded number of threads, probabilities in [0, 1]).
    pub fn validate(&mut self) -> Vec<Notice> {
        let mut out = Vec::new();
        let mut bounds: Vec<(&str, u32, u32)> = U32_BOUNDS.to_vec();
        bounds.push(("think_ms", THINK_BOUNDS.0, THINK_BOUNDS.1));
        for (name, lo, hi) in bounds {
            if let Some(v) = self.u32_field(name) {
                let was = *v;
                let now = was.clamp(lo, hi);
                if now != was {
                    *v = now;
                    out.push(Notice::new(name, clamped(was, lo, hi, now)));
                }
            }
        }
        let total = self.instances as u64 * self.threads as u64;
        if total > MAX_TOTAL_THREADS {
            let was = self.threads;
            self.threads = (MAX_TOTAL_THREADS / self.instances as u64) as u32;
            out.push(Notice::new(
                "threads",
                format!(
                    "{} instances x {was} threads is more than {MAX_TOTAL_THREADS} threads in all; using {} threads",
                    self.instances, self.threads
                ),
            ));
        }
        for (name, v, max) in [
            ("xfetch_beta", &mut self.xfetch_beta, XFETCH_BETA_MAX),
            ("key_skew", &mut self.key_skew, KEY_SKEW_MAX),
        ] {
            let was = *v;
            if !was.is_finite() {
                *v = 0.0;
                out.push(Notice::new(name, "not a number; using 0".to_string()));
            } else if !(0.0..=max).contains(&was) {
                // Not f64::clamp: its panic message links the standard
                // library's float formatting into the page (about 11 KB).
                *v = if was > max { max } else { 0.0 };
                let side = if was > max { "more" } else { "less" };
                out.push(Notice::new(
                    name,
                    format!(
                        "{} is {side} than allowed (0 to {}); clamped to {}",
                        fmt_f64(was),
                        fmt_f64(max),
                        fmt_f64(*v)
                    ),
                ));
            }
        }
        if self.faults.len() > MAX_FAULTS {
            self.faults.truncate(MAX_FAULTS);
            out.push(Notice::new(
                "faults",
                format!("more than {MAX_FAULTS} faults; kept the first {MAX_FAULTS}"),
            ));
        }
        for f in &mut self.faults {
            let was = (f.start_ms, f.duration_ms);
            f.start_ms = f.start_ms.min(3_600_000);
            f.duration_ms = f.duration_ms.map(|d| d.clamp(1, 3_600_000));
            if f.kind.is_moment() {
                f.duration_ms = None;
            }
            if (f.start_ms, f.duration_ms) != was {
                out.push(Notice::new(
                    "faults",
                    format!(
                        "{} at {} ms: times are 0 to 3600000 ms and a holder or ttl-sync fault has no duration; using {}",
                        f.kind.name(),
                        was.0,
                        fault_text(f)
                    ),
                ));
            }
        }
        for (name, v) in [
            ("jitter", &mut self.jitter),
            ("fail_rate", &mut self.fail_rate),
        ] {
            let was = *v;
            if !was.is_finite() {
                *v = 0.0;
                out.push(Notice::new(name, "not a number; using 0".to_string()));
            } else if !(0.0..=1.0).contains(&was) {
                *v = was.clamp(0.0, 1.0);
                let side = if was > 1.0 { "more" } else { "less" };
                out.push(Notice::new(
                    name,
                    format!(
                        "{} is {side} than allowed (0 to 1); clamped to {}",
                        fmt_f64(was),
                        fmt_f64(*v)
                    ),
                ));
            }
        }
        out
    }

    /// The interview card's arithmetic for one burst on one key: how many
    /// recomputes the protection allows. Instances x threads with none, one
    /// per instance with singleflight alone, about one with a claim.
    pub fn burst_formula(&self) -> u64 {
        let all = u64::from(self.instances) * u64::from(self.threads);
        match (self.singleflight && !self.pitfalls.key_mismatch, self.claim) {
            (false, ClaimMode::Off) => all,
            (true, ClaimMode::Off) => u64::from(self.instances),
            _ => 1,
        }
    }

    /// Validates, returning the notices as one error when anything had to change.
    pub fn validated(mut self) -> Result<Scenario, Vec<Notice>> {
        let n = self.validate();
        if n.is_empty() {
            Ok(self)
        } else {
            Err(n)
        }
    }
}

fn fmt_f64(v: f64) -> String {
    crate::decimal::format(v)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn query_round_trips_every_preset() {
        for p in Preset::ALL {
            let s = p.scenario();
            let q = s.to_query(42);
            let (back, seed, notices) = Scenario::from_query(&q);
            assert_eq!(back, s, "preset {} via {q}", p.name());
            assert_eq!(seed, 42);
            assert!(notices.is_empty(), "{notices:?}");
        }
    }

    #[test]
    fn knob_names_cover_every_field_once() {
        let fields = match serde_json::to_value(Scenario::default()) {
            Ok(serde_json::Value::Object(m)) => m.keys().cloned().collect::<Vec<_>>(),
            other => panic!("{other:?}"),
        };
        let mut names: Vec<String> = knob_names().map(String::from).collect();
        names.sort();
        let mut fields = fields;
        fields.sort();
        assert_eq!(names, fields);
        for n in knob_names() {
            assert!(Scenario::default().get(n).is_some(), "{n}");
        }
    }

    #[test]
    fn presets_are_valid() {
        for p in Preset::ALL {
            assert!(p.scenario().validated().is_ok(), "{}", p.name());
            // Its own link names it, and only it.
            assert_eq!(Preset::from_name(p.name()), Some(p));
            let (s, _, notices) = Scenario::from_query(p.link());
            assert!(notices.is_empty() && s == p.scenario(), "{}", p.link());
        }
    }

    #[test]
    fn broken_queries_fall_back_with_notices() {
        let (s, _, n) = Scenario::from_query("i=99999&t=abc&zz=1&c=sideways&j=NaN");
        assert_eq!(s.instances, 1000);
        assert_eq!(s.threads, 200);
        assert_eq!(s.claim, ClaimMode::Inner);
        assert_eq!(s.jitter, 0.0);
        let knobs: Vec<_> = n.iter().map(|x| x.knob.as_str()).collect();
        for k in ["instances", "threads", "url", "claim", "jitter"] {
            assert!(knobs.contains(&k), "{k} missing from {knobs:?}");
        }
        let huge = "i=".to_string() + &"9".repeat(MAX_QUERY_LEN + 1);
        let (s, _, n) = Scenario::from_query(&huge);
        assert_eq!(s, Scenario::default());
        assert_eq!(n.len(), 1);
        let (_, _, n) = Scenario::from_query("%ZZ=%&&&=&<script>=1");
        assert!(!n.is_empty());
    }

    #[test]
    fn notices_say_clamped_in_words() {
        let (_, _, n) = Scenario::from_query("i=1200&dl=0&t=999999999999&j=2");
        let text: Vec<String> = n.iter().map(|x| x.to_string()).collect();
        assert!(
            text.contains(
                &"instances: 1200 is more than allowed (1 to 1000); clamped to 1000".to_string()
            ),
            "{text:?}"
        );
        assert!(
            text.contains(
                &"deadline_ms: 0 is less than allowed (1 to 600000); clamped to 1".to_string()
            ),
            "{text:?}"
        );
        assert!(
            text.iter()
                .any(|t| t.starts_with("threads: that number is more than allowed")),
            "{text:?}"
        );
        assert!(
            text.iter()
                .all(|t| !t.contains("..=") && !t.contains("4294967295")),
            "{text:?}"
        );
        assert!(
            text.contains(&"jitter: 2 is more than allowed (0 to 1); clamped to 1".to_string()),
            "{text:?}"
        );
        let (_, _, n) = Scenario::from_query("zz=1");
        assert_eq!(n[0].to_string(), "url: ignored the unknown setting 'zz'");
    }

    #[test]
    fn percent_decoding_never_panics() {
        assert_eq!(percent_decode("a+b%20c%2B"), "a b c+");
        assert_eq!(percent_decode("%ZZ%"), "%ZZ%");
        assert_eq!(percent_decode("%FF"), "\u{fffd}");
    }

    #[test]
    fn total_threads_are_capped() {
        let mut s = Scenario {
            instances: 1000,
            threads: 10_000,
            ..Scenario::default()
        };
        let n = s.validate();
        assert_eq!(s.instances as u64 * s.threads as u64, MAX_TOTAL_THREADS);
        assert_eq!(n.len(), 1);
    }
}
