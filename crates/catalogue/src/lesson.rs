//! The lesson of whatever scenario is running, preset or not: the counter
//! that proves it and a sentence about the run, with every number in it
//! taken from the run's [`Report`] or the scenario's knobs.
//!
//! Which lessons fit is decided by what the scenario *is*, not by its
//! name. Before the run ends, the lesson is the first that fits: a pitfall
//! switched on, then a fault added to the preset it was made from, then
//! that preset's own lesson if the scenario still has what it speaks of,
//! then the first general lesson whose conditions hold. At the end, the
//! story told is the one that explains the most of the run's requests:
//! each lesson states which ledger cells (end x cause) its story accounts
//! for, and of those that fit, the one whose cells hold the most requests
//! wins, the first of equals in that order ([`stories`]); a fault that did
//! nothing says so first. When none fits, the sentence says in numbers
//! what the change did against the preset's own run (the *contrast*, a
//! second run the caller makes: [`contrast`]).
//!
//! The page and `stampede-sim --json` call the same [`lesson`], so the
//! sentence on screen and the CLI's agree word for word.

use crate::claims::{self, Claim, Clause, Row, Run, Say};
pub use crate::claims::{
    CRASHED, ENDED, MERGED, NONE_PINNED, NO_TIMEOUTS, ORIGIN_TIMED_OUT, OVERLAPS, PER_INSTANCE,
    REDIS_FAILED, SHED, STALE, TIMEOUTS, UNCLAIMED,
};
use stampede::ledger::{Cause, End, Ledger};
use stampede::metrics::value;
use stampede::scenario::Preset as Id;
use stampede::scenario::{
    ClaimMode, FaultKind, LoserPolicy, RedisErrorPolicy, RedisOutage, Scenario, Workload,
};
use stampede::{Metric, Report};

/// What proves the running scenario's lesson, before any run: its counter
/// and what to watch for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Proof {
    pub metric: Metric,
    /// What to watch for, with no number in it and no event still to
    /// come: the run may never reach it, so it names a setting or asks.
    pub note: &'static str,
    /// The lesson is damage: the counter must be above zero to prove it.
    pub damage: bool,
}

const DAMAGE: [Metric; 9] = [
    Metric::Corrupted,
    Metric::Pinned,
    Metric::RememberedFailures,
    Metric::RedisErrors,
    Metric::OverlappingRecomputes,
    Metric::ReleasesRefused,
    Metric::StaleOverwrites,
    Metric::Timeouts,
    Metric::Errors,
];

/// Counters whose zero is itself the lesson (early refresh: nobody met a
/// miss), shown as they are while the run goes on; any other counter at 0
/// mid-run is pending: its event has not happened yet.
pub const ZERO_PROVES: [Metric; 1] = [Metric::Misses];

/// A counter at `v` is pending: still 0, its event not yet happened, the
/// run not over (and its zero is not itself the lesson).
pub fn pending(metric: Metric, v: f64, ended: bool) -> bool {
    v == 0.0 && !ended && !ZERO_PROVES.contains(&metric)
}

/// The counter is damage: above zero it shows what went wrong.
pub fn is_damage(metric: Metric) -> bool {
    DAMAGE.contains(&metric)
}

pub(crate) fn proof(metric: Metric, note: &'static str) -> Proof {
    Proof {
        metric,
        note,
        damage: DAMAGE.contains(&metric),
    }
}

/// What a lesson needs before it can show anything, and where it shows:
/// the pitfall's own demonstration, one click away.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Needs {
    /// Why the counter cannot move on this scenario, in words.
    pub text: String,
    /// The demonstration, as a share link's query.
    pub link: &'static str,
    /// The button's words.
    pub action: &'static str,
}

/// One thing a lesson may lack: whether it is missing, and its name.
type Part = (bool, &'static str);

/// The parts that are missing, in one sentence: "A remembered failure
/// cannot bite here: it needs an origin that fails and steady traffic."
fn lacking(what: &str, parts: &[Part], link: &'static str) -> Option<Needs> {
    let names: Vec<&str> = parts.iter().filter(|p| p.0).map(|p| p.1).collect();
    let list = match names.split_last() {
        Some((last, [])) => last.to_string(),
        Some((last, rest)) => format!("{} and {last}", rest.join(", ")),
        None => return None,
    };
    Some(Needs {
        text: format!("{what} cannot bite here: it needs {list}."),
        link,
        action: "Show it where it bites",
    })
}

fn singleflight_on(s: &Scenario) -> Part {
    (!s.singleflight, "singleflight on")
}

/// The running scenario's lesson, measured.
#[derive(Clone, Debug, PartialEq)]
pub struct Lesson {
    /// Which lesson: a preset's name, a pitfall's, or `changed` (numbers
    /// against the preset's own run) or `run` (no lesson fits).
    pub name: &'static str,
    /// The counter (a `Report` field) that proves it.
    pub metric: Metric,
    /// That counter's value in the report the sentence was made from.
    pub value: f64,
    /// One or two sentences, true for the run: every number in them is a
    /// counter of the run, of its contrast, or a knob.
    pub sentence: String,
    /// The sentence's clauses, each with the claims it makes, every one of
    /// them true for the run (`claims::check`).
    pub clauses: Vec<Clause>,
    pub damage: bool,
    /// The counter is still 0, its event has not happened yet, and the run
    /// goes on: show the number as pending, not as 0.
    pub pending: bool,
    /// Set when the lesson cannot show on this scenario (its counter stays
    /// 0 whatever happens): what it needs, and where it shows.
    pub needs: Option<Needs>,
}

/// The numbers a sentence states, as written (`8,000`, `56.3`, `30`): runs
/// of digits not glued to a letter (`p99` is a name, not a number).
pub fn numbers_in(text: &str) -> Vec<String> {
    let chars: Vec<char> = text.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let glued = i > 0 && chars[i - 1].is_alphanumeric();
        if chars[i].is_ascii_digit() && !glued {
            let start = i;
            while i < chars.len()
                && (chars[i].is_ascii_digit()
                    || (matches!(chars[i], ',' | '.')
                        && chars.get(i + 1).is_some_and(char::is_ascii_digit)))
            {
                i += 1;
            }
            out.push(chars[start..i].iter().collect());
        } else {
            i += 1;
        }
    }
    out
}

/// A count as the page writes it everywhere, in its boxes and its words
/// alike: `8000`.
pub fn count(n: u64) -> String {
    n.to_string()
}

/// A counter's value as a sentence writes it: as its box on the page
/// does (`8000`, `56.319`), a time with its unit.
pub fn shown(m: Metric, v: f64) -> String {
    if m.is_time() {
        format!("{} ms", stampede::decimal::format_json(v))
    } else {
        count(v.max(0.0) as u64)
    }
}

fn plural(n: u64, one: &str, many: &str) -> String {
    format!("{} {}", count(n), if n == 1 { one } else { many })
}

fn ms(v: u32) -> String {
    format!("{} ms", count(u64::from(v)))
}

// ---- what a scenario is ------------------------------------------------------

/// Singleflight that actually coalesces (a mismatched key coalesces nothing).
fn coalesces(s: &Scenario) -> bool {
    s.singleflight && !s.pitfalls.key_mismatch
}

fn origin_fails(s: &Scenario) -> bool {
    s.fail_rate > 0.0 || s.origin_outage_ms > 0
}

/// No fault of any kind is switched on.
fn calm(s: &Scenario) -> bool {
    !s.redis_down && !s.holder_crash && !s.hang && !origin_fails(s)
}

/// The interview card's shape: one burst, waiting losers, nothing stale.
fn plain_burst(s: &Scenario) -> bool {
    s.workload == Workload::Burst
        && calm(s)
        && s.stale_ms == 0
        && s.loser == LoserPolicy::Wait
        && s.xfetch_beta == 0.0
}

/// One lesson: when it fits, its counter, what to watch for and what the
/// run says.
pub(crate) struct Rule {
    /// Its place among stories that explain as many requests (and before
    /// a run, among those that fit): lower first.
    rank: u8,
    /// The lesson applies to `s` only when this holds.
    fits: fn(&Scenario) -> bool,
    /// Only as the lesson of its own preset (or a change of it), never
    /// picked for a scenario made from another.
    base_only: bool,
    /// The requests its story accounts for, read from the run's ledger:
    /// of the stories that fit, the one told at the end of a run is the
    /// one that explains the most ([`stories`]).
    explains: &'static [Share],
    metric: fn(&Scenario) -> Metric,
    watch: &'static str,
    /// The words for the run so far, each clause with the claims it makes.
    say: fn(&mut Say),
    needs: fn(&Scenario) -> Option<Needs>,
}

/// A share of a run's requests that a story accounts for, read from the
/// run's ledger ([`stampede::ledger`]).
#[derive(Clone, Copy, Debug)]
enum Share {
    /// Requests that ended in one of these ends, for one of these causes
    /// (an empty list is every end, or every cause).
    Cells(&'static [End], &'static [Cause]),
    /// Values another caller had changed in place (the run's `corrupted`:
    /// each is one of the requests that got their flight's value, and no
    /// other story counts it as a value served).
    Corrupted,
    /// What the scenario's fault windows act on, by their kinds.
    Windows,
}

/// Values served as the read path meant to serve them.
const VALUES: Share = Share::Cells(
    &[End::Hit, End::Written, End::Computed, End::Shared],
    &[Cause::Served],
);
const STALE_ANY: Share = Share::Cells(&[End::Stale], &[]);
const ORIGIN_FAILURES: Share = Share::Cells(
    &[],
    &[
        Cause::OriginFailed,
        Cause::OriginFault,
        Cause::Remembered,
        Cause::Marker,
    ],
);
const REDIS_CELLS: Share = Share::Cells(&[], &[Cause::RedisFailed, Cause::WaitedRedis]);
const DEAD_HOLDER: Share = Share::Cells(&[], &[Cause::Crashed, Cause::WaitedDeadHolder]);
/// Callers whose deadline passed behind someone else's work: polling for
/// a claim, or on a flight whose leader was itself waiting.
const WAITED_ON_A_CLAIM: Share =
    Share::Cells(&[End::Timeout], &[Cause::WaitedClaim, Cause::WaitedFlight]);
const ORIGIN_HUNG: Share = Share::Cells(
    &[End::Timeout, End::Error, End::Degraded],
    &[Cause::WaitedOrigin, Cause::OriginTimedOut],
);
const ADMISSION: Share = Share::Cells(&[], &[Cause::Admission, Cause::WaitedAdmission]);

/// The ledger cells of the parts, each once, and whether a corrupted
/// value counts (`Share::Corrupted`).
fn cells_of(parts: &[Share], s: &Scenario, r: &Report) -> (Vec<(End, Cause)>, bool) {
    let mut cells = Vec::new();
    let mut corrupted = false;
    let add = |ends: &[End], causes: &[Cause], cells: &mut Vec<(End, Cause)>| {
        let ends = if ends.is_empty() { &End::ALL[..] } else { ends };
        let causes = if causes.is_empty() {
            &Cause::ALL[..]
        } else {
            causes
        };
        for &e in ends {
            for &c in causes {
                if !cells.contains(&(e, c)) {
                    cells.push((e, c));
                }
            }
        }
    };
    for part in parts {
        match *part {
            Share::Cells(ends, causes) => add(ends, causes, &mut cells),
            Share::Corrupted => corrupted = true,
            Share::Windows => {
                for (i, f) in s.faults.iter().enumerate() {
                    let acted = r.fault_acts.get(i).is_some_and(|a| a.did_anything());
                    let own: &[Share] = match f.kind {
                        // Failing open, the values served past a Redis
                        // that failed are its story too.
                        FaultKind::Redis if acted && s.redis_error == RedisErrorPolicy::Open => {
                            &[REDIS_CELLS, VALUES]
                        }
                        FaultKind::Redis => &[REDIS_CELLS],
                        FaultKind::Origin => &[Share::Cells(&[], &[Cause::OriginFault])],
                        FaultKind::OriginHang | FaultKind::OriginSlow => {
                            &[ORIGIN_HUNG, WAITED_ON_A_CLAIM]
                        }
                        FaultKind::Holder => &[DEAD_HOLDER, WAITED_ON_A_CLAIM],
                        // A re-warm ends no request itself: the expiries it
                        // lines up are the jitter lesson's values.
                        FaultKind::TtlSync => &[],
                    };
                    for p in own {
                        if let Share::Cells(ends, causes) = *p {
                            add(ends, causes, &mut cells);
                        }
                    }
                }
            }
        }
    }
    (cells, corrupted)
}

/// How many of `r`'s requests the story of `rule` explains.
fn explained(rule: &Rule, s: &Scenario, r: &Report) -> u64 {
    let (cells, corrupted) = cells_of(rule.explains, s, r);
    let l = &r.ledger;
    let sum: u64 = cells.iter().map(|&(e, c)| l.get(e, c)).sum();
    let changed = r.corrupted.min(l.get(End::Shared, Cause::Served));
    if corrupted {
        sum + r.corrupted
    } else if cells.contains(&(End::Shared, Cause::Served)) {
        // A value another caller changed is no value served.
        sum - changed
    } else {
        sum
    }
}

impl Rule {
    /// The counter that proves its lesson on `s`.
    pub(crate) fn metric(&self, s: &Scenario) -> Metric {
        (self.metric)(s)
    }
}

impl std::fmt::Debug for Rule {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Rule").field("rank", &self.rank).finish()
    }
}

fn no_needs(_: &Scenario) -> Option<Needs> {
    None
}

