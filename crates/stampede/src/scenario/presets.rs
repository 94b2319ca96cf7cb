//! Named scenarios: the interview card's and one per lesson, by id. A
//! link's `preset=` names one. Only their knobs are the core's: their
//! titles, lessons, proofs and story rules are the catalogue's one table
//! of presets (`stampede-catalogue`'s `presets::PRESETS`, a row per
//! [`Preset`], checked by its tests).

use super::*;

/// A named scenario's id.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Preset {
    Burst,
    Naive,
    Singleflight,
    ClaimOuter,
    Stale,
    Failure,
    Hang,
    HolderCrash,
    ShortTtl,
    RedisDown,
    RedisHang,
    RetryStorm,
    OpenLoop,
    HotKey,
    ColdSkew,
    Cold,
    Jitter,
    Swr,
    Xfetch,
    LateWriter,
    Cheap,
}

impl Preset {
    /// Every preset, in the order a tie between two equally close presets
    /// is broken ([`closest_preset`]).
    pub const ALL: [Preset; 21] = [
        Preset::Burst,
        Preset::Naive,
        Preset::Singleflight,
        Preset::ClaimOuter,
        Preset::Stale,
        Preset::Failure,
        Preset::Hang,
        Preset::HolderCrash,
        Preset::ShortTtl,
        Preset::RedisDown,
        Preset::RedisHang,
        Preset::RetryStorm,
        Preset::OpenLoop,
        Preset::HotKey,
        Preset::ColdSkew,
        Preset::Cold,
        Preset::Jitter,
        Preset::Swr,
        Preset::Xfetch,
        Preset::LateWriter,
        Preset::Cheap,
    ];

    /// Its share link's query: `preset=burst`.
    pub const fn link(self) -> &'static str {
        match self {
            Preset::Burst => "preset=burst",
            Preset::Naive => "preset=naive",
            Preset::Singleflight => "preset=singleflight",
            Preset::ClaimOuter => "preset=claim-outer",
            Preset::Stale => "preset=stale",
            Preset::Failure => "preset=failure",
            Preset::Hang => "preset=hang",
            Preset::HolderCrash => "preset=holder-crash",
            Preset::ShortTtl => "preset=short-ttl",
            Preset::RedisDown => "preset=redis-down",
            Preset::RedisHang => "preset=redis-hang",
            Preset::RetryStorm => "preset=retry-storm",
            Preset::OpenLoop => "preset=open-loop",
            Preset::HotKey => "preset=hot-key",
            Preset::ColdSkew => "preset=cold-skew",
            Preset::Cold => "preset=cold",
            Preset::Jitter => "preset=jitter",
            Preset::Swr => "preset=swr",
            Preset::Xfetch => "preset=xfetch",
            Preset::LateWriter => "preset=late-writer",
            Preset::Cheap => "preset=cheap",
        }
    }

    /// Its name, as a link's `preset=` gives it: `burst`.
    pub const fn name(self) -> &'static str {
        self.link().split_at("preset=".len()).1
    }

    pub fn from_name(name: &str) -> Option<Preset> {
        Preset::ALL.into_iter().find(|p| p.name() == name)
    }

    /// Its knobs.
    pub fn scenario(self) -> Scenario {
        match self {
            Preset::Burst => p_burst(),
            Preset::Naive => p_naive(),
            Preset::Singleflight => p_singleflight(),
            Preset::ClaimOuter => p_claim_outer(),
            Preset::Stale => p_stale(),
            Preset::Failure => p_failure(),
            Preset::Hang => p_hang(),
            Preset::HolderCrash => p_holder_crash(),
            Preset::ShortTtl => p_short_ttl(),
            Preset::RedisDown => p_redis_down(),
            Preset::RedisHang => p_redis_hang(),
            Preset::RetryStorm => p_retry_storm(),
            Preset::OpenLoop => p_open_loop(),
            Preset::HotKey => p_hot_key(),
            Preset::ColdSkew => p_cold_skew(),
            Preset::Cold => p_cold(),
            Preset::Jitter => p_jitter(),
            Preset::Swr => p_swr(),
            Preset::Xfetch => p_xfetch(),
            Preset::LateWriter => p_late_writer(),
            Preset::Cheap => p_cheap(),
        }
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

/// The scenario of the preset `name`.
pub fn preset(name: &str) -> Option<Scenario> {
    Preset::from_name(name).map(Preset::scenario)
}

/// The preset the scenario is, if it is one exactly.
pub fn preset_of(s: &Scenario) -> Option<&'static str> {
    Preset::ALL
        .into_iter()
        .find(|p| p.scenario() == *s)
        .map(Preset::name)
}

/// The preset a scenario was made from: the one it equals, else the one it
/// differs from in the fewest knobs (at most four), so a link that turns a
/// knob or two of a lesson still names that lesson.
pub fn closest_preset(s: &Scenario) -> Option<&'static str> {
    if let Some(p) = preset_of(s) {
        return Some(p);
    }
    Preset::ALL
        .into_iter()
        .map(|p| {
            let base = p.scenario();
            let differ = knob_names().filter(|k| base.get(k) != s.get(k)).count();
            (differ, p.name())
        })
        .filter(|(differ, _)| *differ <= 4)
        .min_by_key(|(differ, _)| *differ)
        .map(|(_, name)| name)
}

pub fn preset_names() -> Vec<&'static str> {
    Preset::ALL.into_iter().map(Preset::name).collect()
}
