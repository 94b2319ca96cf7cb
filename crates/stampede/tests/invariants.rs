//! Invariants of the whole fleet, checked over many random scenarios and
//! seeds. Each property names the rule it protects; each can fail: the
//! pitfalls break these rules on purpose, and `lessons.rs` shows the damage
//! (remembered failures, pinned threads, no coalescing, corrupted answers).

mod strategies;

use proptest::prelude::*;
use stampede::scenario::{
    Arrivals, ClaimMode, LoserPolicy, Pitfalls, RedisErrorPolicy, Scenario, Workload,
};
use stampede::sim::{EventKind, Fleet};
use strategies::{cfg, claim, fault_kind, scenario};

proptest! {
    #![proptest_config(cfg())]

    /// Every request ends exactly once (hit, stale, computed, shared,
    /// degraded, error or timeout), or is still pinned when the run stops,
    /// or (open-loop) was turned away on arrival.
    #[test]
    fn requests_are_conserved(s in scenario(), seed in any::<u64>()) {
        let mut f = Fleet::new(&s, seed);
        let r = f.run();
        // (An open-loop arrival may also be turned away, never served.)
        prop_assert_eq!(r.ended() + r.pinned + r.rejected, r.requests, "{:?}", r);
        if s.arrivals == Arrivals::Closed || s.workload != Workload::Steady {
            prop_assert_eq!(r.rejected, 0);
        }
        // A refused release is of one kind or the other, never both.
        prop_assert_eq!(r.releases_refused, r.releases_refused_expired + r.releases_refused_taken);
        // The running count agrees with looking at every thread.
        prop_assert_eq!(r.pinned, f.pinned_by_scan());
        if !s.pitfalls.no_deadline {
            prop_assert_eq!(r.pinned, 0, "a deadline frees every thread: {:?}", r);
        }
    }

    /// No caller hears back later than its own deadline (with no retries:
    /// each retry has a deadline of its own, so a caller that retries can
    /// wait for several).
    #[test]
    fn nobody_answers_after_their_deadline(s in scenario(), seed in any::<u64>()) {
        let s = Scenario { pitfalls: Pitfalls { no_deadline: false, ..s.pitfalls }, retries: 0, ..s };
        let r = Fleet::new(&s, seed).run();
        prop_assert!(r.max_ms <= s.deadline_ms as f64, "max {} > deadline {}", r.max_ms, s.deadline_ms);
        prop_assert!(r.max_wait_ms <= s.deadline_ms as f64);
    }

    /// Coalescing deduplicates, it does not memoize: once the fleet is quiet
    /// the flight maps are empty.
    #[test]
    fn flight_maps_drain(s in scenario(), seed in any::<u64>()) {
        let s = Scenario { pitfalls: Pitfalls { remember_failure: false, ..s.pitfalls }, ..s };
        let mut f = Fleet::new(&s, seed);
        let r = f.run();
        if f.busy_threads() == 0 && !f.cut_off() {
            prop_assert_eq!(f.flights_in_flight(), 0);
        }
        prop_assert_eq!(f.remembered_failures_held(), 0);
        prop_assert_eq!(r.remembered_failures, 0);
    }

    /// Same scenario and seed, same event log, bit for bit.
    #[test]
    fn same_seed_same_log(s in scenario(), seed in any::<u64>()) {
        let mut a = Fleet::new(&s, seed);
        let mut b = Fleet::new(&s, seed);
        a.set_recording(true);
        b.set_recording(true);
        let (ra, rb) = (a.run(), b.run());
        prop_assert_eq!(ra, rb);
        prop_assert_eq!(a.log_hash(), b.log_hash());
        prop_assert_eq!(a.drain_events(), b.drain_events());
    }

    /// With singleflight on and no claim, a burst for one key costs at most
    /// one recompute per instance.
    #[test]
    fn singleflight_bounds_recomputes_by_instances(s in scenario(), seed in any::<u64>()) {
        let s = Scenario {
            workload: Workload::Burst,
            singleflight: true,
            claim: ClaimMode::Off,
            fail_rate: 0.0,
            origin_outage_ms: 0,
            hang: false,
            pitfalls: Pitfalls { key_mismatch: false, ..s.pitfalls },
            // One expiry: the value outlives the burst, and the cache is up
            // (with Redis down nothing is stored and every late miss recomputes).
            value_ttl_ms: 600_000,
            redis_down: false,
            faults: Vec::new(),
            // Whatever the callers' deadlines: a recompute, once started,
            // reaches the cache. Only the work's own bounds are lifted.
            origin_timeout_ms: 600_000,
            admission_wait_ms: 600_000,
            ..s
        };
        let r = Fleet::new(&s, seed).run();
        prop_assert!(r.recomputes <= s.instances as u64, "{} recomputes for {} instances", r.recomputes, s.instances);
    }

    /// With a claim whose TTL outlives the slowest recompute, a burst is
    /// recomputed once for the whole fleet (losers wait, degrade or serve stale).
    #[test]
    fn a_long_claim_collapses_the_fleet_to_one(s in scenario(), seed in any::<u64>(), outer in any::<bool>()) {
        let slowest = 5 * s.recompute_ms; // 1.25 x base x 4 at the tail
        let s = Scenario {
            workload: Workload::Burst,
            claim: if outer { ClaimMode::Outer } else { ClaimMode::Inner },
            // Compute, and Stale with nothing stale, recompute on purpose.
            loser: match s.loser {
                LoserPolicy::Compute => LoserPolicy::Wait,
                LoserPolicy::Stale if s.stale_ms == 0 => LoserPolicy::Wait,
                l => l,
            },
            fail_rate: 0.0,
            origin_outage_ms: 0,
            hang: false,
            redis_down: false,
            faults: Vec::new(),
            holder_crash: false,
            stale_while_revalidate: false,
            claim_ttl_ms: slowest + 100,
            // Something stale stays servable for the whole burst, or nothing does.
            stale_ms: if s.stale_ms > 0 { 600_000 } else { 0 },
            value_ttl_ms: 600_000,
            // Callers' deadlines stay as drawn, however short: they end
            // waits, never the one recompute. Only the work's own bounds
            // are lifted (an origin timeout or a shed would be a failure,
            // and a failed holder rightly lets the next one try).
            origin_timeout_ms: slowest + 100,
            admission_wait_ms: 600_000,
            ..s
        };
        let r = Fleet::new(&s, seed).run();
        prop_assert!(r.recomputes <= 1, "{:?}", r);
        prop_assert_eq!(r.overlapping_recomputes, 0);
        // No release ever finds another holder's claim. One can find its own
        // claim expired only when a saturated Redis (a few ops per ms) queued
        // the write and the release past the TTL, which covers the recompute
        // and not the queue.
        prop_assert_eq!(r.releases_refused_taken, 0, "{:?}", r);
        if s.redis_ops_per_ms == 0 {
            prop_assert_eq!(r.releases_refused, 0, "{:?}", r);
        } else if r.releases_refused_expired > 0 {
            // The write and the release each waited at most the queue's peak.
            let queued = r.redis_queue_peak / s.redis_ops_per_ms as u64 + s.rtt_ms as u64 + 1;
            prop_assert!(slowest as u64 + 2 * queued >= s.claim_ttl_ms as u64, "expired with a quick Redis: {:?}", r);
        }
        if r.recomputes == 1 {
            prop_assert!(r.claim_wins >= 1, "the one recompute was claimed: {:?}", r);
        }
    }

    /// Admission control bounds what the origin sees.
    #[test]
    fn admission_bounds_origin_concurrency(s in scenario(), seed in any::<u64>(), limit in 1u32..4) {
        let s = Scenario { admission: limit, ..s };
        let r = Fleet::new(&s, seed).run();
        prop_assert!(r.origin_peak_concurrency <= (s.instances * limit) as u64);
    }

    /// Advancing in slices gives the same run as one go (what the page does).
    #[test]
    fn slices_match_one_run(s in scenario(), seed in any::<u64>(), slice in 1u64..50_000, budget in 1usize..500) {
        let mut whole = Fleet::new(&s, seed);
        let want = whole.run();
        let mut sliced = Fleet::new(&s, seed);
        let mut t = 0;
        while !sliced.is_quiet() {
            if sliced.advance_to(t, budget) {
                t += slice;
            }
        }
        let mut got = sliced.report();
        got.elapsed_ms = want.elapsed_ms;
        prop_assert_eq!(got, want);
        prop_assert_eq!(sliced.log_hash(), whole.log_hash());
    }
}