// ---- the claims the lessons make ---------------------------------------------

pub const CORRUPTED: Claim = Claim::new("a request read a changed result", |x| x.r.corrupted > 0);
pub const REMEMBERED: Claim = Claim::new("a failure was handed out again", |x| {
    x.r.remembered_failures > 0
});
pub const PINNED: Claim = Claim::new("a request was still waiting", |x| x.r.pinned > 0);
pub const WITHIN_DEADLINE: Claim =
    Claim::new("the slowest answer came within the deadline knob", |x| {
        x.r.max_ms <= f64::from(x.s.deadline_ms)
    });
pub const PAST_DEADLINE: Claim =
    Claim::new("the slowest answer came after the deadline knob", |x| {
        x.r.max_ms > f64::from(x.s.deadline_ms)
    });
pub const NOTHING_SHARED: Claim =
    Claim::new("no request got another's result", |x| x.r.shared == 0);
pub const EVERY_RETRY_CALLED: Claim = Claim::new("every retry was an origin call", |x| {
    x.r.retries > 0 && x.r.retry_recomputes == x.r.retries
});
pub const SOME_RETRY_SPARED: Claim = Claim::new("some retry made no origin call", |x| {
    x.r.retry_recomputes < x.r.retries
});
pub const NO_RETRY_CALLED: Claim = Claim::new("no retry made an origin call", |x| {
    x.r.retries > 0 && x.r.retry_recomputes == 0
});
pub const COALESCED: Claim = Claim::new("singleflight coalesced", |x| {
    coalesces(x.s) && x.r.shared > 0
});
pub const NO_RECOMPUTES: Claim = Claim::new("no recompute ran", |x| x.r.recomputes == 0);
/// The refused releases are told apart by why: each was refused because
/// another holder had the claim or because it had expired.
pub const REFUSALS_SPLIT: Claim = Claim::new("each refused release was taken or expired", |x| {
    x.r.releases_refused == x.r.releases_refused_taken + x.r.releases_refused_expired
});
pub const REFUSED_TAKEN: Claim = Claim::new("a release found another holder's claim", |x| {
    x.r.releases_refused_taken > 0
});
pub const TIMEOUT_INSIDE: Claim =
    Claim::new("the Redis timeout is shorter than the deadline", |x| {
        x.s.redis_timeout_ms < x.s.deadline_ms
    });
pub const TIMEOUT_OUTSIDE: Claim =
    Claim::new("the Redis timeout is no shorter than the deadline", |x| {
        x.s.redis_timeout_ms >= x.s.deadline_ms
    });
pub const SKIPPED: Claim = Claim::new("a breaker skipped a command", |x| x.r.redis_skipped > 0);
/// Redis answered no command: none was a round trip.
pub const NONE_ANSWERED: Claim =
    Claim::new("Redis answered no command", |x| x.r.redis_round_trips == 0);
pub const NO_STALE: Claim = Claim::new("nothing was served stale", |x| x.r.stale_served == 0);
pub const NO_WINS: Claim = Claim::new("nobody won a claim", |x| x.r.claim_wins == 0);
pub const CLAIM_WON: Claim = Claim::new("a claim was won", |x| x.r.claim_wins > 0);
pub const NEGATIVE_HITS: Claim =
    Claim::new("a cached failure was served", |x| x.r.negative_hits > 0);
pub const FAILURES_LEFT: Claim = Claim::new("no failure was remembered or cached", |x| {
    x.r.negative_hits == 0 && x.r.remembered_failures == 0
});
pub const TRIED_AGAIN: Claim = Claim::new("a call came after a failed one", |x| {
    x.r.recomputes > x.r.origin_failures
});
pub const OWN_CALLS: Claim = Claim::new("no more errors than failed calls, none cached", |x| {
    x.r.errors <= x.r.origin_failures && x.r.negative_hits == 0
});
pub const OVERWRITES: Claim = Claim::new("an older value landed over a newer", |x| {
    x.r.stale_overwrites > 0
});
pub const CLAIM_SHORT: Claim = Claim::new("the claim TTL is shorter than the recompute", |x| {
    x.s.claim != ClaimMode::Off && x.s.claim_ttl_ms < x.s.recompute_ms
});
pub const FITS_DEADLINE: Claim = Claim::new(
    "a recompute at its usual latency fits in the deadline",
    |x| x.s.recompute_ms < x.s.deadline_ms,
);
pub const SWAMPED: Claim = Claim::new(
    "more recomputes at the origin at once than its capacity",
    |x| x.r.origin_peak_concurrency > u64::from(x.s.origin_capacity),
);
pub const NOT_SWAMPED: Claim = Claim::new("the origin never ran past its capacity", |x| {
    x.r.origin_peak_concurrency <= u64::from(x.s.origin_capacity)
});
pub const CLAIMED: Claim = Claim::new("a claim was attempted", |x| x.r.claim_attempts > 0);
pub const MANY_INSTANCES: Claim = Claim::new("more than one instance", |x| x.s.instances > 1);
pub const MANY_THREADS: Claim =
    Claim::new("more than one thread per instance", |x| x.s.threads > 1);
pub const ONE_PER_INSTANCE: Claim = Claim::new("no more claim attempts than instances", |x| {
    x.r.claim_attempts <= u64::from(x.s.instances)
});
pub const MORE_THAN_ONE_PER_INSTANCE: Claim =
    Claim::new("more claim attempts than instances", |x| {
        x.r.claim_attempts > u64::from(x.s.instances)
    });
pub const FLEET_TO_ONE: Claim = Claim::new("fewer recomputes than instances", |x| {
    x.r.recomputes < u64::from(x.s.instances)
});
pub const EVERY_THREAD: Claim = Claim::new("a recompute per request", |x| {
    x.r.recomputes == x.r.requests
});
pub const EVERY_MISS_CLAIMED: Claim = Claim::new("a claim attempt per request that missed", |x| {
    x.r.misses > 0 && x.r.claim_attempts >= x.r.misses
});
pub const EVERY_PINNED: Claim = Claim::new("every request was still waiting", |x| {
    x.r.requests > 0 && x.r.pinned == x.r.requests
});
pub const FAULT_BIT: Claim = Claim::new("a fault of the list acted", |x| x.r.fault_bites > 0);
/// Every request that missed made an origin call of its own (none shed,
/// merged or answered by another's write).
pub const A_CALL_PER_MISS: Claim = Claim::new("a recompute per request that missed", |x| {
    x.r.misses > 0 && x.r.recomputes == x.r.misses && x.r.admission_shed == 0
});
/// No request read a value on its first read (every read missed or failed).
pub const NO_HITS: Claim = Claim::new("no request read a value first time", |x| {
    x.r.ledger.ended(End::Hit) == 0 && x.r.local_hits == 0 && x.r.requests > 0
});
/// Claims were tried and none won in Redis.
pub const EVERY_CLAIM_FAILED: Claim = Claim::new("every claim attempt failed", |x| {
    x.r.claim_attempts > 0 && x.r.claim_wins == 0 && x.r.redis_errors > 0
});
/// An origin call failed.
pub const ORIGIN_FAILED: Claim = Claim::new("an origin call failed", |x| x.r.origin_failures > 0);
/// The origin answered no call, with a value or an error.
pub const ORIGIN_SILENT: Claim = Claim::new("the origin answered no call", |x| {
    x.r.origin_failures == 0 && x.r.values_written == 0 && x.r.computed == 0
});
/// Most callers that timed out were waiting on the origin.
pub const TIMED_OUT_ON_ORIGIN: Claim = Claim::new("most timeouts waited on the origin", |x| {
    2 * x.r.ledger.get(End::Timeout, Cause::WaitedOrigin) > x.r.timeouts
});
/// The origin answered a call after its caller's deadline.
pub const ORIGIN_ANSWERED: Claim = Claim::new("the origin answered a call", |x| {
    x.r.values_written > 0 || x.r.origin_failures > 0
});
/// Timeouts waiting on Redis are at least 1 % of the requests and most of
/// the timeouts: the Redis timeout did not act in time for them.
pub const TIMED_OUT_ON_REDIS: Claim =
    Claim::new("at least 1 % timed out, most waiting on Redis", |x| {
        let on_redis = x.r.ledger.get(End::Timeout, Cause::WaitedRedis);
        2 * on_redis > x.r.timeouts && 100 * x.r.timeouts >= x.r.requests
    });
/// A dead holder's claim TTL reaches past the run's last event: nobody
/// could take the claim again before the run ended.
pub const DEAD_CLAIM_OUTLASTED: Claim =
    Claim::new("a dead holder's claim TTL outlasted the run", |x| {
        x.r.crashed > 0 && f64::from(x.s.claim_ttl_ms) > x.r.elapsed_ms
    });

// ---- a claim the client gave up on (a paused Redis) -------------------------

pub const LATE_CLAIM: Claim = Claim::new("a claim landed after its client gave up on it", |x| {
    x.r.late_claims > 0
});
pub const LATE_ALL_RELEASED: Claim =
    Claim::new("every late claim was cleared by its token's release", |x| {
        x.r.late_claims > 0 && x.r.late_claims_released == x.r.late_claims
    });
pub const LATE_HELD_AT_RESUME: Claim =
    Claim::new("a late claim still held its key once Redis resumed", |x| {
        x.r.late_claims_held_at_resume > 0
    });

/// A Redis that hung and resumed ran the claims their clients had given
/// up on: said where one landed, with whether the release by token that
/// each client sent after its claim cleared it.
fn late_claims(x: &mut Say) {
    let (s, r) = (x.run().s, x.run().r);
    x.when(
        &[LATE_CLAIM],
        format!(
            " A claim the client gave up on may still be held: when Redis resumed it granted {} already timed out.",
            plural(
                r.late_claims,
                "claim whose client had",
                "claims whose clients had"
            )
        ),
    );
    x.first(vec![
        (
            &[LATE_CLAIM, LATE_ALL_RELEASED],
            " The release by token each client sent after its claim, on the same connection, cleared it.".into(),
        ),
        (
            &[LATE_CLAIM, LATE_HELD_AT_RESUME],
            format!(
                " {} still held {} key after the resume, until a release by token or the {} claim TTL freed it.",
                plural(r.late_claims_held_at_resume, "late claim", "late claims"),
                if r.late_claims_held_at_resume == 1 { "its" } else { "their" },
                ms(s.claim_ttl_ms)
            ),
        ),
    ]);
}

/// A pitfall's rule fits `s` (a pitfall's lesson comes before any
/// fault's).
#[cfg(test)]
pub(crate) fn a_pitfall_fits(s: &Scenario) -> bool {
    PITFALLS.iter().any(|(_, x)| (x.fits)(s))
}

/// A lesson by name: a pitfall's, a fault window's, or a preset's (its
/// rule is the preset's row's, in [`PRESETS`]).
#[derive(Clone, Copy)]
struct Story {
    name: &'static str,
    rule: &'static Rule,
}

/// Every lesson, by rank.
fn all_stories() -> Vec<Story> {
    let own = PITFALLS.iter().chain([&FAULT_STORY]);
    let mut all: Vec<Story> = own
        .map(|&(name, rule)| Story { name, rule })
        .chain(PRESETS.iter().map(|p| Story {
            name: p.name,
            rule: p.rule,
        }))
        .collect();
    all.sort_by_key(|x| x.rule.rank);
    all
}

/// The pitfalls' lessons, first (in this order) before any run.
const PITFALLS: [(&str, &Rule); 4] = [
    ("mutable-result", &MUTABLE_RESULT_RULE),
    ("remember-failure", &REMEMBER_FAILURE_RULE),
    ("no-deadline", &NO_DEADLINE_RULE),
    ("key-mismatch", &KEY_MISMATCH_RULE),
];

/// The lesson of a fault window thrown into the run.
const FAULT_STORY: (&str, &Rule) = ("fault", &FAULT_RULE);

pub(crate) const MUTABLE_RESULT_RULE: Rule = Rule {
    rank: 0,
    explains: &[Share::Corrupted],
    fits: |s| s.pitfalls.mutable_result,
    base_only: false,
    metric: |_| Metric::Corrupted,
    watch: "Watch the followers: what if one of them changes the shared result in place?",
    say: |x| {
        let r = x.run().r;
        x.first(vec![
            (
                &[CORRUPTED],
                format!(
                    "{} read a value another caller had changed in place: the first follower altered the one shared result, and the followers after it got the altered one.",
                    plural(r.corrupted, "request", "requests")
                ),
            ),
            (&[], "No request read a value another caller had changed in this run.".into()),
        ]);
    },
    needs: |s| {
        lacking(
            "A shared result changed in place",
            &[
                singleflight_on(s),
                (s.threads < 3, "three threads or more per instance"),
            ],
            "pf=mutable-result",
        )
    },
};

pub(crate) const REMEMBER_FAILURE_RULE: Rule = Rule {
    rank: 1,
    explains: &[ORIGIN_FAILURES],
    fits: |s| s.pitfalls.remember_failure,
    base_only: false,
    metric: |_| Metric::RememberedFailures,
    watch: "Watch for errors handed out after the origin has recovered.",
    say: |x| {
        let r = x.run().r;
        x.first(vec![
            (
                &[REMEMBERED],
                format!(
                    "{} a failure handed out again after its flight had ended: one blip became a sticky outage.",
                    plural(r.remembered_failures, "answer was", "answers were")
                ),
            ),
            (&[], "No failure was handed out again in this run.".into()),
        ]);
    },
    needs: |s| {
        lacking(
            "A remembered failure",
            &[
                singleflight_on(s),
                (
                    s.claim == ClaimMode::Outer,
                    "the claim inside singleflight (outside it, a caller meets the map only after winning the claim)",
                ),
                (!origin_fails(s) && !s.hang, "an origin that fails"),
                (
                    s.workload != Workload::Steady,
                    "steady traffic (callers who come after a failed flight)",
                ),
                (
                    s.loser == LoserPolicy::Stale && s.stale_ms > 0,
                    "losers that wait (serving stale, they never meet the failure)",
                ),
            ],
            "preset=failure&pf=remember-failure",
        )
    },
};

