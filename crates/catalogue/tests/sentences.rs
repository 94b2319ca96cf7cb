//! The lesson of any random scenario is made of its run: every clause holds
//! its claims, every number is a counter or a knob. Over the same random
//! scenarios as the core's invariants.

#[path = "../../stampede/tests/strategies/mod.rs"]
mod strategies;

use catalogue::{claims, lesson};
use proptest::prelude::*;
use stampede::scenario::Scenario;
use stampede::sim::Fleet;
use strategies::{cfg, scenario};

/// Every way the run, its contrast and the knobs can write a number.
fn writable(s: &Scenario, reports: &[&stampede::Report]) -> Vec<String> {
    let mut out = Vec::new();
    for r in reports {
        for &m in stampede::Metric::ALL {
            let v: f64 = r.text(m).parse().unwrap();
            out.push(lesson::shown(m, v).trim_end_matches(" ms").to_string());
        }
        // The ledger's cells and columns (how many ended each way, and why).
        out.extend(lesson::ledger_numbers(r));
    }
    for k in stampede::scenario::knob_names() {
        let v = s.get(k).unwrap();
        if let Ok(n) = v.parse::<u64>() {
            out.push(lesson::count(n));
        }
        if let Ok(f) = v.parse::<f64>() {
            out.push(lesson::count((f * 100.0).round() as u64));
            out.push(v.clone());
        }
        // A list knob (the faults) states the numbers in its text.
        out.extend(
            v.split(|c: char| !c.is_ascii_digit())
                .filter(|n| !n.is_empty())
                .map(String::from),
        );
    }
    out
}

fn any_base() -> impl Strategy<Value = Option<&'static str>> {
    prop_oneof![
        Just(None),
        (0..stampede::scenario::Preset::ALL.len())
            .prop_map(|i| Some(stampede::scenario::Preset::ALL[i].name())),
    ]
}

proptest! {
    #![proptest_config(cfg())]

    /// The lesson of any scenario, made from any preset, is true to its run:
    /// its value is its counter's, every number in its sentence is a
    /// counter of the run or of its contrast, or a knob; a pending number
    /// is a zero; what it says it needs it lacks, and its link is a good one.
    #[test]
    fn every_lesson_is_made_of_the_run(s in scenario(), seed in any::<u64>(), base in any_base()) {
        let r = Fleet::new(&s, seed).run();
        let then = lesson::contrast(&s, base).map(|c| Fleet::new(&c, seed).run());
        let l = lesson::lesson(&s, base, &r, true, then.as_ref());
        prop_assert_eq!(Some(l.value), stampede::metrics::value(&r, l.metric), "{:?}", l);
        prop_assert!(!l.pending);
        // Every clause holds its claims on this run (the claims issue).
        let run = claims::Run::new(&s, &r, true);
        prop_assert_eq!(claims::check(&run, &l.clauses), Ok(()), "{}", l.sentence);
        // Whatever its story, it says how the requests ended where not
        // every one got a value, the largest other outcome included.
        prop_assert_eq!(claims::tells_how_they_ended(&run, &l.clauses), Ok(()), "{}", l.sentence);
        prop_assert_eq!(claims::text(&l.clauses), l.sentence.clone());
        let mut reports = vec![&r];
        reports.extend(then.as_ref());
        let ok = writable(&s, &reports);
        for n in lesson::numbers_in(&l.sentence) {
            prop_assert!(ok.contains(&n), "{n} in {:?} is neither a counter nor a knob", l.sentence);
        }
        if let Some(needs) = &l.needs {
            prop_assert!(l.value == 0.0 || !l.damage, "{:?}", l);
            prop_assert!(Scenario::from_query(needs.link).2.is_empty(), "{}", needs.link);
        }
        // Mid-run, the same counters: pending only while the counter is 0.
        let live = lesson::lesson(&s, base, &r, false, None);
        prop_assert_eq!(live.metric, l.metric);
        prop_assert!(!live.pending || live.value == 0.0, "{:?}", live);
    }
}

#[test]
fn numbers_in_reads_what_a_sentence_writes() {
    assert_eq!(
        lesson::numbers_in("8,000 claim attempts, a p99 of 56.3 ms, 30 % and 1."),
        ["8,000", "56.3", "30", "1"]
    );
}
