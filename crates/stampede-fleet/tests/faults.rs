//! Real faults against the test's own redis-server: Redis killed in the
//! middle of a run and coming back on the same port, a claim holder that
//! crashes, a slow Redis (a delaying proxy, and the server itself paused),
//! and bad input. The bounds on time are correctness bounds (nobody waits
//! past the deadline), with generous slack for a shared 2-core machine;
//! none is a performance claim.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use stampede::metrics::Ending;
use stampede::scenario::{LoserPolicy, RedisErrorPolicy, Scenario};
use stampede_fleet::proxy::FaultProxy;
use stampede_fleet::{connect_in, Answer, Driver, Instance, Origin, OriginFuture};
use stampede_redis::{ClaimStore, Release, Target, MAX_KEY_BYTES};
use stampede_testkit::TestRedis;
use tokio::time::{sleep, Instant};

/// Slack on top of a deadline for scheduling on a busy machine: a request
/// that took longer than deadline + SLACK waited past its deadline.
const SLACK: Duration = Duration::from_millis(400);

#[derive(Clone)]
struct Slow {
    latency: Duration,
    calls: Arc<AtomicU64>,
}

impl Slow {
    fn new(ms: u64) -> Slow {
        Slow {
            latency: Duration::from_millis(ms),
            calls: Arc::new(AtomicU64::new(0)),
        }
    }
    fn calls(&self) -> u64 {
        self.calls.load(Ordering::SeqCst)
    }
}

impl Origin for Slow {
    fn compute(&self, key: u32) -> OriginFuture {
        let (latency, calls) = (self.latency, self.calls.clone());
        Box::pin(async move {
            calls.fetch_add(1, Ordering::SeqCst);
            tokio::time::sleep(latency).await;
            Ok(format!("value of {key}").into_bytes())
        })
    }
}

async fn fleet(target: &str, s: &Scenario, origin: &Slow) -> Vec<Instance<Slow>> {
    let crashed = Arc::new(AtomicBool::new(false));
    let mut out = Vec::new();
    for _ in 0..s.instances {
        out.push(
            connect_in(target, s, origin.clone(), crashed.clone())
                .await
                .unwrap(),
        );
    }
    out
}

/// Every thread of every instance asks for `key` at once; each answer with
/// how long it took.
fn burst(
    drivers: &[Instance<Slow>],
    threads: u32,
    key: u32,
) -> Vec<tokio::task::JoinHandle<(Answer, Duration)>> {
    let mut calls = Vec::new();
    for d in drivers {
        for _ in 0..threads {
            let d = d.clone();
            calls.push(tokio::spawn(async move {
                let t = Instant::now();
                let a = d.get(key).await;
                (a, t.elapsed())
            }));
        }
    }
    calls
}

async fn answers(
    calls: Vec<tokio::task::JoinHandle<(Answer, Duration)>>,
) -> Vec<(Answer, Duration)> {
    let mut out = Vec::new();
    for c in calls {
        out.push(c.await.unwrap());
    }
    out
}

fn redis_errors(drivers: &[Instance<Slow>]) -> u64 {
    drivers
        .iter()
        .map(|d| d.counters().redis_errors.load(Ordering::SeqCst))
        .sum()
}

fn has_value(a: &Answer) -> bool {
    a.value.as_deref().map(Vec::as_slice) == Some(b"value of 0".as_slice())
}