pub(crate) const NO_DEADLINE_RULE: Rule = Rule {
    rank: 2,
    explains: &[Share::Cells(&[End::Unanswered], &[])],
    fits: |s| s.pitfalls.no_deadline,
    base_only: false,
    metric: |_| Metric::Pinned,
    watch: "Watch the waiting threads: with no deadline, what frees them?",
    say: |x| {
        let (s, r) = (x.run().s, x.run().r);
        x.first(vec![
            (
                &[PINNED, EVERY_PINNED],
                format!(
                    "Every request, {}, was still waiting when the run stopped: with no deadline nothing frees them.",
                    count(r.pinned)
                ),
            ),
            (
                &[PINNED],
                format!(
                    "{} still waiting when the run stopped: with no deadline nothing frees them.",
                    plural(r.pinned, "request was", "requests were")
                ),
            ),
            (
                &[NONE_PINNED, WITHIN_DEADLINE],
                format!(
                    "Every request ended in this run within {}: nothing hung, so the missing deadline cost nothing yet.",
                    ms(s.deadline_ms)
                ),
            ),
            (
                &[NONE_PINNED, PAST_DEADLINE],
                format!(
                    "Every request ended, but the slowest waited {}, past the {} a deadline would have allowed: with none, nothing cut that wait short.",
                    shown(Metric::MaxMs, r.max_ms),
                    ms(s.deadline_ms)
                ),
            ),
        ]);
    },
    needs: |s| {
        lacking(
            "A missing deadline",
            &[(
                !s.hang,
                "something that never answers, such as a hung origin",
            )],
            "preset=hang&pf=no-deadline",
        )
    },
};

pub(crate) const KEY_MISMATCH_RULE: Rule = Rule {
    rank: 3,
    explains: &[VALUES],
    fits: |s| s.pitfalls.key_mismatch,
    base_only: false,
    metric: |s| {
        if s.claim == ClaimMode::Off {
            Metric::Recomputes
        } else {
            Metric::ClaimAttempts
        }
    },
    watch: "Watch singleflight: its key never matches the cache key.",
    say: |x| {
        let (s, r) = (x.run().s, x.run().r);
        let what = if s.claim == ClaimMode::Off {
            plural(r.recomputes, "recompute", "recomputes")
        } else {
            plural(r.claim_attempts, "claim attempt", "claim attempts")
        };
        let n = plural(r.requests, "request", "requests");
        x.first(vec![
            (
                &[NOTHING_SHARED],
                format!(
                    "The flight key never matched the cache key, so nothing coalesced in-process: {what} for {n}."
                ),
            ),
            (
                &[],
                format!("The flight key never matched the cache key: {what} for {n}."),
            ),
        ]);
    },
    needs: |s| {
        lacking(
            "A mismatched flight key",
            &[singleflight_on(s)],
            "pf=key-mismatch",
        )
    },
};

pub(crate) const OPEN_LOOP_RULE: Rule = Rule {
    rank: 4,
    explains: &[Share::Cells(&[End::TurnedAway, End::Timeout], &[])],
    fits: |s| s.workload == Workload::Steady && s.arrivals == stampede::scenario::Arrivals::Open,
    base_only: false,
    metric: |_| Metric::Rejected,
    watch: "Requests keep arriving whatever the latency: watch the threads and the queue.",
    say: |x| {
        let (s, r) = (x.run().s, x.run().r);
        x.plain(format!(
            "{} arrived at {} a second whatever the latency: {} timed out, {} turned away with every thread of their instance busy and its queue full, and the p99 was {}.",
            plural(r.requests, "request", "requests"),
            count(u64::from(s.rate_per_s)),
            count(r.timeouts),
            plural(r.rejected, "was", "were"),
            shown(Metric::P99Ms, r.p99_ms)
        ));
    },
    needs: no_needs,
};

pub(crate) const RETRY_STORM_RULE: Rule = Rule {
    rank: 5,
    explains: &[Share::Cells(&[End::Error, End::Timeout], &[])],
    fits: |s| s.retries > 0 && (origin_fails(s) || s.hang || s.redis_down),
    base_only: false,
    metric: |_| Metric::Recomputes,
    watch: "Callers retry what fails: watch the origin's load.",
    say: |x| {
        let (s, r) = (x.run().s, x.run().r);
        x.plain(format!(
            "{} made {} after failures and timeouts (at most {} each): {} for {}",
            plural(r.requests, "request", "requests"),
            plural(r.retries, "retry", "retries"),
            count(u64::from(s.retries)),
            plural(r.recomputes, "origin call", "origin calls"),
            plural(r.requests, "request", "requests")
        ));
        x.first(vec![
            (
                &[EVERY_RETRY_CALLED],
                ", and each retry was an origin call of its own.".into(),
            ),
            (
                &[COALESCED, SOME_RETRY_SPARED],
                format!(
                    ", and singleflight let retries join a flight already running: {} made {} of their own.",
                    plural(r.retries, "retry", "retries"),
                    plural(r.retry_recomputes, "origin call", "origin calls")
                ),
            ),
            (
                &[NO_RETRY_CALLED],
                "; no retry reached the origin: each was answered without a call of its own."
                    .into(),
            ),
            (
                &[],
                format!(
                    "; {} reached the origin, the rest were answered without a call of their own.",
                    plural(r.retry_recomputes, "retry", "retries")
                ),
            ),
        ]);
    },
    needs: no_needs,
};

pub(crate) const FAULT_RULE: Rule = Rule {
    rank: 6,
    explains: &[Share::Windows],
    fits: |s| !s.faults.is_empty(),
    base_only: false,
    metric: |s| match s.faults.first().map(|f| f.kind) {
        Some(FaultKind::Redis) => Metric::RedisErrors,
        Some(FaultKind::Origin) => Metric::Errors,
        Some(FaultKind::OriginSlow) => Metric::P99Ms,
        Some(FaultKind::TtlSync) => Metric::OriginPeakConcurrency,
        _ => Metric::Timeouts,
    },
    watch: "A fault at its moment (the timeline marks it): watch the run before and after it.",
    say: |x| {
        let (s, r) = (x.run().s, x.run().r);
        // Each window with what it did, as it recorded it: the
        // outcomes and their causes are the ledger's to tell.
        let so_far = if x.run().ended { "" } else { " so far" };
        let last = s.faults.len().saturating_sub(1);
        for (i, f) in s.faults.iter().enumerate() {
            let what = fault_words(s, f);
            let what = if i == 0 { capital(what) } else { what };
            let sep = if i == last { "." } else { "; " };
            let acts = r.fault_acts.get(i).copied().unwrap_or_default();
            let did = fault_acts_words_in(s, &acts);
            let text = if did.is_empty() {
                format!("{what}: it did nothing{so_far}{sep}")
            } else {
                format!("{what}: {did}{so_far}{sep}")
            };
            x.when(&[Claim::fault(i, acts)], text);
        }
        late_claims(x);
    },
    needs: no_needs,
};

pub(crate) const REDIS_HANG_RULE: Rule = Rule {
    rank: 7,
    explains: &[REDIS_CELLS, VALUES],
    fits: |s| s.redis_down && s.redis_outage == RedisOutage::Hang,
    base_only: false,
    metric: |_| Metric::Timeouts,
    watch: "Redis is set to hang: watch how long each command waits.",
    say: |x| {
        let (s, r) = (x.run().s, x.run().r);
        x.when(
            &[REDIS_FAILED],
            format!(
                "Redis hung, and each command waited out the {} client timeout: {} timed out and {} ran.",
                ms(s.redis_timeout_ms),
                plural(r.timeouts, "caller", "callers"),
                plural(r.recomputes, "recompute", "recomputes")
            ),
        );
        x.when(
            &[SKIPPED],
            format!(
                " After a timeout each instance's breaker stayed open for {} and answered at once: {} not sent at all.",
                ms(s.redis_breaker_ms),
                plural(r.redis_skipped, "command was", "commands were")
            ),
        );
        let policy = match s.redis_error {
            RedisErrorPolicy::Open => "open",
            RedisErrorPolicy::Closed => "closed",
        };
        let deadline = ms(s.deadline_ms);
        x.first(vec![
            (
                &[TIMEOUT_OUTSIDE],
                format!(
                    " A timeout no shorter than the callers' {deadline} deadline leaves failing {policy} nothing to act on: fail open needs fail fast."
                ),
            ),
            (
                &[TIMEOUT_INSIDE, NO_TIMEOUTS, ENDED],
                format!(
                    " With the timeout inside the callers' {deadline} deadline, failing {policy} acted in time: no caller timed out."
                ),
            ),
            (
                &[TIMEOUT_INSIDE, TIMEOUTS, TIMED_OUT_ON_REDIS],
                format!(
                    " The timeout is inside the callers' {deadline} deadline, yet {} timed out: a caller waits out several commands, one after another, so failing {policy} did not act in time.",
                    plural(r.timeouts, "caller", "callers")
                ),
            ),
            (
                &[TIMEOUT_INSIDE],
                format!(" The timeout is inside the callers' {deadline} deadline."),
            ),
        ]);
    },
    needs: no_needs,
};

pub(crate) const REDIS_DOWN_RULE: Rule = Rule {
    rank: 8,
    explains: &[REDIS_CELLS, VALUES],
    fits: |s| s.redis_down,
    base_only: false,
    metric: |_| Metric::RedisErrors,
    watch: "Redis is set to fail every command: watch what the claim does about it.",
    say: |x| {
        let (s, r, ended) = (x.run().s, x.run().r, x.run().ended);
        // "Every" only where no command was answered (a round trip is a
        // command sent and answered): else the count alone.
        x.first(vec![
            (
                &[REDIS_FAILED, NONE_ANSWERED],
                format!(
                    "Every Redis command failed ({} {})",
                    count(r.redis_errors),
                    if ended { "in all" } else { "so far" }
                ),
            ),
            (
                &[],
                format!(
                    "{}{}",
                    plural(
                        r.redis_errors,
                        "Redis command failed",
                        "Redis commands failed"
                    ),
                    if ended { "" } else { " so far" }
                ),
            ),
        ]);
        match (s.claim, s.redis_error) {
            (ClaimMode::Off, _) => {
                let calls = plural(r.recomputes, "recompute", "recomputes");
                x.first(vec![
                    (
                        &[NO_HITS],
                        format!(": every read missed, and {calls} went to the origin."),
                    ),
                    (&[], format!(": {calls} went to the origin.")),
                ]);
            }
            (_, RedisErrorPolicy::Open) => {
                let calls = format!(
                    "{} from {}",
                    plural(r.recomputes, "recompute", "recomputes"),
                    plural(u64::from(s.instances), "instance", "instances")
                );
                x.first(vec![
                    (
                        &[EVERY_CLAIM_FAILED],
                        format!(", and each claim failed open: {calls}"),
                    ),
                    (&[], format!(": {calls}")),
                ]);
                // No claim landed: every command failed, claims too.
                x.when(&[REDIS_FAILED, NO_WINS], ", with no lock");
                x.plain(". That is only as good as a fast failure: a Redis that hangs holds every caller until the client's timeout.");
            }
            (_, RedisErrorPolicy::Closed) => {
                let ran = format!(
                    "{} ran, and {} gave up waiting",
                    plural(r.recomputes, "recompute", "recomputes"),
                    plural(r.timeouts, "caller", "callers")
                );
                x.first(vec![
                    (
                        &[EVERY_CLAIM_FAILED],
                        format!(", and each claim failed closed: {ran}"),
                    ),
                    (&[], format!(": {ran}")),
                ]);
                x.first(vec![
                    (
                        &[NO_WINS, NO_RECOMPUTES],
                        " for a value nobody was allowed to compute.".into(),
                    ),
                    (&[], ".".into()),
                ]);
            }
        }
        if s.stale_ms > 0 {
            x.when(
                &[NO_STALE],
                " The stale copy lives in Redis too, so none could be served.",
            );
        }
    },
    needs: no_needs,
};

pub(crate) const HOLDER_CRASH_RULE: Rule = Rule {
    rank: 9,
    explains: &[DEAD_HOLDER, WAITED_ON_A_CLAIM],
    fits: |s| s.holder_crash && s.claim != ClaimMode::Off && !s.stale_while_revalidate,
    base_only: false,
    metric: |_| Metric::Timeouts,
    watch: "The first claim winner is set to die without releasing: watch who may refresh.",
    say: |x| {
        let (s, r, ended) = (x.run().s, x.run().r, x.run().ended);
        let (could, gave) = if ended {
            ("could", "gave up meanwhile")
        } else {
            ("can", "have given up so far")
        };
        x.first(vec![
            (
                &[CRASHED],
                format!(
                    "The first claim winner died without releasing: nobody {could} refresh while its {} TTL held, and {} {gave}.",
                    ms(s.claim_ttl_ms),
                    plural(r.timeouts, "caller", "callers")
                ),
            ),
            (
                &[NO_WINS, ENDED],
                "The claim's winner was to die holding it, but nobody won a claim in this run, so there was none to hold.".into(),
            ),
        ]);
        // A TTL longer than the run: the stall is the whole run.
        x.when(
            &[CRASHED, DEAD_CLAIM_OUTLASTED, NO_RECOMPUTES, ENDED],
            " Its TTL outlasted the run: no refresh ran at all.",
        );
    },
    needs: no_needs,
};

