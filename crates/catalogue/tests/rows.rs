//! One row shape, one test: every statement the catalogue makes about a
//! run ([`catalogue::rows`]: a tour step, a preset's lesson, a drill's
//! words, the kit's points, red flags and follow-ups) is played on its link
//! on the seeds its table is graded on, and every claim it makes holds.
//! What a table checks beyond that (words against numbers, contradictions,
//! a claim of the number a step points at) stays in the table's own tests.

use catalogue::claims::Run;
use catalogue::listed::{Listed, Seeds};
use proptest::prelude::*;
use stampede::{Fleet, Report};
use std::collections::HashMap;
use std::sync::{Mutex, OnceLock};

/// The run of `s` on `seed` to its end, run once for the whole test (many
/// rows play the same link).
fn run(s: &stampede::scenario::Scenario, seed: u64) -> Report {
    static RUNS: OnceLock<Mutex<HashMap<String, Report>>> = OnceLock::new();
    let runs = RUNS.get_or_init(Default::default);
    // The whole scenario, every knob and fault, and the seed.
    let key = format!("{s:?} seed {seed}");
    if let Some(r) = runs.lock().unwrap().get(&key) {
        return r.clone();
    }
    let r = Fleet::new(s, seed).run();
    runs.lock().unwrap().insert(key, r.clone());
    r
}

/// Every claim of the row that does not hold on its run on `seed` (at its
/// pause, if its table checks it there; against its contrast, if it has
/// one), named with the row.
fn wrong_on(l: &Listed, seed: u64) -> Vec<String> {
    let r = match l.pause_ms {
        Some(ms) => {
            let mut fleet = Fleet::new(&l.scenario, seed);
            fleet.advance_to(u64::from(ms) * 1000, usize::MAX);
            fleet.report()
        }
        None => run(&l.scenario, seed),
    };
    let then = l.contrast.as_ref().map(|(c, seed)| run(c, *seed));
    let at = Run::new(&l.scenario, &r, l.pause_ms.is_none()).against(then.as_ref());
    l.row
        .claims
        .iter()
        .filter(|c| !c.holds(&at))
        .map(|c| {
            format!(
                "{} (?{}, seed {seed}): \"{}\" claims \"{c:?}\", which does not hold",
                l.from, l.row.link, l.row.words
            )
        })
        .collect()
}

/// The rows graded on seeds of their own, checked once for every case.
fn wrong_on_their_seeds() -> &'static [String] {
    static WRONG: OnceLock<Vec<String>> = OnceLock::new();
    WRONG.get_or_init(|| {
        let mut wrong = Vec::new();
        for l in catalogue::rows() {
            if let Seeds::These(seeds) = &l.seeds {
                for &seed in seeds {
                    wrong.extend(wrong_on(&l, seed));
                }
            }
        }
        wrong
    })
}

/// Every row's link reads cleanly, and no two rows share a name.
#[test]
fn every_row_is_a_clean_link_of_a_name_of_its_own() {
    let rows = catalogue::rows();
    let mut names = std::collections::BTreeSet::new();
    for l in &rows {
        assert!(
            l.notices.is_empty(),
            "{}: ?{}: {:?}",
            l.from,
            l.row.link,
            l.notices
        );
        assert!(names.insert(l.from.clone()), "{} twice", l.from);
    }
    let of = |table: &str| rows.iter().filter(|l| l.from.starts_with(table)).count();
    assert!(of("kit ") > 100, "{} rows of the kit", of("kit "));
    assert_eq!(of("preset "), catalogue::presets::PRESETS.len());
    let steps = catalogue::tour::STEPS;
    let sandboxes = steps
        .iter()
        .filter(|s| matches!(s.action, Some(catalogue::tour::Action::Sandbox(_))))
        .count();
    assert_eq!(of("tour "), steps.len() + sandboxes);
    let drills = catalogue::drill::DRILLS;
    let drill_rows: usize = drills
        .iter()
        .map(|d| 2 + d.other.len() + d.hint_runs.len())
        .sum();
    assert_eq!(of("drill "), drill_rows);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(6))]
    /// Every row's claims hold on its run: on every seed its table is
    /// graded on, or, for words shown whatever the seed, on any seed.
    #[test]
    fn every_rows_claims_hold_on_the_seeds_its_table_is_graded_on(seed in any::<u64>()) {
        let mut wrong = wrong_on_their_seeds().to_vec();
        for l in catalogue::rows().iter().filter(|l| l.seeds == Seeds::Any) {
            wrong.extend(wrong_on(l, seed));
        }
        prop_assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    }
}
