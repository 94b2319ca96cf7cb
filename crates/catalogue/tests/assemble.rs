//! "Write it yourself": the table of blocks, the storms and their grades,
//! and the code an assembly shows (issue 39 §3).

use catalogue::assemble::{self, Assembly, Sets, Storm, BLOCKS};
use catalogue::claims::{check, tells_how_they_ended, Run};
use catalogue::examples::{self, EXAMPLES};
use proptest::prelude::*;
use stampede::scenario::{knob_names, Pitfalls, Scenario};

const SEEDS: std::ops::RangeInclusive<u64> = 1..=6;

fn wrong_ids() -> Vec<&'static str> {
    BLOCKS
        .iter()
        .flat_map(|b| b.variants.iter().filter(|v| !v.right).map(|v| v.id))
        .collect()
}

/// Each block has its right variant first and only there; ids are unique;
/// every variant sets one knob or pitfall the core has, to a value it
/// takes; no two wrong variants set the same thing; the six mistakes of
/// the issue are all there.
#[test]
fn the_table_maps_each_variant_to_one_knob_or_pitfall() {
    let mut ids = std::collections::BTreeSet::new();
    let mut wrong_sets = Vec::new();
    for b in &BLOCKS {
        assert!(ids.insert(b.id), "block id {} twice", b.id);
        assert!(b.variants[0].right, "{}: the right variant first", b.id);
        assert_eq!(b.variants.iter().filter(|v| v.right).count(), 1, "{}", b.id);
        for v in b.variants {
            assert!(ids.insert(v.id), "variant id {} twice", v.id);
            match v.sets {
                Sets::Knob(k, value) => {
                    assert!(knob_names().any(|n| n == k), "{}: no knob {k}", v.id);
                    let mut s = Scenario::default();
                    s.set(k, value).unwrap();
                }
                Sets::Pitfall(p, _) => assert!(Pitfalls::NAMES.contains(&p), "{}: {p}", v.id),
                Sets::Always => assert_eq!(b.variants.len(), 1, "{}: a choice sets nothing", v.id),
            }
            if !v.right {
                assert!(
                    !wrong_sets.contains(&v.sets),
                    "{}: {:?} twice",
                    v.id,
                    v.sets
                );
                wrong_sets.push(v.sets);
                for lang in ["go", "python", "typescript", "rust"] {
                    assert!(
                        v.code.iter().any(|(l, _)| *l == lang),
                        "{}: no {lang}",
                        v.id
                    );
                }
            }
        }
    }
    let mut want = vec![
        Sets::Pitfall("plain-del", true),
        Sets::Pitfall("no-expiry", true),
        Sets::Pitfall("no-deadline", true),
        Sets::Knob("claim", "outer"),
        Sets::Pitfall("remember-failure", true),
        Sets::Knob("redis_error", "closed"),
    ];
    want.sort_by_key(|s| format!("{s:?}"));
    wrong_sets.sort_by_key(|s| format!("{s:?}"));
    assert_eq!(wrong_sets, want);
}

/// A wrong variant changes exactly its own setting of the storm's
/// scenario; the right assembly leaves the storm's scenario as it is.
#[test]
fn an_assembly_sets_only_what_its_variants_say() {
    for storm in Storm::ALL {
        assert_eq!(Assembly::correct().scenario(storm), storm.scenario());
        for id in wrong_ids() {
            let s = Assembly::with(id).unwrap().scenario(storm);
            let mut want = storm.scenario();
            let (b, v) = assemble::variant(id).unwrap();
            assemble::apply(&mut want, BLOCKS[b].variants[v].sets);
            assert_eq!(s, want, "{id}");
            assert_ne!(s, storm.scenario(), "{id} changes nothing");
        }
    }
}

/// The card's read path passes all three storms, on every seed.
#[test]
fn the_right_assembly_passes_every_storm() {
    for seed in SEEDS {
        for g in assemble::run_all(&Assembly::correct(), seed) {
            assert!(
                g.pass,
                "seed {seed} {:?}: {}",
                g.storm,
                assemble::sentence(&g)
            );
        }
    }
}

