//! A real fleet: a scenario run with real tasks against a real Redis. Each
//! instance is a [`Driver`] (its own flight table and connection); each
//! thread a task that asks once (a burst) for the hot key; the origin
//! sleeps for the scenario's latency and fails, hangs or stalls as it says.
//! The counts use the simulation's names, so the two can be set side by
//! side ([`compare`]).
//!
//! How close the two come: recomputes, claim attempts and claim wins agree
//! exactly while the real arrivals fit inside the recompute, as they do for
//! small fleets (the conformance tests run 8 x 25). On 2 cores, 8,000 tasks
//! take longer than a 200 ms recompute to arrive and make their first round
//! trip, so late ones find the value or re-claim after the release:
//! `stampede-fleet --preset claim-outer --compare` measured 7,924 claim
//! attempts and 5 wins against the simulation's 8,000 and 1, while the card's
//! burst, singleflight, no protection and a hung origin agreed.
//!
//! So far bursts only (steady and cold traffic, and a Redis outage, need a
//! clock-driven load and a Redis that can be stopped mid-run).

use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use stampede::metrics::{Ending, Report};
use stampede::scenario::{Scenario, Workload};
use tokio::time::Instant;

use crate::claim::{fence_key, lock_key, value_key};
use crate::driver::{Driver, Origin};

/// The scenario's origin, for real: latency `recompute_ms` x [0.75, 1.25),
/// failures by `fail_rate`, every call failing during the outage, never
/// answering under `hang`.
#[derive(Clone)]
pub struct ScenarioOrigin {
    scenario: Arc<Scenario>,
    start: Instant,
    calls: Arc<AtomicU64>,
    failures: Arc<AtomicU64>,
    /// Calls at the origin right now: past `origin_capacity` every call
    /// slows in proportion, as the simulation's origin does.
    running: Arc<AtomicU64>,
}

impl ScenarioOrigin {
    pub fn new(s: &Scenario) -> ScenarioOrigin {
        ScenarioOrigin {
            scenario: Arc::new(s.clone()),
            start: Instant::now(),
            calls: Arc::new(AtomicU64::new(0)),
            failures: Arc::new(AtomicU64::new(0)),
            running: Arc::new(AtomicU64::new(0)),
        }
    }

    /// A uniform draw in [0, 1) for call or arrival `n`, from the project's
    /// seeded generator (the spread only has to vary, not to match the
    /// simulation's stream draw for draw).
    fn draw(n: u64) -> f64 {
        stampede::rng::Rng::new(n).unit()
    }
}

impl Origin for ScenarioOrigin {
    fn compute(&self, key: u32) -> Pin<Box<dyn Future<Output = Result<Vec<u8>, String>> + Send>> {
        let s = self.scenario.clone();
        let n = self.calls.fetch_add(1, Ordering::SeqCst);
        let failures = self.failures.clone();
        let running = self.running.clone();
        let load = running.fetch_add(1, Ordering::SeqCst) + 1;
        let in_outage = self.start.elapsed() < Duration::from_millis(u64::from(s.origin_outage_ms));
        Box::pin(async move {
            if s.hang {
                std::future::pending::<()>().await;
            }
            let overload = (load as f64 / f64::from(s.origin_capacity.max(1))).max(1.0);
            let base = f64::from(s.recompute_ms) * (0.75 + 0.5 * Self::draw(n)) * overload;
            tokio::time::sleep(Duration::from_micros((base * 1000.0) as u64)).await;
            running.fetch_sub(1, Ordering::SeqCst);
            if in_outage || Self::draw(n ^ 0x5555) < s.fail_rate {
                failures.fetch_add(1, Ordering::SeqCst);
                return Err("the origin failed".into());
            }
            Ok(format!("value of {key}").into_bytes())
        })
    }
}

