//! Named scenarios: the interview card's and one per lesson. A link's
//! `preset=` names one of them. Their titles, lessons and proofs are the
//! catalogue's (the `stampede-catalogue` crate), which names the same ones
//! in the same order.

use super::*;

/// A scenario with a name.
#[derive(Clone, Copy, Debug)]
pub struct Named {
    pub name: &'static str,
    build: fn() -> Scenario,
}

impl Named {
    pub fn scenario(&self) -> Scenario {
        (self.build)()
    }
}

fn p_burst() -> Scenario {
    Scenario::default()
}
fn p_naive() -> Scenario {
    Scenario {
        singleflight: false,
        claim: ClaimMode::Off,
        ..Scenario::default()
    }
}
fn p_singleflight() -> Scenario {
    Scenario {
        claim: ClaimMode::Off,
        ..Scenario::default()
    }
}
fn p_claim_outer() -> Scenario {
    Scenario {
        claim: ClaimMode::Outer,
        ..Scenario::default()
    }
}
fn p_stale() -> Scenario {
    Scenario {
        stale_ms: 60_000,
        loser: LoserPolicy::Stale,
        ..Scenario::default()
    }
}
fn p_failure() -> Scenario {
    Scenario {
        instances: 4,
        threads: 20,
        workload: Workload::Steady,
        claim: ClaimMode::Off,
        value_ttl_ms: 2000,
        origin_outage_ms: 3000,
        duration_ms: 12_000,
        think_ms: 200,
        ..Scenario::default()
    }
}
fn p_hang() -> Scenario {
    Scenario {
        hang: true,
        ..Scenario::default()
    }
}
fn p_holder_crash() -> Scenario {
    Scenario {
        instances: 10,
        threads: 20,
        workload: Workload::Steady,
        value_ttl_ms: 5000,
        holder_crash: true,
        claim_ttl_ms: 10_000,
        duration_ms: 20_000,
        think_ms: 200,
        ..Scenario::default()
    }
}
fn p_short_ttl() -> Scenario {
    Scenario {
        instances: 10,
        threads: 20,
        workload: Workload::Steady,
        value_ttl_ms: 5000,
        recompute_ms: 400,
        claim_ttl_ms: 100,
        duration_ms: 20_000,
        think_ms: 100,
        ..Scenario::default()
    }
}
fn p_redis_down() -> Scenario {
    Scenario {
        redis_down: true,
        ..Scenario::default()
    }
}
fn p_cold() -> Scenario {
    Scenario {
        instances: 10,
        threads: 100,
        keys: 5000,
        workload: Workload::Cold,
        admission: 6,
        ..Scenario::default()
    }
}
fn p_jitter() -> Scenario {
    Scenario {
        instances: 10,
        threads: 20,
        keys: 200,
        workload: Workload::Steady,
        claim: ClaimMode::Off,
        value_ttl_ms: 5000,
        jitter: 0.3,
        duration_ms: 30_000,
        think_ms: 100,
        ..Scenario::default()
    }
}
fn p_swr() -> Scenario {
    Scenario {
        stale_ms: 60_000,
        stale_while_revalidate: true,
        claim: ClaimMode::Refresh,
        redis_error: RedisErrorPolicy::Open,
        ..Scenario::default()
    }
}
fn p_xfetch() -> Scenario {
    Scenario {
        instances: 10,
        threads: 20,
        workload: Workload::Steady,
        claim: ClaimMode::Off,
        value_ttl_ms: 5000,
        duration_ms: 30_000,
        think_ms: 100,
        xfetch_beta: 1.0,
        ..Scenario::default()
    }
}
fn p_late_writer() -> Scenario {
    Scenario {
        instances: 10,
        threads: 20,
        workload: Workload::Steady,
        value_ttl_ms: 5000,
        recompute_ms: 1000,
        claim_ttl_ms: 100,
        duration_ms: 20_000,
        think_ms: 100,
        ..Scenario::default()
    }
}
fn p_redis_hang() -> Scenario {
    Scenario {
        redis_down: true,
        redis_outage: RedisOutage::Hang,
        redis_timeout_ms: 1500,
        ..Scenario::default()
    }
}
fn p_hot_key() -> Scenario {
    Scenario {
        instances: 10,
        threads: 50,
        workload: Workload::Steady,
        value_ttl_ms: 2000,
        duration_ms: 5000,
        think_ms: 10,
        redis_ops_per_ms: 10,
        ..Scenario::default()
    }
}
fn p_cold_skew() -> Scenario {
    Scenario {
        key_skew: 1.0,
        ..p_cold()
    }
}
fn p_retry_storm() -> Scenario {
    Scenario {
        instances: 10,
        threads: 20,
        singleflight: false,
        claim: ClaimMode::Off,
        origin_outage_ms: 2000,
        retries: 3,
        ..Scenario::default()
    }
}
fn p_open_loop() -> Scenario {
    Scenario {
        instances: 10,
        threads: 20,
        workload: Workload::Steady,
        value_ttl_ms: 5000,
        duration_ms: 20_000,
        arrivals: Arrivals::Open,
        rate_per_s: 1000,
        faults: vec![Fault {
            kind: FaultKind::OriginHang,
            start_ms: 5000,
            duration_ms: Some(3000),
        }],
        ..Scenario::default()
    }
}
fn p_cheap() -> Scenario {
    Scenario {
        claim: ClaimMode::Off,
        recompute_ms: 20,
        ..Scenario::default()
    }
}

