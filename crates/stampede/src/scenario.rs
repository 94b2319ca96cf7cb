//! Every knob of a simulated fleet in one serde struct, with presets, validation
//! and a compact URL form. Validation never panics: out-of-range numbers are
//! clamped and unknown or garbled input falls back to the default, and every
//! such decision is reported as a [`Notice`] that says which knob and why.

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
}

impl Pitfalls {
    pub const NAMES: [&'static str; 4] = [
        "remember-failure",
        "no-deadline",
        "key-mismatch",
        "mutable-result",
    ];

    /// Switches a pitfall on by its kebab-case name.
    pub fn enable(&mut self, name: &str) -> Result<(), String> {
        match name {
            "remember-failure" => self.remember_failure = true,
            "no-deadline" => self.no_deadline = true,
            "key-mismatch" => self.key_mismatch = true,
            "mutable-result" => self.mutable_result = true,
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
pub const U32_BOUNDS: [(&str, u32, u32); 18] = [
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
        let beta = self.xfetch_beta;
        if !beta.is_finite() {
            self.xfetch_beta = 0.0;
            out.push(Notice::new(
                "xfetch_beta",
                "not a number; using 0".to_string(),
            ));
        } else if !(0.0..=XFETCH_BETA_MAX).contains(&beta) {
            self.xfetch_beta = beta.clamp(0.0, XFETCH_BETA_MAX);
            let side = if beta > XFETCH_BETA_MAX {
                "more"
            } else {
                "less"
            };
            out.push(Notice::new(
                "xfetch_beta",
                format!(
                    "{} is {side} than allowed (0 to {}); clamped to {}",
                    fmt_f64(beta),
                    fmt_f64(XFETCH_BETA_MAX),
                    fmt_f64(self.xfetch_beta)
                ),
            ));
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

/// A named starting point: the interview card's scenario and one per lesson.
#[derive(Clone, Copy, Debug)]
pub struct Preset {
    pub name: &'static str,
    pub title: &'static str,
    pub lesson: &'static str,
    /// The counter (a `Report` field) whose value proves the lesson.
    pub proof: &'static str,
    /// One line on what that counter shows in this lesson.
    pub proof_note: &'static str,
    /// The knobs the lesson asks a visitor to turn (long names, or
    /// `pitfall-<name>`), shown beside its text.
    pub turn: &'static [&'static str],
    build: fn() -> Scenario,
}

/// What proves the running scenario's lesson: a counter and a line on it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Proof {
    pub metric: &'static str,
    pub note: &'static str,
    /// The lesson is damage: the counter must be above zero to prove it.
    pub damage: bool,
}

const DAMAGE: [&str; 8] = [
    "corrupted",
    "pinned",
    "remembered_failures",
    "redis_errors",
    "overlapping_recomputes",
    "releases_refused",
    "timeouts",
    "errors",
];

fn proof(metric: &'static str, note: &'static str) -> Proof {
    Proof {
        metric,
        note,
        damage: DAMAGE.contains(&metric),
    }
}

/// The counter that proves what `s` is showing. A pitfall switched on is
/// the lesson of the moment; otherwise the lesson of the preset it was made
/// from (`base`), then a fault, then the recompute count.
pub fn proof_for(s: &Scenario, base: Option<&str>) -> Proof {
    let p = &s.pitfalls;
    if p.mutable_result {
        return proof("corrupted", "Answers another caller changed in place: the first follower alters the one shared value, and every follower after it gets the altered one.");
    }
    if p.remember_failure {
        return proof(
            "remembered_failures",
            "Failures handed out again after their flight ended: one blip became a sticky outage.",
        );
    }
    if p.no_deadline {
        return proof(
            "pinned",
            "Threads still waiting when the run stopped: without deadlines nothing frees them.",
        );
    }
    if p.key_mismatch {
        return proof(
            "recomputes",
            "The flight key never matches the cache key, so every thread leads its own flight.",
        );
    }
    if let Some(pr) = base.and_then(|b| PRESETS.iter().find(|x| x.name == b)) {
        return proof(pr.proof, pr.proof_note);
    }
    if s.redis_down {
        return proof(
            "redis_errors",
            "Every Redis command fails; what happens next is the fail-open or fail-closed choice.",
        );
    }
    if s.holder_crash {
        return proof(
            "timeouts",
            "Callers that gave up while a dead holder's claim blocked the refresh.",
        );
    }
    if s.hang {
        return proof(
            "timeouts",
            "Callers freed by their deadline while the origin never answers.",
        );
    }
    proof(
        "recomputes",
        "How many times the origin was asked for a value.",
    )
}

impl Preset {
    pub fn scenario(&self) -> Scenario {
        (self.build)()
    }

    pub fn proof(&self) -> Proof {
        proof(self.proof, self.proof_note)
    }
}

fn p_burst() -> Scenario {
    Scenario::default()
}
fn p_naive() -> Scenario {
    Scenario {
        singleflight: false,
        claim: ClaimMode::Off,
        ..Scenario::default()
    }
}
fn p_singleflight() -> Scenario {
    Scenario {
        claim: ClaimMode::Off,
        ..Scenario::default()
    }
}
fn p_claim_outer() -> Scenario {
    Scenario {
        claim: ClaimMode::Outer,
        ..Scenario::default()
    }
}
fn p_stale() -> Scenario {
    Scenario {
        stale_ms: 60_000,
        loser: LoserPolicy::Stale,
        ..Scenario::default()
    }
}
fn p_failure() -> Scenario {
    Scenario {
        instances: 4,
        threads: 20,
        workload: Workload::Steady,
        claim: ClaimMode::Off,
        value_ttl_ms: 2000,
        origin_outage_ms: 3000,
        duration_ms: 12_000,
        think_ms: 200,
        ..Scenario::default()
    }
}
fn p_hang() -> Scenario {
    Scenario {
        hang: true,
        ..Scenario::default()
    }
}
fn p_holder_crash() -> Scenario {
    Scenario {
        instances: 10,
        threads: 20,
        workload: Workload::Steady,
        value_ttl_ms: 5000,
        holder_crash: true,
        claim_ttl_ms: 10_000,
        duration_ms: 20_000,
        think_ms: 200,
        ..Scenario::default()
    }
}
fn p_short_ttl() -> Scenario {
    Scenario {
        instances: 10,
        threads: 20,
        workload: Workload::Steady,
        value_ttl_ms: 5000,
        recompute_ms: 400,
        claim_ttl_ms: 100,
        duration_ms: 20_000,
        think_ms: 100,
        ..Scenario::default()
    }
}
fn p_redis_down() -> Scenario {
    Scenario {
        redis_down: true,
        ..Scenario::default()
    }
}
fn p_cold() -> Scenario {
    Scenario {
        instances: 10,
        threads: 100,
        keys: 5000,
        workload: Workload::Cold,
        admission: 6,
        ..Scenario::default()
    }
}
fn p_jitter() -> Scenario {
    Scenario {
        instances: 10,
        threads: 20,
        keys: 200,
        workload: Workload::Steady,
        claim: ClaimMode::Off,
        value_ttl_ms: 5000,
        jitter: 0.3,
        duration_ms: 30_000,
        think_ms: 100,
        ..Scenario::default()
    }
}
fn p_swr() -> Scenario {
    Scenario {
        stale_ms: 60_000,
        stale_while_revalidate: true,
        claim: ClaimMode::Refresh,
        redis_error: RedisErrorPolicy::Open,
        ..Scenario::default()
    }
}
fn p_xfetch() -> Scenario {
    Scenario {
        instances: 10,
        threads: 20,
        workload: Workload::Steady,
        claim: ClaimMode::Off,
        value_ttl_ms: 5000,
        duration_ms: 30_000,
        think_ms: 100,
        xfetch_beta: 1.0,
        ..Scenario::default()
    }
}
fn p_late_writer() -> Scenario {
    Scenario {
        instances: 10,
        threads: 20,
        workload: Workload::Steady,
        value_ttl_ms: 5000,
        recompute_ms: 1000,
        claim_ttl_ms: 100,
        duration_ms: 20_000,
        think_ms: 100,
        ..Scenario::default()
    }
}
fn p_cheap() -> Scenario {
    Scenario {
        claim: ClaimMode::Off,
        recompute_ms: 20,
        ..Scenario::default()
    }
}

pub const PRESETS: [Preset; 16] = [
    Preset {
        name: "burst",
        title: "The interview card: 40 x 200, both layers",
        lesson: "Singleflight outside, claim inside: one recompute, 40 claim attempts.",
        proof: "recomputes",
        proof_note: "One recompute for 8,000 requests: singleflight took each office to one caller, the claim took the fleet to one.",
        turn: &["singleflight", "claim"],
        build: p_burst,
    },
    Preset {
        name: "naive",
        title: "No protection",
        lesson: "Every thread of every instance recomputes: instances x threads, and the swamped origin answers most callers too late.",
        proof: "recomputes",
        proof_note: "Instances x threads recomputes: every thread asked the origin itself.",
        turn: &["singleflight"],
        build: p_naive,
    },
    Preset {
        name: "singleflight",
        title: "Singleflight only",
        lesson: "Threads collapse inside each instance: one recompute per instance.",
        proof: "recomputes",
        proof_note: "One recompute per instance: singleflight cannot see the other instances.",
        turn: &["claim"],
        build: p_singleflight,
    },
    Preset {
        name: "claim-outer",
        title: "Claim outside singleflight",
        lesson: "Still one recompute, but every thread pays a Redis round trip to claim.",
        proof: "claim_attempts",
        proof_note: "Claim attempts: with the claim outside, every thread pays a Redis round trip.",
        turn: &["claim"],
        build: p_claim_outer,
    },
    Preset {
        name: "stale",
        title: "Losers serve stale",
        lesson: "Losers answer stale at once; only the winner's instance waits. Flights end fast, so later arrivals claim again.",
        proof: "stale_served",
        proof_note: "Requests answered at once with the stale value instead of waiting for the winner.",
        turn: &["loser"],
        build: p_stale,
    },
    Preset {
        name: "failure",
        title: "A failing origin",
        lesson: "Failures reach the current waiters only; turn on remember-failure to see a sticky outage.",
        proof: "errors",
        proof_note: "Errors during the outage only; with remember-failure they go on after the origin has recovered.",
        turn: &["pitfall-remember-failure"],
        build: p_failure,
    },
    Preset {
        name: "hang",
        title: "A hung origin",
        lesson: "Deadlines free the threads and the origin timeout frees the claim; turn on no-deadline to pin them all.",
        proof: "timeouts",
        proof_note: "Every caller freed at its own deadline although the origin never answers.",
        turn: &["pitfall-no-deadline"],
        build: p_hang,
    },
    Preset {
        name: "holder-crash",
        title: "The claim holder dies",
        lesson: "Nobody may refresh until the claim's TTL runs out: a long TTL is a long stall.",
        proof: "timeouts",
        proof_note: "Callers that gave up while the dead holder's claim blocked every refresh until its TTL.",
        turn: &["claim_ttl_ms"],
        build: p_holder_crash,
    },
    Preset {
        name: "short-ttl",
        title: "Claim TTL shorter than the recompute",
        lesson: "The claim expires mid-recompute and another instance starts an overlapping one.",
        proof: "overlapping_recomputes",
        proof_note: "Recomputes started while another of the same key was running: the claim expired under its holder.",
        turn: &["claim_ttl_ms"],
        build: p_short_ttl,
    },
    Preset {
        name: "redis-down",
        title: "Redis is down",
        lesson: "Fail open and the refresh goes on; fail closed and nobody may refresh.",
        proof: "redis_errors",
        proof_note: "Every Redis command failed, yet the refresh went on: the claim failed open.",
        turn: &["redis_error"],
        build: p_redis_down,
    },
    Preset {
        name: "cold",
        title: "A cold cache",
        lesson: "Thousands of different keys: nothing to coalesce. Admission bounds the origin and sheds the rest at once.",
        proof: "admission_shed",
        proof_note: "Recomputes shed at once with a degraded answer instead of swamping the origin.",
        turn: &["admission", "admission_wait_ms"],
        build: p_cold,
    },
    Preset {
        name: "jitter",
        title: "TTL jitter",
        lesson: "Keys written together expire together unless their TTLs are spread.",
        proof: "origin_peak_concurrency",
        proof_note: "The most recomputes at the origin at once: spread TTLs lower the peak.",
        turn: &["jitter"],
        build: p_jitter,
    },
    Preset {
        name: "swr",
        title: "Nobody waits on a lock",
        lesson: "Stale answers go out at once; the claim guards only the refresh, so a dead holder or a Redis outage never stalls a request.",
        proof: "stale_served",
        proof_note: "Every request answered at once with the stale value, whatever fails behind it.",
        turn: &["holder_crash", "redis_down"],
        build: p_swr,
    },
    Preset {
        name: "xfetch",
        title: "Early refresh (XFetch)",
        lesson: "Readers refresh a hot key just before it expires, so nobody meets a miss; with no lock a few instances may refresh at once.",
        proof: "misses",
        proof_note: "Requests that found the hot key missing or expired: early refresh keeps it at zero.",
        turn: &["xfetch_beta", "claim"],
        build: p_xfetch,
    },
    Preset {
        name: "late-writer",
        title: "A late holder writes old data",
        lesson: "The claim expires under a slow recompute, another instance recomputes too, and the older value lands last; fenced writes refuse it.",
        proof: "stale_overwrites",
        proof_note: "Writes that put an older value over a newer one: turn on fenced writes and they are refused instead.",
        turn: &["fenced_writes", "claim_ttl_ms"],
        build: p_late_writer,
    },
    Preset {
        name: "cheap",
        title: "A cheap recompute",
        lesson: "40 copies of a 20 ms query is nothing: singleflight alone is enough.",
        proof: "p99_ms",
        proof_note: "The slowest answers stay fast with one cheap query per instance and no lock.",
        turn: &["claim"],
        build: p_cheap,
    },
];

/// Two designs on the same traffic: the A/B view's presets. Both sides run
/// the same fleet and seed; `metric` is the counter the question is about
/// and `winner` the side that is better on it.
#[derive(Clone, Copy, Debug)]
pub struct Comparison {
    pub name: &'static str,
    pub question: &'static str,
    pub a_label: &'static str,
    pub b_label: &'static str,
    pub metric: &'static str,
    pub winner: char,
    /// The view offers the recompute-cost control (both sides' recompute).
    pub cost_control: bool,
    a: fn() -> Scenario,
    b: fn() -> Scenario,
}

impl Comparison {
    pub fn a(&self) -> Scenario {
        (self.a)()
    }
    pub fn b(&self) -> Scenario {
        (self.b)()
    }
}

fn c_losers_wait() -> Scenario {
    Scenario {
        stale_ms: 60_000,
        holder_crash: true,
        ..Scenario::default()
    }
}
fn c_nobody_waits() -> Scenario {
    Scenario {
        holder_crash: true,
        ..p_swr()
    }
}
fn c_fail_closed() -> Scenario {
    Scenario {
        redis_error: RedisErrorPolicy::Closed,
        ..p_redis_down()
    }
}
fn c_no_jitter() -> Scenario {
    Scenario {
        jitter: 0.0,
        ..p_jitter()
    }
}
fn c_sync_refresh() -> Scenario {
    Scenario {
        instances: 10,
        threads: 20,
        workload: Workload::Steady,
        value_ttl_ms: 5000,
        stale_ms: 60_000,
        duration_ms: 20_000,
        think_ms: 100,
        ..Scenario::default()
    }
}
fn c_swr_refresh() -> Scenario {
    Scenario {
        stale_while_revalidate: true,
        ..c_sync_refresh()
    }
}
fn c_claim_only() -> Scenario {
    Scenario {
        claim: ClaimMode::Inner,
        xfetch_beta: 0.0,
        ..p_xfetch()
    }
}
fn c_early_refresh() -> Scenario {
    Scenario {
        claim: ClaimMode::Inner,
        ..p_xfetch()
    }
}

pub const COMPARISONS: [Comparison; 8] = [
    Comparison {
        name: "layered",
        question: "Singleflight alone, or singleflight with the claim inside?",
        a_label: "singleflight only",
        b_label: "singleflight + claim",
        metric: "recomputes",
        winner: 'b',
        cost_control: false,
        a: p_singleflight,
        b: p_burst,
    },
    Comparison {
        name: "claim-order",
        question: "The claim inside singleflight, or outside it?",
        a_label: "claim outside",
        b_label: "claim inside",
        metric: "claim_attempts",
        winner: 'b',
        cost_control: false,
        a: p_claim_outer,
        b: p_burst,
    },
    Comparison {
        name: "losers",
        question: "When the claim holder dies: losers that wait on the lock, or nobody waits on a lock?",
        a_label: "losers wait (bounded)",
        b_label: "claim only on the refresh",
        metric: "timeouts",
        winner: 'b',
        cost_control: false,
        a: c_losers_wait,
        b: c_nobody_waits,
    },
    Comparison {
        name: "redis-outage",
        question: "Redis is down: fail closed or fail open?",
        a_label: "fail closed",
        b_label: "fail open",
        metric: "timeouts",
        winner: 'b',
        cost_control: false,
        a: c_fail_closed,
        b: p_redis_down,
    },
    Comparison {
        name: "jitter",
        question: "Keys written together: the same TTL, or a jittered one?",
        a_label: "no jitter",
        b_label: "TTL jitter 30%",
        metric: "origin_peak_concurrency",
        winner: 'b',
        cost_control: false,
        a: c_no_jitter,
        b: p_jitter,
    },
    Comparison {
        name: "swr",
        question: "A stale hot key: refresh while the callers wait, or answer stale and refresh behind?",
        a_label: "synchronous refresh",
        b_label: "stale-while-revalidate",
        metric: "p99_ms",
        winner: 'b',
        cost_control: false,
        a: c_sync_refresh,
        b: c_swr_refresh,
    },
    Comparison {
        name: "xfetch",
        question: "A hot key expiring: the claim alone, or early refresh as well?",
        a_label: "claim at expiry",
        b_label: "early refresh (XFetch)",
        metric: "misses",
        winner: 'b',
        cost_control: false,
        a: c_claim_only,
        b: c_early_refresh,
    },
    Comparison {
        name: "cost",
        question: "Is the claim worth it? For a 20 ms query singleflight alone answers sooner; raise the recompute's cost and watch where the claim starts to pay.",
        a_label: "singleflight only",
        b_label: "singleflight + claim",
        // At its own 20 ms cost; the A/B view's cost control flips it.
        metric: "p50_ms",
        winner: 'a',
        cost_control: true,
        a: p_cheap,
        b: p_cheap_claimed,
    },
];

fn p_cheap_claimed() -> Scenario {
    Scenario {
        claim: ClaimMode::Inner,
        ..p_cheap()
    }
}

pub fn comparison(name: &str) -> Option<&'static Comparison> {
    COMPARISONS.iter().find(|c| c.name == name)
}

pub fn preset(name: &str) -> Option<Scenario> {
    PRESETS
        .iter()
        .find(|p| p.name == name)
        .map(Preset::scenario)
}

pub fn preset_names() -> Vec<&'static str> {
    PRESETS.iter().map(|p| p.name).collect()
}

// ---- compact URL form -------------------------------------------------------

/// Short URL keys for every knob, in the order they are written.
const URL_KEYS: [(&str, &str); 33] = [
    ("i", "instances"),
    ("t", "threads"),
    ("k", "keys"),
    ("w", "workload"),
    ("sf", "singleflight"),
    ("c", "claim"),
    ("l", "loser"),
    ("re", "redis_error"),
    ("rc", "recompute_ms"),
    ("cap", "origin_capacity"),
    ("ct", "claim_ttl_ms"),
    ("rtt", "rtt_ms"),
    ("dl", "deadline_ms"),
    ("ot", "origin_timeout_ms"),
    ("vt", "value_ttl_ms"),
    ("j", "jitter"),
    ("st", "stale_ms"),
    ("swr", "stale_while_revalidate"),
    ("xfetch_beta", "xfetch_beta"),
    ("fw", "fenced_writes"),
    ("adm", "admission"),
    ("aw", "admission_wait_ms"),
    ("nt", "negative_ttl_ms"),
    ("fr", "fail_rate"),
    ("oo", "origin_outage_ms"),
    ("hang", "hang"),
    ("rd", "redis_down"),
    ("hc", "holder_crash"),
    ("pf", "pitfalls"),
    ("poll", "poll_ms"),
    ("sp", "spread_ms"),
    ("dur", "duration_ms"),
    ("th", "think_ms"),
];

/// The long name of every knob, in URL order: what [`Scenario::set`] and
/// [`Scenario::get`] accept.
pub fn knob_names() -> impl Iterator<Item = &'static str> {
    URL_KEYS.iter().map(|(_, long)| *long)
}

