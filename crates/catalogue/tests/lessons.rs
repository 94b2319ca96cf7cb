//! Every preset's one-line lesson, and every lesson in the architecture's
//! table, as a claim about numbers: each test runs the preset (and, where
//! the lesson is a comparison, the same scenario with one knob turned) over
//! several seeds and checks every number the sentence promises.

use catalogue::presets::PRESETS;
use stampede::metrics::{Metric, Report};
use stampede::scenario::{preset, ClaimMode, LoserPolicy, RedisErrorPolicy, Scenario, Workload};
use stampede::sim::Fleet;

const SEEDS: [u64; 4] = [1, 7, 42, 2026];

fn run(s: &Scenario, seed: u64) -> Report {
    Fleet::new(s, seed).run()
}

fn each_seed(f: impl Fn(u64)) {
    for seed in SEEDS {
        f(seed);
    }
}

fn p(name: &str) -> Scenario {
    preset(name).unwrap_or_else(|| panic!("no preset {name}"))
}

/// Presets whose lesson a test below checks; a new preset must join it.
const CHECKED: [&str; 21] = [
    "burst",
    "naive",
    "singleflight",
    "claim-outer",
    "stale",
    "failure",
    "hang",
    "holder-crash",
    "short-ttl",
    "redis-down",
    "cold",
    "jitter",
    "swr",
    "xfetch",
    "late-writer",
    "cheap",
    "redis-hang",
    "hot-key",
    "cold-skew",
    "retry-storm",
    "open-loop",
];

#[test]
fn every_preset_has_its_lesson_checked() {
    let mut names: Vec<&str> = PRESETS.iter().map(|p| p.name).collect();
    names.sort_unstable();
    let mut checked = CHECKED.to_vec();
    checked.sort_unstable();
    assert_eq!(names, checked);
}

/// burst: "Singleflight outside, claim inside: one recompute, 40 claim attempts."
#[test]
fn burst_one_recompute_forty_claim_attempts() {
    each_seed(|seed| {
        let r = run(&p("burst"), seed);
        assert_eq!(r.recomputes, 1);
        assert_eq!(r.claim_attempts, 40);
        assert_eq!(r.ended(), r.requests);
        assert_eq!(r.timeouts + r.errors, 0, "{r:?}");
    });
}

/// naive: "Every thread of every instance recomputes: instances x threads,
/// and the swamped origin answers most callers too late."
#[test]
fn naive_duplicates_are_instances_times_threads() {
    each_seed(|seed| {
        for (i, t) in [(40, 200), (10, 30), (3, 7)] {
            let s = Scenario {
                instances: i,
                threads: t,
                ..p("naive")
            };
            assert_eq!(run(&s, seed).recomputes, (i * t) as u64);
        }
        let r = run(&p("naive"), seed);
        assert!(r.timeouts > r.requests / 2, "{r:?}");
        assert!(r.origin_peak_concurrency > 1000, "{r:?}");
    });
}

/// singleflight: "Threads collapse inside each instance: one recompute per instance."
#[test]
fn singleflight_one_recompute_per_instance() {
    each_seed(|seed| {
        let r = run(&p("singleflight"), seed);
        assert_eq!(r.recomputes, 40);
        assert_eq!(r.claim_attempts, 0);
    });
}

/// claim-outer: "Still one recompute, but every thread pays a Redis round
/// trip to claim."
#[test]
fn claim_outer_every_thread_claims() {
    each_seed(|seed| {
        let inner = run(&p("burst"), seed);
        let outer = run(&p("claim-outer"), seed);
        assert_eq!(outer.recomputes, 1);
        assert_eq!(outer.claim_attempts, outer.requests);
        assert_eq!(outer.claim_attempts, 8000);
        assert_eq!(inner.claim_attempts, 40);
        assert!(outer.redis_round_trips > 4 * inner.redis_round_trips);
    });
}

/// stale: "Losers answer stale at once; only the winner's instance waits.
/// Flights end fast, so later arrivals claim again."
#[test]
fn stale_losers_answer_at_once_and_only_the_winners_instance_waits() {
    each_seed(|seed| {
        let s = p("stale");
        let r = run(&s, seed);
        assert_eq!(r.recomputes, 1);
        // Everyone outside the winning instance answered stale ...
        assert_eq!(r.stale_served, r.requests - s.threads as u64, "{r:?}");
        // ... and the winner's instance waited for its value.
        assert_eq!(r.computed + r.shared, s.threads as u64, "{r:?}");
        assert!(r.max_wait_ms > 100.0);
        // 40 claim attempts holds only while losers wait (and keep their
        // flight open); answering at once lets later arrivals claim again.
        assert!(r.claim_attempts > s.instances as u64, "{r:?}");
        let wait = run(
            &Scenario {
                loser: LoserPolicy::Wait,
                ..s.clone()
            },
            seed,
        );
        assert_eq!(wait.claim_attempts, s.instances as u64);
    });
}

#[test]
fn losers_follow_their_policy() {
    each_seed(|seed| {
        let base = p("stale");
        let degrade = run(
            &Scenario {
                loser: LoserPolicy::Degrade,
                ..base.clone()
            },
            seed,
        );
        assert!(degrade.degraded > 7000);
        let compute = run(
            &Scenario {
                loser: LoserPolicy::Compute,
                ..base.clone()
            },
            seed,
        );
        // Everyone who lost the claim recomputes, coalesced per instance.
        assert!(compute.recomputes > 1 && compute.recomputes <= 40 + 1);
        let wait = run(
            &Scenario {
                loser: LoserPolicy::Wait,
                ..base
            },
            seed,
        );
        assert_eq!(wait.recomputes, 1);
        assert!(wait.max_wait_ms > 100.0);
    });
}

/// failure: "Failures reach the current waiters only; turn on
/// remember-failure to see a sticky outage."
#[test]
fn failure_is_shared_not_remembered() {
    each_seed(|seed| {
        let base = p("failure");
        let good = run(&base, seed);
        // "Errors during the outage only": every error is answered by the
        // time the last call started in the outage can have come back.
        let mut rec = Fleet::new(&base, seed);
        rec.set_recording(true);
        rec.run();
        let last_error = rec
            .drain_events()
            .iter()
            .filter(|e| {
                e.kind == stampede::sim::EventKind::Respond
                    && e.detail == stampede::metrics::Ending::Error as u8
            })
            .map(|e| e.t)
            .max()
            .unwrap_or(0);
        let bound = u64::from(base.origin_outage_ms + 5 * base.recompute_ms + 10) * 1000;
        assert!(
            last_error <= bound,
            "an error at {last_error} µs, after {bound}"
        );
        let mut bad_s = base.clone();
        bad_s.pitfalls.remember_failure = true;
        let mut fleet = Fleet::new(&bad_s, seed);
        let bad = fleet.run();
        assert!(good.errors > 0, "the outage hurts while it lasts");
        assert_eq!(good.remembered_failures, 0);
        assert!(
            bad.errors > 5 * good.errors,
            "sticky outage: {} vs {}",
            bad.errors,
            good.errors
        );
        assert!(bad.remembered_failures > 0);
        // The failure is still sitting in a flight map after the run.
        assert!(fleet.remembered_failures_held() > 0);
    });
}