pub(crate) const HANG_RULE: Rule = Rule {
    rank: 10,
    explains: &[ORIGIN_HUNG, WAITED_ON_A_CLAIM],
    fits: |s| s.hang,
    base_only: false,
    metric: |_| Metric::Timeouts,
    watch: "The origin is set never to answer: watch what frees the callers.",
    say: |x| {
        let (s, r) = (x.run().s, x.run().r);
        x.first(vec![
            (
                &[TIMEOUTS, ORIGIN_SILENT],
                format!(
                    "The origin never answered: {} freed by a {} deadline.",
                    plural(r.timeouts, "caller was", "callers were"),
                    ms(s.deadline_ms)
                ),
            ),
            (
                &[ORIGIN_SILENT],
                format!(
                    "The origin never answered: {} timed out.",
                    plural(r.timeouts, "caller", "callers")
                ),
            ),
            (
                &[],
                format!(
                    "The origin was set to hang: {} timed out.",
                    plural(r.timeouts, "caller", "callers")
                ),
            ),
        ]);
        x.when(
            &[ORIGIN_TIMED_OUT],
            format!(
                " The {} origin timeout ends the wait on the call, not the call: it goes on at the origin, holding a connection, unless the origin cancels it.",
                ms(s.origin_timeout_ms)
            ),
        );
    },
    needs: no_needs,
};

pub(crate) const FAILURE_RULE: Rule = Rule {
    rank: 11,
    explains: &[ORIGIN_FAILURES],
    fits: origin_fails,
    base_only: false,
    metric: |_| Metric::Errors,
    watch: "The origin is set to fail for a while: watch who gets the failure.",
    say: |x| {
        let (s, r) = (x.run().s, x.run().r);
        let errors = plural(r.errors, "request", "requests");
        let written = plural(r.values_written, "value was", "values were");
        x.first(vec![
            (
                &[ORIGIN_FAILED, COALESCED, FAILURES_LEFT, TRIED_AGAIN],
                format!(
                    "{errors} got an error while the origin failed. Each failure reached only the callers waiting on it, then left the map, so later requests tried again: {written} written."
                ),
            ),
            (
                &[ORIGIN_FAILED, NEGATIVE_HITS],
                format!(
                    "{errors} got an error while the origin failed. Each failure was cached for {}, so {} got it from the cache instead of calling the origin again: {} in all, {written} written.",
                    ms(s.negative_ttl_ms),
                    plural(r.negative_hits, "request", "requests"),
                    plural(r.recomputes, "origin call", "origin calls")
                ),
            ),
            (
                &[ORIGIN_FAILED, OWN_CALLS],
                format!(
                    "{errors} got an error while the origin failed, each from a call of its own: {} of {} failed.",
                    count(r.origin_failures),
                    plural(r.recomputes, "origin call", "origin calls")
                ),
            ),
            (
                &[ORIGIN_FAILED],
                format!(
                    "{errors} got an error while the origin failed: {} of {} failed, {written} written.",
                    count(r.origin_failures),
                    plural(r.recomputes, "origin call", "origin calls")
                ),
            ),
            (
                &[NO_FAILED_CALLS],
                format!(
                    "The origin was set to fail, but none of its {} did: {errors} got an error.",
                    plural(r.recomputes, "call", "calls")
                ),
            ),
        ]);
    },
    needs: no_needs,
};

pub(crate) const HOT_KEY_RULE: Rule = Rule {
    rank: 12,
    explains: &[VALUES, Share::Cells(&[End::Timeout], &[Cause::WaitedRedis])],
    fits: |s| s.redis_ops_per_ms > 0,
    base_only: false,
    metric: |_| Metric::P99Ms,
    watch: "Every read is a command on one Redis: watch its queue.",
    say: |x| {
        let (s, r) = (x.run().s, x.run().r);
        x.plain(format!(
            "{} against a Redis serving {} commands a millisecond: up to {} queued there, a command's p99 was {} and a request's {}.",
            plural(r.requests, "request", "requests"),
            count(u64::from(s.redis_ops_per_ms)),
            count(r.redis_queue_peak),
            shown(Metric::RedisP99Ms, r.redis_p99_ms),
            shown(Metric::P99Ms, r.p99_ms)
        ));
        if s.local_cache_ms > 0 {
            x.plain(format!(
                " Each instance's {} local copy answered {} with no round trip.",
                ms(s.local_cache_ms),
                plural(r.local_hits, "read", "reads")
            ));
        }
    },
    needs: no_needs,
};

pub(crate) const LATE_WRITER_RULE: Rule = Rule {
    rank: 13,
    explains: &[VALUES],
    fits: |s| s.workload == Workload::Steady,
    base_only: true,
    metric: |s| {
        if s.fenced_writes {
            Metric::WritesRefused
        } else {
            Metric::StaleOverwrites
        }
    },
    watch: "Watch the writes: can a slow recompute outlive its claim?",
    say: |x| {
        let (s, r) = (x.run().s, x.run().r);
        if s.fenced_writes {
            x.plain(format!(
                "Fenced writes: the store refused {} older than the one it held, and {} over a newer one.",
                plural(r.writes_refused, "write", "writes"),
                plural(r.stale_overwrites, "older value landed", "older values landed")
            ));
            return;
        }
        let n = plural(r.stale_overwrites, "write", "writes");
        x.first(vec![
            (
                &[OVERWRITES, CLAIM_SHORT, OVERLAPS],
                format!(
                    "{n} put an older value over a newer one: a {} recompute outlived its {} claim, another instance recomputed, and the older value landed last.",
                    ms(s.recompute_ms),
                    ms(s.claim_ttl_ms)
                ),
            ),
            (
                &[OVERWRITES],
                format!(
                    "{n} put an older value over a newer one: two fills of the same key raced, and the older one landed last."
                ),
            ),
            (
                &[],
                "No write put an older value over a newer one in this run.".into(),
            ),
        ]);
    },
    needs: no_needs,
};

pub(crate) const SHORT_TTL_RULE: Rule = Rule {
    rank: 14,
    explains: &[VALUES],
    fits: |s| s.claim != ClaimMode::Off && s.claim_ttl_ms < s.recompute_ms,
    base_only: false,
    // The claim's own counter: the token check refusing the late
    // holder's release (the overlap is in the sentence and the tour).
    metric: |_| Metric::ReleasesRefused,
    watch: "Watch the claim's TTL against its holder's recompute: what becomes of a late release?",
    say: |x| {
        let (s, r) = (x.run().s, x.run().r);
        x.first(vec![
            (
                &[OVERLAPS],
                format!(
                    "The {} claim expired under a {} recompute and another instance started the same one: {} overlapped one still running.",
                    ms(s.claim_ttl_ms),
                    ms(s.recompute_ms),
                    plural(r.overlapping_recomputes, "recompute", "recomputes")
                ),
            ),
            (
                &[],
                format!(
                    "The {} claim is shorter than a {} recompute, yet no recompute overlapped another in this run.",
                    ms(s.claim_ttl_ms),
                    ms(s.recompute_ms)
                ),
            ),
        ]);
        x.when(
            &[REFUSALS_SPLIT],
            format!(
                " {} refused: {} because another instance held the claim by then, {} because it had simply expired.",
                plural(r.releases_refused, "release was", "releases were"),
                count(r.releases_refused_taken),
                count(r.releases_refused_expired)
            ),
        );
        x.when(
            &[REFUSED_TAKEN],
            " A plain DEL would have freed another holder's claim for a third.",
        );
    },
    needs: no_needs,
};

pub(crate) const COLD_SKEW_RULE: Rule = Rule {
    rank: 15,
    explains: &[VALUES, ADMISSION],
    fits: |s| s.workload == Workload::Cold && s.key_skew > 0.0,
    base_only: false,
    metric: |s| {
        if s.admission > 0 {
            Metric::AdmissionShed
        } else {
            Metric::Recomputes
        }
    },
    watch: "The cache is empty and a few keys are hot: watch the origin.",
    say: |x| {
        let (s, r) = (x.run().s, x.run().r);
        x.plain(format!(
            "After a restart, {} for {} with skew {}: {} ran",
            plural(r.requests, "request", "requests"),
            plural(u64::from(s.keys), "key", "keys"),
            s.get("key_skew").unwrap_or_default(),
            plural(r.recomputes, "recompute", "recomputes")
        ));
        if coalesces(s) || s.claim != ClaimMode::Off {
            x.first(vec![
                (
                    &[MERGED],
                    format!(
                        "; coalescing merged the requests that shared a hot key ({} missed)",
                        plural(r.misses, "request", "requests")
                    ),
                ),
                (&[], "; coalescing found little to merge".into()),
            ]);
        } else {
            x.first(vec![
                (
                    &[A_CALL_PER_MISS],
                    "; with no coalescing every request that missed recomputed for itself".into(),
                ),
                (&[], "; with no coalescing".into()),
            ]);
        }
        if s.admission > 0 {
            x.plain(format!(
                ", and admission ({} per instance) shed {}, each answered degraded",
                count(u64::from(s.admission)),
                plural(r.admission_shed, "recompute", "recomputes")
            ));
        }
        x.plain(format!(
            ", up to {} at the origin at once.",
            count(r.origin_peak_concurrency)
        ));
    },
    needs: no_needs,
};

pub(crate) const COLD_RULE: Rule = Rule {
    rank: 16,
    explains: &[VALUES, ADMISSION],
    fits: |s| s.workload == Workload::Cold,
    base_only: false,
    metric: |s| {
        if s.admission > 0 {
            Metric::AdmissionShed
        } else {
            Metric::OriginPeakConcurrency
        }
    },
    watch: "The cache is empty: watch how many recomputes reach the origin at once.",
    say: |x| {
        let (s, r) = (x.run().s, x.run().r);
        let asked = format!(
            "After a restart, with {} and the cache empty",
            plural(u64::from(s.keys), "key", "keys")
        );
        if s.admission == 0 {
            let ran = format!(
                "{asked}: with no admission control {} ran, up to {} at the origin at once",
                plural(r.recomputes, "recompute", "recomputes"),
                count(r.origin_peak_concurrency)
            );
            x.first(vec![
                (
                    &[SWAMPED],
                    format!(
                        "{ran}, past its capacity of {}: coalescing merges only requests for the same key, and nothing else bounds the origin.",
                        count(u64::from(s.origin_capacity))
                    ),
                ),
                (&[], format!("{ran}.")),
            ]);
            return;
        }
        let ran = format!(
            "{asked}: {} ran, at most {} at the origin at once",
            plural(r.recomputes, "recompute", "recomputes"),
            count(r.origin_peak_concurrency)
        );
        let admission = format!("admission ({} per instance)", count(u64::from(s.admission)));
        let shed = plural(r.admission_shed, "recompute", "recomputes");
        x.first(vec![
            (
                &[NOT_SWAMPED, SHED],
                format!(
                    "{ran}, and {admission} shed {shed} with a degraded answer instead of swamping the origin."
                ),
            ),
            (
                &[SWAMPED],
                format!(
                    "{ran}, past the origin's capacity of {}: {admission} across {} still let the origin be swamped, and shed {shed} with a degraded answer.",
                    count(u64::from(s.origin_capacity)),
                    plural(u64::from(s.instances), "instance", "instances")
                ),
            ),
            (&[], format!("{ran}, and {admission} shed {shed}.")),
        ]);
    },
    needs: no_needs,
};

pub(crate) const SWR_RULE: Rule = Rule {
    rank: 17,
    explains: &[STALE_ANY, VALUES],
    // The stale copy lives in Redis: with Redis down there is none.
    fits: |s| s.stale_while_revalidate && s.stale_ms > 0 && !s.redis_down,
    base_only: false,
    metric: |_| Metric::StaleServed,
    watch: "The hot key is stale: watch who waits for the refresh.",
    say: |x| {
        let r = x.run().r;
        let stale = format!(
            "{} of {} answered stale at once",
            count(r.stale_served),
            plural(r.requests, "request was", "requests were")
        );
        let after = format!(
            "{}, {} timed out.",
            plural(r.recomputes, "recompute", "recomputes"),
            plural(r.timeouts, "caller", "callers")
        );
        x.first(vec![
            (
                &[CLAIMED],
                format!("{stale}, and the claim guarded only the refresh behind them: {after}"),
            ),
            (
                &[UNCLAIMED],
                format!("{stale}, and the refresh behind them ran with no claim: {after}"),
            ),
        ]);
    },
    needs: no_needs,
};

pub(crate) const XFETCH_RULE: Rule = Rule {
    rank: 18,
    explains: &[VALUES],
    fits: |s| s.xfetch_beta > 0.0 && s.workload == Workload::Steady,
    base_only: false,
    metric: |_| Metric::Misses,
    watch: "Watch the hot key near its expiry: do readers refresh it first?",
    say: |x| {
        let (s, r) = (x.run().s, x.run().r);
        x.plain(format!(
            "{} met the key missing or expired: readers refreshed it early {}",
            plural(r.misses, "request", "requests"),
            plural(r.early_refreshes, "time", "times")
        ));
        if s.claim == ClaimMode::Off {
            x.when(
                &[OVERLAPS],
                format!(
                    "; with no claim, {} overlapped another",
                    plural(r.overlapping_recomputes, "refresh", "refreshes")
                ),
            );
        }
        x.plain(".");
    },
    needs: no_needs,
};