fn workload_name(w: Workload) -> &'static str {
    match w {
        Workload::Burst => "burst",
        Workload::Steady => "steady",
        Workload::Cold => "cold",
    }
}
fn claim_name(c: ClaimMode) -> &'static str {
    match c {
        ClaimMode::Off => "off",
        ClaimMode::Inner => "inner",
        ClaimMode::Outer => "outer",
        ClaimMode::Refresh => "refresh",
    }
}
fn loser_name(l: LoserPolicy) -> &'static str {
    match l {
        LoserPolicy::Stale => "stale",
        LoserPolicy::Wait => "wait",
        LoserPolicy::Degrade => "degrade",
        LoserPolicy::Compute => "compute",
    }
}
fn redis_error_name(r: RedisErrorPolicy) -> &'static str {
    match r {
        RedisErrorPolicy::Open => "open",
        RedisErrorPolicy::Closed => "closed",
    }
}

pub fn parse_workload(s: &str) -> Result<Workload, String> {
    match s {
        "burst" => Ok(Workload::Burst),
        "steady" => Ok(Workload::Steady),
        "cold" => Ok(Workload::Cold),
        _ => Err(format!("'{}' is not burst, steady or cold", clip(s))),
    }
}
pub fn parse_claim(s: &str) -> Result<ClaimMode, String> {
    match s {
        "off" => Ok(ClaimMode::Off),
        "inner" => Ok(ClaimMode::Inner),
        "outer" => Ok(ClaimMode::Outer),
        "refresh" => Ok(ClaimMode::Refresh),
        _ => Err(format!("'{}' is not off, inner, outer or refresh", clip(s))),
    }
}
pub fn parse_loser(s: &str) -> Result<LoserPolicy, String> {
    match s {
        "stale" => Ok(LoserPolicy::Stale),
        "wait" => Ok(LoserPolicy::Wait),
        "degrade" => Ok(LoserPolicy::Degrade),
        "compute" => Ok(LoserPolicy::Compute),
        _ => Err(format!(
            "'{}' is not stale, wait, degrade or compute",
            clip(s)
        )),
    }
}
pub fn parse_redis_error(s: &str) -> Result<RedisErrorPolicy, String> {
    match s {
        "open" => Ok(RedisErrorPolicy::Open),
        "closed" => Ok(RedisErrorPolicy::Closed),
        _ => Err(format!("'{}' is not open or closed", clip(s))),
    }
}
pub fn parse_bool(s: &str) -> Result<bool, String> {
    match s {
        "1" | "on" | "true" | "yes" => Ok(true),
        "0" | "off" | "false" | "no" => Ok(false),
        _ => Err(format!("'{}' is not on or off", clip(s))),
    }
}
pub fn parse_u32(s: &str) -> Result<u32, String> {
    let t = s.trim();
    if t.is_empty() || !t.bytes().all(|b| b.is_ascii_digit()) {
        return Err(format!("'{}' is not a whole number", clip(s)));
    }
    // Saturate rather than reject: a huge number is a clamping matter.
    Ok(t.parse::<u64>()
        .map_or(u32::MAX, |v| v.min(u32::MAX as u64) as u32))
}
pub fn parse_fraction(s: &str) -> Result<f64, String> {
    crate::decimal::parse(s)
        .ok_or_else(|| format!("'{}' is not a decimal number such as 0.25", clip(s)))
}

