//! Random scenarios for property tests: small fleets with every knob in
//! play, faults and pitfalls included. The core's invariants use them, and
//! so do the catalogue's sentence properties (included from there by path),
//! so both search the same space.

#![allow(dead_code)]

use proptest::prelude::*;
use stampede::scenario::{
    Arrivals, ClaimMode, LoserPolicy, Pitfalls, RedisErrorPolicy, RedisOutage, Scenario, Workload,
};

pub fn workload() -> impl Strategy<Value = Workload> {
    prop_oneof![
        Just(Workload::Burst),
        Just(Workload::Steady),
        Just(Workload::Cold)
    ]
}
pub fn claim() -> impl Strategy<Value = ClaimMode> {
    prop_oneof![
        Just(ClaimMode::Off),
        Just(ClaimMode::Inner),
        Just(ClaimMode::Outer),
        Just(ClaimMode::Refresh)
    ]
}
pub fn loser() -> impl Strategy<Value = LoserPolicy> {
    prop_oneof![
        Just(LoserPolicy::Stale),
        Just(LoserPolicy::Wait),
        Just(LoserPolicy::Degrade),
        Just(LoserPolicy::Compute)
    ]
}

prop_compose! {
    pub fn pitfalls()(
        r in any::<bool>(), n in any::<bool>(), k in any::<bool>(), m in any::<bool>(),
        d in any::<bool>(), e in any::<bool>(),
    ) -> Pitfalls {
        Pitfalls {
            remember_failure: r, no_deadline: n, key_mismatch: k, mutable_result: m,
            plain_del: d, no_expiry: e,
        }
    }
}

prop_compose! {
    /// Small fleets with every knob in play, including faults and pitfalls.
    pub fn scenario()(
        (instances, threads, keys, workload) in (1u32..6, 1u32..30, 1u32..6, workload()),
        (singleflight, claim, loser, open) in (any::<bool>(), claim(), loser(), any::<bool>()),
        (recompute_ms, origin_capacity, claim_ttl_ms, rtt_ms) in (1u32..300, 1u32..20, 1u32..2000, 0u32..5),
        (deadline_ms, value_ttl_ms, jitter, stale_ms) in (1u32..1500, 1u32..2000, 0.0f64..1.0, prop_oneof![Just(0u32), 1u32..2000]),
        (swr, admission, negative_ttl_ms, fail_rate) in (any::<bool>(), prop_oneof![Just(0u32), 1u32..4], prop_oneof![Just(0u32), 1u32..500], prop_oneof![Just(0.0f64), 0.0f64..0.5]),
        (origin_outage_ms, hang, redis_down, holder_crash) in (prop_oneof![Just(0u32), 1u32..800], prop::bool::weighted(0.1), prop::bool::weighted(0.1), prop::bool::weighted(0.2)),
        (poll_ms, spread_ms, duration_ms, think_ms) in (5u32..100, 0u32..50, 100u32..2000, 10u32..400),
        pitfalls in pitfalls(),
        (origin_timeout_ms, admission_wait_ms, xfetch_beta, fenced_writes) in (1u32..2000, prop_oneof![Just(0u32), 1u32..300], prop_oneof![Just(0.0f64), 0.0f64..3.0], any::<bool>()),
        (hangs, redis_timeout_ms, redis_breaker_ms, redis_ops_per_ms) in (any::<bool>(), 1u32..300, prop_oneof![Just(0u32), 1u32..500], prop_oneof![Just(0u32), 1u32..50]),
        (local_cache_ms, key_skew) in (prop_oneof![Just(0u32), 1u32..500], prop_oneof![Just(0.0f64), 0.0f64..2.0]),
        faults in prop::collection::vec(fault(), 0..3),
        (retries, retry_backoff_ms) in (prop_oneof![Just(0u32), 1u32..4], 0u32..200),
        (open_loop, rate_per_s) in (prop::bool::weighted(0.3), 1u32..2000),
    ) -> Scenario {
        Scenario {
            instances, threads, keys, workload, singleflight, claim, loser,
            redis_error: if open { RedisErrorPolicy::Open } else { RedisErrorPolicy::Closed },
            recompute_ms, origin_capacity, claim_ttl_ms, rtt_ms, deadline_ms, origin_timeout_ms,
            value_ttl_ms, jitter, stale_ms, stale_while_revalidate: swr, xfetch_beta, fenced_writes, admission,
            admission_wait_ms, negative_ttl_ms, fail_rate,
            origin_outage_ms, hang, redis_down, holder_crash, pitfalls, poll_ms, spread_ms,
            duration_ms, think_ms,
            redis_outage: if hangs { RedisOutage::Hang } else { RedisOutage::Error },
            redis_timeout_ms, redis_breaker_ms, redis_ops_per_ms, local_cache_ms, key_skew, faults,
            retries, retry_backoff_ms,
            arrivals: if open_loop { Arrivals::Open } else { Arrivals::Closed },
            rate_per_s,
        }
    }
}

pub fn cfg() -> ProptestConfig {
    ProptestConfig {
        // PROPTEST_CASES=5000 for a deeper search than the everyday 192.
        cases: std::env::var("PROPTEST_CASES")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(192),
        ..ProptestConfig::default()
    }
}

pub fn fault() -> impl Strategy<Value = stampede::scenario::Fault> {
    (
        fault_kind(),
        0u32..1500,
        prop_oneof![Just(None), (1u32..2000).prop_map(Some)],
    )
        .prop_map(|(kind, start_ms, d)| stampede::scenario::Fault {
            kind,
            start_ms,
            duration_ms: if kind.is_moment() { None } else { d },
        })
}

pub fn fault_kind() -> impl Strategy<Value = stampede::scenario::FaultKind> {
    (0..stampede::scenario::FaultKind::ALL.len())
        .prop_map(|i| stampede::scenario::FaultKind::ALL[i])
}
