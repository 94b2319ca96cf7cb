use super::*;
use crate::read_path::{Place, Places};
use crate::scenario::preset;

#[test]
fn samples_only_grow_and_end_where_the_run_does() {
    let s = Scenario::default();
    let full = Fleet::new(&s, 1).run();
    let mut probe = Fleet::new(&s, 1);
    probe.run();
    let end = probe.last_activity();
    assert!(
        end < 1_100_000,
        "the burst is over within its deadline: {end}"
    );
    let mut f = Fleet::new(&s, 1);
    let mut samples = vec![f.sample()];
    for i in 1..=50u64 {
        f.advance_to(end * i / 50, usize::MAX);
        samples.push(f.sample());
    }
    assert_eq!(samples.len(), 51);
    let last = samples.last().unwrap();
    assert_eq!(last.recomputes, full.recomputes);
    assert_eq!(last.served, full.ended());
    for w in samples.windows(2) {
        assert!(w[0].t <= w[1].t);
        assert!(w[0].redis_round_trips <= w[1].redis_round_trips);
        assert!(w[0].served <= w[1].served);
    }
}

#[test]
fn arrivals_are_ordered_by_time_then_thread_however_the_build_is_sliced() {
    for (n, spread_ms, budget) in [
        (1u32, 0u32, 1u64),
        (50, 10, 7),
        (1000, 3, 100),
        (100, 60_000, 13),
    ] {
        let s = Scenario {
            instances: 1,
            threads: n,
            spread_ms,
            ..Scenario::default()
        };
        let mut whole = Fleet::new(&s, 9);
        whole.build_some(u64::MAX);
        let mut sliced = Fleet::new(&s, 9);
        while !sliced.ready() {
            sliced.build_some(budget);
        }
        assert_eq!(whole.arrivals, sliced.arrivals);
        assert_eq!(whole.thread_of, sliced.thread_of);
        let by_thread: Vec<(Micros, u32)> = whole
            .arrivals
            .iter()
            .map(|(t, slot)| (*t, whole.thread_of[*slot as usize]))
            .collect();
        let mut sorted = by_thread.clone();
        sorted.sort_unstable();
        assert_eq!(by_thread, sorted);
        let mut threads = whole.thread_of.clone();
        threads.sort_unstable();
        assert_eq!(threads, (0..n).collect::<Vec<_>>());
    }
}

#[test]
fn markers_tell_each_story_in_order() {
    let kinds = |name: &str| {
        let mut f = Fleet::new(&crate::scenario::preset(name).unwrap(), 1);
        f.run();
        assert!(f.markers().windows(2).all(|w| w[0].t <= w[1].t));
        f.markers().iter().map(|m| m.what).collect::<Vec<_>>()
    };
    use Milestone::*;
    assert_eq!(
        kinds("burst"),
        [KeyExpires, ClaimWon, RecomputeStarts, ValueWritten]
    );
    let crash = kinds("holder-crash");
    let at = |k| crash.iter().position(|m| *m == k).unwrap();
    assert!(at(KeyExpires) < at(HolderCrashes));
    assert!(at(HolderCrashes) < at(DeadClaimExpires));
    assert!(at(DeadClaimExpires) < at(ValueWritten), "{crash:?}");
    assert!(kinds("failure").contains(&OutageEnds));
    assert!(kinds("hang").contains(&OriginTimeout));
    assert!(kinds("cold").contains(&Shed));
    // A steady run marks each expiry of its hottest key.
    let steady = kinds("jitter");
    assert!(steady.iter().filter(|m| **m == KeyExpires).count() >= 3);
}

#[test]
fn states_describe_every_thread() {
    let s = Scenario {
        instances: 3,
        threads: 7,
        ..Scenario::default()
    };
    let mut f = Fleet::new(&s, 4);
    assert_eq!(f.thread_states().len(), 21);
    assert!(f.thread_states().iter().all(|b| *b == Activity::Idle as u8));
    f.advance_to(5_000, usize::MAX);
    assert!(f.thread_states().iter().any(|b| *b != Activity::Idle as u8));
    f.run();
    // Every thread ends showing how it was answered.
    assert!(f
        .thread_states()
        .iter()
        .all(|b| *b >= Activity::Hit as u8 && (*b as usize) < Activity::COUNT));
}