/// Shortens untrusted text (from a URL or a flag) before it goes into a
/// message: control characters dropped, at most 24 characters kept.
pub fn clip(s: &str) -> String {
    let mut out: String = s.chars().filter(|c| !c.is_control()).take(24).collect();
    if s.chars().count() > 24 {
        out.push('…');
    }
    out
}

fn fmt_f64(v: f64) -> String {
    crate::decimal::format(v)
}

impl Scenario {
    /// Sets one knob by its long name from text; used by the URL and the CLI.
    pub fn set(&mut self, knob: &str, value: &str) -> Result<(), String> {
        match knob {
            "workload" => self.workload = parse_workload(value)?,
            "singleflight" => self.singleflight = parse_bool(value)?,
            "claim" => self.claim = parse_claim(value)?,
            "loser" => self.loser = parse_loser(value)?,
            "redis_error" => self.redis_error = parse_redis_error(value)?,
            "jitter" => self.jitter = parse_fraction(value)?,
            "fail_rate" => self.fail_rate = parse_fraction(value)?,
            "xfetch_beta" => self.xfetch_beta = parse_fraction(value)?,
            "stale_while_revalidate" => self.stale_while_revalidate = parse_bool(value)?,
            "fenced_writes" => self.fenced_writes = parse_bool(value)?,
            "hang" => self.hang = parse_bool(value)?,
            "redis_down" => self.redis_down = parse_bool(value)?,
            "holder_crash" => self.holder_crash = parse_bool(value)?,
            "pitfalls" => {
                let mut p = Pitfalls::default();
                for name in value.split(['.', ',']).filter(|s| !s.is_empty()) {
                    p.enable(name).map_err(|_| {
                        format!(
                            "'{}' is not a pitfall ({})",
                            clip(name),
                            Pitfalls::NAMES.join(", ")
                        )
                    })?;
                }
                self.pitfalls = p;
            }
            other => {
                let v = parse_u32(value)?;
                match self.u32_field(other) {
                    Some(f) => *f = v,
                    None => return Err(format!("unknown knob '{}'", clip(other))),
                }
            }
        }
        Ok(())
    }

