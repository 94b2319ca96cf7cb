//! The guided tour as data: one row per step, in three levels. A step names
//! its scenario (a share link's query), what to notice (one to three
//! sentences), the counter it points at, and the claims its words make of
//! the run ([`crate::claims::Claim`], the lessons' own where one fits),
//! the one on that counter first: [`said`] makes the words a clause that
//! carries them, said only where they hold.
//!
//! A step's text holds no number of its own. `{}` is the counter it points
//! at; `{name}` is another counter of the run or a knob of its scenario;
//! `{then.name}` a counter of the step's contrast run (the same traffic
//! with one thing undone). [`render`] fills them from the run on screen,
//! and shows a counter whose event has not happened yet as pending, never
//! as 0. The tests below run every step and check its words.
//!
//! Each step also carries a [`Prediction`]: a question asked before its
//! run plays, whose right option is the run's own number ([`answers`]) and
//! whose wrong ones are the card's plausible mistakes, each with its why
//! not, worked out from the step's own run where they can be
//! ([`Choice::Worked`]), so that no option stands out as the one number of
//! its kind (tests/tour.rs checks it as the page asks).

use crate::claims::{
    Claim, Clause, Row, Run, Say, FEWER_MISSES_THAN_THEN, LOWER_PEAK_THAN_THEN,
    MORE_ATTEMPTS_THAN_THEN,
};
use crate::lesson::{
    CLAIM_PER_INSTANCE, CLAIM_SHORT, CORRUPTED, ERRORS, EVERY_REQUEST_TIMED_OUT, EVERY_THREAD,
    FAILURES_LEFT, NONE_PINNED, NOTHING_REMEMBERED, NO_MISSES, NO_TIMEOUTS, ONE_RECOMPUTE,
    OVERLAPS, OVERWRITES, PER_INSTANCE, REFUSED_TAKEN, REMEMBERED, SHED, STALE, TIMEOUTS,
    UNCLAIMED,
};
use stampede::scenario::Scenario;
use stampede::{Metric, Report};

/// The tour's three levels, shortest first: the course's rungs.
pub use crate::level::Level;

// ---- what the tour's words claim, beside the lessons' own claims ------------

const CLAIM_PER_REQUEST: Claim = Claim::new("a claim attempt per request", |x| {
    x.r.claim_attempts == x.r.requests
});
/// "The others wait for its answer": every request but each instance's
/// leader was answered by its instance's flight.
const LEADERS_ANSWER_THE_REST: Claim = Claim::new(
    "every request but one per instance was answered by its instance's flight",
    |x| x.r.shared + u64::from(x.s.instances) == x.r.requests,
);
/// "The other leaders wait for its answer": every leader but the one that
/// computed read the value it wrote.
const LOSERS_READ_THE_VALUE: Claim = Claim::new(
    "every other instance's leader read the value the winner wrote",
    |x| x.r.computed == 1 && x.r.hits + 1 == u64::from(x.s.instances),
);
/// Losers that answer stale end their flights at once: later arrivals
/// claim again, so attempts outnumber the offices, and one still wins.
const CLAIMS_AGAIN: Claim = Claim::new("more claim attempts than offices, one won", |x| {
    x.r.claim_attempts > u64::from(x.s.instances) && x.r.claim_wins == 1
});
const EVERY_REQUEST_READ_REDIS: Claim =
    Claim::new("a Redis round trip per request at least", |x| {
        x.r.redis_round_trips >= x.r.requests
    });
const NO_OVERLAPS: Claim = Claim::new("no recompute overlapped another", |x| {
    x.r.overlapping_recomputes == 0
});
const REFUSED: Claim = Claim::new("a release was refused", |x| x.r.releases_refused > 0);
const NONE_REFUSED: Claim = Claim::new("no release was refused", |x| x.r.releases_refused == 0);
const REFILLED: Claim = Claim::new("a value was written to the cache", |x| {
    x.r.values_written > 0
});
const EVERY_REQUEST_STALE: Claim = Claim::new("every request was served stale", |x| {
    x.r.stale_served == x.r.requests
});
const RAN_AT_THE_ORIGIN: Claim = Claim::new("a recompute ran at the origin", |x| {
    x.r.origin_peak_concurrency > 0
});
const EARLY: Claim = Claim::new("a reader refreshed early", |x| x.r.early_refreshes > 0);
const NO_OVERWRITES: Claim = Claim::new("no older value landed over a newer", |x| {
    x.r.stale_overwrites == 0
});

#[derive(Clone, Copy, Debug)]
pub struct Step {
    pub level: Level,
    pub title: &'static str,
    /// The scenario, as a share link's query (seed 1 unless it says); the
    /// words, what to notice: `{}` shows `metric`, `{name}` another counter
    /// or a knob, `{then.name}` a counter of `contrast`'s run; and what the
    /// words claim of the run at its reveal (its pause, or its end): the
    /// claim on `metric` first (unless it is a time, of whose size the
    /// words claim nothing), then any other the words make. [`said`] makes
    /// the words a clause that carries them; the tests check them on each
    /// step's own run.
    pub row: Row,
    /// The counter the step points at (its `data-metric`).
    pub metric: Metric,
    /// Where the lesson is visible mid-run (ms of virtual time): the step
    /// plays to there and pauses, instead of ending on the quiet last frame.
    pub pause_ms: Option<u32>,
    /// The same traffic with the lesson's knob undone, as a share link's
    /// query: the baseline the text quotes with `{then.name}`.
    pub contrast: Option<&'static str>,
    /// The bet placed before the run plays: a question on `metric`, whose
    /// right option is the run's own number.
    pub predict: Option<Prediction>,
    /// What the words point at doing ("turn on fenced writes"), as a
    /// button that does it.
    pub action: Option<Action>,
    /// The playback speed, where the scenario's default would reveal the
    /// step's number too late ([`speed`]).
    pub speed: Option<f64>,
}

/// A step's action: a button that does what its words point at.
#[derive(Clone, Copy, Debug)]
pub enum Action {
    /// The sandbox on the row's link (a share link's query): the row's
    /// words are the button's label, its claims what the link's run shows
    /// at its end.
    Sandbox(Row),
    /// The A/B view on a named comparison.
    Compare {
        label: &'static str,
        name: &'static str,
    },
}

impl Action {
    /// The button's label.
    pub fn label(&self) -> &'static str {
        match self {
            Action::Sandbox(row) => row.words,
            Action::Compare { label, .. } => label,
        }
    }
}

/// A question asked before a step's run plays, its number hidden: "place
/// your bets". Exactly one option is right, and that one is not written
/// here: it is the step's own number, read from its run ([`answers`]).
#[derive(Clone, Copy, Debug)]
pub struct Prediction {
    /// The question; `{name}` is a knob of the step's scenario (never a
    /// counter, which would give the answer away).
    pub question: &'static str,
    /// Three or four options, in the order shown.
    pub options: &'static [Choice],
}

