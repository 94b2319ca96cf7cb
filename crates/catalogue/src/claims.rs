//! Claims: what a sentence about a run states, checked against that run.
//!
//! Every sentence, label and verdict the page and the CLI show about a run
//! is built from [`Clause`]s. A clause is words plus the [`Claim`]s those
//! words make (a causal word such as "so", "each retry was an origin call
//! of its own" or "acts in time" is a claim of its own), and a clause is
//! said only where every one of its claims holds for the run on screen:
//! [`Say::when`] drops it otherwise, and [`Say::first`] says the first of
//! several wordings that holds, so that where the preferred words are false
//! a true one is said instead. [`check`] re-checks a finished sentence
//! against its run; the property tests call it on thousands of runs.
//!
//! (Not to be confused with the Redis claim, the lock of [`stampede::claim`].)

use serde::Serialize;
use stampede::ledger::{Cause, End, FaultActs};
use stampede::scenario::Scenario;
use stampede::{Metric, Report};

/// The run a sentence speaks of: its scenario, its counters so far, and
/// whether it is over; and, where the sentence compares it with one
/// ("against {then.origin_peak_concurrency} with no jitter"), its contrast's report: the same traffic
/// with one thing undone.
#[derive(Clone, Copy, Debug)]
pub struct Run<'a> {
    pub s: &'a Scenario,
    pub r: &'a Report,
    pub ended: bool,
    pub then: Option<&'a Report>,
}

impl<'a> Run<'a> {
    pub fn new(s: &'a Scenario, r: &'a Report, ended: bool) -> Self {
        Run {
            s,
            r,
            ended,
            then: None,
        }
    }

    /// The same run, compared with `then` (its contrast's report, once the
    /// caller has it). A claim about the contrast holds only where it is.
    pub fn against(self, then: Option<&'a Report>) -> Self {
        Run { then, ..self }
    }
}

/// One statement about a run, and the check that proves it from the run's
/// counters and knobs: a predicate written for it, or a [`Bound`] on one
/// counter (a drill's goal, the kit's shown run).
#[derive(Clone, Copy)]
pub struct Claim {
    /// What it states, in a few words (shown by a failing check); a
    /// bound's counter.
    pub states: &'static str,
    test: Test,
}

#[derive(Clone, Copy)]
enum Test {
    By(fn(&Run) -> bool),
    Bound(Bound),
    /// `n` requests of the run's ledger ended `end` (with `cause`, if
    /// given): the words that name how requests ended, and why.
    Ledger(End, Option<Cause>, u64),
    /// The fault window at this index of the scenario's list did exactly
    /// this (the words that say what a fault did).
    Fault(usize, FaultActs),
}

impl Claim {
    pub const fn new(states: &'static str, holds: fn(&Run) -> bool) -> Claim {
        Claim {
            states,
            test: Test::By(holds),
        }
    }

    /// `n` requests ended `end`, for `cause` if given, as the run's
    /// ledger recorded them.
    pub const fn ledger(end: End, cause: Option<Cause>, n: u64) -> Claim {
        Claim {
            states: "the ledger's count",
            test: Test::Ledger(end, cause, n),
        }
    }

    /// The fault window `i` of the scenario's list did exactly `acts`.
    pub const fn fault(i: usize, acts: FaultActs) -> Claim {
        Claim {
            states: "what the fault window did",
            test: Test::Fault(i, acts),
        }
    }

    /// The ledger cell it states, if it is a ledger claim.
    pub fn as_ledger(&self) -> Option<(End, Option<Cause>, u64)> {
        match self.test {
            Test::Ledger(e, c, n) => Some((e, c, n)),
            _ => None,
        }
    }

    /// A bound on a counter as a claim.
    pub const fn bound(b: Bound) -> Claim {
        Claim {
            states: b.metric.name(),
            test: Test::Bound(b),
        }
    }