/// Scenarios with a healthy origin and Redis, where nothing but the rules
/// under test can make a request fail.
fn healthy(s: Scenario) -> Scenario {
    Scenario {
        fail_rate: 0.0,
        origin_outage_ms: 0,
        hang: false,
        redis_down: false,
        faults: Vec::new(),
        holder_crash: false,
        pitfalls: Pitfalls::default(),
        ..s
    }
}

proptest! {
    #![proptest_config(cfg())]

    /// An origin answer that came back within the origin timeout always
    /// reaches the cache, whatever its callers' deadlines (while Redis is up).
    #[test]
    fn a_successful_recompute_always_reaches_the_cache(s in scenario(), seed in any::<u64>()) {
        let s = Scenario { redis_down: false, faults: Vec::new(), ..s };
        let mut f = Fleet::new(&s, seed);
        let r = f.run();
        // Or is refused because a newer fenced write got there first.
        prop_assert_eq!(r.values_written + r.writes_refused, f.origin_answers_in_time(), "{:?}", r);
    }

    /// A claim holder releases only after its value is written or its work
    /// has failed (error, origin timeout): never while its recompute runs.
    #[test]
    fn a_claim_is_released_only_after_the_work_ends(s in scenario(), seed in any::<u64>()) {
        let mut f = Fleet::new(&s, seed);
        f.set_recording(true);
        f.run();
        let mut open: std::collections::HashMap<u32, bool> = Default::default();
        for e in f.drain_events() {
            match e.kind {
                EventKind::Arrive => { open.insert(e.thread, false); }
                EventKind::RecomputeStart => { open.insert(e.thread, true); }
                EventKind::CacheSet | EventKind::OriginTimeout | EventKind::RecomputeEnd => {
                    open.insert(e.thread, false);
                }
                EventKind::Release => {
                    prop_assert!(!open.get(&e.thread).copied().unwrap_or(false),
                        "thread {} released at {} while its recompute ran", e.thread, e.t);
                }
                _ => {}
            }
        }
    }

    /// Once the fleet is quiet, no claim is left held, except the one a
    /// crashed holder took with it (it expires on its own). A release sent
    /// while Redis is down is lost, so Redis faults are left out here.
    #[test]
    fn no_claim_is_orphaned(s in scenario(), seed in any::<u64>()) {
        let mut s = s;
        s.faults.retain(|f| f.kind != stampede::scenario::FaultKind::Redis);
        let mut f = Fleet::new(&s, seed);
        let r = f.run();
        if f.busy_threads() == 0 && !f.cut_off() {
            prop_assert!(f.live_claims() as u64 <= r.crashed, "{} live claims, {:?}", f.live_claims(), r);
        }
    }

    /// A waiting loser never times out while the claim is free and the
    /// origin healthy: after a failed holder releases, the next poll takes
    /// the claim and recomputes, well inside a deadline that allows for one
    /// failed and one good recompute plus a poll and the round trips.
    #[test]
    fn waiting_losers_take_a_free_claim(s in scenario(), seed in any::<u64>(), outage in 1u32..100) {
        let slowest = 5 * s.recompute_ms;
        let s = Scenario {
            workload: Workload::Burst,
            singleflight: true,
            claim: ClaimMode::Inner,
            loser: LoserPolicy::Wait,
            redis_error: RedisErrorPolicy::Open,
            // The first recompute fails; every later one starts after the outage.
            origin_outage_ms: outage.min(s.recompute_ms / 2).max(1),
            origin_capacity: 1_000,
            admission: 0,
            value_ttl_ms: 600_000,
            stale_ms: 0,
            stale_while_revalidate: false,
            negative_ttl_ms: 0,
            claim_ttl_ms: slowest + 100,
            origin_timeout_ms: slowest + 100,
            // Two polls after the failure: the first can find another
            // loser's fresh claim, the next finds its value.
            deadline_ms: s.spread_ms + 2 * slowest + 2 * s.poll_ms + 10 * s.rtt_ms + 20,
            ..healthy(s)
        };
        let r = Fleet::new(&s, seed).run();
        prop_assert_eq!(r.timeouts, 0, "{:?}", r);
        prop_assert!(r.recomputes <= 2, "{:?}", r);
    }

    /// A negative-cache marker damps refreshes but never turns a value that
    /// may still be served into an error, and a failed leader holding a
    /// stale value shares that value, not its failure.
    #[test]
    fn a_negative_marker_never_hides_a_stale_value(
        s in scenario(), seed in any::<u64>(), nt in 1u32..2000, fr in 0.0f64..1.0,
    ) {
        let s = Scenario {
            workload: Workload::Burst,
            stale_ms: 600_000,
            negative_ttl_ms: nt,
            fail_rate: fr,
            // A crash answers its own request with an error, and a Redis
            // outage hides the stale value itself: neither is this rule.
            holder_crash: false,
            redis_down: false,
            faults: Vec::new(),
            pitfalls: Pitfalls { remember_failure: false, ..s.pitfalls },
            ..s
        };
        let r = Fleet::new(&s, seed).run();
        prop_assert_eq!(r.errors, 0, "{:?}", r);
    }
}