/// Redis dies while the fleet's recompute is under way (the claim won,
/// the origin running, the other instances polling for the value). Failing
/// open, the refresh goes on: the winner's instance gets the value, and a
/// request that starts during the outage computes instead of waiting for a
/// claim it cannot take. The losers that were already polling when Redis
/// died can no longer see the value; their failed polls follow the error
/// policy as a failed claim does (issue 27): open, each losing instance
/// computes for itself (once: its requests share its flight) and answers.
/// Nobody waits past the deadline.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn redis_killed_mid_run_failing_open_the_refresh_goes_on() {
    let mut redis = TestRedis::start().await;
    let s = Scenario {
        instances: 3,
        threads: 10,
        deadline_ms: 1500,
        ..Scenario::default()
    };
    let origin = Slow::new(400);
    let drivers = fleet(&redis.url, &s, &origin).await;
    let calls = burst(&drivers, s.threads, 0);
    // The claim is won and the origin is running: now Redis goes away.
    sleep(Duration::from_millis(150)).await;
    assert_eq!(origin.calls(), 1, "the recompute had started, once");
    redis.kill();
    let got = answers(calls).await;
    let deadline = Duration::from_millis(u64::from(s.deadline_ms));
    for (a, took) in &got {
        assert!(*took <= deadline + SLACK, "waited {took:?}: {a:?}");
        assert!(has_value(a) || a.ending == Ending::Timeout, "{a:?}");
    }
    let with = got.iter().filter(|(a, _)| has_value(a)).count();
    assert_eq!(
        with,
        (s.instances * s.threads) as usize,
        "every instance answers"
    );
    assert_eq!(
        origin.calls(),
        u64::from(s.instances),
        "the recompute was not cut short or repeated; each losing instance computed once, open"
    );
    assert!(redis_errors(&drivers) > 0, "the outage was seen");
    // A request during the outage, once the burst's tasks have all ended
    // (a loser's flight ends just after its caller's deadline): failing
    // open, it refreshes by itself.
    while drivers
        .iter()
        .any(|d| d.counters().running.load(Ordering::SeqCst) > 0)
    {
        sleep(Duration::from_millis(10)).await;
    }
    let t = Instant::now();
    let a = drivers[2].get(0).await;
    assert!(has_value(&a), "{a:?}");
    assert_eq!(a.ending, Ending::Computed);
    assert!(t.elapsed() <= deadline + SLACK, "{:?}", t.elapsed());
}

/// The same outage failing closed: nobody may refresh without the claim,
/// so the callers that were not already sharing the winner's flight end
/// with a timeout or an error (and the error is counted), never a hang.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn redis_killed_mid_run_failing_closed_nothing_hangs() {
    let mut redis = TestRedis::start().await;
    let s = Scenario {
        instances: 3,
        threads: 10,
        deadline_ms: 1000,
        redis_error: RedisErrorPolicy::Closed,
        loser: LoserPolicy::Wait,
        ..Scenario::default()
    };
    let origin = Slow::new(300);
    let drivers = fleet(&redis.url, &s, &origin).await;
    let calls = burst(&drivers, s.threads, 0);
    sleep(Duration::from_millis(100)).await;
    redis.kill();
    let got = answers(calls).await;
    let deadline = Duration::from_millis(u64::from(s.deadline_ms));
    for (a, took) in &got {
        assert!(*took <= deadline + SLACK, "waited {took:?}: {a:?}");
        assert!(
            has_value(a) || matches!(a.ending, Ending::Timeout | Ending::Error | Ending::Degraded),
            "{a:?}"
        );
    }
    // The other two instances could not claim: their callers got no value.
    let without = got.iter().filter(|(a, _)| !has_value(a)).count();
    assert!(
        without >= 2 * s.threads as usize,
        "{without} without a value"
    );
    assert_eq!(origin.calls(), 1, "nobody refreshed without the claim");
    assert!(redis_errors(&drivers) > 0);
    // A request made while Redis is down is answered by its deadline too.
    let t = Instant::now();
    let a = drivers[0].get(1).await;
    assert!(
        t.elapsed() <= deadline + SLACK,
        "{a:?} after {:?}",
        t.elapsed()
    );
    assert_ne!(
        a.ending,
        Ending::Computed,
        "fail-closed never computes without a claim"
    );
}

