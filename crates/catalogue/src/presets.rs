//! The lessons as data: one preset per lesson (the interview card first) and
//! the A/B view's comparisons, two designs on the same traffic.
//!
//! [`PRESETS`] is the one table of presets: a row per core
//! [`stampede::scenario::Preset`] id (its knobs and its link's name are the
//! core's), with its title, its words, the knobs it asks to turn and its
//! lesson rule (what its story explains in a run's ledger, its proof's
//! counter, its words for any run). It lives in [`crate::lesson`], beside
//! the rules its rows hold, and is re-exported here. Nothing of a preset
//! is written anywhere else.

use crate::claims::{
    Claim, FEWER_ATTEMPTS_THAN_THEN, FEWER_MISSES_THAN_THEN, FEWER_RECOMPUTES_THAN_THEN,
    FEWER_TIMEOUTS_THAN_THEN, LOWER_P50_THAN_THEN, LOWER_P99_THAN_THEN, LOWER_PEAK_THAN_THEN,
};
/// The one table of presets, with its lessons' rules beside it.
pub use crate::lesson::{Preset, PRESETS};
use stampede::scenario::*;
use stampede::Metric;

/// Two designs on the same traffic: the A/B view's presets. Both sides run
/// the same fleet and seed; `metric` is the counter the question is about
/// and `winner` the side that is better on it, as `shows` claims: a claim
/// of the winner's run against the other side's ([`crate::claims::Run::against`]),
/// checked by the tests on every seed.
#[derive(Clone, Copy, Debug)]
pub struct Comparison {
    pub name: &'static str,
    pub question: &'static str,
    pub a_label: &'static str,
    pub b_label: &'static str,
    pub metric: Metric,
    pub winner: char,
    /// What the winner's run shows against the other side's.
    pub shows: Claim,
    /// The view offers the recompute-cost control (both sides' recompute).
    pub cost_control: bool,
    a: fn() -> Scenario,
    b: fn() -> Scenario,
}

impl Comparison {
    pub fn a(&self) -> Scenario {
        (self.a)()
    }
    pub fn b(&self) -> Scenario {
        (self.b)()
    }
}

fn c_losers_wait() -> Scenario {
    Scenario {
        stale_ms: 60_000,
        holder_crash: true,
        ..Scenario::default()
    }
}
fn c_nobody_waits() -> Scenario {
    Scenario {
        holder_crash: true,
        ..named("swr")
    }
}
fn c_fail_closed() -> Scenario {
    Scenario {
        redis_error: RedisErrorPolicy::Closed,
        ..named("redis-down")
    }
}
fn c_no_jitter() -> Scenario {
    Scenario {
        jitter: 0.0,
        ..named("jitter")
    }
}
fn c_sync_refresh() -> Scenario {
    Scenario {
        instances: 10,
        threads: 20,
        workload: Workload::Steady,
        value_ttl_ms: 5000,
        stale_ms: 60_000,
        duration_ms: 20_000,
        think_ms: 100,
        ..Scenario::default()
    }
}
fn c_swr_refresh() -> Scenario {
    Scenario {
        stale_while_revalidate: true,
        ..c_sync_refresh()
    }
}
fn c_claim_only() -> Scenario {
    Scenario {
        claim: ClaimMode::Inner,
        xfetch_beta: 0.0,
        ..named("xfetch")
    }
}
fn c_early_refresh() -> Scenario {
    Scenario {
        claim: ClaimMode::Inner,
        ..named("xfetch")
    }
}