/// One option of a [`Prediction`].
#[derive(Clone, Copy, Debug)]
pub enum Choice {
    /// The right answer: the step's `metric` as its run shows it (at the
    /// step's pause, if it has one).
    TheRun,
    /// A wrong number, and why not: the plausible mistake it stands for,
    /// from the card's pitfalls.
    Number(f64, &'static str),
    /// A wrong number worked out from the step's own run and its knobs,
    /// and why not: the plausible mistake it stands for (the count had the
    /// defence not worked, one instance's share, another counter taken for
    /// this one), so that it reads like the run's own numbers do.
    Worked(fn(&Run) -> f64, &'static str),
    /// A wrong answer in words ("depends on the TTL"), and why not.
    Words(&'static str, &'static str),
}

/// An option as shown: its label, whether it is right, and for a wrong
/// one the line that says why not.
#[derive(Clone, Debug, PartialEq)]
pub struct Answer {
    pub label: String,
    pub right: bool,
    pub why_not: Option<&'static str>,
}

/// The prediction's question with its knobs filled from the scenario.
pub fn question(p: &Prediction, s: &Scenario) -> String {
    fill(p.question, s, &Report::default(), None)
}

/// The prediction's options for the step's run `r` (at its pause, or its
/// end), labelled as the step's number is shown (`8000`, `56.319 ms`):
/// [`Choice::TheRun`] reads the run, so the right option is always the
/// number the reveal shows.
pub fn answers(step: &Step, p: &Prediction, r: &Report) -> Vec<Answer> {
    let run = stampede::metrics::value(r, step.metric).unwrap_or(0.0);
    let (s, _, _) = Scenario::from_query(step.row.link);
    let at = Run::new(&s, r, step.pause_ms.is_none());
    p.options
        .iter()
        .map(|c| match *c {
            Choice::TheRun => Answer {
                label: crate::lesson::shown(step.metric, run),
                right: true,
                why_not: None,
            },
            Choice::Number(n, why) => Answer {
                label: crate::lesson::shown(step.metric, n),
                right: false,
                why_not: Some(why),
            },
            Choice::Worked(of, why) => Answer {
                label: crate::lesson::shown(step.metric, of(&at)),
                right: false,
                why_not: Some(why),
            },
            Choice::Words(w, why) => Answer {
                label: w.to_string(),
                right: false,
                why_not: Some(why),
            },
        })
        .collect()
}

use Action::{Compare, Sandbox};
use Choice::{Number, TheRun, Words, Worked};
use Level::{Basics, Deeper, Solid};

pub const STEPS: &[Step] = &[
    // ---- basics: first a fleet small enough to follow by eye (3 x 4),
    // then the same three steps at the interview's 40 x 200.
    Step {
        level: Basics,
        title: "A small fleet first: follow it by eye",
        row: Row {
            link: "preset=naive&i=3&t=4",
            claims: &[EVERY_THREAD],
            words: "A hot key has just expired. Start small: {instances} offices (instances) of {threads} clerks (threads), every clerk missing the key at once. With no protection each clerk walks to the origin itself: {} recomputes of the same value, one per clerk.",
        },
        metric: Metric::Recomputes,
        pause_ms: None,
        contrast: None,
        action: None,
        speed: None,
        predict: Some(Prediction {
            question: "No protection: {instances} offices of {threads} clerks each miss the key at once. How many recomputes?",
            options: &[
                Worked(|x| f64::from(x.s.instances), "That is one per office: singleflight does that, and it is off here."),
                TheRun,
                Worked(|x| 2.0 * x.r.requests as f64, "That counts each clerk's GET at Redis too; only the recomputes reach the origin."),
                Worked(|x| f64::from(x.s.threads), "That is one office's clerks, but every office misses too."),
            ],
        }),
    },
    Step {
        level: Basics,
        title: "Singleflight in the small fleet",
        row: Row {
            link: "preset=singleflight&i=3&t=4",
            claims: &[PER_INSTANCE, LEADERS_ANSWER_THE_REST],
            words: "In each office the clerks now share one question: the first to miss, the leader, asks the origin; the others wait at the door for its answer. An office cannot see the others: {} recomputes, one per office.",
        },
        metric: Metric::Recomputes,
        pause_ms: None,
        contrast: None,
        action: None,
        speed: Some(0.1),
        predict: Some(Prediction {
            question: "Singleflight alone, {instances} offices of {threads} clerks: how many recomputes?",
            options: &[
                Number(1.0, "An office cannot see the others' flights: one for the fleet needs a claim."),
                TheRun,
                Worked(|x| x.r.requests as f64, "That is no protection: singleflight collapses the clerks inside each office."),
                Words("one per clerk that misses", "Singleflight shares one flight per key inside each office."),
            ],
        }),
    },
    Step {
        level: Basics,
        title: "The claim at Redis, in the small fleet",
        row: Row {
            link: "preset=burst&i=3&t=4",
            claims: &[ONE_RECOMPUTE, CLAIM_PER_INSTANCE, LOSERS_READ_THE_VALUE, LEADERS_ANSWER_THE_REST],
            words: "Each office's leader now also tries to take the claim at Redis (SET NX with a TTL). One office wins and asks the origin; the other leaders wait for its answer, their clerks for their leader: {} recompute for the whole fleet.",
        },
        metric: Metric::Recomputes,
        pause_ms: None,
        contrast: None,
        action: None,
        speed: Some(0.1),
        predict: Some(Prediction {
            question: "Singleflight outside, a claim at Redis inside: {instances} offices of {threads} clerks each miss the key at once. How many recomputes?",
            options: &[
                Worked(|x| f64::from(x.s.instances), "That is singleflight alone: the claim lets only one office recompute."),
                Worked(|x| x.r.requests as f64, "That is no protection at all."),
                TheRun,
                Words("depends on the claim's TTL", "The TTL matters only when it runs out mid-recompute; here it outlasts the work."),
            ],
        }),
    },
    Step {
        level: Basics,
        title: "No protection at full size",
        row: Row {
            link: "preset=naive",
            claims: &[EVERY_THREAD],
            words: "Now the interview's fleet: {instances} offices of {threads} clerks, all missing the key at once. The small fleet's rule holds: with no protection every clerk asks the origin, instances × threads, {} recomputes.",
        },
        metric: Metric::Recomputes,
        pause_ms: None,
        contrast: None,
        action: None,
        speed: None,
        predict: Some(Prediction {
            question: "No protection: {instances} offices of {threads} clerks each miss the key at once. How many recomputes?",
            options: &[
                Number(40.0, "That is singleflight: one per instance. Here nothing coalesces."),
                TheRun,
                Number(1.0, "One for the whole fleet needs a claim across the instances."),
                Number(200.0, "That is one instance's threads, but every instance misses too."),
            ],
        }),
    },
    Step {
        level: Basics,
        title: "Singleflight at full size",
        row: Row {
            link: "preset=singleflight",
            claims: &[PER_INSTANCE, LEADERS_ANSWER_THE_REST],
            words: "Singleflight collapses each office's {threads} clerks into its leader's one question, as it did in the small fleet: it costs nothing, but an office cannot see the others, so the fleet makes {} recomputes, one per office.",
        },
        metric: Metric::Recomputes,
        pause_ms: None,
        contrast: None,
        action: None,
        speed: Some(0.23),
        predict: Some(Prediction {
            question: "Singleflight on, no claim: {instances} offices of {threads} clerks each miss the key at once. How many recomputes for the fleet?",
            options: &[
                Number(1.0, "An instance cannot see the others' flights: one for the fleet needs a claim."),
                TheRun,
                Number(8000.0, "That is no protection: singleflight collapses the threads inside each instance."),
                Words("one per thread that misses", "Singleflight shares one flight per key inside each instance."),
            ],
        }),
    },
    Step {
        level: Basics,
        title: "The claim at full size",
        row: Row {
            link: "preset=burst",
            claims: &[ONE_RECOMPUTE, CLAIM_PER_INSTANCE, LOSERS_READ_THE_VALUE, LEADERS_ANSWER_THE_REST],
            words: "Each office's leader tries to take the claim at Redis (SET NX with a TTL), as the small fleet's leaders did. One office of {instances} wins and asks; the others wait for its answer: {} recompute for the whole fleet, whatever its size.",
        },
        metric: Metric::Recomputes,
        pause_ms: None,
        contrast: None,
        action: None,
        speed: Some(0.1),
        predict: Some(Prediction {
            question: "Singleflight outside, a claim at Redis inside: {instances} offices of {threads} clerks each miss the key at once. How many recomputes for the fleet?",
            options: &[
                Number(40.0, "That is singleflight alone: the claim lets only one instance recompute."),
                Number(8000.0, "That is no protection at all."),
                TheRun,
                Words("depends on the claim's TTL", "The TTL matters only when it runs out mid-recompute; here it outlasts the work."),
            ],
        }),
    },
    Step {
        level: Basics,
        title: "The order: singleflight outside, claim inside",
        row: Row {
            link: "preset=claim-outer",
            claims: &[CLAIM_PER_REQUEST, ONE_RECOMPUTE, MORE_ATTEMPTS_THAN_THEN],
            words: "Swap the layers and every clerk tries the claim at Redis before the office has coalesced: still {recomputes} recompute, but {} claim attempts at Redis instead of {then.claim_attempts}, one per office.",
        },
        metric: Metric::ClaimAttempts,
        pause_ms: None,
        contrast: Some("preset=burst"),
        action: None,
        speed: Some(0.1),
        predict: Some(Prediction {
            question: "Swap the layers, the claim outside singleflight: {instances} offices of {threads} clerks each miss the key at once. How many claim attempts reach Redis?",
            options: &[
                Number(40.0, "That is the claim inside: only each instance's leader claims."),
                Number(1.0, "Only one claim wins, but every attempt is a command at Redis."),
                TheRun,
                Words("none: singleflight stops them first", "Singleflight is inside here, so it runs after the claim."),
            ],
        }),
    },
    // ---- a solid answer
    Step {
        level: Solid,
        title: "Two multipliers, two layers",
        row: Row {
            link: "preset=burst",
            claims: &[ONE_RECOMPUTE, CLAIM_PER_INSTANCE, EVERY_REQUEST_READ_REDIS],
            words: "When every thread misses within one recompute, duplicate work is instances times threads. Singleflight removes the threads for free; the claim removes the instances for one claim per office: {claim_attempts} claim attempts and {} recompute. Every thread still GETs the value first: {redis_round_trips} Redis round trips.",
        },
        metric: Metric::Recomputes,
        pause_ms: None,
        contrast: None,
        action: None,
        speed: Some(0.1),
        predict: Some(Prediction {
            question: "{instances} offices of {threads} clerks each miss the key within one recompute: duplicate work is offices times clerks. With both layers, how many recomputes are left?",
            options: &[
                TheRun,
                Number(40.0, "Singleflight alone removes the threads; the claim also removes the instances."),
                Number(8000.0, "That is instances times threads, with no layer at all."),
                Words("depends on the Redis round trip", "The round trip delays the claim but does not let a second instance win it."),
            ],
        }),
    },
    Step {
        level: Solid,
        title: "Singleflight is nearly free",
        row: Row {
            link: "preset=singleflight",
            claims: &[PER_INSTANCE, UNCLAIMED],
            words: "Singleflight is a map from key to the computation in flight, in the process's own memory: no network, no TTL, nothing to release. Its only lock is a mutex in the process around that map: alone it takes no distributed lock ({claim_attempts} claim attempts) and stops at one recompute per office: {}.",
        },
        metric: Metric::Recomputes,
        pause_ms: None,
        contrast: None,
        action: None,
        speed: Some(0.23),
        predict: Some(Prediction {
            question: "Singleflight alone takes no distributed lock, only a mutex in each office's process. {instances} offices of {threads} clerks each miss the key at once: how many recomputes does it leave?",
            options: &[
                Number(1.0, "One for the fleet needs a lock across instances, and singleflight takes only one inside each process."),
                Number(8000.0, "That is no protection: singleflight still coalesces each instance."),
                TheRun,
            ],
        }),
    },
    Step {
        level: Solid,
        title: "The claim's TTL against the slowest recompute",
        row: Row {
            link: "preset=short-ttl",
            claims: &[OVERLAPS, CLAIM_SHORT],
            words: "Here the claim's TTL is {claim_ttl_ms} against a {recompute_ms} recompute, so it runs out mid-work and another office starts the same recompute: {} recomputes overlapped one still running. Size the TTL above the origin timeout plus the write, or renew it while the work runs.",
        },
        metric: Metric::OverlappingRecomputes,
        pause_ms: None,
        contrast: None,
        action: Some(Sandbox(Row { link: "preset=short-ttl&ct=3500", claims: &[NO_OVERLAPS, NONE_REFUSED], words: "Size the TTL above the origin timeout" })),
        speed: Some(19.0),
        predict: Some(Prediction {
            question: "{instances} offices of {threads} clerks for {duration_ms}; the value lives {value_ttl_ms}, the recompute takes {recompute_ms}, the claim's TTL is {claim_ttl_ms}. How many recomputes start while another of the key still runs?",
            options: &[
                Number(0.0, "A claim protects only while it lives, and this one expires mid-work."),
                TheRun,
                Worked(|x| x.r.recomputes as f64, "That counts every recompute; those that started with none of the key running did not overlap."),
                Words("depends on the Redis round trip", "What matters is the TTL against the recompute time, not the round trip."),
            ],
        }),
    },
    Step {
        level: Solid,
        title: "Release with the token you claimed with",
        row: Row {
            link: "preset=short-ttl",
            claims: &[REFUSED, REFUSED_TAKEN],
            words: "A holder releases with a compare-and-delete of its own random token: {} releases were refused. {releases_refused_expired} found the claim already expired; {releases_refused_taken} found another office holding it, and there a plain DEL would have deleted that office's claim, leaving the key free for a third office to claim.",
        },
        metric: Metric::ReleasesRefused,
        pause_ms: None,
        contrast: None,
        action: None,
        speed: Some(19.0),
        predict: Some(Prediction {
            question: "{instances} offices of {threads} clerks for {duration_ms}; the recompute takes {recompute_ms}, the claim's TTL is {claim_ttl_ms}. Holders release with a compare-and-delete of their own token: how many releases are refused?",
            options: &[
                Number(0.0, "A release is refused whenever the claim expired or changed hands first, and here it runs out mid-work."),
                TheRun,
                Worked(|x| x.r.releases_refused_expired as f64, "That counts only the claims that had expired; a release is refused too where another office holds the claim by then."),
                Words("none, but other offices' claims get deleted", "That is a plain DEL; compare-and-delete refuses instead."),
            ],
        }),
    },
    Step {
        level: Solid,
        title: "What the losers do",
        row: Row {
            link: "preset=stale",
            claims: &[STALE, ONE_RECOMPUTE, CLAIMS_AGAIN],
            words: "An office that lost the claim need not wait for the winner: holding a stale copy, it answers at once. {} requests got the stale value while one office refreshed it. A losing office's flight ends with that answer, so its clerks who arrive later start a new flight and try the claim again: {claim_attempts} claim attempts, {claim_wins} won.",
        },
        metric: Metric::StaleServed,
        pause_ms: None,
        contrast: None,
        action: None,
        speed: Some(0.1),
        predict: Some(Prediction {
            question: "{instances} offices of {threads} clerks each miss the key at once, and the offices that lose the claim hold a stale copy. How many requests get the stale value while one office refreshes?",
            options: &[
                Worked(|x| x.r.requests as f64, "The winning office's own threads wait for its recompute; only the losers serve stale."),
                TheRun,
                Worked(|x| x.r.requests.saturating_sub(x.r.recomputes) as f64, "Not only the refreshing request waits: the winning office's other threads share its flight and wait with it."),
                Worked(|x| f64::from(x.s.instances), "Every thread of a losing office gets the stale answer, not one per office."),
            ],
        }),
    },
    Step {
        level: Solid,
        title: "Failures are shared, never remembered",
        row: Row {
            link: "preset=failure",
            claims: &[ERRORS, FAILURES_LEFT, REFILLED],
            words: "The origin fails for its first {origin_outage_ms}. A failed recompute reaches only the callers waiting on it, then leaves the map, so the next request tries again: {} errors, and later recomputes succeed and refill the cache.",
        },
        metric: Metric::Errors,
        pause_ms: None,
        contrast: None,
        action: None,
        speed: Some(33.0),
        predict: Some(Prediction {
            question: "{instances} offices of {threads} clerks keep asking; the origin fails for its first {origin_outage_ms}, a recompute takes {recompute_ms}. Failures are shared, never remembered: how many requests get an error?",
            options: &[
                TheRun,
                Number(0.0, "A failed recompute still reaches every caller waiting on it."),
                Words("every request from then on", "That is a remembered failure; here it leaves the map and the next request retries."),
                Worked(|x| x.r.origin_failures as f64, "That is one per failed origin call; a failed recompute reaches every caller waiting on it, not only the one that asked."),
            ],
        }),
    },
    Step {
        level: Solid,
        title: "When the origin never answers",
        row: Row {
            link: "preset=hang",
            claims: &[EVERY_REQUEST_TIMED_OUT, NONE_PINNED],
            words: "The origin never answers. Each caller gives up at its own {deadline_ms} deadline, {} of them, so no thread stays pinned. The {origin_timeout_ms} origin timeout frees the flight and the claim, but it bounds the wait, not the call: that runs on at the origin, holding a connection.",
        },
        metric: Metric::Timeouts,
        pause_ms: None,
        contrast: None,
        action: None,
        speed: Some(0.4),
        predict: Some(Prediction {
            question: "The origin never answers: {instances} offices of {threads} clerks each miss the key, each waiting {deadline_ms} at most. How many requests time out?",
            options: &[
                Number(0.0, "Nothing answers, so a deadline ends each wait with a timeout, not a value."),
                Number(1.0, "Only the leader calls the origin, but every follower waits on it and reaches its own deadline."),
                TheRun,
                Words("none: they are all still waiting", "That is the no-deadline pitfall; here every wait has its own deadline."),
            ],
        }),
    },
    // ---- going deeper
    Step {
        level: Deeper,
        title: "Pitfall: remembering a failure",
        row: Row {
            link: "preset=failure&pf=remember-failure",
            claims: &[REMEMBERED],
            words: "Leave the failed result in the flight map and every later caller is handed the old error: {} answers came from a remembered failure, long after the origin recovered. Damp retries with a short negative cache on purpose instead.",
        },
        metric: Metric::RememberedFailures,
        pause_ms: None,
        contrast: None,
        action: Some(Sandbox(Row { link: "preset=failure&nt=500", claims: &[NOTHING_REMEMBERED, REFILLED], words: "Cache the failure briefly instead" })),
        speed: Some(33.0),
        predict: Some(Prediction {
            question: "{instances} offices of {threads} clerks keep asking; the origin fails for its first {origin_outage_ms}, and the failed result stays in the flight map. How many answers come from the remembered failure?",
            options: &[
                Number(0.0, "The map hands the old failure to every later caller of the key."),
                TheRun,
                Worked(|x| x.r.errors as f64, "That counts every error; the callers waiting on a failed call got it from the call itself, not from the map."),
                Words("only until the origin recovers", "The map cannot tell that the origin recovered; the failure stays."),
            ],
        }),
    },
    Step {
        level: Deeper,
        title: "Pitfall: waiting without a deadline",
        row: Row {
            link: "preset=hang&pf=no-deadline",
            claims: &[crate::lesson::EVERY_PINNED],
            words: "Without deadlines a hung origin holds every thread that asked for the key: {} requests are still pinned when the run stops.",
        },
        metric: Metric::Pinned,
        pause_ms: None,
        contrast: None,
        action: Some(Sandbox(Row { link: "preset=hang", claims: &[NONE_PINNED], words: "Give every wait a deadline" })),
        speed: Some(28.0),
        predict: Some(Prediction {
            question: "A hung origin and no deadlines: {instances} offices of {threads} clerks each miss the key. How many requests are still pinned when the run stops?",
            options: &[
                Number(0.0, "Without a deadline nothing ends a wait on a call that never returns."),
                Number(1.0, "Followers wait on the leader's flight and are pinned with it."),
                TheRun,
                Words("only those past the origin timeout", "This pitfall removes the origin timeout as well."),
            ],
        }),
    },
    Step {
        level: Deeper,
        title: "Pitfall: a shared mutable result",
        row: Row {
            link: "pf=mutable-result",
            claims: &[CORRUPTED],
            words: "Every waiter receives the same object. If it can be changed and the first waiter changes it, the others see the change: {} requests read a corrupted value. Share an immutable value, or hand out copies.",
        },
        metric: Metric::Corrupted,
        pause_ms: None,
        contrast: None,
        action: None,
        speed: Some(0.1),
        predict: Some(Prediction {
            question: "{instances} offices of {threads} clerks each miss the key; each office's waiters share one mutable value, and the first of them changes it. How many requests read a corrupted value?",
            options: &[
                Number(0.0, "The change is visible to every waiter holding the same object."),
                TheRun,
                Worked(|x| x.r.shared as f64, "That is every waiter; the first of each office reads the value before its own change, and only those after it see the change."),
                Worked(|x| f64::from(x.s.instances), "Not one per instance: every waiter that reads after the change sees it."),
            ],
        }),
    },
    Step {
        level: Deeper,
        title: "Pitfall: a flight key that is not the cache key",
        row: Row {
            link: "pf=key-mismatch",
            claims: &[CLAIM_PER_REQUEST, MORE_ATTEMPTS_THAN_THEN],
            words: "Singleflight coalesces only what has the same key. Build its key differently from the cache's and nothing coalesces in-process: {} claim attempts instead of {then.claim_attempts}, every thread for itself.",
        },
        metric: Metric::ClaimAttempts,
        pause_ms: None,
        contrast: Some("preset=burst"),
        action: None,
        speed: Some(0.1),
        predict: Some(Prediction {
            question: "The flight key is built differently from the cache key: {instances} offices of {threads} clerks each miss the key at once. How many claim attempts reach Redis?",
            options: &[
                Number(40.0, "That needs singleflight to coalesce, and with mismatched keys nothing does."),
                Number(1.0, "One claim wins, but every thread tries."),
                TheRun,
            ],
        }),
    },
    Step {
        level: Deeper,
        title: "When singleflight alone is enough",
        row: Row {
            link: "preset=cheap",
            claims: &[PER_INSTANCE, NO_TIMEOUTS],
            words: "For a {recompute_ms} indexed query, {recomputes} copies, one per office, are no load at all, and the slowest answers take {} (p99). With a claim the losers would wait up to a {poll_ms} poll for the value; the A/B view shows the costs where the claim starts to pay. The case for singleflight alone is simplicity and less Redis load.",
        },
        metric: Metric::P99Ms,
        pause_ms: None,
        contrast: None,
        action: Some(Compare { label: "Open the A/B view on the cost", name: "cost" }),
        speed: Some(0.023),
        predict: Some(Prediction {
            question: "A {recompute_ms} query with singleflight alone, {instances} offices of {threads} clerks each missing it at once: how slow are the slowest answers (p99)?",
            options: &[
                Worked(|x| f64::from(x.s.deadline_ms), "That is the deadline: nobody waits that long for a cheap query."),
                TheRun,
                Worked(|x| x.r.p50_ms, "That is the median answer (p50); the slowest of the copies take longer."),
                Words("a claim's poll longer", "There is no claim here, so nobody polls."),
            ],
        }),
    },
    Step {
        level: Deeper,
        title: "A cold cache: little to coalesce",
        row: Row {
            link: "preset=cold",
            claims: &[SHED],
            words: "After a restart the misses are for many different keys, equally popular here, so there is little to coalesce. Admission control ({admission} recomputes per office) bounds the origin and turns the excess away at once: {} recomputes shed with a degraded answer. With skewed popularity coalescing matters too: do both.",
        },
        metric: Metric::AdmissionShed,
        pause_ms: None,
        contrast: None,
        action: None,
        speed: Some(28.0),
        predict: Some(Prediction {
            question: "After a restart, {instances} offices of {threads} clerks miss {keys} different keys at once, and admission allows {admission} recomputes per office. How many recomputes are shed?",
            options: &[
                Number(0.0, "Admission bounds the origin by turning the excess away, and thousands of misses are excess."),
                Words("none: singleflight coalesces them", "The keys are all different, so there is little to coalesce."),
                TheRun,
                Worked(|x| x.r.misses.saturating_sub(u64::from(x.s.instances) * u64::from(x.s.admission)) as f64, "That sheds every miss past the first slots; slots free as recomputes finish, and a caller waits briefly for one before it is shed."),
            ],
        }),
    },
    Step {
        level: Deeper,
        title: "TTL jitter",
        row: Row {
            link: "preset=jitter",
            claims: &[RAN_AT_THE_ORIGIN, LOWER_PEAK_THAN_THEN],
            words: "Keys written together expire together. Spread each TTL by a random fraction and their expiries spread too: at most {} recomputes ran at the origin at once, against {then.origin_peak_concurrency} with no jitter.",
        },
        metric: Metric::OriginPeakConcurrency,
        pause_ms: None,
        contrast: Some("preset=jitter&j=0"),
        action: None,
        speed: Some(40.0),
        predict: Some(Prediction {
            question: "{instances} offices of {threads} clerks read {keys} keys written together, each living {value_ttl_ms} spread by a random fraction; a recompute takes {recompute_ms}. At most how many recomputes run at the origin at once?",
            options: &[
                Worked(|x| f64::from(x.s.origin_capacity), "The capacity is where the origin starts to slow, not a cap on the calls running at once."),
                TheRun,
                Worked(|x| f64::from(x.s.keys), "That would be every key at once; jitter spreads their expiries."),
                Words("the same as with no jitter", "Spread expiries mean spread recomputes."),
            ],
        }),
    },
    Step {
        level: Deeper,
        title: "Early refresh (XFetch)",
        row: Row {
            link: "preset=xfetch",
            claims: &[NO_MISSES, EARLY, OVERLAPS, FEWER_MISSES_THAN_THEN],
            words: "A reader of a value near expiry may refresh it early, the likelier the nearer and the longer the recompute takes: {} readers met a miss, against {then.misses} when everyone waits for expiry. With no lock {overlapping_recomputes} refreshes overlapped another: early refresh spreads the work, the claim still bounds it.",
        },
        metric: Metric::Misses,
        pause_ms: None,
        contrast: Some("preset=xfetch&xfetch_beta=0"),
        action: Some(Compare { label: "Compare it with the claim alone", name: "xfetch" }),
        speed: Some(40.0),
        predict: Some(Prediction {
            question: "{instances} offices of {threads} clerks read a hot key that lives {value_ttl_ms}, for {duration_ms}, and refresh it early, before it expires (XFetch). How many readers meet a miss?",
            options: &[
                Words("one per expiry", "The early refresh rewrites the value before it expires, so no reader finds it gone."),
                Number(1000.0, "That is waiting for expiry: every reader in the gap misses."),
                TheRun,
            ],
        }),
    },
    Step {
        level: Deeper,
        title: "Stale-while-revalidate",
        row: Row {
            link: "preset=swr",
            claims: &[EVERY_REQUEST_STALE, ONE_RECOMPUTE, NO_TIMEOUTS],
            words: "Every request gets the stale value at once and the claim guards only the refresh behind it: {} answers served stale, and {recomputes} recompute. The stale copy lives in Redis, though: with Redis down there is none to serve.",
        },
        metric: Metric::StaleServed,
        pause_ms: None,
        contrast: None,
        action: None,
        speed: None,
        predict: Some(Prediction {
            question: "Stale-while-revalidate on a burst: {instances} offices of {threads} clerks each miss the key at once. How many answers are served stale?",
            options: &[
                Worked(|x| x.r.requests.saturating_sub(u64::from(x.s.threads)) as f64, "That is the losers' stale policy; with stale-while-revalidate the refreshing office answers stale too."),
                TheRun,
                Worked(|x| x.r.requests.saturating_sub(x.r.recomputes) as f64, "Even the request that refreshes answers stale first; the refresh runs behind the answer."),
                Number(0.0, "The claim guards only the refresh behind the answer, so nobody waits on it."),
            ],
        }),
    },
    Step {
        level: Deeper,
        title: "Redis is down: fail open",
        row: Row {
            link: "preset=redis-down",
            claims: &[PER_INSTANCE, NO_TIMEOUTS],
            words: "Every Redis command errors. Failing open, each office treats the claim as won and refreshes anyway: {} recomputes, one per office, and nobody waits on a lock that cannot be taken. That needs Redis to fail fast: a Redis that hangs holds every caller until the client's timeout.",
        },
        metric: Metric::Recomputes,
        pause_ms: None,
        contrast: None,
        action: Some(Sandbox(Row { link: "preset=redis-hang", claims: &[TIMEOUTS], words: "See a Redis that hangs" })),
        speed: Some(0.23),
        predict: Some(Prediction {
            question: "Redis is down, every command erroring at once, and the fleet fails open: {instances} offices of {threads} clerks each miss the key. How many recomputes?",
            options: &[
                Number(1.0, "One for the fleet needs the claim, and Redis cannot take it."),
                TheRun,
                Number(8000.0, "Singleflight is in-process and still works: one per instance."),
                Words("none: nobody can claim", "That is failing closed; open treats the failed claim as won."),
            ],
        }),
    },
    Step {
        level: Deeper,
        title: "The holder dies",
        row: Row {
            link: "preset=holder-crash",
            claims: &[TIMEOUTS],
            words: "The office holding the claim crashes without releasing it. Nobody may refresh until the claim's {claim_ttl_ms} TTL runs out, and {} callers have given up so far: the TTL is also the longest such stall.",
        },
        metric: Metric::Timeouts,
        pause_ms: Some(13_000),
        contrast: None,
        action: None,
        speed: Some(5.2),
        predict: Some(Prediction {
            question: "{instances} offices of {threads} clerks keep asking; the claim holder crashes without releasing its {claim_ttl_ms} claim, and each caller waits {deadline_ms} at most. How many callers have given up by the pause?",
            options: &[
                Number(0.0, "Nobody may refresh until the dead claim's TTL runs out, and the waiters reach their deadlines."),
                TheRun,
                Worked(|x| x.r.misses as f64, "That is everyone who missed; some are still waiting at the pause, their deadline not yet reached."),
                Words("none: the claim is freed when the holder dies", "Redis cannot tell a dead holder from a slow one; only the TTL frees it."),
            ],
        }),
    },
    Step {
        level: Deeper,
        title: "A lock with a TTL guards efficiency, not correctness",
        row: Row {
            link: "preset=late-writer",
            claims: &[OVERWRITES],
            words: "A slow holder outlives its {claim_ttl_ms} claim, another office recomputes, and the older value lands last: {} newer values were overwritten by older ones. Fills without any lock race the same way. A fencing number on each write lets the store refuse the late one.",
        },
        metric: Metric::StaleOverwrites,
        pause_ms: None,
        contrast: None,
        action: Some(Sandbox(Row { link: "preset=late-writer&fw=1", claims: &[NO_OVERWRITES], words: "Turn on fenced writes" })),
        speed: Some(30.0),
        predict: Some(Prediction {
            question: "{instances} offices of {threads} clerks, {duration_ms}; a recompute takes {recompute_ms}, a claim {claim_ttl_ms}. How many newer values do older ones overwrite?",
            options: &[
                Number(0.0, "A claim that expires mid-work lets a second writer in, and the older write can land last."),
                TheRun,
                Worked(|x| x.r.overlapping_recomputes as f64, "That counts every recompute that overlapped another; only where the older value landed last was a newer one overwritten."),
                Words("none: the claim prevents it", "A lock with a TTL guards efficiency, not correctness."),
            ],
        }),
    },
];

/// The longest a prediction's reveal may take on screen (wall ms at the
/// step's speed, without the page's fast-forward through quiet stretches).
pub const REVEAL_WITHIN_MS: f64 = 3000.0;

/// The speed the tour plays a step at: its own, if it names one (a story
/// whose number settles late plays faster, so that the reveal comes within
/// [`REVEAL_WITHIN_MS`]), else its scenario's default.
pub fn speed(step: &Step) -> f64 {
    step.speed
        .unwrap_or_else(|| crate::pace::default_speed(&Scenario::from_query(step.row.link).0))
}

/// The steps of one level, in order.
pub fn steps(level: Level) -> impl Iterator<Item = &'static Step> {
    STEPS.iter().filter(move |s| s.level == level)
}

/// How many steps a level has.
pub fn count(level: Level) -> usize {
    steps(level).count()
}

/// Step `k` (from 0) of a level.
pub fn step(level: Level, k: usize) -> Option<&'static Step> {
    steps(level).nth(k)
}