    /// The claim holds for `run`.
    pub fn holds(&self, run: &Run) -> bool {
        match self.test {
            Test::By(f) => f(run),
            Test::Bound(b) => b.holds_for(run.r),
            Test::Ledger(e, Some(c), n) => run.r.ledger.get(e, c) == n,
            Test::Ledger(e, None, n) => run.r.ledger.ended(e) == n,
            Test::Fault(i, a) => run.r.fault_acts.get(i) == Some(&a),
        }
    }

    /// The bound it is, if it is one.
    pub fn as_bound(&self) -> Option<Bound> {
        match self.test {
            Test::Bound(b) => Some(b),
            _ => None,
        }
    }
}

impl std::fmt::Debug for Claim {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.test {
            Test::By(_) => f.write_str(self.states),
            Test::Bound(b) => f.write_str(&b.name()),
            Test::Ledger(e, Some(c), n) => write!(f, "{n} ended {}/{}", e.name(), c.name()),
            Test::Ledger(e, None, n) => write!(f, "{n} ended {}", e.name()),
            Test::Fault(i, a) => write!(f, "fault {i} did {a:?}"),
        }
    }
}

impl PartialEq for Claim {
    fn eq(&self, other: &Claim) -> bool {
        self.states == other.states
            && self.as_bound() == other.as_bound()
            && self.as_ledger() == other.as_ledger()
    }
}

/// One statement of the catalogue about a run: a scenario, as a link (a
/// share link's query, or for a drill a fragment applied to its
/// situation), the claims its run makes, and the words that state them.
/// Every table that says something about a run (a tour step, a preset's
/// lesson, a drill's story, reasoning and hints, the kit's points, red
/// flags and follow-ups) holds it as a row; [`crate::rows`] lists
/// them all, and one host test plays every row's link and checks its
/// claims.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Row {
    pub link: &'static str,
    pub claims: &'static [Claim],
    pub words: &'static str,
}

impl Row {
    /// The first of its claims that is a bound on a counter, if one is
    /// (the kit names it on its Show button).
    pub fn bound(&self) -> Option<Bound> {
        self.claims.iter().find_map(Claim::as_bound)
    }
}

/// How a measured value is held against a limit.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Cmp {
    /// value <= limit
    AtMost,
    /// value >= limit
    AtLeast,
    /// value == limit
    Exactly,
}

impl Cmp {
    pub fn symbol(self) -> &'static str {
        match self {
            Cmp::AtMost => "<=",
            Cmp::AtLeast => ">=",
            Cmp::Exactly => "==",
        }
    }

    pub fn holds(self, value: f64, limit: f64) -> bool {
        match self {
            Cmp::AtMost => value <= limit,
            Cmp::AtLeast => value >= limit,
            Cmp::Exactly => value == limit,
        }
    }

    /// Of two values, the one further from passing.
    pub(crate) fn worse(self, a: f64, b: f64, limit: f64) -> f64 {
        let pick_b = match self {
            Cmp::AtMost => b > a,
            Cmp::AtLeast => b < a,
            Cmp::Exactly => (b - limit).abs() > (a - limit).abs(),
        };
        if pick_b {
            b
        } else {
            a
        }
    }
}

/// A bound on one counter of the run (a [`Report`] field): a comparison
/// and a limit, as in `p99_ms <= 300`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Bound {
    pub metric: Metric,
    pub cmp: Cmp,
    pub limit: f64,
}

impl Bound {
    /// `p99_ms <= 300`: its name in the CLI and on the page.
    pub fn name(&self) -> String {
        format!(
            "{} {} {}",
            self.metric.name(),
            self.cmp.symbol(),
            stampede::decimal::format(self.limit)
        )
    }

    /// The counter's value in `r` (NaN for no such counter).
    pub fn value(&self, r: &Report) -> f64 {
        stampede::metrics::value(r, self.metric).unwrap_or(f64::NAN)
    }

    /// The bound holds for the report `r`.
    pub fn holds_for(&self, r: &Report) -> bool {
        self.cmp.holds(self.value(r), self.limit)
    }
}