/// A breaker cannot see that Redis is back: once open it skips Redis for its
/// whole length, as a real client's does (the real fleet's breaker agrees).
#[test]
fn an_open_breaker_skips_redis_after_redis_is_back_until_it_closes() {
    let (s, _, n) = Scenario::from_query("preset=jitter&c=inner&i=4&t=10&f=redis@1000+20&rbk=2000");
    assert!(n.is_empty(), "{n:?}");
    let mut fleet = Fleet::new(&s, 1);
    let at = |fleet: &mut Fleet, ms: u64| {
        assert!(fleet.advance_to(ms * 1000, usize::MAX));
        let r = fleet.report();
        (r.redis_skipped, r.redis_round_trips)
    };
    let (skipped_back, trips_back) = at(&mut fleet, 1_100);
    let (skipped_open, trips_open) = at(&mut fleet, 2_900);
    assert!(
        skipped_open > skipped_back,
        "{skipped_back} -> {skipped_open}"
    );
    assert_eq!(
        trips_open, trips_back,
        "a command was sent through an open breaker"
    );
    let (_, trips_closed) = at(&mut fleet, 4_000);
    assert!(trips_closed > trips_open, "the breaker never closed");
}

/// The read path's places, read from the fleet's log.
#[test]
fn the_claim_holders_place_follows_its_steps_down_the_path() {
    // The card's run: the first winner's places, in the order they
    // change, run down the listing, through the recompute, the write
    // and the release; nobody else is ever on the winner's lines.
    let mut fleet = Fleet::new(&preset("burst").unwrap(), 1);
    fleet.set_recording(true);
    let mut places = Places::default();
    let mut seen = Vec::new();
    let mut holder = None;
    while !fleet.is_quiet() {
        let t = fleet.now() + 1000;
        fleet.advance_to(t, usize::MAX);
        for e in fleet.drain_events() {
            places.record(&e);
            holder = holder.or(places.first_winner());
            if Some(e.thread) == holder {
                let p = places.of(e.thread);
                if seen.last() != Some(&p) {
                    seen.push(p);
                }
            }
        }
    }
    assert_eq!(
        seen,
        [
            Place::Won,
            Place::Rechecking,
            Place::Recomputing,
            Place::Writing,
            Place::Settling,
            Place::Releasing
        ]
    );
    let h = holder.unwrap();
    assert_eq!(places.of(h), Place::Releasing);
    // A follower answered from its flight stays on the follower's line.
    let follower = (0..8000u32).find(|t| places.of(*t) == Place::Following);
    assert!(follower.is_some());
    // The claim holder that dies as it wins: its crash is on record.
    let mut fleet = Fleet::new(&preset("holder-crash").unwrap(), 1);
    fleet.set_recording(true);
    let mut places = Places::default();
    fleet.advance_to(8_000_000, usize::MAX);
    for e in fleet.drain_events() {
        places.record(&e);
    }
    let w = places.first_winner().unwrap();
    assert!(places.crashed_at(w).is_some());
    assert_eq!(
        Place::Reading.after(EventKind::Respond, Ending::Hit as u8),
        Place::Served
    );
    assert_eq!(
        Place::Following.after(EventKind::Respond, Ending::Shared as u8),
        Place::Following
    );
}