/// A place in the tour: a level and a step index from 0.
pub type Place = (Level, usize);

/// The hook and link name of a place: `basics/1` (steps count from 1).
pub fn place_name((level, k): Place) -> String {
    format!("{}/{}", level.name(), k + 1)
}

/// Reads `#tour/<level>/<k>` (or `#tour`, or `#tour/<level>`); anything else
/// is not a tour link. A step past the level's end is its last step.
pub fn parse_hash(hash: &str) -> Option<Place> {
    let rest = hash
        .strip_prefix('#')
        .unwrap_or(hash)
        .strip_prefix("tour")?;
    let mut parts = rest.strip_prefix('/').unwrap_or(rest).split('/');
    let level = match parts.next() {
        None | Some("") => return Some((Basics, 0)),
        Some(l) => Level::from_name(l)?,
    };
    let k = match parts.next() {
        None | Some("") => 0,
        Some(n) => n.parse::<usize>().ok()?.max(1) - 1,
    };
    Some((level, k.min(count(level) - 1)))
}

/// The next place: the next step, or the next level's first.
pub fn next((level, k): Place) -> Option<Place> {
    if k + 1 < count(level) {
        return Some((level, k + 1));
    }
    let i = Level::ALL.iter().position(|l| *l == level)?;
    Level::ALL.get(i + 1).map(|l| (*l, 0))
}

