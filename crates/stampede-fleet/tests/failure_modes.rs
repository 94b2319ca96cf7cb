//! Issue 16's failure modes on real I/O, against the test's own
//! redis-server: a Redis that hangs (the proxy holds the connection and
//! the bytes until it resumes), the client timeout and the breaker, retries with a
//! deadline per attempt, faults at a moment in the real fleet, and what the
//! real fleet refuses. Every assertion is on counts and orderings, none on
//! how long something took.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use stampede::metrics::Ending;
use stampede::scenario::{Arrivals, ClaimMode, Fault, FaultKind, RedisOutage, Scenario, Workload};
use stampede::sim::Fleet;
use stampede_fleet::fleet;
use stampede_fleet::proxy::FaultProxy;
use stampede_fleet::{connect_in, Answer, Instance, Origin, OriginFuture};
use stampede_redis::row::Header;
use stampede_redis::{lock_key, value_key, Target};
use stampede_testkit::TestRedis;
use tokio::time::sleep;

/// What the origin's n-th call does.
#[derive(Clone, Copy)]
enum Call {
    Ok(u64),
    Fail(u64),
    Hang,
}

/// An origin whose n-th call does `script[n]` (past the end: answers in
/// 10 ms), answering "v{n}".
#[derive(Clone)]
struct Scripted {
    script: Arc<Vec<Call>>,
    calls: Arc<AtomicU64>,
}

impl Scripted {
    fn new(script: Vec<Call>) -> Scripted {
        Scripted {
            script: Arc::new(script),
            calls: Arc::default(),
        }
    }

    fn calls(&self) -> u64 {
        self.calls.load(Ordering::SeqCst)
    }
}

impl Origin for Scripted {
    fn compute(&self, _key: u32) -> OriginFuture {
        let n = self.calls.fetch_add(1, Ordering::SeqCst) as usize;
        let call = self.script.get(n).copied().unwrap_or(Call::Ok(10));
        Box::pin(async move {
            match call {
                Call::Ok(ms) => {
                    sleep(Duration::from_millis(ms)).await;
                    Ok(format!("v{n}").into_bytes())
                }
                Call::Fail(ms) => {
                    sleep(Duration::from_millis(ms)).await;
                    Err("the origin failed".into())
                }
                Call::Hang => std::future::pending().await,
            }
        })
    }
}

async fn instance(target: &str, s: &Scenario, origin: &Scripted) -> Instance<Scripted> {
    connect_in(target, s, origin.clone(), Arc::new(AtomicBool::new(false)))
        .await
        .unwrap()
}

/// `n` requests for `key` at once on one instance.
async fn burst(d: &Instance<Scripted>, n: usize, key: u32) -> Vec<Answer> {
    let calls: Vec<_> = (0..n)
        .map(|_| {
            let d = d.clone();
            tokio::spawn(async move { d.get(key).await })
        })
        .collect();
    let mut out = Vec::new();
    for c in calls {
        out.push(c.await.unwrap());
    }
    out
}

/// Until every request's task (and every command left to its timeout) has
/// ended.
async fn settled(d: &Instance<Scripted>) {
    while d.counters().running.load(Ordering::SeqCst) > 0 {
        sleep(Duration::from_millis(5)).await;
    }
}

fn count(a: &AtomicU64) -> u64 {
    a.load(Ordering::SeqCst)
}

async fn exists(url: &str, key: &str) -> bool {
    let client = redis::Client::open(url).unwrap();
    let mut con = client.get_multiplexed_async_connection().await.unwrap();
    redis::cmd("EXISTS")
        .arg(key)
        .query_async::<bool>(&mut con)
        .await
        .unwrap()
}

/// `s` in the simulation with Redis hung for the whole run, every request
/// at once (the tests hang the proxy before the burst).
fn hung(s: &Scenario) -> Scenario {
    Scenario {
        redis_down: true,
        redis_outage: RedisOutage::Hang,
        spread_ms: 0,
        ..s.clone()
    }
}

