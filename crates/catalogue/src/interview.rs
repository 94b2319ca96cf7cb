//! The interviewer's kit for the card's question: what a basics, a solid and
//! a deeper answer names, the red flags that cost a candidate the question,
//! the follow-ups in order, and the curveballs to throw at a running
//! scenario. Written for the interviewer, not as the candidate's prep.
//!
//! Every point that can be shown, every red flag and every follow-up is a
//! [`Row`]: a link, the words, and the claims (a bound first) its run meets
//! on every seed of [`crate::drill::SEEDS`] (`tests/rows.rs` plays them),
//! so the interviewer can put the claim on the shared screen and it holds.

use crate::claims::{Claim, Row};
use crate::drill::{at_least, at_most, exactly};
use crate::lesson::{
    COALESCED, EVERY_MISS_CLAIMED, EVERY_PINNED, PER_INSTANCE, REMEMBERED, SWAMPED,
};
use stampede::scenario::{Fault, FaultKind, RedisOutage};
use stampede::sim::Fleet;
use stampede::Metric;

mod questions;
pub mod titles;

/// The question the kit is for (the card's).
pub const QUESTION: &str = "40 instances with 200 threads each sit in front of Redis. Compare \
in-process coalescing (singleflight) with a Redis claim for a miss, and say why you might use both.";

/// One thing an answer names: words alone, or words a run shows (a
/// [`Row`]: the run's link, the words, and what its run meets, a bound
/// first, the one the kit's Show button names).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Point {
    Said(&'static str),
    Shown(Row),
}

impl Point {
    /// The point's words.
    pub const fn text(&self) -> &'static str {
        match self {
            Point::Said(text) => text,
            Point::Shown(row) => row.words,
        }
    }

    /// The run that shows it, if one does.
    pub const fn shown(&self) -> Option<Row> {
        match self {
            Point::Said(_) => None,
            Point::Shown(row) => Some(*row),
        }
    }
}

/// One of the card's three levels of answer.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Level {
    /// "basics", "solid", "deeper".
    pub name: &'static str,
    /// What a candidate at this level gets across, in a line.
    pub gist: &'static str,
    pub names: &'static [Point],
}

/// A belief that costs the question, with the run that refutes it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RedFlag {
    /// What the candidate says.
    pub says: &'static str,
    /// The run that refutes it, and why it is wrong in a line (its words):
    /// a bound on the damage first (the one the kit's Show button names),
    /// then what the words claim of the run. The lesson's words make those
    /// same claims (a host test checks it), so the flag and the lesson
    /// cannot disagree on a run.
    pub row: Row,
    /// The lesson it speaks of (a rule of [`crate::lesson`]): the one the
    /// page shows on `row`'s run.
    pub lesson: &'static str,
    /// The same run without the mistake (a share link's query): its run
    /// does not show the row's damage, so the mistake is its cause.
    pub fixed: &'static str,
}

impl RedFlag {
    /// What its words claim of its run, beside the bound on the damage:
    /// the claims the lesson's words make too.
    pub fn reasons(&self) -> impl Iterator<Item = &'static Claim> {
        self.row.claims.iter().filter(|c| c.as_bound().is_none())
    }
}

/// A follow-up: one of the reference's questions (`data-question` on the
/// page), what to listen for, and the run to put on screen.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FollowUp {
    pub question: u32,
    /// What to listen for (its words), and the run to put on screen.
    pub row: Row,
}

/// A fault thrown into the candidate's running scenario at the current
/// moment ([`stampede::sim::Fleet::inject`]), and the question to ask as it
/// bites.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Curveball {
    /// Its name: the hook `data-curveball` on the page.
    pub kind: &'static str,
    pub fault: FaultKind,
    /// For a Redis fault, whether Redis errors or hangs.
    pub outage: Option<RedisOutage>,
    pub label: &'static str,
    pub ask: &'static str,
    /// The counter that rises after the curveball, if it bites.
    pub metric: Metric,
    /// How long the fault lasts (a holder's death is a moment).
    pub duration_ms: Option<u32>,
}

/// A curveball worth throwing while a question is discussed, and what to
/// ask as it bites (the question's own angle on [`Curveball::ask`]).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Throw {
    /// A [`Curveball::kind`] of [`CURVEBALLS`].
    pub kind: &'static str,
    pub ask: &'static str,
}

/// One question of the kit: the card's (number 0) or one of the page's
/// reference questions (`data-question="N"`, 1 to 15), with what each level
/// of answer names, the red flags that cost it, the follow-ups to ask next
/// and the curveballs to throw while it is discussed.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Question {
    /// 0 for the card's question; else the page's `data-question`.
    pub number: u32,
    /// The question as the interviewer reads it out (for 1 to 15, the
    /// page's summary, tags dropped).
    pub asks: &'static str,
    /// basics, solid, deeper.
    pub levels: [Level; 3],
    pub red_flags: &'static [RedFlag],
    pub follow_ups: &'static [FollowUp],
    pub throws: &'static [Throw],
}

/// The card's question, whole.
pub const CARD: Question = Question {
    number: 0,
    asks: QUESTION,
    levels: LEVELS,
    red_flags: &RED_FLAGS,
    follow_ups: &FOLLOW_UPS,
    throws: &[
        Throw {
            kind: "redis",
            ask: CURVEBALLS[0].ask,
        },
        Throw {
            kind: "redis-hang",
            ask: CURVEBALLS[1].ask,
        },
        Throw {
            kind: "holder",
            ask: CURVEBALLS[2].ask,
        },
        Throw {
            kind: "origin",
            ask: CURVEBALLS[3].ask,
        },
        Throw {
            kind: "origin-hang",
            ask: CURVEBALLS[4].ask,
        },
        Throw {
            kind: "ttl-sync",
            ask: CURVEBALLS[5].ask,
        },
    ],
};