/// hang: "Deadlines free the threads and the origin timeout frees the
/// claim; turn on no-deadline to pin them all."
/// "The claim holder" is a thread holding a claim token: in the card's run
/// there is one, checking the cache again or doing the work; without a
/// claim there is none, though leaders recompute.
#[test]
fn the_claim_holder_holds_a_claim_and_only_the_claim_does() {
    use stampede::read_path::Activity;
    each_seed(|seed| {
        for (name, has_claim) in [("burst", true), ("singleflight", false), ("naive", false)] {
            let mut f = Fleet::new(&p(name), seed);
            let mut seen = false;
            let mut t = 0;
            while !f.is_quiet() {
                t += 500;
                f.advance_to(t, usize::MAX);
                if let Some(g) = f.claim_holder() {
                    assert!(has_claim, "{name}: thread {g} holds a claim");
                    // Re-reading the cache right after winning, or working.
                    let state = f.thread_states()[g as usize];
                    assert!(
                        state == Activity::Reading as u8
                            || Activity::WORK.iter().any(|a| *a as u8 == state),
                        "{name}: the holder {g} is in state {state}"
                    );
                    assert!(f.live_claims() > 0, "{name}: a holder without a live claim");
                    seen = true;
                }
            }
            assert_eq!(seen, has_claim, "{name}: a holder seen");
        }
    });
}

#[test]
fn hang_deadlines_free_threads_and_the_origin_timeout_frees_the_claim() {
    each_seed(|seed| {
        let base = p("hang");
        let mut f = Fleet::new(&base, seed);
        let with = f.run();
        assert_eq!(with.timeouts, 8000);
        assert_eq!(with.timeouts, with.requests);
        assert_eq!(with.pinned, 0);
        assert_eq!(with.origin_timeouts, 1);
        assert_eq!(with.releases, with.claim_wins, "{with:?}");
        assert_eq!(f.live_claims(), 0);
        let mut s = base;
        s.pitfalls.no_deadline = true;
        let r = run(&s, seed);
        assert_eq!(r.pinned, 8000);
        assert_eq!(r.pinned, r.requests);
        assert_eq!(r.origin_timeouts, 0);
    });
}

/// holder-crash: "Nobody may refresh until the claim's TTL runs out: a long
/// TTL is a long stall."
#[test]
fn holder_crash_stalls_for_the_claims_ttl() {
    each_seed(|seed| {
        let stall = run(&p("holder-crash"), seed);
        let heal = run(
            &Scenario {
                claim_ttl_ms: 500,
                ..p("holder-crash")
            },
            seed,
        );
        assert_eq!(stall.crashed, 1);
        assert!(
            stall.timeouts > 10 * heal.timeouts.max(1),
            "{stall:?} vs {heal:?}"
        );
        // The next claim is won only after the TTL, by someone else.
        assert_eq!(stall.claim_wins, 2, "{stall:?}");
    });
}

/// short-ttl: "The claim expires mid-recompute and another instance starts
/// an overlapping one."
#[test]
fn short_ttl_overlaps_and_a_long_one_does_not() {
    each_seed(|seed| {
        let short = run(&p("short-ttl"), seed);
        assert!(short.overlapping_recomputes > 0, "{short:?}");
        assert!(
            short.releases_refused > 0,
            "the late holder must not delete"
        );
        // Longer than the slowest recompute (5 x 400 ms at the tail): no
        // overlap, whatever the callers' deadlines (they stay at 1 s).
        let long = run(
            &Scenario {
                claim_ttl_ms: 3000,
                ..p("short-ttl")
            },
            seed,
        );
        assert_eq!(long.overlapping_recomputes, 0, "{long:?}");
        assert_eq!(long.releases_refused, 0);
    });
}

/// redis-down: "Fail open and the refresh goes on; fail closed and nobody
/// may refresh."
#[test]
fn redis_down_must_not_freeze_the_refresh() {
    each_seed(|seed| {
        let open = run(&p("redis-down"), seed);
        let closed = run(
            &Scenario {
                redis_error: RedisErrorPolicy::Closed,
                ..p("redis-down")
            },
            seed,
        );
        assert_eq!(open.recomputes, 40, "fail open: the refresh goes on");
        assert_eq!(open.timeouts + open.errors, 0);
        assert_eq!(closed.recomputes, 0, "fail closed: nobody may refresh");
        assert_eq!(closed.timeouts, closed.requests);
    });
}

/// cold: "Thousands of different keys: nothing to coalesce. Admission
/// bounds the origin and sheds the rest at once."
#[test]
fn cold_admission_bounds_the_origin_and_sheds_early() {
    each_seed(|seed| {
        let s = p("cold");
        let unbounded = run(
            &Scenario {
                admission: 0,
                ..s.clone()
            },
            seed,
        );
        // Nearly every request is for its own key: nothing to coalesce.
        assert!(unbounded.recomputes > 800, "{unbounded:?}");
        assert!(unbounded.origin_peak_concurrency > 800);
        let bounded = run(&s, seed);
        assert!(bounded.origin_peak_concurrency <= (s.instances * s.admission) as u64);
        assert!(bounded.admission_shed > 0, "admission answers explicitly");
        assert!(
            bounded.degraded >= bounded.admission_shed / 2,
            "{bounded:?}"
        );
        // Shed at once, not after waiting out the deadline in a queue.
        assert!(
            bounded.p50_ms < s.deadline_ms as f64 / 4.0,
            "p50 {} ms",
            bounded.p50_ms
        );
        assert!(bounded.timeouts * 100 < bounded.requests, "{bounded:?}");
    });
}

