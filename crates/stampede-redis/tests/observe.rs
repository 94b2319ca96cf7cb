//! What the `tracing` and `metrics` features report, read back through a
//! recorder and a subscriber of the test's own. Run with
//! `cargo test -p stampede-redis --all-features --test observe`.
//!
//! One test: the recorder and the subscriber are process-wide.

#![cfg(all(feature = "metrics", feature = "tracing"))]

mod common;

use std::cell::RefCell;
use std::collections::HashMap;
use std::fmt::Debug;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use common::{settled, Rows, TestRedis};
use metrics::{Counter, Gauge, Histogram, Key, KeyName, Metadata, Recorder, SharedString, Unit};
use stampede_redis::cache::{Cache, CacheError, ClaimMode, LoserPolicy, Source};
use stampede_redis::{obs, Group};
use tokio::time::{sleep, Instant};
use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id, Record};
use tracing::{Event, Subscriber};
use tracing_core::span::Current;

/// Counters by `name{component}`.
#[derive(Default)]
struct Counters(Mutex<HashMap<String, Arc<AtomicU64>>>);

impl Counters {
    /// A gauge's value (0 if never set).
    fn level(&self, name: &str, component: &str) -> f64 {
        f64::from_bits(self.get(name, component))
    }

    fn get(&self, name: &str, component: &str) -> u64 {
        self.0
            .lock()
            .unwrap()
            .get(&format!("{name}{{{component}}}"))
            .map_or(0, |c| c.load(Ordering::SeqCst))
    }
}

impl Counters {
    /// The count for `key`: `name{component}`, or with an `outcome` or
    /// `source` label, `name{component/label}` (`cache/taken`).
    fn slot(&self, key: &Key) -> Arc<AtomicU64> {
        let label = |name: &str| {
            key.labels()
                .find(|l| l.key() == name)
                .map(|l| l.value().to_string())
        };
        let component = label("component").unwrap_or_default();
        // A named cache's: `cache@profiles`.
        let component = match label("cache").filter(|c| !c.is_empty()) {
            Some(cache) => format!("{component}@{cache}"),
            None => component,
        };
        let component = match label("outcome").or_else(|| label("source")) {
            Some(outcome) => format!("{component}/{outcome}"),
            None => component,
        };
        let name = format!("{}{{{component}}}", key.name());
        self.0.lock().unwrap().entry(name).or_default().clone()
    }
}

struct Rec(&'static Counters);

impl Recorder for Rec {
    fn describe_counter(&self, _: KeyName, _: Option<Unit>, _: SharedString) {}
    fn describe_gauge(&self, _: KeyName, _: Option<Unit>, _: SharedString) {}
    fn describe_histogram(&self, _: KeyName, _: Option<Unit>, _: SharedString) {}

    fn register_counter(&self, key: &Key, _: &Metadata<'_>) -> Counter {
        Counter::from_arc(self.0.slot(key))
    }

    fn register_gauge(&self, key: &Key, _: &Metadata<'_>) -> Gauge {
        Gauge::from_arc(Arc::new(Level(self.0.slot(key))))
    }

    fn register_histogram(&self, key: &Key, _: &Metadata<'_>) -> Histogram {
        Histogram::from_arc(Arc::new(Recorded(self.0.slot(key))))
    }
}

/// A gauge read back as its value (an `f64`'s bits).
struct Level(Arc<AtomicU64>);

impl Level {
    fn change(&self, f: impl Fn(f64) -> f64) {
        let _ = self
            .0
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |b| {
                Some(f(f64::from_bits(b)).to_bits())
            });
    }
}

impl metrics::GaugeFn for Level {
    fn increment(&self, v: f64) {
        self.change(|x| x + v);
    }

    fn decrement(&self, v: f64) {
        self.change(|x| x - v);
    }

    fn set(&self, v: f64) {
        self.change(|_| v);
    }
}

/// A histogram read back as how many values it recorded.
struct Recorded(Arc<AtomicU64>);

impl metrics::HistogramFn for Recorded {
    fn record(&self, _: f64) {
        self.0.fetch_add(1, Ordering::SeqCst);
    }
}

/// A span's name and fields as recorded.
#[derive(Clone, Debug, Default)]
struct SpanRecord {
    name: &'static str,
    fields: HashMap<String, String>,
}

