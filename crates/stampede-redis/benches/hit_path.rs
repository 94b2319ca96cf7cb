//! The hit path: `Cache::get` on a fresh value against a raw `GET` round
//! trip on the same connection (issue 27: a hit should cost about one
//! round trip).
//!
//! - `hit/cache_get`: `Cache::<String>::get` on a key whose fresh value is
//!   in Redis: the first read in the caller's own future (no task on a
//!   hit), the read path's machine, one `HMGET` of four fields of the
//!   value hash (`v version fresh neg`; the whole row only for a value
//!   that is not fresh), the JSON decode.
//! - `hit/raw_get`: `GET` of a string key holding the same bytes, on a
//!   clone of the connection the cache was built with (one multiplexed
//!   connection), decoded the same way.
//! - `hit/raw_hmget`: the whole row by hand, as the cache's read sent it
//!   before it asked for four fields first: `HMGET value:{k} v version
//!   fresh stale neg delta` on the same clone, its reply parsed into the
//!   same six values, the payload decoded the same way.
//! - `hit/raw_hmget4`: `HMGET value:{k} v version fresh neg` by hand, what
//!   the cache's read sends now, parsed and decoded the same way (the
//!   cache's command without the cache's own work).
//! - `hit/raw_hmget_timed`: `hit/raw_hmget` inside `tokio::time::timeout`
//!   of the Redis timeout, as the driver bounds every command.
//!
//! The `client/` groups time the client's own share of a read without
//! Redis: the command packed, the reply's bytes parsed and converted, the
//! payload decoded (`get`, `hmget` of the whole row), and the packing and
//! the parse alone.
//!
//! All run in turn inside a task of the runtime (where a handler runs),
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
    type Row = (
        Option<Vec<u8>>,
        Option<u32>,
        Option<u64>,
        Option<u64>,
        Option<u64>,
        Option<u64>,
    );
    const FIELDS: [&str; 6] = ["v", "version", "fresh", "stale", "neg", "delta"];
    g.bench_function("raw_hmget", |b| {
        b.to_async(&rt).iter_custom(|iters| {
            let con = con.clone();
            in_task(iters, move || {
                let mut con = con.clone();
                async move {
                    let row: Row = redis::cmd("HMGET")
                        .arg("value:{k}")
                        .arg(&FIELDS[..])
                        .query_async(&mut con)
                        .await
                        .unwrap();
                    let v: String = serde_json::from_slice(row.0.as_deref().unwrap()).unwrap();
                    assert!(!v.is_empty() && row.2.is_some());
                }
            })
        })
    });
    g.bench_function("raw_hmget4", |b| {
        b.to_async(&rt).iter_custom(|iters| {
            let con = con.clone();
            in_task(iters, move || {
                let mut con = con.clone();
                async move {
                    type Short = (Option<Vec<u8>>, Option<u32>, Option<u64>, Option<u64>);
                    let row: Short = redis::cmd("HMGET")
                        .arg("value:{k}")
                        .arg(&["v", "version", "fresh", "neg"][..])
                        .query_async(&mut con)
                        .await
                        .unwrap();
                    let v: String = serde_json::from_slice(row.0.as_deref().unwrap()).unwrap();
                    assert!(!v.is_empty() && row.2.is_some());
                }
            })
        })
    });
    g.bench_function("raw_hmget_timed", |b| {
        b.to_async(&rt).iter_custom(|iters| {
            let con = con.clone();
            in_task(iters, move || {
                let mut con = con.clone();
                async move {
                    let row: Row = tokio::time::timeout(
                        stampede_redis::cache::REDIS_TIMEOUT,
                        redis::cmd("HMGET")
                            .arg("value:{k}")
                            .arg(&FIELDS[..])
                            .query_async(&mut con),
                    )
                    .await
                    .unwrap()
                    .unwrap();
                    let v: String = serde_json::from_slice(row.0.as_deref().unwrap()).unwrap();
                    assert!(!v.is_empty() && row.2.is_some());
                }
            })
        })
    });
    g.finish();
}

/// The client's own share of a read, without Redis: the command packed
/// as the connection sends it, the reply's bytes (as Redis answers) parsed
/// and converted to the caller's types, and the payload decoded.
fn client(c: &mut Criterion) {
    let json = br#""a profile of some forty bytes, give or take""#;
    let mut get_reply = format!("${}\r\n", json.len()).into_bytes();
    get_reply.extend_from_slice(json);
    get_reply.extend_from_slice(b"\r\n");
    let fields: [&[u8]; 5] = [b"123456", b"1764700000000", b"1764700300000", b"0", b"1234"];
    let mut hmget_reply = format!("*6\r\n${}\r\n", json.len()).into_bytes();
    hmget_reply.extend_from_slice(json);
    hmget_reply.extend_from_slice(b"\r\n");
    for f in fields {
        hmget_reply.extend_from_slice(format!("${}\r\n", f.len()).as_bytes());
        hmget_reply.extend_from_slice(f);
        hmget_reply.extend_from_slice(b"\r\n");
    }
    let mut g = c.benchmark_group("client");
    g.bench_function("get", |b| {
        b.iter(|| {
            let packed = redis::cmd("GET").arg("raw:k").get_packed_command();
            let v = redis::parse_redis_value(&get_reply).unwrap();
            let bytes: Vec<u8> = redis::from_owned_redis_value(v).unwrap();
            let s: String = serde_json::from_slice(&bytes).unwrap();
            (packed.len(), s.len())
        })
    });
    g.bench_function("hmget", |b| {
        b.iter(|| {
            let packed = redis::cmd("HMGET")
                .arg(format!("value:{{{}}}", "k"))
                .arg(&["v", "version", "fresh", "stale", "neg", "delta"][..])
                .get_packed_command();
            let v = redis::parse_redis_value(&hmget_reply).unwrap();
            type Row = (
                Option<Vec<u8>>,
                Option<u32>,
                Option<u64>,
                Option<u64>,
                Option<u64>,
                Option<u64>,
            );
            let row: Row = redis::from_owned_redis_value(v).unwrap();
            let s: String = serde_json::from_slice(row.0.as_deref().unwrap()).unwrap();
            (packed.len(), s.len(), row.2)
        })
    });
    g.bench_function("hmget_pack", |b| {
        b.iter(|| {
            redis::cmd("HMGET")
                .arg(format!("value:{{{}}}", "k"))
                .arg(&["v", "version", "fresh", "stale", "neg", "delta"][..])
                .get_packed_command()
        })
    });
    g.bench_function("hmget_parse", |b| {
        b.iter(|| redis::parse_redis_value(&hmget_reply).unwrap())
    });
    g.bench_function("get_parse", |b| {
        b.iter(|| redis::parse_redis_value(&get_reply).unwrap())
    });
    g.finish();
}

criterion_group!(benches, hit, client);
criterion_main!(benches);
