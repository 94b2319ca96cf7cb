//! A paused Redis under steady traffic (issue 27, section 1): the server is
//! `SIGSTOP`ped for a while and then resumed, under steady traffic on
//! several `Cache` instances. Every command sent during the pause times out
//! on its client, yet the server still runs it when it resumes: a claim
//! whose client gave up may land. The requests that sent one release it by
//! its token, so once Redis is back no claim is left behind, and no request
//! that starts after it is back fails; those in flight when it resumes end
//! by their deadline.
//!
//! The numbers (requests, failures, failures after the resume, claims left)
//! are printed: `cargo test -p stampede-redis --test pause -- --nocapture`.

mod common;

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use common::{settled, LagProbe, Rows, TestRedis};
use stampede_redis::cache::{Cache, CacheError, Fetched, RedisErrorPolicy, Source};
use tokio::time::{sleep, Instant};

const INSTANCES: usize = 4;
const KEYS: u64 = 20;
/// 200 requests a second over the fleet.
const EVERY: Duration = Duration::from_millis(5);
const DEADLINE: Duration = Duration::from_secs(1);

static SERIAL: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

/// One request: when it started and ended, and how it ended.
struct Done {
    start: Instant,
    end: Instant,
    error: Option<CacheError>,
}

async fn instance(url: &str, calls: Arc<AtomicU64>, breaker: Duration) -> Cache<String> {
    // With the breaker, a longer origin call: about three holders are
    // computing when Redis pauses, whose writes time out and open their
    // breakers (the case the breaker's test is about).
    let origin_takes = Duration::from_millis(if breaker.is_zero() { 20 } else { 100 });
    let builder = Cache::builder().redis(url);
    let builder = if breaker.is_zero() {
        builder
    } else {
        // With the breaker, a claim stranded by it would outlive every
        // check (the default claim TTL, 3.2 s, could end before the
        // check and hide it).
        builder
            .redis_breaker(breaker)
            .claim_ttl(Duration::from_secs(60))
    };
    builder
        // Short-lived values: every key is recomputed (and claimed) a few
        // times a second, so claims are sent during the pause.
        .ttl(Duration::from_millis(300))
        .deadline(DEADLINE)
        .origin(move |key: String| {
            let calls = calls.clone();
            async move {
                let n = calls.fetch_add(1, Ordering::SeqCst);
                sleep(origin_takes).await;
                Ok::<_, String>(format!("{key}#{n}"))
            }
        })
        .build()
        .await
        .expect("a cache")
}

/// The claims held in Redis right now.
async fn claims(redis: &TestRedis) -> Vec<String> {
    redis::cmd("KEYS")
        .arg("lock:*")
        .query_async(&mut redis.connection().await)
        .await
        .unwrap()
}