/// A paused Redis runs what was sent to it when it resumes: a claim
/// (`SET lock:k tok NX PX 5000`) sent through the hung proxy, whose client
/// gave up on it at its timeout, is forwarded at the resume, in order, and
/// holds the key in Redis afterwards (the claim a client thinks failed).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_claim_sent_during_a_hang_lands_when_it_resumes() {
    let redis = TestRedis::start().await;
    let proxy = FaultProxy::in_front_of(&redis.url).await.unwrap();
    let client = redis::Client::open(proxy.url()).unwrap();
    let mut con = client.get_multiplexed_async_connection().await.unwrap();
    let key = lock_key("k");
    proxy.set_hang(true);
    let mut claim = redis::cmd("SET");
    claim.arg(&key).arg("tok").arg("NX").arg("PX").arg(5000);
    let claim = claim.query_async::<Option<String>>(&mut con);
    let gave_up = tokio::time::timeout(Duration::from_millis(200), claim).await;
    assert!(gave_up.is_err(), "a hung Redis answered: {gave_up:?}");
    assert!(!exists(&redis.url, &key).await, "ran while hung");
    proxy.set_hang(false);
    let direct = redis::Client::open(redis.url.as_str()).unwrap();
    let mut direct = direct.get_multiplexed_async_connection().await.unwrap();
    let mut held = None;
    for _ in 0..100 {
        held = redis::cmd("GET")
            .arg(&key)
            .query_async::<Option<String>>(&mut direct)
            .await
            .unwrap();
        if held.is_some() {
            break;
        }
        sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(held.as_deref(), Some("tok"), "the claim never landed");
    // The connection still lines up: the next command gets its own reply.
    let pong: String = redis::cmd("PING").query_async(&mut con).await.unwrap();
    assert_eq!(pong, "PONG");
}

/// One instance of `breaker_ms` behind a proxy that hangs, then a burst of
/// five on key 0 (each answered, every task ended), and the same burst
/// simulated with Redis hung for the whole run.
struct HungBurst {
    redis: TestRedis,
    proxy: FaultProxy,
    origin: Scripted,
    d: Instance<Scripted>,
    got: Vec<Answer>,
    sim: stampede::metrics::Report,
}

async fn hung_burst(breaker_ms: u32) -> HungBurst {
    let redis = TestRedis::start().await;
    let proxy = FaultProxy::in_front_of(&redis.url).await.unwrap();
    let s = Scenario {
        instances: 1,
        threads: 5,
        redis_timeout_ms: 100,
        redis_breaker_ms: breaker_ms,
        deadline_ms: 3000,
        ..Scenario::default()
    };
    let origin = Scripted::new(vec![]);
    let d = instance(&proxy.url(), &s, &origin).await;
    proxy.set_hang(true);
    let got = burst(&d, 5, 0).await;
    settled(&d).await;
    let sim = Fleet::new(&hung(&s), 1).run();
    HungBurst {
        redis,
        proxy,
        origin,
        d,
        got,
        sim,
    }
}

