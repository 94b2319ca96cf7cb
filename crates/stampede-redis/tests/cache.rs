//! The service-shaped cache against a real Redis: string keys, typed
//! values, the origin as an async closure; hit, miss, coalescing, the claim
//! across instances, and every way a request can end without a value.

mod common;

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use common::{settled, Rows, TestRedis};
use serde::{Deserialize, Serialize};
use stampede_redis::cache::{Bytes, Cache, CacheError, ClaimMode, FailCause, LoserPolicy, Source};
use tokio::time::sleep;

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
struct Profile {
    id: String,
    visits: u64,
}

/// Counts the origin's calls.
fn counter() -> Arc<AtomicU64> {
    Arc::new(AtomicU64::new(0))
}

/// A cache whose origin sleeps `ms` and answers a `Profile` for the key.
async fn profiles(url: &str, ms: u64, calls: Arc<AtomicU64>) -> Cache<Profile> {
    Cache::builder()
        .redis(url)
        .ttl(Duration::from_secs(60))
        .deadline(Duration::from_secs(10))
        .origin(move |key: String| {
            let calls = calls.clone();
            async move {
                let n = calls.fetch_add(1, Ordering::SeqCst);
                sleep(Duration::from_millis(ms)).await;
                Ok::<_, String>(Profile { id: key, visits: n })
            }
        })
        .build()
        .await
        .expect("a cache")
}