pub const COMPARISONS: [Comparison; 8] = [
    Comparison {
        name: "layered",
        question: "Singleflight alone, or singleflight with the claim inside?",
        a_label: "singleflight only",
        b_label: "singleflight + claim",
        metric: Metric::Recomputes,
        winner: 'b',
        shows: FEWER_RECOMPUTES_THAN_THEN,
        cost_control: false,
        a: || named("singleflight"),
        b: || named("burst"),
    },
    Comparison {
        name: "claim-order",
        question: "The claim inside singleflight, or outside it?",
        a_label: "claim outside",
        b_label: "claim inside",
        metric: Metric::ClaimAttempts,
        winner: 'b',
        shows: FEWER_ATTEMPTS_THAN_THEN,
        cost_control: false,
        a: || named("claim-outer"),
        b: || named("burst"),
    },
    Comparison {
        name: "losers",
        question: "When the claim holder dies: losers that wait on the lock, or nobody waits on a lock?",
        a_label: "losers wait (bounded)",
        b_label: "claim only on the refresh",
        metric: Metric::Timeouts,
        winner: 'b',
        shows: FEWER_TIMEOUTS_THAN_THEN,
        cost_control: false,
        a: c_losers_wait,
        b: c_nobody_waits,
    },
    Comparison {
        name: "redis-outage",
        question: "Redis is down: fail closed or fail open?",
        a_label: "fail closed",
        b_label: "fail open",
        metric: Metric::Timeouts,
        winner: 'b',
        shows: FEWER_TIMEOUTS_THAN_THEN,
        cost_control: false,
        a: c_fail_closed,
        b: || named("redis-down"),
    },
    Comparison {
        name: "jitter",
        question: "Keys written together: the same TTL, or a jittered one?",
        a_label: "no jitter",
        b_label: "TTL jitter",
        metric: Metric::OriginPeakConcurrency,
        winner: 'b',
        shows: LOWER_PEAK_THAN_THEN,
        cost_control: false,
        a: c_no_jitter,
        b: || named("jitter"),
    },
    Comparison {
        name: "swr",
        question: "A stale hot key: refresh while the callers wait, or answer stale and refresh behind?",
        a_label: "synchronous refresh",
        b_label: "stale-while-revalidate",
        metric: Metric::P99Ms,
        winner: 'b',
        shows: LOWER_P99_THAN_THEN,
        cost_control: false,
        a: c_sync_refresh,
        b: c_swr_refresh,
    },
    Comparison {
        name: "xfetch",
        question: "A hot key expiring: the claim alone, or early refresh as well?",
        a_label: "claim at expiry",
        b_label: "early refresh (XFetch)",
        metric: Metric::Misses,
        winner: 'b',
        shows: FEWER_MISSES_THAN_THEN,
        cost_control: false,
        a: c_claim_only,
        b: c_early_refresh,
    },
    Comparison {
        name: "cost",
        question: "Is the claim worth it? For a cheap query singleflight alone answers the median sooner (the claim's losers poll for the value), though the claim's p99 is lower; raise the recompute's cost and watch where the claim starts to pay.",
        a_label: "singleflight only",
        b_label: "singleflight + claim",
        // At its own 20 ms cost; the A/B view's cost control flips it.
        metric: Metric::P50Ms,
        winner: 'a',
        shows: LOWER_P50_THAN_THEN,
        cost_control: true,
        a: || named("cheap"),
        b: p_cheap_claimed,
    },
];
fn p_cheap_claimed() -> Scenario {
    Scenario {
        claim: ClaimMode::Inner,
        ..named("cheap")
    }
}

/// A preset's scenario, by the name the core gives it.
fn named(name: &str) -> Scenario {
    preset(name).expect("every preset of the catalogue is named in the core")
}

pub fn comparison(name: &str) -> Option<&'static Comparison> {
    COMPARISONS.iter().find(|c| c.name == name)
}

/// The stale window the losers' "serve stale" row adds to a scenario that
/// has none (the `stale` preset's minute).
pub const LOSERS_STALE_MS: u32 = 60_000;

/// A stale window in words: "60 s", "500 ms".
fn window(ms: u32) -> String {
    if ms >= 1000 && ms.is_multiple_of(1000) {
        format!("{} s", ms / 1000)
    } else {
        format!("{ms} ms")
    }
}

/// What the losers of the claim can do, side by side on the same traffic:
/// `s` with each loser policy, and waiting once more with a poll five
/// times shorter (a loser is answered up to one poll after the value
/// lands; a shorter poll costs GETs). Serving stale needs a stale window:
/// a scenario without one gets [`LOSERS_STALE_MS`], and its label says so.
/// The labels carry the knobs each row changed (the poll intervals, the
/// stale window).
pub fn loser_choices(s: &Scenario) -> Vec<(String, Scenario)> {
    let with = |loser: LoserPolicy| Scenario { loser, ..s.clone() };
    let (stale_label, stale_ms) = if s.stale_ms == 0 {
        (
            format!("serve stale ({} window added)", window(LOSERS_STALE_MS)),
            LOSERS_STALE_MS,
        )
    } else {
        (
            format!("serve stale (its {} window)", window(s.stale_ms)),
            s.stale_ms,
        )
    };
    let stale = Scenario {
        stale_ms,
        ..with(LoserPolicy::Stale)
    };
    let fast = (s.poll_ms / 5).max(1);
    vec![
        (stale_label, stale),
        (
            format!("wait, poll {} ms", s.poll_ms),
            with(LoserPolicy::Wait),
        ),
        (
            format!("wait, poll {fast} ms"),
            Scenario {
                poll_ms: fast,
                ..with(LoserPolicy::Wait)
            },
        ),
        ("degrade".to_string(), with(LoserPolicy::Degrade)),
        ("recompute anyway".to_string(), with(LoserPolicy::Compute)),
    ]
}