/// Steady traffic for 1 s, Redis paused for `pause`, then 2 s more; the
/// numbers, checked. `breaker`: each instance's Redis breaker (zero: none).
async fn steady_traffic_through_a_pause(pause: Duration, breaker: Duration) {
    // One paused Redis at a time: the two tests share 2 cores.
    let _one_at_a_time = SERIAL.lock().await;
    let redis = TestRedis::start().await;
    let calls = Arc::new(AtomicU64::new(0));
    let mut fleet = Vec::new();
    for _ in 0..INSTANCES {
        fleet.push(instance(&redis.url, calls.clone(), breaker).await);
    }
    let done: Arc<Mutex<Vec<Done>>> = Arc::default();
    let lag = LagProbe::start();
    let begin = Instant::now();
    let traffic = {
        let fleet = fleet.clone();
        let done = done.clone();
        let end = begin + Duration::from_secs(3) + pause;
        tokio::spawn(async move {
            let mut tick = tokio::time::interval(EVERY);
            let mut tasks = Vec::new();
            let mut i = 0u64;
            while Instant::now() < end {
                tick.tick().await;
                let cache = fleet[(i % INSTANCES as u64) as usize].clone();
                let key = format!("item:{}", (i * 7) % KEYS);
                let done = done.clone();
                tasks.push(tokio::spawn(async move {
                    let start = Instant::now();
                    let got = cache.get(key).await;
                    let end = Instant::now();
                    done.lock().unwrap().push(Done {
                        start,
                        end,
                        error: got.err(),
                    });
                }));
                i += 1;
            }
            for t in tasks {
                t.await.unwrap();
            }
        })
    };
    sleep(Duration::from_secs(1)).await;
    let paused = redis.pause();
    sleep(pause).await;
    paused.resume();
    let resumed = Instant::now();
    traffic.await.unwrap();
    let worst_lag = lag.finish().await;
    // Every request's work (writes, settles, releases) has ended.
    let drained = Instant::now() + Duration::from_secs(5);
    while fleet.iter().any(|c| c.running() > 0) {
        assert!(Instant::now() < drained, "requests still running");
        sleep(Duration::from_millis(10)).await;
    }
    let left = claims(&redis).await;
    let done = done.lock().unwrap();
    let failed = done.iter().filter(|d| d.error.is_some()).count();
    let after: Vec<&Done> = done
        .iter()
        .filter(|d| d.start >= resumed && d.error.is_some())
        .collect();
    let in_flight_failed = done
        .iter()
        .filter(|d| d.start < resumed && d.end > resumed && d.error.is_some())
        .count();
    eprintln!(
        "pause {} ms, breaker {} ms: {} requests, {} failed, {} of them in flight at the resume, \
         {} failed after the resume, {} claims left: {left:?}",
        pause.as_millis(),
        breaker.as_millis(),
        done.len(),
        failed,
        in_flight_failed,
        after.len(),
        left.len(),
    );
    // Nobody waits past its deadline, paused Redis or not: past it by the
    // scheduling of 2 shared cores (250 ms), or, when this runtime's
    // timers fired later than that meanwhile (a loaded machine runs a
    // deadline's wake-up late; a probe measured how late), by that and
    // 100 ms. A request held to the pause's end would be seconds over.
    let bound = DEADLINE + (worst_lag + Duration::from_millis(100)).max(Duration::from_millis(250));
    for d in done.iter() {
        assert!(
            d.end - d.start <= bound,
            "a request took {:?} ({:?}); timers ran up to {worst_lag:?} late",
            d.end - d.start,
            d.error
        );
    }
    assert!(
        left.is_empty(),
        "claims left behind once Redis resumed: {left:?}"
    );
    assert!(
        after.is_empty(),
        "{} requests started after the resume failed, the first {:?}",
        after.len(),
        after.first().map(|d| &d.error)
    );
    for c in &fleet {
        assert_eq!(c.in_flight(), 0);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_one_second_pause_leaves_no_claim_and_no_failure_after_it() {
    steady_traffic_through_a_pause(Duration::from_secs(1), Duration::ZERO).await;
}

/// Issue 37, defect 1, as it was met: steady traffic over several
/// instances with the breaker on, Redis paused for 1 s. A holder's write
/// that times out opens its breaker; its release must go out all the
/// same, or its claim stays for the claim's TTL and the requests on that
/// key wait on it to their deadline.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_one_second_pause_with_the_breaker_on_leaves_no_claim_and_no_failure_after_it() {
    steady_traffic_through_a_pause(Duration::from_secs(1), Duration::from_millis(500)).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_four_second_pause_leaves_no_claim_and_no_failure_after_it() {
    steady_traffic_through_a_pause(Duration::from_secs(4), Duration::ZERO).await;
}

/// A cache for one-request tests: a 20 ms origin counting its calls.
async fn one(url: &str, open: bool, deadline: Duration) -> Cache<String> {
    let policy = if open {
        RedisErrorPolicy::Open
    } else {
        RedisErrorPolicy::Closed
    };
    Cache::builder()
        .redis(url)
        .deadline(deadline)
        .on_redis_error(policy)
        .origin(|key: String| async move {
            sleep(Duration::from_millis(20)).await;
            Ok::<_, String>(format!("{key}!"))
        })
        .build()
        .await
        .expect("a cache")
}

/// The orphaned claim: a request claims while Redis is paused, its client
/// gives up (fail open: it computes without the claim), and Redis runs the
/// claim when it resumes. Its release by token, sent after it on the same
/// connection, deletes it: the key is not locked for the claim's TTL.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_claim_that_timed_out_is_released_once_redis_resumes() {
    let _one_at_a_time = SERIAL.lock().await;
    let redis = TestRedis::start().await;
    let cache = one(&redis.url, true, Duration::from_secs(2)).await;
    let paused = redis.pause();
    let got = cache.get("k").await.expect("fail open: computed");
    assert_eq!(got.value, "k!");
    settled(&[&cache]).await;
    paused.resume();
    // What was sent during the pause has run once a command sent after it
    // answers: the claim, its release, and the write (which timed out on
    // its client too, and landed all the same).
    assert_eq!(
        redis.pttl("lock:{k}").await,
        -2,
        "the claim that landed on resume is left behind"
    );
    let again = cache.get("k").await.unwrap();
    assert_eq!(
        again,
        Fetched {
            value: "k!".into(),
            source: Source::Hit
        }
    );
}

/// A waiting loser whose polls fail follows the Redis error policy, as a
/// failed claim does: open, it computes (its claim fails too, and is won
/// open); closed, it keeps waiting, to its deadline.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failed_poll_follows_the_redis_error_policy() {
    let _one_at_a_time = SERIAL.lock().await;
    let redis = TestRedis::start().await;
    for open in [true, false] {
        let cache = one(&redis.url, open, Duration::from_secs(1)).await;
        let key = format!("held-{open}");
        // Another instance holds the claim (and never writes).
        redis.hold_claim(&key, Duration::from_secs(60)).await;
        let request = {
            let cache = cache.clone();
            tokio::spawn(async move { cache.get(key).await })
        };
        // The request is polling when Redis stops answering.
        sleep(Duration::from_millis(150)).await;
        let paused = redis.pause();
        let got = request.await.unwrap();
        settled(&[&cache]).await;
        paused.resume();
        if open {
            let got = got.expect("open: computed without the claim");
            assert_eq!(got.source, Source::Computed);
        } else {
            assert_eq!(got, Err(CacheError::Timeout), "closed: waits");
        }
    }
}

