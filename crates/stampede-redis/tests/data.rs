//! The data a cache leaves in Redis (issue 27, section 2), against a real
//! `redis-server`: fencing counters expire with their value, `ClaimStore`
//! and `Cache` read and write one layout, a value that does not decode is a
//! miss that the recompute overwrites, fenced and unfenced writers never
//! lock each other out, and a release tells what it found.

mod common;

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use common::{settled, Rows, TestRedis};
use serde::{Deserialize, Serialize};
use stampede_redis::cache::{Cache, CacheError, CacheStats, FailCause, Fetched, Source};
use stampede_redis::row::{wall_ms, Header};
use stampede_redis::{fence_key, lock_key, value_key, ClaimStore};
use tokio::time::sleep;

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
struct Item {
    by: String,
    n: u64,
}

/// A cache named `by` whose 50 ms origin answers `Item { by, n }`, `n`
/// counting the calls of every cache made with the same counter.
async fn cache(url: &str, by: &str, calls: &Arc<AtomicU64>, fenced: bool) -> Cache<Item> {
    let (by, calls) = (by.to_string(), calls.clone());
    Cache::builder()
        .redis(url)
        .ttl(Duration::from_millis(300))
        .stale(Duration::from_secs(5))
        .fenced_writes(fenced)
        .origin(move |_key: String| {
            let (by, calls) = (by.clone(), calls.clone());
            async move {
                let n = calls.fetch_add(1, Ordering::SeqCst);
                sleep(Duration::from_millis(50)).await;
                Ok::<_, String>(Item { by, n })
            }
        })
        .build()
        .await
        .expect("a cache")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fencing_counters_expire_with_their_value() {
    let redis = TestRedis::start().await;
    let calls = Arc::new(AtomicU64::new(0));
    let c = cache(&redis.url, "a", &calls, true).await;
    c.get("k").await.unwrap();
    settled(&[&c]).await;
    let value = redis.pttl(&value_key("k")).await;
    let fence = redis.pttl(&fence_key("k")).await;
    // The value is kept for its TTL and stale window (5.3 s); the counter
    // at least as long, and not forever (-1).
    assert!(value > 5000, "value:{{k}} has {value} ms left");
    assert!(
        fence >= value && fence <= 3200 + 5300,
        "fence:{{k}} has {fence} ms left, the value {value} ms"
    );

    // The claim store alike: from the claim, then from the write.
    let store = ClaimStore::connect(&redis.url)
        .await
        .unwrap()
        .fence_life(Duration::from_millis(500));
    let ttl = Duration::from_millis(200);
    let (_t, fence) = store.claim_fenced("s", ttl).await.unwrap().unwrap();
    let left = redis.pttl(&fence_key("s")).await;
    assert!(left > 0 && left <= 500, "after the claim: {left} ms");
    assert!(store
        .write_fenced("s", b"x", fence, Duration::from_secs(2))
        .await
        .unwrap());
    let left = redis.pttl(&fence_key("s")).await;
    assert!(left > 1500 && left <= 2000, "after the write: {left} ms");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_claim_store_and_the_cache_share_one_value_layout() {
    let redis = TestRedis::start().await;
    let calls = Arc::new(AtomicU64::new(0));
    let c = cache(&redis.url, "cache", &calls, true).await;
    let store = ClaimStore::connect(&redis.url).await.unwrap();
    // Written by the store, read by the cache.
    let json = br#"{"by":"store","n":7}"#;
    let (_t, fence) = store
        .claim_fenced("one", Duration::from_secs(1))
        .await
        .unwrap()
        .unwrap();
    assert!(store
        .write_fenced("one", json, fence, Duration::from_secs(10))
        .await
        .unwrap());
    let got = c.get("one").await.unwrap();
    assert_eq!(
        got,
        Fetched {
            value: Item {
                by: "store".into(),
                n: 7
            },
            source: Source::Hit
        }
    );
    assert_eq!(calls.load(Ordering::SeqCst), 0);
    // Written by the cache, read by the store, with the claim's fence.
    c.get("two").await.unwrap();
    settled(&[&c]).await;
    let (payload, fence) = store.read("two").await.unwrap().expect("written");
    assert_eq!(payload, br#"{"by":"cache","n":0}"#.to_vec());
    assert!(fence >= 1, "fenced writes carry the claim's fence: {fence}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_value_that_does_not_decode_is_a_miss_and_is_overwritten() {
    let redis = TestRedis::start().await;
    let calls = Arc::new(AtomicU64::new(0));
    let c = cache(&redis.url, "new", &calls, false).await;
    // Another schema's value, fresh for a minute.
    let far = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as u64
        + 60_000;
    let other = Header {
        version: Some(1),
        fresh_until: far,
        stale_until: far,
        ..Header::default()
    };
    redis
        .put(&value_key("k"), &other.encode(br#"{"name":"old schema"}"#))
        .await;
    let got = c.get("k").await.expect("a miss, recomputed");
    assert_eq!(got.source, Source::Computed);
    settled(&[&c]).await;
    // Its first read and its re-check (after winning the claim) each met
    // it: one decode miss, the request's.
    let misses = c.stats().decode_misses;
    assert_eq!(misses, 1);
    let again = c.get("k").await.unwrap();
    assert_eq!(
        again,
        Fetched {
            value: Item {
                by: "new".into(),
                n: 0
            },
            source: Source::Hit
        },
        "the recompute overwrote it"
    );
    assert_eq!(c.stats().decode_misses, misses);
}

/// What a fresh read of `key` answers, through `c`, once the refresh the
/// last request started has landed.
async fn stored(c: &Cache<Item>, key: &str) -> Fetched<Item> {
    let got = c.get(key).await.unwrap();
    assert_eq!(got.source, Source::Hit, "{got:?}");
    got
}

/// A rolling deploy turning fenced writes on (or off): instances with
/// either setting write the same key in turn, each refresh behind a stale
/// answer. Every write lands; nobody is locked out.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fenced_and_unfenced_writers_never_lock_each_other_out() {
    let redis = TestRedis::start().await;
    let calls = Arc::new(AtomicU64::new(0));
    let fenced = cache(&redis.url, "fenced", &calls, true).await;
    let unfenced = cache(&redis.url, "unfenced", &calls, false).await;
    for (key, order) in [
        ("on", [&fenced, &unfenced, &fenced, &unfenced]),
        ("off", [&unfenced, &fenced, &unfenced, &fenced]),
    ] {
        for (i, writer) in order.iter().enumerate() {
            // The first computes; the next each find the value stale (its
            // 300 ms are up), answer it and refresh it behind.
            let got = writer.get(key).await.unwrap();
            let expect = if i == 0 {
                Source::Computed
            } else {
                Source::Stale
            };
            assert_eq!(got.source, expect, "{key}, write {i}: {got:?}");
            settled(&[&fenced, &unfenced]).await;
            let now = stored(writer, key).await;
            let by = if std::ptr::eq(*writer, &fenced) {
                "fenced"
            } else {
                "unfenced"
            };
            assert_eq!(now.value.by, by, "{key}, write {i}: refused");
            sleep(Duration::from_millis(350)).await;
        }
    }
    let refused = fenced.stats().writes_refused + unfenced.stats().writes_refused;
    assert_eq!(refused, 0);
}

/// Each release says what it found, and the cache counts it: its own claim
/// released, nobody holding it (it expired), or another holder's.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_release_tells_released_expired_and_taken_apart() {
    let redis = TestRedis::start().await;
    let calls = Arc::new(AtomicU64::new(0));
    let c = cache(&redis.url, "a", &calls, false).await;
    let mut raw = redis.connection().await;
    for (key, meanwhile) in [("own", None), ("gone", Some("DEL")), ("other", Some("SET"))] {
        let request = {
            let c = c.clone();
            tokio::spawn(async move { c.get(key).await })
        };
        // While the origin runs (50 ms), the claim expires, or expires and
        // another holder takes it.
        sleep(Duration::from_millis(20)).await;
        let mut cmd = redis::cmd(meanwhile.unwrap_or("EXISTS"));
        cmd.arg(lock_key(key));
        if meanwhile == Some("SET") {
            cmd.arg("another-holder");
        }
        let _: redis::Value = cmd.query_async(&mut raw).await.unwrap();
        request.await.unwrap().unwrap();
        settled(&[&c]).await;
    }
    let CacheStats {
        released,
        release_expired,
        release_taken,
        ..
    } = c.stats();
    assert_eq!((released, release_expired, release_taken), (1, 1, 1));
    assert_eq!(
        redis.pttl(&lock_key("other")).await,
        -1,
        "another holder's claim is left alone"
    );
}

/// A fill whose write is refused as older (fenced writes: a newer holder
/// wrote meanwhile) answers the newer value, read back, to its caller and
/// to every follower of its flight.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_fill_refused_as_older_answers_the_newer_value() {
    let redis = TestRedis::start().await;
    let calls = Arc::new(AtomicU64::new(0));
    let c = cache(&redis.url, "late", &calls, true).await;
    let requests: Vec<_> = (0..3)
        .map(|_| {
            let c = c.clone();
            tokio::spawn(async move { c.get("k").await })
        })
        .collect();
    // While the origin runs (50 ms), the claim expires and a newer holder
    // computes and writes first.
    sleep(Duration::from_millis(20)).await;
    redis
        .newer_holder_writes("k", br#"{"by":"newer","n":99}"#)
        .await;
    let newer = Item {
        by: "newer".into(),
        n: 99,
    };
    for r in requests {
        assert_eq!(r.await.unwrap().unwrap().value, newer);
    }
    settled(&[&c]).await;
    assert_eq!(c.stats().writes_refused, 1);
    assert_eq!(calls.load(Ordering::SeqCst), 1);
}

/// A cache whose origin always fails, its failures cached for 2 s.
async fn failing(url: &str) -> Cache<Item> {
    Cache::builder()
        .redis(url)
        .negative_ttl(Duration::from_secs(2))
        .origin(|_key: String| async { Err::<Item, _>("down") })
        .build()
        .await
        .unwrap()
}

/// A failure cached in Redis (negative caching) on a key with no value
/// expires with its mark: the row it creates is not kept forever.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failure_mark_expires_with_it() {
    let redis = TestRedis::start().await;
    let c = failing(&redis.url).await;
    assert!(matches!(c.get("k").await, Err(CacheError::Origin(_))));
    settled(&[&c]).await;
    let left = redis.pttl(&value_key("k")).await;
    assert!(left > 1500 && left <= 2000, "value:{{k}}: {left} ms left");
    // The mark answers meanwhile, as a failure remembered: no second
    // origin call.
    assert_eq!(
        c.get("k").await.unwrap_err(),
        CacheError::Failed(FailCause::Remembered)
    );
    assert_eq!(c.origin_calls(), 1);
}

/// Writes `value:{key}` as it is given (a row in any state, as other
/// writers and time leave it), replacing what the key held.
async fn seed_row(redis: &TestRedis, key: &str, header: Header, payload: &[u8]) {
    redis.put(&value_key(key), &header.encode(payload)).await;
}

/// A read decides on the whole stored row, whichever state it is in: a
/// fresh value is a hit even under a failure mark; a value past its TTL is
/// served stale in its stale window (under a failure mark too) and is a
/// miss after it; a failure mark with no value answers the failure; a
/// payload that does not decode is a miss, counted once per read that
/// found it, fresh or stale. (A read is one `GET` of the row, decided on
/// its header: each state here is told apart by it alone.)
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_state_of_a_stored_row_is_read_as_it_stands() {
    let redis = TestRedis::start().await;
    let calls = Arc::new(AtomicU64::new(0));
    let c: Cache<Item> = {
        let calls = calls.clone();
        Cache::builder()
            .redis(redis.url.as_str())
            .ttl(Duration::from_secs(60))
            .stale(Duration::from_secs(60))
            .negative_ttl(Duration::from_secs(60))
            .origin(move |_key: String| {
                let calls = calls.clone();
                async move {
                    let n = calls.fetch_add(1, Ordering::SeqCst);
                    Ok::<_, String>(Item {
                        by: "origin".into(),
                        n,
                    })
                }
            })
            .build()
            .await
            .unwrap()
    };
    let seeded = Item {
        by: "seed".into(),
        n: 7,
    };
    let payload = serde_json::to_vec(&seeded).unwrap();
    let now = wall_ms();
    let at = |ms: i64| (now as i64 + ms) as u64;
    let row = |fresh: i64, stale: i64, neg: i64| Header {
        fence: 3,
        negative_until: if neg == 0 { 0 } else { at(neg) },
        version: Some(42),
        fresh_until: at(fresh),
        stale_until: at(stale),
        delta: 1000,
    };
    // Every refresh's claim is held elsewhere: what is answered is what
    // the read found, never a recompute racing it.
    for key in ["fresh", "stale", "marked stale"] {
        redis.hold_claim(key, Duration::from_secs(30)).await;
    }

    seed_row(&redis, "fresh", row(30_000, 60_000, 30_000), &payload).await;
    let got = c.get("fresh").await.unwrap();
    assert_eq!((got.value, got.source), (seeded.clone(), Source::Hit));

    seed_row(&redis, "stale", row(-1_000, 30_000, 0), &payload).await;
    let got = c.get("stale").await.unwrap();
    assert_eq!((got.value, got.source), (seeded.clone(), Source::Stale));

    seed_row(
        &redis,
        "marked stale",
        row(-1_000, 30_000, 30_000),
        &payload,
    )
    .await;
    let got = c.get("marked stale").await.unwrap();
    assert_eq!((got.value, got.source), (seeded.clone(), Source::Stale));

    let mark = Header {
        negative_until: at(30_000),
        ..Header::default()
    };
    seed_row(&redis, "marked", mark, b"").await;
    assert_eq!(
        c.get("marked").await.unwrap_err(),
        CacheError::Failed(FailCause::Remembered),
        "the failure mark answers"
    );
    assert_eq!(calls.load(Ordering::SeqCst), 0, "nothing recomputed yet");
    settled(&[&c]).await;

    seed_row(&redis, "expired", row(-2_000, -1_000, 0), &payload).await;
    let got = c.get("expired").await.unwrap();
    assert_eq!(
        (got.value.by.as_str(), got.source),
        ("origin", Source::Computed)
    );
    assert_eq!(
        calls.load(Ordering::SeqCst),
        1,
        "the expired value recomputed"
    );

    seed_row(&redis, "garbage fresh", row(30_000, 60_000, 0), b"not json").await;
    let got = c.get("garbage fresh").await.unwrap();
    assert_eq!(
        (got.value.by.as_str(), got.source),
        ("origin", Source::Computed)
    );
    settled(&[&c]).await;
    // A request counts one, however many of its reads meet it (the first
    // read's, and the re-check's of the request that won the claim).
    let fresh_misses = c.stats().decode_misses;
    assert_eq!(fresh_misses, 1);

    seed_row(&redis, "garbage stale", row(-1_000, 30_000, 0), b"not json").await;
    let answer = c.get("garbage stale").await;
    settled(&[&c]).await;
    assert_eq!(
        c.stats().decode_misses - fresh_misses,
        fresh_misses,
        "as many decode misses stale as fresh: a payload is decoded once per read"
    );
    assert!(
        !matches!(
            answer,
            Ok(Fetched {
                source: Source::Stale | Source::Hit,
                ..
            })
        ),
        "a payload that does not decode is never served: {answer:?}"
    );
}

/// Stores `key`'s value as the crate's versions before the one-string row
/// laid it out: a hash of fields, fresh and servable for a minute, written
/// under `fence` (what a new instance meets in a rolling deploy).
async fn seed_old_hash(redis: &TestRedis, key: &str, payload: &[u8], fence: u64) {
    let far = wall_ms() + 60_000;
    let _: i64 = redis::cmd("HSET")
        .arg(value_key(key))
        .arg("v")
        .arg(payload)
        .arg("version")
        .arg(1)
        .arg("fresh")
        .arg(far)
        .arg("stale")
        .arg(far)
        .arg("neg")
        .arg(0)
        .arg("delta")
        .arg(0)
        .arg("fence")
        .arg(fence)
        .query_async(&mut redis.connection().await)
        .await
        .unwrap();
}

/// A rolling deploy, the new instances' side: a value still in the older
/// versions' layout (a hash) is no value to them, a counted decode miss
/// and not a Redis error, whether a request's first read, its re-check or
/// its poll meets it; the recompute replaces it with a row in the layout,
/// and the fence keeps growing from the hash's. The claim store reads it
/// as no value, refuses a write older than its fence, and a failure mark
/// replaces it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_older_versions_hash_is_a_decode_miss_and_is_replaced() {
    let redis = TestRedis::start().await;
    let calls = Arc::new(AtomicU64::new(0));
    let c = cache(&redis.url, "new", &calls, true).await;
    let old = br#"{"by":"old","n":1}"#;

    // The first read and the re-check after the claim each meet it.
    seed_old_hash(&redis, "k", old, 5).await;
    let got = c.get("k").await.unwrap();
    assert_eq!(
        (got.value.by.as_str(), got.source),
        ("new", Source::Computed)
    );
    settled(&[&c]).await;
    assert_eq!((c.stats().decode_misses, c.stats().redis_errors), (1, 0));
    let (header, payload) = redis.row(&value_key("k")).await.expect("replaced");
    assert_eq!(payload, br#"{"by":"new","n":0}"#.to_vec());
    assert!(
        header.fence > 5,
        "the fence grows from the hash's: {header:?}"
    );
    assert_eq!(c.get("k").await.unwrap().source, Source::Hit);

    // A request that loses the claim polls it, and claims once it is free.
    seed_old_hash(&redis, "polled", old, 0).await;
    redis.hold_claim("polled", Duration::from_millis(300)).await;
    let got = c.get("polled").await.unwrap();
    assert_eq!(
        (got.value.by.as_str(), got.source),
        ("new", Source::Computed)
    );
    settled(&[&c]).await;
    assert_eq!(c.stats().redis_errors, 0, "{:?}", c.stats());
    // One more: the second request's (its first read, polls and re-check).
    assert_eq!(c.stats().decode_misses, 2, "{:?}", c.stats());
    assert!(redis.row(&value_key("polled")).await.is_some());

    // The claim store: no value, and the hash's fence holds.
    let store = ClaimStore::connect(&redis.url).await.unwrap();
    seed_old_hash(&redis, "s", old, 9).await;
    assert_eq!(store.read("s").await.unwrap(), None);
    let ttl = Duration::from_secs(5);
    assert!(!store.write_fenced("s", b"late", 8, ttl).await.unwrap());
    let (_, fence) = store.claim_fenced("s", ttl).await.unwrap().unwrap();
    assert_eq!(fence, 10, "above the hash's fence");
    assert!(store.write_fenced("s", b"x", fence, ttl).await.unwrap());
    assert_eq!(store.read("s").await.unwrap(), Some((b"x".to_vec(), 10)));

    // A failure mark replaces it with a mark alone.
    seed_old_hash(&redis, "failing", old, 0).await;
    let failing = failing(&redis.url).await;
    assert!(failing.get("failing").await.is_err());
    settled(&[&failing]).await;
    let (mark, _) = redis.row(&value_key("failing")).await.expect("a mark");
    assert!(mark.version.is_none() && mark.negative_until > wall_ms());
    let left = redis.pttl(&value_key("failing")).await;
    assert!(left > 0 && left <= 2000, "the mark's row expires: {left}");
}

/// A failure cached over a value (its refresh failed) goes into the row's
/// header: the payload and the row's expiry stay, and the value is served
/// stale under the mark, with no second origin call while it lasts.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failure_mark_over_a_value_keeps_its_payload_and_expiry() {
    let redis = TestRedis::start().await;
    let failing = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let c: Cache<Item> = {
        let failing = failing.clone();
        Cache::builder()
            .redis(redis.url.as_str())
            .ttl(Duration::from_millis(200))
            .stale(Duration::from_secs(10))
            .negative_ttl(Duration::from_secs(5))
            .origin(move |_key: String| {
                let fail = failing.load(Ordering::SeqCst);
                async move {
                    if fail {
                        return Err("down".to_string());
                    }
                    Ok(Item {
                        by: "origin".into(),
                        n: 1,
                    })
                }
            })
            .build()
            .await
            .unwrap()
    };
    assert_eq!(c.get("k").await.unwrap().source, Source::Computed);
    settled(&[&c]).await;
    let (written, payload) = redis.row(&value_key("k")).await.expect("written");
    sleep(Duration::from_millis(300)).await;
    failing.store(true, Ordering::SeqCst);
    // Stale: answered, and its refresh fails behind the answer.
    assert_eq!(c.get("k").await.unwrap().source, Source::Stale);
    settled(&[&c]).await;
    let (marked, kept) = redis.row(&value_key("k")).await.expect("kept");
    assert_eq!(kept, payload);
    assert!(marked.negative_until > wall_ms(), "{marked:?}");
    assert_eq!(
        (marked.version, marked.stale_until),
        (written.version, written.stale_until)
    );
    let left = redis.pttl(&value_key("k")).await;
    assert!(left > 5_000, "the row keeps its own expiry: {left} ms");
    let got = c.get("k").await.unwrap();
    assert_eq!((got.value.n, got.source), (1, Source::Stale));
    assert_eq!(c.origin_calls(), 2, "the mark answers: no third call");
}