pub(crate) const JITTER_RULE: Rule = Rule {
    rank: 19,
    explains: &[VALUES],
    fits: |s| s.workload == Workload::Steady && s.keys > 1,
    base_only: false,
    metric: |_| Metric::OriginPeakConcurrency,
    watch: "Keys written together: watch how many recomputes reach the origin at once.",
    say: |x| {
        let (s, r) = (x.run().s, x.run().r);
        let mut spread = if s.jitter > 0.0 {
            format!(
                "with each TTL spread by up to {} %",
                count((s.jitter * 100.0).round() as u64)
            )
        } else {
            "with no TTL jitter".to_string()
        };
        // A deploy that re-warmed every key with one TTL undid the spread.
        if let Some(f) = s.faults.iter().find(|f| f.kind == FaultKind::TtlSync) {
            if r.fault_bites > 0 {
                spread = format!(
                    "{spread} until a deploy re-warmed every key at {} with one TTL",
                    ms(f.start_ms)
                );
            }
        }
        let ran = format!(
            "{} keys, {spread}: at most {} ran at the origin at once",
            count(u64::from(s.keys)),
            plural(r.origin_peak_concurrency, "recompute", "recomputes")
        );
        // Expiries that came together past what the origin can take:
        // said, as the claim it is.
        x.first(vec![
            (
                &[SWAMPED],
                format!(
                    "{ran}, past its capacity of {}.",
                    count(u64::from(s.origin_capacity))
                ),
            ),
            (&[], format!("{ran}.")),
        ]);
        // A deploy's re-warm that never came: said, with the reason.
        if let Some(f) = s.faults.iter().find(|f| f.kind == FaultKind::TtlSync) {
            x.when(
                &[ENDED, NO_BITES, AFTER_END],
                format!(
                    " The deploy that was to re-warm every key at {} did nothing: the run's last event was at {}, before it.",
                    ms(f.start_ms),
                    shown(Metric::ElapsedMs, r.elapsed_ms)
                ),
            );
        }
    },
    needs: no_needs,
};

pub(crate) const STALE_RULE: Rule = Rule {
    rank: 20,
    explains: &[STALE_ANY, VALUES],
    fits: |s| {
        s.loser == LoserPolicy::Stale
            && s.stale_ms > 0
            && s.claim != ClaimMode::Off
            && !s.redis_down
    },
    base_only: false,
    metric: |_| Metric::StaleServed,
    watch: "The key is stale: watch what the claim's losers answer.",
    say: |x| {
        let r = x.run().r;
        let recomputes = plural(r.recomputes, "recompute", "recomputes");
        x.first(vec![
            (
                &[STALE, CLAIM_WON],
                format!(
                    "{} answered at once with the stale value while the claim's winner refreshed it: {recomputes}.",
                    plural(r.stale_served, "request was", "requests were")
                ),
            ),
            (
                &[],
                format!(
                    "{} answered with the stale value: {recomputes}.",
                    plural(r.stale_served, "request was", "requests were")
                ),
            ),
        ]);
    },
    needs: no_needs,
};

pub(crate) const CHEAP_RULE: Rule = Rule {
    rank: 21,
    explains: &[VALUES],
    fits: |s| plain_burst(s) && coalesces(s) && s.claim == ClaimMode::Off,
    base_only: true,
    metric: |_| Metric::P99Ms,
    watch: "A cheap query: watch how long the slowest answers take.",
    say: |x| {
        let (s, r) = (x.run().s, x.run().r);
        x.plain(format!(
            "{} of a {} query and a p99 of {}. A claim's losers would poll every {} for the value instead; for a query this cheap the case for singleflight alone is simplicity and less Redis load.",
            plural(r.recomputes, "recompute", "recomputes"),
            ms(s.recompute_ms),
            shown(Metric::P99Ms, r.p99_ms),
            ms(s.poll_ms)
        ));
        say_timeouts(x);
    },
    needs: no_needs,
};

pub(crate) const CLAIM_OUTER_RULE: Rule = Rule {
    rank: 22,
    explains: &[VALUES],
    fits: |s| plain_burst(s) && coalesces(s) && s.claim == ClaimMode::Outer,
    base_only: false,
    metric: |_| Metric::ClaimAttempts,
    watch: "The claim is outside singleflight: watch Redis.",
    say: |x| {
        let r = x.run().r;
        let head = format!(
            "{} for {}",
            plural(r.claim_attempts, "claim attempt", "claim attempts"),
            plural(r.recomputes, "recompute", "recomputes")
        );
        x.first(vec![
            (
                &[MORE_THAN_ONE_PER_INSTANCE, EVERY_MISS_CLAIMED],
                format!(
                    "{head}: with the claim outside singleflight every thread that missed asked Redis for the claim before its instance coalesced."
                ),
            ),
            (
                &[MORE_THAN_ONE_PER_INSTANCE],
                format!(
                    "{head}: with the claim outside singleflight threads asked Redis for the claim before their instance coalesced."
                ),
            ),
            (&[], format!("{head}.")),
        ]);
        say_timeouts(x);
    },
    needs: no_needs,
};

pub(crate) const BURST_RULE: Rule = Rule {
    rank: 23,
    explains: &[VALUES],
    fits: |s| plain_burst(s) && coalesces(s) && s.claim == ClaimMode::Inner,
    base_only: false,
    metric: |_| Metric::Recomputes,
    watch: "Both layers are on: watch the origin.",
    say: |x| {
        let r = x.run().r;
        x.plain(format!(
            "{} for {}",
            plural(r.recomputes, "recompute", "recomputes"),
            plural(r.requests, "request", "requests")
        ));
        let attempts = plural(r.claim_attempts, "claim attempt", "claim attempts");
        x.first(vec![
            (
                &[MANY_THREADS, ONE_PER_INSTANCE, COALESCED],
                format!(": singleflight took each instance to one caller ({attempts} at Redis)"),
            ),
            (&[], format!(": {attempts} at Redis")),
        ]);
        x.first(vec![
            (
                &[MANY_INSTANCES, FLEET_TO_ONE],
                format!(", and the claim took the fleet to {}.", count(r.recomputes)),
            ),
            (&[], ".".into()),
        ]);
        say_timeouts(x);
    },
    needs: no_needs,
};

pub(crate) const SINGLEFLIGHT_RULE: Rule = Rule {
    rank: 24,
    explains: &[VALUES],
    fits: |s| plain_burst(s) && coalesces(s) && s.claim == ClaimMode::Off,
    base_only: false,
    metric: |_| Metric::Recomputes,
    watch: "Singleflight alone: watch the origin.",
    say: |x| {
        let (s, r) = (x.run().s, x.run().r);
        let head = format!(
            "{} from {}",
            plural(r.recomputes, "recompute", "recomputes"),
            plural(u64::from(s.instances), "instance", "instances")
        );
        x.first(vec![
            (
                &[MANY_THREADS, COALESCED, PER_INSTANCE],
                format!(
                    "{head}, one per instance: singleflight coalesced the {} threads of each, but an instance cannot see the others.",
                    count(u64::from(s.threads))
                ),
            ),
            (
                &[MANY_THREADS, COALESCED],
                format!(
                    "{head}: singleflight coalesced the {} threads of each, each instance for itself.",
                    count(u64::from(s.threads))
                ),
            ),
            (
                &[LITTLE_MERGED],
                format!(
                    "{head}, each instance for itself: with {} per instance singleflight had little to coalesce.",
                    plural(u64::from(s.threads), "thread", "threads")
                ),
            ),
            (&[], format!("{head}, each instance for itself.")),
        ]);
        say_timeouts(x);
    },
    needs: no_needs,
};

pub(crate) const NAIVE_RULE: Rule = Rule {
    rank: 25,
    explains: &[
        VALUES,
        ADMISSION,
        Share::Cells(&[End::Timeout], &[Cause::WaitedOrigin]),
    ],
    fits: |s| plain_burst(s) && !s.singleflight && s.claim == ClaimMode::Off,
    base_only: false,
    metric: |_| Metric::Recomputes,
    watch: "No protection: watch the origin.",
    say: |x| {
        let (s, r) = (x.run().s, x.run().r);
        x.plain(format!(
            "{} for {}",
            plural(r.recomputes, "recompute", "recomputes"),
            plural(r.requests, "request", "requests")
        ));
        x.first(vec![
            (&[EVERY_THREAD], ": every thread asked the origin itself".into()),
            (
                &[A_CALL_PER_MISS],
                format!(
                    ": every thread that missed before a value was written asked the origin itself (the burst spread over {} against a {} recompute)",
                    ms(s.spread_ms),
                    ms(s.recompute_ms)
                ),
            ),
            (
                &[SHED],
                format!(
                    ": admission control shed {}",
                    plural(r.admission_shed, "recompute", "recomputes")
                ),
            ),
        ]);
        let late = plural(r.timeouts, "caller", "callers");
        x.first(vec![
            (
                &[
                    SWAMPED,
                    TIMEOUTS,
                    FITS_DEADLINE,
                    ORIGIN_ANSWERED,
                    TIMED_OUT_ON_ORIGIN,
                ],
                format!(", and the swamped origin answered {late} too late."),
            ),
            (&[TIMEOUTS], format!(", and {late} timed out.")),
            (&[], ".".into()),
        ]);
    },
    needs: no_needs,
};

// ---- the presets: one table ------------------------------------------------

/// A named starting point: the interview card's scenario and one per lesson.
#[derive(Clone, Copy, Debug)]
pub struct Preset {
    /// The core's id: its knobs, and its name.
    pub id: Id,
    /// `id`'s name (`burst`), as a link's `preset=` gives it.
    pub name: &'static str,
    pub title: &'static str,
    /// The lesson: its words, and what they state about the preset's run
    /// (`preset=<name>`), each a claim checked at the end of its run on
    /// any seed (the words are shown only for the preset exactly, whatever
    /// its seed).
    pub row: Row,
    /// The knobs the lesson asks a visitor to turn (long names, or
    /// `pitfall-<name>`), shown beside its text.
    pub turn: &'static [&'static str],
    /// Its lesson: the rule that tells its story on any run.
    pub(crate) rule: &'static Rule,
}

impl Preset {
    pub fn scenario(&self) -> Scenario {
        self.id.scenario()
    }

    /// The counter (a `Report` field) whose value proves the lesson: its
    /// rule's, on its own scenario.
    pub fn proof(&self) -> Metric {
        self.rule.metric(&self.scenario())
    }
}

/// A row of [`PRESETS`]: the name and the link are the id's.
const fn row(
    id: Id,
    title: &'static str,
    claims: &'static [Claim],
    words: &'static str,
    turn: &'static [&'static str],
    rule: &'static Rule,
) -> Preset {
    Preset {
        id,
        name: id.name(),
        title,
        row: Row {
            link: id.link(),
            claims,
            words,
        },
        turn,
        rule,
    }
}

pub const ONE_RECOMPUTE: Claim = Claim::new("one recompute for the fleet", |x| x.r.recomputes == 1);
pub const CLAIM_PER_INSTANCE: Claim = Claim::new("one claim attempt per instance", |x| {
    x.r.claim_attempts == u64::from(x.s.instances)
});
const MOST_TOO_LATE: Claim = Claim::new("most callers were answered too late", |x| {
    2 * x.r.timeouts > x.r.requests
});
const EVERY_THREAD_CLAIMS: Claim = Claim::new("every thread that missed claimed", |x| {
    x.r.claim_attempts >= x.r.misses
});
pub const ERRORS: Claim = Claim::new("a request got an error", |x| x.r.errors > 0);
pub const NOTHING_REMEMBERED: Claim = Claim::new("no failure was handed out again", |x| {
    x.r.remembered_failures == 0
});
const LATE_RELEASES_REFUSED: Claim =
    Claim::new("the token check refused every late release", |x| {
        x.r.releases_refused > 0
            && x.r.releases_refused == x.r.releases_refused_expired + x.r.releases_refused_taken
    });
const REFRESHED: Claim = Claim::new("the refresh went on", |x| x.r.recomputes > 0);
const RETRIES_CALLED: Claim = Claim::new("retries were origin calls of their own", |x| {
    x.r.retries > 0 && 2 * x.r.retry_recomputes > x.r.retries
});
const TURNED_AWAY: Claim = Claim::new("requests were turned away", |x| x.r.rejected > 0);
const QUEUED_AT_REDIS: Claim = Claim::new("the queue at Redis set the latency", |x| {
    x.r.redis_queue_peak > 1 && x.r.p99_ms > f64::from(x.s.recompute_ms)
});
const BOUNDED: Claim = Claim::new("admission bounded the origin", |x| {
    x.s.admission > 0
        && x.r.origin_peak_concurrency <= u64::from(x.s.admission) * u64::from(x.s.instances)
});
/// Misses that were neither a recompute of their own nor shed: those a
/// flight answered.
const LITTLE_MERGED: Claim = Claim::new("little to coalesce", |x| {
    10 * x
        .r
        .misses
        .saturating_sub(x.r.recomputes + x.r.admission_shed)
        <= x.r.misses
});
pub const EVERY_REQUEST_TIMED_OUT: Claim =
    Claim::new("failing open still timed everyone out", |x| {
        x.r.timeouts == x.r.requests
    });
pub const NO_MISSES: Claim = Claim::new("nobody met a miss", |x| x.r.misses == 0);
const OLDER_LANDED: Claim = Claim::new("the older value landed last", |x| x.r.stale_overwrites > 0);