/// The claim TTL follows the rule TTL ≥ origin timeout + the write: not
/// given, it is the holder's whole work (re-check, origin timeout, write);
/// given shorter than the rule, the builder refuses it and says why.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_claim_ttl_follows_the_origin_timeout() {
    let _one_at_a_time = SERIAL.lock().await;
    let redis = TestRedis::start().await;
    let slow = |origin_timeout: Duration| {
        Cache::builder()
            .redis(redis.url.as_str())
            .origin_timeout(origin_timeout)
            .origin(|key: String| async move {
                sleep(Duration::from_millis(300)).await;
                Ok::<_, String>(key)
            })
    };
    for (origin_timeout, given, expected) in [
        (800, None, 1000),
        (3000, None, 3200),
        (800, Some(2000), 2000),
    ] {
        let mut builder = slow(Duration::from_millis(origin_timeout));
        if let Some(ttl) = given {
            builder = builder.claim_ttl(Duration::from_millis(ttl));
        }
        let cache = builder.build().await.unwrap();
        let key = format!("ttl-{origin_timeout}-{given:?}");
        let request = {
            let cache = cache.clone();
            let key = key.clone();
            tokio::spawn(async move { cache.get(key).await })
        };
        // The holder is computing: its claim's TTL is as set, less the
        // time since it was taken.
        sleep(Duration::from_millis(100)).await;
        let left = redis.pttl(&format!("lock:{{{key}}}")).await;
        assert!(
            left > expected - 200 && left <= expected,
            "origin timeout {origin_timeout} ms, claim TTL {given:?}: {left} ms left, expected about {expected}"
        );
        request.await.unwrap().unwrap();
    }
    let refused = slow(Duration::from_secs(3))
        .claim_ttl(Duration::from_secs(1))
        .build()
        .await
        .err()
        .expect("a claim TTL under the origin timeout is refused");
    let said = refused.to_string();
    assert!(
        said.contains("1000 ms") && said.contains("3000 ms") && said.contains("100 ms"),
        "{said}"
    );
    // The rule's edge: exactly the origin timeout plus the write is allowed.
    slow(Duration::from_millis(800))
        .claim_ttl(Duration::from_millis(900))
        .build()
        .await
        .expect("900 ms = 800 ms + 100 ms");
}

/// The breaker never strands a claim (issue 37, defect 1). A holder computes
/// while Redis pauses: its write times out, which opens its breaker, and
/// its release must still go out (a release is a command already owed, as
/// the release of a claim whose reply never came is). Once Redis resumes the
/// claim is gone, and another instance's request computes at once instead
/// of waiting on a claim nobody holds until its deadline.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_the_breaker_on_a_holder_still_releases_its_claim() {
    let _one_at_a_time = SERIAL.lock().await;
    let redis = TestRedis::start().await;
    let gate = Arc::new(tokio::sync::Semaphore::new(0));
    let holder = {
        let gate = gate.clone();
        Cache::builder()
            .redis(redis.url.as_str())
            .redis_breaker(Duration::from_secs(5))
            // Longer than the test: a stranded claim outlives every check.
            .claim_ttl(Duration::from_secs(60))
            .deadline(Duration::from_secs(5))
            .origin(move |key: String| {
                let gate = gate.clone();
                async move {
                    gate.acquire().await.unwrap().forget();
                    Ok::<_, String>(format!("{key} by the holder"))
                }
            })
            .build()
            .await
            .expect("a cache")
    };
    let other = one(&redis.url, true, Duration::from_secs(5)).await;
    let request = {
        let holder = holder.clone();
        tokio::spawn(async move { holder.get("k").await })
    };
    // The holder has claimed and is computing.
    while !redis.exists("lock:{k}").await {
        sleep(Duration::from_millis(5)).await;
    }
    let paused = redis.pause();
    gate.add_permits(1);
    let got = request.await.unwrap().expect("computed");
    assert_eq!(got.source, Source::Computed);
    settled(&[&holder]).await;
    assert!(
        holder.stats().redis_errors >= 1,
        "the write timed out and opened the breaker: {:?}",
        holder.stats()
    );
    paused.resume();
    assert_eq!(
        redis.pttl("lock:{k}").await,
        -2,
        "the breaker kept the holder's release from going out"
    );
    // The value landed on resume; without it, another instance claims and
    // computes at once (a stranded claim would make it wait to its
    // deadline: `Timeout`).
    other.invalidate("k").await.unwrap();
    let got = other.get("k").await.expect("not stranded behind a claim");
    assert_eq!(got.source, Source::Computed);
}