/// The previous place: the previous step, or the previous level's last.
pub fn back((level, k): Place) -> Option<Place> {
    if k > 0 {
        return Some((level, k - 1));
    }
    let i = Level::ALL.iter().position(|l| *l == level)?;
    let prev = *Level::ALL.get(i.checked_sub(1)?)?;
    Some((prev, count(prev) - 1))
}

/// The step's sentence, filled from the run on screen: the text before the
/// highlighted number, the number (pending while its event has not
/// happened), and the text after it. `then` is the contrast's report, once
/// the caller has run it; until then its numbers read as pending.
pub fn render(
    step: &Step,
    s: &Scenario,
    r: &Report,
    ended: bool,
    then: Option<&Report>,
) -> (String, String, String) {
    let v = stampede::metrics::value(r, step.metric).unwrap_or(0.0);
    let number = if crate::lesson::pending(step.metric, v, ended) {
        PENDING.to_string()
    } else {
        crate::lesson::shown(step.metric, v)
    };
    let (before, after) = split_text(step.row.words);
    (fill(before, s, r, then), number, fill(after, s, r, then))
}

/// The step's sentence as a clause over the run on screen: its words,
/// filled as [`render`] fills them, carrying the step's claims. It is said
/// only where every claim holds for this run (empty otherwise), and
/// [`crate::claims::check`] re-checks it: the words, the prediction's right
/// option and the reveal all show the run's own `metric`, and this is what
/// they claim of it.
pub fn said(
    step: &Step,
    s: &Scenario,
    r: &Report,
    ended: bool,
    then: Option<&Report>,
) -> Vec<Clause> {
    let (before, number, after) = render(step, s, r, ended, then);
    let mut say = Say::new(Run::new(s, r, ended).against(then));
    say.when(step.row.claims, format!("{before}{number}{after}"));
    say.done()
}