/// jitter: "Keys written together expire together unless their TTLs are spread."
#[test]
fn jitter_flattens_expiry_waves() {
    each_seed(|seed| {
        let flat = run(&p("jitter"), seed);
        let waves = run(
            &Scenario {
                jitter: 0.0,
                ..p("jitter")
            },
            seed,
        );
        assert!(
            waves.origin_peak_concurrency > 2 * flat.origin_peak_concurrency,
            "{} vs {}",
            waves.origin_peak_concurrency,
            flat.origin_peak_concurrency
        );
    });
}

/// swr: "Stale answers go out at once; the claim guards only the refresh, so
/// a dead holder or a Redis outage never stalls a request."
#[test]
fn swr_answers_every_request_under_every_fault() {
    each_seed(|seed| {
        let base = p("swr");
        let r = run(&base, seed);
        assert_eq!(r.stale_served, r.requests);
        assert!(r.p99_ms <= 2.0 * base.rtt_ms as f64 + 1.0, "{r:?}");
        assert_eq!(r.recomputes, 1, "the claim guards the refresh");
        type Fault = fn(&mut Scenario);
        let faults: [(&str, Fault); 6] = [
            ("holder crash", |s| s.holder_crash = true),
            ("redis down", |s| s.redis_down = true),
            ("origin fails", |s| s.fail_rate = 1.0),
            ("origin outage", |s| s.origin_outage_ms = 60_000),
            ("origin hangs", |s| s.hang = true),
            ("crash and failures", |s| {
                s.holder_crash = true;
                s.fail_rate = 1.0
            }),
        ];
        for (name, fault) in faults {
            let mut s = base.clone();
            fault(&mut s);
            let r = run(&s, seed);
            assert_eq!(r.timeouts + r.pinned, 0, "{name}: {r:?}");
            assert_eq!(r.ended(), r.requests, "{name}");
            if !s.redis_down {
                assert_eq!(r.stale_served, r.requests, "{name}: {r:?}");
            }
        }
        // The same design with a lock on every miss stalls under a crash.
        let locked = run(
            &Scenario {
                holder_crash: true,
                stale_ms: 0,
                claim: ClaimMode::Inner,
                ..base
            },
            seed,
        );
        assert!(locked.timeouts > 7000, "{locked:?}");
    });
}

/// cheap: "40 copies of a 20 ms query is nothing: singleflight alone is enough."
#[test]
fn cheap_recompute_needs_no_lock() {
    each_seed(|seed| {
        let cheap = run(&p("cheap"), seed);
        assert_eq!(cheap.recomputes, 40);
        assert_eq!(cheap.claim_attempts, 0);
        assert_eq!(cheap.timeouts + cheap.errors, 0);
        assert!(cheap.p99_ms < 120.0, "{cheap:?}");
        let locked = run(
            &Scenario {
                claim: ClaimMode::Inner,
                ..p("cheap")
            },
            seed,
        );
        assert!(locked.redis_round_trips > cheap.redis_round_trips);
    });
}

#[test]
fn the_same_key_or_no_coalescing() {
    each_seed(|seed| {
        let mut s = p("singleflight");
        s.pitfalls.key_mismatch = true;
        assert_eq!(run(&s, seed).recomputes, 8000);
    });
}

#[test]
fn a_shared_result_must_be_immutable() {
    each_seed(|seed| {
        let mut s = Scenario::default();
        assert_eq!(run(&s, seed).corrupted, 0);
        s.pitfalls.mutable_result = true;
        // Each instance's first follower mutates; the other 198 read the change.
        assert_eq!(run(&s, seed).corrupted, 40 * 198);
    });
}

/// A caller's deadline ends its wait, never the work: with a recompute
/// slower than every deadline, the cache is still refilled, and a long
/// claim still allows no overlap.
#[test]
fn a_deadline_ends_the_wait_not_the_work() {
    each_seed(|seed| {
        let slow = Scenario {
            workload: Workload::Steady,
            value_ttl_ms: 5000,
            recompute_ms: 1500,
            instances: 4,
            threads: 20,
            duration_ms: 20_000,
            think_ms: 200,
            ..Scenario::default()
        };
        let off = run(
            &Scenario {
                claim: ClaimMode::Off,
                ..slow.clone()
            },
            seed,
        );
        assert!(off.values_written >= 3, "refilled every expiry: {off:?}");
        assert_eq!(off.values_written, off.recomputes - off.origin_timeouts);
        let claimed = run(&slow, seed);
        assert_eq!(claimed.overlapping_recomputes, 0, "{claimed:?}");
        // Each expiry is refreshed once; a call in the 2% slow tail can run
        // past the origin timeout, and only then is nothing written.
        assert_eq!(
            claimed.values_written,
            claimed.recomputes - claimed.origin_timeouts
        );
        assert!(claimed.recomputes >= 3, "{claimed:?}");
    });
}

/// The steady workload's defaults show refreshes: values expire and are
/// recomputed several times within the run.
#[test]
fn steady_defaults_refresh_within_the_run() {
    each_seed(|seed| {
        let r = run(
            &Scenario {
                workload: Workload::Steady,
                ..Scenario::default()
            },
            seed,
        );
        assert!(r.recomputes >= 3, "{r:?}");
    });
}

/// A failed holder's claim goes to a waiting loser at once.
#[test]
fn waiting_losers_take_the_claim_when_it_comes_free() {
    each_seed(|seed| {
        let r = run(
            &Scenario {
                origin_outage_ms: 5,
                ..Scenario::default()
            },
            seed,
        );
        assert_eq!(r.timeouts, 0, "{r:?}");
        assert_eq!(r.recomputes, 2);
        // Only the failed holder's own instance saw its error.
        assert_eq!(r.errors, 200);
    });
}

/// A request whose deadline passes before its `SET NX` reply releases with
/// the token it sent: the claim it won is not left blocking everyone.
#[test]
fn a_slow_claim_reply_leaves_no_orphan() {
    each_seed(|seed| {
        let mut f = Fleet::new(
            &Scenario {
                rtt_ms: 600,
                ..Scenario::default()
            },
            seed,
        );
        let r = f.run();
        assert_eq!(r.claim_wins, 1);
        assert_eq!(f.live_claims(), 0, "{r:?}");
        assert_eq!(r.releases_refused, 0);
    });
}

fn value_of(r: &Report, metric: Metric) -> f64 {
    r.text(metric)
        .parse()
        .unwrap_or_else(|_| panic!("{metric} is not a number"))
}