/// A service starts while Redis is down (issue 37, defect 8): `build()`
/// succeeds, requests are served from the origin under the Redis error
/// policy meanwhile, and the cache connects by itself once Redis is up.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cache_starts_with_redis_down_and_connects_when_it_comes() {
    let _one_at_a_time = SERIAL.lock().await;
    let port = common::free_port();
    let url = format!("redis://127.0.0.1:{port}/");
    let cache: Cache<String> = Cache::builder()
        .redis(url.as_str())
        .ttl(Duration::from_secs(60))
        .origin(|key: String| async move { Ok::<_, String>(format!("{key}!")) })
        .build()
        .await
        .expect("built with Redis down");
    let got = cache.get("k").await.expect("served from the origin");
    assert_eq!(got.source, Source::Computed);
    settled(&[&cache]).await;
    assert!(cache.stats().redis_errors > 0, "{:?}", cache.stats());
    let redis = TestRedis::start_at(port).await;
    // Connected in the background: a value it writes is read back.
    until_a_hit(&cache, "k").await;
    assert!(redis.exists("value:{k}").await);
}

/// Asks `cache` for `key` until a value it wrote is read back from Redis
/// (a `Hit`): it is connected. Every 100 ms, for a minute at most: a
/// liveness bound, not a timing (a bounded reconnection takes a fraction
/// of a second; redis-rs's default backoff took 112 s in the restart test
/// below).
async fn until_a_hit(cache: &Cache<String>, key: &str) {
    let since = Instant::now();
    while since.elapsed() < Duration::from_secs(60) {
        let got = cache.get(key).await.expect("a value");
        settled(&[cache]).await;
        if got.source == Source::Hit {
            return;
        }
        sleep(Duration::from_millis(100)).await;
    }
    panic!("not connected after a minute: {:?}", cache.stats());
}

/// A service's own connection across a Redis restart (issue 37, defect
/// 2): Redis down for 5 s under traffic, then back. A connection manager
/// made with the crate's bounds (`conn::manager`), and a client the cache
/// makes its manager from (`.client`), are both back within the bounds'
/// reconnection, not redis-rs's default backoff (a manager made with
/// `ConnectionManager::new` in this test: back after 112 s; now refused,
/// below).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_services_own_connection_is_back_soon_after_a_restart() {
    let _one_at_a_time = SERIAL.lock().await;
    let mut redis = TestRedis::start().await;
    let client = redis::Client::open(redis.url.as_str()).unwrap();
    let manager =
        stampede_redis::conn::manager(client.clone(), stampede_redis::cache::REDIS_TIMEOUT)
            .await
            .unwrap();
    let build = || {
        Cache::builder()
            .ttl(Duration::from_secs(60))
            .origin(|key: String| async move { Ok::<_, String>(format!("{key}!")) })
    };
    let own: Cache<String> = build().connection(manager).build().await.unwrap();
    let by_client: Cache<String> = build().client(client).build().await.unwrap();
    for (cache, key) in [(&own, "own"), (&by_client, "client")] {
        until_a_hit(cache, key).await;
    }
    redis.kill();
    let down = Instant::now();
    while down.elapsed() < Duration::from_secs(5) {
        for cache in [&own, &by_client] {
            let _ = cache.get("meanwhile").await;
        }
        sleep(Duration::from_millis(50)).await;
    }
    redis.restart().await;
    for (cache, key) in [(&own, "own"), (&by_client, "client")] {
        until_a_hit(cache, key).await;
    }
}