    /// The knob's value as text, in the form [`Scenario::set`] accepts.
    pub fn get(&self, knob: &str) -> Option<String> {
        let mut me = self.clone();
        Some(match knob {
            "workload" => workload_name(self.workload).into(),
            "singleflight" => (self.singleflight as u8).to_string(),
            "claim" => claim_name(self.claim).into(),
            "loser" => loser_name(self.loser).into(),
            "redis_error" => redis_error_name(self.redis_error).into(),
            "jitter" => fmt_f64(self.jitter),
            "fail_rate" => fmt_f64(self.fail_rate),
            "xfetch_beta" => fmt_f64(self.xfetch_beta),
            "stale_while_revalidate" => (self.stale_while_revalidate as u8).to_string(),
            "fenced_writes" => (self.fenced_writes as u8).to_string(),
            "hang" => (self.hang as u8).to_string(),
            "redis_down" => (self.redis_down as u8).to_string(),
            "holder_crash" => (self.holder_crash as u8).to_string(),
            "pitfalls" => self.pitfalls.enabled().join("."),
            other => me.u32_field(other).map(|v| v.to_string())?,
        })
    }

    /// The compact query string: only knobs that differ from the default,
    /// plus the seed. `Scenario::from_query(s.to_query(seed))` gives `s` back.
    pub fn to_query(&self, seed: u64) -> String {
        let base = Scenario::default();
        let mut parts = Vec::new();
        for (short, long) in URL_KEYS {
            let v = self.get(long).unwrap_or_default();
            if base.get(long).as_deref() != Some(v.as_str()) {
                parts.push(format!("{short}={v}"));
            }
        }
        parts.push(format!("seed={seed}"));
        parts.join("&")
    }