/// A hung Redis holds every command to the client's timeout: each one
/// counts as a Redis error, and none of them runs while it lasts. Failing
/// open, the callers still get the refreshed value. When the hang ends
/// Redis runs what was sent, in order, as the simulation's Redis does: the
/// claim the client gave up on lands and the release by its token sent
/// right after it clears it (no lock is left), the fail-open write is
/// stored, and the same connection serves it as a hit.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hung_redis_holds_commands_to_the_client_timeout_and_runs_them_at_resume() {
    let HungBurst {
        redis,
        proxy,
        origin,
        d,
        got,
        sim,
    } = hung_burst(0).await;
    for a in &got {
        assert_eq!(
            a.value.as_deref().map(Vec::as_slice),
            Some(&b"v0"[..]),
            "{a:?}"
        );
    }
    assert_eq!(origin.calls(), 1, "one flight, failing open");
    let c = d.counters();
    // Five GETs, the claim, the re-check and the write (a claim that failed
    // open holds nothing to release): all held to their timeout, none
    // refused at once, none skipped; as the simulation counts them. The
    // claim's release by token is not counted as an error.
    assert_eq!(count(&c.claim_attempts), 1);
    assert_eq!(count(&c.redis_errors), 8, "{c:?}");
    assert_eq!(sim.redis_errors, 8);
    assert_eq!(count(&c.redis_skipped), 0);
    assert_eq!(count(&c.ambiguous_claims), 1, "{c:?}");
    assert_eq!(sim.unclaims, 1);
    assert!(proxy.held() > 0);
    assert!(
        !exists(&redis.url, &value_key("0")).await,
        "the write ran while hung"
    );
    proxy.set_hang(false);
    let mut written = false;
    for _ in 0..100 {
        if exists(&redis.url, &value_key("0")).await {
            written = true;
            break;
        }
        sleep(Duration::from_millis(20)).await;
    }
    assert!(written, "the write never landed after the hang");
    assert!(
        !exists(&redis.url, &lock_key("0")).await,
        "the late claim was not released by its token"
    );
    let a = d.get(0).await;
    assert_eq!(a.ending, Ending::Hit, "{a:?}");
}

/// The same hang with a breaker: after the first timeout the instance sends
/// nothing for the breaker's length, and the claim, re-check, write and
/// release fail at once, unsent (`redis_skipped`), as the simulation counts
/// them for the same burst.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_breaker_skips_redis_after_a_timeout_as_the_simulation_does() {
    let HungBurst {
        origin,
        d,
        got,
        sim,
        ..
    } = hung_burst(10_000).await;
    for a in &got {
        assert!(a.value.is_some(), "{a:?}");
    }
    let c = d.counters();
    assert_eq!(
        (count(&c.redis_errors), count(&c.redis_skipped)),
        (sim.redis_errors, sim.redis_skipped),
        "the five GETs time out, the rest is skipped: {c:?}"
    );
    assert_eq!((sim.redis_errors, sim.redis_skipped), (5, 3));
    assert_eq!(origin.calls(), sim.recomputes);
    // Still open: the next request sends nothing either.
    let before = count(&c.redis_errors);
    let a = d.get(1).await;
    assert_eq!(a.ending, Ending::Computed, "{a:?}");
    assert_eq!(count(&c.redis_errors), before, "nothing was sent");
}

/// A failing origin, retried: each retry is one more origin call without
/// coalescing, so calls are exactly (1 + retries) x requests when every
/// call fails, and the caller's answer is its last attempt's.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn retries_multiply_origin_calls_up_to_one_plus_retries() {
    let redis = TestRedis::start().await;
    let s = Scenario {
        instances: 1,
        threads: 4,
        singleflight: false,
        claim: ClaimMode::Off,
        retries: 2,
        retry_backoff_ms: 5,
        ..Scenario::default()
    };
    let origin = Scripted::new(vec![Call::Fail(5); 12]);
    let d = instance(&redis.url, &s, &origin).await;
    let got = burst(&d, 4, 0).await;
    for a in &got {
        assert_eq!(a.ending, Ending::Error, "{a:?}");
    }
    assert_eq!(origin.calls(), 12, "(1 + 2) x 4");
    assert_eq!(count(&d.counters().retries), 8);

    // Two failures, then the third attempt computes.
    let s = Scenario {
        threads: 1,
        retries: 3,
        ..s
    };
    let origin = Scripted::new(vec![Call::Fail(5), Call::Fail(5)]);
    let d = instance(&redis.url, &s, &origin).await;
    let a = d.get(1).await;
    assert_eq!(a.ending, Ending::Computed, "{a:?}");
    assert_eq!(a.value.as_deref().map(Vec::as_slice), Some(&b"v2"[..]));
    assert_eq!((origin.calls(), count(&d.counters().retries)), (3, 2));
}