/// A connection manager the service made itself (here with redis-rs's
/// defaults, which stayed away 112 s after the restart above) is refused
/// at build, naming the fix: its reconnection cannot be read or bounded.
/// The same server through `conn::manager` builds, and the service's own
/// commands go through that connection too.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_manager_the_service_made_itself_is_refused_at_build() {
    let _one_at_a_time = SERIAL.lock().await;
    let redis = TestRedis::start().await;
    let client = redis::Client::open(redis.url.as_str()).unwrap();
    let build = || {
        Cache::<String>::builder()
            .origin(|key: String| async move { Ok::<_, String>(format!("{key}!")) })
    };
    let unbounded = redis::aio::ConnectionManager::new(client.clone())
        .await
        .unwrap();
    let refused = build().connection(unbounded).build().await;
    let Err(e @ stampede_redis::BuildError::Reconnection) = refused else {
        panic!("a manager of unknown reconnection was taken");
    };
    let said = e.to_string();
    assert!(
        said.contains(".client(client)") && said.contains("stampede_redis::conn::manager("),
        "{said}"
    );
    let con = stampede_redis::conn::manager(client, stampede_redis::cache::REDIS_TIMEOUT)
        .await
        .unwrap();
    assert!(con.reconnects_within_bounds());
    let cache = build().connection(con.clone()).build().await.unwrap();
    cache.get("k").await.unwrap();
    settled(&[&cache]).await;
    let mut own = con.manager().unwrap().clone();
    let raw: Option<Vec<u8>> = redis::cmd("GET")
        .arg(cache.value_key("k"))
        .query_async(&mut own)
        .await
        .unwrap();
    assert!(
        raw.is_some(),
        "the cache wrote through the shared connection"
    );
}

/// The breaker half open (issue 37): once its period ends with Redis still
/// paused, one command goes out as the probe and the others fail at once
/// while it is out; its timeout opens the breaker for another period. So a
/// burst of requests then sends at most one command per period begun, not
/// one each. Once Redis resumes, the next probe is answered and the
/// breaker closes: values are written and read back.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_breaker_sends_one_probe_per_period_and_closes_when_it_is_answered() {
    use stampede_redis::BreakerState;
    const OPEN: Duration = Duration::from_secs(1);
    const BURST: usize = 20;
    let _one_at_a_time = SERIAL.lock().await;
    let redis = TestRedis::start().await;
    let cache: Cache<String> = Cache::builder()
        .redis(redis.url.as_str())
        .redis_breaker(OPEN)
        .ttl(Duration::from_secs(60))
        .deadline(Duration::from_secs(5))
        .origin(|key: String| async move { Ok::<_, String>(format!("{key}!")) })
        .build()
        .await
        .expect("a cache");
    assert_eq!(cache.breaker(), BreakerState::Closed);
    let paused = redis.pause();
    // The first read times out and opens the breaker; served from the
    // origin (fail open).
    let got = cache.get("first").await.expect("served from the origin");
    assert_eq!(got.source, Source::Computed);
    settled(&[&cache]).await;
    assert_ne!(cache.breaker(), BreakerState::Closed);
    // Its period over, Redis still paused: a burst at once.
    while cache.breaker() == BreakerState::Open {
        sleep(Duration::from_millis(10)).await;
    }
    let before = cache.stats();
    let started = Instant::now();
    let burst: Vec<_> = (0..BURST)
        .map(|i| {
            let cache = cache.clone();
            tokio::spawn(async move { cache.get(format!("burst {i}")).await })
        })
        .collect();
    for r in burst {
        assert_eq!(
            r.await.unwrap().expect("fail open").source,
            Source::Computed
        );
    }
    settled(&[&cache]).await;
    let took = started.elapsed();
    let after = cache.stats();
    let sent = after.redis_errors - before.redis_errors;
    let skipped = after.redis_skipped - before.redis_skipped;
    // One probe per period begun while the burst lasted (a loaded machine
    // may stretch the burst over more than one period).
    let periods = 1 + (took.as_micros() / OPEN.as_micros()) as u64;
    assert!(
        (1..=periods).contains(&sent),
        "{sent} commands sent (each timed out) over {took:?}: at most one probe per period \
         ({periods}); {skipped} skipped"
    );
    // Every request's read, claim and write but the probe's, skipped.
    assert!(skipped >= 3 * (BURST as u64 - periods), "{skipped} skipped");
    assert_ne!(
        cache.breaker(),
        BreakerState::Closed,
        "a failed probe closed it"
    );
    paused.resume();
    // The next probe after the period is answered: closed, values written
    // and read back (a liveness bound, not a timing).
    until_a_hit(&cache, "after").await;
    assert_eq!(cache.breaker(), BreakerState::Closed);
}