pub const PRESETS: [Preset; 21] = [
    row(
        Id::Burst,
        "The interview card: 40 x 200, both layers",
        &[ONE_RECOMPUTE, CLAIM_PER_INSTANCE],
        "Singleflight outside, claim inside: one recompute for the fleet, one claim attempt per instance.",
        // The card's knobs, all of them: the sandbox opens on this preset,
        // and a learner's first screen holds what the card varies.
        &[
            "instances",
            "threads",
            "singleflight",
            "claim",
            "fail_rate",
            "workload",
            "redis_down",
        ],
        &BURST_RULE,
    ),
    row(
        Id::Naive,
        "No protection",
        &[A_CALL_PER_MISS, MOST_TOO_LATE],
        "Every thread that misses recomputes: instances x threads when all of them miss within one recompute, and the swamped origin answers most callers too late.",
        &["singleflight"],
        &NAIVE_RULE,
    ),
    row(
        Id::Singleflight,
        "Singleflight only",
        &[PER_INSTANCE],
        "Threads collapse inside each instance: one recompute per instance.",
        &["claim"],
        &SINGLEFLIGHT_RULE,
    ),
    row(
        Id::ClaimOuter,
        "Claim outside singleflight",
        &[ONE_RECOMPUTE, EVERY_THREAD_CLAIMS],
        "Still one recompute, but every thread claims, and polls, at Redis on its own.",
        &["claim"],
        &CLAIM_OUTER_RULE,
    ),
    row(
        Id::Stale,
        "Losers serve stale",
        &[STALE, MORE_THAN_ONE_PER_INSTANCE],
        "Losers answer stale at once; only the winner's instance waits. Flights end fast, so later arrivals claim again.",
        &["loser"],
        &STALE_RULE,
    ),
    row(
        Id::Failure,
        "A failing origin",
        &[ERRORS, NOTHING_REMEMBERED],
        "Failures reach the current waiters only; turn on remember-failure to see a sticky outage.",
        &["pitfall-remember-failure"],
        &FAILURE_RULE,
    ),
    row(
        Id::Hang,
        "A hung origin",
        &[NONE_PINNED, TIMEOUTS, ORIGIN_TIMED_OUT],
        "Deadlines free the callers and the origin timeout frees the flight and the claim (the call itself runs on at the origin); turn on no-deadline to pin them all.",
        &["pitfall-no-deadline"],
        &HANG_RULE,
    ),
    row(
        Id::HolderCrash,
        "The claim holder dies",
        &[CRASHED, TIMEOUTS],
        "Nobody may refresh until the claim's TTL runs out: a long TTL is a long stall.",
        &["claim_ttl_ms"],
        &HOLDER_CRASH_RULE,
    ),
    row(
        Id::ShortTtl,
        "Claim TTL shorter than the recompute",
        &[OVERLAPS, LATE_RELEASES_REFUSED],
        "The claim expires mid-recompute: another instance starts an overlapping one, and the token check refuses every late release.",
        &["claim_ttl_ms"],
        &SHORT_TTL_RULE,
    ),
    row(
        Id::RedisDown,
        "Redis is down",
        &[REDIS_FAILED, REFRESHED],
        "Fail open and the refresh goes on, as long as Redis fails fast; fail closed and nobody may refresh.",
        &["redis_error"],
        &REDIS_DOWN_RULE,
    ),
    row(
        Id::RedisHang,
        "Redis hangs",
        &[REDIS_FAILED, EVERY_REQUEST_TIMED_OUT],
        "A Redis that hangs holds every command for the client's timeout: with a long one, failing open still times everyone out. A short timeout and a breaker let the refresh go on.",
        &["redis_timeout_ms", "redis_breaker_ms", "redis_error"],
        &REDIS_HANG_RULE,
    ),
    row(
        Id::RetryStorm,
        "A retry storm",
        &[RETRIES_CALLED],
        "Callers retry a failing origin: with no coalescing retries are origin calls of their own, up to (1 + retries) times the load; with singleflight the retries join the flight already running.",
        &["singleflight", "retries", "retry_backoff_ms"],
        &RETRY_STORM_RULE,
    ),
    row(
        Id::OpenLoop,
        "Users keep arriving",
        &[TURNED_AWAY],
        "Open-loop traffic does not slow down when the service does: while the origin hangs, the threads fill, the accept queue backs up and requests are turned away. A closed-loop test hides this.",
        &["arrivals", "rate_per_s", "faults"],
        &OPEN_LOOP_RULE,
    ),
    row(
        Id::HotKey,
        "A hot key at Redis",
        &[QUEUED_AT_REDIS],
        "Every read of one hot key is a command on one Redis: at its throughput the queue, not the origin, sets the latency. A short local copy in each instance brings it back.",
        &["local_cache_ms", "redis_ops_per_ms"],
        &HOT_KEY_RULE,
    ),
    row(
        Id::ColdSkew,
        "A cold cache, skewed keys",
        &[MERGED, SHED, BOUNDED],
        "After a restart a few keys are hot: coalescing merges the requests that share them, and admission bounds the rest. Do both.",
        &["singleflight", "claim", "admission"],
        &COLD_SKEW_RULE,
    ),
    row(
        Id::Cold,
        "A cold cache",
        &[LITTLE_MERGED, SHED, BOUNDED],
        "After a restart the misses are for many keys, equally popular here: little to coalesce. Admission bounds the origin and sheds the rest at once; with skewed keys, do both.",
        &["admission", "admission_wait_ms"],
        &COLD_RULE,
    ),
    row(
        Id::Jitter,
        "TTL jitter",
        &[],
        "Keys written together expire together unless their TTLs are spread.",
        &["jitter"],
        &JITTER_RULE,
    ),
    row(
        Id::Swr,
        "Nobody waits on a lock",
        &[STALE, NO_TIMEOUTS],
        "Stale answers go out at once; the claim guards only the refresh, so a dead holder never stalls a request. The stale copy lives in Redis: an outage leaves none to serve.",
        &["holder_crash", "redis_down"],
        &SWR_RULE,
    ),
    row(
        Id::Xfetch,
        "Early refresh (XFetch)",
        &[NO_MISSES],
        "Readers refresh a hot key before it expires, the earlier the busier the key, so nobody meets a miss; with no lock a few instances may refresh at once.",
        &["xfetch_beta", "claim"],
        &XFETCH_RULE,
    ),
    row(
        Id::LateWriter,
        "A late holder writes old data",
        &[OVERLAPS, OLDER_LANDED],
        "The claim expires under a slow recompute, another instance recomputes too, and the older value lands last. Turn on fenced writes and they refuse it.",
        &["fenced_writes", "claim_ttl_ms"],
        &LATE_WRITER_RULE,
    ),
    row(
        Id::Cheap,
        "A cheap recompute",
        &[UNCLAIMED, NO_TIMEOUTS],
        "One copy per instance of a 20 ms query is no load: singleflight alone is enough, with nothing to poll and less Redis load.",
        &["claim"],
        &CHEAP_RULE,
    ),
];

/// The callers a success story must not leave out: "but 8000 callers timed
/// out at their 100 ms deadline".
fn say_timeouts(x: &mut Say) {
    let (s, r) = (x.run().s, x.run().r);
    x.when(
        &[TIMEOUTS],
        format!(
            " But {} out of {} timed out at the {} deadline.",
            count(r.timeouts),
            plural(r.requests, "caller", "callers"),
            ms(s.deadline_ms)
        ),
    );
}

/// What a fault window did, in words ("40 origin calls failed, 1 holder
/// killed"); empty when it did nothing.
pub fn fault_acts_words(a: &stampede::ledger::FaultActs) -> String {
    acts_words(a, ("Redis command failed", "Redis commands failed"))
}

/// What a fault window of `s` did, in words: [`fault_acts_words`], with
/// its Redis commands as the scenario's outage fails them: at once (a
/// refused connection answers within a round trip), or held by a Redis
/// that hangs until the client gives up at its timeout.
pub fn fault_acts_words_in(s: &Scenario, a: &stampede::ledger::FaultActs) -> String {
    match s.redis_outage {
        RedisOutage::Error => acts_words(
            a,
            (
                "Redis command failed at once",
                "Redis commands failed at once",
            ),
        ),
        RedisOutage::Hang => {
            let hung = format!(
                "held, each failing at the client's {} timeout",
                ms(s.redis_timeout_ms)
            );
            acts_words(
                a,
                (
                    &format!("Redis command {hung}"),
                    &format!("Redis commands {hung}"),
                ),
            )
        }
    }
}

fn acts_words(a: &stampede::ledger::FaultActs, redis: (&str, &str)) -> String {
    [
        (a.calls_failed, "origin call failed", "origin calls failed"),
        (a.calls_slowed, "origin call slowed", "origin calls slowed"),
        (a.calls_hung, "origin call hung", "origin calls hung"),
        (a.redis_failed, redis.0, redis.1),
        (
            a.holders_killed,
            "claim holder killed",
            "claim holders killed",
        ),
        (a.keys_rewarmed, "key re-warmed", "keys re-warmed"),
    ]
    .into_iter()
    .filter(|(n, _, _)| *n > 0)
    .map(|(n, one, many)| plural(n, one, many))
    .collect::<Vec<_>>()
    .join(", ")
}

/// How a request ended, in words after a count ("12 timed out", "13
/// ended in an error"): the one table of these words, for every sentence
/// that tells a ledger's outcomes.
pub fn end_words(e: End) -> &'static str {
    match e {
        End::Hit => "read a fresh value",
        End::Written => "read a value another request wrote",
        End::Computed => "computed the value themselves",
        End::Shared => "got their flight's value",
        End::Stale => "got a stale value",
        End::Degraded => "got a fallback",
        End::Error => "ended in an error",
        End::Timeout => "timed out",
        End::TurnedAway => "were turned away",
        End::Unanswered => "were never answered",
    }
}

/// Why, in words after "because" (or, for a wait, after "while"); `None`
/// for a value served as it should be.
fn cause_words(c: Cause) -> Option<&'static str> {
    Some(match c {
        Cause::Served => return None,
        Cause::OriginFailed => "the origin failed",
        Cause::OriginFault => "the origin failed in a fault window",
        Cause::OriginTimedOut => "the origin call ran past its timeout",
        Cause::RedisFailed => "a Redis command failed",
        Cause::Crashed => "their thread died",
        Cause::Admission => "admission control shed the recompute",
        Cause::Remembered => "the flight map remembered a failure",
        Cause::Marker => "a negative-cache marker answered",
        Cause::ClaimHeld => "another request held the claim",
        Cause::Revalidating => "a refresh ran behind them",
        Cause::PoolFull => "every thread was busy and the accept queue full",
        Cause::WaitedOrigin => "waiting on the origin",
        Cause::WaitedRedis => "waiting on Redis",
        Cause::WaitedClaim => "polling for another request's claim",
        Cause::WaitedDeadHolder => "polling for a claim whose holder had died",
        Cause::WaitedAdmission => "queued for an admission permit",
        Cause::WaitedAccept => "in the accept queue, before a thread took them",
        Cause::WaitedFlight => "waiting on a flight whose leader was itself waiting",
        Cause::Pending => "still waiting when the run stopped",
    })
}

/// The outcomes the sentence must name: each above 5 % of the requests,
/// and the largest that is not a value, in the ledger's order.
fn outcomes_to_tell(l: &Ledger) -> Vec<(End, u64)> {
    let total = l.total();
    let largest = l.largest_not_value().map(|(e, _)| e);
    End::ALL
        .into_iter()
        .map(|e| (e, l.ended(e)))
        .filter(|&(e, n)| n > 0 && (n * 20 > total || Some(e) == largest))
        .collect()
}

/// Every number the ledger and the fault windows' acts let a sentence
/// write, as [`count`] writes it: each cell's count, each outcome's, and
/// each act of each window.
pub fn ledger_numbers(r: &Report) -> Vec<String> {
    let l = &r.ledger;
    let acts = r.fault_acts.iter().flat_map(|a| {
        [
            a.calls_failed,
            a.calls_slowed,
            a.calls_hung,
            a.redis_failed,
            a.holders_killed,
            a.keys_rewarmed,
        ]
    });
    l.rows()
        .flat_map(|(e, _, n)| [count(n), count(l.ended(e))])
        .chain([count(l.total())])
        .chain(acts.map(count))
        .collect()
}

/// "How the 20219 requests ended: 16425 read a fresh value, 2794 were
/// turned away because every thread was busy and the accept queue full,
/// 885 timed out (485 waiting on the origin)." Said when not every
/// request got a value, from the run's ledger: each outcome above 5 %,
/// and the largest that is not a value, with the cause behind most of it.
/// Every count is a ledger claim.
pub fn how_they_ended(x: &mut Say) {
    let r = x.run().r;
    let l = &r.ledger;
    if l.total() == 0 || l.values() == l.total() {
        return;
    }
    x.plain(format!(
        " How the {} ended:",
        plural(l.total(), "request", "requests")
    ));
    let told = outcomes_to_tell(l);
    let last = told.len().saturating_sub(1);
    for (i, (end, n)) in told.into_iter().enumerate() {
        let sep = if i == last { "." } else { "," };
        let cause = l.main_cause(end).filter(|_| !end.is_fresh());
        let why = cause.and_then(|(c, m)| cause_words(c).map(|w| (c, m, w)));
        let head = format!(" {} {}", count(n), end_words(end));
        match why {
            Some((c, m, w)) => {
                let (joint, words) = if c.is_wait() {
                    ("", w.to_string())
                } else {
                    ("because ", w.to_string())
                };
                let text = if m == n {
                    format!("{head}, all {joint}{words}{sep}")
                } else {
                    format!("{head}, {} of them {joint}{words}{sep}", count(m))
                };
                x.when(
                    &[Claim::ledger(end, None, n), Claim::ledger(end, Some(c), m)],
                    text,
                );
            }
            None => {
                x.when(&[Claim::ledger(end, None, n)], format!("{head}{sep}"));
            }
        }
    }
}