// ---- claims against a contrast ----------------------------------------------
//
// A run compared with its contrast ([`Run::against`]): the tour's words
// "against {then.origin_peak_concurrency} with no jitter", the A/B view's better side. Each holds only
// where the contrast is there to prove it.

/// Fewer recomputes than the contrast.
pub const FEWER_RECOMPUTES_THAN_THEN: Claim =
    Claim::new("fewer recomputes than the other run", |x| {
        x.then.is_some_and(|t| x.r.recomputes < t.recomputes)
    });
/// Fewer claim attempts than the contrast.
pub const FEWER_ATTEMPTS_THAN_THEN: Claim =
    Claim::new("fewer claim attempts than the other run", |x| {
        x.then
            .is_some_and(|t| x.r.claim_attempts < t.claim_attempts)
    });
/// More claim attempts than the contrast.
pub const MORE_ATTEMPTS_THAN_THEN: Claim =
    Claim::new("more claim attempts than the other run", |x| {
        x.then
            .is_some_and(|t| x.r.claim_attempts > t.claim_attempts)
    });
/// Fewer callers timed out than in the contrast.
pub const FEWER_TIMEOUTS_THAN_THEN: Claim =
    Claim::new("fewer callers timed out than in the other run", |x| {
        x.then.is_some_and(|t| x.r.timeouts < t.timeouts)
    });
/// A lower peak of recomputes at the origin at once than the contrast.
pub const LOWER_PEAK_THAN_THEN: Claim = Claim::new(
    "fewer recomputes at the origin at once than the other run",
    |x| {
        x.then
            .is_some_and(|t| x.r.origin_peak_concurrency < t.origin_peak_concurrency)
    },
);
/// Fewer readers met a miss than in the contrast.
pub const FEWER_MISSES_THAN_THEN: Claim = Claim::new("fewer misses than the other run", |x| {
    x.then.is_some_and(|t| x.r.misses < t.misses)
});
/// A lower p99 than the contrast.
pub const LOWER_P99_THAN_THEN: Claim = Claim::new("a lower p99 than the other run", |x| {
    x.then.is_some_and(|t| x.r.p99_ms < t.p99_ms)
});
/// A lower p50 than the contrast.
pub const LOWER_P50_THAN_THEN: Claim = Claim::new("a lower p50 than the other run", |x| {
    x.then.is_some_and(|t| x.r.p50_ms < t.p50_ms)
});

/// Words, and the claims they make.
#[derive(Clone, Debug, PartialEq)]
pub struct Clause {
    pub text: String,
    pub claims: Vec<Claim>,
}

/// A sentence in the making, over one run: clauses are added only where
/// their claims hold.
pub struct Say<'a> {
    run: Run<'a>,
    clauses: Vec<Clause>,
}

impl<'a> Say<'a> {
    pub fn new(run: Run<'a>) -> Self {
        Say {
            run,
            clauses: Vec::new(),
        }
    }

    pub fn run(&self) -> Run<'a> {
        self.run
    }

    fn all_hold(&self, claims: &[Claim]) -> bool {
        claims.iter().all(|c| c.holds(&self.run))
    }

    /// Adds `text`, making `claims`, if they all hold for the run; says
    /// whether it did.
    pub fn when(&mut self, claims: &[Claim], text: impl Into<String>) -> bool {
        if !self.all_hold(claims) {
            return false;
        }
        self.clauses.push(Clause {
            text: text.into(),
            claims: claims.to_vec(),
        });
        true
    }

    /// Words that state only counters and knobs of the run (each number is
    /// checked to be one by the tests), no cause.
    pub fn plain(&mut self, text: impl Into<String>) {
        self.when(&[], text);
    }

    /// The first of `options` whose claims all hold; says whether one did.
    /// The last option is usually the plain fallback with no claim, so that
    /// where something happened something true is said.
    pub fn first(&mut self, options: Vec<(&[Claim], String)>) -> bool {
        for (claims, text) in options {
            if self.when(claims, text) {
                return true;
            }
        }
        false
    }

    pub fn is_empty(&self) -> bool {
        self.clauses.is_empty()
    }

    /// How many clauses have been said so far.
    pub fn len(&self) -> usize {
        self.clauses.len()
    }

    pub fn done(self) -> Vec<Clause> {
        self.clauses
    }
}

