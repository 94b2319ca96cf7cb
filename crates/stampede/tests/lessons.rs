//! Every lesson in DESIGN.md's table, as a comparison: turn the knob and the
//! counter it names must move the way the lesson says. Each test runs the
//! same scenario twice, differing only in that knob, over several seeds.

use stampede::metrics::Report;
use stampede::scenario::{preset, ClaimMode, LoserPolicy, RedisErrorPolicy, Scenario};
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

#[test]
fn duplicates_are_instances_times_threads() {
    each_seed(|seed| {
        for (i, t) in [(40, 200), (10, 30), (3, 7)] {
            let s = Scenario {
                instances: i,
                threads: t,
                ..preset("naive").unwrap()
            };
            assert_eq!(run(&s, seed).recomputes, (i * t) as u64);
        }
    });
}

#[test]
fn singleflight_collapses_threads_and_the_claim_collapses_instances() {
    each_seed(|seed| {
        let sf = run(&preset("singleflight").unwrap(), seed);
        assert_eq!(sf.recomputes, 40);
        let both = run(&preset("burst").unwrap(), seed);
        assert_eq!(both.recomputes, 1);
    });
}

#[test]
fn ordering_decides_who_talks_to_redis() {
    each_seed(|seed| {
        let inner = run(&preset("burst").unwrap(), seed);
        let outer = run(&preset("claim-outer").unwrap(), seed);
        assert_eq!(inner.claim_attempts, 40);
        assert_eq!(outer.claim_attempts, 8000);
        assert!(outer.redis_round_trips > 4 * inner.redis_round_trips);
    });
}

#[test]
fn losers_follow_their_policy() {
    each_seed(|seed| {
        let base = preset("stale").unwrap();
        let stale = run(&base, seed);
        assert!(stale.stale_served > 7000, "{stale:?}");
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

#[test]
fn failures_are_shared_not_remembered() {
    each_seed(|seed| {
        let base = preset("failure").unwrap();
        let good = run(&base, seed);
        let mut bad_s = base.clone();
        bad_s.pitfalls.remember_failure = true;
        let mut fleet = Fleet::new(&bad_s, seed);
        let bad = fleet.run();
        assert!(good.errors > 0, "the outage hurts while it lasts");
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

#[test]
fn waiters_keep_their_own_deadline() {
    each_seed(|seed| {
        let base = preset("hang").unwrap();
        let with = run(&base, seed);
        assert_eq!(with.timeouts, 8000);
        assert_eq!(with.timeouts, with.requests);
        assert_eq!(with.pinned, 0);
        let mut s = base;
        s.pitfalls.no_deadline = true;
        let r = run(&s, seed);
        assert_eq!(r.pinned, 8000);
        assert_eq!(r.pinned, r.requests);
    });
}

#[test]
fn claim_ttl_against_the_recompute() {
    each_seed(|seed| {
        let short = run(&preset("short-ttl").unwrap(), seed);
        assert!(short.overlapping_recomputes > 0, "{short:?}");
        assert!(
            short.releases_refused > 0,
            "the late holder must not delete"
        );
        let long = run(
            &Scenario {
                // Longer than the slowest recompute (5 x 400 ms at the tail).
                // The deadline too: a holder that gives up releases its
                // claim while its origin call runs on, which also overlaps.
                claim_ttl_ms: 3000,
                deadline_ms: 3000,
                ..preset("short-ttl").unwrap()
            },
            seed,
        );
        assert_eq!(long.overlapping_recomputes, 0);
        // A dead holder with a long TTL stalls refreshes; a short one heals.
        let stall = run(&preset("holder-crash").unwrap(), seed);
        let heal = run(
            &Scenario {
                claim_ttl_ms: 500,
                ..preset("holder-crash").unwrap()
            },
            seed,
        );
        assert_eq!(stall.crashed, 1);
        assert!(
            stall.timeouts > 10 * heal.timeouts.max(1),
            "{stall:?} vs {heal:?}"
        );
    });
}

#[test]
fn a_redis_outage_must_not_freeze_the_refresh() {
    each_seed(|seed| {
        let open = run(&preset("redis-down").unwrap(), seed);
        let closed = run(
            &Scenario {
                redis_error: RedisErrorPolicy::Closed,
                ..preset("redis-down").unwrap()
            },
            seed,
        );
        assert_eq!(open.recomputes, 40, "fail open: the refresh goes on");
        assert_eq!(closed.recomputes, 0, "fail closed: nobody may refresh");
        assert_eq!(closed.timeouts, closed.requests);
    });
}

#[test]
fn the_same_key_or_no_coalescing() {
    each_seed(|seed| {
        let mut s = preset("singleflight").unwrap();
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

#[test]
fn neither_helps_a_cold_cache_but_admission_bounds_the_origin() {
    each_seed(|seed| {
        let unbounded = Scenario {
            admission: 0,
            ..preset("cold").unwrap()
        };
        let r = run(&unbounded, seed);
        // Nearly every request is for its own key: nothing to coalesce.
        assert!(r.recomputes > 800, "{r:?}");
        assert!(r.origin_peak_concurrency > 800);
        let bounded = run(&preset("cold").unwrap(), seed);
        assert!(bounded.origin_peak_concurrency <= 10 * 6);
        assert!(bounded.degraded > 0, "admission answers explicitly");
    });
}

#[test]
fn jitter_flattens_expiry_waves() {
    each_seed(|seed| {
        let flat = run(&preset("jitter").unwrap(), seed);
        let waves = run(
            &Scenario {
                jitter: 0.0,
                ..preset("jitter").unwrap()
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

#[test]
fn a_cheap_recompute_needs_no_lock() {
    each_seed(|seed| {
        let cheap = run(&preset("cheap").unwrap(), seed);
        // 40 copies of a 20 ms query: everyone answered fast, nobody waits on Redis.
        assert_eq!(cheap.recomputes, 40);
        assert_eq!(cheap.claim_attempts, 0);
        assert!(cheap.p99_ms < 120.0, "{cheap:?}");
        let locked = run(
            &Scenario {
                claim: ClaimMode::Inner,
                ..preset("cheap").unwrap()
            },
            seed,
        );
        assert!(locked.redis_round_trips > cheap.redis_round_trips);
    });
}