/// What the tour bar says instead of a step's words whose claims do not
/// hold for the run on screen (the learner changed a knob or the seed
/// during the step): the words are the step's own run's, not this one's.
pub const NOT_THIS_RUN: &str = "This step's words are not true of the run on screen: a knob or the seed differs from the step's own run. The proof says what this run shows; Back, then Next, replays the step's own run.";

/// How a number whose event has not happened yet is shown.
pub const PENDING: &str = "…";

/// `text` with every `{name}` filled in: a counter of `r`, a knob of `s`
/// (times with their unit), or `{then.name}`, a counter of `then`.
pub fn fill(text: &str, s: &Scenario, r: &Report, then: Option<&Report>) -> String {
    let mut out = String::with_capacity(text.len() + 16);
    let mut rest = text;
    while let Some(open) = rest.find('{') {
        out.push_str(&rest[..open]);
        let Some(close) = rest[open..].find('}') else {
            out.push_str(&rest[open..]);
            return out;
        };
        let name = &rest[open + 1..open + close];
        out.push_str(&placeholder(name, s, r, then));
        rest = &rest[open + close + 1..];
    }
    out.push_str(rest);
    out
}

fn placeholder(name: &str, s: &Scenario, r: &Report, then: Option<&Report>) -> String {
    use crate::lesson::{count, shown};
    use stampede::metrics::value;
    // The words' text names a counter as the CLI's JSON does: read once
    // here, as a link's text is, and looked up by its `Metric` after.
    if let Some(m) = name.strip_prefix("then.").and_then(Metric::from_name) {
        return match then.and_then(|t| value(t, m)) {
            Some(v) => shown(m, v),
            None => PENDING.to_string(),
        };
    }
    if let Some(v) = Metric::from_name(name).and_then(|m| Some(shown(m, value(r, m)?))) {
        return v;
    }
    match s.get(name).and_then(|v| v.parse::<u64>().ok()) {
        Some(v) if name.ends_with("_ms") => format!("{} ms", count(v)),
        Some(v) => count(v),
        None => format!("{{{name}}}"),
    }
}

