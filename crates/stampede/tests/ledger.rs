//! The run's ledger: every request ends once, with a cause the simulation
//! recorded when it happened. Checked over random scenarios (faults,
//! pitfalls and open-loop traffic included): the ledger sums to the
//! requests, its columns are the report's outcome counters, and each cause
//! appears only in runs where what it names can happen.

mod strategies;

use proptest::prelude::*;
use stampede::ledger::{Cause, End};
use stampede::scenario::{Arrivals, FaultKind, Scenario};
use stampede::sim::Fleet;
use stampede::Report;
use strategies::{cfg, scenario};

/// The report's counter for each end.
fn counter(r: &Report, e: End) -> u64 {
    match e {
        // A written value is a hit to the counters: its read found it.
        End::Hit | End::Written => 0,
        End::Computed => r.computed,
        End::Shared => r.shared,
        End::Stale => r.stale_served,
        End::Degraded => r.degraded,
        End::Error => r.errors,
        End::Timeout => r.timeouts,
        End::TurnedAway => r.rejected,
        End::Unanswered => r.pinned,
    }
}

fn has_fault(s: &Scenario, kind: FaultKind) -> bool {
    s.faults.iter().any(|f| f.kind == kind)
}

proptest! {
    #![proptest_config(cfg())]

    /// Every request is in the ledger once, and the report's outcome
    /// counters are its column sums.
    #[test]
    fn ledger_sums_to_the_requests(s in scenario(), seed in any::<u64>()) {
        let r = Fleet::new(&s, seed).run();
        let l = &r.ledger;
        prop_assert_eq!(l.total(), r.requests, "{:?}", l);
        prop_assert_eq!(l.ended(End::Hit) + l.ended(End::Written), r.hits);
        for e in End::ALL.into_iter().filter(|e| !matches!(e, End::Hit | End::Written)) {
            prop_assert_eq!(l.ended(e), counter(&r, e), "{:?}: {:?}", e, l);
        }
        prop_assert_eq!(r.fault_acts.len(), s.faults.len());
        prop_assert_eq!(r.fault_acts.iter().map(|a| a.total()).sum::<u64>(), r.fault_bites);
    }

    /// Each cause shows up only with the end it can give, and only in a
    /// run where what it names could happen.
    #[test]
    fn causes_are_what_happened(s in scenario(), seed in any::<u64>()) {
        let r = Fleet::new(&s, seed).run();
        let l = &r.ledger;
        for (e, c, n) in l.rows() {
            let ctx = format!("{n} x {e:?}/{c:?} in {l:?}");
            // Waiting causes end in a timeout, and only they do.
            prop_assert_eq!(c.is_wait(), e == End::Timeout, "{}", ctx);
            prop_assert_eq!(c == Cause::Pending, e == End::Unanswered, "{}", ctx);
            prop_assert_eq!(c == Cause::PoolFull, e == End::TurnedAway, "{}", ctx);
            // A fresh value is the read path doing its job.
            if e.is_fresh() {
                prop_assert_eq!(c, Cause::Served, "{}", ctx);
            }
            match c {
                Cause::OriginFailed => prop_assert!(s.fail_rate > 0.0 || s.origin_outage_ms > 0, "{}", ctx),
                Cause::OriginFault => prop_assert!(has_fault(&s, FaultKind::Origin), "{}", ctx),
                Cause::OriginTimedOut => prop_assert!(r.origin_timeouts > 0, "{}", ctx),
                Cause::Crashed => prop_assert!(r.crashed > 0, "{}", ctx),
                Cause::WaitedDeadHolder => prop_assert!(r.crashed > 0, "{}", ctx),
                Cause::RedisFailed => prop_assert!(
                    s.redis_down || has_fault(&s, FaultKind::Redis),
                    "{}", ctx
                ),
                Cause::Admission => prop_assert!(r.admission_shed > 0, "{}", ctx),
                Cause::WaitedAdmission => prop_assert!(r.admission_waits > 0, "{}", ctx),
                Cause::Remembered => prop_assert!(r.remembered_failures > 0, "{}", ctx),
                Cause::Marker => prop_assert!(r.negative_hits > 0, "{}", ctx),
                Cause::PoolFull | Cause::WaitedAccept => prop_assert_eq!(s.arrivals, Arrivals::Open, "{}", ctx),
                Cause::Revalidating => prop_assert!(s.stale_while_revalidate, "{}", ctx),
                // A flight needs a second thread in the instance to wait
                // on it (a poller that slept out its budget waited on the
                // claim: it was once named a wait on a flight).
                Cause::WaitedFlight => prop_assert!(s.threads > 1, "{}", ctx),
                _ => {}
            }
        }
    }

    /// A fault window records what it did; one that opened after the run's
    /// last event did nothing (but a deploy's re-warm, which is an event of
    /// its own: it writes every key holding a value at its start).
    #[test]
    fn fault_windows_record_their_acts(s in scenario(), seed in any::<u64>()) {
        let r = Fleet::new(&s, seed).run();
        for (f, a) in s.faults.iter().zip(&r.fault_acts) {
            if f.start_ms as f64 > r.elapsed_ms && f.kind != FaultKind::TtlSync {
                prop_assert!(!a.did_anything(), "{:?} after the end did {:?}", f, a);
            }
            let other = match f.kind {
                FaultKind::Origin => a.total() - a.calls_failed,
                FaultKind::OriginHang => a.total() - a.calls_hung,
                FaultKind::OriginSlow => a.total() - a.calls_slowed,
                FaultKind::Redis => a.total() - a.redis_failed,
                FaultKind::Holder => a.total() - a.holders_killed,
                FaultKind::TtlSync => a.total() - a.keys_rewarmed,
            };
            prop_assert_eq!(other, 0, "{:?} did {:?}", f, a);
        }
        // An origin error caused by a window is counted by that window.
        let by_windows: u64 = r.fault_acts.iter().map(|a| a.calls_failed).sum();
        prop_assert!(r.ledger.caused(Cause::OriginFault) == 0 || by_windows > 0);
    }
}