/// The office the page names as the claim's holder is the instance whose
/// token is live at Redis: named exactly while a claim lives, and never
/// the holder of a claim that expired (short-ttl's claims run out
/// mid-recompute, and the next winner's office is named instead).
#[test]
fn the_named_holder_office_holds_the_live_claim() {
    for (name, seed) in [
        ("burst", 1),
        ("short-ttl", 1),
        ("short-ttl", 2),
        ("short-ttl", 3),
    ] {
        let s = preset(name).unwrap();
        let mut fleet = Fleet::new(&s, seed);
        fleet.set_recording(true);
        let mut winner = None;
        let mut named = 0;
        while !fleet.is_quiet() {
            let t = fleet.now() + 500;
            fleet.advance_to(t, usize::MAX);
            for e in fleet.drain_events() {
                if e.kind == EventKind::ClaimWon {
                    winner = Some(e.thread / s.threads);
                }
            }
            let office = fleet.live_claim_office();
            if fleet.live_claims() == 0 {
                assert_eq!(office, None, "{name}: an expired claim's office named");
            }
            if let Some(o) = office {
                named += 1;
                // Claims are exclusive: the live one is the latest won.
                assert_eq!(Some(o), winner, "{name}: the winner's office");
            }
        }
        assert!(named > 0, "{name}: a live claim was never named");
    }
}

/// A Redis that hangs keeps the commands sent to it and runs them, in the
/// order sent, when it resumes. A claim its client gave up on lands then;
/// the release by its token, sent after it on the same connection, clears
/// it at once. Without that release the key stays locked for the claim's
/// whole TTL.
/// `instances` x `threads` on a Redis that hangs for the first 300 ms
/// (the client gives up at 100 ms) and resumes, with a 5 s claim.
fn hung_for_300_ms(instances: u32, threads: u32) -> Scenario {
    Scenario {
        instances,
        threads,
        redis_outage: RedisOutage::Hang,
        redis_timeout_ms: 100,
        claim_ttl_ms: 5000,
        faults: vec![Fault {
            kind: FaultKind::Redis,
            start_ms: 0,
            duration_ms: Some(300),
        }],
        ..Scenario::default()
    }
}

/// A resumed Redis runs each connection's waiting commands in turn: every
/// instance's late claim lands and is then cleared by its own release (a
/// real redis-server stopped and resumed does the same: the conformance
/// row's fleet saw 10 of 10 at 10 instances), not one claim for the fleet
/// with the rest refused by NX.
#[test]
fn a_resumed_redis_runs_each_instances_claim_and_release_together() {
    let s = hung_for_300_ms(4, 3);
    let mut f = Fleet::new(&s, 1);
    f.advance_to(300 * US + 1, usize::MAX);
    let r = f.report();
    assert_eq!((r.late_claims, r.late_claims_released), (4, 4), "{r:?}");
    assert_eq!(r.late_claims_held_at_resume, 0);
    assert!(f.claims.holder(&0, f.now).is_none());
}

#[test]
fn a_claim_sent_to_a_hung_redis_lands_at_resume_and_its_release_clears_it() {
    let s = hung_for_300_ms(1, 1);
    let resume = 300 * US;
    let ttl = 5000 * US;
    let locked = |f: &Fleet| f.claims.holder(&0, f.now).is_some();
    for release in [true, false] {
        let mut f = Fleet::new(&s, 1);
        f.strategy.release_timed_out_claims = release;
        f.advance_to(resume - 1, usize::MAX);
        assert!(!locked(&f), "nothing lands while Redis hangs");
        assert_eq!(
            f.report().claim_attempts,
            1,
            "the claim was sent in the hang"
        );
        f.advance_to(resume + 1, usize::MAX);
        let r = f.report();
        assert_eq!(r.late_claims, 1, "release {release}: the claim landed");
        assert_eq!(r.unclaims, u64::from(release));
        assert_eq!(r.late_claims_released, u64::from(release));
        assert_eq!(r.late_claims_held_at_resume, u64::from(!release));
        assert_eq!(locked(&f), !release, "release {release}");
        f.advance_to(resume + ttl - 1, usize::MAX);
        assert_eq!(locked(&f), !release, "release {release}: until the TTL");
        f.advance_to(resume + ttl, usize::MAX);
        assert!(!locked(&f), "the claim's TTL ends it");
        f.run();
        let r = f.report();
        assert_eq!(r.requests, r.ended(), "every caller answered");
    }
}