/// Every question of the kit, the card's first, then the reference's in
/// the page's order.
pub fn questions() -> impl Iterator<Item = &'static Question> {
    std::iter::once(&CARD).chain(questions::REFERENCE.iter())
}

/// The kit's question of a number.
pub fn question(number: u32) -> Option<&'static Question> {
    questions().find(|q| q.number == number)
}

/// A point a run shows: its words, the run's link, and what the run meets.
const fn shown(words: &'static str, link: &'static str, claims: &'static [Claim]) -> Point {
    Point::Shown(Row {
        link,
        claims,
        words,
    })
}

/// A point no run shows.
const fn said(text: &'static str) -> Point {
    Point::Said(text)
}

/// The three levels, in order.
pub const LEVELS: [Level; 3] = [
    Level {
        name: "basics",
        gist: "Knows what each technique collapses, and that only Redis crosses processes.",
        names: &[
            shown(
                "Duplicates on a miss multiply: instances × threads, 8,000 here.",
                "sf=0&c=off",
                &[exactly(Metric::Recomputes, 8000.0).claim()],
            ),
            shown(
                "Singleflight shares one computation among one process's threads: 200 become 1.",
                "preset=singleflight&i=1",
                &[exactly(Metric::Recomputes, 1.0).claim()],
            ),
            shown(
                "A Redis claim is what coordinates the instances: about one recompute.",
                "preset=burst",
                &[exactly(Metric::Recomputes, 1.0).claim()],
            ),
        ],
    },
    Level {
        name: "solid",
        gist: "Does the arithmetic, places the claim inside singleflight and says what it costs.",
        names: &[
            said("Singleflight is free and local: no network hop, no TTL, nothing to release."),
            said("The claim is SET NX PX with a token, released by a compare-and-delete."),
            shown(
                "Singleflight outside, the claim inside: 40 callers claim, not 8,000.",
                "preset=burst",
                &[exactly(Metric::ClaimAttempts, 40.0).claim()],
            ),
            shown(
                "Losers need a policy: serve stale, a bounded wait, or a degraded answer.",
                "preset=stale",
                &[at_least(Metric::StaleServed, 1.0).claim()],
            ),
            shown(
                "A failure is shared with the current waiters and never kept in the map.",
                "preset=failure",
                &[exactly(Metric::RememberedFailures, 0.0).claim()],
            ),
        ],
    },
    Level {
        name: "deeper",
        gist: "Bounds every wait, sizes the claim, and knows when each layer is not worth it.",
        names: &[
            shown(
                "Every wait ends at its caller's deadline; a waiter leaving does not cancel the work.",
                "preset=hang",
                &[exactly(Metric::Pinned, 0.0).claim()],
            ),
            shown(
                "The claim's TTL is above the origin timeout plus the write, so holders never overlap.",
                "preset=burst",
                &[exactly(Metric::OverlappingRecomputes, 0.0).claim()],
            ),
            shown(
                "A dead holder blocks the refresh for at most the claim's TTL.",
                "preset=holder-crash",
                &[exactly(Metric::ClaimWins, 2.0).claim()],
            ),
            shown(
                "On a cheap recompute singleflight alone is enough: 40 fast queries harm nobody.",
                "preset=cheap",
                &[at_most(Metric::Recomputes, 40.0).claim()],
            ),
            shown(
                "A cold cache is many different keys: admission control bounds the origin, and deduplication helps only with the hot ones (do both).",
                "preset=cold",
                &[at_least(Metric::AdmissionShed, 1.0).claim()],
            ),
        ],
    },
];

/// The card's red flags: saying one of these costs the candidate the question.
pub const RED_FLAGS: [RedFlag; 5] = [
    RedFlag {
        says: "Singleflight stops duplicate work across the fleet.",
        row: Row {
            link: "preset=singleflight",
            claims: &[exactly(Metric::Recomputes, 40.0).claim(), COALESCED, PER_INSTANCE],
            words: "It sees one process: 40 instances still recompute 40 times.",
        },
        lesson: "singleflight",
        fixed: "preset=burst",
    },
    RedFlag {
        says: "Take the Redis lock first, then coalesce.",
        row: Row {
            link: "preset=claim-outer",
            claims: &[exactly(Metric::ClaimAttempts, 8000.0).claim(), EVERY_MISS_CLAIMED],
            words: "Every thread then claims and polls on its own: 8,000 claim attempts.",
        },
        lesson: "claim-outer",
        fixed: "preset=burst",
    },
    RedFlag {
        says: "Keep the failed result in the map so callers stop retrying.",
        row: Row {
            link: "preset=failure&pf=remember-failure",
            claims: &[at_least(Metric::RememberedFailures, 1.0).claim(), REMEMBERED],
            words: "A blip becomes an outage: later callers get the old error after the origin recovered.",
        },
        lesson: "remember-failure",
        fixed: "preset=failure",
    },
    RedFlag {
        says: "Waiters just wait until the computation finishes.",
        row: Row {
            link: "preset=hang&pf=no-deadline",
            claims: &[at_least(Metric::Pinned, 1.0).claim(), EVERY_PINNED],
            words: "Behind a hung origin every caller is pinned past its deadline.",
        },
        lesson: "no-deadline",
        fixed: "preset=hang",
    },
    RedFlag {
        says: "Coalescing or the lock alone protects a cold cache.",
        row: Row {
            link: "preset=cold&adm=0",
            claims: &[at_least(Metric::OriginPeakConcurrency, 100.0).claim(), SWAMPED],
            words: "Most misses are different keys: coalescing merges only requests for the same key, so only admission control bounds the origin (do both).",
        },
        lesson: "cold",
        fixed: "preset=cold",
    },
];