/// A sentence's first letter a capital ("The claim holder…"; ASCII:
/// Unicode's case tables would cost the page 7 KB).
fn capital(mut s: String) -> String {
    if let Some(first) = s.get_mut(..1) {
        first.make_ascii_uppercase();
    }
    s
}

/// "Redis down from 4000 ms for 3000 ms", "the claim holder dies at 5000 ms".
/// A fault of `s` in words, with its moment: "Redis hanging from 120 ms
/// for 5 s".
pub fn fault_words(s: &Scenario, f: &stampede::scenario::Fault) -> String {
    let what = match f.kind {
        FaultKind::Redis if s.redis_outage == RedisOutage::Hang => "Redis hanging",
        FaultKind::Redis => "Redis down",
        FaultKind::Origin => "every origin call failing",
        FaultKind::OriginHang => "the origin hanging",
        FaultKind::OriginSlow => "the origin ten times slower",
        FaultKind::Holder => return format!("the claim holder dies at {}", ms(f.start_ms)),
        FaultKind::TtlSync => {
            return format!(
                "a deploy re-warms every key at {} with one TTL, no jitter",
                ms(f.start_ms)
            )
        }
    };
    match f.duration_ms {
        Some(d) => format!("{what} from {} for {}", ms(f.start_ms), ms(d)),
        None => format!("{what} from {} on", ms(f.start_ms)),
    }
}

/// The lessons that say what a fault thrown into their run did: the
/// spread TTLs undone by a deploy's re-warm.
pub(crate) const SPEAKS_OF: &[(&str, FaultKind)] = &[("jitter", FaultKind::TtlSync)];

fn rule(name: &str) -> Option<Story> {
    all_stories().into_iter().find(|x| x.name == name)
}

/// The lessons of a fault: they speak of what went wrong, and come before
/// a preset's success story when the fault was added to it.
const FAULT_RULES: [&str; 7] = [
    "retry-storm",
    "fault",
    "redis-hang",
    "redis-down",
    "holder-crash",
    "hang",
    "failure",
];

/// `s` with the faults its base preset does not have taken out: fault
/// windows added (a curveball) and fault knobs switched on. `None` when it
/// adds none (or has no base).
fn without_added_faults(s: &Scenario, base: Option<&str>) -> Option<Scenario> {
    let p = base_preset(base)?;
    let had = p.scenario();
    let mut out = s.clone();
    out.faults
        .retain(|f| had.faults.contains(f) || SPEAKS_OF.contains(&(p.name, f.kind)));
    out.hang &= had.hang;
    out.holder_crash &= had.holder_crash;
    out.redis_down &= had.redis_down;
    if had.fail_rate == 0.0 {
        out.fail_rate = 0.0;
    }
    if had.origin_outage_ms == 0 {
        out.origin_outage_ms = 0;
    }
    (out != *s).then_some(out)
}

/// The rules that fit `s`, in the order they are preferred before any run
/// (and among stories that explain as many requests): the pitfalls; a
/// fault added to the base preset; the base's own lesson if it still fits;
/// then the general lessons, in the table's order.
fn ranked(s: &Scenario, base: Option<&str>) -> Vec<Story> {
    let all = all_stories();
    let pitfall = |x: &Story| PITFALLS.iter().any(|(n, _)| *n == x.name);
    let mut out: Vec<Story> = all
        .iter()
        .copied()
        .filter(|x| pitfall(x) && (x.rule.fits)(s))
        .collect();
    // A fault the base does not have (a curveball thrown into its run, a
    // fault knob switched on) is what the run shows now, not the base's
    // success story (unless the base's lesson speaks of that fault itself).
    let added = without_added_faults(s, base).is_some();
    let thrown = s.faults.len() > pick_faults(s, base);
    if thrown {
        out.extend(rule("fault"));
    } else if added {
        out.extend(
            all.iter()
                .copied()
                .filter(|x| x.name != "fault" && FAULT_RULES.contains(&x.name))
                .find(|x| (x.rule.fits)(s)),
        );
    }
    out.extend(base.and_then(rule).filter(|x| (x.rule.fits)(s)));
    out.extend(
        all.iter()
            .copied()
            .filter(|x| !pitfall(x) && !x.rule.base_only && (x.rule.fits)(s)),
    );
    let mut seen = Vec::new();
    out.retain(|x| {
        let first = !seen.contains(&x.name);
        seen.push(x.name);
        first
    });
    out
}

/// The rule for `s` before any run: the first of [`ranked`].
fn pick(s: &Scenario, base: Option<&str>) -> Option<Story> {
    ranked(s, base).first().copied()
}

/// The stories the end of the run `r` of `s` chooses from, each with the
/// requests it explains, in the order preferred among equals: the rules
/// that fit `s`, less the faults that did nothing in this run (unless
/// nothing else fits).
fn candidates(s: &Scenario, base: Option<&str>, r: &Report) -> Vec<(Story, u64)> {
    let all = ranked(s, base);
    let acted: Vec<Story> = all
        .iter()
        .copied()
        .filter(|x| !FAULT_RULES.contains(&x.name) || bit(x.name, r))
        .collect();
    let pool = if acted.is_empty() { all } else { acted };
    pool.into_iter()
        .map(|x| (x, explained(x.rule, s, r)))
        .collect()
}

/// The story told at the end of the run `r`: of [`candidates`], the one
/// that explains the most requests, the first of equals.
fn story(s: &Scenario, base: Option<&str>, r: &Report) -> Option<Story> {
    let mut best: Option<(Story, u64)> = None;
    for (x, n) in candidates(s, base, r) {
        if best.is_none_or(|(_, b)| n > b) {
            best = Some((x, n));
        }
    }
    best.map(|(x, _)| x)
}

/// The stories the end of the run `r` of `s` (made from `base`) chooses
/// from, by name, each with how many requests it explains from the
/// ledger, in the order preferred among equals; empty when no lesson fits
/// (the sentence then compares the run with its preset's).
pub fn stories(s: &Scenario, base: Option<&str>, r: &Report) -> Vec<(&'static str, u64)> {
    candidates(s, base, r)
        .into_iter()
        .map(|(x, n)| (x.name, n))
        .collect()
}

/// How many of `s`'s fault windows its base preset has (or speaks of).
fn pick_faults(s: &Scenario, base: Option<&str>) -> usize {
    without_added_faults(s, base).map_or(s.faults.len(), |w| w.faults.len())
}

/// The fault of the lesson `name` acted in the run.
fn bit(name: &str, r: &Report) -> bool {
    match name {
        "fault" => r.fault_bites > 0,
        "redis-hang" | "redis-down" => r.redis_errors + r.redis_skipped > 0,
        "holder-crash" => r.crashed > 0,
        "hang" => r.recomputes > 0,
        "failure" => r.origin_failures > 0,
        "retry-storm" => r.retries > 0,
        _ => true,
    }
}

const AFTER_END: Claim = Claim::new(
    "every fault window starts after the run's last event",
    |x| {
        x.s.faults
            .iter()
            .all(|f| f64::from(f.start_ms) >= x.r.elapsed_ms)
    },
);
const NO_BITES: Claim = Claim::new("no fault of the list acted", |x| x.r.fault_bites == 0);
const NO_CRASH: Claim = Claim::new("no thread died", |x| x.r.crashed == 0);
const NO_FAILED_CALLS: Claim = Claim::new("no origin call failed", |x| x.r.origin_failures == 0);
const NO_REDIS_ERRORS: Claim = Claim::new("no Redis command failed", |x| {
    x.r.redis_errors + x.r.redis_skipped == 0
});
const NO_RETRIES: Claim = Claim::new("no retry", |x| x.r.retries == 0);

/// Why the fault of `rule` did nothing in this run, said where it did not
/// bite: after the run's end, with no claim to hold, with nothing reaching
/// the origin.
fn did_nothing(name: &str, x: &mut Say) {
    let (s, r) = (x.run().s, x.run().r);
    match name {
        "fault" => {
            let what: Vec<String> = s.faults.iter().map(|f| fault_words(s, f)).collect();
            let what = what.join("; ");
            let holder = s.faults.iter().all(|f| f.kind == FaultKind::Holder);
            let origin = s.faults.iter().all(|f| {
                matches!(
                    f.kind,
                    FaultKind::Origin | FaultKind::OriginHang | FaultKind::OriginSlow
                )
            });
            let mut options: Vec<(&[Claim], String)> = vec![(
                &[NO_BITES, AFTER_END],
                format!(
                    "The fault did nothing ({what}): the run's last event was at {}, before it.",
                    shown(Metric::ElapsedMs, r.elapsed_ms)
                ),
            )];
            if holder {
                options.push((
                    &[NO_BITES, NO_WINS],
                    format!(
                        "The fault did nothing ({what}): nobody won a claim in this run, so there was none to hold."
                    ),
                ));
            }
            if origin {
                options.push((
                    &[NO_BITES, NO_RECOMPUTES],
                    format!("The fault did nothing ({what}): no call reached the origin."),
                ));
            }
            options.push((
                &[NO_BITES],
                format!(
                    "The fault did nothing ({what}): nothing it acts on happened while it was in force."
                ),
            ));
            x.first(options);
        }
        "holder-crash" => {
            x.first(vec![
                (
                    &[NO_WINS],
                    "The claim's winner was to die holding it, but nobody won a claim in this run, so there was none to hold.".into(),
                ),
                (&[NO_CRASH], "The claim's winner was to die holding it, but none did in this run.".into()),
            ]);
        }
        "hang" => {
            x.when(
                &[NO_RECOMPUTES],
                "The origin was to hang, but no call reached it.",
            );
        }
        "failure" => {
            x.when(
                &[NO_FAILED_CALLS],
                format!(
                    "The origin was to fail, but none of its {} did.",
                    plural(r.recomputes, "call", "calls")
                ),
            );
        }
        "redis-hang" | "redis-down" => {
            x.when(
                &[NO_REDIS_ERRORS],
                match s.redis_outage {
                    RedisOutage::Error => {
                        "Redis was to refuse every command at once, but no command reached it."
                    }
                    RedisOutage::Hang => {
                        "Redis was to hang, holding each command until the client's timeout, but no command reached it."
                    }
                },
            );
        }
        "retry-storm" => {
            x.when(&[NO_RETRIES], "Callers were to retry, but none needed to.");
        }
        _ => {}
    }
}

fn base_preset(base: Option<&str>) -> Option<&'static Preset> {
    base.and_then(|b| PRESETS.iter().find(|p| p.name == b))
}

/// The counter that proves what `s` is showing and what to watch for,
/// before any run.
pub fn proof_for(s: &Scenario, base: Option<&str>) -> Proof {
    match pick(s, base) {
        Some(x) => proof((x.rule.metric)(s), x.rule.watch),
        None => match base_preset(base) {
            Some(p) => proof(
                p.proof(),
                "Your change against the preset's own run: watch the counter.",
            ),
            None => proof(
                Metric::Recomputes,
                "How many times the origin was asked for a value.",
            ),
        },
    }
}

/// The scenario the lesson's sentence compares `s` against, when it needs
/// one: the preset `s` was made from, if `s` is not that preset and no
/// lesson fits it. The caller runs it on the same seed and passes its
/// report to [`lesson`].
pub fn contrast(s: &Scenario, base: Option<&str>) -> Option<Scenario> {
    if pick(s, base).is_some() {
        return None;
    }
    base_preset(base).map(|p| p.scenario()).filter(|p| p != s)
}

/// The knobs `s` changed from `base`, in words: `singleflight off, claim
/// TTL 100 ms`.
pub fn changes(base: &Scenario, s: &Scenario) -> String {
    stampede::scenario::knob_names()
        .filter_map(|k| {
            let (was, now) = (base.get(k)?, s.get(k)?);
            (was != now).then(|| describe(k, &now))
        })
        .collect::<Vec<_>>()
        .join(", ")
}

fn describe(knob: &str, value: &str) -> String {
    let name = knob
        .strip_suffix("_ms")
        .unwrap_or(knob)
        .replace('_', " ")
        .replace("ttl", "TTL");
    let boolean = matches!(
        knob,
        "singleflight"
            | "stale_while_revalidate"
            | "fenced_writes"
            | "hang"
            | "redis_down"
            | "holder_crash"
    );
    if boolean {
        let on = if value == "1" { "on" } else { "off" };
        return format!("{name} {on}");
    }
    if knob == "pitfalls" {
        return if value.is_empty() {
            "no pitfall".to_string()
        } else {
            format!("pitfalls {value}")
        };
    }
    match (knob.ends_with("_ms"), value.parse::<u64>()) {
        (true, Ok(v)) => format!("{name} {} ms", count(v)),
        (false, Ok(v)) => format!("{name} {}", count(v)),
        _ => format!("{name} {value}"),
    }
}

