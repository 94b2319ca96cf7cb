//! Drills: graded puzzles as data, beside the presets. A drill fixes a
//! situation (a share link's query), names the few knobs the learner may
//! turn, and states its goals as criteria on the run's [`Report`]. It is
//! graded over [`SEEDS`], every one of them: a criterion passes only if it
//! holds on every seed, and its reported value is the worst seen, so a
//! lucky seed never passes.
//!
//! The drills teach trade-offs (cost, latency, Redis load), not "more
//! protection": turning everything on fails some of them.
//!
//! - [`DRILLS`], [`drill`]: the drills, easiest first.
//! - [`apply`]: a learner's link on a drill's situation; a locked knob is
//!   refused with a [`Notice`], never applied.
//! - [`grade`], [`grade_link`], [`grade_reports`]: the grade, the same on
//!   the page and in the CLI.

use crate::claims::Row;
use serde::Serialize;
use stampede::ledger::End;
use stampede::scenario::{self, knob_names, Notice, Pitfalls, Scenario};
use stampede::sim::Fleet;
use stampede::{Metric, Report};

/// The seeds every drill is graded on, in order.
pub const SEEDS: [u64; 5] = [1, 2, 3, 4, 5];

/// How hard a drill is, as the rung of the course it belongs to
/// ([`Level::difficulty`] names it: easy, medium, hard); the list runs from
/// easy to hard.
pub use crate::level::Level;

pub use crate::claims::Cmp;

/// One goal: a bound on a counter of the run (a [`Report`] field), as in
/// `p99_ms <= 300`. It is a claim like any other ([`Criterion::claim`],
/// [`crate::claims::Claim::bound`]): the grade and the claim hold by the
/// same test, [`crate::claims::Bound::holds_for`].
pub type Criterion = crate::claims::Bound;

/// The counters that measure how long callers waited for their answer
/// (a criterion on one of them is a criterion on answering time).
pub const ANSWERING_TIME: [Metric; 3] = [Metric::MaxMs, Metric::P99Ms, Metric::P50Ms];

/// Every caller was answered: none was still waiting when the run stopped
/// (the ledger's `unanswered`, the report's `pinned`).
pub const EVERY_CALLER_ANSWERED: crate::claims::Claim =
    crate::claims::Claim::ledger(End::Unanswered, None, 0);

/// No caller got a fallback (degraded) answer.
pub const NO_FALLBACKS: crate::claims::Claim = crate::claims::Claim::ledger(End::Degraded, None, 0);

impl Criterion {
    /// A bound from above on answering time (`max_ms <= 300`): it speaks
    /// of every caller, so a caller never answered breaks it, whatever the
    /// answered ones measured.
    pub fn bounds_answering_time(&self) -> bool {
        ANSWERING_TIME.contains(&self.metric) && self.cmp != Cmp::AtLeast
    }

    /// This criterion on one run (the page's live view while a run plays).
    /// A bound on answering time fails while any caller is unanswered
    /// ([`Graded::never_answered`]): a latency counter measures only the
    /// callers that got an answer.
    pub fn check(&self, r: &Report) -> Graded {
        let never_answered = if self.bounds_answering_time() {
            r.ledger.ended(End::Unanswered)
        } else {
            0
        };
        Graded {
            name: self.name(),
            metric: self.metric,
            value: self.value(r),
            limit: self.limit,
            passed: self.holds_for(r) && never_answered == 0,
            never_answered,
        }
    }

    /// The criterion as a claim, to be said and checked as every other.
    pub const fn claim(self) -> crate::claims::Claim {
        crate::claims::Claim::bound(self)
    }
}

/// A criterion as graded: the worst value over the seeds, and whether it
/// held on every one of them.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Graded {
    pub name: String,
    pub metric: Metric,
    pub value: f64,
    pub limit: f64,
    pub passed: bool,
    /// For a bound on answering time, the callers never answered (the
    /// most on any seed): the value leaves them out, and the criterion
    /// fails while there are any.
    pub never_answered: u64,
}

/// A drill's grade: every criterion, passed only if all passed, and the
/// seeds it was graded on.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Grade {
    pub drill: &'static str,
    pub criteria: Vec<Graded>,
    pub passed: bool,
    pub seeds: Vec<u64>,
}

/// A graded puzzle. Knob names are [`knob_names`]' long names, or
/// `pitfall-<name>` for one pitfall switch.
#[derive(Clone, Copy, Debug)]
pub struct Drill {
    /// kebab-case, for `?drill=NAME` and `--drill NAME`.
    pub name: &'static str,
    pub title: &'static str,
    pub level: Level,
    /// The preset whose lesson the drill practises.
    pub lesson: &'static str,
    /// The situation: its link (a share link's query, seed aside), the
    /// story that tells it (shown above the knobs), and what the story
    /// claims of its run.
    pub story: Row,
    /// The knobs the learner may change; every other knob is locked.
    pub allowed: &'static [&'static str],
    pub goals: &'static [Criterion],
    /// Revealed one at a time, vaguest first.
    pub hints: [&'static str; 3],
    /// The worked solution: its link (the allowed knobs' values as a query
    /// fragment, applied to the situation), why it works (shown after a
    /// pass or on giving up), and what that claims of the solved run.
    pub solution: Row,
    /// The reasoning's other choices: a query applied to the situation
    /// (any knob, locked or not), the words of the reasoning that speak of
    /// it, and what its run shows.
    pub other: &'static [Row],
    /// The hints' runs: a query of the drill's own levers applied to the
    /// situation, the words of a hint that speak of it, and what its run
    /// shows. A number a hint writes is a setting of the drill or a bound
    /// claimed here or above (the tests check both).
    pub hint_runs: &'static [Row],
}

impl Drill {
    /// The situation as a scenario (its link is the drill's own data and
    /// parses without notices; a test checks it).
    pub fn situation(&self) -> Scenario {
        Scenario::from_query(self.story.link).0
    }

    /// The situation with `query` applied, locked knobs included: one of
    /// the reasoning's other choices ([`Drill::other`] rows).
    pub fn other(&self, query: &str) -> Scenario {
        Scenario::from_query(&format!("{}&{}", self.story.link, query)).0
    }

    /// The situation with the worked solution applied.
    pub fn solved(&self) -> Scenario {
        apply(self, self.solution.link).0
    }

    /// May the learner change `knob` (a long name or `pitfall-<name>`)?
    pub fn allows(&self, knob: &str) -> bool {
        self.allowed.contains(&knob)
            || (knob.starts_with("pitfall-") && self.allowed.contains(&"pitfalls"))
    }

