//! A real fleet: a scenario run with real tasks against a real Redis (one
//! server or a cluster). Each instance is a driver ([`Instance`]) (its own flight
//! table and connection); each thread a task; the origin sleeps for the
//! scenario's latency and fails, hangs or stalls as it says. The counts use
//! the simulation's names, so the two can be set side by side
//! ([`compare`]).
//!
//! The three workloads, as the simulation draws them:
//! - **burst**: every thread asks once for key 0, arrivals spread over
//!   `spread_ms`;
//! - **cold**: the same arrivals, each for a random key among `keys`, on an
//!   empty cache;
//! - **steady**: each thread asks first within `think_ms`, then again
//!   `think_ms` x [0.5, 1.5) after each answer, until `duration_ms`; keys are
//!   skewed towards key 0 (`u^3 x keys`).
//!
//! Faults, injected for real: `redis_down` puts a [`FaultProxy`] between
//! the instances and Redis and takes it down before the first request
//! (every command errors, as in the simulation; with `redis_outage=hang`
//! the proxy holds the connections and every byte instead, so a command
//! fails only at the client's `redis_timeout_ms`, and passes them on, in
//! order, when a `redis` fault's window ends, as a paused Redis runs what
//! was sent to it when it resumes); `holder_crash`
//! makes the fleet's first claim winner die right after winning, without
//! releasing. Faults at a moment (`faults`, `KIND@START+DURATION`) are
//! applied on the run's clock: `redis` through the same proxy for its
//! window, `origin`, `origin-hang` and `origin-slow` by the origin for the
//! calls that start inside theirs, `holder` by the first request found
//! holding a claim after START (at the end of the step it is waiting on)
//! or winning one.
//!
//! Open-loop steady traffic (`arrivals=open`) arrives at `rate_per_s`
//! whatever the latency, into each instance's pool of `threads` and its
//! accept queue, as the simulation runs it.
//!
//! What the real fleet cannot do is refused in words naming the knob
//! ([`unsupported`]), never ignored: a Redis throughput (a real Redis has
//! its own).
//!
//! How close a real run comes to the simulation: see [`checks`]. Burst
//! shapes whose arrivals fit inside the recompute agree exactly on
//! recomputes, claim attempts and wins. Everything that depends on real
//! timers and scheduling (steady traffic, TTLs, jitter, a crashed holder's
//! TTL, an outage's error count, admission) agrees within a tolerance: the
//! simulation's clock is exact and its events ordered, a real one has
//! timer granularity, scheduling delays on a shared 2-core machine and
//! Redis round trips that vary.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use stampede::metrics::{Ending, Metric, Report};
use stampede::rng::Rng;
use stampede::scenario::{Arrivals, FaultKind, RedisOutage, Scenario, Workload};
use stampede::sim::{draw_key, zipf_cdf};
use stampede::Metric as M;
use tokio::time::Instant;

use crate::faults::{connect_in_fleet, Instance};
use crate::proxy::FaultProxy;
use stampede_redis::driver::{Origin, OriginFuture};
use stampede_redis::Target;
use stampede_redis::{fence_key, lock_key, value_key};

/// What the origin saw: calls, failures, and how many ran at once.
#[derive(Default)]
struct OriginStats {
    calls: AtomicU64,
    failures: AtomicU64,
    /// Calls at the origin right now: past `origin_capacity` every call
    /// slows in proportion, as the simulation's origin does.
    running: AtomicU64,
    peak: AtomicU64,
    /// Calls started while another call for the same key was running.
    overlapping: AtomicU64,
    per_key: Mutex<HashMap<u32, u32>>,
}

/// The scenario's origin, for real: latency `recompute_ms` x [0.75, 1.25),
/// failures by `fail_rate`, every call failing during the outage, never
/// answering under `hang`.
#[derive(Clone)]
pub struct ScenarioOrigin {
    scenario: Arc<Scenario>,
    /// The run's t = 0 (the outage and the faults are timed from it): set
    /// by [`ScenarioOrigin::begin`], else the first call.
    start: Arc<std::sync::OnceLock<Instant>>,
    stats: Arc<OriginStats>,
}

/// One call at the origin: counted as running until it ends or is dropped
/// (an origin timeout drops it).
struct Running {
    stats: Arc<OriginStats>,
    key: u32,
}

impl Drop for Running {
    fn drop(&mut self) {
        self.stats.running.fetch_sub(1, Ordering::SeqCst);
        let mut per_key = self
            .stats
            .per_key
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        if let Some(n) = per_key.get_mut(&self.key) {
            *n -= 1;
            if *n == 0 {
                per_key.remove(&self.key);
            }
        }
    }
}

impl ScenarioOrigin {
    pub fn new(s: &Scenario) -> ScenarioOrigin {
        ScenarioOrigin {
            scenario: Arc::new(s.clone()),
            start: Arc::default(),
            stats: Arc::default(),
        }
    }

    /// The run starts now: the origin's outage and faults are timed from
    /// here.
    pub fn begin(&self, at: Instant) {
        let _ = self.start.set(at);
    }

    /// A fault of this kind is in force now.
    fn fault_now(&self, kind: FaultKind) -> bool {
        let start = *self.start.get_or_init(Instant::now);
        let now_ms = start.elapsed().as_secs_f64() * 1000.0;
        self.scenario
            .faults
            .iter()
            .any(|f| f.kind == kind && f.active_at(now_ms))
    }

    /// A uniform draw in [0, 1) for call or arrival `n`, from the project's
    /// seeded generator (the spread only has to vary, not to match the
    /// simulation's stream draw for draw).
    fn draw(n: u64) -> f64 {
        Rng::new(n).unit()
    }
}

