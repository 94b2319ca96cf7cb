//! The coherent local copy (issue 37): what a hit from a tracked local copy
//! costs against a raw `GET` of the same payload, and how long after a
//! write on another instance the copy is dropped.
//!
//! - **hit**: 60 rounds (`ROUNDS`), each a batch (`BATCH`, 2,000) of
//!   `Cache::get` answered by the tracked local copy, then a batch of raw
//!   `GET`s of the same payload on a connection of the bench's own, back to
//!   back in one task; the median and quartiles of the rounds' ratios.
//! - **invalidation**: `SAMPLES` (500) times, instance B `set`s the key
//!   while instance A holds a copy of it; the time from just before the
//!   `set` is sent until A has dropped its copy (its invalidation counted,
//!   which happens as the copy is removed), A spinning on its counter with
//!   a yield between looks; then A reads the new value (and copies it) for
//!   the next sample. p50, p90, p99 and the worst.
//!
//! Run: `cargo bench -p stampede-redis --bench coherence` (redis-server on
//! PATH). Only public API.

use std::time::{Duration, Instant};

use stampede_redis::cache::{Cache, Coherence, Source};

mod support;
use support::{raw_gets, runtime, BenchRedis};

fn env(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn at(v: &[f64], q: f64) -> f64 {
    v[((v.len() - 1) as f64 * q).round() as usize]
}

async fn instance(url: &str, copies: bool) -> Cache<String> {
    let b = Cache::builder()
        .redis(url)
        .ttl(Duration::from_secs(3600))
        .origin(|key: String| async move { Ok::<_, String>(key) });
    let b = if copies {
        b.local_copy(Duration::from_secs(3600))
    } else {
        b
    };
    b.build().await.unwrap()
}

fn main() {
    let (rounds, batch, samples) = (env("ROUNDS", 60), env("BATCH", 2000), env("SAMPLES", 500));
    let rt = runtime();
    let redis = BenchRedis::start();
    let url = redis.url.clone();
    let (mut ratios, mut lags) = rt.block_on(async move {
        let a = instance(&url, true).await;
        let b = instance(&url, false).await;
        assert_eq!(a.coherence(), Coherence::Tracked);
        let value = "a profile of some forty bytes, give or take".to_string();
        assert!(b.set("k", &value).await.unwrap());
        let client = redis::Client::open(url.as_str()).unwrap();
        let mut raw = client.get_multiplexed_async_connection().await.unwrap();
        let _: () = redis::cmd("SET")
            .arg("raw:k")
            .arg(serde_json::to_vec(&value).unwrap())
            .query_async(&mut raw)
            .await
            .unwrap();
        tokio::spawn(async move {
            // hit: the copy against a raw GET.
            a.get("k").await.unwrap();
            let mut ratios = Vec::new();
            for round in 0..=rounds {
                let t = Instant::now();
                for _ in 0..batch {
                    let got = a.get("k").await.unwrap();
                    assert_eq!(got.source, Source::Hit);
                }
                let hit = t.elapsed().as_secs_f64();
                let get = raw_gets(&mut raw, batch).await;
                if round > 0 {
                    ratios.push(hit / get);
                }
            }
            let local = a.stats();
            // invalidation: a write on b until a's copy is gone.
            let mut lags = Vec::new();
            for i in 0..samples {
                let seen = a.stats().invalidations;
                let t = Instant::now();
                assert!(b.set("k", &format!("{value} {i}")).await.unwrap());
                while a.stats().invalidations == seen {
                    tokio::task::yield_now().await;
                }
                lags.push(t.elapsed().as_secs_f64() * 1e3);
                // a reads the new value from Redis and copies it.
                assert_eq!(a.get("k").await.unwrap().value, format!("{value} {i}"));
            }
            assert_eq!(local.tracking_lost, 0);
            (ratios, lags)
        })
        .await
        .unwrap()
    });
    ratios.sort_by(f64::total_cmp);
    lags.sort_by(f64::total_cmp);
    println!("coherence: {rounds} rounds of {batch} hits, {samples} invalidations");
    println!(
        "  local copy / raw_get: median {:.4}x (quartiles {:.4}-{:.4})",
        at(&ratios, 0.5),
        at(&ratios, 0.25),
        at(&ratios, 0.75)
    );
    println!(
        "  write -> copy dropped: p50 {:.3} ms, p90 {:.3} ms, p99 {:.3} ms, worst {:.3} ms",
        at(&lags, 0.5),
        at(&lags, 0.9),
        at(&lags, 0.99),
        lags[lags.len() - 1]
    );
}