/// The card's burst, with and without defences: the ledger tells the same
/// story as the counters, cell by cell.
#[test]
fn card_burst_ledger() {
    let s = Scenario::default();
    let r = Fleet::new(&s, 1).run();
    assert_eq!(r.ledger.total(), r.requests);
    assert_eq!(r.ledger.get(End::Computed, Cause::Served), r.computed);
    assert_eq!(r.ledger.values(), r.requests, "{:?}", r.ledger);
}

/// A healthy Redis is not what callers waited on: in the hung-origin
/// preset the instances that lost the claim poll a quick Redis for a value
/// that never comes, and a poll caught mid round trip at the deadline is
/// still a wait for the claim (it was once counted as a wait on Redis).
#[test]
fn a_healthy_redis_is_not_the_wait() {
    let s = stampede::scenario::preset("hang").unwrap();
    for seed in 1..6 {
        let r = Fleet::new(&s, seed).run();
        assert_eq!(r.ledger.caused(Cause::WaitedRedis), 0, "{:?}", r.ledger);
        assert_eq!(r.ledger.ended(End::Timeout), r.requests);
        assert!(r.ledger.get(End::Timeout, Cause::WaitedClaim) > 0);
    }
}

/// A caller that timed out writing the value its slow origin call made,
/// to a Redis that hangs for 10 ms a command, lost its time to the origin,
/// not to Redis (the audit's example: it was named a wait on Redis).
#[test]
fn a_write_after_a_slow_origin_call_is_the_origins_time() {
    use stampede::scenario::RedisOutage;
    let s = Scenario {
        fenced_writes: true,
        redis_down: true,
        redis_outage: RedisOutage::Hang,
        redis_timeout_ms: 10,
        spread_ms: 3000,
        instances: 50,
        threads: 400,
        ..Scenario::default()
    };
    let r = Fleet::new(&s, 1).run();
    assert!(r.timeouts > 0);
    assert_eq!(
        r.ledger.get(End::Timeout, Cause::WaitedOrigin),
        r.timeouts,
        "{:?}",
        r.ledger
    );
}

/// While a fault window hangs Redis, its acts count a command as failed
/// when its client gives up on it, as the report's Redis errors do, not
/// when it was sent: at every moment of the run the window's "held"
/// commands are the failures that have happened by then.
#[test]
fn a_hung_windows_failures_are_counted_when_they_happen() {
    use stampede::scenario::{Fault, RedisOutage};
    let s = Scenario {
        redis_outage: RedisOutage::Hang,
        redis_timeout_ms: 150,
        spread_ms: 400,
        faults: vec![Fault {
            kind: FaultKind::Redis,
            start_ms: 0,
            duration_ms: Some(600),
        }],
        ..Scenario::default()
    };
    for seed in 1..4 {
        let mut f = Fleet::new(&s, seed);
        let mut ahead_of_none = 0;
        for step in 1..=400u64 {
            f.advance_to(step * 5_000, usize::MAX);
            let r = f.report();
            let held = r.fault_acts[0].redis_failed;
            assert_eq!(held, r.redis_errors, "seed {seed} at {} ms", step * 5);
            if held > 0 {
                ahead_of_none += 1;
            }
        }
        assert!(ahead_of_none > 0, "seed {seed}: the window failed nothing");
        let end = f.run();
        assert_eq!(end.fault_acts[0].redis_failed, end.redis_errors);
    }
}