    /// Parses a query string (with or without the leading `?`). Never fails:
    /// what it cannot use it ignores, what is out of range it clamps, and it
    /// says so in the notices. Unknown keys are reported, not fatal.
    pub fn from_query(query: &str) -> (Scenario, u64, Vec<Notice>) {
        let mut s = Scenario::default();
        let mut seed = 1u64;
        let mut notices = Vec::new();
        let q = query.strip_prefix('?').unwrap_or(query);
        if q.len() > MAX_QUERY_LEN {
            notices.push(Notice::new(
                "url",
                format!(
                    "the link is {} characters long (more than {MAX_QUERY_LEN}); ignored it and used the defaults",
                    q.len()
                ),
            ));
            return (s, seed, notices);
        }
        // A preset sets the base; other keys then override it.
        let pairs: Vec<(String, String)> = q
            .split('&')
            .filter(|p| !p.is_empty())
            .map(|p| {
                let (k, v) = p.split_once('=').unwrap_or((p, ""));
                (percent_decode(k), percent_decode(v))
            })
            .collect();
        if let Some((_, name)) = pairs.iter().find(|(k, _)| k == "preset") {
            match preset(name) {
                Some(p) => s = p,
                None => notices.push(Notice::new(
                    "preset",
                    format!("'{}' is not a preset; using the defaults", clip(name)),
                )),
            }
        }
        for (k, v) in &pairs {
            if k == "preset" {
                continue;
            }
            if k == "seed" {
                match v.trim().parse::<u64>() {
                    Ok(x) => seed = x,
                    Err(_) => notices.push(Notice::new(
                        "seed",
                        format!("'{}' is not a whole number; using 1", clip(v)),
                    )),
                }
                continue;
            }
            let long = URL_KEYS
                .iter()
                .find(|(short, long)| short == k || long == k)
                .map(|(_, long)| *long);
            match long {
                Some(long) => {
                    if let Err(e) = s.set(long, v) {
                        notices.push(Notice::new(
                            long,
                            format!("{e}; kept {}", s.get(long).unwrap_or_default()),
                        ));
                    }
                }
                None => notices.push(Notice::new(
                    "url",
                    format!("ignored the unknown setting '{}'", clip(k)),
                )),
            }
        }
        notices.extend(s.validate());
        (s, seed, notices)
    }
}

/// Decodes '+' and %XX escapes (`percent-encoding`); invalid escapes are
/// kept as text, invalid UTF-8 becomes U+FFFD. Never panics.
pub fn percent_decode(s: &str) -> String {
    let spaced = s.replace('+', " ");
    percent_encoding::percent_decode_str(&spaced)
        .decode_utf8_lossy()
        .into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn query_round_trips_every_preset() {
        for p in PRESETS {
            let s = p.scenario();
            let q = s.to_query(42);
            let (back, seed, notices) = Scenario::from_query(&q);
            assert_eq!(back, s, "preset {} via {q}", p.name);
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
        for p in PRESETS {
            assert!(p.scenario().validated().is_ok(), "{}", p.name);
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