struct Fields<'a>(&'a mut HashMap<String, String>);

impl Visit for Fields<'_> {
    fn record_str(&mut self, field: &Field, value: &str) {
        self.0.insert(field.name().into(), value.into());
    }

    fn record_debug(&mut self, field: &Field, value: &dyn Debug) {
        self.0.insert(field.name().into(), format!("{value:?}"));
    }
}

thread_local! {
    /// The spans entered on this thread, innermost last.
    static ENTERED: RefCell<Vec<(Id, &'static tracing::Metadata<'static>)>> =
        const { RefCell::new(Vec::new()) };
}

#[derive(Default)]
struct Spans {
    next: AtomicU64,
    spans: Mutex<HashMap<u64, (SpanRecord, &'static tracing::Metadata<'static>)>>,
    /// Every event's level and fields (`message` among them).
    events: Mutex<Vec<(tracing::Level, HashMap<String, String>)>>,
}

impl Spans {
    fn named(&self, name: &str) -> Vec<SpanRecord> {
        self.spans
            .lock()
            .unwrap()
            .values()
            .filter(|(s, _)| s.name == name)
            .map(|(s, _)| s.clone())
            .collect()
    }

    fn clear(&self) {
        self.spans.lock().unwrap().clear();
    }
}

struct Sub(&'static Spans);

impl Subscriber for Sub {
    fn enabled(&self, _: &tracing::Metadata<'_>) -> bool {
        true
    }

    fn new_span(&self, attrs: &Attributes<'_>) -> Id {
        let id = self.0.next.fetch_add(1, Ordering::SeqCst) + 1;
        let mut rec = SpanRecord {
            name: attrs.metadata().name(),
            fields: HashMap::new(),
        };
        attrs.record(&mut Fields(&mut rec.fields));
        self.0
            .spans
            .lock()
            .unwrap()
            .insert(id, (rec, attrs.metadata()));
        Id::from_u64(id)
    }

    fn record(&self, id: &Id, values: &Record<'_>) {
        if let Some((rec, _)) = self.0.spans.lock().unwrap().get_mut(&id.into_u64()) {
            values.record(&mut Fields(&mut rec.fields));
        }
    }

    fn record_follows_from(&self, _: &Id, _: &Id) {}

    fn event(&self, event: &Event<'_>) {
        let mut fields = HashMap::new();
        event.record(&mut Fields(&mut fields));
        let level = *event.metadata().level();
        self.0.events.lock().unwrap().push((level, fields));
    }

    fn enter(&self, id: &Id) {
        let meta = self
            .0
            .spans
            .lock()
            .unwrap()
            .get(&id.into_u64())
            .map(|s| s.1);
        if let Some(meta) = meta {
            ENTERED.with(|e| e.borrow_mut().push((id.clone(), meta)));
        }
    }

    fn exit(&self, id: &Id) {
        ENTERED.with(|e| {
            let mut e = e.borrow_mut();
            if let Some(i) = e.iter().rposition(|(x, _)| x == id) {
                e.remove(i);
            }
        });
    }

    fn current_span(&self) -> Current {
        ENTERED.with(|e| match e.borrow().last() {
            Some((id, meta)) => Current::new(id.clone(), meta),
            None => Current::none(),
        })
    }
}

fn installed() -> (&'static Counters, &'static Spans) {
    static ONCE: OnceLock<(&'static Counters, &'static Spans)> = OnceLock::new();
    *ONCE.get_or_init(|| {
        let counters: &'static Counters = Box::leak(Box::default());
        let spans: &'static Spans = Box::leak(Box::default());
        metrics::set_global_recorder(Rec(counters)).expect("the only recorder");
        tracing::subscriber::set_global_default(Sub(spans)).expect("the only subscriber");
        (counters, spans)
    })
}

fn with(spans: &[SpanRecord], field: &str, value: &str) -> usize {
    spans
        .iter()
        .filter(|s| s.fields.get(field).map(String::as_str) == Some(value))
        .count()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn spans_and_counters_follow_every_flight() {
    let (counters, spans) = installed();

    // The group: one leader, nine followers, then one timeout.
    let g: Group<&str, u32, ()> = Group::new();
    let mut calls = Vec::new();
    for _ in 0..10 {
        let g = g.clone();
        calls.push(tokio::spawn(async move {
            g.get_or_compute("k", Instant::now() + Duration::from_secs(60), || async {
                sleep(Duration::from_millis(100)).await;
                Ok(1)
            })
            .await
        }));
    }
    for c in calls {
        c.await.unwrap().unwrap();
    }
    let late = g
        .get_or_compute(
            "slow",
            Instant::now() + Duration::from_millis(10),
            || async {
                sleep(Duration::from_millis(200)).await;
                Ok(2)
            },
        )
        .await;
    assert!(late.is_err());
    assert_eq!(counters.get(obs::FLIGHTS, "group"), 2);
    assert_eq!(counters.get(obs::FOLLOWERS, "group"), 9);
    assert_eq!(counters.get(obs::TIMEOUTS, "group"), 1);
    let group = spans.named("stampede.group");
    assert_eq!(group.len(), 11);
    assert_eq!(with(&group, "role", "leader"), 2);
    assert_eq!(with(&group, "role", "follower"), 9);
    assert_eq!(with(&group, "outcome", "ok"), 10);
    assert_eq!(with(&group, "outcome", "timed_out"), 1);
    spans.clear();

    // The cache: four instances, five callers each, one claim.
    let mut redis = TestRedis::start().await;

    // A deadline shorter than the Redis commands before the origin call
    // plus the origin timeout is built, with one warning naming the
    // numbers and the rule; one that leaves room, with none.
    let short = |deadline: u64, origin_timeout: u64| {
        Cache::<String>::builder()
            .redis(&redis.url)
            .key_prefix("short:")
            .deadline(Duration::from_millis(deadline))
            .origin_timeout(Duration::from_millis(origin_timeout))
            .origin(|key: String| async move { Ok::<_, String>(key) })
            .build()
    };
    short(500, 3000).await.unwrap();
    short(1000, 600).await.unwrap();
    // The defaults (no origin timeout given) build quietly.
    Cache::<String>::builder()
        .redis(&redis.url)
        .key_prefix("quiet:")
        .origin(|key: String| async move { Ok::<_, String>(key) })
        .build()
        .await
        .unwrap();
    let warned = warnings(spans, "the deadline");
    assert_eq!(warned.len(), 1, "{warned:?}");
    for (field, value) in [
        ("deadline_ms", "500"),
        ("redis_commands", "3"),
        ("redis_path_ms", "300"),
        ("origin_timeout_ms", "3000"),
        ("prefix", "short:"),
    ] {
        assert_eq!(
            warned[0].get(field).map(String::as_str),
            Some(value),
            "{field}: {warned:?}"
        );
    }
    let rule = &warned[0]["message"];
    assert!(
        rule.contains("504") && rule.contains("deadline >= Redis path + origin timeout"),
        "{rule}"
    );
    let origin_calls = Arc::new(AtomicU64::new(0));
    let mut instances = Vec::new();
    for _ in 0..4 {
        let origin_calls = origin_calls.clone();
        let cache: Cache<String> = Cache::builder()
            .redis(&redis.url)
            .claim(ClaimMode::Inner)
            .loser(LoserPolicy::Wait)
            .poll(Duration::from_millis(10))
            .deadline(Duration::from_secs(10))
            .ttl(Duration::from_millis(300))
            .stale(Duration::from_secs(60))
            .origin(move |key: String| {
                let origin_calls = origin_calls.clone();
                async move {
                    origin_calls.fetch_add(1, Ordering::SeqCst);
                    sleep(Duration::from_millis(200)).await;
                    Ok::<_, String>(key)
                }
            })
            .build()
            .await
            .unwrap();
        instances.push(cache);
    }
    let mut tasks = Vec::new();
    for cache in &instances {
        for _ in 0..5 {
            let cache = cache.clone();
            tasks.push(tokio::spawn(async move { cache.get("k").await }));
        }
    }
    for t in tasks {
        t.await.unwrap().unwrap();
    }
    for cache in &instances {
        settled(&[cache]).await;
    }
    assert_eq!(origin_calls.load(Ordering::SeqCst), 1);
    assert_eq!(counters.get(obs::FLIGHTS, "cache"), 4, "one per instance");
    assert_eq!(counters.get(obs::FOLLOWERS, "cache"), 16);
    assert_eq!(counters.get(obs::CLAIM_WINS, "cache"), 1);
    assert_eq!(counters.get(obs::CLAIM_LOSSES, "cache"), 3);
    let gets = spans.named("stampede.get");
    assert_eq!(gets.len(), 20);
    assert!(gets
        .iter()
        .all(|s| s.fields.get("key").map(String::as_str) == Some("k")));
    // One leader won the claim; the three that lost it polled for its
    // value (`waiter`), and their answers are `Waited`, as `Source` says.
    assert_eq!(with(&gets, "role", "leader"), 1);
    assert_eq!(with(&gets, "role", "waiter"), 3);
    assert_eq!(with(&gets, "role", "follower"), 16);
    assert_eq!(with(&gets, "ending", "Computed"), 1);
    assert_eq!(with(&gets, "ending", "Waited"), 3);
    assert_eq!(with(&gets, "ending", "Hit"), 0);
    // Each request's length, by where its value came from.
    assert_eq!(counters.get(obs::GET_SECONDS, "cache/Computed"), 1);
    assert_eq!(counters.get(obs::GET_SECONDS, "cache/Waited"), 3);
    assert_eq!(counters.get(obs::GET_SECONDS, "cache/Shared"), 16);
    assert_eq!(counters.get(obs::GET_SECONDS, "cache/Hit"), 0);
    // Every first read missed; the three instances that lost the claim
    // read the winner's value (hits, after waiting); one origin call.
    assert_eq!(counters.get(obs::MISSES, "cache"), 20);
    assert_eq!(counters.get(obs::HITS, "cache"), 3);
    // All three after waiting; none from a local copy.
    assert_eq!(counters.get(obs::WAITED, "cache"), 3);
    assert_eq!(counters.get(obs::LOCAL_HITS, "cache"), 0);
    assert_eq!(counters.get(obs::ORIGIN_CALLS, "cache"), 1);
    assert_eq!(counters.get(obs::ORIGIN_ERRORS, "cache"), 0);
    // The winner released its claim; nobody else held one.
    assert_eq!(counters.get(obs::RELEASES, "cache/released"), 1);
    assert_eq!(counters.get(obs::RELEASES, "cache/expired"), 0);
    assert_eq!(counters.get(obs::RELEASES, "cache/taken"), 0);
    spans.clear();

    // A value another writer stored that does not decode is a counted miss.
    let odd = stampede_redis::row::Header {
        version: Some(1),
        fresh_until: u64::MAX / 2,
        ..Default::default()
    };
    redis
        .put(&stampede_redis::value_key("odd"), &odd.encode(b"not json"))
        .await;
    let odd = instances[0].get("odd").await.unwrap();
    assert_eq!(odd.source, Source::Computed);
    settled(&[&instances[0]]).await;
    // Once for the request, though its first read and its re-check both
    // met it; its warning names the key and the codec's error.
    assert_eq!(counters.get(obs::DECODE_MISSES, "cache"), 1);
    let warned = warnings(spans, "did not decode");
    assert_eq!(warned.len(), 1, "{warned:?}");
    assert_eq!(warned[0].get("key").map(String::as_str), Some("odd"));
    assert!(
        warned[0]
            .get("error")
            .is_some_and(|e| e.contains("expected")),
        "the codec's error: {warned:?}"
    );

    // Past its TTL the value is served stale (and refreshed behind it).
    while instances[0].get("k").await.unwrap().source != Source::Stale {
        sleep(Duration::from_millis(50)).await;
    }
    assert!(counters.get(obs::STALE_SERVED, "cache") >= 1);
    assert!(with(&spans.named("stampede.get"), "ending", "Stale") >= 1);
    for cache in &instances {
        settled(&[cache]).await;
    }

    // A draining cache refuses every new request, `get` and `get_with`
    // alike, and counts each refusal; a write is no request (it still
    // lands, uncounted).
    let draining = instances[3].clone();
    assert!(draining.drain(Duration::from_secs(5)).await);
    assert_eq!(counters.get(obs::DRAIN_REFUSED, "cache"), 0);
    assert_eq!(draining.get("k").await, Err(CacheError::Draining));
    let loaded = draining
        .get_with("k", async { Ok::<_, String>("loaded".to_string()) })
        .await;
    assert_eq!(loaded, Err(CacheError::Draining));
    assert!(draining.set("drained", &"v".to_string()).await.unwrap());
    assert_eq!(counters.get(obs::DRAIN_REFUSED, "cache"), 2);

    // A fenced fill refused as older: while its origin runs, its claim
    // goes and a newer holder writes first. Counted as a metric, as in the
    // cache's stats.
    assert_eq!(counters.get(obs::WRITES_REFUSED, "cache"), 0);
    let fenced: Cache<String> = Cache::builder()
        .redis(&redis.url)
        .fenced_writes(true)
        .deadline(Duration::from_secs(10))
        .origin(|key: String| async move {
            sleep(Duration::from_millis(100)).await;
            Ok::<_, String>(format!("older {key}"))
        })
        .build()
        .await
        .unwrap();
    let late = tokio::spawn({
        let fenced = fenced.clone();
        async move { fenced.get("late").await }
    });
    sleep(Duration::from_millis(30)).await;
    // The request is running: its origin call takes 100 ms.
    assert!(counters.level(obs::IN_FLIGHT, "cache") >= 1.0);
    redis.newer_holder_writes("late", br#""newer""#).await;
    assert_eq!(late.await.unwrap().unwrap().value, "newer");
    settled(&[&fenced]).await;
    assert_eq!(fenced.stats().writes_refused, 1);
    assert_eq!(counters.level(obs::IN_FLIGHT, "cache"), 0.0, "all ended");
    assert_eq!(counters.get(obs::WRITES_REFUSED, "cache"), 1);

    // A claim sent to a paused Redis: its reply never comes, the request
    // fails open and computes, and the claim is released by its token.
    // Counted as a metric, as in the cache's stats.
    assert_eq!(counters.get(obs::AMBIGUOUS_CLAIMS, "cache"), 0);
    assert_eq!(counters.get(obs::REDIS_ERRORS, "cache"), 0);
    let paused = redis.pause();
    let got = instances[2].get("paused").await.unwrap();
    assert_eq!(got.source, Source::Computed);
    settled(&[&instances[2]]).await;
    paused.resume();
    assert_eq!(instances[2].stats().ambiguous_claims, 1);
    assert_eq!(counters.get(obs::AMBIGUOUS_CLAIMS, "cache"), 1);
    // Logged, with the key and the error.
    let unanswered = warnings(spans, "reply never came");
    assert_eq!(unanswered.len(), 1, "{unanswered:?}");
    assert_eq!(unanswered[0].get("key").map(String::as_str), Some("paused"));
    assert!(unanswered[0].contains_key("error"), "{unanswered:?}");

    // A Redis outage: every failed command is counted, and logged with the
    // cache's key prefix and the error, at most once a second per cache
    // (`held_back` says how many were not).
    let errors = counters.get(obs::REDIS_ERRORS, "cache");
    let logged = warnings(spans, "Redis command failed").len();
    let broken: Cache<String> = Cache::builder()
        .redis(&redis.url)
        .redis_breaker(Duration::from_secs(60))
        .deadline(Duration::from_secs(10))
        .origin(|key: String| async move { Ok::<_, String>(key) })
        .build()
        .await
        .unwrap();
    assert_eq!(counters.level(obs::BREAKER_OPEN, "cache"), 0.0);
    // A named cache's metrics carry its name (`cache`), apart from the
    // others'.
    let named: Cache<String> = Cache::builder()
        .redis(&redis.url)
        .name("profiles")
        .deadline(Duration::from_secs(10))
        .origin(|key: String| async move { Ok::<_, String>(key) })
        .build()
        .await
        .unwrap();
    let origin_calls = counters.get(obs::ORIGIN_CALLS, "cache");
    named.get("named").await.unwrap();
    settled(&[&named]).await;
    assert_eq!(counters.get(obs::ORIGIN_CALLS, "cache@profiles"), 1);
    assert_eq!(counters.get(obs::GET_SECONDS, "cache@profiles/Computed"), 1);
    // A failure's `source` says its cause: the origin's own error, then
    // the failure remembered in Redis.
    let failing: Cache<String> = Cache::builder()
        .redis(&redis.url)
        .name("failing")
        .negative_ttl(Duration::from_secs(60))
        .deadline(Duration::from_secs(10))
        .origin(|_key: String| async move { Err::<String, _>("down") })
        .build()
        .await
        .unwrap();
    assert!(matches!(failing.get("f").await, Err(CacheError::Origin(_))));
    settled(&[&failing]).await;
    assert!(matches!(failing.get("f").await, Err(CacheError::Failed(_))));
    assert_eq!(
        counters.get(obs::GET_SECONDS, "cache@failing/OriginError"),
        1
    );
    assert_eq!(
        counters.get(obs::GET_SECONDS, "cache@failing/Remembered"),
        1
    );
    // Hits apart: a local copy's, then none after waiting.
    let copied: Cache<String> = Cache::builder()
        .redis(&redis.url)
        .name("copied")
        .local_copy(Duration::from_secs(60))
        .ttl(Duration::from_secs(60))
        .deadline(Duration::from_secs(10))
        .origin(|key: String| async move { Ok::<_, String>(key) })
        .build()
        .await
        .unwrap();
    assert_eq!(copied.get("named").await.unwrap().source, Source::Hit);
    assert_eq!(copied.get("named").await.unwrap().source, Source::Hit);
    assert_eq!(counters.get(obs::HITS, "cache@copied"), 2);
    assert_eq!(counters.get(obs::LOCAL_HITS, "cache@copied"), 1);
    assert_eq!(counters.get(obs::WAITED, "cache@copied"), 0);
    assert_eq!(counters.get(obs::ORIGIN_CALLS, "cache"), origin_calls);
    // A cache on the service's own connection.
    let client = redis::Client::open(redis.url.as_str()).unwrap();
    let manager = stampede_redis::conn::manager(client, stampede_redis::cache::REDIS_TIMEOUT)
        .await
        .unwrap();
    let own: Cache<String> = Cache::builder()
        .connection(manager)
        .name("own")
        .key_prefix("own:")
        .deadline(Duration::from_secs(10))
        .origin(|key: String| async move { Ok::<_, String>(key) })
        .build()
        .await
        .unwrap();
    redis.kill();
    // A failed command opens the breaker, and the gauge says so.
    broken.get("b").await.unwrap();
    settled(&[&broken]).await;
    assert_eq!(counters.level(obs::BREAKER_OPEN, "cache"), 1.0);
    for i in 0..5 {
        instances[1].get(format!("other {i}")).await.unwrap();
    }
    settled(&[&instances[1]]).await;
    let failed = counters.get(obs::REDIS_ERRORS, "cache") - errors;
    assert!(failed >= 5, "{failed}");
    let said = warnings(spans, "Redis command failed");
    let new = said.len() - logged;
    assert!(
        new >= 1 && (new as u64) < failed,
        "{new} lines for {failed} errors"
    );
    let last = said.last().unwrap();
    assert_eq!(last.get("prefix").map(String::as_str), Some(""));
    assert!(last.get("error").is_some_and(|e| !e.is_empty()), "{last:?}");
    assert!(last.contains_key("held_back"), "{last:?}");

    // Redis gone for longer than `OWN_CONNECTION_DOWN` (5 s): the cache on
    // the service's own connection says so,
    // with its prefix, how long and the error (a liveness bound, not a
    // timing). A cache on a URL never says it.
    let since = std::time::Instant::now();
    let down = loop {
        let _ = own.get("down").await;
        settled(&[&own]).await;
        let said = warnings(spans, "the service's own connection");
        if let Some(w) = said.first() {
            break w.clone();
        }
        assert!(since.elapsed() < Duration::from_secs(60), "never said");
        sleep(Duration::from_millis(100)).await;
    };
    assert_eq!(down.get("prefix").map(String::as_str), Some("own:"));
    let for_ms: u64 = down["for_ms"].parse().unwrap();
    assert!(for_ms >= 5000, "{down:?}");
    assert!(down.get("error").is_some_and(|e| !e.is_empty()), "{down:?}");
    assert!(warnings(spans, "the service's own connection")
        .iter()
        .all(|w| w.get("prefix").map(String::as_str) == Some("own:")));
}

/// The `WARN` events whose message has `text`, in order.
fn warnings(spans: &Spans, text: &str) -> Vec<HashMap<String, String>> {
    spans
        .events
        .lock()
        .unwrap()
        .iter()
        .filter(|(level, f)| {
            *level == tracing::Level::WARN && f.get("message").is_some_and(|m| m.contains(text))
        })
        .map(|(_, f)| f.clone())
        .collect()
}
