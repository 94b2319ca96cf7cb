//! `hit/cache_get` against `hit/raw_get` (benches/hit_path.rs) paired
//! round by round, for a ratio that a loaded machine moves less: each
//! round times a batch of `Cache::get` hits and then a batch of raw `GET`s
//! of the same payload on a clone of the same connection, one after the
//! other in the same task, so both see the same load; the report is the
//! median and quartiles of the rounds' ratios, and of the time a hit takes
//! above the round trip. Only public API (`Cache::set`, `Cache::get`), so
//! the same file measures any version of the cache.
//!
//! Run: `cargo bench -p stampede-redis --bench hit_ratio` (redis-server on
//! PATH); `ROUNDS` and `BATCH` in the environment change the defaults (60
//! rounds of 2,000 calls each).

use std::time::Instant;

use stampede_redis::cache::Source;

mod support;
use support::{hit_fixture, raw_gets, runtime, BenchRedis};

fn env(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn quartiles(mut v: Vec<f64>) -> (f64, f64, f64) {
    v.sort_by(f64::total_cmp);
    let at = |q: f64| v[((v.len() - 1) as f64 * q).round() as usize];
    (at(0.25), at(0.5), at(0.75))
}

fn main() {
    // `cargo bench` passes `--bench`; this bench takes no filter.
    let (rounds, batch) = (env("ROUNDS", 60), env("BATCH", 2000));
    let rt = runtime();
    let redis = BenchRedis::start();
    let value = "a profile of some forty bytes, give or take".to_string();
    let (ratios, above, raw) = rt.block_on(async move {
        let (cache, con) = hit_fixture(&redis.url, &value).await;
        let mut raw = con.clone();
        tokio::spawn(async move {
            let (mut ratios, mut above, mut raws) = (Vec::new(), Vec::new(), Vec::new());
            // The first round warms up and is not counted.
            for round in 0..=rounds {
                let t = Instant::now();
                for _ in 0..batch {
                    let got = cache.get("k").await.unwrap();
                    assert_eq!(got.source, Source::Hit);
                }
                let hit = t.elapsed().as_secs_f64() / batch as f64;
                let get = raw_gets(&mut raw, batch).await / batch as f64;
                if round > 0 {
                    ratios.push(hit / get);
                    above.push((hit - get) * 1e6);
                    raws.push(get * 1e6);
                }
            }
            (ratios, above, raws)
        })
        .await
        .unwrap()
    });
    let (r25, r50, r75) = quartiles(ratios);
    let (a25, a50, a75) = quartiles(above);
    let (g25, g50, g75) = quartiles(raw);
    println!("hit_ratio: {rounds} rounds of {batch} calls each");
    println!("  cache_get / raw_get: median {r50:.3}x (quartiles {r25:.3}-{r75:.3})");
    println!("  above the GET:       median {a50:.2} µs (quartiles {a25:.2}-{a75:.2})");
    println!("  raw_get:             median {g50:.2} µs (quartiles {g25:.2}-{g75:.2})");
}