/// Runs `s` (a burst) for real against the Redis at `url` and counts what
/// happened, in the simulation's vocabulary.
pub async fn run_burst(url: &str, s: &Scenario) -> Result<Report, String> {
    if s.workload != Workload::Burst {
        return Err("only burst workloads run for real so far".into());
    }
    if s.redis_down || s.holder_crash {
        return Err("Redis outages and crashing holders are not injected for real yet".into());
    }
    // A clean slate for the hot key: no value, claim or fence from a run before.
    let client = redis::Client::open(url).map_err(|e| e.to_string())?;
    let mut con = client
        .get_multiplexed_async_connection()
        .await
        .map_err(|e| e.to_string())?;
    let _: i64 = redis::cmd("DEL")
        .arg(value_key("0"))
        .arg(lock_key("0"))
        .arg(fence_key("0"))
        .query_async(&mut con)
        .await
        .map_err(|e| e.to_string())?;
    if s.stale_ms > 0 {
        // As the simulation starts a burst with a stale window: the key is
        // there, expired, and servable stale for `stale_ms`.
        let stale = Duration::from_millis(u64::from(s.stale_ms));
        let delta = u64::from(s.recompute_ms) * 1000;
        crate::driver::seed_stale(&mut con, 0, b"value of 0 (stale)", stale, delta)
            .await
            .map_err(|e| e.to_string())?;
    }

    let origin = ScenarioOrigin::new(s);
    let mut drivers = Vec::new();
    for _ in 0..s.instances {
        drivers.push(
            Driver::connect(url, s, origin.clone())
                .await
                .map_err(|e| e.to_string())?,
        );
    }
    let start = Instant::now();
    let mut calls = Vec::new();
    for (i, d) in drivers.iter().enumerate() {
        for t in 0..s.threads {
            let d = d.clone();
            // Arrivals spread over the burst window, as in the simulation.
            let n = u64::from(i as u32 * s.threads + t);
            let at = start
                + Duration::from_micros(
                    (ScenarioOrigin::draw(n ^ 0xabcd) * f64::from(s.spread_ms) * 1000.0) as u64,
                );
            calls.push(tokio::spawn(async move {
                tokio::time::sleep_until(at).await;
                let asked = Instant::now();
                let a = d.get(0).await;
                (a.ending, asked.elapsed())
            }));
        }
    }
    let mut r = Report::default();
    let mut latencies = Vec::new();
    for c in calls {
        let (ending, took) = c.await.map_err(|e| e.to_string())?;
        r.requests += 1;
        latencies.push(took.as_secs_f64() * 1000.0);
        match ending {
            Ending::Hit => r.hits += 1,
            Ending::Stale => r.stale_served += 1,
            Ending::Computed => r.computed += 1,
            Ending::Shared => r.shared += 1,
            Ending::Degraded => r.degraded += 1,
            Ending::Error => r.errors += 1,
            Ending::Timeout => r.timeouts += 1,
        }
    }
    // Let work that outlived its callers finish writing and releasing (or
    // give up on a hung origin at its timeout).
    let settle = (u64::from(s.recompute_ms) * 3).max(u64::from(s.origin_timeout_ms)) + 200;
    tokio::time::sleep(Duration::from_millis(settle.min(5000))).await;
    for d in &drivers {
        let c = d.counters();
        r.recomputes += c.recomputes.load(Ordering::SeqCst);
        r.claim_attempts += c.claim_attempts.load(Ordering::SeqCst);
        r.claim_wins += c.claim_wins.load(Ordering::SeqCst);
        r.releases += c.releases.load(Ordering::SeqCst);
        r.values_written += c.values_written.load(Ordering::SeqCst);
    }
    r.origin_failures = origin.failures.load(Ordering::SeqCst);
    latencies.sort_by(f64::total_cmp);
    let q = |p: f64| {
        latencies
            .get(((latencies.len() as f64 * p).ceil() as usize).saturating_sub(1))
            .copied()
            .unwrap_or(0.0)
    };
    r.p50_ms = q(0.5);
    r.p99_ms = q(0.99);
    r.max_ms = latencies.last().copied().unwrap_or(0.0);
    Ok(r)
}

/// The counters a real run and the simulation must agree on exactly for a
/// burst, and the ones that may differ by timing (polls, latencies).
pub const EXACT: [&str; 4] = ["requests", "recomputes", "claim_attempts", "claim_wins"];

/// Side by side: (counter, simulated, real) for every counter the real run
/// measures.
pub fn compare(sim: &Report, real: &Report) -> Vec<(String, String, String)> {
    const MEASURED: [&str; 14] = [
        "requests",
        "hits",
        "computed",
        "shared",
        "stale_served",
        "degraded",
        "errors",
        "timeouts",
        "recomputes",
        "origin_failures",
        "claim_attempts",
        "claim_wins",
        "releases",
        "values_written",
    ];
    let (a, b) = (sim.fields(), real.fields());
    MEASURED
        .iter()
        .filter_map(|m| {
            let x = a.iter().find(|(k, _)| k == m)?.1.clone();
            let y = b.iter().find(|(k, _)| k == m)?.1.clone();
            Some((m.to_string(), x, y))
        })
        .collect()
}