/// Every preset names the counter that proves it and the knobs it asks you
/// to turn; a lesson about damage shows that damage (above zero).
#[test]
fn every_preset_points_at_its_proof() {
    let knobs: Vec<String> = stampede::scenario::knob_names()
        .map(String::from)
        .chain(
            stampede::scenario::Pitfalls::NAMES
                .iter()
                .map(|p| format!("pitfall-{p}")),
        )
        .collect();
    for pr in PRESETS {
        let proof = catalogue::lesson::proof_for(&pr.scenario(), Some(pr.name));
        assert_eq!(
            catalogue::lesson::proof_for(&pr.scenario(), Some(pr.name)),
            proof
        );
        assert!(!pr.turn.is_empty(), "{} asks for no knob", pr.name);
        for k in pr.turn {
            assert!(
                knobs.iter().any(|x| x == k),
                "{}: unknown knob {k}",
                pr.name
            );
        }
        each_seed(|seed| {
            let r = run(&pr.scenario(), seed);
            let v = value_of(&r, proof.metric);
            if proof.damage {
                assert!(v > 0.0, "{}: {:?} is {v}", pr.name, proof.metric);
            }
        });
    }
}

/// A pitfall switched on is the lesson of the moment: its counter proves it,
/// and on the preset that demonstrates it that counter is above zero.
#[test]
fn every_pitfall_points_at_its_damage() {
    for (base, pitfall, metric) in [
        ("burst", "mutable-result", Metric::Corrupted),
        ("failure", "remember-failure", Metric::RememberedFailures),
        ("hang", "no-deadline", Metric::Pinned),
        ("singleflight", "key-mismatch", Metric::Recomputes),
    ] {
        let mut s = p(base);
        s.pitfalls.enable(pitfall).unwrap();
        let proof = catalogue::lesson::proof_for(&s, Some(base));
        assert_eq!(proof.metric, metric, "{pitfall}");
        each_seed(|seed| {
            let quiet = value_of(&run(&p(base), seed), metric);
            let loud = value_of(&run(&s, seed), metric);
            assert!(loud > quiet, "{pitfall}: {metric:?} {quiet} -> {loud}");
        });
    }
}

/// xfetch: "Readers refresh a hot key just before it expires, so nobody meets
/// a miss; with no lock a few instances may refresh at once."
#[test]
fn xfetch_removes_the_expiry_cliff_on_a_hot_key() {
    each_seed(|seed| {
        let on = p("xfetch");
        let early = run(&on, seed);
        let cliff = run(
            &Scenario {
                xfetch_beta: 0.0,
                ..on.clone()
            },
            seed,
        );
        // Without it every expiry is a wave of misses, with it (nearly) none.
        assert!(
            cliff.misses >= 3 * (on.instances * on.threads) as u64 / 2,
            "{cliff:?}"
        );
        assert!(
            early.misses * 100 <= cliff.misses,
            "{} vs {}",
            early.misses,
            cliff.misses
        );
        assert!(early.early_refreshes > 0);
        // The proof's line says zero on this preset: it is.
        assert_eq!(early.misses, 0, "{early:?}");
        assert!(early.p99_ms < cliff.p99_ms / 10.0, "{early:?}");
        // The knob's line: a larger beta refreshes more eagerly.
        let eager = run(
            &Scenario {
                xfetch_beta: 3.0,
                ..on.clone()
            },
            seed,
        );
        assert!(eager.early_refreshes > early.early_refreshes, "{eager:?}");
        // No lock: a few instances refresh the same expiry at once.
        assert!(early.overlapping_recomputes > 0, "{early:?}");
        // A claim on the refresh removes the overlap, still with no misses.
        let claimed = run(
            &Scenario {
                claim: ClaimMode::Inner,
                ..on.clone()
            },
            seed,
        );
        assert_eq!(claimed.overlapping_recomputes, 0);
        assert!(claimed.misses * 100 <= cliff.misses);
        // It does nothing for a cold cache: nothing is fresh to refresh.
        let cold = run(
            &Scenario {
                xfetch_beta: 1.0,
                ..p("cold")
            },
            seed,
        );
        assert_eq!(cold.early_refreshes, 0);
        assert_eq!(cold.misses, run(&p("cold"), seed).misses);
    });
}

/// The A/B view's one verdict never leaves its question's counter
/// contradicting it unexplained: where the counter the comparison asks
/// about favours the side the objective does not pick (xfetch: fewer
/// misses, more origin calls), the verdict says so with both values and
/// why the objective decides; where they agree it is the plain verdict.
#[test]
fn a_verdict_names_its_questions_counter_where_they_disagree() {
    use stampede::metrics::{verdict, verdict_on, Better};
    let mut disagreed = 0;
    for c in catalogue::presets::COMPARISONS {
        let (a, b) = (run(&c.a(), 1), run(&c.b(), 1));
        for ended in [true, false] {
            let (side, plain) = verdict(&a, &b, ended);
            let (side_on, said) = verdict_on(&a, &b, ended, c.metric);
            assert_eq!(side, side_on, "{}", c.name);
            let (va, vb) = (value_of(&a, c.metric), value_of(&b, c.metric));
            let favours = match c.metric.better() {
                _ if va == vb => None,
                Some(Better::Lower) => Some(if va < vb { 'a' } else { 'b' }),
                Some(Better::Higher) => Some(if va > vb { 'a' } else { 'b' }),
                None => None,
            };
            match favours.filter(|f| Some(*f) != side) {
                Some(f) => {
                    disagreed += 1;
                    let label = stampede::metrics::label(c.metric);
                    assert!(said.starts_with(&plain), "{}: {said}", c.name);
                    assert!(
                        said.contains(&format!(
                            "On {label}, the counter this comparison asks about, {} is better",
                            f.to_ascii_uppercase()
                        )),
                        "{}: {said}",
                        c.name
                    );
                    assert_eq!(said.contains("so far"), !ended, "{}: {said}", c.name);
                }
                None => assert_eq!(said, plain, "{}", c.name),
            }
        }
    }
    // xfetch and cost disagree on seed 1 (the page's).
    assert!(disagreed >= 2, "{disagreed}");
}