    /// The link that carries a learner's scenario for this drill: `drill=`
    /// and every allowed knob whose value differs from the situation's
    /// (short keys, as share links write them). [`apply`] reads it back to
    /// the same scenario.
    pub fn link(&self, s: &Scenario) -> String {
        let base = self.situation();
        let keys = url_keys();
        let mut parts = vec![format!("drill={}", self.name)];
        for (short, long) in &keys {
            let (now, was) = (s.get(long), base.get(long));
            if now == was {
                continue;
            }
            let takes = if *long == "pitfalls" {
                Pitfalls::NAMES.iter().any(|p| {
                    let on = |x: &Scenario| x.pitfalls.enabled().contains(p);
                    on(s) != on(&base) && self.allows(&format!("pitfall-{p}"))
                })
            } else {
                self.allows(long)
            };
            if takes {
                parts.push(format!("{short}={}", now.unwrap_or_default()));
            }
        }
        parts.join("&")
    }
}

/// Every knob's share-link key and long name, read off
/// [`Scenario::to_query`] (one knob changed from the default at a time),
/// so this list never disagrees with the links the page writes. A knob
/// none of the tried values changes keeps its long name, which links
/// accept as well.
pub fn url_keys() -> Vec<(String, &'static str)> {
    const TRY: [&str; 12] = [
        "hang",
        "1",
        "2",
        "0",
        "on",
        "off",
        "steady",
        "outer",
        "stale",
        "closed",
        "0.5",
        "no-deadline",
    ];
    let base = Scenario::default();
    knob_names()
        .map(|long| {
            let was = base.get(long);
            let short = TRY.iter().find_map(|v| {
                let mut t = base.clone();
                t.set(long, v).ok()?;
                if t.get(long) == was {
                    return None;
                }
                let q = t.to_query(0);
                let first = q.split('&').next()?;
                first.split_once('=').map(|(k, _)| k.to_string())
            });
            (short.unwrap_or_else(|| long.to_string()), long)
        })
        .collect()
}

/// The long knob name for a link's key, short (`ct`) or long
/// (`claim_ttl_ms`); `None` when it is no knob. Read off
/// [`Scenario::from_query`] itself: a value no knob accepts makes it name
/// the knob in its notice, or say the key is unknown.
pub fn knob_of_key(key: &str) -> Option<&'static str> {
    if let Some(long) = knob_names().find(|n| *n == key) {
        return Some(long);
    }
    if key.is_empty() || key.contains(['&', '=', '#', '%', '?']) {
        return None;
    }
    let (_, _, notices) = Scenario::from_query(&format!("{key}=%01"));
    let named = notices.first()?.knob.as_str();
    knob_names().find(|n| *n == named)
}

fn on_off(on: bool) -> &'static str {
    if on {
        "on"
    } else {
        "off"
    }
}

/// A learner's link (a page address, a query, or a fragment such as
/// `c=inner&sf=1`) applied to the drill's situation. Only allowed knobs are
/// taken: a locked knob whose value differs from the situation's is
/// refused with a notice and kept; the same value is no change and passes
/// quietly. Unknown keys and bad values get notices as
/// [`Scenario::from_query`] gives them, out-of-range values are clamped.
/// `drill`, `seed` and `speed` are the page's own and ignored (a drill is
/// graded on [`SEEDS`]). Never panics.
pub fn apply(drill: &Drill, link: &str) -> (Scenario, Vec<Notice>) {
    let mut s = drill.situation();
    let mut notices = Vec::new();
    let query = link.split_once('?').map_or(link, |(_, q)| q);
    let query = query.split('#').next().unwrap_or_default();
    if query.len() > scenario::MAX_QUERY_LEN {
        notices.push(Notice::new(
            "url",
            format!(
                "the link is {} characters long (more than {}); ignored it and used the drill's situation",
                query.len(),
                scenario::MAX_QUERY_LEN
            ),
        ));
        return (s, notices);
    }
    for pair in query.split('&').filter(|p| !p.is_empty()) {
        let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
        let (k, v) = (scenario::percent_decode(k), scenario::percent_decode(v));
        match k.as_str() {
            "drill" | "seed" | "speed" => continue,
            "preset" => {
                notices.push(Notice::new(
                    "preset",
                    "a drill starts from its own situation; ignored the preset".to_string(),
                ));
                continue;
            }
            _ => {}
        }
        let Some(long) = knob_of_key(&k) else {
            notices.push(Notice::new(
                "url",
                format!("ignored the unknown setting '{}'", scenario::clip(&k)),
            ));
            continue;
        };
        let mut t = s.clone();
        if let Err(e) = t.set(long, &v) {
            notices.push(Notice::new(
                long,
                format!("{e}; kept {}", s.get(long).unwrap_or_default()),
            ));
            continue;
        }
        if long == "pitfalls" {
            for p in Pitfalls::NAMES {
                let want = t.pitfalls.enabled().contains(&p);
                let have = s.pitfalls.enabled().contains(&p);
                if want == have {
                    continue;
                }
                let knob = format!("pitfall-{p}");
                if drill.allows(&knob) {
                    set_pitfall(&mut s.pitfalls, p, want);
                } else {
                    notices.push(Notice::new(&knob, locked(drill, on_off(have))));
                }
            }
            continue;
        }
        if t.get(long) == s.get(long) {
            continue;
        }
        if drill.allows(long) {
            s = t;
        } else {
            notices.push(Notice::new(
                long,
                locked(drill, &s.get(long).unwrap_or_default()),
            ));
        }
    }
    notices.extend(s.validate());
    (s, notices)
}

/// "locked in this drill (it lets you change claim_ttl_ms); kept 100"
fn locked(drill: &Drill, kept: &str) -> String {
    format!(
        "locked in this drill (it lets you change {}); kept {kept}",
        drill.allowed.join(", ")
    )
}

fn set_pitfall(p: &mut Pitfalls, name: &str, on: bool) {
    match name {
        "remember-failure" => p.remember_failure = on,
        "no-deadline" => p.no_deadline = on,
        "key-mismatch" => p.key_mismatch = on,
        "mutable-result" => p.mutable_result = on,
        "plain-del" => p.plain_del = on,
        "no-expiry" => p.no_expiry = on,
        _ => {}
    }
}

/// The drill's criteria over runs already made, one per seed: each
/// criterion passes only if it holds on every run, and its value is the
/// worst of them. The page runs the seeds itself (a frame's budget at a
/// time) and grades here, so its grade is the CLI's.
pub fn grade_reports(drill: &Drill, runs: &[(u64, Report)]) -> Grade {
    let criteria: Vec<Graded> = drill
        .goals
        .iter()
        .map(|c| {
            let mut graded = Graded {
                name: c.name(),
                metric: c.metric,
                value: f64::NAN,
                limit: c.limit,
                passed: !runs.is_empty(),
                never_answered: 0,
            };
            for (i, (_, r)) in runs.iter().enumerate() {
                let one = c.check(r);
                graded.passed &= one.passed;
                graded.never_answered = graded.never_answered.max(one.never_answered);
                graded.value = if i == 0 {
                    one.value
                } else {
                    c.cmp.worse(graded.value, one.value, c.limit)
                };
            }
            graded
        })
        .collect();
    Grade {
        drill: drill.name,
        passed: criteria.iter().all(|c| c.passed),
        criteria,
        seeds: runs.iter().map(|(seed, _)| *seed).collect(),
    }
}