/// Each attempt has a deadline of its own, and a retry starts once the
/// failed attempt's work has ended. The first call hangs: the caller
/// times out at 200 ms, the work gives up at the origin timeout (300 ms)
/// and only then is the retry made, which computes within its own
/// deadline (with one budget for both attempts it would have none left).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_retry_gets_a_fresh_deadline_after_the_attempts_work_ends() {
    let redis = TestRedis::start().await;
    let s = Scenario {
        instances: 1,
        threads: 1,
        claim: ClaimMode::Off,
        deadline_ms: 200,
        origin_timeout_ms: 300,
        retries: 1,
        retry_backoff_ms: 0,
        ..Scenario::default()
    };
    let origin = Scripted::new(vec![Call::Hang]);
    let d = instance(&redis.url, &s, &origin).await;
    let a = d.get(0).await;
    assert_eq!(a.ending, Ending::Computed, "{a:?}");
    assert_eq!(a.value.as_deref().map(Vec::as_slice), Some(&b"v1"[..]));
    assert_eq!((origin.calls(), count(&d.counters().retries)), (2, 1));

    // The retry waits for the attempt's work: here that work writes the
    // value (a slow call outliving its caller, within the origin's
    // timeout), so the retry hits it.
    let s = Scenario {
        origin_timeout_ms: 1000,
        ..s
    };
    let origin = Scripted::new(vec![Call::Ok(400)]);
    let d = instance(&redis.url, &s, &origin).await;
    let a = d.get(2).await;
    assert_eq!(a.ending, Ending::Hit, "{a:?}");
    assert_eq!((origin.calls(), count(&d.counters().retries)), (1, 1));
}

fn steady() -> Scenario {
    Scenario {
        instances: 2,
        threads: 4,
        workload: Workload::Steady,
        value_ttl_ms: 200,
        duration_ms: 1500,
        think_ms: 40,
        recompute_ms: 20,
        ..Scenario::default()
    }
}

/// Faults at a moment in the real fleet, on the run's clock: an origin
/// outage window fails the calls inside it and not the others; a Redis
/// hang window (through the proxy) makes Redis errors while it lasts and
/// hits before and after it (a whole-run outage would leave none); a
/// holder fault kills one claim holder.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn faults_at_a_moment_act_in_their_window_only() {
    let redis = TestRedis::start().await;
    let window = |kind, start_ms, duration_ms| Fault {
        kind,
        start_ms,
        duration_ms,
    };
    let s = Scenario {
        faults: vec![window(FaultKind::Origin, 500, Some(500))],
        ..steady()
    };
    let r = fleet::run(&redis.url, &s).await.unwrap();
    assert!(r.origin_failures > 0, "{r:?}");
    assert!(r.origin_failures < r.recomputes, "{r:?}");
    assert_eq!(r.ended(), r.requests);

    let s = Scenario {
        faults: vec![window(FaultKind::Redis, 500, Some(400))],
        redis_outage: RedisOutage::Hang,
        redis_timeout_ms: 50,
        ..steady()
    };
    let r = fleet::run(&redis.url, &s).await.unwrap();
    assert!(r.redis_errors > 0, "{r:?}");
    assert!(r.hits > 0, "{r:?}");
    let whole = fleet::run(
        &redis.url,
        &Scenario {
            faults: vec![window(FaultKind::Redis, 0, None)],
            ..s.clone()
        },
    )
    .await
    .unwrap();
    assert_eq!(whole.hits, 0, "{whole:?}");
    assert!(whole.redis_errors > r.redis_errors, "{whole:?}");

    let s = Scenario {
        faults: vec![window(FaultKind::Holder, 300, None)],
        ..steady()
    };
    let r = fleet::run(&redis.url, &s).await.unwrap();
    assert_eq!(r.crashed, 1, "{r:?}");
    assert_eq!(fleet::run(&redis.url, &steady()).await.unwrap().crashed, 0);
}

fn with_pitfall(name: &str) -> Scenario {
    let mut s = Scenario::default();
    s.pitfalls.enable(name).unwrap();
    s
}