impl Origin for ScenarioOrigin {
    fn compute(&self, key: u32) -> OriginFuture {
        let s = self.scenario.clone();
        let st = self.stats.clone();
        let n = st.calls.fetch_add(1, Ordering::SeqCst);
        let load = st.running.fetch_add(1, Ordering::SeqCst) + 1;
        st.peak.fetch_max(load, Ordering::SeqCst);
        {
            let mut per_key = st.per_key.lock().unwrap_or_else(PoisonError::into_inner);
            let running = per_key.entry(key).or_insert(0);
            if *running > 0 {
                st.overlapping.fetch_add(1, Ordering::SeqCst);
            }
            *running += 1;
        }
        let guard = Running {
            stats: st.clone(),
            key,
        };
        let start = *self.start.get_or_init(Instant::now);
        let in_outage = start.elapsed() < Duration::from_millis(u64::from(s.origin_outage_ms))
            || self.fault_now(FaultKind::Origin);
        let hangs = s.hang || self.fault_now(FaultKind::OriginHang);
        let slow = if self.fault_now(FaultKind::OriginSlow) {
            10.0
        } else {
            1.0
        };
        Box::pin(async move {
            let _guard = guard;
            if hangs {
                std::future::pending::<()>().await;
            }
            // As the simulation's origin: base x [0.75, 1.25), with a 2%
            // tail at 2-4x, slowed in proportion past its capacity.
            let overload = (load as f64 / f64::from(s.origin_capacity.max(1))).max(1.0);
            let tail = if Self::draw(n ^ 0x7a11) < 0.02 {
                2.0 + (Self::draw(n ^ 0x7a12) * 3.0).floor()
            } else {
                1.0
            };
            let base =
                f64::from(s.recompute_ms) * (0.75 + 0.5 * Self::draw(n)) * tail * overload * slow;
            tokio::time::sleep(Duration::from_micros((base * 1000.0) as u64)).await;
            if in_outage || Self::draw(n ^ 0x5555) < s.fail_rate {
                st.failures.fetch_add(1, Ordering::SeqCst);
                return Err("the origin failed".into());
            }
            Ok(format!("value of {key}").into_bytes())
        })
    }
}

/// The keys a run touches.
fn keys_of(s: &Scenario) -> u32 {
    match s.workload {
        Workload::Burst => 1,
        Workload::Cold | Workload::Steady => s.keys.max(1),
    }
}

/// What the real fleet cannot run, in words naming the knob; `None` when
/// it runs every knob of `s` (for real or, for the origin's, as the
/// simulation's origin does).
pub fn unsupported(s: &Scenario) -> Option<String> {
    let mut out = Vec::new();
    if s.redis_ops_per_ms > 0 {
        out.push(
            "redis_ops_per_ms: a real Redis serves at its own throughput, which the \
             real fleet cannot set",
        );
    }
    if s.pitfalls.plain_del || s.pitfalls.no_expiry {
        out.push(
            "pitfalls plain-del and no-expiry: the real driver releases with its \
             compare-and-delete script and claims with a PX, always",
        );
    }
    (!out.is_empty()).then(|| format!("not supported by the real fleet: {}", out.join("; ")))
}

/// Redis is down at some moment of the run: the whole run, or a fault
/// (injected through a proxy in front of one server, so never into a
/// cluster).
pub fn redis_faulted(s: &Scenario) -> bool {
    s.redis_down || s.faults.iter().any(|f| f.kind == FaultKind::Redis)
}

/// The proxy's state at `at_ms` of the run: down (or hung) while
/// `redis_down` or a `redis` fault is in force. True when Redis is down.
fn set_redis_at(proxy: &FaultProxy, s: &Scenario, at_ms: f64) -> bool {
    let down = s.redis_down
        || s.faults
            .iter()
            .any(|f| f.kind == FaultKind::Redis && f.active_at(at_ms));
    match (down, s.redis_outage) {
        (false, _) => proxy.set_down(false),
        (true, RedisOutage::Error) => proxy.set_down(true),
        (true, RedisOutage::Hang) => proxy.set_hang(true),
    }
    down
}

/// A hung Redis resumes during the run: a `redis` fault window that ends,
/// with `redis_outage=hang`.
fn resumes(s: &Scenario) -> bool {
    !s.redis_down
        && s.redis_outage == RedisOutage::Hang
        && s.faults
            .iter()
            .any(|f| f.kind == FaultKind::Redis && f.duration_ms.is_some())
}

/// The claims on the run's keys held in Redis right after a hang ended:
/// once the proxy has passed on what it held (1 s at most), one EXISTS per
/// key on a connection straight to Redis. Any claim counts, late or not
/// (the conformance row's scenario makes none but late ones then).
async fn locks_held_at_resume(
    proxy: &FaultProxy,
    con: &mut stampede_redis::Conn,
    keys: u32,
) -> u64 {
    let until = Instant::now() + Duration::from_secs(1);
    while proxy.pending() > 0 && Instant::now() < until {
        tokio::time::sleep(Duration::from_millis(1)).await;
    }
    // Redis reads the proxy's connections before this one's command.
    tokio::time::sleep(Duration::from_millis(5)).await;
    let mut held = 0;
    for k in 0..keys {
        let found: redis::RedisResult<bool> = redis::cmd("EXISTS")
            .arg(lock_key(&k.to_string()))
            .query_async(con)
            .await;
        held += u64::from(found.unwrap_or(false));
    }
    held
}

/// What a fault at a moment does on the run's clock.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Moment {
    /// The proxy's state is set as the scenario says at this moment.
    Proxy,
    /// One more pending holder fault.
    Holder,
    /// A deploy re-warms every key with one TTL and no jitter.
    TtlSync,
}