proptest! {
    #![proptest_config(cfg())]

    /// XFetch on a hot key with steady traffic: readers refresh before the
    /// value expires, so (nearly) nobody meets a miss; with it off every
    /// expiry is met by someone. "Nearly": a refresh that lands in the
    /// origin's slow tail can still be late once, for at most one wave of
    /// readers (the preset's lesson test pins a hundredfold drop).
    #[test]
    fn early_refresh_removes_misses_at_expiry(
        s in scenario(), seed in any::<u64>(), beta in 1.0f64..3.0,
        (instances, threads, recompute_ms) in (1u32..6, 5u32..30, 20u32..300),
        claim in claim(),
    ) {
        let s = Scenario {
            workload: Workload::Steady,
            keys: 1,
            instances,
            threads,
            recompute_ms,
            claim,
            // Reads come often next to a recompute's length, so some read
            // falls in the early window before each expiry.
            think_ms: (recompute_ms / 4).max(1),
            // Closed-loop readers at that pace (open-loop at a random rate
            // may bring too few), each read its own first attempt.
            arrivals: Arrivals::Closed,
            retries: 0,
            value_ttl_ms: 40 * recompute_ms,
            duration_ms: 200 * recompute_ms,
            jitter: 0.0,
            // Early refresh works on reads of Redis: a local copy answers
            // without looking at the expiry, and a queue at Redis makes
            // every read slower than the early window.
            local_cache_ms: 0,
            redis_ops_per_ms: 0,
            stale_ms: 0,
            stale_while_revalidate: false,
            origin_capacity: 1_000,
            admission: 0,
            deadline_ms: 20 * recompute_ms,
            origin_timeout_ms: 20 * recompute_ms,
            claim_ttl_ms: 20 * recompute_ms,
            negative_ttl_ms: 0,
            xfetch_beta: beta,
            ..healthy(s)
        };
        let on = Fleet::new(&s, seed).run();
        let off = Fleet::new(&Scenario { xfetch_beta: 0.0, ..s.clone() }, seed).run();
        // Four expiries at least: without XFetch each is met by someone.
        prop_assert!(off.misses >= 4, "{:?}", off);
        prop_assert!(on.misses <= u64::from(instances * threads), "on {} vs off {}: {:?}", on.misses, off.misses, on);
        prop_assert!(on.misses < off.misses, "on {} vs off {}: {:?}", on.misses, off.misses, on);
        prop_assert!(on.early_refreshes > 0);
    }
}