/// Each wrong variant, alone among right ones, fails a storm, the same
/// one on every seed, and its sentence names what it did.
#[test]
fn each_wrong_variant_fails_a_storm() {
    let names = [
        (
            "claim-outside",
            Storm::Burst,
            "claim attempts for 3 offices",
        ),
        ("claim-no-px", Storm::Holder, "never expired"),
        ("fail-closed", Storm::RedisDown, "timed out"),
        ("plain-del", Storm::Holder, "deleted another office's claim"),
        ("poll-forever", Storm::Holder, "past its 2000 ms deadline"),
        (
            "remember-failure",
            Storm::Holder,
            "got a failure kept in the map",
        ),
    ];
    assert_eq!(names.len(), wrong_ids().len());
    for (id, storm, words) in names {
        let a = Assembly::with(id).unwrap();
        for seed in SEEDS {
            let g = assemble::run(&a, storm, seed);
            let text = assemble::sentence(&g);
            assert!(!g.pass, "{id} seed {seed} passes {storm:?}: {text}");
            assert!(text.contains(words), "{id} seed {seed}: {text}");
        }
    }
}

/// A storm's sentence tells how requests ended in the lessons' words
/// ("13 ended in an error, 8 timed out"), never by the ledger's names
/// ("ended error", "ended timeout").
#[test]
fn the_grades_say_how_requests_ended_in_words() {
    use stampede::ledger::End;
    let mut told = 0;
    for id in wrong_ids() {
        let a = Assembly::with(id).unwrap();
        for g in assemble::run_all(&a, *SEEDS.start()) {
            let text = assemble::sentence(&g);
            for e in End::ALL.into_iter().filter(|e| !e.is_value()) {
                let n = g.report.ledger.ended(e);
                assert!(!text.contains(&format!("ended {}", e.name())), "{text}");
                if n > 0 {
                    let words = format!("{n} {}", catalogue::lesson::end_words(e));
                    assert!(text.contains(&words), "{words:?} not in {text}");
                    told += 1;
                }
            }
        }
    }
    assert!(told > 0, "no storm ended a request without a value");
}

/// The grade of a storm as its counters read, written out here apart
/// from the catalogue's claims.
fn passes(storm: Storm, s: &Scenario, r: &stampede::Report) -> bool {
    let all_values = r.pinned == 0 && r.ledger.values() == r.requests;
    let in_time = r.max_ms <= f64::from(s.deadline_ms);
    match storm {
        Storm::Burst => all_values && r.recomputes == 1 && r.claim_attempts <= 3,
        Storm::Holder => {
            r.pinned == 0
                && in_time
                && r.crashed == 1
                && r.claim_wins >= 2
                && r.claims_deleted_of_others == 0
                && r.remembered_failures == 0
        }
        Storm::RedisDown => all_values && in_time,
    }
}

fn assembly() -> impl Strategy<Value = Assembly> {
    let variants: Vec<_> = BLOCKS.iter().map(|b| 0..b.variants.len()).collect();
    (
        variants,
        Just((0..BLOCKS.len()).collect::<Vec<_>>()).prop_shuffle(),
    )
        .prop_map(|(vs, order)| Assembly {
            picks: order.into_iter().map(|b| (b, vs[b])).collect(),
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(40))]

    /// Over random assemblies (any order, any variants) and seeds: the
    /// grade is what the run's counters say, its sentence's claims hold
    /// on the run and say how the requests that got no value ended, and
    /// an assembly of right variants passes in any order.
    #[test]
    fn the_grade_agrees_with_the_runs_counters(a in assembly(), seed in 1u64..10_000) {
        for g in assemble::run_all(&a, seed) {
            let run = Run::new(&g.scenario, &g.report, true);
            prop_assert_eq!(g.pass, passes(g.storm, &g.scenario, &g.report), "{:?} {:?}", g.storm, a);
            prop_assert!(check(&run, &g.sentence).is_ok(), "{:?}", check(&run, &g.sentence));
            prop_assert!(tells_how_they_ended(&run, &g.sentence).is_ok());
            if a.wrong().is_empty() {
                prop_assert!(g.pass, "{:?} {}", g.storm, assemble::sentence(&g));
            }
        }
        let (back, notices) = Assembly::from_link(&a.to_link());
        prop_assert_eq!(back, a);
        prop_assert!(notices.is_empty());
    }
}