/// Every A/B comparison differs on its metric, and the side it names is
/// better there, over the seeds. The cost comparison: the claim takes the
/// origin from 40 recomputes to 1 at every cost and always costs Redis
/// round trips; for a 20 ms query singleflight alone answers sooner (its
/// winner); at the cost control's top, 700 ms, the claim's one recompute
/// never makes a caller time out (any seed), while 40 copies swamp the
/// origin: on seed 1 (the page's), callers time out and the claim answers
/// sooner.
#[test]
fn every_comparison_shows_its_difference() {
    use catalogue::presets::COMPARISONS;
    use stampede::metrics::differences;
    for c in COMPARISONS {
        each_seed(|seed| {
            let (a, b) = (run(&c.a(), seed), run(&c.b(), seed));
            let d = differences(&a, &b);
            let on = d
                .iter()
                .find(|x| x.metric == c.metric)
                .unwrap_or_else(|| panic!("{}: {:?} does not differ", c.name, c.metric));
            assert_eq!(on.better, Some(c.winner), "{}: {on:?}", c.name);
            // The winner rests on a claim: its run against the other side's
            // shows it, and the other side's against the winner's does not.
            let (sa, sb) = (c.a(), c.b());
            let ((win, ws), (lose, ls)) = if c.winner == 'a' {
                ((&a, &sa), (&b, &sb))
            } else {
                ((&b, &sb), (&a, &sa))
            };
            let run = |s, r, then| catalogue::claims::Run::new(s, r, true).against(Some(then));
            assert!(
                c.shows.holds(&run(ws, win, lose)),
                "{} (seed {seed}): the winner does not show {:?}",
                c.name,
                c.shows
            );
            assert!(
                !c.shows.holds(&run(ls, lose, win)),
                "{} (seed {seed}): both sides show {:?}",
                c.name,
                c.shows
            );
        });
    }
    let cost = catalogue::presets::comparison("cost").unwrap();
    for recompute_ms in [20, 200, 700] {
        let a = run(
            &Scenario {
                recompute_ms,
                ..cost.a()
            },
            1,
        );
        let b = run(
            &Scenario {
                recompute_ms,
                ..cost.b()
            },
            1,
        );
        assert_eq!((a.recomputes, b.recomputes), (40, 1), "{recompute_ms} ms");
        assert!(b.redis_round_trips > a.redis_round_trips);
        match recompute_ms {
            20 => assert!(a.p50_ms < b.p50_ms, "{} vs {}", a.p50_ms, b.p50_ms),
            700 => {
                assert!(b.p50_ms < a.p50_ms, "{} vs {}", a.p50_ms, b.p50_ms);
                assert!(
                    a.timeouts > 0 && b.timeouts == 0,
                    "{} vs {}",
                    a.timeouts,
                    b.timeouts
                );
            }
            _ => {}
        }
    }
    each_seed(|seed| {
        let b = run(
            &Scenario {
                recompute_ms: 700,
                ..cost.b()
            },
            seed,
        );
        assert_eq!(b.timeouts, 0, "seed {seed}: {b:?}");
    });
}

/// late-writer: "The claim expires under a slow recompute, another instance
/// recomputes too, and the older value lands last. Turn on fenced writes and
/// they refuse it."
#[test]
fn late_writer_overwrites_newer_data_unless_writes_are_fenced() {
    each_seed(|seed| {
        let s = p("late-writer");
        let late = run(&s, seed);
        assert!(late.overlapping_recomputes > 0, "{late:?}");
        assert!(late.stale_overwrites > 0, "{late:?}");
        let fenced = run(
            &Scenario {
                fenced_writes: true,
                ..s.clone()
            },
            seed,
        );
        assert_eq!(fenced.stale_overwrites, 0, "{fenced:?}");
        assert!(fenced.writes_refused > 0);
        // A claim TTL (and origin timeout) past the slowest recompute
        // (1,000 ms x 1.25 x 4 in the tail) needs no fence at all.
        let long = run(
            &Scenario {
                claim_ttl_ms: 6000,
                origin_timeout_ms: 5500,
                ..s
            },
            seed,
        );
        assert_eq!(
            (long.overlapping_recomputes, long.stale_overwrites),
            (0, 0),
            "{long:?}"
        );
    });
}

/// The card's arithmetic, as `Scenario::burst_formula` states it (the page
/// paces a burst by it), is what the simulation measures for the card's
/// presets and the key-mismatch pitfall.
#[test]
fn the_burst_formula_is_what_the_fleet_measures() {
    let mut mismatch = p("singleflight");
    mismatch.pitfalls.key_mismatch = true;
    for s in [
        p("burst"),
        p("naive"),
        p("singleflight"),
        p("claim-outer"),
        mismatch,
    ] {
        each_seed(|seed| assert_eq!(run(&s, seed).recomputes, s.burst_formula(), "{s:?}"));
    }
}

// ---- the lesson's words, from the run --------------------------------------

fn lesson_of(s: &Scenario, base: Option<&str>, seed: u64) -> catalogue::lesson::Lesson {
    let r = run(s, seed);
    let then = catalogue::lesson::contrast(s, base).map(|c| run(&c, seed));
    catalogue::lesson::lesson(s, base, &r, true, then.as_ref())
}

/// Each preset is its own lesson: the lesson the core picks for it is the
/// preset's, its counter is the preset's proof, and damage shows.
#[test]
fn every_preset_is_its_own_lesson() {
    for pr in PRESETS {
        each_seed(|seed| {
            let l = lesson_of(&pr.scenario(), Some(pr.name), seed);
            assert_eq!(l.name, pr.name);
            assert_eq!(l.metric, pr.proof(), "{}", pr.name);
            assert_eq!(l.needs, None, "{}", pr.name);
            assert!(!l.damage || l.value > 0.0, "{}: {l:?}", pr.name);
            // Made from no preset at all, the scenario still finds it.
            let found = lesson_of(&pr.scenario(), None, seed);
            if !["cheap", "late-writer"].contains(&pr.name) {
                assert_eq!(found.name, pr.name);
            }
        });
    }
}

/// The review's two examples: a knob turned off takes its claim out of the
/// sentence.
#[test]
fn a_changed_knob_changes_the_words() {
    each_seed(|seed| {
        let card = run(&p("burst"), seed);
        let mut off = p("burst");
        off.singleflight = false;
        let now = run(&off, seed);
        let l = lesson_of(&off, Some("burst"), seed);
        assert_eq!(
            l.sentence,
            format!(
                "singleflight off: claim attempts {} → {} against the preset's own run.",
                catalogue::lesson::count(card.claim_attempts),
                catalogue::lesson::count(now.claim_attempts)
            )
        );
        assert!(!l.sentence.contains("singleflight took"));

        let mut closed = p("redis-down");
        closed.redis_error = RedisErrorPolicy::Closed;
        let l = lesson_of(&closed, Some("redis-down"), seed);
        assert!(l.sentence.contains("failed closed"), "{}", l.sentence);
        assert!(!l.sentence.contains("open"), "{}", l.sentence);
        let open = lesson_of(&p("redis-down"), Some("redis-down"), seed);
        assert!(open.sentence.contains("failed open"), "{}", open.sentence);
        assert!(
            open.sentence.contains("client's timeout"),
            "{}",
            open.sentence
        );
    });
}