proptest! {
    #![proptest_config(cfg())]

    /// With fenced writes, and every writer a claim holder (losers wait, the
    /// cache and claims up), an older value never lands on a newer one,
    /// however short the claim TTL, as long as each holder asks the origin
    /// as soon as its claim's reply is in: no admission queue between the
    /// two, and no Redis queue to delay one holder's reply more than
    /// another's. A fence orders the claims, not the data: a holder that
    /// waits after its claim reads newer data than a later holder that did
    /// not wait, and the later fence then lands the older value
    /// (`a_fence_orders_claims_not_the_data_read_after_a_wait` below).
    #[test]
    fn fenced_writes_never_overwrite_newer_data(s in scenario(), seed in any::<u64>(), outer in any::<bool>()) {
        let s = Scenario {
            fenced_writes: true,
            singleflight: true,
            claim: if outer { ClaimMode::Outer } else { ClaimMode::Inner },
            loser: LoserPolicy::Wait,
            stale_while_revalidate: false,
            redis_down: false,
            admission: 0,
            redis_ops_per_ms: 0,
            faults: Vec::new(),
            pitfalls: Pitfalls { key_mismatch: false, ..s.pitfalls },
            ..s
        };
        let r = Fleet::new(&s, seed).run();
        prop_assert_eq!(r.stale_overwrites, 0, "{:?}", r);
    }
}