/// The words above the losers' table for `s`: what each row keeps of the
/// run on screen and what it changes (knobs only; the table's numbers are
/// the rows' runs). Where `s` has no stale window, it names the one the
/// "serve stale" row adds.
pub fn losers_note(s: &Scenario) -> String {
    let head = "A request that loses the claim serves stale, waits (polling), degrades or recomputes anyway. Here each choice runs to its end on the same traffic and seed as the run on screen, with only its loser policy changed";
    if s.stale_ms == 0 {
        format!(
            "{head}, except that serving stale needs a stale window, which the run on screen does not have: that row adds a {} one.",
            window(LOSERS_STALE_MS)
        )
    } else {
        format!(
            "{head}; serving stale uses the run's own {} stale window.",
            window(s.stale_ms)
        )
    }
}

#[cfg(test)]
mod loser_tests {
    use super::*;

    #[test]
    fn every_preset_has_exactly_one_row() {
        // The core names the scenarios and holds their knobs; the one
        // table of the catalogue gives each its words and its lesson, in
        // one row.
        for id in stampede::scenario::Preset::ALL {
            let rows = PRESETS.iter().filter(|p| p.id == id).count();
            assert_eq!(rows, 1, "{}", id.name());
        }
        assert_eq!(PRESETS.len(), stampede::scenario::Preset::ALL.len());
        for p in PRESETS {
            assert_eq!(p.row.link, format!("preset={}", p.name));
            assert_eq!(preset(p.name), Some(p.scenario()));
        }
        for c in COMPARISONS {
            // Every side builds (a side is a preset or made from one).
            assert!(c.a().validated().is_ok(), "{}: side a", c.name);
            assert!(c.b().validated().is_ok(), "{}: side b", c.name);
        }
    }

    #[test]
    fn the_losers_choices_trade_latency_load_and_staleness() {
        let runs: Vec<(String, stampede::Report)> = loser_choices(&Scenario::default())
            .into_iter()
            .map(|(l, s)| (l, stampede::Fleet::new(&s, 1).run()))
            .collect();
        let r = |label: &str| &runs.iter().find(|(l, _)| l == label).unwrap().1;
        let (stale, wait, fast, degrade, anyway) = (
            r("serve stale (60 s window added)"),
            r("wait, poll 50 ms"),
            r("wait, poll 10 ms"),
            r("degrade"),
            r("recompute anyway"),
        );
        // Stale and degrade answer at once; waiting answers with the value.
        assert!(stale.stale_served > 0 && stale.p50_ms < wait.p50_ms);
        assert!(degrade.degraded > 0 && degrade.p50_ms < wait.p50_ms);
        assert_eq!((wait.stale_served, wait.degraded), (0, 0));
        // Recomputing anyway loads the origin: one per instance, not one.
        assert_eq!(wait.recomputes, 1);
        assert_eq!(anyway.recomputes, 40);
        assert!(anyway.origin_peak_concurrency > wait.origin_peak_concurrency);
        // A shorter poll: more GETs, a shorter wait.
        assert!(fast.redis_round_trips > wait.redis_round_trips);
        assert!(fast.max_wait_ms < wait.max_wait_ms);
        // A stale window of the scenario's own is kept.
        let own = loser_choices(&Scenario {
            stale_ms: 500,
            ..Scenario::default()
        });
        assert_eq!(own[0].1.stale_ms, 500);
        assert_eq!(own[0].0, "serve stale (its 500 ms window)");
        // The window a row adds is named where the table is: in its label
        // and in the note above it (issue 39 §7: "same traffic and seed"
        // said nothing of it).
        let added = window(LOSERS_STALE_MS);
        assert_eq!(added, "60 s");
        assert!(losers_note(&Scenario::default()).contains(&format!("adds a {added} one")));
        assert!(!losers_note(&Scenario {
            stale_ms: 500,
            ..Scenario::default()
        })
        .contains("adds"));
        // A poll of 1 ms stays 1 ms, never 0.
        let tiny = loser_choices(&Scenario {
            poll_ms: 1,
            ..Scenario::default()
        });
        assert_eq!(tiny[2].1.poll_ms, 1);
    }
}