/// The hit path runs in the caller's own future: while a hit is read, no
/// task is alive beyond those the connection keeps; a miss runs in a task
/// of its own (its work can outlive the caller).
#[tokio::test(flavor = "current_thread")]
async fn a_hit_is_answered_in_the_callers_future_with_no_task() {
    let redis = TestRedis::start().await;
    let cache = profiles(&redis.url, 20, counter()).await;
    let metrics = tokio::runtime::Handle::current().metrics();
    // The most tasks alive while `get` runs, polled in this task alone.
    async fn most_alive_during(
        metrics: &tokio::runtime::RuntimeMetrics,
        get: impl std::future::Future<Output = Source>,
    ) -> (Source, usize) {
        let done = std::cell::Cell::new(false);
        let mut most = 0;
        let get = async {
            let source = get.await;
            done.set(true);
            source
        };
        let probe = async {
            while !done.get() {
                most = most.max(metrics.num_alive_tasks());
                tokio::task::yield_now().await;
            }
        };
        let (source, ()) = tokio::join!(get, probe);
        (source, most)
    }
    // The miss, and its work, first; then the tasks alive at rest.
    let (source, during_miss) =
        most_alive_during(&metrics, async { cache.get("k").await.unwrap().source }).await;
    assert_eq!(source, Source::Computed);
    settled(&[&cache]).await;
    let at_rest = metrics.num_alive_tasks();
    assert!(
        during_miss > at_rest,
        "a miss runs in a task: {during_miss} > {at_rest}"
    );
    for _ in 0..20 {
        let (source, during_hit) =
            most_alive_during(&metrics, async { cache.get("k").await.unwrap().source }).await;
        assert_eq!(source, Source::Hit);
        assert_eq!(during_hit, at_rest, "a hit spawned a task");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_miss_computes_once_then_hits() {
    let redis = TestRedis::start().await;
    let calls = counter();
    let cache = profiles(&redis.url, 20, calls.clone()).await;
    let first = cache.get("user:1").await.unwrap();
    assert_eq!(first.source, Source::Computed);
    assert_eq!(
        first.value,
        Profile {
            id: "user:1".into(),
            visits: 0
        }
    );
    settled(&[&cache]).await;
    let second = cache.get("user:1").await.unwrap();
    assert_eq!(second.source, Source::Hit);
    assert_eq!(second.value, first.value);
    assert_eq!(calls.load(Ordering::SeqCst), 1);
    // Another key is another value.
    let other = cache.get(String::from("user:2")).await.unwrap();
    assert_eq!(other.source, Source::Computed);
    assert_eq!(other.value.id, "user:2");
    settled(&[&cache]).await;
    assert_eq!(cache.in_flight(), 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_callers_of_one_key_share_one_origin_call() {
    let redis = TestRedis::start().await;
    let calls = counter();
    let cache = profiles(&redis.url, 200, calls.clone()).await;
    let mut tasks = Vec::new();
    for _ in 0..50 {
        let cache = cache.clone();
        tasks.push(tokio::spawn(async move { cache.get("hot").await }));
    }
    let mut sources = Vec::new();
    for t in tasks {
        let got = t.await.unwrap().unwrap();
        assert_eq!(got.value.id, "hot");
        sources.push(got.source);
    }
    assert_eq!(calls.load(Ordering::SeqCst), 1);
    let computed = sources.iter().filter(|s| **s == Source::Computed).count();
    assert_eq!(computed, 1, "{sources:?}");
    assert!(sources
        .iter()
        .all(|s| matches!(s, Source::Computed | Source::Shared | Source::Hit)));
    settled(&[&cache]).await;
    assert_eq!(cache.in_flight(), 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_claim_makes_one_origin_call_across_instances() {
    let redis = TestRedis::start().await;
    let calls = counter();
    let mut instances = Vec::new();
    for _ in 0..4 {
        let cache = Cache::builder()
            .redis(&redis.url)
            .claim(ClaimMode::Inner)
            .loser(LoserPolicy::Wait)
            .poll(Duration::from_millis(10))
            .deadline(Duration::from_secs(10))
            // A loaded machine can take longer than the default 100 ms for a
            // command, and a command that times out fails open into a second
            // origin call: this test is about the claim, not the timeout.
            .redis_timeout(Duration::from_secs(2))
            .origin({
                let calls = calls.clone();
                move |key: String| {
                    let calls = calls.clone();
                    async move {
                        calls.fetch_add(1, Ordering::SeqCst);
                        sleep(Duration::from_millis(200)).await;
                        Ok::<_, String>(format!("value of {key}"))
                    }
                }
            })
            .build()
            .await
            .unwrap();
        instances.push(cache);
    }
    let mut tasks = Vec::new();
    for cache in &instances {
        for _ in 0..10 {
            let cache: Cache<String> = cache.clone();
            tasks.push(tokio::spawn(async move { cache.get("k").await }));
        }
    }
    let mut sources = Vec::new();
    for t in tasks {
        let got = t.await.unwrap().unwrap();
        assert_eq!(got.value, "value of k");
        sources.push(got.source);
    }
    assert_eq!(calls.load(Ordering::SeqCst), 1, "one call for the fleet");
    // One instance's leader computed; the three others lost the claim and
    // waited on it; everyone else shared their instance's flight.
    let count = |s: Source| sources.iter().filter(|&&x| x == s).count();
    assert_eq!(
        (
            count(Source::Computed),
            count(Source::Waited),
            count(Source::Shared)
        ),
        (1, 3, 36),
        "{sources:?}"
    );
    for cache in &instances {
        settled(&[cache]).await;
        assert_eq!(cache.in_flight(), 0);
    }
    // The claim was released: nothing but the value is left in Redis.
    assert!(!redis.exists(&stampede_redis::lock_key("k")).await);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_a_claim_each_instance_calls_once() {
    let redis = TestRedis::start().await;
    let calls = counter();
    let mut tasks = Vec::new();
    for _ in 0..3 {
        let calls = calls.clone();
        let cache: Cache<String> = Cache::builder()
            .redis(&redis.url)
            .claim(ClaimMode::Off)
            .origin(move |key: String| {
                let calls = calls.clone();
                async move {
                    calls.fetch_add(1, Ordering::SeqCst);
                    sleep(Duration::from_millis(200)).await;
                    Ok::<_, String>(key)
                }
            })
            .build()
            .await
            .unwrap();
        for _ in 0..10 {
            let cache = cache.clone();
            tasks.push(tokio::spawn(async move { cache.get("k").await }));
        }
    }
    for t in tasks {
        assert_eq!(t.await.unwrap().unwrap().value, "k");
    }
    assert_eq!(calls.load(Ordering::SeqCst), 3, "singleflight per instance");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bytes_pass_through_as_they_are() {
    let redis = TestRedis::start().await;
    let cache = Cache::builder()
        .redis(&redis.url)
        .codec(Bytes)
        .origin(|key: String| async move { Ok::<_, String>(vec![0xff, 0, key.len() as u8]) })
        .build()
        .await
        .unwrap();
    assert_eq!(cache.get("abc").await.unwrap().value, vec![0xff, 0, 3]);
    settled(&[&cache]).await;
    let (_, stored) = redis
        .row(&stampede_redis::value_key("abc"))
        .await
        .expect("written");
    assert_eq!(stored, vec![0xff, 0, 3]);
    assert_eq!(cache.get("abc").await.unwrap().source, Source::Hit);
}

/// A cache whose origin does what `behave` says for the key.
async fn scripted(
    url: &str,
    calls: Arc<AtomicU64>,
    behave: fn(&str, u64) -> Behave,
) -> Cache<String> {
    Cache::builder()
        .redis(url)
        .deadline(Duration::from_secs(10))
        .origin(move |key: String| {
            let n = calls.fetch_add(1, Ordering::SeqCst);
            let b = behave(&key, n);
            if let Behave::PanicBeforeFuture = b {
                // Slow synchronous work first (it holds one runtime worker),
                // so that the other callers are attached to the flight when
                // it settles, however loaded the machine: with an instant
                // panic, a caller still on its first GET would start a new
                // flight after the settle and make a second call.
                std::thread::sleep(Duration::from_millis(100));
                panic!("the closure panicked before its future existed");
            }
            async move {
                sleep(Duration::from_millis(100)).await;
                match b {
                    Behave::Ok => Ok(format!("value of {key}")),
                    Behave::Fail => Err("origin down"),
                    Behave::PanicInFuture => panic!("the future panicked"),
                    Behave::PanicBeforeFuture => unreachable!(),
                }
            }
        })
        .build()
        .await
        .unwrap()
}

#[derive(Clone, Copy)]
enum Behave {
    Ok,
    Fail,
    PanicInFuture,
    PanicBeforeFuture,
}

/// Ten concurrent callers of `key`.
async fn ten(cache: &Cache<String>, key: &str) -> Vec<Result<String, CacheError>> {
    let mut tasks = Vec::new();
    for _ in 0..10 {
        let (cache, key) = (cache.clone(), key.to_string());
        tasks.push(tokio::spawn(async move {
            cache.get(key).await.map(|f| f.value)
        }));
    }
    let mut out = Vec::new();
    for t in tasks {
        out.push(t.await.unwrap());
    }
    out
}

/// The first call misbehaves as `first`; the key then works again.
async fn answered_to_all_and_not_remembered(first: Behave) {
    let redis = TestRedis::start().await;
    let calls = counter();
    let cache = match first {
        Behave::Fail => scripted(&redis.url, calls.clone(), |_, n| {
            if n == 0 {
                Behave::Fail
            } else {
                Behave::Ok
            }
        }),
        Behave::PanicInFuture => scripted(&redis.url, calls.clone(), |_, n| {
            if n == 0 {
                Behave::PanicInFuture
            } else {
                Behave::Ok
            }
        }),
        _ => scripted(&redis.url, calls.clone(), |_, n| {
            if n == 0 {
                Behave::PanicBeforeFuture
            } else {
                Behave::Ok
            }
        }),
    }
    .await;
    let answers = ten(&cache, "k").await;
    assert_eq!(calls.load(Ordering::SeqCst), 1);
    // An error the origin returned comes back to every caller of its
    // flight, itself (one error, shared); a panic has none to give.
    assert!(
        answers.iter().all(|a| match (first, a) {
            (Behave::Fail, Err(CacheError::Origin(e))) => e.to_string() == "origin down",
            (
                Behave::PanicInFuture | Behave::PanicBeforeFuture,
                Err(CacheError::Failed(FailCause::OriginPanicked)),
            ) => true,
            _ => false,
        }),
        "{answers:?}"
    );
    settled(&[&cache]).await;
    assert_eq!(cache.in_flight(), 0, "the key is free again");
    let again = ten(&cache, "k").await;
    assert!(again.iter().all(|a| a.as_deref() == Ok("value of k")));
    assert_eq!(calls.load(Ordering::SeqCst), 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_origin_error_reaches_every_waiter_and_is_not_remembered() {
    answered_to_all_and_not_remembered(Behave::Fail).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_panic_inside_the_future_reaches_every_waiter() {
    answered_to_all_and_not_remembered(Behave::PanicInFuture).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_panic_before_the_future_exists_reaches_every_waiter() {
    answered_to_all_and_not_remembered(Behave::PanicBeforeFuture).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_deadline_ends_the_wait_not_the_work() {
    let redis = TestRedis::start().await;
    let calls = counter();
    let cache: Cache<String> = Cache::builder()
        .redis(&redis.url)
        // Longer than the Redis commands before the origin (3 × 100 ms,
        // or build() refuses it), shorter than the origin.
        .deadline(Duration::from_millis(400))
        .origin({
            let calls = calls.clone();
            move |key: String| {
                let calls = calls.clone();
                async move {
                    calls.fetch_add(1, Ordering::SeqCst);
                    sleep(Duration::from_millis(1200)).await;
                    Ok::<_, String>(key)
                }
            }
        })
        .build()
        .await
        .unwrap();
    let answers = ten(&cache, "slow").await;
    assert!(answers.iter().all(|a| *a == Err(CacheError::Timeout)));
    settled(&[&cache]).await;
    // The work went on and filled the cache.
    let got = cache.get("slow").await.unwrap();
    assert_eq!((got.value.as_str(), got.source), ("slow", Source::Hit));
    assert_eq!(calls.load(Ordering::SeqCst), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_caller_that_leaves_cancels_nothing() {
    let redis = TestRedis::start().await;
    let calls = counter();
    let cache = profiles(&redis.url, 200, calls.clone()).await;
    // The first caller starts the work and is dropped while others wait.
    let leader = {
        let cache = cache.clone();
        tokio::spawn(async move { cache.get("k").await })
    };
    while cache.in_flight() == 0 {
        sleep(Duration::from_millis(1)).await;
    }
    let mut followers = Vec::new();
    for _ in 0..5 {
        let cache = cache.clone();
        followers.push(tokio::spawn(async move { cache.get("k").await }));
    }
    leader.abort();
    for f in followers {
        assert_eq!(f.await.unwrap().unwrap().value.id, "k");
    }
    assert_eq!(calls.load(Ordering::SeqCst), 1);
    settled(&[&cache]).await;
    assert_eq!(cache.in_flight(), 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_redis_outage_fails_open_and_still_coalesces() {
    let mut redis = TestRedis::start().await;
    let calls = counter();
    let cache = profiles(&redis.url, 100, calls.clone()).await;
    redis.kill();
    let mut tasks = Vec::new();
    for _ in 0..10 {
        let cache = cache.clone();
        tasks.push(tokio::spawn(async move { cache.get("k").await }));
    }
    for t in tasks {
        assert_eq!(t.await.unwrap().unwrap().value.id, "k");
    }
    assert_eq!(calls.load(Ordering::SeqCst), 1, "singleflight still holds");
    settled(&[&cache]).await;
    assert_eq!(cache.in_flight(), 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_keys_and_missing_parts_are_refused() {
    let redis = TestRedis::start().await;
    let cache = profiles(&redis.url, 1, counter()).await;
    assert!(matches!(
        cache.get("").await,
        Err(CacheError::InvalidKey(_))
    ));
    let long = "x".repeat(stampede_redis::MAX_KEY_BYTES + 1);
    assert!(matches!(
        cache.get(long).await,
        Err(CacheError::InvalidKey(_))
    ));
    // No Redis is refused; no origin is a cache read with `get_with`.
    let no_redis = Cache::<String>::builder()
        .origin(|k: String| async move { Ok::<_, String>(k) })
        .build()
        .await;
    assert!(matches!(
        no_redis,
        Err(stampede_redis::BuildError::Missing(_))
    ));
    let no_origin = Cache::<String>::builder().redis(&redis.url).build().await;
    assert_eq!(no_origin.unwrap().get("k").await, Err(CacheError::NoOrigin));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_value_of_another_type_is_a_miss() {
    let redis = TestRedis::start().await;
    let strings = scripted(&redis.url, counter(), |_, _| Behave::Ok).await;
    strings.get("k").await.unwrap();
    settled(&[&strings]).await;
    // Another writer's type (a rolling deploy's other schema) is no value
    // for this cache: it computes its own, and writes it over.
    let calls = counter();
    let profiles = profiles(&redis.url, 1, calls.clone()).await;
    let got = profiles.get("k").await.unwrap();
    assert_eq!(got.source, Source::Computed);
    assert!(profiles.stats().decode_misses >= 1);
    settled(&[&profiles]).await;
    assert_eq!(profiles.get("k").await.unwrap().source, Source::Hit);
    assert_eq!(calls.load(Ordering::SeqCst), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn set_and_invalidate() {
    let redis = TestRedis::start().await;
    let calls = counter();
    let cache = profiles(&redis.url, 1, calls.clone()).await;
    let set = Profile {
        id: "set".into(),
        visits: 5,
    };
    assert_eq!(cache.set("k", &set).await, Ok(true));
    let got = cache.get("k").await.unwrap();
    assert_eq!((got.value, got.source), (set, Source::Hit));
    assert_eq!(calls.load(Ordering::SeqCst), 0);
    cache.invalidate("k").await.unwrap();
    assert_eq!(cache.get("k").await.unwrap().source, Source::Computed);
    assert_eq!(calls.load(Ordering::SeqCst), 1);
    assert!(matches!(
        cache
            .set(
                "",
                &Profile {
                    id: "".into(),
                    visits: 0
                }
            )
            .await,
        Err(CacheError::InvalidKey(_))
    ));
}

/// A value set, or deleted, while a fill is in flight (issue 37, writes):
/// the fill's older value cannot be written over it, with fenced writes
/// (the set's and the delete's tombstone's own fencing numbers) or without
/// (their versions: when each was made, against when the fill's
/// computation started). The fill's callers get the set value (their
/// write refused, the newer value read back), or their own after a delete.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_set_or_an_invalidate_during_a_fill_wins_fenced_or_not() {
    let redis = TestRedis::start().await;
    for fenced in [true, false] {
        let calls = counter();
        let cache: Cache<String> = {
            let calls = calls.clone();
            Cache::builder()
                .redis(&redis.url)
                .fenced_writes(fenced)
                .origin(move |_key: String| {
                    calls.fetch_add(1, Ordering::SeqCst);
                    async {
                        sleep(Duration::from_millis(200)).await;
                        Ok::<_, String>("filled".to_string())
                    }
                })
                .build()
                .await
                .unwrap()
        };
        // A set during the fill: the set's value stays, and the fill's
        // caller gets it (its own write refused, the newer value read back).
        let key = format!("set-{fenced}");
        let fill = {
            let (cache, key) = (cache.clone(), key.clone());
            tokio::spawn(async move { cache.get(key).await })
        };
        while calls.load(Ordering::SeqCst) == 0 {
            sleep(Duration::from_millis(5)).await;
        }
        assert_eq!(cache.set(key.as_str(), &"set".to_string()).await, Ok(true));
        assert_eq!(fill.await.unwrap().unwrap().value, "set", "fenced {fenced}");
        settled(&[&cache]).await;
        assert_eq!(cache.get(key.as_str()).await.unwrap().value, "set");
        assert_eq!(cache.stats().writes_refused, 1);
        // An invalidate during the fill: nothing is left to read after it.
        let key = format!("invalidate-{fenced}");
        let before = calls.load(Ordering::SeqCst);
        let fill = {
            let (cache, key) = (cache.clone(), key.clone());
            tokio::spawn(async move { cache.get(key).await })
        };
        while calls.load(Ordering::SeqCst) == before {
            sleep(Duration::from_millis(5)).await;
        }
        cache.invalidate(key.as_str()).await.unwrap();
        assert_eq!(fill.await.unwrap().unwrap().value, "filled");
        settled(&[&cache]).await;
        assert_eq!(cache.stats().writes_refused, 2, "fenced {fenced}");
        assert_eq!(cache.peek(key.as_str()).await, Ok(None), "fenced {fenced}");
        let again = cache.get(key.as_str()).await.unwrap();
        assert_eq!(again.source, Source::Computed, "fenced {fenced}");
    }
}

/// A local copy bounded in time alone (on the service's own connection,
/// which the cache cannot track on: `tests/coherence.rs` has the tracked
/// copies) answers another instance's write late, and its own at once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_time_bounded_local_copy_answers_until_this_instance_writes() {
    let redis = TestRedis::start().await;
    let url = redis.url.clone();
    let build = |local: Duration| {
        let url = url.clone();
        async move {
            let con = stampede_redis::Target::parse(&url).connect().await.unwrap();
            Cache::builder()
                .connection(con)
                .local_copy(local)
                .origin(|_key: String| async { Ok::<_, String>("v1".to_string()) })
                .build()
                .await
        }
    };
    let a = build(Duration::from_secs(10)).await.unwrap();
    assert_eq!(a.coherence(), stampede_redis::Coherence::TimeBounded);
    let b = build(Duration::ZERO).await.unwrap();
    a.get("k").await.unwrap();
    settled(&[&a]).await;
    assert_eq!(a.get("k").await.unwrap().value, "v1", "read, kept locally");
    b.set("k", &"v2".to_string()).await.unwrap();
    assert_eq!(b.get("k").await.unwrap().value, "v2");
    assert_eq!(a.get("k").await.unwrap().value, "v1", "the local copy");
    a.set("k", &"v3".to_string()).await.unwrap();
    assert_eq!(a.get("k").await.unwrap().value, "v3", "its own write");
}

/// A local copy never outlives its value's TTL (issue 37, defect 4): with a
/// value fresh for 300 ms and a copy of 10 s, a read past the TTL is not a
/// `Hit` of the expired copy but a recompute.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_local_copy_ends_with_its_values_ttl() {
    let redis = TestRedis::start().await;
    let calls = counter();
    let cache: Cache<String> = {
        let calls = calls.clone();
        Cache::builder()
            .redis(&redis.url)
            .ttl(Duration::from_millis(300))
            .local_copy(Duration::from_secs(10))
            .origin(move |_key: String| {
                let n = calls.fetch_add(1, Ordering::SeqCst);
                async move { Ok::<_, String>(format!("v{n}")) }
            })
            .build()
            .await
            .unwrap()
    };
    assert_eq!(cache.get("k").await.unwrap().source, Source::Computed);
    settled(&[&cache]).await;
    let kept = cache.get("k").await.unwrap();
    assert_eq!((kept.value.as_str(), kept.source), ("v0", Source::Hit));
    // Past the TTL (a sleep is never shorter than asked), twice over.
    for _ in 0..2 {
        sleep(Duration::from_millis(400)).await;
        let got = cache.get("k").await.unwrap();
        assert_ne!(
            (got.value.as_str(), got.source),
            ("v0", Source::Hit),
            "the local copy answered past the value's TTL"
        );
        settled(&[&cache]).await;
    }
}

/// A cache without an origin reads Redis (issue 37, defect 10): a fresh
/// value another instance wrote is a `Hit`; nothing there is `NoOrigin`.
/// Its key names carry its prefix.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cache_without_an_origin_reads_redis_under_its_prefix() {
    let redis = TestRedis::start().await;
    let build = || {
        Cache::<String>::builder()
            .redis(&redis.url)
            .key_prefix("svc:")
    };
    let writer = build()
        .origin(|key: String| async move { Ok::<_, String>(format!("v {key}")) })
        .build()
        .await
        .unwrap();
    let reader = build().build().await.unwrap();
    assert_eq!(reader.get("k").await, Err(CacheError::NoOrigin));
    assert_eq!(writer.get("k").await.unwrap().source, Source::Computed);
    settled(&[&writer]).await;
    let got = reader.get("k").await.unwrap();
    assert_eq!((got.value.as_str(), got.source), ("v k", Source::Hit));
    assert_eq!(reader.value_key("k"), "svc:value:{k}");
    assert_eq!(reader.lock_key("k"), "svc:lock:{k}");
    assert_eq!(reader.fence_key("k"), "svc:fence:{k}");
    assert!(redis.exists(&reader.value_key("k")).await);
}

/// The service's own connection manager, instead of a URL.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cache_on_the_services_own_connection() {
    let redis = TestRedis::start().await;
    let client = redis::Client::open(redis.url.as_str()).unwrap();
    let manager = stampede_redis::conn::manager(client, stampede_redis::cache::REDIS_TIMEOUT)
        .await
        .unwrap();
    let cache: Cache<String> = Cache::builder()
        .connection(manager.clone())
        .origin(|key: String| async move { Ok::<_, String>(format!("v {key}")) })
        .build()
        .await
        .unwrap();
    assert_eq!(cache.get("k").await.unwrap().source, Source::Computed);
    settled(&[&cache]).await;
    let got = cache.get("k").await.unwrap();
    assert_eq!((got.value.as_str(), got.source), ("v k", Source::Hit));
    // Written through that connection: the service reads it there.
    let stored: Vec<u8> = redis::cmd("GET")
        .arg(stampede_redis::value_key("k"))
        .query_async(&mut manager.clone())
        .await
        .unwrap();
    assert!(stored.ends_with(b"\n\"v k\""), "{stored:?}");
}

/// A graceful drain: the caller has its answer, the work goes on (the
/// write, the settle, the release); `drain` waits for it, claims released.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn drain_waits_for_the_work_behind_the_answers() {
    let redis = TestRedis::start().await;
    let cache: Cache<String> = Cache::builder()
        .redis(&redis.url)
        .deadline(Duration::from_millis(400))
        .origin(|_key: String| async {
            sleep(Duration::from_millis(1200)).await;
            Ok::<_, String>("late".to_string())
        })
        .build()
        .await
        .unwrap();
    assert_eq!(cache.get("k").await, Err(CacheError::Timeout));
    assert!(cache.running() > 0, "the work goes on behind the answer");
    assert!(!cache.drain(Duration::from_millis(10)).await, "not yet");
    assert!(cache.drain(Duration::from_secs(5)).await);
    assert_eq!(cache.running(), 0);
    assert_eq!(cache.in_flight(), 0);
    assert_eq!(redis.pttl(&stampede_redis::lock_key("k")).await, -2);
    assert_eq!(cache.get("k").await, Err(CacheError::Draining));
    // The value the drained work wrote is there for the next instance.
    let next: Cache<String> = Cache::builder().redis(&redis.url).build().await.unwrap();
    let got = next.get_with("k", async { Err::<String, _>("not called") });
    assert_eq!(got.await.unwrap().value, "late");
}

/// Once a drain starts, new requests are refused (on every clone), while
/// the flight already running finishes: its leader's followers get its
/// value, its value is written and its claim released.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_drain_refuses_new_requests_and_finishes_the_running_flight() {
    let redis = TestRedis::start().await;
    let calls = counter();
    // The origin waits for the test's go, so the flight is still running
    // when the drain starts.
    let go = Arc::new(tokio::sync::Semaphore::new(0));
    let (origin_calls, origin_go) = (calls.clone(), go.clone());
    let cache: Cache<String> = Cache::builder()
        .redis(&redis.url)
        .deadline(Duration::from_secs(30))
        .origin(move |key: String| {
            let (calls, go) = (origin_calls.clone(), origin_go.clone());
            async move {
                calls.fetch_add(1, Ordering::SeqCst);
                let _go = go.acquire().await.map_err(|e| e.to_string())?;
                Ok::<_, String>(format!("v {key}"))
            }
        })
        .build()
        .await
        .unwrap();
    let callers: Vec<_> = (0..5)
        .map(|_| {
            let cache = cache.clone();
            tokio::spawn(async move { cache.get("k").await })
        })
        .collect();
    while calls.load(Ordering::SeqCst) == 0 || cache.running() < 5 {
        sleep(Duration::from_millis(1)).await;
    }
    assert!(
        redis.pttl(&stampede_redis::lock_key("k")).await > 0,
        "claimed"
    );
    // Started, not finished: the origin has not been let go yet.
    let _ = cache.drain(Duration::ZERO).await;
    let refused = cache.get_with("new", async { Ok::<_, String>("x".to_string()) });
    assert_eq!(refused.await, Err(CacheError::Draining));
    let clone = cache.clone();
    let refused = clone.get_with("k", async { Ok::<_, String>("x".to_string()) });
    assert_eq!(refused.await, Err(CacheError::Draining), "on a clone too");
    go.add_permits(1);
    assert!(cache.drain(Duration::from_secs(30)).await);
    for caller in callers {
        assert_eq!(caller.await.unwrap().unwrap().value, "v k");
    }
    assert_eq!(
        calls.load(Ordering::SeqCst),
        1,
        "one origin call, none refused ran"
    );
    assert_eq!((cache.running(), cache.in_flight()), (0, 0));
    assert_eq!(
        redis.pttl(&stampede_redis::lock_key("k")).await,
        -2,
        "released"
    );
    assert_eq!(cache.stats().released, 1);
}

/// JSON strings, counting every decode.
#[derive(Clone, Default)]
struct CountingJson(Arc<AtomicU64>);

impl stampede_redis::Codec<String> for CountingJson {
    fn encode(&self, value: &String) -> Result<Vec<u8>, String> {
        serde_json::to_vec(value).map_err(|e| e.to_string())
    }

    fn decode(&self, bytes: &[u8]) -> Result<String, String> {
        self.0.fetch_add(1, Ordering::SeqCst);
        serde_json::from_slice(bytes).map_err(|e| e.to_string())
    }
}

/// A cache of strings whose codec counts its decodes: values fresh for
/// 50 ms, then stale for a minute; polls every 10 ms.
async fn counting(url: &str, decodes: &CountingJson) -> Cache<String, CountingJson> {
    Cache::builder()
        .redis(url)
        .ttl(Duration::from_millis(50))
        .stale(Duration::from_secs(60))
        .poll(Duration::from_millis(10))
        .deadline(Duration::from_secs(5))
        .origin(|key: String| async move { Ok::<_, String>(format!("computed {key}")) })
        .codec(decodes.clone())
        .build()
        .await
        .expect("a cache")
}

/// Each answer decodes its payload once: a stale value served (the read
/// that found it decoded it, and the answer carries that value) and a
/// value that came after waiting on another instance's claim (the poll
/// that found it decoded it), as a hit's.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stale_and_a_waited_answer_each_decode_once() {
    let redis = TestRedis::start().await;
    let decodes = CountingJson::default();
    let cache = counting(&redis.url, &decodes).await;

    // A stale value, its refresh's claim held elsewhere: answered stale,
    // nothing recomputed (no re-check read).
    assert!(cache.set("stale", &"old".to_string()).await.unwrap());
    sleep(Duration::from_millis(100)).await;
    redis.hold_claim("stale", Duration::from_secs(5)).await;
    decodes.0.store(0, Ordering::SeqCst);
    let got = cache.get("stale").await.unwrap();
    assert_eq!((got.value.as_str(), got.source), ("old", Source::Stale));
    settled(&[&cache]).await;
    assert_eq!(decodes.0.load(Ordering::SeqCst), 1, "one decode, stale");

    // A miss whose claim another instance holds: this request polls until
    // that one's value lands.
    redis.hold_claim("waited", Duration::from_secs(5)).await;
    decodes.0.store(0, Ordering::SeqCst);
    let waiting = tokio::spawn({
        let cache = cache.clone();
        async move { cache.get("waited").await }
    });
    sleep(Duration::from_millis(50)).await;
    let writer: Cache<String> = Cache::builder().redis(&redis.url).build().await.unwrap();
    assert!(writer.set("waited", &"theirs".to_string()).await.unwrap());
    let got = waiting.await.unwrap().unwrap();
    assert_eq!((got.value.as_str(), got.source), ("theirs", Source::Waited));
    settled(&[&cache]).await;
    assert_eq!(decodes.0.load(Ordering::SeqCst), 1, "one decode, waited");
}

/// Calls of `command` Redis has run so far (`INFO commandstats`).
async fn calls_of(redis: &TestRedis, command: &str) -> u64 {
    let info: String = redis::cmd("INFO")
        .arg("commandstats")
        .query_async(&mut redis.connection().await)
        .await
        .unwrap();
    let line = format!("cmdstat_{command}:calls=");
    info.lines()
        .find_map(|l| l.strip_prefix(line.as_str()))
        .and_then(|rest| rest.split(',').next())
        .map_or(0, |n| n.parse().unwrap())
}

/// An origin failure reaches the instances waiting on the claim (issue 37,
/// defect 7): three instances miss one key; the claim's holder calls the
/// origin, which fails; the two that lost the claim answer `Failed` instead
/// of each taking the claim and calling the origin in turn. The failure is
/// not remembered (no negative TTL): the next request calls again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_origin_failure_reaches_the_instances_waiting_on_its_claim() {
    let redis = TestRedis::start().await;
    let calls = counter();
    // The holder's origin fails once both others are polling.
    let gate = Arc::new(tokio::sync::Semaphore::new(0));
    let mut fleet = Vec::new();
    for _ in 0..3 {
        let (calls, gate) = (calls.clone(), gate.clone());
        let cache: Cache<String> = Cache::builder()
            .redis(&redis.url)
            .deadline(Duration::from_secs(10))
            .poll(Duration::from_millis(10))
            .origin(move |_key: String| {
                let (calls, gate) = (calls.clone(), gate.clone());
                async move {
                    calls.fetch_add(1, Ordering::SeqCst);
                    gate.acquire().await.unwrap().forget();
                    Err::<String, _>("the origin is down")
                }
            })
            .build()
            .await
            .unwrap();
        fleet.push(cache);
    }
    let requests: Vec<_> = fleet
        .iter()
        .map(|cache| {
            let cache = cache.clone();
            tokio::spawn(async move { cache.get("k").await })
        })
        .collect();
    // The two losers poll (a poll is the driver's only MULTI/EXEC): their
    // claims were seen held.
    while calls_of(&redis, "exec").await < 2 {
        sleep(Duration::from_millis(5)).await;
    }
    gate.add_permits(3);
    let mut answers = Vec::new();
    for r in requests {
        answers.push(r.await.unwrap());
    }
    settled(&fleet.iter().collect::<Vec<_>>()).await;
    assert_eq!(calls.load(Ordering::SeqCst), 1, "{answers:?}");
    let origin = answers
        .iter()
        .filter(|a| matches!(a, Err(CacheError::Origin(_))))
        .count();
    let failed = answers
        .iter()
        .filter(|a| matches!(a, Err(CacheError::Failed(FailCause::OtherInstance))))
        .count();
    assert_eq!((origin, failed), (1, 2), "{answers:?}");
    // Not remembered: the next request, on any instance, calls again.
    let again = fleet[1].get("k").await;
    assert!(matches!(again, Err(CacheError::Origin(_))), "{again:?}");
    assert_eq!(calls.load(Ordering::SeqCst), 2);
}

/// `get_many` (issue 37, "a batch read"): the fresh keys in one `MGET`,
/// every other key asked of `get`, so each coalesces as `get` does: two
/// instances asking for the same batch at once (a key twice in it) make
/// one origin call per missing key; the answers come in the keys' order,
/// and a bad key is its own error. Once all are fresh, a batch is one
/// `MGET` and no `GET`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn get_many_reads_the_hits_at_once_and_coalesces_each_miss() {
    let redis = TestRedis::start().await;
    let calls = counter();
    let mut fleet = Vec::new();
    for _ in 0..2 {
        let calls = calls.clone();
        let cache: Cache<String> = Cache::builder()
            .redis(&redis.url)
            .deadline(Duration::from_secs(10))
            .poll(Duration::from_millis(10))
            .origin(move |key: String| {
                calls.fetch_add(1, Ordering::SeqCst);
                async move {
                    sleep(Duration::from_millis(100)).await;
                    Ok::<_, String>(format!("{key} computed"))
                }
            })
            .build()
            .await
            .unwrap();
        fleet.push(cache);
    }
    let (a, b) = (&fleet[0], &fleet[1]);
    assert!(a.set("hit", &"stored".to_string()).await.unwrap());
    let mgets = calls_of(&redis, "mget").await;
    let batch = ["hit", "m1", "m2", "", "m1"];
    let (ra, rb) = tokio::join!(a.get_many(batch), b.get_many(batch));
    for got in [ra, rb] {
        assert_eq!(got.len(), 5);
        let hit = got[0].as_ref().unwrap();
        assert_eq!((hit.value.as_str(), hit.source), ("stored", Source::Hit));
        for (i, key) in [(1, "m1"), (2, "m2"), (4, "m1")] {
            assert_eq!(got[i].as_ref().unwrap().value, format!("{key} computed"));
        }
        assert!(matches!(got[3], Err(CacheError::InvalidKey(_))), "{got:?}");
    }
    settled(&[a, b]).await;
    assert_eq!(calls.load(Ordering::SeqCst), 2, "one call per missing key");
    assert_eq!(
        calls_of(&redis, "mget").await - mgets,
        2,
        "one MGET a batch"
    );
    // All fresh now: one MGET, no GET.
    let gets = calls_of(&redis, "get").await;
    let got = a.get_many(["hit", "m1", "m2"]).await;
    assert!(
        got.iter()
            .all(|g| g.as_ref().unwrap().source == Source::Hit),
        "{got:?}"
    );
    assert_eq!(calls_of(&redis, "get").await, gets);
    assert_eq!(calls_of(&redis, "mget").await - mgets, 3);
}