/// Runs `s` on every seed of [`SEEDS`] and grades it.
pub fn grade(drill: &Drill, s: &Scenario) -> Grade {
    let runs: Vec<(u64, Report)> = SEEDS
        .iter()
        .map(|&seed| (seed, Fleet::new(s, seed).run()))
        .collect();
    grade_reports(drill, &runs)
}

/// A learner's link graded: [`apply`] then [`grade`].
pub fn grade_link(drill: &Drill, link: &str) -> (Grade, Vec<Notice>) {
    let (s, notices) = apply(drill, link);
    (grade(drill, &s), notices)
}

/// The drill by its name.
pub fn drill(name: &str) -> Option<&'static Drill> {
    DRILLS.iter().find(|d| d.name == name)
}

pub(crate) const fn at_most(metric: Metric, limit: f64) -> Criterion {
    Criterion {
        metric,
        cmp: Cmp::AtMost,
        limit,
    }
}
pub(crate) const fn at_least(metric: Metric, limit: f64) -> Criterion {
    Criterion {
        metric,
        cmp: Cmp::AtLeast,
        limit,
    }
}
pub(crate) const fn exactly(metric: Metric, limit: f64) -> Criterion {
    Criterion {
        metric,
        cmp: Cmp::Exactly,
        limit,
    }
}

use Level::{Basics as Easy, Deeper as Hard, Solid as Medium};