/// What the real fleet cannot run is refused, naming the knob.
#[tokio::test]
async fn what_the_real_fleet_cannot_run_is_refused_by_name() {
    for (s, knob) in [
        (
            Scenario {
                redis_ops_per_ms: 10,
                ..Scenario::default()
            },
            "redis_ops_per_ms",
        ),
        (with_pitfall("plain-del"), "plain-del"),
        (with_pitfall("no-expiry"), "no-expiry"),
    ] {
        let err = fleet::run("redis://127.0.0.1:1/", &s).await.unwrap_err();
        assert!(err.contains(knob), "{knob}: {err}");
        assert!(fleet::unsupported(&s).is_some());
    }
    let s = Scenario {
        faults: vec![Fault {
            kind: FaultKind::Redis,
            start_ms: 100,
            duration_ms: Some(100),
        }],
        ..Scenario::default()
    };
    let err = fleet::run(Target::cluster("redis://127.0.0.1:1/"), &s)
        .await
        .unwrap_err();
    assert!(err.contains("cannot be injected into a cluster"), "{err}");
    for name in ["redis-hang", "retry-storm", "cold-skew", "open-loop"] {
        let p = stampede::scenario::preset(name).unwrap();
        assert_eq!(fleet::unsupported(&p), None, "{name}");
    }
    let hot_key = stampede::scenario::preset("hot-key").unwrap();
    let why = fleet::unsupported(&hot_key).unwrap_or_default();
    assert!(why.contains("redis_ops_per_ms"), "{why}");
}

/// The local copy (`local_cache_ms`): a fresh value a GET returned answers
/// the instance's next reads with no round trip, whatever Redis holds
/// meanwhile, until it ages out; then Redis is read again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_local_copy_answers_without_redis_until_it_ages_out() {
    let redis = TestRedis::start().await;
    let s = Scenario {
        instances: 1,
        threads: 1,
        local_cache_ms: 300,
        ..Scenario::default()
    };
    let origin = Scripted::new(vec![]);
    let d = instance(&redis.url, &s, &origin).await;
    assert_eq!(d.get(0).await.ending, Ending::Computed);
    settled(&d).await;
    // The GET that fills the copy reads Redis.
    assert_eq!(d.get(0).await.ending, Ending::Hit);
    assert_eq!(count(&d.counters().local_hits), 0);
    // Gone from Redis: the copy still answers, with the value it holds.
    let client = redis::Client::open(redis.url.as_str()).unwrap();
    let mut con = client.get_multiplexed_async_connection().await.unwrap();
    let _: i64 = redis::cmd("DEL")
        .arg(value_key("0"))
        .query_async(&mut con)
        .await
        .unwrap();
    let a = d.get(0).await;
    assert_eq!(a.ending, Ending::Hit, "{a:?}");
    assert_eq!(a.value.as_deref().map(Vec::as_slice), Some(&b"v0"[..]));
    assert_eq!(count(&d.counters().local_hits), 1);
    // Aged out: Redis is read again, finds nothing, and the key is
    // computed anew.
    sleep(Duration::from_millis(400)).await;
    let a = d.get(0).await;
    assert_eq!(a.ending, Ending::Computed, "{a:?}");
    assert_eq!((origin.calls(), count(&d.counters().local_hits)), (2, 1));
}

/// Open-loop arrivals in the real fleet: while the origin hangs, each
/// request that found a thread holds it (its recompute outlives its
/// caller), the pools fill, the accept queues back up into timeouts and
/// then turn requests away; every request ends exactly once or is turned
/// away. The same traffic closed-loop turns nobody away.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn open_loop_arrivals_back_up_and_are_turned_away() {
    let redis = TestRedis::start().await;
    let s = Scenario {
        claim: ClaimMode::Off,
        singleflight: false,
        arrivals: Arrivals::Open,
        rate_per_s: 400,
        deadline_ms: 200,
        origin_timeout_ms: 600,
        faults: vec![Fault {
            kind: FaultKind::OriginHang,
            start_ms: 300,
            duration_ms: Some(600),
        }],
        ..steady()
    };
    let r = fleet::run(&redis.url, &s).await.unwrap();
    assert!(r.rejected > 0, "{r:?}");
    assert!(r.timeouts > 0, "{r:?}");
    assert_eq!(r.ended() + r.rejected, r.requests, "{r:?}");
    let closed = fleet::run(
        &redis.url,
        &Scenario {
            arrivals: Arrivals::Closed,
            ..s
        },
    )
    .await
    .unwrap();
    assert_eq!(closed.rejected, 0, "{closed:?}");
}