/// The follow-ups, in the order to ask them.
pub const FOLLOW_UPS: [FollowUp; 6] = [
    FollowUp {
        question: 3,
        row: Row {
            link: "preset=claim-outer",
            claims: &[exactly(Metric::ClaimAttempts, 8000.0).claim()],
            words: "Only each instance's leader claims and polls; the order decides the Redis load.",
        },
    },
    FollowUp {
        question: 1,
        row: Row {
            link: "preset=failure&pf=remember-failure",
            claims: &[at_least(Metric::RememberedFailures, 1.0).claim()],
            words: "The waiters get the failure; the entry leaves the map; a negative cache only on purpose.",
        },
    },
    FollowUp {
        question: 5,
        row: Row {
            link: "preset=hang",
            claims: &[exactly(Metric::Pinned, 0.0).claim()],
            words: "The waiter leaves at its deadline; the work runs on for the others.",
        },
    },
    FollowUp {
        question: 12,
        row: Row {
            link: "preset=short-ttl",
            claims: &[at_least(Metric::OverlappingRecomputes, 1.0).claim()],
            words: "TTL above the origin timeout plus the write, or renewal; it bounds a dead holder.",
        },
    },
    FollowUp {
        question: 13,
        row: Row {
            link: "preset=redis-down",
            claims: &[at_least(Metric::RedisErrors, 1.0).claim()],
            words: "Fail open, but fast: a short client timeout or a breaker, behind admission control.",
        },
    },
    FollowUp {
        question: 2,
        row: Row {
            link: "preset=cheap",
            claims: &[at_most(Metric::Recomputes, 40.0).claim()],
            words: "Singleflight alone when 40 recomputes are harmless; the claim when the recompute is slow or billed.",
        },
    },
];

/// The curveballs, each a fault of [`stampede::scenario::Fault`]'s kinds.
pub const CURVEBALLS: [Curveball; 6] = [
    Curveball {
        kind: "redis",
        fault: FaultKind::Redis,
        outage: Some(RedisOutage::Error),
        label: "Redis goes down",
        ask: "Redis just went down. What does your design do now, and what does the origin see?",
        metric: Metric::RedisErrors,
        duration_ms: Some(5_000),
    },
    Curveball {
        kind: "redis-hang",
        fault: FaultKind::Redis,
        outage: Some(RedisOutage::Hang),
        label: "Redis hangs",
        ask: "Redis stops answering but keeps the connection. How long does each caller wait?",
        metric: Metric::RedisErrors,
        duration_ms: Some(5_000),
    },
    Curveball {
        kind: "holder",
        fault: FaultKind::Holder,
        outage: None,
        label: "The claim holder dies",
        ask: "The instance holding the claim just died. Who refreshes the key, and when?",
        metric: Metric::Crashed,
        duration_ms: None,
    },
    Curveball {
        kind: "origin",
        fault: FaultKind::Origin,
        outage: None,
        label: "The origin fails",
        ask:
            "The origin starts failing. What do the waiters get, and what does the next caller do?",
        metric: Metric::OriginFailures,
        duration_ms: Some(2_000),
    },
    Curveball {
        kind: "origin-hang",
        fault: FaultKind::OriginHang,
        outage: None,
        label: "The origin hangs",
        ask: "The origin stops answering. Who is waiting, and for how long?",
        metric: Metric::Timeouts,
        duration_ms: Some(5_000),
    },
    Curveball {
        kind: "ttl-sync",
        fault: FaultKind::TtlSync,
        outage: None,
        label: "A deploy syncs the TTLs",
        ask: "A deploy just re-warmed every key with the same TTL and no jitter. What happens \
one TTL from now, and what would have spread it?",
        metric: Metric::OriginPeakConcurrency,
        duration_ms: None,
    },
];

/// The fault a curveball injects, starting at `at_ms`.
pub fn fault(ball: &Curveball, at_ms: u32) -> Fault {
    Fault {
        kind: ball.fault,
        start_ms: at_ms,
        duration_ms: ball.duration_ms,
    }
}

/// Throws `ball` into the running `fleet`, starting at `at_ms` (after the
/// fleet's clock): the run goes on from where it is, and the fleet's
/// scenario now carries the fault (its link replays the same run).
pub fn throw(fleet: &mut Fleet, ball: &Curveball, at_ms: u32) -> Result<(), String> {
    // Thrown where it cannot bite, it would only promise a counter that
    // stays at 0.
    if ball.fault == FaultKind::Holder
        && fleet.scenario().claim == stampede::scenario::ClaimMode::Off
    {
        return Err("this run has no Redis claim, so nobody holds one to die".into());
    }
    let f = fault(ball, at_ms);
    match ball.outage {
        Some(outage) => fleet.inject_redis_outage(f, outage),
        None => fleet.inject(f),
    }
}

/// Where `ball`'s counter ends when `fleet` runs on from where it stands,
/// with `ball` thrown at `at_ms` (or, with `None`, as it is).
pub fn end_value(mut fleet: Fleet, ball: &Curveball, at_ms: Option<u32>) -> Result<f64, String> {
    fleet.set_recording(false);
    if let Some(at) = at_ms {
        throw(&mut fleet, ball, at)?;
    }
    Ok(stampede::metrics::value(&fleet.run(), ball.metric).unwrap_or(0.0))
}

/// Whether `ball` thrown at `at_ms` moves its counter in `fleet`'s run: a
/// curveball that would not is refused, not said to be thrown.
pub fn bites(fleet: &Fleet, ball: &Curveball, at_ms: u32) -> bool {
    match (
        end_value(fleet.clone(), ball, None),
        end_value(fleet.clone(), ball, Some(at_ms)),
    ) {
        (Ok(quiet), Ok(thrown)) => thrown > quiet,
        _ => false,
    }
}

