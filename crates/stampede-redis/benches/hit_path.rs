//! The hit path: `Cache::get` on a fresh value against a raw `GET` round
//! trip on the same connection (issue 27: a hit should cost about one
//! round trip).
//!
//! - `hit/cache_get`: `Cache::<String>::get` on a key whose fresh value is
//!   in Redis: the first read in the caller's own future (no task on a
//!   hit), the read path's machine, one `HMGET` of the value hash, the
//!   JSON decode.
//! - `hit/raw_get`: `GET` of a string key holding the same bytes, on a
//!   clone of the connection the cache was built with (one multiplexed
//!   connection), decoded the same way.
//!
//! Both run in turn inside a task of the runtime (where a handler runs),
//! against a redis-server the bench starts on a free loopback port.
//!
//! Run: `cargo bench -p stampede-redis --bench hit_path` (redis-server on
//! PATH).

use std::time::Duration;

use criterion::{criterion_group, criterion_main, Criterion};
use stampede_redis::cache::{Cache, Source};
use stampede_redis::{Conn, Target};

mod support;
use support::{in_task, runtime, BenchRedis};

fn hit(c: &mut Criterion) {
    let rt = runtime();
    let redis = BenchRedis::start();
    let value = "a profile of some forty bytes, give or take".to_string();
    let (cache, con) = rt.block_on(async {
        let con: Conn = Target::parse(&redis.url).connect().await.unwrap();
        let cache: Cache<String> = Cache::builder()
            .connection(con.clone())
            .ttl(Duration::from_secs(3600))
            .origin(|key: String| async move { Ok::<_, String>(key) })
            .build()
            .await
            .unwrap();
        assert!(cache.set("k", &value).await.unwrap());
        assert_eq!(cache.get("k").await.unwrap().source, Source::Hit);
        let mut raw = con.clone();
        let json = serde_json::to_vec(&value).unwrap();
        let _: () = redis::cmd("SET")
            .arg("raw:k")
            .arg(json)
            .query_async(&mut raw)
            .await
            .unwrap();
        (cache, con)
    });

    let mut g = c.benchmark_group("hit");
    g.bench_function("cache_get", |b| {
        b.to_async(&rt).iter_custom(|iters| {
            let cache = cache.clone();
            in_task(iters, move || {
                let cache = cache.clone();
                async move {
                    let got = cache.get("k").await.unwrap();
                    assert_eq!(got.source, Source::Hit);
                }
            })
        })
    });
    g.bench_function("raw_get", |b| {
        b.to_async(&rt).iter_custom(|iters| {
            let con = con.clone();
            in_task(iters, move || {
                let mut con = con.clone();
                async move {
                    let bytes: Vec<u8> = redis::cmd("GET")
                        .arg("raw:k")
                        .query_async(&mut con)
                        .await
                        .unwrap();
                    let v: String = serde_json::from_slice(&bytes).unwrap();
                    assert!(!v.is_empty());
                }
            })
        })
    });
    g.finish();
}

criterion_group!(benches, hit);
criterion_main!(benches);