/// The sentence the clauses make: their words, in order.
pub fn text(clauses: &[Clause]) -> String {
    clauses.iter().map(|c| c.text.as_str()).collect()
}

/// Words that state a cause or an effect that did not happen on its own
/// ("so", "because", "in time", "nobody was allowed"): a clause that says
/// one must carry the claim that proves it ([`Say::plain`] states only
/// counters and knobs).
pub const CAUSAL: [&str; 15] = [
    " so ",
    "so that",
    "because",
    "thanks to",
    "therefore",
    "which is why",
    "would have",
    "instead of",
    "was allowed",
    "with no lock",
    " in time",
    "prevent",
    "spared",
    "saved",
    "left the map",
];

/// Words that state an event of the run ("missed", "asked the origin",
/// "failed closed"): a clause that says one must carry a claim that
/// proves it ([`Say::plain`] states only counters and knobs).
pub const EVENT: [&str; 12] = [
    "missed",
    "asked the origin",
    "failed closed",
    "failed open",
    "while the origin failed",
    "retry was an origin call",
    "took the fleet to",
    "too late",
    "never answered",
    "did nothing",
    "recomputed for itself",
    "reached only",
];

/// The first event word of [`EVENT`] in `text`, if any.
pub fn event_word(text: &str) -> Option<&'static str> {
    let lower = text.to_ascii_lowercase();
    EVENT.into_iter().find(|w| lower.contains(w))
}

/// The first causal word of [`CAUSAL`] in `text`, if any.
pub fn causal_word(text: &str) -> Option<&'static str> {
    // "so far" and "so many" say how much, not why.
    // ASCII lowering: the causal words are ASCII (and the wasm then carries
    // no Unicode case tables).
    let lower = text
        .to_ascii_lowercase()
        .replace("so far", "")
        .replace("so many", "");
    CAUSAL.into_iter().find(|w| lower.contains(w))
}

/// Where not every request got a value, the sentence says how they
/// ended: a ledger claim names the largest outcome that is not a value
/// (leaving it out would pass every other check). `Err` names it.
pub fn tells_how_they_ended(run: &Run, clauses: &[Clause]) -> Result<(), String> {
    let Some((end, n)) = run.r.ledger.largest_not_value() else {
        return Ok(());
    };
    let said = clauses
        .iter()
        .flat_map(|c| &c.claims)
        .filter_map(Claim::as_ledger)
        .any(|(e, _, _)| e == end);
    if said {
        Ok(())
    } else {
        Err(format!(
            "{n} requests ended {}, the most of any outcome that is not a value, and the sentence does not say so",
            end.name()
        ))
    }
}

/// Every clause with a causal word carries a claim, and every claim of
/// every clause holds for `run`; otherwise the first that
/// does not, with its words.
pub fn check(run: &Run, clauses: &[Clause]) -> Result<(), String> {
    for c in clauses {
        if c.claims.is_empty() {
            if let Some(word) = causal_word(&c.text) {
                return Err(format!(
                    "\"{}\" says \"{word}\", a cause, with no claim to prove it",
                    c.text
                ));
            }
            if let Some(word) = event_word(&c.text) {
                return Err(format!(
                    "\"{}\" says \"{word}\", an event, with no claim to prove it",
                    c.text
                ));
            }
        }
        for claim in &c.claims {
            if !claim.holds(run) {
                return Err(format!(
                    "\"{}\" claims \"{claim:?}\", which does not hold",
                    c.text
                ));
            }
        }
    }
    Ok(())
}