/// The step's sentence with `value` in place of `{}`: (before, after).
pub fn split_text(text: &str) -> (&str, &str) {
    text.split_once("{}").unwrap_or((text, ""))
}

#[cfg(test)]
mod tests {
    use super::*;
    use stampede::Fleet;

    fn scenario_of(query: &str) -> (Scenario, u64) {
        let (s, seed, notices) = Scenario::from_query(query);
        assert!(notices.is_empty(), "{query}: {notices:?}");
        (s, seed)
    }

    #[test]
    fn every_level_has_steps_and_every_step_one_number() {
        for level in Level::ALL {
            assert!(count(level) >= 4, "{level:?}");
        }
        for s in STEPS {
            assert_eq!(s.row.words.matches("{}").count(), 1, "{}", s.title);
            assert!(!s.row.claims.is_empty(), "{}: claims nothing", s.title);
            let words = s.row.words.split_whitespace().count();
            assert!((12..=75).contains(&words), "{}: {words} words", s.title);
            // No number is typed into the words: each comes from the run.
            // (A digit glued to a letter is part of a name, as in p99.)
            let typed = s.row.words.char_indices().any(|(i, c)| {
                c.is_ascii_digit()
                    && !s.row.words[..i]
                        .chars()
                        .next_back()
                        .is_some_and(char::is_alphanumeric)
            });
            assert!(!typed, "{}: a number typed into the text", s.title);
            assert_eq!(
                s.row.words.contains("{then."),
                s.contrast.is_some(),
                "{}",
                s.title
            );
        }
    }

    /// The tour bar says [`NOT_THIS_RUN`] ("a knob or the seed differs")
    /// where a step's words do not hold at its run's end: so on the step's
    /// own run, played to its end (past a step's pause too), its words
    /// must hold, or the bar would say so of the step's own run.
    #[test]
    fn a_step_s_own_run_says_its_words_at_its_end() {
        let mut silent = Vec::new();
        for step in STEPS {
            let (s, seed) = scenario_of(step.row.link);
            let then = step.contrast.map(|q| {
                let (c, cs) = scenario_of(q);
                Fleet::new(&c, cs).run()
            });
            let r = Fleet::new(&s, seed).run();
            if said(step, &s, &r, true, then.as_ref()).is_empty() {
                silent.push(step.title);
            }
        }
        assert!(silent.is_empty(), "{silent:?}");
    }

    /// A learner who changes a knob or the seed during a step gets the
    /// step's words only where their claims hold for the run on screen:
    /// each step on smaller fleets, with each layer switched, on another
    /// seed, says true words or none (the page then says
    /// [`NOT_THIS_RUN`]), and some such runs do make a step's words false.
    #[test]
    fn a_step_on_a_changed_run_says_true_words_or_none() {
        use stampede::scenario::ClaimMode;
        let (mut said_none, mut said_true) = (0, 0);
        for step in STEPS {
            let (base, seed) = scenario_of(step.row.link);
            let then = step.contrast.map(|q| {
                let (c, cs) = scenario_of(q);
                Fleet::new(&c, cs).run()
            });
            let mut small = base.clone();
            small.instances = small.instances.min(4);
            small.threads = small.threads.min(20);
            let mut no_sf = small.clone();
            no_sf.singleflight = !no_sf.singleflight;
            let mut other_claim = small.clone();
            other_claim.claim = match small.claim {
                ClaimMode::Off => ClaimMode::Inner,
                _ => ClaimMode::Off,
            };
            for (s, sd) in [(small, seed + 1), (no_sf, seed), (other_claim, seed)] {
                let r = Fleet::new(&s, sd).run();
                let clauses = said(step, &s, &r, true, then.as_ref());
                if clauses.is_empty() {
                    said_none += 1;
                    continue;
                }
                said_true += 1;
                let run = Run::new(&s, &r, true).against(then.as_ref());
                assert_eq!(
                    crate::claims::check(&run, &clauses),
                    Ok(()),
                    "{}: {}",
                    step.title,
                    crate::claims::text(&clauses)
                );
            }
        }
        assert!(
            said_none > 0 && said_true > 0,
            "{said_none} none, {said_true} said"
        );
    }

    /// The tour's words are true: every step's scenario, run on the link's
    /// own seed to the step's reveal (its pause, or its end), holds every
    /// claim its sentence makes, so the sentence is said; and every
    /// placeholder is a counter or a knob.
    #[test]
    fn every_step_says_what_its_run_shows() {
        for step in STEPS {
            let (s, r) = revealed(step);
            let ended = step.pause_ms.is_none();
            let then = step.contrast.map(|q| {
                let (c, cs) = scenario_of(q);
                Fleet::new(&c, cs).run()
            });
            let clauses = said(step, &s, &r, ended, then.as_ref());
            let run = Run::new(&s, &r, ended).against(then.as_ref());
            // Each claim holding is the row test's (tests/rows.rs), at the
            // same reveal against the same contrast; here, the words.
            assert_eq!(clauses.len(), 1, "{}", step.title);
            assert_eq!(crate::claims::check(&run, &clauses), Ok(()));
            // Words that quote the contrast claim something of it too: with
            // no contrast to prove it they are not said.
            assert_eq!(
                said(step, &s, &r, ended, None).is_empty(),
                step.contrast.is_some(),
                "{}: the words against the contrast claim nothing of it",
                step.title
            );
            let text = crate::claims::text(&clauses);
            assert!(
                !text.contains('{') && !text.contains(PENDING),
                "{}: {text}",
                step.title
            );
        }
    }

    /// The reveal rests on the number's claim: at the first moment the page
    /// may reveal a step's number (the core says the counter is final, or
    /// the run reaches the step's pause or its end), the number is the one
    /// the reveal settles on and the words' claim on it holds.
    #[test]
    fn every_reveal_comes_when_its_claim_holds() {
        for step in STEPS {
            let (s, seed) = scenario_of(step.row.link);
            let (_, at_reveal) = revealed(step);
            let until = step.pause_ms.map_or(u64::MAX, |ms| u64::from(ms) * 1000);
            let mut fleet = Fleet::new(&s, seed);
            while !fleet.advance_to(until, 2_000) && !fleet.is_final(step.metric) {}
            let r = fleet.report();
            let (now, then) = (
                stampede::metrics::value(&r, step.metric),
                stampede::metrics::value(&at_reveal, step.metric),
            );
            assert_eq!(
                now, then,
                "{}: revealed early at {}",
                step.title, r.elapsed_ms
            );
            if !step.metric.is_time() {
                let ended = step.pause_ms.is_none() && fleet.is_quiet();
                assert!(
                    step.row.claims[0].holds(&Run::new(&s, &r, ended)),
                    "{}: {:?} does not hold at the reveal",
                    step.title,
                    step.row.claims[0]
                );
            }
        }
    }

    /// The virtual time (µs) a step's number is known at on its own run:
    /// the first moment the core says it is final, or the step's pause, or
    /// the run's end, as the page reveals it (`src/lesson/tour_view.rs`).
    fn known_at(step: &Step) -> u64 {
        let (s, seed) = scenario_of(step.row.link);
        let until = step.pause_ms.map_or(u64::MAX, |ms| u64::from(ms) * 1000);
        let mut fleet = Fleet::new(&s, seed);
        loop {
            // One event's work at a time: the moment is the event's.
            let reached = fleet.advance_to(until, 1);
            if fleet.is_final(step.metric) || fleet.is_quiet() || reached && until != u64::MAX {
                return fleet.now().min(until);
            }
        }
    }

    /// Issue 39 §4: every prediction's number is known (final, or at the
    /// step's pause) within [`REVEAL_WITHIN_MS`] of playing at the tour's
    /// speed for the step ([`speed`]), counted without the page's
    /// fast-forward through quiet stretches: the bet is settled while the
    /// learner still remembers it. Prints the table BENCHMARKS.md quotes
    /// with `--nocapture`.
    #[test]
    fn every_prediction_is_revealed_within_3_s_at_the_tour_s_speed() {
        let mut slow = Vec::new();
        for level in Level::ALL {
            for (k, step) in steps(level).enumerate() {
                if step.predict.is_none() {
                    continue;
                }
                let at = known_at(step);
                let v = speed(step);
                // A speed the slider offers, so its label reads it back.
                let pace = crate::pace::speed_at(crate::pace::position_of(v));
                assert_eq!(pace, v, "{}: not a slider speed", step.title);
                let wall = at as f64 / 1000.0 / v;
                let place = place_name((level, k));
                eprintln!(
                    "| {place} | `{}` | {} | {} ms | {}x | {:.1} s |",
                    step.row.link,
                    step.metric,
                    stampede::decimal::format(at as f64 / 1000.0),
                    stampede::decimal::format(v),
                    wall / 1000.0
                );
                (wall > REVEAL_WITHIN_MS).then(|| slow.push((place, wall / 1000.0)));
            }
        }
        assert_eq!(slow, [], "revealed later than 3 s (place, wall s)");
    }

