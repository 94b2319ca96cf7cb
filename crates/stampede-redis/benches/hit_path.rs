//! The hit path: `Cache::get` on a fresh value against a raw `GET` round
//! trip on the same connection (issue 27: a hit should cost at most 1.1x
//! one round trip).
//!
//! - `hit/cache_get`: `Cache::<String>::get` on a key whose fresh value is
//!   in Redis: the first read in the caller's own future (no task on a
//!   hit), the read path's machine, one `GET` of the value row
//!   (`stampede_redis::row`: a header and the payload), the header's
//!   parse, the JSON decode.
//! - `hit/raw_get`: `GET` of a string key holding the payload's bytes
//!   alone, on a clone of the connection the cache was built with (one
//!   multiplexed connection), decoded the same way.
//! - `hit/raw_row`: `GET value:{k}` by hand on the same clone, its header
//!   parsed and its payload decoded the same way: the cache's command
//!   without the cache's own work.
//! - `hit/raw_get_timed`: `hit/raw_get` inside `tokio::time::timeout`, as
//!   the driver bounds every command.
//!
//! Every bound here (the cache's Redis timeout and deadline, the timed
//! GET's) is `support::BENCH_TIMEOUT`, a minute: on a loaded machine a
//! reply may take longer than the service's 100 ms, and a bench must
//! measure it, not panic (`Elapsed`) or read it as a miss.
//!
//! The `client/` group times the client's own share of a read without
//! Redis: the command packed, the reply's bytes parsed and converted, the
//! payload decoded (`get`; `row`, with the row's header parsed too), and
//! the parse alone.
//!
//! All run in turn inside a task of the runtime (where a handler runs),
//! against a redis-server the bench starts on a free loopback port.
//!
//! Run: `cargo bench -p stampede-redis --bench hit_path` (redis-server on
//! PATH).

use criterion::{criterion_group, criterion_main, Criterion};
use stampede_redis::cache::Source;
use stampede_redis::row::Header;

mod support;
use support::{hit_fixture, in_task, runtime, BenchRedis, BENCH_TIMEOUT};

fn hit(c: &mut Criterion) {
    let rt = runtime();
    let redis = BenchRedis::start();
    let value = "a profile of some forty bytes, give or take".to_string();
    let (cache, con) = rt.block_on(hit_fixture(&redis.url, &value));

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
    g.bench_function("raw_row", |b| {
        b.to_async(&rt).iter_custom(|iters| {
            let con = con.clone();
            in_task(iters, move || {
                let mut con = con.clone();
                async move {
                    let row: Vec<u8> = redis::cmd("GET")
                        .arg(stampede_redis::value_key("k"))
                        .query_async(&mut con)
                        .await
                        .unwrap();
                    let (header, at) = Header::parse(&row).unwrap();
                    let v: String = serde_json::from_slice(&row[at..]).unwrap();
                    assert!(!v.is_empty() && header.version.is_some());
                }
            })
        })
    });
    g.bench_function("raw_get_timed", |b| {
        b.to_async(&rt).iter_custom(|iters| {
            let con = con.clone();
            in_task(iters, move || {
                let mut con = con.clone();
                async move {
                    let bytes: Vec<u8> = tokio::time::timeout(
                        BENCH_TIMEOUT,
                        redis::cmd("GET").arg("raw:k").query_async(&mut con),
                    )
                    .await
                    .unwrap()
                    .unwrap();
                    let v: String = serde_json::from_slice(&bytes).unwrap();
                    assert!(!v.is_empty());
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
    let bulk = |bytes: &[u8]| {
        let mut reply = format!("${}\r\n", bytes.len()).into_bytes();
        reply.extend_from_slice(bytes);
        reply.extend_from_slice(b"\r\n");
        reply
    };
    let get_reply = bulk(json);
    let header = Header {
        fence: 12,
        negative_until: 0,
        version: Some(123_456),
        fresh_until: 1_764_700_000_000,
        stale_until: 1_764_700_300_000,
        delta: 1234,
    };
    let row_reply = bulk(&header.encode(json));
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
    g.bench_function("row", |b| {
        b.iter(|| {
            let packed = redis::cmd("GET")
                .arg(stampede_redis::value_key("k"))
                .get_packed_command();
            let v = redis::parse_redis_value(&row_reply).unwrap();
            let row: Vec<u8> = redis::from_owned_redis_value(v).unwrap();
            let (header, at) = Header::parse(&row).unwrap();
            let s: String = serde_json::from_slice(&row[at..]).unwrap();
            (packed.len(), s.len(), header.fresh_until)
        })
    });
    g.bench_function("row_header_parse", |b| {
        let row = header.encode(json);
        b.iter(|| Header::parse(&row).unwrap())
    });
    g.bench_function("get_parse", |b| {
        b.iter(|| redis::parse_redis_value(&get_reply).unwrap())
    });
    g.finish();
}

criterion_group!(benches, hit, client);
criterion_main!(benches);