/// What the page says once `ball` is thrown at `at_ms` into a run whose
/// values live `value_ttl_ms`: when, that nothing restarted, that the link
/// carries it, which counter to watch, and for a deploy when its wave comes.
pub fn thrown_sentence(ball: &Curveball, at_ms: u32, value_ttl_ms: u32, restarted: bool) -> String {
    let wave = if ball.fault == FaultKind::TtlSync {
        format!(
            " The deploy set every key holding a value to expire at {} ms.",
            u64::from(at_ms) + u64::from(value_ttl_ms)
        )
    } else {
        String::new()
    };
    // An origin fault takes the calls started from its moment on, not one
    // running.
    let from_now = match (ball.fault, restarted) {
        (FaultKind::Origin | FaultKind::OriginHang, false) => {
            " It takes the origin calls started from now on; one already running ends as it would."
        }
        (FaultKind::Origin | FaultKind::OriginHang, true) => {
            " It takes the origin calls started from then on; one already running ends as it would."
        }
        _ => "",
    };
    // Nothing was left for it after the moment on screen: the run was
    // rebuilt with it at an earlier moment (the page's lab decides).
    let how = if restarted {
        "the run restarted with it there, as nothing was left for it later"
    } else {
        "without a restart"
    };
    format!(
        "{} at {at_ms} ms, {how}; the link now carries it.{wave}{from_now} Watch the {} counter.",
        ball.label,
        stampede::metrics::label(ball.metric)
    )
}

/// The curveball of a `data-curveball` name.
pub fn curveball(kind: &str) -> Option<&'static Curveball> {
    CURVEBALLS.iter().find(|c| c.kind == kind)
}

/// The moments (ms, in time order) where a fault of `ball` may find its
/// work, from a run's markers: an origin fault at a recompute's start, the
/// holder's death just after a claim is won or as its recompute starts, a Redis outage where traffic
/// meets Redis, a deploy's synced TTLs after a value is written.
pub fn aims(ball: &Curveball, markers: &[stampede::sim::Marker]) -> Vec<u32> {
    use stampede::sim::Milestone as M;
    let mut out: Vec<u32> = markers
        .iter()
        .filter_map(|m| {
            let at = u32::try_from(m.t / 1000).unwrap_or(u32::MAX);
            match (ball.fault, m.what) {
                (
                    FaultKind::Origin | FaultKind::OriginHang | FaultKind::OriginSlow,
                    M::RecomputeStarts,
                ) => Some(at.max(1)),
                // The winner holds the claim once the reply is back, and
                // holds it through its recompute.
                (FaultKind::Holder, M::ClaimWon) => Some(at + 1),
                (FaultKind::Holder, M::RecomputeStarts) => Some(at.max(1)),
                (FaultKind::Redis, M::KeyExpires | M::ClaimWon | M::RecomputeStarts) => {
                    Some(at.max(1))
                }
                (FaultKind::TtlSync, M::ValueWritten) => Some(at + 1),
                _ => None,
            }
        })
        .collect();
    out.sort_unstable();
    out.dedup();
    out
}

