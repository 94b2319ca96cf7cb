//! What a service author expects of the cache (issue 27, section 3),
//! against a real `redis-server`: a key prefix on every Redis key, a loader
//! per call (`get_with`), a TTL per entry, and the origin's own error kept.

mod common;

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use common::{settled, Rows, TestRedis};
use stampede_redis::cache::{BuildError, Cache, CacheError, ClaimMode, FailCause, Source};
use stampede_redis::{fence_key, lock_key, value_key};
use tokio::time::{sleep, Instant};

/// The origin's own error type, as a service has one.
#[derive(Debug, PartialEq, Eq)]
struct Upstream {
    status: u16,
}

impl std::fmt::Display for Upstream {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "upstream answered {}", self.status)
    }
}

impl std::error::Error for Upstream {}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_key_prefix_is_put_before_every_redis_key() {
    let redis = TestRedis::start().await;
    let calls = Arc::new(AtomicU64::new(0));
    let build = |prefix: &'static str, fail: bool| {
        let (url, calls) = (redis.url.clone(), calls.clone());
        async move {
            Cache::builder()
                .redis(url.as_str())
                .key_prefix(prefix)
                .claim(ClaimMode::Inner)
                .fenced_writes(true)
                .negative_ttl(Duration::from_secs(5))
                .origin(move |key: String| {
                    let calls = calls.clone();
                    async move {
                        calls.fetch_add(1, Ordering::SeqCst);
                        // Slow enough to see the claim held.
                        sleep(Duration::from_millis(150)).await;
                        if fail {
                            return Err("origin down".to_string());
                        }
                        Ok(format!("{prefix} {key}"))
                    }
                })
                .build()
                .await
                .unwrap()
        }
    };
    let a = build("svc-a:", false).await;
    let b = build("svc-b:", false).await;
    let bad = build("svc-c:", true).await;

    let pending = tokio::spawn({
        let a = a.clone();
        async move { a.get("k").await }
    });
    // The claim is taken under the prefix while the origin runs.
    let until = Instant::now() + Duration::from_secs(2);
    while !redis.exists(&format!("svc-a:{}", lock_key("k"))).await {
        assert!(Instant::now() < until, "no prefixed claim seen");
        sleep(Duration::from_millis(5)).await;
    }
    assert_eq!(pending.await.unwrap().unwrap().value, "svc-a: k");
    settled(&[&a]).await;
    // The value and the fence are under the prefix; nothing is unprefixed.
    assert!(redis.exists(&format!("svc-a:{}", value_key("k"))).await);
    assert!(redis.exists(&format!("svc-a:{}", fence_key("k"))).await);
    for key in [value_key("k"), lock_key("k"), fence_key("k")] {
        assert!(
            !redis.exists(&key).await,
            "{key} written without the prefix"
        );
    }
    // Another prefix is another cache: its own value, its own call.
    assert_eq!(b.get("k").await.unwrap().value, "svc-b: k");
    assert_eq!(a.get("k").await.unwrap().source, Source::Hit);
    assert_eq!(calls.load(Ordering::SeqCst), 2);
    // The negative mark lives in the prefixed value row.
    assert!(bad.get("k").await.is_err());
    settled(&[&bad]).await;
    let mark = redis.row(&format!("svc-c:{}", value_key("k"))).await;
    assert!(
        mark.is_some_and(|(header, _)| header.negative_until > 0),
        "no negative mark under the prefix"
    );
    // invalidate and set use the prefix too.
    // (A delete leaves a tombstone, with nothing to serve, under the
    // prefix: a fill in flight cannot bring the value back.)
    a.invalidate("k").await.unwrap();
    let tombstone = redis.row(&format!("svc-a:{}", value_key("k"))).await;
    assert!(
        tombstone.is_some_and(|(h, payload)| h.stale_until == 0 && payload.is_empty()),
        "no tombstone under the prefix"
    );
    assert_eq!(a.peek("k").await, Ok(None));
    assert!(a.set("k", &"set".to_string()).await.unwrap());
    assert!(redis.exists(&format!("svc-a:{}", value_key("k"))).await);
    assert!(!redis.exists(&value_key("k")).await);

    // A brace would move the keys' hash tag: refused by name.
    let braced = Cache::<String>::builder()
        .redis(redis.url.as_str())
        .key_prefix("{svc}:")
        .origin(|k: String| async move { Ok::<_, String>(k) })
        .build()
        .await;
    assert!(
        matches!(&braced, Err(BuildError::KeyPrefix(p)) if p == "{svc}:"),
        "{:?}",
        braced.err()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn get_with_runs_one_loader_per_flight_and_needs_no_origin() {
    let redis = TestRedis::start().await;
    let cache: Cache<String> = Cache::builder()
        .redis(redis.url.as_str())
        .build()
        .await
        .unwrap();
    // No origin: `get` says so; `get_with` brings its own.
    assert_eq!(cache.get("k").await.unwrap_err(), CacheError::NoOrigin);

    let runs = Arc::new(AtomicU64::new(0));
    let mut calls = Vec::new();
    for i in 0..10 {
        let (cache, runs) = (cache.clone(), runs.clone());
        calls.push(tokio::spawn(async move {
            cache
                .get_with("k", async move {
                    runs.fetch_add(1, Ordering::SeqCst);
                    sleep(Duration::from_millis(100)).await;
                    Ok::<_, std::io::Error>(format!("loaded by call {i}"))
                })
                .await
        }));
    }
    let mut answers = Vec::new();
    for c in calls {
        answers.push(c.await.unwrap().unwrap());
    }
    assert_eq!(runs.load(Ordering::SeqCst), 1, "one loader ran");
    let value = &answers[0].value;
    assert!(answers.iter().all(|a| &a.value == value), "{answers:?}");
    let computed = answers
        .iter()
        .filter(|a| a.source == Source::Computed)
        .count();
    assert_eq!(computed, 1, "{answers:?}");

    // A hit never runs its loader.
    let counted = runs.clone();
    let hit = cache
        .get_with("k", async move {
            counted.fetch_add(1, Ordering::SeqCst);
            Ok::<_, std::io::Error>("not this".to_string())
        })
        .await
        .unwrap();
    assert_eq!((hit.source, &hit.value), (Source::Hit, value));
    assert_eq!(runs.load(Ordering::SeqCst), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_origins_own_error_comes_back_to_every_caller() {
    let redis = TestRedis::start().await;
    let cache: Cache<String> = Cache::builder()
        .redis(redis.url.as_str())
        .origin(|_key: String| async move {
            sleep(Duration::from_millis(100)).await;
            Err::<String, _>(Upstream { status: 503 })
        })
        .build()
        .await
        .unwrap();
    let mut calls = Vec::new();
    for _ in 0..5 {
        let cache = cache.clone();
        calls.push(tokio::spawn(async move { cache.get("k").await }));
    }
    let mut errors = Vec::new();
    for c in calls {
        match c.await.unwrap() {
            Err(CacheError::Origin(e)) => errors.push(e),
            other => panic!("not the origin's error: {other:?}"),
        }
    }
    for e in &errors {
        assert_eq!(
            e.downcast_ref::<Upstream>(),
            Some(&Upstream { status: 503 })
        );
        assert_eq!(e.to_string(), "upstream answered 503");
    }
    // One flight: its one error, shared by its callers.
    assert!(errors.iter().all(|e| *e == errors[0]));
    // The chain a service walks: CacheError -> OriginError -> Upstream.
    let top = CacheError::Origin(errors[0].clone());
    let inner = std::error::Error::source(&top)
        .and_then(std::error::Error::source)
        .and_then(|e| e.downcast_ref::<Upstream>());
    assert_eq!(inner, Some(&Upstream { status: 503 }));

    // A loader's error too.
    let r = cache
        .get_with("other", async {
            Err::<String, _>(Upstream { status: 429 })
        })
        .await;
    match r {
        Err(CacheError::Origin(e)) => {
            assert_eq!(
                e.downcast_ref::<Upstream>(),
                Some(&Upstream { status: 429 })
            )
        }
        other => panic!("not the loader's error: {other:?}"),
    }
    // A timeout has no error of the origin's to give.
    let slow: Cache<String> = Cache::builder()
        .redis(redis.url.as_str())
        .origin_timeout(Duration::from_millis(50))
        .origin(|_key: String| async move {
            sleep(Duration::from_millis(500)).await;
            Ok::<_, Upstream>("late".to_string())
        })
        .build()
        .await
        .unwrap();
    // Past its timeout: failed for the caller and for the follower of its
    // flight, with that cause.
    let (first, second) = tokio::join!(slow.get("k"), slow.get("k"));
    for got in [first, second] {
        assert_eq!(
            got.unwrap_err(),
            CacheError::Failed(FailCause::OriginTimeout)
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_entry_can_have_its_own_ttl() {
    let redis = TestRedis::start().await;
    let calls = Arc::new(AtomicU64::new(0));
    let cache: Cache<String> = Cache::builder()
        .redis(redis.url.as_str())
        .ttl(Duration::from_secs(60))
        .ttl_for(|key, value: &String| {
            (key.starts_with("short") || value == "brief").then(|| Duration::from_millis(300))
        })
        .origin({
            let calls = calls.clone();
            move |key: String| {
                let calls = calls.clone();
                async move {
                    calls.fetch_add(1, Ordering::SeqCst);
                    Ok::<_, String>(format!("value of {key}"))
                }
            }
        })
        .build()
        .await
        .unwrap();
    cache.get("short:1").await.unwrap();
    cache.get("long:1").await.unwrap();
    settled(&[&cache]).await;
    let short = redis.pttl(&value_key("short:1")).await;
    let long = redis.pttl(&value_key("long:1")).await;
    assert!((1..=300).contains(&short), "short entry: PTTL {short}");
    assert!(long > 59_000, "long entry: PTTL {long}");

    // `set_with_ttl`, and `set` through `ttl_for`.
    assert!(cache
        .set_with_ttl("given", &"v".to_string(), Duration::from_millis(400))
        .await
        .unwrap());
    let given = redis.pttl(&value_key("given")).await;
    assert!((1..=400).contains(&given), "set_with_ttl: PTTL {given}");
    assert!(cache.set("plain", &"brief".to_string()).await.unwrap());
    let plain = redis.pttl(&value_key("plain")).await;
    assert!(
        (1..=300).contains(&plain),
        "set through ttl_for: PTTL {plain}"
    );

    // Past its own TTL the short entry is recomputed; the long one is not.
    let before = calls.load(Ordering::SeqCst);
    sleep(Duration::from_millis(450)).await;
    assert_eq!(cache.get("short:1").await.unwrap().source, Source::Computed);
    assert_eq!(cache.get("long:1").await.unwrap().source, Source::Hit);
    assert_eq!(calls.load(Ordering::SeqCst), before + 1);
}

/// A deadline no longer than the Redis commands a miss sends before its
/// origin call leaves the origin no time when Redis is down: refused, by
/// its numbers. Built with Redis unreachable: the check comes first.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_deadline_that_leaves_the_origin_no_time_is_refused() {
    let builder = || {
        Cache::<String>::builder()
            .redis("redis://127.0.0.1:1")
            .origin(|k: String| async move { Ok::<_, String>(k) })
    };
    // The read, the claim and the re-check: 3 × 100 ms.
    let refused = builder()
        .deadline(Duration::from_millis(300))
        .build()
        .await
        .err()
        .expect("a 300 ms deadline against 3 × 100 ms of Redis is refused");
    let said = refused.to_string();
    for number in ["300 ms", "100 ms", "3 ×"] {
        assert!(said.contains(number), "{number} in {said}");
    }
    // A longer Redis timeout counts as such.
    let said = builder()
        .redis_timeout(Duration::from_millis(200))
        .deadline(Duration::from_millis(500))
        .build()
        .await
        .err()
        .expect("500 ms against 3 × 200 ms is refused")
        .to_string();
    assert!(said.contains("600 ms"), "{said}");
    // No claim and no flight: the read alone is on the path.
    let read_only = builder()
        .claim(ClaimMode::Off)
        .singleflight(false)
        .deadline(Duration::from_millis(150))
        .build()
        .await;
    assert!(read_only.is_ok(), "{:?}", read_only.err());
    // A little time left is built (with a warning: tests/observe.rs), as
    // are the defaults.
    assert!(builder()
        .deadline(Duration::from_millis(301))
        .build()
        .await
        .is_ok());
    assert!(builder().build().await.is_ok());
}

/// `peek` reads without computing (issue 37, "a read-only peek"): a key
/// with nothing is `None`, with no origin call, no claim and nothing
/// written; a value set is `Some`; a stale one (inside its stale window,
/// which `get` would serve) is `None`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn peek_reads_a_fresh_value_and_computes_nothing() {
    let redis = TestRedis::start().await;
    let calls = Arc::new(AtomicU64::new(0));
    let cache: Cache<String> = {
        let calls = calls.clone();
        Cache::builder()
            .redis(redis.url.as_str())
            .ttl(Duration::from_secs(60))
            .stale(Duration::from_secs(60))
            .origin(move |key: String| {
                calls.fetch_add(1, Ordering::SeqCst);
                async move { Ok::<_, String>(format!("{key} computed")) }
            })
            .build()
            .await
            .unwrap()
    };
    assert_eq!(cache.peek("k").await, Ok(None));
    settled(&[&cache]).await;
    assert_eq!(calls.load(Ordering::SeqCst), 0, "peek called the origin");
    assert!(!redis.exists(&value_key("k")).await);
    assert!(!redis.exists(&lock_key("k")).await);
    cache.set("k", &"set".to_string()).await.unwrap();
    assert_eq!(cache.peek("k").await, Ok(Some("set".to_string())));
    // Stale: fresh for 1 ms, read well after (a sleep is never shorter).
    cache
        .set_with_ttl("s", &"old".to_string(), Duration::from_millis(1))
        .await
        .unwrap();
    sleep(Duration::from_millis(20)).await;
    assert_eq!(cache.peek("s").await, Ok(None));
    assert_eq!(calls.load(Ordering::SeqCst), 0);
    let got = cache.get("s").await.unwrap();
    assert_eq!((got.value.as_str(), got.source), ("old", Source::Stale));
    assert!(matches!(
        cache.peek("").await,
        Err(CacheError::InvalidKey(_))
    ));
}