/// Redis comes back on the same port (empty, as after a restart without
/// persistence): the connection managers reconnect by themselves, values
/// are written and read again, claims work again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn redis_coming_back_is_reconnected() {
    let mut redis = TestRedis::start().await;
    let s = Scenario {
        instances: 1,
        threads: 1,
        ..Scenario::default()
    };
    let origin = Slow::new(20);
    let d = &fleet(&redis.url, &s, &origin).await[0];
    let store = ClaimStore::connect(&redis.url).await.unwrap();
    assert_eq!(d.get(0).await.ending, Ending::Computed);
    assert_eq!(d.get(0).await.ending, Ending::Hit);
    redis.kill();
    // Down: failing open, the caller still gets a value, computed.
    let a = d.get(0).await;
    assert_eq!(a.ending, Ending::Computed, "{a:?}");
    assert!(store.claim("k", Duration::from_secs(5)).await.is_err());
    let errors_down = d.counters().redis_errors.load(Ordering::SeqCst);
    assert!(errors_down > 0);
    redis.restart().await;
    // Back: within a few seconds the same driver hits a value it wrote
    // after the restart (a write and a read on a new connection).
    let mut hit = false;
    for _ in 0..50 {
        if d.get(0).await.ending == Ending::Hit {
            hit = true;
            break;
        }
        sleep(Duration::from_millis(100)).await;
    }
    assert!(hit, "the driver never reconnected");
    let mut claimed = None;
    for _ in 0..50 {
        if let Ok(c) = store.claim("k", Duration::from_secs(5)).await {
            claimed = Some(c);
            break;
        }
        sleep(Duration::from_millis(100)).await;
    }
    assert!(
        matches!(claimed, Some(Some(_))),
        "the claim store never reconnected (or the restarted Redis kept a claim): {claimed:?}"
    );
}

/// The `holder_crash` fault in the driver: the first claim winner dies
/// right after winning and never releases. Another instance's next claim
/// succeeds once the claim's TTL has passed, and not before.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_crashed_holder_blocks_the_fleet_for_its_ttl_and_not_after() {
    let redis = TestRedis::start().await;
    let ttl = Duration::from_millis(1000);
    let s = Scenario {
        instances: 2,
        threads: 1,
        holder_crash: true,
        claim_ttl_ms: 1000,
        deadline_ms: 5000,
        loser: LoserPolicy::Wait,
        poll_ms: 20,
        ..Scenario::default()
    };
    let origin = Slow::new(100);
    let drivers = fleet(&redis.url, &s, &origin).await;
    let claimed_at = Instant::now();
    let crashed = drivers[0].get(0).await;
    assert_eq!(
        crashed.ending,
        Ending::Error,
        "the holder crashed: {crashed:?}"
    );
    assert_eq!(drivers[0].counters().crashed.load(Ordering::SeqCst), 1);
    assert_eq!(origin.calls(), 0, "it died before computing");
    let next = drivers[1].get(0).await;
    let after = claimed_at.elapsed();
    assert_eq!(next.ending, Ending::Computed, "{next:?}");
    assert!(
        after >= ttl,
        "claimed again {after:?} after the crash: before the TTL"
    );
    assert!(
        after <= ttl + Duration::from_millis(100) + SLACK + SLACK,
        "claimed again only {after:?} after the crash"
    );
    assert_eq!(origin.calls(), 1);
    assert_eq!(drivers[1].counters().claim_wins.load(Ordering::SeqCst), 1);
    // Only one crash, fleet-wide: the next winner releases normally.
    assert_eq!(drivers[1].counters().crashed.load(Ordering::SeqCst), 0);
}

/// A slow connection: every chunk of bytes either way waits 300 ms in a
/// proxy, three times the driver's bound on a Redis command. Failing open,
/// every caller still gets a value by its deadline; when the delay goes,
/// the same connections serve hits again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_slow_redis_pushes_no_request_past_its_deadline() {
    let redis = TestRedis::start().await;
    let proxy = FaultProxy::in_front_of(&redis.url).await.unwrap();
    let s = Scenario {
        instances: 2,
        threads: 10,
        deadline_ms: 800,
        ..Scenario::default()
    };
    let origin = Slow::new(100);
    let drivers = fleet(&proxy.url(), &s, &origin).await;
    proxy.set_delay(Duration::from_millis(300));
    let deadline = Duration::from_millis(u64::from(s.deadline_ms));
    for (a, took) in answers(burst(&drivers, s.threads, 0)).await {
        assert!(took <= deadline + SLACK, "waited {took:?}: {a:?}");
        assert!(has_value(&a), "{a:?}");
    }
    assert!(
        redis_errors(&drivers) > 0,
        "the slow commands counted as errors"
    );
    proxy.set_delay(Duration::ZERO);
    let mut hit = false;
    for _ in 0..50 {
        if drivers[0].get(0).await.ending == Ending::Hit {
            hit = true;
            break;
        }
        sleep(Duration::from_millis(100)).await;
    }
    assert!(hit, "no hit once the delay was gone");
}