// ---- plain claims on one counter, shared by the lessons and the presets'
// words (crate::lesson re-exports them) ----------------------------------------

pub const NONE_PINNED: Claim = Claim::new("every request ended", |x| x.r.pinned == 0);
pub const REDIS_FAILED: Claim = Claim::new("a Redis command failed", |x| x.r.redis_errors > 0);
pub const NO_TIMEOUTS: Claim = Claim::new("no caller timed out", |x| x.r.timeouts == 0);
pub const TIMEOUTS: Claim = Claim::new("a caller timed out", |x| x.r.timeouts > 0);
pub const CRASHED: Claim = Claim::new("a thread died", |x| x.r.crashed > 0);
pub const ORIGIN_TIMED_OUT: Claim =
    Claim::new("an origin call timed out", |x| x.r.origin_timeouts > 0);
pub const OVERLAPS: Claim = Claim::new("a recompute overlapped another", |x| {
    x.r.overlapping_recomputes > 0
});
pub const MERGED: Claim = Claim::new("fewer recomputes than requests that missed", |x| {
    x.r.recomputes < x.r.misses
});
pub const ENDED: Claim = Claim::new("the run is over", |x| x.ended);
pub const SHED: Claim = Claim::new("admission shed a recompute", |x| x.r.admission_shed > 0);
pub const UNCLAIMED: Claim = Claim::new("no claim was attempted", |x| x.r.claim_attempts == 0);
pub const STALE: Claim = Claim::new("a request was served stale", |x| x.r.stale_served > 0);
pub const PER_INSTANCE: Claim = Claim::new("as many recomputes as instances", |x| {
    x.r.recomputes == u64::from(x.s.instances)
});

#[cfg(test)]
mod tests {
    use super::*;

    const SOME_RETRIES: Claim = Claim::new("some retries", |x| x.r.retries > 0);

    /// A bound (a drill's goal) is a claim like any other: said where it
    /// holds, re-checked by [`check`], named by its bound.
    #[test]
    fn a_bound_is_a_claim() {
        let s = Scenario::default();
        let mut r = Report {
            recomputes: 40,
            ..Report::default()
        };
        let goal = Claim::bound(Bound {
            metric: Metric::Recomputes,
            cmp: Cmp::AtMost,
            limit: 40.0,
        });
        assert_eq!(format!("{goal:?}"), "recomputes <= 40");
        let mut say = Say::new(Run::new(&s, &r, true));
        assert!(say.when(&[goal], "at most 40 recomputes"));
        let clauses = say.done();
        assert!(check(&Run::new(&s, &r, true), &clauses).is_ok());
        r.recomputes = 41;
        let e = check(&Run::new(&s, &r, true), &clauses).unwrap_err();
        assert!(e.contains("recomputes <= 40"), "{e}");
        assert_ne!(goal, Claim::new("recomputes", |_| true));
    }

    #[test]
    fn a_clause_is_said_only_where_its_claims_hold() {
        let s = Scenario::default();
        let mut r = Report::default();
        let run = Run::new(&s, &r, false);
        let mut say = Say::new(run);
        assert!(!say.when(&[SOME_RETRIES], "retries happened"));
        assert!(say.first(vec![
            (&[SOME_RETRIES, ENDED], "a".into()),
            (&[], "b".into())
        ]));
        let clauses = say.done();
        assert_eq!(text(&clauses), "b");
        assert!(check(&run, &clauses).is_ok());
        // The same clauses checked against another run: a claim that held
        // there is named when it no longer does.
        r.retries = 3;
        let run = Run::new(&s, &r, true);
        let mut say = Say::new(run);
        say.when(&[SOME_RETRIES, ENDED], "3 retries");
        let clauses = say.done();
        r.retries = 0;
        let e = check(&Run::new(&s, &r, true), &clauses).unwrap_err();
        assert!(e.contains("some retries"), "{e}");
    }
}