/// A pitfall that cannot bite on its scenario says what it needs, and the
/// demonstration it offers bites, on every seed.
#[test]
fn a_pitfall_that_cannot_bite_offers_what_it_needs() {
    let mut offered = std::collections::BTreeSet::new();
    for pr in PRESETS {
        for pitfall in stampede::scenario::Pitfalls::NAMES {
            let mut s = pr.scenario();
            s.pitfalls.enable(pitfall).unwrap();
            let l = lesson_of(&s, Some(pr.name), 1);
            if let Some(needs) = &l.needs {
                assert!(
                    l.value == 0.0 || !l.damage,
                    "{} + {pitfall}: {l:?}",
                    pr.name
                );
                assert!(
                    needs.text.contains("cannot bite here: it needs"),
                    "{}",
                    needs.text
                );
                offered.insert((pitfall, needs.link));
            }
        }
    }
    // Every pitfall has somewhere it cannot bite, and says so.
    assert_eq!(offered.len(), 4, "{offered:?}");
    for (pitfall, link) in offered {
        let (s, _, notices) = Scenario::from_query(link);
        assert!(notices.is_empty(), "{link}: {notices:?}");
        let base = stampede::scenario::closest_preset(&s);
        each_seed(|seed| {
            let l = lesson_of(&s, base, seed);
            assert_eq!(l.name, pitfall, "{link}");
            assert_eq!(l.needs, None, "{link}");
            assert!(l.value > 0.0, "{link}: {l:?}");
        });
    }
}

/// The swr preset's stale copy lives in Redis: with Redis down the lesson
/// is the outage's, and says none could be served.
#[test]
fn swr_with_redis_down_says_the_stale_copy_is_gone() {
    each_seed(|seed| {
        let mut s = p("swr");
        s.redis_down = true;
        let r = run(&s, seed);
        assert_eq!(r.stale_served, 0);
        let l = lesson_of(&s, Some("swr"), seed);
        assert_eq!(l.name, "redis-down");
        assert!(
            l.sentence.contains("The stale copy lives in Redis too"),
            "{}",
            l.sentence
        );
    });
}

/// short-ttl: the refused releases are told apart, and they add up.
#[test]
fn refused_releases_are_told_apart() {
    each_seed(|seed| {
        let r = run(&p("short-ttl"), seed);
        assert!(
            r.releases_refused_taken > 0 && r.releases_refused_expired > 0,
            "{r:?}"
        );
        let l = lesson_of(&p("short-ttl"), Some("short-ttl"), seed);
        assert!(
            l.sentence.contains(&format!(
                "{} because another instance held the claim by then",
                catalogue::lesson::count(r.releases_refused_taken)
            )),
            "{}",
            l.sentence
        );
    });
}

/// A preset's title and lesson are read before its run: any number in
/// them is one of its knobs, never a result typed in.
#[test]
fn preset_words_state_only_their_knobs() {
    for pr in PRESETS {
        let s = pr.scenario();
        let knobs: Vec<String> = stampede::scenario::knob_names()
            .filter_map(|k| s.get(k))
            .filter_map(|v| v.parse::<u64>().ok())
            .map(catalogue::lesson::count)
            .collect();
        for n in catalogue::lesson::numbers_in(&format!("{} {}", pr.title, pr.row.words)) {
            assert!(knobs.contains(&n), "{}: {n} is not a knob", pr.name);
        }
    }
    for c in catalogue::presets::COMPARISONS {
        let text = format!("{} {} {}", c.question, c.a_label, c.b_label);
        assert!(
            catalogue::lesson::numbers_in(&text).is_empty(),
            "{}: {text}",
            c.name
        );
    }
}

/// redis-hang: "A Redis that hangs holds every command for the client's
/// timeout: with a long one, failing open still times everyone out. A short
/// timeout and a breaker let the refresh go on."
#[test]
fn a_hanging_redis_needs_a_short_timeout_and_a_breaker() {
    each_seed(|seed| {
        let long = run(&p("redis-hang"), seed);
        assert_eq!(long.timeouts, long.requests, "{long:?}");
        assert_eq!(long.recomputes, 0);
        // The same outage as errors at once: failing open refreshes.
        let fast = run(
            &Scenario {
                redis_outage: stampede::scenario::RedisOutage::Error,
                ..p("redis-hang")
            },
            seed,
        );
        assert!(fast.timeouts * 20 <= fast.requests, "{fast:?}");
        let short = Scenario {
            redis_timeout_ms: 30,
            ..p("redis-hang")
        };
        let no_breaker = run(&short, seed);
        let breaker = run(
            &Scenario {
                redis_breaker_ms: 5000,
                ..short
            },
            seed,
        );
        // At most the origin's own slow tail (a 2-4x recompute) is late.
        for r in [&no_breaker, &breaker] {
            assert!(r.timeouts * 20 <= r.requests, "{r:?}");
            assert!(r.recomputes >= 1);
        }
        assert_eq!(no_breaker.redis_skipped, 0);
        assert!(breaker.redis_skipped > 0, "{breaker:?}");
        assert!(
            breaker.p50_ms < no_breaker.p50_ms,
            "the breaker answers sooner"
        );
    });
}

/// hot-key: "Every read of one hot key is a command on one Redis: at its
/// throughput the queue, not the origin, sets the latency. A short local
/// copy in each instance brings it back."
#[test]
fn a_hot_key_queues_at_redis_and_a_local_copy_fixes_it() {
    each_seed(|seed| {
        let hot = run(&p("hot-key"), seed);
        let unlimited = run(
            &Scenario {
                redis_ops_per_ms: 0,
                ..p("hot-key")
            },
            seed,
        );
        let local = run(
            &Scenario {
                local_cache_ms: 100,
                ..p("hot-key")
            },
            seed,
        );
        assert!(hot.redis_queue_peak > 100, "{hot:?}");
        assert!(
            hot.p99_ms > 50.0 * unlimited.p99_ms,
            "{} vs {}",
            hot.p99_ms,
            unlimited.p99_ms
        );
        assert!(
            local.p99_ms <= unlimited.p99_ms,
            "{} vs {}",
            local.p99_ms,
            unlimited.p99_ms
        );
        assert!(local.redis_round_trips * 20 < hot.redis_round_trips);
        assert!(local.local_hits > local.requests / 2);
        // A round trip through the queue is never faster than rtt.
        assert!(hot.redis_p99_ms >= p("hot-key").rtt_ms as f64);
    });
}

