//! Every row of the catalogue: each statement a table makes about a run (a
//! [`Row`]: a link, the claims its run makes, the words that state them),
//! with where it comes from and how its table plays it. One host test
//! (`tests/rows.rs`) plays every row's link on the seeds its table is
//! graded on and checks each claim.
//!
//! Not listed: the A/B view's comparisons ([`crate::presets::COMPARISONS`]),
//! whose two sides are scenarios built in code, not links, and whose claim
//! is of one side against the other (their own test in `tests/lessons.rs`).

use crate::claims::Row;
use crate::drill::{self, DRILLS, SEEDS};
use crate::interview;
use crate::presets::PRESETS;
use crate::tour;
use stampede::scenario::{Notice, Scenario};

/// The seeds a row's table is graded on.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Seeds {
    /// Every one of these.
    These(Vec<u64>),
    /// Any seed: the words are shown whatever the run's seed.
    Any,
}

/// A row, where it comes from, and how its table plays it.
#[derive(Clone, Debug)]
pub struct Listed {
    /// Where it comes from: `kit question 4: red flag 1`.
    pub from: String,
    pub row: Row,
    /// The scenario its link plays, and what reading the link noticed
    /// (nothing, for every row of the catalogue: a test checks it).
    pub scenario: Scenario,
    pub notices: Vec<Notice>,
    pub seeds: Seeds,
    /// Where its table checks it mid-run (a tour step's pause, in ms of
    /// virtual time), not yet ended; else at its run's end.
    pub pause_ms: Option<u32>,
    /// The run its claims compare it with ([`crate::claims::Run::against`]:
    /// a tour step's contrast), and that run's seed.
    pub contrast: Option<(Scenario, u64)>,
}

/// A row whose link is a whole share link's query, played to its end.
fn linked(from: String, row: Row, seeds: Seeds) -> Listed {
    let (scenario, _, notices) = Scenario::from_query(row.link);
    to_end(from, row, (scenario, notices), seeds)
}

/// A row played on `scenario` (its link as read, with what reading it
/// noticed) to its end.
fn to_end(
    from: String,
    row: Row,
    (scenario, notices): (Scenario, Vec<Notice>),
    seeds: Seeds,
) -> Listed {
    Listed {
        from,
        row,
        scenario,
        notices,
        seeds,
        pause_ms: None,
        contrast: None,
    }
}

/// The tour's: each step on its link's own seed, at its reveal (its
/// pause, or its end), against its contrast where its words quote one;
/// and each step's sandbox action, on its link's seed, at its end.
fn tour() -> Vec<Listed> {
    let mut out = Vec::new();
    for level in tour::Level::ALL {
        for (k, step) in tour::steps(level).enumerate() {
            let (scenario, seed, mut notices) = Scenario::from_query(step.row.link);
            let contrast = step.contrast.map(|q| {
                let (c, seed, more) = Scenario::from_query(q);
                notices.extend(more);
                (c, seed)
            });
            out.push(Listed {
                from: format!("tour {}", tour::place_name((level, k))),
                row: step.row,
                scenario,
                notices,
                seeds: Seeds::These(vec![seed]),
                pause_ms: step.pause_ms,
                contrast,
            });
            if let Some(tour::Action::Sandbox(row)) = step.action {
                let from = format!("tour {}: its action", tour::place_name((level, k)));
                let seed = Scenario::from_query(row.link).1;
                out.push(linked(from, row, Seeds::These(vec![seed])));
            }
        }
    }
    out
}

/// Every row of the catalogue, table by table: the tour's, the presets'
/// (a lesson is shown for its preset whatever the seed: played on any
/// seed, to its end), the drills' and the kit's.
pub fn rows() -> Vec<Listed> {
    let mut out = tour();
    out.extend(
        PRESETS
            .iter()
            .map(|p| linked(format!("preset {}", p.name), p.row, Seeds::Any)),
    );
    out.extend(drills());
    out.extend(kit());
    out
}

/// The kit's: each question's points that a run shows, its red flags and
/// its follow-ups, played on every seed of [`SEEDS`] to their end.
fn kit() -> Vec<Listed> {
    let mut out = Vec::new();
    let seeds = || Seeds::These(SEEDS.to_vec());
    for q in interview::questions() {
        let n = q.number;
        for l in &q.levels {
            for (i, p) in l.names.iter().enumerate() {
                if let Some(row) = p.shown() {
                    let from = format!("kit question {n}: {} point {}", l.name, i + 1);
                    out.push(linked(from, row, seeds()));
                }
            }
        }
        for (i, f) in q.red_flags.iter().enumerate() {
            let from = format!("kit question {n}: red flag {}", i + 1);
            out.push(linked(from, f.row, seeds()));
        }
        for (i, f) in q.follow_ups.iter().enumerate() {
            let from = format!(
                "kit question {n}: follow-up {} (question {})",
                i + 1,
                f.question
            );
            out.push(linked(from, f.row, seeds()));
        }
    }
    out
}

/// The drills': each drill's story (its situation's run), its solution's
/// words (the solved run), the reasoning's other choices (the situation
/// with their query, locked knobs too) and the hints' runs (the situation
/// with a query of the drill's own levers, as a learner's link is read),
/// played on every seed of [`SEEDS`] to their end.
fn drills() -> Vec<Listed> {
    let mut out = Vec::new();
    for d in DRILLS {
        let listed = |from: String, row, read| {
            let from = format!("drill {}: {from}", d.name);
            to_end(from, row, read, Seeds::These(SEEDS.to_vec()))
        };
        let whole = |link: &str| {
            let (s, _, notices) = Scenario::from_query(link);
            (s, notices)
        };
        out.push(listed("story".into(), d.story, whole(d.story.link)));
        let solved = drill::apply(d, d.solution.link);
        out.push(listed("solution".into(), d.solution, solved));
        for o in d.other {
            let with = whole(&format!("{}&{}", d.story.link, o.link));
            out.push(listed(format!("reasoning, with {}", o.link), *o, with));
        }
        for h in d.hint_runs {
            let n = d.hints.iter().position(|t| t.contains(h.words));
            let hint = n.map_or("a hint".to_string(), |n| format!("hint {}", n + 1));
            let with = drill::apply(d, h.link);
            out.push(listed(format!("{hint}, with {}", h.link), *h, with));
        }
    }
    out
}