    /// The words that would name a step's answer `v` of `metric` on the
    /// run `r` of `s`: the number as shown, its word (one to twelve), "no
    /// one" for 0, "per office" for one per office, "every" for one per
    /// request, "×" for offices times clerks.
    fn answer_words(s: &Scenario, r: &Report, metric: Metric, v: f64) -> Vec<String> {
        const SMALL: [&str; 13] = [
            "zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten",
            "eleven", "twelve",
        ];
        let mut w = vec![crate::lesson::shown(metric, v)];
        if metric.is_time() {
            return w;
        }
        let n = v as u64;
        if let Some(word) = SMALL.get(n as usize) {
            w.push((*word).to_string());
        }
        if n == 0 {
            w.extend(["none", "nobody", "no one", "nothing", "never"].map(String::from));
        }
        if n == u64::from(s.instances) {
            w.extend(["per office", "per instance", "each office"].map(String::from));
        }
        if n == r.requests {
            w.extend(["every", "all ", "per clerk", "per thread", "each clerk"].map(String::from));
        }
        if n == u64::from(s.instances) * u64::from(s.threads) {
            w.extend(["×", " x ", "times"].map(String::from));
        }
        w
    }

    /// Issue 39 §4: no step's title names its answer ("Singleflight: one
    /// leader per office", "The claim at full size: still one"): neither
    /// the number its run reveals nor a word that stands for it.
    #[test]
    fn no_title_names_its_answer() {
        let mut named = Vec::new();
        for step in STEPS {
            let (s, r) = revealed(step);
            let v = stampede::metrics::value(&r, step.metric).unwrap();
            let title = format!(" {} ", step.title.to_lowercase());
            for w in answer_words(&s, &r, step.metric, v) {
                let whole_word = title.match_indices(&w).any(|(i, _)| {
                    let before = title[..i].chars().next_back();
                    let after = title[i + w.len()..].chars().next();
                    !before.is_some_and(char::is_alphanumeric)
                        && !after.is_some_and(char::is_alphanumeric)
                });
                if whole_word {
                    named.push(format!(
                        "{:?} names {w:?} ({} = {v})",
                        step.title, step.metric
                    ));
                }
            }
        }
        assert!(named.is_empty(), "{named:#?}");
    }

    /// Issue 39 §4: a prediction can be reasoned out: its question shows
    /// the fleet it counts over (`{instances}` offices of `{threads}`
    /// clerks), filled from the step's own scenario, never typed in, and
    /// each number it shows is a knob of that scenario.
    #[test]
    fn every_question_shows_the_numbers_it_needs() {
        for step in STEPS {
            let p = step.predict.unwrap();
            let (s, _) = scenario_of(step.row.link);
            for knob in ["{instances}", "{threads}"] {
                assert!(p.question.contains(knob), "{}: no {knob}", step.title);
            }
            let q = question(&p, &s);
            assert!(
                q.contains(&format!("{} offices of {} clerks", s.instances, s.threads)),
                "{q}"
            );
            // No number typed in: every digit shown comes from a knob.
            let mut bare = p.question.to_string();
            while let Some(open) = bare.find('{') {
                let close = bare[open..].find('}').unwrap() + open;
                bare.replace_range(open..=close, "");
            }
            // (A digit glued to a letter is part of a name, as in p99.)
            let typed = bare.char_indices().any(|(i, c)| {
                c.is_ascii_digit()
                    && !bare[..i]
                        .chars()
                        .next_back()
                        .is_some_and(char::is_alphanumeric)
            });
            assert!(!typed, "{}: {bare}", step.title);
        }
    }

    /// `r` with the counter `name` at `v`: for the tour's counters only.
    fn with(r: &Report, m: Metric, v: u64) -> Report {
        let mut r = r.clone();
        let field = match m {
            Metric::Recomputes => &mut r.recomputes,
            Metric::ClaimAttempts => &mut r.claim_attempts,
            Metric::OverlappingRecomputes => &mut r.overlapping_recomputes,
            Metric::ReleasesRefused => &mut r.releases_refused,
            Metric::StaleServed => &mut r.stale_served,
            Metric::Errors => &mut r.errors,
            Metric::Timeouts => &mut r.timeouts,
            Metric::RememberedFailures => &mut r.remembered_failures,
            Metric::Pinned => &mut r.pinned,
            Metric::Corrupted => &mut r.corrupted,
            Metric::AdmissionShed => &mut r.admission_shed,
            Metric::OriginPeakConcurrency => &mut r.origin_peak_concurrency,
            Metric::Misses => &mut r.misses,
            Metric::StaleOverwrites => &mut r.stale_overwrites,
            other => panic!("no counter {other:?} here"),
        };
        *field = v;
        r
    }

    /// A step's first claim is the one on the number it points at: on the
    /// step's run it holds, and with that counter at 0 or one more it does
    /// not (a time is not a count: the words claim nothing of its size).
    #[test]
    fn every_step_claims_its_number_first() {
        for step in STEPS.iter().filter(|s| !s.metric.is_time()) {
            let (s, r) = revealed(step);
            let ended = step.pause_ms.is_none();
            let first = step.row.claims[0];
            let v = stampede::metrics::value(&r, step.metric).unwrap() as u64;
            assert!(first.holds(&Run::new(&s, &r, ended)), "{}", step.title);
            let moved = [0, v + 1].iter().any(|&w| {
                let other = with(&r, step.metric, w);
                !first.holds(&Run::new(&s, &other, ended))
            });
            assert!(
                moved,
                "{}: {first:?} does not speak of {}",
                step.title, step.metric
            );
        }
    }

    /// The number a step points at is the proof's: the lesson on screen
    /// beside the step is about it, so its sentence states that number.
    #[test]
    fn every_step_points_at_the_proof_on_screen() {
        for step in STEPS {
            let (s, seed) = scenario_of(step.row.link);
            let base = stampede::scenario::closest_preset(&s);
            let report = Fleet::new(&s, seed).run();
            let l = crate::lesson::lesson(&s, base, &report, true, None);
            let v = stampede::metrics::value(&report, step.metric).unwrap();
            let shown = crate::lesson::shown(step.metric, v);
            assert!(
                l.metric == step.metric || l.sentence.contains(shown.trim_end_matches(" ms")),
                "{}: the step points at {} = {shown}, the proof is {} and says {:?}",
                step.title,
                step.metric,
                l.metric,
                l.sentence
            );
        }
    }

    /// At no moment of a step's run does its number contradict its words:
    /// until the event has happened the number is pending, never 0, and a
    /// step that pauses mid-run pauses where its lesson shows.
    #[test]
    fn no_step_shows_a_contradicting_number_at_any_moment() {
        for step in STEPS {
            let (s, seed) = scenario_of(step.row.link);
            let mut fleet = Fleet::new(&s, seed);
            let end = Fleet::new(&s, seed).run().elapsed_ms;
            let moments = 40;
            for i in 1..=moments {
                let t = (end * 1000.0 * f64::from(i) / f64::from(moments)) as u64;
                fleet.advance_to(t, usize::MAX);
                let r = fleet.report();
                let (_, number, _) = render(step, &s, &r, false, None);
                if number == "0" {
                    // Only where the words claim the 0 (their first claim,
                    // on the number, holds of it) or a 0 is the lesson.
                    let zero = step.row.claims[0].holds(&Run::new(&s, &r, false));
                    assert!(
                        zero || crate::lesson::ZERO_PROVES.contains(&step.metric),
                        "{}: shows 0 at {t} µs",
                        step.title
                    );
                }
            }
            if let Some(at) = step.pause_ms {
                let mut fleet = Fleet::new(&s, seed);
                fleet.advance_to(u64::from(at) * 1000, usize::MAX);
                let r = fleet.report();
                let v = stampede::metrics::value(&r, step.metric).unwrap();
                assert!(v > 0.0, "{}: at its pause {} is 0", step.title, step.metric);
                assert_eq!(
                    r.values_written, 0,
                    "{}: refreshed before its pause",
                    step.title
                );
            }
        }
    }