/// The counters a change is most often about, in the order they are tried.
const HEADLINE: [Metric; 12] = [
    Metric::Recomputes,
    Metric::ClaimAttempts,
    Metric::Timeouts,
    Metric::Errors,
    Metric::StaleServed,
    Metric::OverlappingRecomputes,
    Metric::OriginPeakConcurrency,
    Metric::Misses,
    Metric::Degraded,
    Metric::RedisRoundTrips,
    Metric::P99Ms,
    Metric::StaleOverwrites,
];

/// The counter that moved most between the two runs, by ratio: the proof's
/// own first if it moved at all.
fn moved_most(first: Metric, then: &Report, now: &Report) -> Option<Metric> {
    let moved = |m: Metric| {
        let (a, b) = (value(then, m)?, value(now, m)?);
        (a != b).then(|| ((b + 1.0) / (a + 1.0)).ln().abs())
    };
    if moved(first).is_some() {
        return Some(first);
    }
    HEADLINE
        .iter()
        .filter_map(|&m| moved(m).map(|d| (m, d)))
        .max_by(|a, b| a.1.total_cmp(&b.1))
        .map(|(m, _)| m)
}

/// The lesson of `s` (made from the preset `base`, if any) as the run `r`
/// shows it. `ended`: the run is over. `then`: the report of
/// [`contrast`]'s scenario on the same seed, once the caller has it.
/// Before the end a sentence that does not say the run goes on is marked
/// so (`progress.rs`).
pub fn lesson(
    s: &Scenario,
    base: Option<&str>,
    r: &Report,
    ended: bool,
    then: Option<&Report>,
) -> Lesson {
    let mut l = lesson_of(s, base, r, ended, then);
    if !ended && crate::progress::mark(&mut l.clauses) {
        l.sentence = claims::text(&l.clauses);
    }
    l
}

fn lesson_of(
    s: &Scenario,
    base: Option<&str>,
    r: &Report,
    ended: bool,
    then: Option<&Report>,
) -> Lesson {
    if let Some(first) = pick(s, base) {
        let run = Run::new(s, r, ended);
        let mut say = Say::new(run);
        // The proof's counter is the picked rule's, before and after the
        // run ends, so the number on screen stays the one it watched.
        let metric = (first.rule.metric)(s);
        // At the end, the story that explains the most of the run's
        // requests, whatever the preset or pitfall; before it, the one
        // picked before the run.
        let rule = if ended {
            story(s, base, r).unwrap_or(first)
        } else {
            first
        };
        // A fault added to the run that did nothing: said, with the
        // reason, before the story the run told instead (or, where no
        // other lesson fits, before the run in numbers).
        let idle = |x: Story| ended && FAULT_RULES.contains(&x.name) && !bit(x.name, r);
        if idle(first) {
            did_nothing(first.name, &mut say);
        }
        let said_idle = !say.is_empty();
        if said_idle {
            say.plain(" ");
        }
        let v = value(r, metric).unwrap_or(0.0);
        let p = proof(metric, rule.rule.watch);
        let pending = pending(metric, v, ended);
        // What it needs: for damage, only while it has not bitten anyway
        // (a swamped origin pins threads without any hang); for a count
        // that is no damage, whenever it lacks it. The picked rule's: a
        // pitfall that cannot bite is not the story, but still says what
        // it needs.
        let needs = (first.rule.needs)(s).filter(|_| v == 0.0 || !p.damage);
        let before = say.len();
        if said_idle && rule.name == first.name && idle(rule) {
            say.plain(format!(
                "{} for {}.",
                plural(r.recomputes, "recompute", "recomputes"),
                plural(r.requests, "request", "requests")
            ));
        } else if ended || (p.damage && v > 0.0) {
            (rule.rule.say)(&mut say);
        }
        // Nothing the rule would say holds yet: what to watch for.
        if say.len() == before {
            say.plain(rule.rule.watch);
        }
        if ended {
            how_they_ended(&mut say);
        }
        let clauses = say.done();
        return Lesson {
            name: rule.name,
            metric,
            value: v,
            sentence: claims::text(&clauses),
            clauses,
            damage: p.damage,
            pending,
            needs,
        };
    }
    let Some(preset) = base_preset(base) else {
        let sentence = format!(
            "{} for {}.",
            plural(r.recomputes, "recompute", "recomputes"),
            plural(r.requests, "request", "requests")
        );
        let clauses = told_ends(s, r, ended, plain(&sentence));
        return Lesson {
            name: "run",
            metric: Metric::Recomputes,
            value: r.recomputes as f64,
            sentence: claims::text(&clauses),
            clauses,
            damage: false,
            pending: false,
            needs: None,
        };
    };
    let what = changes(&preset.scenario(), s);
    let label = stampede::metrics::label;
    match then.filter(|_| ended) {
        Some(then) => {
            let metric = moved_most(preset.proof(), then, r).unwrap_or(preset.proof());
            let (a, b) = (
                value(then, metric).unwrap_or(0.0),
                value(r, metric).unwrap_or(0.0),
            );
            let sentence = if a == b {
                format!(
                    "{what}: {} {} as in the preset's own run.",
                    label(metric),
                    shown(metric, b)
                )
            } else {
                format!(
                    "{what}: {} {} → {} against the preset's own run.",
                    label(metric),
                    shown(metric, a),
                    shown(metric, b)
                )
            };
            let clauses = told_ends(s, r, ended, plain(&sentence));
            Lesson {
                name: "changed",
                metric,
                value: b,
                sentence: claims::text(&clauses),
                clauses,
                damage: DAMAGE.contains(&metric),
                pending: false,
                needs: None,
            }
        }
        None => {
            let metric = preset.proof();
            let sentence = format!(
                "{what}: the numbers against the preset's own run come when this run ends."
            );
            Lesson {
                name: "changed",
                metric,
                value: value(r, metric).unwrap_or(0.0),
                clauses: plain(&sentence),
                sentence,
                damage: DAMAGE.contains(&metric),
                pending: false,
                needs: None,
            }
        }
    }
}

/// `clauses`, then how the requests ended once the run is over
/// ([`how_they_ended`]).
fn told_ends(s: &Scenario, r: &Report, ended: bool, mut clauses: Vec<Clause>) -> Vec<Clause> {
    if ended {
        let mut say = Say::new(Run::new(s, r, true));
        how_they_ended(&mut say);
        clauses.extend(say.done());
    }
    clauses
}

/// A sentence that states only counters and knobs, as one clause.
fn plain(text: &str) -> Vec<Clause> {
    vec![Clause {
        text: text.to_string(),
        claims: Vec::new(),
    }]
}

/// One line on what counter `m` counts, for the page's tooltips and
/// legend, in the words of the field's doc comment where it has one. Every
/// `Report` field is named, so a new counter does not compile without one.
pub const fn meaning(m: Metric) -> &'static str {
    match m {
        Metric::Requests => "Requests the fleet made in this run.",
        Metric::Hits => "Requests answered from a fresh value in the cache.",
        Metric::StaleServed => "Requests answered with an expired value kept for its stale window.",
        Metric::Computed => "Requests answered with a value their own flight computed.",
        Metric::Shared => "Requests answered with a result another request of their instance computed (singleflight).",
        Metric::Degraded => "Requests answered with a fallback instead of the value.",
        Metric::Errors => "Requests that ended with an error.",
        Metric::Timeouts => "Requests whose caller gave up at its own deadline.",
        Metric::Pinned => "Requests that had not ended when the run stopped (threads pinned).",
        Metric::Recomputes => "Times the origin was asked to compute the value: the cost a stampede multiplies.",
        Metric::Misses => "Requests whose first read found no fresh value (missing or expired).",
        Metric::EarlyRefreshes => "Recomputes started early (XFetch) by a reader of a still fresh value.",
        Metric::OverlappingRecomputes => "Recomputes that started while another of the same key was running: duplicate work.",
        Metric::OriginFailures => "Origin calls that failed.",
        Metric::OriginTimeouts => "Origin calls that ran past the origin timeout (the call itself went on).",
        Metric::OriginPeakConcurrency => "The most recomputes running at the origin at once.",
        Metric::ClaimAttempts => "SET NX attempts at the Redis claim (lock).",
        Metric::ClaimWins => "Claim attempts that won: that caller may recompute.",
        Metric::Releases => "Claims released by their holder with a token-checked delete.",
        Metric::ReleasesRefused => "Releases refused because the caller's token no longer held the claim.",
        Metric::ReleasesRefusedExpired => "Refused because the claim had already expired and nobody held it.",
        Metric::ReleasesRefusedTaken => "Refused because another caller held the claim by then: a plain DEL would have freed it.",
        Metric::ClaimsDeletedOfOthers => "Claims of another caller deleted by a plain DEL (no token checked): the key was free for a third.",
        Metric::Unclaims => "Releases by token sent, unawaited, for claims whose reply timed out.",
        Metric::LateClaims => "Claims whose client gave up on them that landed when a paused Redis resumed.",
        Metric::LateClaimsReleased => "Late claims that the release by their own token cleared.",
        Metric::LateClaimsHeldAtResume => "Late claims still holding their key once Redis had run what it held.",
        Metric::RedisRoundTrips => "Commands sent to Redis and answered, each one network round trip.",
        Metric::RedisErrors => "Redis commands that failed or timed out.",
        Metric::RedisSkipped => "Commands an instance did not send: its breaker was open after a Redis error.",
        Metric::RedisQueuePeak => "The most commands waiting at Redis at once (0 with unlimited throughput).",
        Metric::RedisP99Ms => "A Redis command's time to its answer or error, queue included (p99): on a hang, the client's timeout.",
        Metric::LocalHits => "Reads answered from the instance's own copy of the value, with no round trip.",
        Metric::ValuesWritten => "Values written to the cache.",
        Metric::StaleOverwrites => "Writes that put an older value over a newer one (a late writer).",
        Metric::WritesRefused => "Fenced writes the cache refused because a newer fence had written.",
        Metric::NegativeHits => "Requests answered from a cached failure (negative caching).",
        Metric::RememberedFailures => "Failures handed out again from the flight map after their flight ended.",
        Metric::Corrupted => "Waiters that got a shared result another waiter had changed.",
        Metric::Crashed => "Threads that died mid-request (a crashing holder).",
        Metric::FaultBites => "Times a fault of the run's list acted: a command failed, a call slowed or failed, a holder died.",
        Metric::AdmissionWaits => "Recomputes that queued for an admission permit.",
        Metric::AdmissionShed => "Recomputes shed because no admission permit came within the queue budget.",
        Metric::Retries => "Attempts a caller made again after a failure or a timeout.",
        Metric::RetryRecomputes => "Origin calls made by a retry: a retry that found the value or joined a flight made none.",
        Metric::Rejected => "Open-loop arrivals turned away: every thread busy and the accept queue full.",
        Metric::Handovers => "Leaders that left before their work started, their flight taken over by the oldest follower.",
        Metric::P50Ms => "Median time from request to answer.",
        Metric::P99Ms => "The time 99 % of requests were answered within.",
        Metric::MaxMs => "The slowest request's time to answer.",
        Metric::MaxWaitMs => "The longest any request waited on another's work.",
        Metric::ElapsedMs => "Virtual time of the last event that changed anything.",
        Metric::Events => "Simulation events processed.",
    }
}

/// What each of the page's own derived numbers (`naive`) counts, in one
/// line: the legend's terms that are no `Report` field.
pub const DERIVED_MEANINGS: [(&str, &str); 4] = [
    ("naive", "Instances × threads: the recomputes when every thread misses at once with no defence."),
    ("origin_running", "Recomputes running at the origin at this moment."),
    ("origin_capacity", "Concurrent recomputes the origin absorbs before latency grows."),
    ("live_claims", "Office N (or held, with several keys claimed): a caller of that office holds the claim (lock) now, and nobody else may recompute; free: nobody does."),
];

/// What the page's derived number called `name` counts, in one line.
pub fn derived_meaning(name: &str) -> Option<&'static str> {
    DERIVED_MEANINGS
        .iter()
        .find(|(k, _)| *k == name)
        .map(|(_, v)| *v)
}

#[cfg(test)]
mod tests {
    /// A watch line is shown before the run has done anything: it may
    /// speak of what the scenario is set to do, never of what will happen
    /// (a holder set to die may never win a claim, a hang may come after
    /// the run's end).
    #[test]
    fn no_watch_line_tells_the_future() {
        for x in super::all_stories() {
            let (name, rule) = (x.name, x.rule);
            let w = rule.watch.to_lowercase();
            for future in ["will ", "about to", "going to", "is to "] {
                assert!(
                    !w.contains(future),
                    "{name}: \"{}\" says \"{future}\"",
                    rule.watch
                );
            }
        }
    }

    /// Every lesson has a rank of its own (the order among equals), and
    /// a name of its own.
    #[test]
    fn every_lesson_has_its_own_rank_and_name() {
        let all = super::all_stories();
        for (i, x) in all.iter().enumerate() {
            for y in &all[i + 1..] {
                assert_ne!(x.rule.rank, y.rule.rank, "{} and {}", x.name, y.name);
                assert_ne!(x.name, y.name);
            }
        }
        assert_eq!(all.len(), 4 + 1 + super::PRESETS.len());
    }

    #[test]
    fn every_counter_has_a_meaning() {
        for m in stampede::Metric::ALL.iter().map(|m| super::meaning(*m)) {
            assert!(m.ends_with('.') && m.len() < 120, "{m}");
        }
        for (_, m) in super::DERIVED_MEANINGS {
            assert!(m.ends_with('.'), "{m}");
        }
        assert!(super::derived_meaning("recomputes").is_none());
        assert_eq!(
            super::derived_meaning("naive").map(|m| &m[..9]),
            Some("Instances")
        );
    }
}