pub const NAMED: [Named; 21] = [
    Named {
        name: "burst",
        build: p_burst,
    },
    Named {
        name: "naive",
        build: p_naive,
    },
    Named {
        name: "singleflight",
        build: p_singleflight,
    },
    Named {
        name: "claim-outer",
        build: p_claim_outer,
    },
    Named {
        name: "stale",
        build: p_stale,
    },
    Named {
        name: "failure",
        build: p_failure,
    },
    Named {
        name: "hang",
        build: p_hang,
    },
    Named {
        name: "holder-crash",
        build: p_holder_crash,
    },
    Named {
        name: "short-ttl",
        build: p_short_ttl,
    },
    Named {
        name: "redis-down",
        build: p_redis_down,
    },
    Named {
        name: "redis-hang",
        build: p_redis_hang,
    },
    Named {
        name: "retry-storm",
        build: p_retry_storm,
    },
    Named {
        name: "open-loop",
        build: p_open_loop,
    },
    Named {
        name: "hot-key",
        build: p_hot_key,
    },
    Named {
        name: "cold-skew",
        build: p_cold_skew,
    },
    Named {
        name: "cold",
        build: p_cold,
    },
    Named {
        name: "jitter",
        build: p_jitter,
    },
    Named {
        name: "swr",
        build: p_swr,
    },
    Named {
        name: "xfetch",
        build: p_xfetch,
    },
    Named {
        name: "late-writer",
        build: p_late_writer,
    },
    Named {
        name: "cheap",
        build: p_cheap,
    },
];

pub fn preset(name: &str) -> Option<Scenario> {
    NAMED.iter().find(|p| p.name == name).map(Named::scenario)
}

/// The preset the scenario is, if it is one exactly.
pub fn preset_of(s: &Scenario) -> Option<&'static str> {
    NAMED.iter().find(|p| p.scenario() == *s).map(|p| p.name)
}

/// The preset a scenario was made from: the one it equals, else the one it
/// differs from in the fewest knobs (at most four), so a link that turns a
/// knob or two of a lesson still names that lesson.
pub fn closest_preset(s: &Scenario) -> Option<&'static str> {
    if let Some(p) = preset_of(s) {
        return Some(p);
    }
    NAMED
        .iter()
        .map(|p| {
            let base = p.scenario();
            let differ = knob_names().filter(|k| base.get(k) != s.get(k)).count();
            (differ, p.name)
        })
        .filter(|(differ, _)| *differ <= 4)
        .min_by_key(|(differ, _)| *differ)
        .map(|(_, name)| name)
}

pub fn preset_names() -> Vec<&'static str> {
    NAMED.iter().map(|p| p.name).collect()
}