/// cold-skew: "After a restart a few keys are hot: coalescing merges the
/// requests that share them, and admission bounds the rest. Do both."
#[test]
fn a_skewed_cold_start_needs_coalescing_and_admission() {
    let off = |s: Scenario| Scenario {
        singleflight: false,
        claim: ClaimMode::Off,
        ..s
    };
    let unbounded = |s: Scenario| Scenario { admission: 0, ..s };
    each_seed(|seed| {
        // Equally popular keys: coalescing changes little.
        let uniform = unbounded(p("cold"));
        let (u_on, u_off) = (run(&uniform, seed), run(&off(uniform.clone()), seed));
        assert!(
            u_on.recomputes * 10 > u_off.recomputes * 8,
            "{} vs {}",
            u_on.recomputes,
            u_off.recomputes
        );
        // Skewed keys: coalescing cuts the recomputes by a third or more...
        let skewed = unbounded(p("cold-skew"));
        let (s_on, s_off) = (run(&skewed, seed), run(&off(skewed.clone()), seed));
        assert!(
            s_on.recomputes * 3 < s_off.recomputes * 2,
            "{} vs {}",
            s_on.recomputes,
            s_off.recomputes
        );
        // ...and with admission as well, far fewer requests are turned away.
        let (a_on, a_off) = (run(&p("cold-skew"), seed), run(&off(p("cold-skew")), seed));
        assert!(a_on.origin_peak_concurrency <= u64::from(10 * p("cold-skew").admission));
        assert!(
            a_on.degraded * 3 < a_off.degraded * 2,
            "{} vs {}",
            a_on.degraded,
            a_off.degraded
        );
    });
}

/// Faults at a moment: a fault acts only in its window, a fault after the
/// run changes nothing, and the whole-run switch is the window over all of
/// it.
#[test]
fn a_fault_acts_only_in_its_window() {
    use stampede::scenario::{Fault, FaultKind};
    let steady = Scenario {
        instances: 10,
        threads: 20,
        workload: Workload::Steady,
        value_ttl_ms: 5000,
        duration_ms: 20_000,
        think_ms: 200,
        ..Scenario::default()
    };
    let with = |f: Fault| Scenario {
        faults: vec![f],
        ..steady.clone()
    };
    let redis = |start_ms, duration_ms| Fault {
        kind: FaultKind::Redis,
        start_ms,
        duration_ms,
    };
    each_seed(|seed| {
        let calm = Fleet::new(&steady, seed).run();
        let mut after = Fleet::new(&with(redis(900_000, None)), seed);
        let after = after.run();
        // The window is listed, and did nothing.
        assert_eq!(after.fault_acts, vec![Default::default()]);
        let after = stampede::Report {
            fault_acts: Vec::new(),
            ..after
        };
        assert_eq!(after, calm, "a fault after the run");
        let window = run(&with(redis(4000, Some(3000))), seed);
        assert!(window.redis_errors > 0 && window.redis_errors < window.redis_round_trips);
        let whole = run(
            &Scenario {
                redis_down: true,
                ..steady.clone()
            },
            seed,
        );
        let all = run(&with(redis(0, None)), seed);
        // Every failed command is the fault's doing (the switch counts none).
        assert_eq!(all.fault_bites, all.redis_errors);
        assert_eq!(whole.fault_bites, 0);
        assert_eq!(all.fault_acts[0].redis_failed, all.fault_bites);
        let all = stampede::Report {
            fault_bites: 0,
            fault_acts: Vec::new(),
            ..all
        };
        assert_eq!(all, whole, "redis@0 is the whole-run switch");
        // A holder that dies mid-run stalls the refresh until its claim's TTL.
        let holder = run(
            &with(Fault {
                kind: FaultKind::Holder,
                start_ms: 5000,
                duration_ms: None,
            }),
            seed,
        );
        assert_eq!(holder.crashed, 1, "{holder:?}");
    });
}

/// retry-storm: "Callers retry a failing origin: with no coalescing every
/// retry is another origin call, up to (1 + retries) times the load; with
/// singleflight the retries join the flight already running."
#[test]
fn retries_multiply_the_load_unless_they_coalesce() {
    each_seed(|seed| {
        let storm = p("retry-storm");
        let once = run(
            &Scenario {
                retries: 0,
                ..storm.clone()
            },
            seed,
        );
        let r = run(&storm, seed);
        let k = u64::from(storm.retries);
        assert!(r.retries > 0);
        assert!(r.recomputes <= (1 + k) * r.requests, "{r:?}");
        assert!(
            r.recomputes * 2 > (1 + k) * once.recomputes,
            "{} vs {}",
            r.recomputes,
            once.recomputes
        );
        let joined = run(
            &Scenario {
                singleflight: true,
                ..storm.clone()
            },
            seed,
        );
        assert!(
            joined.recomputes * 5 < r.recomputes,
            "{} vs {}",
            joined.recomputes,
            r.recomputes
        );
    });
}

/// open-loop: "Open-loop traffic does not slow down when the service does:
/// while the origin hangs, the threads fill, the accept queue backs up and
/// requests are turned away. A closed-loop test hides this."
#[test]
fn open_loop_traffic_backs_up_where_closed_loop_hides_it() {
    each_seed(|seed| {
        let open = run(&p("open-loop"), seed);
        let closed = run(
            &Scenario {
                arrivals: stampede::scenario::Arrivals::Closed,
                think_ms: 200,
                ..p("open-loop")
            },
            seed,
        );
        let calm = run(
            &Scenario {
                faults: Vec::new(),
                ..p("open-loop")
            },
            seed,
        );
        assert!(open.rejected > 0, "{open:?}");
        assert_eq!(closed.rejected, 0);
        assert_eq!(
            calm.rejected, 0,
            "without the hang the pool keeps up: {calm:?}"
        );
        assert!(
            open.timeouts > closed.timeouts,
            "{} vs {}",
            open.timeouts,
            closed.timeouts
        );
        // The offered load stays: about rate x duration requests.
        let want = u64::from(p("open-loop").rate_per_s) * 20;
        assert!(
            open.requests * 10 > want * 9 && open.requests * 10 < want * 11,
            "{}",
            open.requests
        );
    });
}

