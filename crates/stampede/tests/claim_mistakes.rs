//! The two claim mistakes "Write it yourself" offers, as the core runs
//! them: a release that is a plain `DEL` (no token checked), and a claim
//! set with no `PX` (it never expires). Each property compares the same
//! traffic and seed with and without the mistake.

mod strategies;

use proptest::prelude::*;
use stampede::scenario::{
    ClaimMode, Fault, FaultKind, LoserPolicy, Pitfalls, RedisErrorPolicy, Scenario, Workload,
};
use stampede::sim::Fleet;
use strategies::{cfg, scenario};

fn with(s: &Scenario, set: impl Fn(&mut Pitfalls)) -> Scenario {
    let mut s = s.clone();
    set(&mut s.pitfalls);
    s
}

prop_compose! {
    /// Steady traffic whose claims can expire under a working holder: the
    /// claim TTL is shorter than a recompute, sometimes (the origin slows
    /// down for a while).
    fn outlived()(
        (instances, threads, seed) in (2u32..8, 1u32..12, any::<u64>()),
        (recompute_ms, claim_ttl_ms) in (50u32..300, 20u32..400),
        (slow_at, slow_for) in (0u32..3000, 100u32..3000),
        (poll_ms, value_ttl_ms) in (5u32..60, 200u32..2000),
    ) -> (Scenario, u64) {
        (Scenario {
            instances, threads, workload: Workload::Steady, claim: ClaimMode::Inner,
            loser: LoserPolicy::Wait, recompute_ms, claim_ttl_ms, poll_ms, value_ttl_ms,
            deadline_ms: 2000, duration_ms: 6000, think_ms: 50,
            faults: vec![Fault { kind: FaultKind::OriginSlow, start_ms: slow_at, duration_ms: Some(slow_for) }],
            ..Scenario::default()
        }, seed)
    }
}

proptest! {
    #![proptest_config(cfg())]

    /// A release by token never deletes a claim another caller holds; a
    /// plain DEL is never refused. The two runs are the same traffic up to
    /// the first release that finds another office holding the claim:
    /// where the token release is refused, the plain DEL has deleted an
    /// office's claim (there, or earlier).
    #[test]
    fn a_plain_del_deletes_the_claim_a_token_release_refuses(s in scenario(), seed in any::<u64>()) {
        let token = Fleet::new(&with(&s, |p| p.plain_del = false), seed).run();
        let plain = Fleet::new(&with(&s, |p| p.plain_del = true), seed).run();
        prop_assert_eq!(token.claims_deleted_of_others, 0, "{:?}", token);
        prop_assert_eq!(plain.releases_refused, 0, "{:?}", plain);
        // (Not the converse: the release of a claim whose reply timed out,
        // sent unawaited, is not counted refused when it finds another's.)
        if token.releases_refused_taken > 0 {
            prop_assert!(plain.claims_deleted_of_others > 0, "token {:?}\nplain {:?}", token, plain);
        }
    }

    /// Where claims outlive their recompute's TTL, the plain DEL frees
    /// claims other offices hold (the key free for a third), on the runs
    /// where the token release was refused; and its runs end every request
    /// once, as any other. (No Redis fault here: every release is a
    /// holder's, so refused and deleted go together both ways.)
    #[test]
    fn a_holder_that_outlived_its_claim_frees_anothers_with_a_plain_del((s, seed) in outlived()) {
        let token = Fleet::new(&s, seed).run();
        let plain = Fleet::new(&with(&s, |p| p.plain_del = true), seed).run();
        prop_assert_eq!(token.releases_refused_taken > 0, plain.claims_deleted_of_others > 0);
        prop_assert_eq!(plain.ended() + plain.pinned, plain.requests);
        prop_assert_eq!(plain.ledger.total(), plain.ended());
    }

    /// A claim set with no PX outlives its holder: once a holder dies with
    /// it, nobody wins the key again and nobody recomputes it (its callers
    /// wait out their deadlines). With a PX the claim expires and a later
    /// caller claims and recomputes, when the run goes on long enough.
    #[test]
    fn a_dead_holders_claim_with_no_expiry_locks_the_key_for_good(
        (instances, threads, seed) in (1u32..6, 1u32..10, any::<u64>()),
        (claim_ttl_ms, deadline_ms, steady) in (50u32..800, 100u32..1500, any::<bool>()),
    ) {
        let s = Scenario {
            instances, threads, claim_ttl_ms, deadline_ms, holder_crash: true,
            workload: if steady { Workload::Steady } else { Workload::Burst },
            // A steady run starts warm: its value expires early, and the
            // refresh's claim winner is the one that dies.
            duration_ms: 4000, think_ms: 100, value_ttl_ms: 300,
            claim: ClaimMode::Inner, loser: LoserPolicy::Wait,
            redis_error: RedisErrorPolicy::Open,
            ..Scenario::default()
        };
        let never = Fleet::new(&with(&s, |p| p.no_expiry = true), seed).run();
        prop_assert_eq!(never.crashed, 1);
        prop_assert_eq!(never.claim_wins, 1, "{:?}", never);
        prop_assert_eq!(never.recomputes, 0, "{:?}", never);
        prop_assert_eq!(never.ended() + never.pinned, never.requests);
        let expires = Fleet::new(&s, seed).run();
        // Steady traffic asks again well after the claim's TTL.
        if steady {
            prop_assert!(expires.claim_wins >= 2, "{:?}", expires);
            prop_assert!(expires.recomputes >= 1, "{:?}", expires);
        }
    }
}

#[test]
fn a_dead_holder_with_no_expiry_never_marks_its_claim_expiring() {
    use stampede::sim::Milestone;
    let s = Scenario {
        instances: 3,
        threads: 4,
        holder_crash: true,
        claim_ttl_ms: 300,
        ..Scenario::default()
    };
    for (no_expiry, want) in [(false, true), (true, false)] {
        let mut f = Fleet::new(&with(&s, |p| p.no_expiry = no_expiry), 1);
        f.run();
        let marked = f
            .markers()
            .iter()
            .any(|m| m.what == Milestone::DeadClaimExpires);
        assert_eq!(marked, want, "no_expiry {no_expiry}");
    }
}