proptest! {
    #![proptest_config(cfg())]

    /// Redis's queue: a round trip is never faster than rtt (the queue
    /// only adds), the queue is empty at unlimited throughput, and a
    /// breaker never skips a command while Redis is up.
    #[test]
    fn redis_round_trips_are_never_faster_than_rtt(s in scenario(), seed in any::<u64>()) {
        let r = Fleet::new(&s, seed).run();
        let up = !s.redis_down && s.faults.iter().all(|f| f.kind != stampede::scenario::FaultKind::Redis);
        if up && r.redis_round_trips > 0 {
            prop_assert!(r.redis_p99_ms >= f64::from(s.rtt_ms), "{:?}", r);
        }
        if s.redis_ops_per_ms == 0 {
            prop_assert_eq!(r.redis_queue_peak, 0);
        }
        if up || s.redis_breaker_ms == 0 {
            prop_assert_eq!(r.redis_skipped, 0);
        }
        if s.local_cache_ms == 0 {
            prop_assert_eq!(r.local_hits, 0);
        }
    }

    /// A round trip is a command sent and answered (issue 39 §6): with
    /// Redis down for the whole run, whether it errors at once or hangs,
    /// no command is one.
    #[test]
    fn a_down_redis_answers_no_round_trip(s in scenario(), seed in any::<u64>()) {
        let s = Scenario { redis_down: true, ..s };
        let r = Fleet::new(&s, seed).run();
        prop_assert_eq!(r.redis_round_trips, 0, "{:?}", r);
    }
}

proptest! {
    #![proptest_config(cfg())]

    /// A fault injected into a running fleet (a curveball) makes, event for
    /// event, the run of a fleet whose link carried it from the start.
    #[test]
    fn an_injected_fault_equals_a_linked_one(
        s in scenario(), seed in any::<u64>(), kind in fault_kind(),
        at in 1u32..1500, duration in prop_oneof![Just(None), (1u32..2000).prop_map(Some)],
    ) {
        let fault = stampede::scenario::Fault { kind, start_ms: at, duration_ms: if kind.is_moment() { None } else { duration } };
        let mut linked = s.clone();
        linked.faults.push(fault);
        let mut a = Fleet::new(&linked, seed);
        let ra = a.run();
        let mut b = Fleet::new(&s, seed);
        // Up to just before the fault, then the curveball.
        b.advance_to(u64::from(at) * 1000 - 1, usize::MAX);
        prop_assert!(b.inject(fault).is_ok());
        let rb = b.run();
        prop_assert_eq!(a.log_hash(), b.log_hash(), "{:?}", fault);
        prop_assert_eq!(ra, rb);
        // A fault in the past is refused.
        let mut late = Fleet::new(&s, seed);
        late.advance_to(u64::from(at) * 1000, usize::MAX);
        prop_assert!(late.inject(fault).is_err());
    }
}

proptest! {
    #![proptest_config(cfg())]

    /// A retry is another attempt of the same request, never a new one:
    /// each attempt asks the origin at most once.
    #[test]
    fn retries_are_attempts_not_requests(s in scenario(), seed in any::<u64>()) {
        let r = Fleet::new(&s, seed).run();
        prop_assert!(r.recomputes <= (1 + u64::from(s.retries)) * r.requests, "{:?}", r);
        if s.retries == 0 {
            prop_assert_eq!(r.retries, 0);
        }
        prop_assert!(r.retries <= u64::from(s.retries) * r.requests);
    }
}

