//! The adopter's path as a test: `examples/adopter.rs` is an axum service
//! built from the README's first snippet alone (checked here, word for
//! word), and two instances of it (each its own cache, connection and
//! flight table, as two processes have), on one real `redis-server`,
//! answer a burst with one origin call between them.

mod common;

use common::TestRedis;
use stampede_redis::cache::Cache;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// The README's first ```rust block, without the lines rustdoc hides.
fn readme_snippet() -> String {
    let readme = include_str!("../README.md");
    let start = readme.find("```rust").expect("a rust block in the README");
    let body = &readme[start..];
    let body = &body[body.find('\n').unwrap() + 1..];
    let body = &body[..body.find("```").unwrap()];
    body.lines()
        .filter(|l| !(l.starts_with("# ") || *l == "#"))
        .map(|l| format!("{l}\n"))
        .collect()
}

/// The example's code between its two `README` marks.
fn example_block() -> String {
    let example = include_str!("../examples/adopter.rs");
    let begin = "// README: begin\n";
    let start = example.find(begin).expect("the begin mark") + begin.len();
    let end = example.find("// README: end").expect("the end mark");
    example[start..end].to_string()
}

#[test]
fn the_example_is_the_readme_snippet_word_for_word() {
    assert_eq!(example_block(), readme_snippet());
}

/// The example itself, compiled into this test: its `main` only serves
/// what the test serves here.
#[allow(dead_code)]
#[path = "../examples/adopter.rs"]
mod adopter;

/// One instance of the example's service (its own cache, connection and
/// flight table, as a process of its own has) on a free loopback port: its
/// address, and its cache (a clone, to read its counters). It serves until
/// the test's runtime ends.
async fn serve(redis_url: &str) -> (String, Cache<adopter::Profile>) {
    let cache = adopter::profiles(redis_url).await.expect("the cache");
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap().to_string();
    let served = cache.clone();
    tokio::spawn(async move { axum::serve(listener, adopter::app(served)).await });
    (addr, cache)
}

/// `GET path` over plain HTTP/1.1: the status, the `x-cache` header, the
/// body.
async fn get(addr: &str, path: &str) -> (u16, String, String) {
    let mut s = tokio::net::TcpStream::connect(addr).await.unwrap();
    let req = format!("GET {path} HTTP/1.1\r\nHost: test\r\nConnection: close\r\n\r\n");
    s.write_all(req.as_bytes()).await.unwrap();
    let mut raw = String::new();
    s.read_to_string(&mut raw).await.unwrap();
    let (head, body) = raw.split_once("\r\n\r\n").unwrap();
    let status = head.split(' ').nth(1).unwrap().parse().unwrap();
    let source = head
        .lines()
        .find_map(|l| l.strip_prefix("x-cache: "))
        .unwrap_or("")
        .to_string();
    (status, source, body.to_string())
}

/// Bursts the test tries before it gives up on a machine too loaded for
/// the README's Redis timeout (see below).
const BURSTS: u32 = 5;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_instances_of_the_readme_service_make_one_origin_call() {
    let redis = TestRedis::start().await;
    let services = [serve(&redis.url).await, serve(&redis.url).await];
    let redis_errors = || -> u64 { services.iter().map(|(_, c)| c.stats().redis_errors).sum() };
    // The README's service bounds each Redis command by the crate's 100 ms
    // timeout and, past it, serves from the origin (its error policy): on
    // a machine loaded enough to hold a command back that long, a second
    // origin call is the documented answer, not a fault. So a burst in
    // which either instance counted a Redis error proves nothing about
    // the coalescing, and the test bursts again on another profile; every
    // burst is checked for its answers, and one with no Redis error must
    // make exactly one origin call.
    let mut clean = None;
    for burst in 0..BURSTS {
        let id = 42 + burst;
        let errors_before = redis_errors();
        // A burst: 20 requests on each instance for one profile, all at once.
        let mut calls = Vec::new();
        for (addr, _) in &services {
            for _ in 0..20 {
                let addr = addr.clone();
                let path = format!("/profile/{id}");
                calls.push(tokio::spawn(async move { get(&addr, &path).await }));
            }
        }
        let mut sources = Vec::new();
        for c in calls {
            let (status, source, body) = c.await.unwrap();
            assert_eq!(status, 200, "{body}");
            assert_eq!(body, format!(r#"{{"name":"user {id}"}}"#));
            sources.push(source);
        }
        assert!(
            sources
                .iter()
                .all(|s| ["Computed", "Shared", "Waited", "Hit"].contains(&s.as_str())),
            "{sources:?}"
        );
        if redis_errors() > errors_before {
            eprintln!("burst {burst}: a Redis command timed out (a loaded machine); again");
            continue;
        }
        // The 200 ms origin ran once for both instances: one request
        // computed, the others shared its flight, waited on its claim or
        // hit.
        let computed = sources.iter().filter(|s| *s == "Computed").count();
        assert_eq!(computed, 1, "{sources:?}");
        clean = Some(id);
        break;
    }
    let id = clean.unwrap_or_else(|| {
        panic!("each of {BURSTS} bursts met a Redis timeout: the machine is too loaded to tell")
    });
    // The value sits under the service's prefix, and the next request hits.
    let stored = format!("profiles:{}", stampede_redis::value_key(&id.to_string()));
    assert!(redis.exists(&stored).await);
    let (status, source, _) = get(&services[1].0, &format!("/profile/{id}")).await;
    assert_eq!((status, source.as_str()), (200, "Hit"));
}