/// Applies the faults at a moment on the run's clock (from `start`): the
/// proxy's state at every start and end of a `redis` fault, one more
/// pending holder fault at each `holder` fault's start, and at each
/// `ttl-sync` fault's start every key re-warmed with the same TTL
/// ([`crate::seed::sync_ttls`], on a connection of its own straight to
/// Redis, as a deploy's warm-up job writes). When a hang ends, the claims
/// held right after it are added to `held_at_resume`
/// ([`locks_held_at_resume`], on that same direct connection). Aborted
/// when the run ends.
fn schedule_faults(
    s: &Scenario,
    start: Instant,
    proxy: Option<Arc<FaultProxy>>,
    holder_faults: Arc<AtomicU64>,
    direct: Option<stampede_redis::Conn>,
    held_at_resume: Arc<AtomicU64>,
) -> tokio::task::JoinHandle<()> {
    let mut moments: Vec<(u32, Moment)> = Vec::new();
    for f in &s.faults {
        match f.kind {
            FaultKind::Redis => {
                moments.push((f.start_ms, Moment::Proxy));
                if let Some(d) = f.duration_ms {
                    moments.push((f.start_ms.saturating_add(d), Moment::Proxy));
                }
            }
            FaultKind::Holder => moments.push((f.start_ms, Moment::Holder)),
            FaultKind::TtlSync => moments.push((f.start_ms, Moment::TtlSync)),
            // The origin checks its own at each call.
            FaultKind::Origin | FaultKind::OriginHang | FaultKind::OriginSlow => {}
        }
    }
    moments.sort_unstable();
    let s = s.clone();
    tokio::spawn(async move {
        let mut direct = direct;
        for (at, what) in moments {
            tokio::time::sleep_until(start + Duration::from_millis(u64::from(at))).await;
            match what {
                Moment::Holder => {
                    holder_faults.fetch_add(1, Ordering::SeqCst);
                }
                Moment::Proxy => {
                    if let Some(p) = &proxy {
                        let down = set_redis_at(p, &s, f64::from(at));
                        if let (false, RedisOutage::Hang, Some(con)) =
                            (down, s.redis_outage, direct.as_mut())
                        {
                            let held = locks_held_at_resume(p, con, keys_of(&s)).await;
                            held_at_resume.fetch_add(held, Ordering::SeqCst);
                        }
                    }
                }
                Moment::TtlSync => {
                    if let Some(con) = direct.as_mut() {
                        let ms = |v: u32| Duration::from_millis(u64::from(v));
                        // A warm-up that fails (Redis down meanwhile)
                        // re-warms what it reached, as a real one would.
                        let _ = crate::seed::sync_ttls(
                            con,
                            keys_of(&s),
                            ms(s.value_ttl_ms),
                            ms(s.stale_ms),
                        )
                        .await;
                    }
                }
            }
        }
    })
}

/// What one request came to: its ending (`None`: turned away, never
/// served) and how long its caller waited.
type Outcome = (Option<Ending>, Duration);

/// Open-loop steady traffic, as the simulation runs it: requests arrive
/// across the fleet at `rate_per_s` (exponential gaps) until
/// `duration_ms`, each at a random instance, whatever the latency. An
/// instance's `threads` are its pool: a request takes a free thread and
/// holds it until its work has ended (a recompute outliving its caller
/// keeps it); finding none free, it waits in the instance's accept queue
/// (at most `threads` long) under its deadline, which runs from its
/// arrival, and times out there if no thread comes in time; with the queue
/// full it is turned away (`rejected`).
async fn open_loop(
    drivers: Vec<Instance<ScenarioOrigin>>,
    s: Scenario,
    zipf: Arc<Vec<f64>>,
    start: Instant,
) -> Vec<Outcome> {
    use tokio::sync::Semaphore;
    let pools: Vec<Arc<Semaphore>> = drivers
        .iter()
        .map(|_| Arc::new(Semaphore::new(s.threads as usize)))
        .collect();
    let queued: Arc<Vec<AtomicU64>> = Arc::new(drivers.iter().map(|_| AtomicU64::new(0)).collect());
    let deadline = Duration::from_millis(u64::from(s.deadline_ms));
    let end = start + Duration::from_millis(u64::from(s.duration_ms));
    let mean_us = 1e6 / f64::from(s.rate_per_s.max(1));
    let mut rng = Rng::new(0x09e7_1009);
    let mut at = start;
    let mut requests = Vec::new();
    loop {
        let gap = -(1.0 - rng.unit()).ln() * mean_us;
        at += Duration::from_micros((gap as u64).max(1));
        if at >= end {
            break;
        }
        tokio::time::sleep_until(at).await;
        let inst = rng.below(drivers.len() as u64) as usize;
        let key = draw_key(&s, &zipf, &mut rng);
        let (d, pool, queued) = (drivers[inst].clone(), pools[inst].clone(), queued.clone());
        requests.push(tokio::spawn(async move {
            let arrived = Instant::now();
            let thread = match pool.clone().try_acquire_owned() {
                Ok(t) => t,
                Err(_) => {
                    if queued[inst].fetch_add(1, Ordering::SeqCst) >= u64::from(s.threads) {
                        queued[inst].fetch_sub(1, Ordering::SeqCst);
                        return (None, Duration::ZERO);
                    }
                    let got =
                        tokio::time::timeout_at(arrived + deadline, pool.acquire_owned()).await;
                    queued[inst].fetch_sub(1, Ordering::SeqCst);
                    match got {
                        Ok(Ok(t)) => t,
                        _ => return (Some(Ending::Timeout), arrived.elapsed()),
                    }
                }
            };
            let (a, work) = d.get_since(key, Some(arrived)).await;
            let took = arrived.elapsed();
            // The thread is free once the work is.
            let _ = work.await;
            drop(thread);
            (Some(a.ending), took)
        }));
    }
    let mut out = Vec::new();
    for r in requests {
        if let Ok(o) = r.await {
            out.push(o);
        }
    }
    out
}