/// Why `ball` cannot bite a run of `s` whose work ends at `end_ms`, at any
/// moment.
pub fn nothing_to_hit(ball: &Curveball, s: &stampede::scenario::Scenario, end_ms: u32) -> String {
    let what = match ball.fault {
        FaultKind::Origin | FaultKind::OriginHang | FaultKind::OriginSlow => {
            "no recompute calls the origin where it could catch one"
        }
        FaultKind::Holder => "no claim is held where its holder could die",
        FaultKind::Redis => "no traffic meets Redis where it could be down",
        FaultKind::TtlSync => {
            "a deploy's synced TTLs bite the traffic one TTL later, and none comes"
        }
    };
    let workload = match s.workload {
        stampede::scenario::Workload::Burst => "one burst",
        stampede::scenario::Workload::Steady => "steady traffic",
        stampede::scenario::Workload::Cold => "a cold start",
    };
    format!(
        "{}: this run ({workload}, its work over by {end_ms} ms) has nothing for it: {what}, from now or from any earlier moment; the {} counter would not move",
        ball.label,
        stampede::metrics::label(ball.metric)
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::drill::SEEDS;
    use stampede::scenario::Scenario;
    use stampede::sim::Fleet;

    use crate::claims::Run;
    use stampede::Report;
    use std::collections::{BTreeSet, HashMap};
    use std::sync::{Mutex, OnceLock};

    /// The scenario of a kit's link, which parses without a notice.
    fn scenario(link: &str) -> Scenario {
        let (s, _, notices) = Scenario::from_query(link);
        assert!(notices.is_empty(), "{link}: {notices:?}");
        s
    }

    /// The run of `link` on `seed`, run once for all the tests (many
    /// points, flags and follow-ups show the same runs).
    fn report(link: &str, seed: u64) -> Report {
        static RUNS: OnceLock<Mutex<HashMap<(String, u64), Report>>> = OnceLock::new();
        let runs = RUNS.get_or_init(Default::default);
        let key = (link.to_string(), seed);
        if let Some(r) = runs.lock().unwrap().get(&key) {
            return r.clone();
        }
        let r = Fleet::new(&scenario(link), seed).run();
        runs.lock().unwrap().insert(key, r.clone());
        r
    }

    /// The reference's questions (1 to 15), without the card's.
    fn reference() -> impl Iterator<Item = &'static Question> {
        questions().filter(|q| q.number != 0)
    }

    /// Every red flag of every question, with its question's number.
    fn every_flag() -> Vec<(u32, &'static RedFlag)> {
        questions()
            .flat_map(|q| q.red_flags.iter().map(move |f| (q.number, f)))
            .collect()
    }

    /// The kit's Show button names a row's bound: every row of the kit
    /// (a point a run shows, a red flag, a follow-up) claims one first.
    #[test]
    fn every_kit_row_claims_a_bound_first() {
        for q in questions() {
            let points = q.levels.iter().flat_map(|l| l.names.iter());
            let rows = points
                .filter_map(Point::shown)
                .chain(q.red_flags.iter().map(|f| f.row))
                .chain(q.follow_ups.iter().map(|f| f.row));
            for row in rows {
                assert!(
                    row.claims.first().and_then(Claim::as_bound).is_some(),
                    "question {}: {:?} claims no bound first",
                    q.number,
                    row.words
                );
            }
        }
    }

    #[test]
    fn a_red_flags_run_is_damage_the_fixed_run_is_not() {
        // Each red flag is refuted by its run, and the run it is taken from
        // without the mistake (its `fixed`) does not show the damage on any
        // seed (the flag is the cause).
        for (n, flag) in every_flag() {
            assert_ne!(
                scenario(flag.fixed),
                scenario(flag.row.link),
                "question {n}: {}: the fix is the mistake's own run",
                flag.says
            );
            for seed in SEEDS {
                let g = flag.row.bound().unwrap().check(&report(flag.fixed, seed));
                assert!(
                    !g.passed,
                    "question {n}: {}: {} also shows {} = {} (seed {seed})",
                    flag.says, flag.fixed, g.name, g.value
                );
            }
        }
    }

    #[test]
    fn every_question_has_three_levels_in_order_and_a_few_of_each() {
        for q in questions() {
            let names: Vec<_> = q.levels.iter().map(|l| l.name).collect();
            assert_eq!(
                names,
                ["basics", "solid", "deeper"],
                "question {}",
                q.number
            );
            for l in &q.levels {
                assert!(!l.gist.is_empty(), "question {} {}", q.number, l.name);
                let (least, most) = if q.number == 0 { (3, 5) } else { (2, 4) };
                assert!(
                    (least..=most).contains(&l.names.len()),
                    "question {} {}: {} points",
                    q.number,
                    l.name,
                    l.names.len()
                );
            }
            if q.number != 0 {
                assert!(
                    (1..=3).contains(&q.red_flags.len()),
                    "question {}: {} red flags",
                    q.number,
                    q.red_flags.len()
                );
            }
        }
        assert_eq!(CARD.levels, LEVELS);
    }

    #[test]
    fn follow_ups_are_distinct_questions_that_exist() {
        let page = include_str!("../../../index.html");
        // Each of the card's follow-ups' questions, as the page words it,
        // is about what the follow-up listens for.
        let about = [
            "outside",
            "throws",
            "deadline",
            "TTL be",
            "Redis is down",
            "enough",
        ];
        for (f, word) in FOLLOW_UPS.iter().zip(about) {
            let summary =
                summary(page, f.question).unwrap_or_else(|| panic!("no question {}", f.question));
            assert!(summary.contains(word), "question {}: {summary}", f.question);
        }
        // Every question's follow-ups: other questions of the page, each
        // once; the reference's ask one to three.
        for q in questions() {
            let mut seen = BTreeSet::new();
            for f in q.follow_ups {
                assert!(
                    seen.insert(f.question),
                    "question {}: follow-up {} twice",
                    q.number,
                    f.question
                );
                assert_ne!(f.question, q.number, "question {} follows itself", q.number);
                assert!(
                    question(f.question).is_some_and(|x| x.number != 0),
                    "question {}: follow-up {} is no reference question",
                    q.number,
                    f.question
                );
                assert!(summary(page, f.question).is_some(), "{}", f.question);
                assert!(!f.row.words.is_empty());
            }
            if q.number != 0 {
                assert!(
                    (1..=3).contains(&q.follow_ups.len()),
                    "question {}: {} follow-ups",
                    q.number,
                    q.follow_ups.len()
                );
            }
        }
    }

    /// Question `n`'s summary on the page, as the reader sees it: tags
    /// dropped, the entities the page writes decoded.
    fn summary(page: &str, n: u32) -> Option<String> {
        let open = format!("<details data-question=\"{n}\">");
        let at = page.find(&open)? + open.len();
        let rest = &page[at..];
        let from = rest.find("<summary>")? + "<summary>".len();
        let to = rest.find("</summary>")?;
        let mut text = String::new();
        let mut in_tag = false;
        for c in rest[from..to].chars() {
            match c {
                '<' => in_tag = true,
                '>' if in_tag => in_tag = false,
                c if !in_tag => text.push(c),
                _ => {}
            }
        }
        Some(
            text.replace("&lt;", "<")
                .replace("&gt;", ">")
                .replace("&quot;", "\"")
                .replace("&amp;", "&")
                .trim()
                .to_string(),
        )
    }

    #[test]
    fn the_reference_questions_are_the_pages_in_order_word_for_word() {
        let page = include_str!("../../../index.html");
        let numbers: Vec<u32> = reference().map(|q| q.number).collect();
        assert_eq!(numbers, (1..=15).collect::<Vec<_>>());
        assert_eq!(questions().next().map(|q| q.number), Some(0));
        for q in reference() {
            let said =
                summary(page, q.number).unwrap_or_else(|| panic!("no question {}", q.number));
            assert_eq!(q.asks, said, "question {}", q.number);
        }
        // The page has no question the kit lacks.
        assert!(summary(page, 16).is_none());
        // The stripping works on the page's markup: a tag, an entity.
        assert!(question(6).unwrap().asks.starts_with("What is Forget for"));
    }

    #[test]
    fn every_throw_is_a_curveball_once_with_an_ask_of_its_own() {
        for q in questions() {
            let mut seen = BTreeSet::new();
            for t in q.throws {
                assert!(
                    curveball(t.kind).is_some(),
                    "question {}: no curveball {}",
                    q.number,
                    t.kind
                );
                assert!(
                    seen.insert(t.kind),
                    "question {}: {} twice",
                    q.number,
                    t.kind
                );
                assert!(t.ask.ends_with('?'), "question {}: {}", q.number, t.ask);
            }
            if q.number != 0 {
                assert!(
                    (1..=3).contains(&q.throws.len()),
                    "question {}: {} throws",
                    q.number,
                    q.throws.len()
                );
                // The question's own angle, not the curveball's generic ask.
                for t in q.throws {
                    assert_ne!(
                        Some(t.ask),
                        curveball(t.kind).map(|c| c.ask),
                        "question {}",
                        q.number
                    );
                }
            }
        }
    }

    /// A number a reference question's point or red flag states is one
    /// its run shows exactly, on every seed; words with no exact run state
    /// none (the reasons and the follow-ups' words neither).
    #[test]
    fn a_number_in_a_reference_statement_is_its_runs() {
        let proves = |text: &str, shown: Option<Row>| -> Result<(), String> {
            for n in crate::lesson::numbers_in(text) {
                let n = n.replace(',', "");
                match shown {
                    Some(s)
                        if s.claims.iter().filter_map(Claim::as_bound).any(|b| {
                            b.cmp == crate::drill::Cmp::Exactly
                                && n == stampede::decimal::format(b.limit)
                        }) => {}
                    _ => return Err(format!("{n} in \"{text}\" is no exact count of its run")),
                }
            }
            Ok(())
        };
        let mut wrong = Vec::new();
        for q in reference() {
            for l in &q.levels {
                wrong.extend(proves(l.gist, None).err());
                for p in l.names {
                    wrong.extend(proves(p.text(), p.shown()).err());
                }
            }
            for f in q.red_flags {
                wrong.extend(proves(f.says, None).err());
                wrong.extend(proves(f.row.words, Some(f.row)).err());
            }
            for f in q.follow_ups {
                wrong.extend(proves(f.row.words, None).err());
            }
            for t in q.throws {
                wrong.extend(proves(t.ask, None).err());
            }
        }
        assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    }

    /// Issue 26 §2: no teaching statement contradicts another. A red flag's
    /// run is a mistake, so no question's point shows it (as good practice),
    /// and a follow-up shows it only as the mistake, by a red flag's own
    /// criterion on it. A flag's fix is no question's red flag, and on its
    /// run, every seed, the flag's criterion fails and its reason's claims
    /// do not all hold: the fix refutes the flag by claim as well as by count.
    #[test]
    fn no_teaching_statement_contradicts_another() {
        let flags = every_flag();
        let mistakes: Vec<(u32, &RedFlag, Scenario)> = flags
            .iter()
            .map(|&(n, f)| (n, f, scenario(f.row.link)))
            .collect();
        let mut wrong = Vec::new();
        for q in questions() {
            for l in &q.levels {
                for p in l.names {
                    let Some(shown) = p.shown() else { continue };
                    let s = scenario(shown.link);
                    for (n, f, _) in mistakes.iter().filter(|m| m.2 == s) {
                        wrong.push(format!(
                            "question {} {} \"{}\" shows {}, the run of question {n}'s red flag \"{}\"",
                            q.number, l.name, p.text(), shown.link, f.says
                        ));
                    }
                }
            }
            for fu in q.follow_ups {
                let s = scenario(fu.row.link);
                let on: Vec<_> = mistakes.iter().filter(|m| m.2 == s).collect();
                if !on.is_empty() && !on.iter().any(|m| m.1.row.bound() == fu.row.bound()) {
                    wrong.push(format!(
                        "question {} follow-up {} shows {} by {}, not as its red flag \"{}\" does",
                        q.number,
                        fu.question,
                        fu.row.link,
                        fu.row.bound().unwrap().name(),
                        on[0].1.says
                    ));
                }
            }
        }
        for &(n, f) in &flags {
            let fixed = scenario(f.fixed);
            for (m, g, _) in mistakes.iter().filter(|m| m.2 == fixed) {
                wrong.push(format!(
                    "question {n} \"{}\": its fix {} is question {m}'s red flag \"{}\"",
                    f.says, f.fixed, g.says
                ));
            }
            for seed in SEEDS {
                let r = report(f.fixed, seed);
                if f.row.bound().unwrap().holds_for(&r) {
                    wrong.push(format!(
                        "question {n} \"{}\": its fix {} shows {} too (seed {seed})",
                        f.says,
                        f.fixed,
                        f.row.bound().unwrap().name()
                    ));
                }
                let reason: Vec<&Claim> = f.reasons().collect();
                if reason.iter().all(|c| c.holds(&Run::new(&fixed, &r, true))) {
                    wrong.push(format!(
                        "question {n} \"{}\": on its fix {} every claim {reason:?} holds too (seed {seed})",
                        f.says, f.fixed
                    ));
                }
            }
        }
        wrong.dedup();
        assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    }

    #[test]
    fn every_curveball_bites_a_steady_run_mid_run_and_its_link_replays_it() {
        // Steady traffic with jittered TTLs and both layers: keys keep
        // expiring, so every fault thrown 5 s in finds work to hit.
        let (card, _, n) = Scenario::from_query("preset=jitter&c=inner");
        assert!(n.is_empty(), "{n:?}");
        let quiet = Fleet::new(&card, 1).run();
        for ball in &CURVEBALLS {
            assert_eq!(curveball(ball.kind), Some(ball));
            let mut fleet = Fleet::new(&card, 1);
            assert!(fleet.advance_to(5_000_000, usize::MAX));
            throw(&mut fleet, ball, 5_001).unwrap_or_else(|e| panic!("{}: {e}", ball.kind));
            let replay = fleet.scenario().clone();
            if let Some(outage) = ball.outage {
                assert_eq!(
                    replay.redis_outage, outage,
                    "{}: the link's outage",
                    ball.kind
                );
            }
            let hit = fleet.run();
            let hash = fleet.log_hash();
            let before = stampede::metrics::value(&quiet, ball.metric).unwrap();
            let after = stampede::metrics::value(&hit, ball.metric).unwrap();
            assert!(
                after > before,
                "{}: {} {before} -> {after}",
                ball.kind,
                ball.metric
            );
            let mut linked = Fleet::new(&replay, 1);
            assert_eq!(
                linked.run(),
                hit,
                "{}: the link replays another run",
                ball.kind
            );
            assert_eq!(linked.log_hash(), hash, "{}: another event log", ball.kind);
        }
    }

    /// Recomputes started in `[from, to)` ms of a run of `s` on `seed`,
    /// with `ttl-sync` thrown at `at` ms when given.
    fn recomputes_between(s: &Scenario, seed: u64, at: Option<u32>, from: u32, to: u32) -> u64 {
        let mut fleet = Fleet::new(s, seed);
        if let Some(at) = at {
            assert!(fleet.advance_to(u64::from(at) * 1000 - 1, usize::MAX));
            throw(&mut fleet, curveball("ttl-sync").unwrap(), at).unwrap();
        }
        assert!(fleet.advance_to(u64::from(from) * 1000, usize::MAX));
        let before = fleet.report().recomputes;
        assert!(fleet.advance_to(u64::from(to) * 1000, usize::MAX));
        fleet.report().recomputes - before
    }

    #[test]
    fn a_ttl_sync_makes_every_key_expire_at_once_and_jitter_does_not_save_it() {
        // Steady traffic over 200 keys, TTL 5 s, both layers. A deploy
        // re-warms at 6 s: one TTL later, at 11 s, the keys expire together.
        // The 300 ms after that moment see several times the recomputes
        // the same run without the deploy sees there, with or without
        // jitter (the warm-up wrote no jitter; it is applied per write).
        let card = |j: &str| {
            let (s, _, n) = Scenario::from_query(&format!("preset=jitter&c=inner&j={j}"));
            assert!(n.is_empty(), "{n:?}");
            s
        };
        let (jittered, plain) = (card("0.3"), card("0"));
        for seed in 1..=12 {
            let quiet = recomputes_between(&jittered, seed, None, 11_000, 11_300);
            let synced = recomputes_between(&jittered, seed, Some(6_000), 11_000, 11_300);
            let unjittered = recomputes_between(&plain, seed, Some(6_000), 11_000, 11_300);
            assert!(
                synced >= 3 * quiet.max(1),
                "seed {seed}: {quiet} -> {synced} recomputes at the expiry"
            );
            // Jitter did not spread it: the wave is as large as without.
            assert!(
                2 * synced >= unjittered,
                "seed {seed}: {synced} with jitter, {unjittered} without"
            );
        }
    }

    #[test]
    fn the_sentence_after_a_throw_names_its_moment_its_counter_and_a_deploy_s_true_wave() {
        let (card, _, n) = Scenario::from_query("preset=jitter&c=inner");
        assert!(n.is_empty(), "{n:?}");
        for ball in &CURVEBALLS {
            let said = thrown_sentence(ball, 6_000, card.value_ttl_ms, false);
            assert!(said.starts_with(ball.label), "{said}");
            assert!(said.contains(" at 6000 ms, without a restart"), "{said}");
            // Restarted with it earlier, it says so, and not "without".
            let again = thrown_sentence(ball, 6_000, card.value_ttl_ms, true);
            assert!(
                again.contains(" at 6000 ms, the run restarted with it there"),
                "{again}"
            );
            assert!(!again.contains("without a restart"), "{again}");
            assert!(!again.contains("from now on"), "{again}");
            // The counter in words, as the page labels it, not its field name.
            let watch = format!(
                "Watch the {} counter.",
                stampede::metrics::label(ball.metric)
            );
            assert!(said.ends_with(&watch), "{said}");
            assert!(!said.contains('_'), "{said}");
            assert_eq!(said.contains("expire at"), ball.fault == FaultKind::TtlSync);
            assert_eq!(
                said.contains("started from now on"),
                matches!(ball.fault, FaultKind::Origin | FaultKind::OriginHang)
            );
        }
        // A holder cannot die where nobody claims: refused, with the reason.
        let (cheap, _, _) = Scenario::from_query("preset=cheap");
        assert_eq!(cheap.claim, stampede::scenario::ClaimMode::Off);
        let mut fleet = Fleet::new(&cheap, 1);
        let why = throw(&mut fleet, curveball("holder").unwrap(), 10).unwrap_err();
        assert!(why.contains("no Redis claim"), "{why}");
        assert!(fleet.scenario().faults.is_empty());
        // The deploy's moment the sentence names is when the wave comes: the
        // 300 ms from it hold several times the recomputes of the same run
        // without the deploy, and the 300 ms before it do not.
        let sync = curveball("ttl-sync").unwrap();
        let said = thrown_sentence(sync, 6_000, card.value_ttl_ms, false);
        let wave: u32 = said
            .split("expire at ")
            .nth(1)
            .and_then(|r| r.split(' ').next())
            .and_then(|n| n.parse().ok())
            .unwrap_or_else(|| panic!("no moment in {said}"));
        for seed in 1..=6 {
            let quiet = recomputes_between(&card, seed, None, wave, wave + 300);
            let synced = recomputes_between(&card, seed, Some(6_000), wave, wave + 300);
            assert!(
                synced >= 3 * quiet.max(1),
                "seed {seed}: {quiet} -> {synced}"
            );
            let before = recomputes_between(&card, seed, Some(6_000), wave - 300, wave);
            assert!(
                synced >= 3 * before.max(1),
                "seed {seed}: {before} before, {synced} at"
            );
        }
    }

    #[test]
    fn a_ttl_sync_is_a_moment_in_the_link_and_replays() {
        let (s, _, n) = Scenario::from_query("preset=jitter&f=ttl-sync@6000");
        assert!(n.is_empty(), "{n:?}");
        assert_eq!(
            s.faults,
            [Fault {
                kind: FaultKind::TtlSync,
                start_ms: 6000,
                duration_ms: None
            }]
        );
        assert!(
            s.to_query(1).contains("f=ttl-sync%406000")
                || s.to_query(1).contains("f=ttl-sync@6000")
        );
        // A duration is dropped with a notice that says why.
        let (s, _, n) = Scenario::from_query("preset=jitter&f=ttl-sync@6000+100");
        assert_eq!(s.faults[0].duration_ms, None);
        assert!(
            n.iter().any(|x| x.knob == "faults" && x.message.contains("ttl-sync fault has no duration")),
            "{n:?}"
        );
        // The jitter lesson does not claim the TTLs stayed spread.
        let (s, _, _) = Scenario::from_query("preset=jitter&f=ttl-sync@6000");
        let r = Fleet::new(&s, 1).run();
        let l = crate::lesson::lesson(&s, Some("jitter"), &r, true, None);
        assert!(
            l.sentence
                .contains("until a deploy re-warmed every key at 6000 ms with one TTL"),
            "{}",
            l.sentence
        );
        // Thrown at a moment, the fleet's scenario is the link of the run.
        let (card, _, _) = Scenario::from_query("preset=jitter");
        let mut fleet = Fleet::new(&card, 7);
        assert!(fleet.advance_to(4_000_000, usize::MAX));
        throw(&mut fleet, curveball("ttl-sync").unwrap(), 4_001).unwrap();
        let link = fleet.scenario().to_query(7);
        let hit = fleet.run();
        let (back, seed, n) = Scenario::from_query(&link);
        assert!(n.is_empty(), "{link}: {n:?}");
        let mut again = Fleet::new(&back, seed);
        assert_eq!(again.run(), hit, "{link}");
        assert_eq!(again.log_hash(), fleet.log_hash(), "{link}");
    }

    #[test]
    fn a_redis_outage_cannot_change_kind_once_redis_was_down() {
        let (s, _, _) = Scenario::from_query("preset=burst&f=redis@5+10");
        let mut fleet = Fleet::new(&s, 1);
        assert!(fleet.advance_to(20_000, usize::MAX));
        let hang = curveball("redis-hang").unwrap();
        assert!(throw(&mut fleet, hang, 30).is_err());
        assert!(throw(&mut fleet, curveball("redis").unwrap(), 30).is_ok());
        // And never in the past.
        assert!(throw(&mut fleet, curveball("origin").unwrap(), 10).is_err());
    }

    /// A curveball thrown into a preset's run: its lesson is the fault's
    /// (the base's would say what the run no longer shows: "the claim took
    /// the fleet to 1" with 7,999 callers timed out), unless a pitfall
    /// comes first or the base's lesson speaks of that fault itself.
    #[test]
    fn a_thrown_fault_is_the_lesson_unless_another_explains_more() {
        use crate::presets::PRESETS;
        use stampede::scenario::{preset, preset_names};
        let mut taken = 0;
        for name in preset_names() {
            let card = preset(name).unwrap();
            let base = PRESETS.iter().find(|p| p.name == name).unwrap();
            for ball in &CURVEBALLS {
                let mut s = card.clone();
                s.instances = s.instances.min(4);
                s.threads = s.threads.min(20);
                s.faults.push(fault(ball, 50));
                if let Some(o) = ball.outage {
                    s.redis_outage = o;
                }
                let r = stampede::sim::Fleet::new(&s, 1).run();
                let l = crate::lesson::lesson(&s, Some(base.name), &r, true, None);
                let pitfall = crate::lesson::a_pitfall_fits(&s);
                let spoken = crate::lesson::SPEAKS_OF.contains(&(name, ball.fault));
                if pitfall || spoken {
                    assert_ne!(l.name, "fault", "{name} + {}", ball.kind);
                    continue;
                }
                taken += 1;
                // A fault that did nothing says so, then the run's lesson.
                if r.fault_bites == 0 {
                    assert!(
                        l.sentence.starts_with("The fault did nothing ("),
                        "{name} + {}: {}",
                        ball.kind,
                        l.sentence
                    );
                    assert_ne!(l.name, "fault", "{name} + {}", ball.kind);
                } else if l.name != "fault" {
                    // It acted, but another story explains more of the
                    // run's requests (by its ledger): that one is told.
                    let stories = crate::lesson::stories(&s, Some(base.name), &r);
                    let n = |x: &str| stories.iter().find(|(y, _)| *y == x).map(|(_, n)| *n);
                    assert!(
                        n(l.name) > n("fault"),
                        "{name} + {}: {} over the fault in {stories:?}",
                        ball.kind,
                        l.name
                    );
                    continue;
                }
                let words = crate::lesson::fault_words(&s, s.faults.last().unwrap());
                assert!(
                    l.sentence.to_lowercase().contains(&words.to_lowercase()),
                    "{name} + {}: {}",
                    ball.kind,
                    l.sentence
                );
                // Every number in it is the fault's or the run's own.
                let all: Vec<String> = s
                    .faults
                    .iter()
                    .map(|f| crate::lesson::fault_words(&s, f))
                    .collect();
                let mut known = crate::lesson::numbers_in(&all.join(" "));
                for (_, v) in r.fields() {
                    known.extend(crate::lesson::numbers_in(&v));
                }
                known.extend(crate::lesson::ledger_numbers(&r));
                known.extend(crate::lesson::numbers_in(&crate::lesson::shown(
                    Metric::P99Ms,
                    r.p99_ms,
                )));
                for k in stampede::scenario::knob_names() {
                    known.extend(crate::lesson::numbers_in(&s.get(k).unwrap_or_default()));
                }
                known.push(crate::lesson::count((s.jitter * 100.0).round() as u64));
                for n in crate::lesson::numbers_in(&l.sentence) {
                    assert!(
                        known.contains(&n),
                        "{name} + {}: {n} in {}",
                        ball.kind,
                        l.sentence
                    );
                }
            }
        }
        assert!(taken > 100, "{taken}");
    }
}