/// The server itself stalls (`CLIENT PAUSE ... ALL`, as a blocked event
/// loop would): no request waits past its deadline.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_paused_redis_pushes_no_request_past_its_deadline() {
    let redis = TestRedis::start().await;
    let s = Scenario {
        instances: 2,
        threads: 10,
        deadline_ms: 600,
        ..Scenario::default()
    };
    let origin = Slow::new(100);
    let drivers = fleet(&redis.url, &s, &origin).await;
    let client = redis::Client::open(redis.url.as_str()).unwrap();
    let mut admin = client.get_multiplexed_async_connection().await.unwrap();
    let _: String = redis::cmd("CLIENT")
        .arg("PAUSE")
        .arg(1500)
        .arg("ALL")
        .query_async(&mut admin)
        .await
        .unwrap();
    let deadline = Duration::from_millis(u64::from(s.deadline_ms));
    for (a, took) in answers(burst(&drivers, s.threads, 0)).await {
        assert!(took <= deadline + SLACK, "waited {took:?}: {a:?}");
    }
    assert!(redis_errors(&drivers) > 0);
}

/// Bad input is an error in words, never a panic or a hang.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_input_is_a_clear_error() {
    let s = Scenario::default();
    // A URL that is not one, a refused port, an address nobody answers at.
    let t = Instant::now();
    for url in [
        "not a url",
        "redis://127.0.0.1:1/",
        "redis://10.255.255.1:6379/",
    ] {
        let err = ClaimStore::connect(url).await.err().expect(url);
        assert!(!err.to_string().is_empty(), "{url}");
        assert!(
            Driver::connect(url, &s, Slow::new(1)).await.is_err(),
            "{url}"
        );
    }
    let err = ClaimStore::connect(Target::Cluster(vec![]))
        .await
        .err()
        .unwrap();
    assert!(err.to_string().contains("at least one node"), "{err}");
    assert!(ClaimStore::connect(Target::cluster("redis://127.0.0.1:1/"))
        .await
        .is_err());
    // Bounded: the connect timeout and the retries, not a TCP default.
    assert!(t.elapsed() < Duration::from_secs(30), "{:?}", t.elapsed());

    let redis = TestRedis::start().await;
    let store = ClaimStore::connect(&redis.url).await.unwrap();
    let long = "k".repeat(MAX_KEY_BYTES + 1);
    let ttl = Duration::from_secs(1);
    let err = store.claim(&long, ttl).await.unwrap_err();
    assert!(err.to_string().contains("1025 bytes"), "{err}");
    assert!(store.claim_fenced(&long, ttl).await.is_err());
    assert!(store.write_fenced(&long, b"v", 1, ttl).await.is_err());
    assert!(store
        .release(&long, &stampede_redis::Token::new())
        .await
        .is_err());
    assert!(store
        .claim("", ttl)
        .await
        .unwrap_err()
        .to_string()
        .contains("empty"));
    for zero in [Duration::ZERO, Duration::from_micros(500)] {
        let err = store.claim("k", zero).await.unwrap_err();
        assert!(err.to_string().contains("at least 1 ms"), "{err}");
        assert!(store.claim_fenced("k", zero).await.is_err());
        assert!(store.write_fenced("k", b"v", 1, zero).await.is_err());
    }
    // Nothing was sent: the key is free, and a key at the limit works.
    assert_eq!(store.holder("k").await.unwrap(), None);
    let edge = "k".repeat(MAX_KEY_BYTES);
    assert!(store.claim(&edge, ttl).await.unwrap().is_some());
}

/// An origin whose n-th call takes `latencies[n]` and answers "v{n}".
#[derive(Clone)]
struct Scripted {
    latencies: Arc<Vec<Duration>>,
    calls: Arc<AtomicU64>,
}

impl Origin for Scripted {
    fn compute(&self, _key: u32) -> OriginFuture {
        let n = self.calls.fetch_add(1, Ordering::SeqCst) as usize;
        let latency = self.latencies.get(n).copied().unwrap_or_default();
        Box::pin(async move {
            tokio::time::sleep(latency).await;
            Ok(format!("v{n}").into_bytes())
        })
    }
}