proptest! {
    #![proptest_config(cfg())]

    /// A counter the fleet calls final (`Fleet::is_final`) never changes
    /// again; once the fleet has settled, none does (but the clock and the
    /// event count): the page may reveal a number then, not at the end.
    #[test]
    fn a_final_counter_never_changes(s in scenario(), seed in any::<u64>(), slice in 1u64..400) {
        let end = Fleet::new(&s, seed).run();
        let mut f = Fleet::new(&s, seed);
        let mut t = 0;
        let mut seen = std::collections::BTreeMap::new();
        while !f.is_quiet() {
            t += slice * 1000;
            while !f.advance_to(t, 1 << 20) {}
            let r = f.report();
            for &m in stampede::Metric::ALL {
                if f.is_final(m) {
                    seen.entry(m.name()).or_insert((r.text(m), t));
                }
            }
            if f.settled() {
                prop_assert!(s.workload != Workload::Steady);
                let now = stampede::Report { elapsed_ms: end.elapsed_ms, events: end.events, ..f.report() };
                prop_assert_eq!(now, end.clone(), "settled at {} us", t);
            }
        }
        for &m in stampede::Metric::ALL {
            if let Some((then, at)) = seen.get(m.name()) {
                prop_assert_eq!(then, &end.text(m), "{} final at {} us", m.name(), at);
            }
        }
    }
}

/// The boundary of the property above, pinned (proptest found it): with
/// one admission permit per instance, a holder can wait for the permit
/// after its claim, outlive its 70 ms claim, and then read newer data than
/// the holder that claimed after it without waiting. Both write under their
/// fences, in fence order, and the later fence lands the older value.
/// Fencing refuses a late claim's write; it cannot tell which holder read
/// the origin last.
#[test]
fn a_fence_orders_claims_not_the_data_read_after_a_wait() {
    let s = Scenario {
        instances: 5,
        threads: 2,
        keys: 2,
        workload: Workload::Steady,
        singleflight: true,
        claim: ClaimMode::Inner,
        loser: LoserPolicy::Wait,
        redis_error: RedisErrorPolicy::Closed,
        recompute_ms: 251,
        origin_capacity: 3,
        claim_ttl_ms: 70,
        rtt_ms: 0,
        deadline_ms: 1,
        origin_timeout_ms: 508,
        value_ttl_ms: 358,
        jitter: 0.0,
        stale_ms: 0,
        stale_while_revalidate: false,
        xfetch_beta: 1.5585172387568416,
        fenced_writes: true,
        admission: 1,
        admission_wait_ms: 267,
        redis_timeout_ms: 1,
        redis_ops_per_ms: 6,
        arrivals: Arrivals::Closed,
        rate_per_s: 1,
        key_skew: 0.25574566586634545,
        poll_ms: 5,
        spread_ms: 0,
        duration_ms: 1570,
        think_ms: 104,
        ..Scenario::default()
    };
    let r = Fleet::new(&s, 7693290417690344219).run();
    assert!(r.admission_waits > 0, "{r:?}");
    assert_eq!(r.stale_overwrites, 1, "{r:?}");
    // Without the admission queue the same run lands nothing older.
    let free = Fleet::new(&Scenario { admission: 0, ..s }, 7693290417690344219).run();
    assert_eq!(free.stale_overwrites, 0, "{free:?}");
}

proptest! {
    #![proptest_config(cfg())]

    /// `Report::get` and `Report::text` read the counter the metric names
    /// (what the JSON has under its name), over random runs so that the
    /// counters differ.
    #[test]
    fn a_metric_reads_its_own_counter(s in scenario(), seed in any::<u64>()) {
        let r = Fleet::new(&s, seed).run();
        let json = serde_json::to_value(&r).unwrap();
        for m in stampede::Metric::ALL {
            prop_assert_eq!(r.get(*m), json[m.name()].as_f64().unwrap(), "{:?}", m);
            prop_assert_eq!(r.text(*m), json[m.name()].to_string(), "{:?}", m);
        }
    }
}