/// The right assembly, shown in a language, is that example file byte for
/// byte; a wrong variant puts its own code in place of its block's lines
/// and leaves the rest of the file as it is.
#[test]
fn the_right_assembly_is_each_example_file() {
    for e in &EXAMPLES {
        assert_eq!(Assembly::correct().code(e), e.text, "{}", e.path);
        for id in wrong_ids() {
            let (b, v) = assemble::variant(id).unwrap();
            let code = Assembly::with(id).unwrap().code(e);
            let r = examples::lines(e, BLOCKS[b].step).unwrap();
            let lines: Vec<&str> = e.text.lines().collect();
            let lang = if e.name == "refresh" {
                "typescript"
            } else {
                e.name
            };
            let snippet = BLOCKS[b].variants[v]
                .code
                .iter()
                .find(|(l, _)| *l == lang)
                .unwrap()
                .1;
            assert_ne!(code, e.text, "{id} in {}", e.path);
            for l in snippet.lines().filter(|l| !l.trim().is_empty()) {
                assert!(code.contains(l), "{id} in {}: {l}", e.path);
            }
            let before = lines[..r.start].join("\n");
            let after = lines[r.end..].join("\n");
            assert!(code.starts_with(&before), "{id} in {}", e.path);
            assert!(
                code.trim_end().ends_with(after.trim_end()),
                "{id} in {}",
                e.path
            );
        }
    }
}

/// Bad links: unknown blocks and variants are named and dropped; a block
/// left out comes back right, in the card's place.
#[test]
fn a_bad_link_is_named_and_mended() {
    let (a, notices) = Assembly::from_link("nope,release.nah,poll.poll-forever,poll.x");
    assert_eq!(notices.len(), 3, "{notices:?}");
    assert!(notices[0].contains("'nope' is no block"));
    assert!(notices[1].contains("'nah'"));
    assert!(notices[2].contains("named twice"));
    assert_eq!(a.picks.len(), BLOCKS.len());
    assert_eq!(
        a.wrong().iter().map(|v| v.id).collect::<Vec<_>>(),
        ["poll-forever"]
    );
    assert_eq!(Assembly::from_link("").0, Assembly::correct());
    assert!(a.misplaced().is_none(), "mended in the card's order");
    assert!(Assembly::correct().misplaced().is_none());
    let (a, notices) = Assembly::from_link("poll.poll-bounded,get.get-first");
    assert!(notices.is_empty());
    let (put, after) = a.misplaced().unwrap();
    assert_eq!((put.id, after.id), ("get", "poll"));
}

/// The learner starts from a shuffle: every block once, never the card's
/// order; moving and picking keep every block once and refuse what cannot be.
#[test]
fn a_shuffle_holds_every_block_once_and_moves_keep_it_so() {
    for seed in 0..200 {
        let mut a = Assembly::shuffled(seed);
        let mut seen: Vec<usize> = a.picks.iter().map(|p| p.0).collect();
        seen.sort();
        assert_eq!(seen, (0..BLOCKS.len()).collect::<Vec<_>>());
        assert!(a.misplaced().is_some(), "seed {seed}: {a:?}");
        assert!(!a.shift(0, true));
        assert!(!a.shift(BLOCKS.len() - 1, false));
        assert!(a.shift(0, false));
        assert!(!a.pick(0, 9));
        assert!(!a.pick(99, 0));
        assert!(a.pick(0, 0));
    }
    assert_ne!(Assembly::shuffled(1), Assembly::shuffled(2));
}
