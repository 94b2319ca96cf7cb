//! A sentence about a run still in progress says so, or waits: mid-run the
//! lesson either says what to watch (no number of the run yet) or marks
//! its numbers "so far" (issue 40: the candidate read "1 recompute ran"
//! at t = 11.9 ms of a run that ends at 40). Over every preset, at small
//! sizes and with each curveball thrown mid-run, at moments across the
//! run, over seeds.

use catalogue::{interview, lesson};
use stampede::scenario::Scenario;
use stampede::sim::Fleet;

fn presets() -> Vec<&'static str> {
    stampede::scenario::preset_names()
}

/// The lesson at `t` (µs) of `s` run with `seed`, if the run is not over.
fn mid_run(s: &Scenario, base: Option<&str>, seed: u64, t: u64) -> Option<String> {
    let mut fleet = Fleet::new(s, seed);
    fleet.advance_to(t, usize::MAX);
    if fleet.is_quiet() {
        return None;
    }
    let l = lesson::lesson(s, base, &fleet.report(), false, None);
    Some(l.sentence)
}

fn check(s: &Scenario, base: Option<&str>, seed: u64, what: &str) {
    let end = Fleet::new(s, seed).run().elapsed_ms;
    let end_us = (end * 1000.0) as u64;
    for k in 1..=7u64 {
        let t = end_us * k / 8;
        let Some(sentence) = mid_run(s, base, seed, t) else {
            continue;
        };
        assert!(
            catalogue::progress::says_in_progress(&sentence),
            "{what} seed {seed} at {} ms of {end} ms: mid-run the lesson reads {sentence:?}",
            t / 1000
        );
    }
}

#[test]
fn mid_run_sentences_say_so() {
    for name in presets() {
        let full = stampede::scenario::preset(name).unwrap();
        let small = Scenario {
            instances: full.instances.min(6),
            threads: full.threads.min(20),
            ..full.clone()
        };
        for seed in 1..=4 {
            check(&small, Some(name), seed, name);
        }
    }
}

#[test]
fn mid_run_sentences_after_a_curveball_say_so() {
    let (card, _, _) = Scenario::from_query("preset=burst&i=6&t=20");
    for ball in &interview::CURVEBALLS {
        for seed in 1..=4 {
            let mut fleet = Fleet::new(&card, seed);
            fleet.advance_to(3_000, usize::MAX);
            if interview::throw(&mut fleet, ball, 3).is_err() {
                continue;
            }
            let s = fleet.scenario().clone();
            check(&s, Some("burst"), seed, ball.kind);
        }
    }
}