/// Runs `s` for real against `target` (a URL, several comma-separated URLs
/// for a cluster, or a [`Target`]) and counts what happened, in the
/// simulation's vocabulary. What the real fleet cannot run is refused
/// ([`unsupported`]).
pub async fn run(target: impl Into<Target>, s: &Scenario) -> Result<Report, String> {
    run_measured(target, s).await.map(|m| m.report)
}

/// A real run's counts, and when its burst or cold start really arrived.
#[derive(Clone, Debug)]
pub struct Measured {
    /// The counts, as [`run`] gives them.
    pub report: Report,
    /// When the last request of a burst or cold start was asked, from the
    /// run's start (0 for steady traffic). Its arrival is drawn in the
    /// window `[0, spread_ms)` as in the simulation, but a task of a loaded
    /// machine may be polled late and ask later: this is the window the
    /// run really had.
    pub arrivals_ms: f64,
}

/// [`run`], with when the requests really arrived ([`Measured`]).
pub async fn run_measured(target: impl Into<Target>, s: &Scenario) -> Result<Measured, String> {
    if let Some(why) = unsupported(s) {
        return Err(why);
    }
    let target = target.into();
    let proxied = match (&target, redis_faulted(s)) {
        (Target::Single(url), true) => Some(Arc::new(FaultProxy::in_front_of(url).await?)),
        (Target::Cluster(_), true) => {
            return Err(
                "a Redis outage is injected through a proxy in front of one server; \
                 it cannot be injected into a cluster"
                    .into(),
            )
        }
        (_, false) => None,
    };
    let ms = |v: u32| Duration::from_millis(u64::from(v));
    // A clean slate for the keys this run uses: no value, claim or fence
    // from a run before (one slot per key, so one DEL each on a cluster).
    let mut con = target.connect().await.map_err(|e| e.to_string())?;
    for k in 0..keys_of(s) {
        let k = k.to_string();
        let _: i64 = redis::cmd("DEL")
            .arg(value_key(&k))
            .arg(lock_key(&k))
            .arg(fence_key(&k))
            .query_async(&mut con)
            .await
            .map_err(|e| e.to_string())?;
    }
    let origin = ScenarioOrigin::new(s);
    let crashed = Arc::new(AtomicBool::new(false));
    let holder_faults = Arc::new(AtomicU64::new(0));
    let via = match &proxied {
        Some(p) => Target::Single(p.url()),
        None => target.clone(),
    };
    let mut drivers = Vec::new();
    for _ in 0..s.instances {
        drivers.push(
            connect_in_fleet(
                &via,
                s,
                origin.clone(),
                crashed.clone(),
                holder_faults.clone(),
            )
            .await
            .map_err(|e| e.to_string())?,
        );
    }
    // The values a run starts from, written last, so that their TTLs run
    // from (nearly) the run's t = 0, as the simulation's do.
    if s.workload == Workload::Steady {
        // As the simulation starts steady traffic: every key there, fresh
        // for a (jittered) TTL from now, with the nominal recompute delta.
        let delta = (u64::from(s.recompute_ms) + 3 * u64::from(s.rtt_ms)) * 1000;
        let mut rng = Rng::new(0x5eed);
        for k in 0..keys_of(s) {
            let f = 1.0 - s.jitter + 2.0 * s.jitter * rng.unit();
            let fresh = ms(s.value_ttl_ms).mul_f64(if s.jitter > 0.0 { f } else { 1.0 });
            let payload = format!("value of {k}");
            crate::seed::seed_value(
                &mut con,
                k,
                payload.as_bytes(),
                fresh,
                ms(s.stale_ms),
                delta,
            )
            .await
            .map_err(|e| e.to_string())?;
        }
    }
    if s.workload == Workload::Burst && s.stale_ms > 0 {
        // As the simulation starts a burst with a stale window: the key is
        // there, expired, and servable stale for `stale_ms`.
        let stale = Duration::from_millis(u64::from(s.stale_ms));
        let delta = u64::from(s.recompute_ms) * 1000;
        crate::seed::seed_stale(&mut con, 0, b"value of 0 (stale)", stale, delta)
            .await
            .map_err(|e| e.to_string())?;
    }

    if let Some(p) = &proxied {
        // Redis as it is at t = 0: for `redis_down`, gone before the first
        // request and for good.
        set_redis_at(p, s, 0.0);
    }
    let start = Instant::now();
    origin.begin(start);
    let direct = if s.faults.iter().any(|f| f.kind == FaultKind::TtlSync) || resumes(s) {
        Some(target.connect().await.map_err(|e| e.to_string())?)
    } else {
        None
    };
    let held_at_resume = Arc::new(AtomicU64::new(0));
    let faults = schedule_faults(
        s,
        start,
        proxied.clone(),
        holder_faults,
        direct,
        held_at_resume.clone(),
    );
    let zipf = Arc::new(zipf_cdf(s));
    // The latest a burst's or cold start's request was asked, in µs from
    // `start`.
    let latest = Arc::new(AtomicU64::new(0));
    let mut calls = Vec::new();
    let open = s.workload == Workload::Steady && s.arrivals == Arrivals::Open;
    if open {
        calls.push(tokio::spawn(open_loop(
            drivers.clone(),
            s.clone(),
            zipf.clone(),
            start,
        )));
    }
    for (i, d) in drivers.iter().enumerate().filter(|_| !open) {
        for t in 0..s.threads {
            let d = d.clone();
            let n = u64::from(i as u32 * s.threads + t);
            let s = s.clone();
            let zipf = zipf.clone();
            let latest = latest.clone();
            calls.push(tokio::spawn(async move {
                let mut rng = Rng::new(n ^ 0xabcd_0000);
                let mut out = Vec::new();
                match s.workload {
                    Workload::Burst | Workload::Cold => {
                        // Arrivals spread over the window, as in the simulation.
                        let at = start + ms(s.spread_ms).mul_f64(rng.unit());
                        let key = draw_key(&s, &zipf, &mut rng);
                        tokio::time::sleep_until(at).await;
                        let asked = Instant::now();
                        let since = asked.duration_since(start).as_micros() as u64;
                        latest.fetch_max(since, Ordering::Relaxed);
                        let a = d.get(key).await;
                        out.push((Some(a.ending), asked.elapsed()));
                    }
                    Workload::Steady => {
                        let end = start + ms(s.duration_ms);
                        let think = ms(s.think_ms);
                        let mut at = start + think.mul_f64(rng.unit());
                        while at < end {
                            tokio::time::sleep_until(at).await;
                            let key = draw_key(&s, &zipf, &mut rng);
                            let asked = Instant::now();
                            let a = d.get(key).await;
                            out.push((Some(a.ending), asked.elapsed()));
                            let pause = think / 2 + think.mul_f64(rng.unit());
                            at = Instant::now() + pause.max(Duration::from_micros(1));
                        }
                    }
                }
                out
            }));
        }
    }
    let mut r = Report::default();
    let mut latencies = Vec::new();
    for c in calls {
        for (ending, took) in c.await.map_err(|e| e.to_string())? {
            r.requests += 1;
            let Some(ending) = ending else {
                r.rejected += 1;
                continue;
            };
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
    }
    // Let work that outlived its callers finish writing and releasing (or
    // give up on a hung origin at its timeout), within a bound.
    let settle = (u64::from(s.recompute_ms) * 4).max(u64::from(s.origin_timeout_ms)) + 500;
    let until = Instant::now() + Duration::from_millis(settle.min(10_000));
    while Instant::now() < until
        && drivers
            .iter()
            .any(|d| d.counters().running.load(Ordering::SeqCst) > 0)
    {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    for d in &drivers {
        let c = d.counters();
        let get = |a: &AtomicU64| a.load(Ordering::SeqCst);
        r.recomputes += get(&c.recomputes);
        r.claim_attempts += get(&c.claim_attempts);
        r.claim_wins += get(&c.claim_wins);
        r.releases += get(&c.releases);
        r.values_written += get(&c.values_written);
        r.redis_errors += get(&c.redis_errors);
        r.redis_skipped += get(&c.redis_skipped);
        r.retries += get(&c.retries);
        r.local_hits += get(&c.local_hits);
        r.admission_shed += get(&c.admission_shed);
        r.misses += get(&c.misses);
        r.crashed += get(&c.crashed);
        r.writes_refused += get(&c.writes_refused);
        r.unclaims += get(&c.ambiguous_claims);
    }
    if resumes(s) {
        // A claim a client gave up on that landed when Redis resumed: the
        // claims Redis granted (each win bumps the key's fence counter,
        // deleted before the run) less the wins the clients were told of.
        let mut granted = 0;
        for k in 0..keys_of(s) {
            let fence: Option<u64> = redis::cmd("GET")
                .arg(fence_key(&k.to_string()))
                .query_async(&mut con)
                .await
                .map_err(|e| e.to_string())?;
            granted += fence.unwrap_or(0);
        }
        r.late_claims = granted.saturating_sub(r.claim_wins);
        r.late_claims_held_at_resume = held_at_resume.load(Ordering::SeqCst);
        // Not seen directly (the release's reply comes after its client
        // gave up): the late claims no longer held right after the resume.
        r.late_claims_released = r.late_claims.saturating_sub(r.late_claims_held_at_resume);
    }
    r.origin_failures = origin.stats.failures.load(Ordering::SeqCst);
    r.origin_peak_concurrency = origin.stats.peak.load(Ordering::SeqCst);
    r.overlapping_recomputes = origin.stats.overlapping.load(Ordering::SeqCst);
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
    faults.abort();
    drop(proxied);
    Ok(Measured {
        report: r,
        arrivals_ms: latest.load(Ordering::Relaxed) as f64 / 1000.0,
    })
}

/// The counters a real run and the simulation must agree on exactly for a
/// burst whose arrivals fit inside the recompute.
pub const EXACT: [Metric; 4] = [M::Requests, M::Recomputes, M::ClaimAttempts, M::ClaimWins];

/// Every counter a real run measures.
pub const MEASURED: [Metric; 30] = [
    M::Requests,
    M::Hits,
    M::Computed,
    M::Shared,
    M::StaleServed,
    M::Degraded,
    M::Errors,
    M::Timeouts,
    M::Misses,
    M::Recomputes,
    M::OverlappingRecomputes,
    M::OriginFailures,
    M::OriginPeakConcurrency,
    M::ClaimAttempts,
    M::ClaimWins,
    M::Releases,
    M::ValuesWritten,
    M::WritesRefused,
    M::RedisErrors,
    M::RedisSkipped,
    M::AdmissionShed,
    M::Crashed,
    M::Retries,
    M::LocalHits,
    M::Rejected,
    M::Unclaims,
    M::LateClaims,
    M::LateClaimsReleased,
    M::LateClaimsHeldAtResume,
    M::P99Ms,
];

/// Side by side: (counter, simulated, real) for every counter the real run
/// measures, the values as the JSON writes them.
pub fn compare(sim: &Report, real: &Report) -> Vec<(Metric, String, String)> {
    MEASURED
        .iter()
        .map(|&m| (m, sim.text(m), real.text(m)))
        .collect()
}

/// How far a real count may be from the simulation's and still agree:
/// `|real - sim| <= max(abs, rel x sim)`. Exact when both are 0.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Tolerance {
    pub rel: f64,
    pub abs: u64,
}

impl Tolerance {
    pub const EXACT: Tolerance = Tolerance { rel: 0.0, abs: 0 };

    pub const fn rel(rel: f64) -> Tolerance {
        Tolerance { rel, abs: 0 }
    }

    pub const fn abs(abs: u64) -> Tolerance {
        Tolerance { rel: 0.0, abs }
    }

    pub const fn either(rel: f64, abs: u64) -> Tolerance {
        Tolerance { rel, abs }
    }

    pub fn allows(&self, sim: f64, real: f64) -> bool {
        (real - sim).abs() <= (self.abs as f64).max(self.rel * sim) + 1e-9
    }

    /// `exact`, `±10%`, `±20` or `±10% or ±2`.
    pub fn describe(&self) -> String {
        let pct = format!("±{}%", (self.rel * 100.0).round());
        match (self.rel > 0.0, self.abs > 0) {
            (false, false) => "exact".into(),
            (true, false) => pct,
            (false, true) => format!("±{}", self.abs),
            (true, true) => format!("{pct} or ±{}", self.abs),
        }
    }
}

/// One conformance row group: a preset at a size this machine runs in
/// seconds, and the metrics compared, each with its tolerance.
#[derive(Clone, Debug)]
pub struct Check {
    /// The preset, or `PRESET:VARIANT` for a run made from it with
    /// something more (a fault at a moment).
    pub preset: &'static str,
    pub scenario: Scenario,
    pub metrics: Vec<(Metric, Tolerance)>,
}

/// Why the tolerances exist, in one line (`data/conformance.tsv` carries it).
pub const TOLERANCE_NOTE: &str = "bursts whose arrivals fit inside the recompute agree exactly; \
steady traffic, TTLs, jitter, a crashed holder's TTL, an outage, a hung Redis's client timeout \
and admission run on real timers and a shared scheduler (timer granularity, Redis round trips \
that vary, tasks delayed on 2 cores), and retries' backoff and skewed keys are drawn from other \
random streams, so their counts agree within the stated bound: |real - sim| <= max(abs, rel x sim)";

/// The conformance run: every preset the real fleet can run, sized for a
/// 2-core machine, with what must agree and how closely.
pub fn checks() -> Vec<Check> {
    use Tolerance as T;
    let p = |name: &str| stampede::scenario::preset(name).expect("a preset");
    let exact_burst = vec![
        (M::Requests, T::EXACT),
        (M::Recomputes, T::EXACT),
        (M::ClaimAttempts, T::EXACT),
        (M::ClaimWins, T::EXACT),
        (M::Timeouts, T::EXACT),
    ];
    let small = |name: &str| Scenario {
        instances: 8,
        threads: 25,
        ..p(name)
    };
    // Steady presets run 6-8 s instead of 20-30 s, values living 2 s, so
    // that a run sees values expire and refresh several times.
    let steady = |name: &str, duration_ms: u32| Scenario {
        duration_ms,
        value_ttl_ms: 2000,
        ..p(name)
    };
    vec![
        // The card, at its full size: 40 x 200.
        Check {
            preset: "burst",
            scenario: p("burst"),
            metrics: exact_burst.clone(),
        },
        Check {
            preset: "singleflight",
            scenario: p("singleflight"),
            metrics: exact_burst.clone(),
        },
        // At 40 x 200 the 8,000 real tasks take longer than the recompute
        // to make their first round trip on 2 cores, and late ones re-claim
        // after the release; 8 x 25 fits.
        Check {
            preset: "claim-outer",
            scenario: small("claim-outer"),
            metrics: exact_burst.clone(),
        },
        Check {
            preset: "hang",
            scenario: small("hang"),
            metrics: exact_burst.clone(),
        },
        // Stale losers end their flights at once, so later arrivals claim
        // again: how often depends on timing, in both.
        Check {
            preset: "stale",
            scenario: small("stale"),
            metrics: vec![
                (M::Requests, T::EXACT),
                (M::Recomputes, T::EXACT),
                (M::StaleServed, T::either(0.1, 25)),
                (M::ClaimAttempts, T::either(0.5, 8)),
                (M::Timeouts, T::EXACT),
            ],
        },
        Check {
            preset: "redis-down",
            scenario: Scenario {
                instances: 10,
                threads: 50,
                ..p("redis-down")
            },
            metrics: vec![
                (M::Requests, T::EXACT),
                (M::Recomputes, T::EXACT),
                (M::ClaimAttempts, T::EXACT),
                (M::Timeouts, T::EXACT),
                (M::RedisErrors, T::rel(0.1)),
            ],
        },
        // Redis hangs for the whole run, the client waits 1.5 s, past the
        // callers' 1 s deadline: nobody is answered but by the deadline,
        // nothing is claimed or computed, and every command sent counts as
        // a Redis error once its timeout passes (after its caller left).
        Check {
            preset: "redis-hang",
            scenario: Scenario {
                instances: 10,
                threads: 50,
                ..p("redis-hang")
            },
            metrics: vec![
                (M::Requests, T::EXACT),
                (M::Recomputes, T::EXACT),
                (M::ClaimAttempts, T::EXACT),
                (M::Timeouts, T::EXACT),
                (M::RedisErrors, T::rel(0.1)),
            ],
        },
        // Redis hangs for the first 300 ms and resumes (a `redis` fault
        // window; the client gives up on a command at 100 ms): the claim
        // sent during the hang times out, its client sends the release by
        // its token after it, and at the resume Redis runs both, in order.
        // A resumed Redis runs each connection's backlog in turn (a
        // SIGSTOPped redis-server does; so does the simulation since it
        // holds commands per instance), so each of the four instances' late
        // claims lands and is then released by its own token: 4 late
        // claims, 4 released, none held after the resume. (The fail-open
        // writes land after the resume.)
        Check {
            preset: "redis-hang:resumes",
            scenario: Scenario {
                instances: 4,
                threads: 50,
                redis_outage: RedisOutage::Hang,
                faults: vec![stampede::scenario::Fault {
                    kind: FaultKind::Redis,
                    start_ms: 0,
                    duration_ms: Some(300),
                }],
                ..Scenario::default()
            },
            metrics: vec![
                (M::Requests, T::EXACT),
                (M::Recomputes, T::EXACT),
                (M::ClaimAttempts, T::EXACT),
                (M::ValuesWritten, T::EXACT),
                (M::Unclaims, T::EXACT),
                (M::LateClaims, T::EXACT),
                (M::LateClaimsReleased, T::EXACT),
                (M::LateClaimsHeldAtResume, T::EXACT),
                (M::Timeouts, T::EXACT),
                (M::RedisErrors, T::rel(0.1)),
            ],
        },
        Check {
            preset: "cold",
            scenario: p("cold"),
            metrics: vec![
                (M::Requests, T::EXACT),
                (M::Recomputes, T::either(0.25, 5)),
                (M::AdmissionShed, T::rel(0.1)),
                (M::ClaimAttempts, T::rel(0.1)),
                (M::OriginPeakConcurrency, T::rel(0.15)),
                (M::Timeouts, T::abs(10)),
            ],
        },
        // The same cold start with Zipf-skewed keys (key_skew 1): the hot
        // keys coalesce. The real run's keys come from another random
        // stream, and its 1,000 tasks start over a wider window than the
        // 10 ms spread on 2 cores, so fewer share a flight: measured 114-127
        // recomputes (and 224-237 shared) against the simulation's 102-105
        // (261-282) over seeds 1-4, the real side higher every time.
        Check {
            preset: "cold-skew",
            scenario: p("cold-skew"),
            metrics: vec![
                (M::Requests, T::EXACT),
                (M::Recomputes, T::either(0.35, 5)),
                (M::Shared, T::rel(0.25)),
                (M::AdmissionShed, T::rel(0.1)),
                (M::ClaimAttempts, T::rel(0.15)),
                (M::OriginPeakConcurrency, T::rel(0.15)),
                // A hot key's flight has a hundred followers: when its
                // leader is late (a slow recompute, a loaded machine) they
                // pass their deadline together. Measured 0-2 in release
                // builds, 35 in a debug build at a load average of 6.
                (M::Timeouts, T::abs(40)),
            ],
        },
        // Callers retry a failing origin (a 2 s outage) three times with
        // full-jitter backoff and no coalescing: nearly (1 + 3) x 200
        // origin calls. The backoff draws differ from the simulation's
        // (seeds 1-6: 791-797 recomputes, 596-599 retries, 164-182
        // errors); real runs measured 792-793, 596-598, 173-178.
        Check {
            preset: "retry-storm",
            scenario: p("retry-storm"),
            metrics: vec![
                (M::Requests, T::EXACT),
                (M::Recomputes, T::rel(0.02)),
                (M::Retries, T::rel(0.02)),
                (M::OriginFailures, T::rel(0.03)),
                (M::Errors, T::either(0.1, 10)),
                (M::Timeouts, T::abs(6)),
            ],
        },
        // Open-loop arrivals at 1,000 a second while the origin hangs for
        // 3 s: the pools fill, the accept queues back up into timeouts and
        // turn requests away. 10 s instead of 20 (the hang is at 5-8 s).
        // The arrivals are drawn from another stream (the simulation's
        // seeds 1-4: 9,853-10,221 requests, 1,875-1,972 rejected, 909-937
        // timeouts).
        Check {
            preset: "open-loop",
            scenario: Scenario {
                duration_ms: 10_000,
                ..p("open-loop")
            },
            metrics: vec![
                (M::Requests, T::rel(0.05)),
                (M::Recomputes, T::abs(1)),
                (M::Errors, T::abs(5)),
                (M::Timeouts, T::rel(0.1)),
                (M::Rejected, T::rel(0.1)),
            ],
        },
        Check {
            preset: "jitter",
            scenario: steady("jitter", 8000),
            metrics: vec![
                (M::Requests, T::rel(0.1)),
                (M::Misses, T::rel(0.15)),
                (M::Recomputes, T::rel(0.15)),
                (M::OverlappingRecomputes, T::rel(0.25)),
                (M::OriginPeakConcurrency, T::rel(0.25)),
                (M::Timeouts, T::abs(20)),
            ],
        },
        Check {
            preset: "short-ttl",
            scenario: steady("short-ttl", 6000),
            metrics: vec![
                (M::Requests, T::rel(0.1)),
                (M::Recomputes, T::abs(3)),
                (M::OverlappingRecomputes, T::abs(3)),
                // Losers poll every 50 ms and claim again whenever a poll
                // lands after the 100 ms claim expired: the simulation
                // itself ranges 33-47 over seeds 1-8 (39 at seed 1), real
                // runs measured 31-59.
                (M::ClaimAttempts, T::either(0.6, 6)),
                // A recompute in the origin's 2% slow tail leaves one
                // instance's callers (20) past their deadline, or not.
                (M::Timeouts, T::abs(20)),
            ],
        },
        Check {
            preset: "holder-crash",
            scenario: Scenario {
                claim_ttl_ms: 3000,
                ..steady("holder-crash", 6000)
            },
            metrics: vec![
                (M::Requests, T::rel(0.1)),
                (M::Crashed, T::EXACT),
                (M::Recomputes, T::abs(1)),
                (M::ClaimWins, T::abs(1)),
                // A threshold: each thread waits out its deadline two or
                // three times inside the dead claim's TTL, depending on
                // whether its last wait ends before the new value lands
                // (real TTL expiry, poll interval and recompute time shift
                // that by tens of ms). Measured +10% to +30% on 2 cores.
                (M::Timeouts, T::rel(0.4)),
            ],
        },
    ]
}

/// One metric of a real run judged against the simulation.
#[derive(Clone, Debug)]
pub struct Judgement {
    pub metric: Metric,
    pub tolerance: Tolerance,
    /// The simulation of the scenario as given.
    pub sim: f64,
    /// The simulation again on the arrival window the real run really had
    /// (the same as `sim` when the real arrivals fit the spread).
    pub sim_on_window: f64,
    pub real: f64,
}

impl Judgement {
    /// The real count agrees: within its tolerance of either simulation,
    /// or between the two.
    pub fn agrees(&self) -> bool {
        let (x, w, y) = (self.sim, self.sim_on_window, self.real);
        self.tolerance.allows(x, y)
            || self.tolerance.allows(w, y)
            || (x.min(w) <= y && y <= x.max(w))
    }
}

/// A real run of a [`Check`] judged against the simulation, on the arrival
/// window it really had. A loaded machine polls some of a burst's or cold
/// start's tasks late, and they ask later than their draw in the spread:
/// a cold start's late arrivals find admission slots freed and recompute
/// (measured 124-145 against 98 at a load of 6). So when the real
/// arrivals ran past the spread, the simulation is run again with that
/// window as its spread, and a real count may lie anywhere from the
/// nominal run's to that one's, each within the tolerance. On a quiet
/// machine the two windows are one, and the check is as strict as the
/// nominal run alone.
#[derive(Clone, Debug)]
pub struct Judged {
    /// The real arrival window, whole ms (`Measured::arrivals_ms` rounded
    /// up), and the simulation on it when it is wider than the spread.
    pub window_ms: u32,
    pub on_window: Option<Report>,
    pub rows: Vec<Judgement>,
}

/// Judges `real` (a run of scenario `s`) against `sim` (the simulation of
/// `s`) on `metrics` (a [`Check`]'s), on the arrival window the real run
/// had.
pub fn judge(
    metrics: &[(Metric, Tolerance)],
    s: &Scenario,
    sim: &Report,
    real: &Measured,
) -> Judged {
    let window_ms = real.arrivals_ms.ceil() as u32;
    let on_window = (window_ms > s.spread_ms).then(|| {
        let wide = Scenario {
            spread_ms: window_ms,
            ..s.clone()
        };
        stampede::sim::Fleet::new(&wide, 1).run()
    });
    let rows = metrics
        .iter()
        .map(|&(m, tolerance)| {
            let x = sim.get(m);
            Judgement {
                metric: m,
                tolerance,
                sim: x,
                sim_on_window: on_window.as_ref().map_or(x, |w| w.get(m)),
                real: real.report.get(m),
            }
        })
        .collect();
    Judged {
        window_ms,
        on_window,
        rows,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn judged(tolerance: Tolerance, sim: f64, sim_on_window: f64, real: f64) -> bool {
        Judgement {
            metric: M::Recomputes,
            tolerance,
            sim,
            sim_on_window,
            real,
        }
        .agrees()
    }

    #[test]
    fn a_count_agrees_near_either_simulation_or_between_them() {
        let t = Tolerance::either(0.25, 5);
        // On a quiet machine the windows are one: the nominal check alone.
        assert!(judged(t, 98.0, 98.0, 120.0));
        assert!(!judged(t, 98.0, 98.0, 141.0));
        // Late arrivals: the simulation on the real window recomputes more.
        assert!(judged(t, 98.0, 124.0, 141.0), "within 25 % of 124");
        assert!(judged(t, 10.0, 200.0, 150.0), "between the two");
        assert!(!judged(t, 10.0, 20.0, 40.0));
        assert!(!judged(Tolerance::EXACT, 10.0, 12.0, 13.0));
    }

    #[test]
    fn the_window_is_simulated_only_when_the_arrivals_ran_past_the_spread() {
        let s = Scenario {
            instances: 2,
            threads: 5,
            ..stampede::scenario::preset("cold").unwrap()
        };
        let sim = stampede::sim::Fleet::new(&s, 1).run();
        let metrics = [(M::Recomputes, Tolerance::EXACT)];
        let measured = |arrivals_ms| Measured {
            report: sim.clone(),
            arrivals_ms,
        };
        let on_time = judge(&metrics, &s, &sim, &measured(f64::from(s.spread_ms) - 0.5));
        assert!(on_time.on_window.is_none());
        assert!(on_time.rows[0].agrees());
        let late = judge(
            &metrics,
            &s,
            &sim,
            &measured(f64::from(s.spread_ms) + 150.0),
        );
        assert_eq!(late.window_ms, s.spread_ms + 150);
        let wide = late.on_window.expect("simulated on the wider window");
        assert_eq!(late.rows[0].sim_on_window, wide.recomputes as f64);
    }
}