/// A command to a hanging Redis fails when the client gives up on it, not
/// when it is sent: half a second into a 1.5 s timeout, nothing has failed
/// and nothing was answered (a round trip is a command sent and answered).
#[test]
fn a_hung_command_fails_at_its_timeout() {
    let s = p("redis-hang");
    let mut f = Fleet::new(&s, 1);
    f.advance_to(500_000, usize::MAX);
    let mid = f.report();
    assert!(mid.requests > 0);
    assert_eq!((mid.redis_errors, mid.redis_round_trips), (0, 0), "{mid:?}");
    let end = f.run();
    assert_eq!(end.redis_round_trips, 0);
    assert_eq!(end.redis_errors, end.requests, "each caller's GET fails");
}

/// The interviewer's kit and the lessons cannot disagree: each red flag's
/// run, of every question of the kit (on every drill seed), shows the
/// lesson the flag speaks of, and that lesson's words make every claim the
/// flag's reason makes (that each holds on the flag's run is the row
/// test's, tests/rows.rs).
#[test]
fn every_red_flag_rests_on_its_lessons_claims() {
    let flags: Vec<_> = catalogue::interview::questions()
        .flat_map(|q| q.red_flags)
        .collect();
    // The card's five and at least one of each reference question's.
    assert!(flags.len() >= 5 + 15, "{}", flags.len());
    let mut wrong = Vec::new();
    for flag in flags {
        let (s, _, notices) = Scenario::from_query(flag.row.link);
        assert!(notices.is_empty(), "{}: {notices:?}", flag.row.link);
        assert!(
            flag.reasons().next().is_some(),
            "{}: claims nothing",
            flag.says
        );
        for seed in catalogue::drill::SEEDS {
            let r = run(&s, seed);
            let base = stampede::scenario::closest_preset(&s);
            let l = catalogue::lesson::lesson(&s, base, &r, true, None);
            if l.name != flag.lesson {
                wrong.push(format!(
                    "{} (seed {seed}): the page's lesson is {}, not {}",
                    flag.says, l.name, flag.lesson
                ));
                continue;
            }
            for claim in flag.reasons() {
                if !l.clauses.iter().any(|c| c.claims.contains(claim)) {
                    wrong.push(format!(
                        "{} (seed {seed}): the {} lesson does not claim {claim:?}: {}",
                        flag.says, l.name, l.sentence
                    ));
                }
            }
        }
    }
    wrong.dedup();
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

/// A Redis that pauses and resumes runs the claims whose clients gave up
/// on them: the lesson says such a claim may still be held, and that the
/// release by token each client sent after it cleared it.
#[test]
fn a_paused_redis_says_a_claim_the_client_gave_up_on_may_still_be_held() {
    use stampede::scenario::{Fault, FaultKind, RedisOutage};
    let s = Scenario {
        redis_outage: RedisOutage::Hang,
        faults: vec![Fault {
            kind: FaultKind::Redis,
            start_ms: 0,
            duration_ms: Some(300),
        }],
        ..Scenario::default()
    };
    each_seed(|seed| {
        let r = run(&s, seed);
        assert!(r.late_claims > 0, "{r:?}");
        assert_eq!(r.late_claims_released, r.late_claims, "{r:?}");
        let l = lesson_of(&s, None, seed);
        let said = match r.late_claims {
            1 => "when Redis resumed it granted 1 claim whose client had already timed out"
                .to_string(),
            n => format!(
                "when Redis resumed it granted {n} claims whose clients had already timed out"
            ),
        };
        assert!(
            l.sentence
                .contains("A claim the client gave up on may still be held"),
            "{}",
            l.sentence
        );
        assert!(l.sentence.contains(&said), "{}", l.sentence);
        assert!(l.sentence.contains("cleared it"), "{}", l.sentence);
    });
    // Redis down for good never resumes: nothing of the kind is said.
    let down = Scenario {
        redis_down: true,
        redis_outage: RedisOutage::Hang,
        ..Scenario::default()
    };
    let l = lesson_of(&down, None, 1);
    assert!(!l.sentence.contains("gave up on"), "{}", l.sentence);
}

/// Issue 39 §6: a Redis fault window that hangs is not told as one that
/// errors at once. On each seed, the same window errors in one run and
/// hangs in the other: the words differ beyond the fault's name, and each
/// is true of its run (the hung commands waited out the client's timeout,
/// the refused ones did not).
#[test]
fn a_hanging_redis_window_is_not_told_as_one_that_errors() {
    each_seed(|seed| {
        for (base, knobs) in [("singleflight", ""), ("burst", "&rto=50")] {
            let tell = |outage: &str| {
                let q = format!("preset={base}{knobs}&f=redis@0%2B5000&ro={outage}");
                let (s, _, notices) = Scenario::from_query(&q);
                assert!(notices.is_empty(), "{q}: {notices:?}");
                let r = run(&s, seed);
                (s.clone(), r, lesson_of(&s, Some(base), seed).sentence)
            };
            let (_, down, at_once) = tell("error");
            let (s, hung, held) = tell("hang");
            let name = |t: &str| t.replace("Redis hanging", "Redis down");
            assert!(
                name(&held).split(':').nth(1) != name(&at_once).split(':').nth(1),
                "{base}, seed {seed}: {held:?} says what {at_once:?} says"
            );
            assert!(at_once.contains("failed at once"), "{at_once}");
            let timeout = format!("{} ms timeout", s.redis_timeout_ms);
            assert!(held.contains(&timeout), "{held}");
            assert!(
                hung.redis_p99_ms >= f64::from(s.redis_timeout_ms),
                "{hung:?}"
            );
            assert!(
                down.redis_p99_ms < f64::from(s.redis_timeout_ms),
                "{down:?}"
            );
        }
    });
}

/// "Every Redis command failed" is said only where Redis answered none of
/// them (issue 39 §6: it stood beside a count of round trips, which were
/// counted while Redis was down).
#[test]
fn every_redis_command_failed_only_where_none_was_answered() {
    each_seed(|seed| {
        for q in [
            "preset=redis-down",
            "preset=redis-down&re=closed",
            "rd=1&c=off",
        ] {
            let (s, _, notices) = Scenario::from_query(q);
            assert!(notices.is_empty(), "{q}: {notices:?}");
            let r = run(&s, seed);
            let l = lesson_of(
                &s,
                q.strip_prefix("preset=").filter(|b| !b.contains('&')),
                seed,
            );
            assert_eq!(r.redis_round_trips, 0, "{q}: {r:?}");
            assert!(
                l.sentence.starts_with(&format!(
                    "Every Redis command failed ({} in all)",
                    r.redis_errors
                )),
                "{q}, seed {seed}: {}",
                l.sentence
            );
        }
    });
}