/// A `ttl-sync` fault, as a deploy's warm-up does it: every key holding a
/// value is made fresh for the same TTL from one instant (whatever its
/// jittered expiry was), a key with no value is left alone; and in the real
/// fleet the keys then expire together, so the origin sees them recomputed
/// at once where jittered TTLs had spread them.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_ttl_sync_rewarms_every_key_to_one_expiry() {
    let redis = TestRedis::start().await;
    let mut con = Target::from(redis.url.as_str()).connect().await.unwrap();
    for k in 0..5u32 {
        let _: i64 = redis::cmd("DEL")
            .arg(value_key(&k.to_string()))
            .query_async(&mut con)
            .await
            .unwrap();
    }
    // Keys 0..4 hold values with spread expiries; key 4 holds nothing.
    for k in 0..4u32 {
        let fresh = Duration::from_millis(1000 + 700 * u64::from(k));
        stampede_fleet::seed::seed_value(&mut con, k, b"v", fresh, Duration::from_millis(50), 0)
            .await
            .unwrap();
    }
    let warmed = stampede_fleet::seed::sync_ttls(
        &mut con,
        5,
        Duration::from_millis(3000),
        Duration::from_millis(500),
    )
    .await
    .unwrap();
    assert_eq!(warmed, 4);
    let mut rows = Vec::new();
    for k in 0..5u32 {
        let row: Option<Vec<u8>> = redis::cmd("GET")
            .arg(value_key(&k.to_string()))
            .query_async(&mut con)
            .await
            .unwrap();
        let header = row.map(|row| Header::parse(&row).expect("a row in the layout").0);
        rows.push((header.map(|h| h.fresh_until), header.map(|h| h.stale_until)));
    }
    assert_eq!(rows[4], (None, None), "a key with no value stays absent");
    let (fresh, stale) = (rows[0].0.unwrap(), rows[0].1.unwrap());
    assert_eq!(stale, fresh + 500);
    for (k, row) in rows.iter().enumerate().take(4) {
        assert_eq!(
            *row,
            (Some(fresh), Some(stale)),
            "key {k}: one expiry for all"
        );
    }
    let ttl: i64 = redis::cmd("PTTL")
        .arg(value_key("2"))
        .query_async(&mut con)
        .await
        .unwrap();
    assert!(
        ttl > 3000 && ttl <= 3500,
        "the row is kept to its stale end: {ttl}"
    );

    // The fleet: 100 keys, TTLs jittered by half, a deploy re-warms at
    // 300 ms. The simulation of this shape peaks at 16 concurrent
    // recomputes without the deploy and 50 with it (stampede-sim --fault
    // ttl-sync@300); the real fleet must show the rise, by half at least.
    let s = Scenario {
        instances: 2,
        threads: 50,
        keys: 100,
        workload: Workload::Steady,
        jitter: 0.5,
        value_ttl_ms: 1000,
        duration_ms: 2000,
        think_ms: 40,
        recompute_ms: 100,
        origin_capacity: 1000,
        ..Scenario::default()
    };
    let synced = Scenario {
        faults: vec![Fault {
            kind: FaultKind::TtlSync,
            start_ms: 300,
            duration_ms: None,
        }],
        ..s.clone()
    };
    let quiet = fleet::run(&redis.url, &s).await.unwrap();
    let hit = fleet::run(&redis.url, &synced).await.unwrap();
    assert_eq!(hit.ended(), hit.requests, "{hit:?}");
    assert!(
        2 * hit.origin_peak_concurrency >= 3 * quiet.origin_peak_concurrency,
        "the keys expire together: peak {} -> {}",
        quiet.origin_peak_concurrency,
        hit.origin_peak_concurrency
    );
}