/// Every drill, easiest first.
pub const DRILLS: &[Drill] = &[
    Drill {
        name: "singleflight-alone",
        title: "One recompute per instance, without a lock",
        level: Easy,
        lesson: "singleflight",
        story: Row {
            link: "preset=naive",
            claims: &[],
            words: "A hot key expires under 40 instances of 200 threads, with no protection. Collapse the duplicate work inside each instance, and do it without any lock at Redis: the team does not want one yet.",
        },
        allowed: &["singleflight", "claim"],
        goals: &[
            at_most(Metric::Recomputes, 40.0),
            exactly(Metric::ClaimAttempts, 0.0),
            exactly(Metric::Timeouts, 0.0),
        ],
        hints: [
            "The duplicates come from threads of the same instance asking the same question.",
            "Coalescing inside a process needs no network: a map from key to the computation in flight.",
            "Turn singleflight on and leave the claim off.",
        ],
        solution: Row {
            link: "sf=1",
            claims: &[exactly(Metric::Recomputes, 40.0).claim(), exactly(Metric::ClaimAttempts, 0.0).claim(), exactly(Metric::RedisRoundTrips, 8080.0).claim()],
            words: "Singleflight makes the first thread of each instance ask and the others wait for its answer: one recompute per instance, 40, and no Redis command but each thread's GET and each instance's write: 8080 round trips. A claim would take the fleet to one recompute, but costs a claim per instance, which this drill forbids.",
        },
        other: &[
            Row {
                link: "sf=1&c=inner",
                claims: &[exactly(Metric::Recomputes, 1.0).claim(), exactly(Metric::ClaimAttempts, 40.0).claim()],
                words: "A claim would take the fleet to one recompute, but costs a claim per instance",
            },
        ],
        hint_runs: &[],
    },
    Drill {
        name: "claim-order",
        title: "The claim inside singleflight",
        level: Easy,
        lesson: "claim-outer",
        story: Row {
            link: "preset=claim-outer",
            claims: &[exactly(Metric::Recomputes, 1.0).claim(), exactly(Metric::ClaimAttempts, 8000.0).claim()],
            words: "Singleflight and a claim are both on, and the fleet recomputes once, but Redis sees a claim attempt from every one of 8000 threads. Keep the single recompute with one claim attempt per instance.",
        },
        allowed: &["claim"],
        goals: &[
            at_most(Metric::Recomputes, 1.0),
            at_most(Metric::ClaimAttempts, 40.0),
            exactly(Metric::Timeouts, 0.0),
        ],
        hints: [
            "Count who walks to Redis: every thread, or one per instance?",
            "The order of the layers decides it: whatever is outside runs first.",
            "Put singleflight outside and the claim inside (claim: inner).",
        ],
        solution: Row {
            link: "c=inner",
            claims: &[exactly(Metric::Recomputes, 1.0).claim(), exactly(Metric::ClaimAttempts, 40.0).claim()],
            words: "With the claim outside, every thread claims before its instance has coalesced: 8000 attempts. With singleflight outside, only each instance's leader claims: 40 attempts, and the one winner still recomputes once for the fleet.",
        },
        other: &[],
        hint_runs: &[],
    },
    Drill {
        name: "losers-serve-stale",
        title: "What the losers do during a slow refresh",
        level: Easy,
        lesson: "stale",
        story: Row {
            link: "preset=stale&rc=2000&l=wait",
            claims: &[exactly(Metric::Timeouts, 8000.0).claim()],
            words: "A 2 s recompute behind a 1 s deadline. The value has just expired but a stale copy is kept for a minute, and the offices that lose the claim wait for the winner, so they all time out. Only the refreshing office may time out.",
        },
        allowed: &["loser", "claim", "singleflight"],
        goals: &[
            at_most(Metric::Timeouts, 200.0),
            exactly(Metric::Degraded, 0.0),
            at_most(Metric::Recomputes, 1.0),
        ],
        hints: [
            "Waiting for a 2 s recompute with a 1 s deadline cannot end well.",
            "The losers hold something better than nothing.",
            "Set the losers' policy to stale.",
        ],
        solution: Row {
            link: "l=stale",
            claims: &[exactly(Metric::StaleServed, 7800.0).claim(), exactly(Metric::Timeouts, 200.0).claim()],
            words: "A loser with a stale copy can answer at once instead of polling for the winner's value: the losing offices serve stale (7800 answers) and only the winner's 200 threads, coalesced on its 2 s recompute, reach their deadline. Degrading would answer quickly with nothing useful; computing would send 40 recomputes to the origin.",
        },
        other: &[
            Row {
                link: "l=degrade",
                claims: &[at_least(Metric::Degraded, 7800.0).claim()],
                words: "Degrading would answer quickly with nothing useful",
            },
            Row {
                link: "l=compute",
                claims: &[exactly(Metric::Recomputes, 40.0).claim()],
                words: "computing would send 40 recomputes to the origin",
            },
        ],
        hint_runs: &[],
    },
    Drill {
        name: "fence-the-late-writer",
        title: "A late holder must not overwrite newer data",
        level: Medium,
        lesson: "late-writer",
        story: Row {
            link: "preset=late-writer",
            claims: &[at_least(Metric::ReleasesRefused, 1.0).claim(), at_least(Metric::OverlappingRecomputes, 1.0).claim(), at_least(Metric::StaleOverwrites, 1.0).claim()],
            words: "A 1 s recompute under a 100 ms claim: holders outlive their claim, another office recomputes, and an older value lands over a newer one. The claim TTL is locked (a platform setting). Make the cache refuse the late write.",
        },
        allowed: &["fenced_writes", "claim", "singleflight"],
        goals: &[exactly(Metric::StaleOverwrites, 0.0), at_most(Metric::Recomputes, 30.0)],
        hints: [
            "A lock with a TTL guards efficiency, not correctness: it can run out mid-work.",
            "The store has to be able to tell an older write from a newer one.",
            "Turn on fenced writes: each claim win takes a number and the cache refuses a lower one.",
        ],
        solution: Row {
            link: "fw=1",
            claims: &[exactly(Metric::StaleOverwrites, 0.0).claim(), at_least(Metric::WritesRefused, 1.0).claim()],
            words: "A claim that expires mid-recompute lets a second office start; whichever write lands last wins, and sometimes that is the older value. A fencing number taken with each claim win and carried by the write lets the cache refuse any write older than the one it holds. Turning the claim off would not help: fills without a lock race the same way.",
        },
        other: &[
            Row {
                link: "c=off",
                claims: &[at_least(Metric::StaleOverwrites, 1.0).claim()],
                words: "Turning the claim off would not help: fills without a lock race the same way.",
            },
        ],
        hint_runs: &[],
    },
    Drill {
        name: "redis-down-fail-open",
        title: "Redis is down: keep answering",
        level: Medium,
        lesson: "redis-down",
        story: Row {
            link: "preset=redis-down&re=closed",
            claims: &[exactly(Metric::Timeouts, 8000.0).claim(), exactly(Metric::Recomputes, 0.0).claim()],
            words: "Every Redis command errors. The fleet treats a claim that errors as lost, so every caller waits for a winner that never comes. Answer everyone with a real value, at no more than one recompute per instance.",
        },
        allowed: &["redis_error", "loser"],
        goals: &[
            exactly(Metric::Timeouts, 0.0),
            exactly(Metric::Degraded, 0.0),
            at_most(Metric::Recomputes, 40.0),
        ],
        hints: [
            "With Redis down, nobody can win the claim.",
            "Decide what an error from the claim means: won or lost.",
            "Fail open: a claim that errors counts as won.",
        ],
        solution: Row {
            link: "re=open",
            claims: &[exactly(Metric::Recomputes, 40.0).claim(), exactly(Metric::Timeouts, 0.0).claim()],
            words: "Failing closed, every office counts the failed claim as lost and waits for a value nobody computes. Failing open, each office's leader treats it as won and refreshes: 40 recomputes, one per office (singleflight still coalesces the threads), and nobody waits on a lock that cannot be taken. Degrading would answer at once, but with no value.",
        },
        other: &[
            Row {
                link: "l=degrade",
                claims: &[exactly(Metric::Degraded, 8000.0).claim()],
                words: "Degrading would answer at once, but with no value.",
            },
        ],
        hint_runs: &[],
    },
    Drill {
        name: "claim-ttl",
        title: "Size the claim's TTL",
        level: Medium,
        lesson: "short-ttl",
        story: Row {
            link: "preset=short-ttl&ot=800&hc=1",
            claims: &[at_least(Metric::OverlappingRecomputes, 1.0).claim(), at_least(Metric::ReleasesRefused, 1.0).claim()],
            words: "A 400 ms recompute with an 800 ms origin timeout, and a 100 ms claim TTL that runs out mid-work. The first claim holder also crashes, and a dead holder's claim stalls the key for its whole TTL. No recompute may overlap another, and the crash must cost at most one round of timeouts.",
        },
        allowed: &["claim_ttl_ms"],
        goals: &[
            exactly(Metric::OverlappingRecomputes, 0.0),
            exactly(Metric::ReleasesRefused, 0.0),
            at_most(Metric::Timeouts, 200.0),
        ],
        hints: [
            "A claim that expires before the work ends lets a second office start the same work.",
            "The longest a holder can legitimately hold the claim is bounded by something you know.",
            "Size the TTL just above the origin timeout plus the write: about 900 ms. Much longer and a crashed holder stalls everyone.",
        ],
        solution: Row {
            link: "ct=900",
            claims: &[exactly(Metric::OverlappingRecomputes, 0.0).claim(), exactly(Metric::ReleasesRefused, 0.0).claim()],
            words: "The origin timeout bounds how long a recompute can run, so a TTL above it plus the write never expires under a live holder: no overlap, no refused release. But the TTL is also how long a crashed holder blocks the key; at 10 s every caller times out again and again, so size it just above the bound, not far above.",
        },
        other: &[
            Row {
                link: "ct=10000",
                claims: &[at_least(Metric::Timeouts, 201.0).claim()],
                words: "at 10 s every caller times out again and again",
            },
        ],
        hint_runs: &[],
    },
    Drill {
        name: "hung-origin",
        title: "A hung origin: answer within 300 ms, call it at most 3 times",
        level: Medium,
        lesson: "hang",
        story: Row {
            link: "preset=hang&w=steady&i=10&t=20&dur=10000&th=200&vt=2000&pf=no-deadline&ot=1000",
            claims: &[at_least(Metric::Pinned, 1.0).claim(), exactly(Metric::Timeouts, 0.0).claim()],
            words: "The origin never answers. The code has no deadlines, so every thread that asks is pinned, and with no deadline there is no origin timeout either: a call to the hung origin never ends. Give every caller an answer (a timeout counts) within 300 ms, and call the hung origin at most 3 times.",
        },
        allowed: &["pitfall-no-deadline", "deadline_ms", "origin_timeout_ms"],
        goals: &[
            exactly(Metric::Pinned, 0.0),
            at_most(Metric::MaxMs, 300.0),
            at_most(Metric::Recomputes, 3.0),
            exactly(Metric::Degraded, 0.0),
        ],
        hints: [
            "A wait with no end pins a thread for good.",
            "There are two clocks: the caller's deadline and the origin call's timeout. They bound different things.",
            "Remove the no-deadline pitfall, set the deadline to about 250 ms, and give the origin call a longer timeout (3000 ms).",
        ],
        solution: Row {
            link: "pf=&dl=250&ot=3000",
            claims: &[exactly(Metric::Pinned, 0.0).claim(), at_most(Metric::MaxMs, 250.0).claim(), exactly(Metric::Recomputes, 3.0).claim(), EVERY_CALLER_ANSWERED],
            words: "The caller's deadline bounds the wait: at 250 ms every caller gets its answer (a timeout) in time and nothing stays pinned. The origin timeout bounds the call: each time it fires, the flight and the claim are freed and the next caller starts another recompute at the hung origin. A 1 s timeout calls it 9 times in 10 s; 3 s keeps it to 3.",
        },
        other: &[
            Row {
                link: "pf=&dl=250&ot=1000",
                claims: &[exactly(Metric::Recomputes, 9.0).claim()],
                words: "A 1 s timeout calls it 9 times in 10 s",
            },
        ],
        hint_runs: &[],
    },
    Drill {
        name: "retry-storm",
        title: "Retries against a failing origin",
        level: Medium,
        lesson: "retry-storm",
        story: Row {
            link: "preset=retry-storm",
            claims: &[exactly(Metric::Requests, 200.0).claim(), at_least(Metric::Recomputes, 780.0).claim(), at_most(Metric::Recomputes, 800.0).claim()],
            words: "The origin fails for its first 2 s, and every caller retries a failed attempt 3 times, with nothing coalesced: 200 requests make nearly 800 origin calls. Call the origin at most 50 times and fail at most 20 requests.",
        },
        allowed: &["singleflight", "claim", "retries", "retry_backoff_ms"],
        goals: &[at_most(Metric::Recomputes, 50.0), at_most(Metric::Errors, 20.0)],
        hints: [
            "Each retry is one more call, unless it can join a call already running.",
            "Fewer retries fail more callers. When do the retries land, against the outage?",
            "Singleflight and the inner claim, and a backoff that outlasts the outage (retry_backoff_ms 1500).",
        ],
        solution: Row {
            link: "sf=1&c=inner&rbo=1500",
            claims: &[at_least(Metric::Recomputes, 5.0).claim(), at_most(Metric::Recomputes, 15.0).claim()],
            words: "Coalescing turns the retries of a key into one call per flight, and the claim into one for the fleet, so the failing origin sees about ten calls. But a retry 50 ms later still lands in the outage and fails: a backoff longer than the outage lets the last attempts succeed. Dropping the retries fails every caller; singleflight alone still makes 60 to 100 calls with the long backoff. The price is latency: the callers that succeed waited seconds.",
        },
        other: &[
            Row {
                link: "sf=1&rbo=1500",
                claims: &[at_least(Metric::Recomputes, 60.0).claim(), at_most(Metric::Recomputes, 100.0).claim()],
                words: "singleflight alone still makes 60 to 100 calls with the long backoff",
            },
        ],
        hint_runs: &[],
    },
    Drill {
        name: "holder-crash",
        title: "The claim holder dies: nobody times out",
        level: Medium,
        lesson: "holder-crash",
        story: Row {
            link: "preset=holder-crash",
            claims: &[at_least(Metric::Timeouts, 1.0).claim(), exactly(Metric::Recomputes, 1.0).claim()],
            words: "The office that wins the claim crashes without releasing it, and nobody may refresh until its 10 s TTL runs out. The TTL is locked (other teams share the claim). Keep every caller answered in time, with one recompute.",
        },
        allowed: &["loser", "stale_ms", "stale_while_revalidate"],
        goals: &[
            exactly(Metric::Timeouts, 0.0),
            at_most(Metric::Recomputes, 1.0),
            exactly(Metric::Degraded, 0.0),
        ],
        hints: [
            "While the dead claim blocks the refresh, what could a caller be given?",
            "The expired value is still there if you choose to keep it.",
            "Keep a stale copy for a minute (stale_ms 60000) and let the losers serve it.",
        ],
        solution: Row {
            link: "st=60000&l=stale",
            claims: &[exactly(Metric::Timeouts, 0.0).claim(), at_least(Metric::StaleServed, 1.0).claim(), NO_FALLBACKS],
            words: "The stall lasts the claim's TTL and the TTL is locked, so the fix is in what losers do meanwhile: with a stale window they answer from the old value at once, and nobody waits out the dead claim. Recomputing anyway would also answer, but at a recompute per loser.",
        },
        other: &[
            Row {
                link: "l=compute",
                claims: &[at_least(Metric::Recomputes, 2.0).claim()],
                words: "Recomputing anyway would also answer, but at a recompute per loser.",
            },
        ],
        hint_runs: &[],
    },
    Drill {
        name: "jitter",
        title: "Spread the expiries, not the recomputes",
        level: Medium,
        lesson: "jitter",
        story: Row {
            link: "preset=jitter&j=0",
            claims: &[at_least(Metric::OriginPeakConcurrency, 150.0).claim()],
            words: "200 keys written together expire together, and the origin sees over 150 recomputes at once. Bring the peak to 60 or below without adding recomputes overall: at most 2300 in the run.",
        },
        allowed: &["jitter"],
        goals: &[
            at_most(Metric::OriginPeakConcurrency, 60.0),
            at_most(Metric::Recomputes, 2300.0),
        ],
        hints: [
            "The keys expire together because they were written together with the same TTL.",
            "A random fraction on each TTL spreads the expiries. How large?",
            "About 0.3: enough to spread them, small enough that short TTLs do not add many recomputes.",
        ],
        solution: Row {
            link: "j=0.3",
            claims: &[at_most(Metric::OriginPeakConcurrency, 60.0).claim()],
            words: "Jitter draws each TTL from ttl x [1 - j, 1 + j], so keys written together expire over a window instead of at one instant, and the peak falls. But the mean TTL stays the same while the short draws refresh more often: at j = 1 some TTLs are near zero and the recomputes climb above 2240, close to the cap. A middle value spreads the peak at little cost.",
        },
        other: &[
            Row {
                link: "j=1",
                claims: &[at_least(Metric::Recomputes, 2240.0).claim()],
                words: "at j = 1 some TTLs are near zero and the recomputes climb above 2240",
            },
        ],
        hint_runs: &[
            Row {
                link: "j=0",
                claims: &[at_least(Metric::Recomputes, 1950.0).claim()],
                words: "small enough that short TTLs do not add many recomputes",
            },
            Row {
                link: "j=0.3",
                claims: &[at_most(Metric::Recomputes, 2300.0).claim()],
                words: "small enough that short TTLs do not add many recomputes",
            },
        ],
    },
    Drill {
        name: "hot-key",
        title: "One hot key on one Redis",
        level: Medium,
        lesson: "hot-key",
        story: Row {
            link: "preset=hot-key",
            claims: &[at_least(Metric::P99Ms, 250.0).claim()],
            words: "Every read of one hot key is a command on one Redis of finite throughput, and the queue there sets the latency: p99 over 250 ms. Bring p99 to 5 ms or below and Redis to at most 2100 round trips, while the value still refreshes at its TTL (at least 2 recomputes in the run).",
        },
        allowed: &["local_cache_ms"],
        goals: &[
            at_most(Metric::P99Ms, 5.0),
            at_most(Metric::RedisRoundTrips, 2100.0),
            at_least(Metric::Recomputes, 2.0),
        ],
        hints: [
            "The origin is not the bottleneck here: Redis's queue is.",
            "Most of those reads ask for the same value again within a few milliseconds.",
            "A short local copy in each instance (local_cache_ms about 50-500), well under the value's TTL.",
        ],
        solution: Row {
            link: "l1=500",
            claims: &[at_most(Metric::P99Ms, 5.0).claim(), EVERY_CALLER_ANSWERED],
            words: "A hot key's reads all land on one Redis shard, so at its throughput they queue. A local copy in each instance answers repeat reads from memory and sends Redis only the occasional refresh. Its lifetime is how stale an answer may be: keep it well under the value's TTL, or the local copies outlive the value and nobody refreshes it (at 5 s, none does in this run).",
        },
        other: &[
            Row {
                link: "l1=5000",
                claims: &[exactly(Metric::Recomputes, 0.0).claim()],
                words: "at 5 s, none does in this run",
            },
        ],
        hint_runs: &[
            Row {
                link: "l1=50",
                claims: &[at_most(Metric::P99Ms, 5.0).claim(), at_most(Metric::RedisRoundTrips, 2100.0).claim(), at_least(Metric::Recomputes, 2.0).claim(), EVERY_CALLER_ANSWERED],
                words: "A short local copy in each instance (local_cache_ms about 50-500)",
            },
            Row {
                link: "l1=0",
                claims: &[at_most(Metric::OriginPeakConcurrency, 1.0).claim(), at_least(Metric::P99Ms, 250.0).claim()],
                words: "The origin is not the bottleneck here: Redis's queue is.",
            },
        ],
    },
    Drill {
        name: "negative-cache",
        title: "A failing origin: forget the failure, damp the retries",
        level: Hard,
        lesson: "failure",
        story: Row {
            link: "preset=failure&pf=remember-failure",
            claims: &[at_least(Metric::RememberedFailures, 1.0).claim()],
            words: "The origin fails for its first 3 s. The code keeps a failed result in the flight map and hands it to every later caller, long after the origin recovered. Hand out no remembered failure, refill the cache, call the failing origin at most 10 times, and fail at most 600 requests.",
        },
        allowed: &["pitfall-remember-failure", "negative_ttl_ms"],
        goals: &[
            exactly(Metric::RememberedFailures, 0.0),
            at_least(Metric::ValuesWritten, 1.0),
            at_most(Metric::OriginFailures, 10.0),
            at_most(Metric::Errors, 600.0),
        ],
        hints: [
            "A failure should reach the callers waiting on it, then leave.",
            "Without memory at all, every request retries the failing origin. Damping needs a memory that ends.",
            "Remove the remember-failure pitfall and cache failures on purpose for about 500 ms (negative_ttl_ms).",
        ],
        solution: Row {
            link: "pf=&nt=500",
            claims: &[exactly(Metric::RememberedFailures, 0.0).claim()],
            words: "A flight that remembers its failure keeps failing after the origin recovers. Removing it alone retries the failing origin on nearly every request (about 20 failures). A short negative cache answers retries from the cached failure for 500 ms, so the origin sees a few calls during the outage; a long one (2 s) keeps serving the error after the origin is back and fails too many requests.",
        },
        other: &[
            Row {
                link: "pf=",
                claims: &[at_least(Metric::Recomputes, 15.0).claim()],
                words: "Removing it alone retries the failing origin on nearly every request (about 20 failures).",
            },
            Row {
                link: "pf=&nt=2000",
                claims: &[at_least(Metric::Errors, 601.0).claim()],
                words: "a long one (2 s) keeps serving the error after the origin is back and fails too many requests.",
            },
        ],
        hint_runs: &[],
    },
    Drill {
        name: "xfetch",
        title: "Refresh before expiry, but not too often",
        level: Hard,
        lesson: "xfetch",
        story: Row {
            link: "preset=xfetch&xfetch_beta=0",
            claims: &[at_least(Metric::Misses, 1.0).claim()],
            words: "Values expire every 5 s and readers wait on the recompute each time. No reader may find its value expired (no misses), and the origin may do at most 30 recomputes in the run.",
        },
        allowed: &["xfetch_beta"],
        goals: &[exactly(Metric::Misses, 0.0), at_most(Metric::Recomputes, 30.0)],
        hints: [
            "A miss happens because the first reader after expiry finds nothing fresh.",
            "A reader could refresh a value that is about to expire, behind its answer. How eagerly?",
            "XFetch with beta 1, the paper's default; larger refreshes far too early.",
        ],
        solution: Row {
            link: "xfetch_beta=1",
            claims: &[exactly(Metric::Misses, 0.0).claim()],
            words: "XFetch makes a reader of a fresh value refresh it early with a probability that rises as expiry nears, scaled by the recompute's duration and beta: the value is rewritten before it expires and nobody misses. Beta sets how early: at 3 the refreshes start so early that recomputes double, at 10 they run constantly.",
        },
        other: &[
            Row {
                link: "xfetch_beta=3",
                claims: &[at_least(Metric::Recomputes, 40.0).claim()],
                words: "at 3 the refreshes start so early that recomputes double",
            },
        ],
        hint_runs: &[],
    },
    Drill {
        name: "swr",
        title: "Nobody waits on a lock",
        level: Hard,
        lesson: "swr",
        story: Row {
            link: "preset=stale&rc=2000&l=wait",
            claims: &[exactly(Metric::Timeouts, 8000.0).claim()],
            words: "The same 2 s recompute and stale copy as before, but now every caller must be answered at once: p99 at most 5 ms, no timeouts, one recompute. Serving stale from the losers is not enough: the refreshing office's own threads still wait.",
        },
        allowed: &["loser", "claim", "stale_while_revalidate"],
        goals: &[
            exactly(Metric::Timeouts, 0.0),
            at_most(Metric::P99Ms, 5.0),
            at_most(Metric::Recomputes, 1.0),
            exactly(Metric::Degraded, 0.0),
        ],
        hints: [
            "Who still waits when the losers serve stale? The winner's own threads.",
            "The caller that triggers the refresh need not be the one who waits for it.",
            "Stale-while-revalidate: answer stale at once and refresh behind the answer.",
        ],
        solution: Row {
            link: "swr=1",
            claims: &[exactly(Metric::Recomputes, 1.0).claim(), exactly(Metric::Timeouts, 0.0).claim(), at_most(Metric::P99Ms, 5.0).claim(), EVERY_CALLER_ANSWERED, NO_FALLBACKS],
            words: "With stale-while-revalidate every request, the refreshing one included, gets the stale value at once; the claim guards only the refresh running behind, so one recompute happens and nobody waits. The losers' stale policy alone leaves the winning office's 200 threads waiting on the 2 s recompute until their 1 s deadline.",
        },
        other: &[
            Row {
                link: "l=stale",
                claims: &[exactly(Metric::Timeouts, 200.0).claim()],
                words: "The losers' stale policy alone leaves the winning office's 200 threads waiting on the 2 s recompute until their 1 s deadline.",
            },
        ],
        hint_runs: &[],
    },
    Drill {
        name: "cheap-recompute",
        title: "A cheap recompute: the fewest Redis commands",
        level: Hard,
        lesson: "cheap",
        story: Row {
            link: "preset=cheap&c=outer",
            claims: &[at_least(Metric::RedisRoundTrips, 24000.0).claim()],
            words: "A 20 ms indexed query, and a claim outside singleflight costing three Redis commands per request. Use the fewest Redis commands (at most 8080 round trips) while the origin sees at most 40 calls and nobody times out.",
        },
        allowed: &["singleflight", "claim", "loser"],
        goals: &[
            at_most(Metric::Recomputes, 40.0),
            at_most(Metric::RedisRoundTrips, 8080.0),
            exactly(Metric::Timeouts, 0.0),
        ],
        hints: [
            "Every request GETs the value first; those round trips stay whatever you do.",
            "40 recomputes of a 20 ms query are no load. What is the claim buying here?",
            "Use singleflight alone: turn the claim off.",
        ],
        solution: Row {
            link: "c=off",
            claims: &[exactly(Metric::RedisRoundTrips, 8080.0).claim()],
            words: "For a cheap query, one copy per instance is no load, so the claim buys nothing but Redis commands: each claim, poll and release is a round trip. Singleflight alone coalesces the threads for free and leaves the GETs and one write per instance. Even the inner claim adds commands over that.",
        },
        other: &[
            Row {
                link: "c=inner",
                claims: &[at_least(Metric::RedisRoundTrips, 8081.0).claim()],
                words: "Even the inner claim adds commands over that.",
            },
        ],
        hint_runs: &[
            Row {
                link: "c=off",
                claims: &[exactly(Metric::Recomputes, 40.0).claim(), at_most(Metric::OriginPeakConcurrency, 40.0).claim()],
                words: "40 recomputes of a 20 ms query are no load.",
            },
        ],
    },
    Drill {
        name: "cold-start",
        title: "A cold restart: bound the origin, shed little",
        level: Hard,
        lesson: "cold",
        story: Row {
            link: "preset=cold&k=60&adm=0&sf=0&c=off",
            claims: &[exactly(Metric::Requests, 1000.0).claim(), at_least(Metric::Timeouts, 1.0).claim()],
            words: "A restart empties the cache; 1000 requests ask for 60 hot keys at once, with no protection at all. Keep the origin at 40 concurrent recomputes or fewer, shed at most 100 requests (10 %), and let nobody time out.",
        },
        allowed: &["singleflight", "claim", "loser", "admission", "admission_wait_ms"],
        goals: &[
            at_most(Metric::OriginPeakConcurrency, 40.0),
            at_most(Metric::AdmissionShed, 100.0),
            exactly(Metric::Timeouts, 0.0),
        ],
        hints: [
            "Admission control alone bounds the origin, but sheds most requests: they are duplicates.",
            "With few hot keys, coalescing removes most of the work before admission sees it.",
            "Singleflight and the inner claim, 4 admission permits per instance, and a longer queue (500 ms).",
        ],
        solution: Row {
            link: "sf=1&c=inner&adm=4&aw=500",
            claims: &[exactly(Metric::Recomputes, 60.0).claim(), at_most(Metric::OriginPeakConcurrency, 40.0).claim()],
            words: "Sixty keys need only 60 recomputes; the rest are duplicates that coalescing removes. Four permits per instance bound the origin at 40; the 500 ms queue lets the second round of recomputes wait for a permit instead of being shed. Serving stale as the losers' policy would hurt here: after a restart there is no stale copy, so the losers compute and the shed count climbs.",
        },
        other: &[
            Row {
                link: "sf=1&c=inner&adm=4&aw=500&l=stale",
                claims: &[at_least(Metric::AdmissionShed, 1.0).claim()],
                words: "Serving stale as the losers' policy would hurt here: after a restart there is no stale copy, so the losers compute and the shed count climbs.",
            },
        ],
        hint_runs: &[
            Row {
                link: "adm=4",
                claims: &[at_most(Metric::OriginPeakConcurrency, 40.0).claim(), at_least(Metric::AdmissionShed, 501.0).claim()],
                words: "Admission control alone bounds the origin, but sheds most requests",
            },
        ],
    },
    Drill {
        name: "fragile-origin",
        title: "Redis is down and the origin is fragile",
        level: Hard,
        lesson: "redis-down",
        story: Row {
            link: "preset=redis-down&cap=4",
            claims: &[exactly(Metric::OriginPeakConcurrency, 40.0).claim(), at_least(Metric::Timeouts, 4000.0).claim()],
            words: "Every Redis command errors, and the origin absorbs only 4 recomputes at once before it slows. Failing open sends it 40 and half the callers time out. Keep the origin at 4 or fewer concurrent recomputes with no timeouts and no errors.",
        },
        allowed: &["redis_error", "loser", "admission"],
        goals: &[
            at_most(Metric::OriginPeakConcurrency, 4.0),
            exactly(Metric::Timeouts, 0.0),
            exactly(Metric::Errors, 0.0),
        ],
        hints: [
            "Failing open is right only when the origin can take one recompute per instance.",
            "If nobody may win the claim, somebody still has to answer the callers.",
            "Fail closed and degrade: the claim that errors counts as lost, and losers answer at once with a degraded response.",
        ],
        solution: Row {
            link: "re=closed&l=degrade",
            claims: &[exactly(Metric::Degraded, 8000.0).claim(), exactly(Metric::Recomputes, 0.0).claim()],
            words: "Fail open versus closed is a judgement about the origin: open lets each office refresh, 40 at once, which a 4-wide origin cannot take. Closed keeps the origin safe, but then nobody wins and waiting losers time out, so they must degrade: an explicit, quick answer without the value, until Redis returns. Admission per instance still allows one recompute per office, 40 in all.",
        },
        other: &[],
        hint_runs: &[],
    },
    Drill {
        name: "cold-skewed",
        title: "A cold restart of 5,000 skewed keys",
        level: Hard,
        lesson: "cold-skew",
        story: Row {
            link: "preset=cold-skew&key_skew=1.4",
            claims: &[exactly(Metric::Requests, 1000.0).claim()],
            words: "A restart empties the cache and 1000 requests ask for 5000 keys at once, a few of them hot. Coalescing is on, with 6 admission permits per instance that shed whatever waits 100 ms. Keep the origin at 40 concurrent recomputes or fewer, shed under 10 % (at most 100), and time out at most 10.",
        },
        allowed: &["admission", "admission_wait_ms", "singleflight", "claim"],
        goals: &[
            at_most(Metric::OriginPeakConcurrency, 40.0),
            at_most(Metric::AdmissionShed, 100.0),
            at_most(Metric::Timeouts, 10.0),
        ],
        hints: [
            "Ten instances share the origin: its bound is the permits per instance times ten.",
            "Fewer permits shed more, unless a request may wait longer for one. How long, against the 1 s deadline?",
            "4 permits per instance and a 600 ms queue; keep the claim, it merges the hot keys across instances.",
        ],
        solution: Row {
            link: "adm=4&aw=600",
            claims: &[at_most(Metric::OriginPeakConcurrency, 40.0).claim()],
            words: "Four permits per instance bound the origin at 40. With fewer permits the queue is longer, so a 100 ms wait sheds requests a longer wait would have answered; 600 ms lets most wait their turn and still answer inside the 1 s deadline, while a full second's wait turns the shed into timeouts. The claim matters too: without it each instance recomputes the hot keys itself and sheds more.",
        },
        other: &[
            Row {
                link: "adm=4&aw=1000",
                claims: &[at_least(Metric::Timeouts, 1.0).claim()],
                words: "a full second's wait turns the shed into timeouts",
            },
            Row {
                link: "adm=4&aw=600&c=off",
                claims: &[at_least(Metric::AdmissionShed, 1.0).claim()],
                words: "without it each instance recomputes the hot keys itself and sheds more.",
            },
        ],
        hint_runs: &[
            Row {
                link: "adm=2&aw=600",
                claims: &[at_least(Metric::AdmissionShed, 80.0).claim()],
                words: "Fewer permits shed more",
            },
            Row {
                link: "adm=4&aw=600",
                claims: &[at_most(Metric::AdmissionShed, 50.0).claim()],
                words: "Fewer permits shed more",
            },
        ],
    },
    Drill {
        name: "open-loop-hang",
        title: "Users keep arriving while the origin hangs",
        level: Hard,
        lesson: "open-loop",
        story: Row {
            link: "preset=open-loop",
            claims: &[at_least(Metric::Rejected, 1.0).claim()],
            words: "1000 requests a second arrive whatever the service does, and the origin hangs for 3 s just as the value expires. The threads fill, the accept queue backs up and requests are turned away. Turn nobody away, and let nobody time out or see an error.",
        },
        allowed: &["stale_ms", "loser", "stale_while_revalidate", "deadline_ms"],
        goals: &[
            exactly(Metric::Rejected, 0.0),
            exactly(Metric::Timeouts, 0.0),
            exactly(Metric::Errors, 0.0),
        ],
        hints: [
            "A thread waiting on the hung refresh is a thread no new arrival can use.",
            "A shorter deadline frees threads, but as timeouts. What could a caller get at once?",
            "Keep a stale copy (stale_ms 10000) and serve it while the refresh runs behind: stale-while-revalidate.",
        ],
        solution: Row {
            link: "st=10000&swr=1",
            claims: &[exactly(Metric::Rejected, 0.0).claim(), exactly(Metric::Timeouts, 0.0).claim(), EVERY_CALLER_ANSWERED, NO_FALLBACKS],
            words: "Open-loop arrivals do not slow down when the service does, so every thread held by the hung refresh is lost capacity. With a stale copy and stale-while-revalidate every caller is answered at once and only the refresh waits on the origin. Serving stale from the losers alone still holds the winning instance's threads, and it turns arrivals away; a short deadline frees the threads but answers them with timeouts.",
        },
        other: &[
            Row {
                link: "st=10000&l=stale",
                claims: &[at_least(Metric::Rejected, 1.0).claim()],
                words: "Serving stale from the losers alone still holds the winning instance's threads, and it turns arrivals away",
            },
            Row {
                link: "dl=100",
                claims: &[at_least(Metric::Timeouts, 1.0).claim()],
                words: "a short deadline frees the threads but answers them with timeouts.",
            },
        ],
        hint_runs: &[],
    },
    Drill {
        name: "redis-hangs",
        title: "A 2 s recompute and a Redis that hangs",
        level: Hard,
        lesson: "redis-hang",
        story: Row {
            link: "preset=redis-hang&rc=2000",
            claims: &[exactly(Metric::Timeouts, 8000.0).claim()],
            words: "Redis does not error, it hangs: every command waits out the client's 1.5 s timeout, and the recompute takes 2 s. Keep every caller under 300 ms, the origin under 3 calls, and let nobody time out or see an error.",
        },
        allowed: &[
            "redis_timeout_ms",
            "redis_breaker_ms",
            "redis_error",
            "loser",
            "deadline_ms",
        ],
        goals: &[
            at_most(Metric::MaxMs, 300.0),
            at_most(Metric::Recomputes, 3.0),
            exactly(Metric::Timeouts, 0.0),
            exactly(Metric::Errors, 0.0),
        ],
        hints: [
            "Fail open needs Redis to fail fast; a hang is not fast.",
            "A 2 s recompute cannot answer anyone within 300 ms, so what can?",
            "A short client timeout (50 ms) and a breaker, fail closed, and degrade the losers.",
        ],
        solution: Row {
            link: "rto=50&rbk=5000&re=closed&l=degrade",
            claims: &[at_most(Metric::MaxMs, 300.0).claim(), EVERY_CALLER_ANSWERED],
            words: "A hung Redis holds every command for the client's timeout, so the timeout must be short, and a breaker stops paying it on every request. Failing open would then send every office to a 2 s origin: 40 calls, and nobody answered in time. Failing closed keeps the origin at rest, and the losers degrade at once instead of waiting for a value nobody computes. A shorter deadline alone just turns the waits into timeouts.",
        },
        other: &[
            Row {
                link: "rto=50&rbk=5000&re=open",
                claims: &[exactly(Metric::Recomputes, 40.0).claim(), exactly(Metric::Timeouts, 8000.0).claim()],
                words: "Failing open would then send every office to a 2 s origin: 40 calls, and nobody answered in time.",
            },
            Row {
                link: "dl=100",
                claims: &[exactly(Metric::Timeouts, 8000.0).claim()],
                words: "A shorter deadline alone just turns the waits into timeouts.",
            },
        ],
        hint_runs: &[],
    },
];