/// The late writer through the driver: instance A wins the claim and
/// computes slowly; its 100 ms claim expires under it; instance B claims,
/// computes fast and writes. A's older value lands last. With fenced
/// writes it is refused and B's value stays; without, it overwrites B's
/// (the damage the fence exists for).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_late_writer_cannot_overwrite_a_newer_value_through_the_driver() {
    let redis = TestRedis::start().await;
    for fenced in [true, false] {
        let s = Scenario {
            instances: 2,
            threads: 1,
            claim_ttl_ms: 100,
            fenced_writes: fenced,
            deadline_ms: 3000,
            origin_timeout_ms: 3000,
            ..Scenario::default()
        };
        let origin = Scripted {
            latencies: Arc::new(vec![Duration::from_millis(800), Duration::from_millis(50)]),
            calls: Arc::new(AtomicU64::new(0)),
        };
        let key = u32::from(fenced) + 10;
        let crashed = Arc::new(AtomicBool::new(false));
        let a = connect_in(&redis.url, &s, origin.clone(), crashed.clone())
            .await
            .unwrap();
        let b = connect_in(&redis.url, &s, origin.clone(), crashed)
            .await
            .unwrap();
        let slow = {
            let a = a.clone();
            tokio::spawn(async move { a.get(key).await })
        };
        // A's claim (100 ms) has expired; B finds no value and no claim.
        sleep(Duration::from_millis(300)).await;
        let fast = b.get(key).await;
        assert_eq!(
            fast.value.as_deref().map(Vec::as_slice),
            Some(b"v1".as_slice())
        );
        // A's write lands without the fence; with it, it is refused as
        // older, and A's caller gets the newer value, read back.
        let late = slow.await.unwrap();
        assert_eq!(
            late.value.as_deref().map(Vec::as_slice),
            Some(if fenced { b"v1" } else { b"v0" }.as_slice())
        );
        // Let A's write land (it follows A's answer).
        while a.counters().running.load(Ordering::SeqCst) > 0 {
            sleep(Duration::from_millis(10)).await;
        }
        let now = b.get(key).await;
        assert_eq!(now.ending, Ending::Hit);
        let refused = a.counters().writes_refused.load(Ordering::SeqCst);
        if fenced {
            assert_eq!(refused, 1, "A's write was refused");
            assert_eq!(
                now.value.as_deref().map(Vec::as_slice),
                Some(b"v1".as_slice())
            );
        } else {
            assert_eq!(refused, 0);
            assert_eq!(
                now.value.as_deref().map(Vec::as_slice),
                Some(b"v0".as_slice()),
                "without the fence the older value overwrites the newer"
            );
        }
    }
}

/// Callers that all reach their deadline at the same moment while the
/// claim is held elsewhere: the leader abandons its flight to the oldest
/// follower just as that follower leaves too. The promotion must not be
/// lost: once every task has ended no flight may remain open (a stranded
/// flight makes every later caller of the key wait on it until its
/// deadline), and a caller after the claim is freed computes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_flight_is_stranded_when_its_callers_leave_together() {
    let redis = TestRedis::start().await;
    let store = ClaimStore::connect(&redis.url).await.unwrap();
    let outsider = store
        .claim("7", Duration::from_secs(60))
        .await
        .unwrap()
        .unwrap();
    let s = Scenario {
        instances: 1,
        threads: 20,
        deadline_ms: 150,
        loser: LoserPolicy::Wait,
        poll_ms: 20,
        ..Scenario::default()
    };
    let origin = Slow::new(10);
    let drivers = fleet(&redis.url, &s, &origin).await;
    let d = &drivers[0];
    for round in 0..15 {
        for (a, _) in answers(burst(&drivers, s.threads, 7)).await {
            assert_eq!(a.ending, Ending::Timeout, "round {round}: {a:?}");
        }
        while d.counters().running.load(Ordering::SeqCst) > 0 {
            sleep(Duration::from_millis(5)).await;
        }
        assert_eq!(d.in_flight(), 0, "round {round}: a flight was stranded");
    }
    assert_eq!(
        store.release("7", &outsider).await.unwrap(),
        Release::Released
    );
    let a = d.get(7).await;
    assert_eq!(a.ending, Ending::Computed, "{a:?}");
}