    fn step_titled(title: &str) -> &'static Step {
        STEPS.iter().find(|s| s.title == title).unwrap()
    }

    /// The audit's corrections, as the tour words them.
    #[test]
    fn the_tour_says_what_the_audit_corrected() {
        let all: String = STEPS
            .iter()
            .map(|s| s.row.words)
            .collect::<Vec<_>>()
            .join(" ");
        // A claim TTL is sized against the origin timeout, not the p99.
        assert!(!all.contains("p99 recompute"));
        assert!(step_titled("The claim's TTL against the slowest recompute")
            .row
            .words
            .contains("above the origin timeout plus the write"));
        // Refused releases are of two kinds; a plain DEL harms only one.
        let release = step_titled("Release with the token you claimed with")
            .row
            .words;
        assert!(release.contains("{releases_refused_expired} found the claim already expired"));
        assert!(release.contains("{releases_refused_taken} found another office holding it"));
        // The origin timeout bounds the wait, not the call.
        assert!(step_titled("When the origin never answers")
            .row
            .words
            .contains("it bounds the wait, not the call"));
        // Layering saves claims, not the GETs.
        assert!(step_titled("Two multipliers, two layers")
            .row
            .words
            .contains("Every thread still GETs the value first"));
        // Duplicate work is instances x threads only within one recompute.
        assert!(all.contains("When every thread misses within one recompute"));
        // Fail open needs fail fast; swr's copy goes down with Redis.
        assert!(step_titled("Redis is down: fail open")
            .row
            .words
            .contains("That needs Redis to fail fast"));
        assert!(step_titled("Stale-while-revalidate")
            .row
            .words
            .contains("with Redis down there is none to serve"));
        // A cold cache: little to coalesce on equal keys, both on skewed ones.
        assert!(step_titled("A cold cache: little to coalesce")
            .row
            .words
            .contains("do both"));
        // The cheap query's cost of a claim is the poll, not a round trip.
        assert!(step_titled("When singleflight alone is enough")
            .row
            .words
            .contains("{poll_ms} poll"));
        // Fills without a lock race too.
        assert!(
            step_titled("A lock with a TTL guards efficiency, not correctness")
                .row
                .words
                .contains("Fills without any lock race the same way")
        );
    }

    /// What the corrected words claim holds in the runs.
    #[test]
    fn the_corrections_hold_in_the_runs() {
        let run = |q: &str| {
            let (s, seed) = scenario_of(q);
            Fleet::new(&s, seed).run()
        };
        let card = run("preset=burst");
        assert!(
            card.redis_round_trips > card.requests,
            "every thread GETs first: {card:?}"
        );
        let short = run("preset=short-ttl");
        assert!(short.releases_refused_expired > 0 && short.releases_refused_taken > 0);
        let late = run("preset=late-writer&c=off");
        assert!(
            late.stale_overwrites > 0,
            "fills without a lock overwrite too"
        );
        let swr_down = run("preset=swr&rd=1");
        assert_eq!(swr_down.stale_served, 0);
        let spread = run("preset=naive&sp=5000");
        assert!(
            spread.recomputes < spread.requests / 10,
            "a spread burst: {}",
            spread.recomputes
        );
    }

    /// The report a step's number is revealed from: at its pause, or at
    /// the end of its run.
    fn revealed(step: &Step) -> (Scenario, Report) {
        let (s, seed) = scenario_of(step.row.link);
        let mut fleet = Fleet::new(&s, seed);
        let r = match step.pause_ms {
            Some(at) => {
                fleet.advance_to(u64::from(at) * 1000, usize::MAX);
                fleet.report()
            }
            None => fleet.run(),
        };
        (s, r)
    }

    /// Every step's bet: 3 or 4 options, exactly one right, and that one is
    /// the run's own number; every wrong option differs from it and from
    /// the others, and says why not.
    #[test]
    fn every_prediction_is_right_once_and_from_the_run() {
        for step in STEPS {
            let p = step
                .predict
                .unwrap_or_else(|| panic!("{}: no prediction", step.title));
            assert!(
                (3..=4).contains(&p.options.len()),
                "{}: {} options",
                step.title,
                p.options.len()
            );
            let (s, r) = revealed(step);
            let run = stampede::metrics::value(&r, step.metric).unwrap();
            let shown_run = crate::lesson::shown(step.metric, run);
            let a = answers(step, &p, &r);
            let right: Vec<&Answer> = a.iter().filter(|x| x.right).collect();
            assert_eq!(right.len(), 1, "{}", step.title);
            assert_eq!(right[0].label, shown_run, "{}", step.title);
            // The right option is the number the step's words claim of the
            // same run, shown at the reveal: said only where the claims hold.
            let (_, number, _) = render(step, &s, &r, true, None);
            assert_eq!(number, right[0].label, "{}", step.title);
            let then = step.contrast.map(|q| {
                let (c, cs) = scenario_of(q);
                Fleet::new(&c, cs).run()
            });
            let words = said(step, &s, &r, step.pause_ms.is_none(), then.as_ref());
            assert_eq!(words.len(), 1, "{}: the words are not said", step.title);
            for (c, x) in p.options.iter().zip(&a) {
                if let Choice::Number(n, _) = c {
                    assert_ne!(
                        *n, run,
                        "{}: a wrong option is the run's number",
                        step.title
                    );
                }
                if !x.right {
                    assert_ne!(x.label, shown_run, "{}", step.title);
                    let why = x.why_not.unwrap_or_default();
                    assert!(
                        why.split_whitespace().count() >= 4,
                        "{}: {why:?}",
                        step.title
                    );
                }
            }
            let mut labels: Vec<&str> = a.iter().map(|x| x.label.as_str()).collect();
            labels.sort();
            labels.dedup();
            assert_eq!(labels.len(), a.len(), "{}: options repeat", step.title);
            // The question names knobs only: nothing of the run shows early.
            let q = question(&p, &s);
            assert!(!q.contains('{'), "{}: {q}", step.title);
            let mut rest = p.question;
            while let Some(open) = rest.find('{') {
                let close = rest[open..].find('}').unwrap() + open;
                let name = &rest[open + 1..close];
                assert!(
                    Metric::from_name(name).is_none() && s.get(name).is_some(),
                    "{}: {{{name}}} is not a knob",
                    step.title
                );
                rest = &rest[close + 1..];
            }
            assert!(q.ends_with('?'), "{}: {q}", step.title);
        }
    }

    /// Each level ends with a drill on one of its own lessons, and every
    /// action does what its words point at: a sandbox link parses cleanly
    /// and claims something of its run; a comparison exists.
    #[test]
    fn levels_end_with_a_drill_and_actions_do_what_they_say() {
        for level in Level::ALL {
            let d = crate::drill::drill(level.drill())
                .unwrap_or_else(|| panic!("{level:?}: no drill {}", level.drill()));
            // One ladder: the level ends with a drill of its own rung.
            assert_eq!(d.level, level, "{level:?}'s drill {}", d.name);
            let lesson = format!("preset={}", d.lesson);
            let own = steps(level).any(|s| {
                s.row.link.starts_with(&lesson)
                    || matches!(s.action, Some(Sandbox(row)) if row.link.starts_with(&lesson))
            });
            assert!(
                own,
                "{level:?}'s drill {} practises {}, which the level does not show",
                d.name, d.lesson
            );
        }
        let mut n = 0;
        for step in STEPS {
            let Some(a) = step.action else { continue };
            n += 1;
            assert!(a.label().split_whitespace().count() >= 3, "{}", step.title);
            match a {
                Compare { name, .. } => {
                    assert!(
                        crate::presets::comparison(name).is_some(),
                        "{}: no comparison {name}",
                        step.title
                    );
                }
                // That its run shows its claims is the row test's
                // (tests/rows.rs).
                Sandbox(row) => {
                    scenario_of(row.link);
                    assert!(!row.claims.is_empty(), "{}", step.title);
                }
            }
        }
        assert!(n >= 5, "{n} actions");
        // The deeper level covers XFetch.
        assert!(steps(Deeper).any(|s| s.row.link == "preset=xfetch"));
    }

    #[test]
    fn fill_reads_counters_knobs_and_the_contrast() {
        let s = Scenario::default();
        let r = Report {
            recomputes: 8000,
            ..Report::default()
        };
        assert_eq!(
            fill(
                "{recomputes} of {instances} at {deadline_ms}, {then.recomputes}, {nope}",
                &s,
                &r,
                None
            ),
            "8000 of 40 at 1000 ms, …, {nope}"
        );
        let t = Report {
            recomputes: 1,
            ..Report::default()
        };
        assert_eq!(fill("{then.recomputes}", &s, &r, Some(&t)), "1");
    }

    #[test]
    fn links_name_every_step_and_walk_the_whole_tour() {
        let mut at = (Basics, 0);
        let mut seen = vec![place_name(at)];
        while let Some(n) = next(at) {
            assert_eq!(back(n), Some(at));
            at = n;
            seen.push(place_name(at));
        }
        assert_eq!(seen.len(), STEPS.len());
        for name in &seen {
            let p = parse_hash(&format!("#tour/{name}")).unwrap();
            assert_eq!(&place_name(p), name);
        }
        assert_eq!(parse_hash("#tour"), Some((Basics, 0)));
        assert_eq!(parse_hash("#tour/deeper"), Some((Deeper, 0)));
        assert_eq!(
            parse_hash("#tour/solid/99"),
            Some((Solid, count(Solid) - 1))
        );
        assert_eq!(parse_hash("#tour/solid/0"), Some((Solid, 0)));
        for bad in [
            "",
            "#",
            "#tours",
            "#tour/nope/1",
            "#tour/solid/x",
            "#questions",
        ] {
            assert_eq!(parse_hash(bad), None, "{bad}");
        }
    }
}
