//! The local copy kept coherent by Redis's tracking (issue 37, "a local
//! copy that stays coherent"): on one Redis, a write or delete of a value
//! by another instance drops this instance's copy when Redis's
//! invalidation arrives; a lost tracking connection drops every copy and
//! keeps none until it is back; on a cluster, the same through one
//! tracking connection per primary, a slot's move included; where tracking
//! cannot be had (a connection the service made) the copies are bounded in
//! time alone.
//! Every wait here is for an event (an invalidation counted, the tracking
//! connection seen up or lost), bounded only as a liveness check.

mod common;

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use common::{settled, TestRedis};
use stampede_redis::cache::{Cache, Coherence, Source};
use tokio::time::{sleep, Instant};

/// A cache whose origin answers `key#n`, n its call count; with a local
/// copy of a minute (values fresh for a minute too) when `copies`.
async fn instance(url: &str, copies: bool, calls: Arc<AtomicU64>) -> Cache<String> {
    let builder = Cache::builder()
        .redis(url)
        .ttl(Duration::from_secs(60))
        .origin(move |key: String| {
            let n = calls.fetch_add(1, Ordering::SeqCst);
            async move { Ok::<_, String>(format!("{key}#{n}")) }
        });
    let builder = if copies {
        builder.local_copy(Duration::from_secs(60))
    } else {
        builder
    };
    builder.build().await.expect("a cache")
}

/// Waits until `done` holds (a liveness bound of a minute, not a timing).
async fn until(what: &str, mut done: impl FnMut() -> bool) {
    let since = Instant::now();
    while !done() {
        assert!(since.elapsed() < Duration::from_secs(60), "never: {what}");
        sleep(Duration::from_millis(5)).await;
    }
}

/// `cache`'s value of `key`, read twice: the second answer is its local
/// copy's (counted), and both are the same.
async fn copied(cache: &Cache<String>, key: &str) -> String {
    let first = cache.get(key).await.unwrap().value;
    settled(&[cache]).await;
    let again = cache.get(key).await.unwrap();
    assert_eq!(again.source, Source::Hit);
    assert_eq!(again.value, first);
    first
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_write_or_delete_elsewhere_drops_the_local_copy() {
    let redis = TestRedis::start().await;
    let calls = Arc::new(AtomicU64::new(0));
    let a = instance(&redis.url, true, calls.clone()).await;
    let b = instance(&redis.url, false, calls.clone()).await;
    until("tracked", || a.coherence() == Coherence::Tracked).await;
    assert_eq!(b.coherence(), Coherence::NoCopies);
    assert_eq!(copied(&a, "k").await, "k#0");
    // Another instance writes: a's copy goes when the invalidation comes,
    // and its next read is Redis's value.
    let seen = a.stats().invalidations;
    assert!(b.set("k", &"k by b".to_string()).await.unwrap());
    until("the set's invalidation", || a.stats().invalidations > seen).await;
    assert_eq!(a.get("k").await.unwrap().value, "k by b");
    // And deletes: the next read recomputes.
    assert_eq!(copied(&a, "k").await, "k by b");
    let seen = a.stats().invalidations;
    b.invalidate("k").await.unwrap();
    until("the delete's invalidation", || {
        a.stats().invalidations > seen
    })
    .await;
    let got = a.get("k").await.unwrap();
    assert_eq!((got.source, got.value.as_str()), (Source::Computed, "k#1"));
    // A fill on another instance (its origin's write) too.
    settled(&[&a]).await;
    assert_eq!(copied(&a, "k").await, "k#1");
    let seen = a.stats().invalidations;
    b.invalidate("k").await.unwrap();
    until("the delete's invalidation", || {
        a.stats().invalidations > seen
    })
    .await;
    let filled = b.get("k").await.unwrap();
    assert_eq!(
        (filled.source, filled.value.as_str()),
        (Source::Computed, "k#2")
    );
    settled(&[&b]).await;
    assert_eq!(a.get("k").await.unwrap().value, "k#2");
}

/// The tracking connection lost (killed on the server): every copy goes
/// and none is answered until it is back, so a write meanwhile, whose
/// invalidation nobody received, is still seen.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_lost_tracking_connection_drops_every_copy() {
    let redis = TestRedis::start().await;
    let calls = Arc::new(AtomicU64::new(0));
    let a = instance(&redis.url, true, calls.clone()).await;
    let b = instance(&redis.url, false, calls.clone()).await;
    until("tracked", || a.coherence() == Coherence::Tracked).await;
    assert_eq!(copied(&a, "k").await, "k#0");
    let lost = a.stats().tracking_lost;
    let killed: i64 = redis::cmd("CLIENT")
        .arg("KILL")
        .arg("ID")
        .arg(tracking_client(&redis).await)
        .query_async(&mut redis.connection().await)
        .await
        .unwrap();
    assert_eq!(killed, 1);
    // Written while nobody tracks for a.
    assert!(b.set("k", &"k by b".to_string()).await.unwrap());
    until("the loss seen", || a.stats().tracking_lost > lost).await;
    assert_eq!(a.get("k").await.unwrap().value, "k by b");
    // Back: copies are kept, and tracked, again.
    until("tracked again", || a.coherence() == Coherence::Tracked).await;
    settled(&[&a]).await;
    assert_eq!(copied(&a, "k").await, "k by b");
    let seen = a.stats().invalidations;
    assert!(b.set("k", &"k by b again".to_string()).await.unwrap());
    until("the set's invalidation", || a.stats().invalidations > seen).await;
    assert_eq!(a.get("k").await.unwrap().value, "k by b again");
}

/// The id of the local copies' tracking connection (`CLIENT SETNAME
/// stampede-tracking`).
async fn tracking_client(redis: &TestRedis) -> String {
    let list: String = redis::cmd("CLIENT")
        .arg("LIST")
        .query_async(&mut redis.connection().await)
        .await
        .unwrap();
    let line = list
        .lines()
        .find(|l| l.contains("name=stampede-tracking"))
        .expect("a tracking connection");
    line.split(' ')
        .find_map(|f| f.strip_prefix("id="))
        .unwrap()
        .to_string()
}

/// A connection the service made: copies bounded in time alone, as
/// documented (the cache cannot open a second connection to its server).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn on_the_services_own_connection_copies_are_bounded_in_time() {
    let redis = TestRedis::start().await;
    let con = stampede_redis::Target::parse(&redis.url)
        .connect()
        .await
        .unwrap();
    let cache: Cache<String> = Cache::builder()
        .connection(con)
        .local_copy(Duration::from_secs(60))
        .origin(|key: String| async move { Ok::<_, String>(key) })
        .build()
        .await
        .unwrap();
    assert_eq!(cache.coherence(), Coherence::TimeBounded);
}

/// A cluster: one tracking connection per primary, so a write on
/// another instance drops the copy wherever its slot is, before and after
/// the slot moves to another primary (a resharding: its keys migrated,
/// then the slot handed over); the primaries are unchanged, so tracking
/// never stopped.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn on_a_cluster_a_write_elsewhere_drops_the_copy_before_and_after_its_slot_moves() {
    let cluster = stampede_testkit::TestCluster::start().await;
    let calls = Arc::new(AtomicU64::new(0));
    let a = instance(&cluster.urls, true, calls.clone()).await;
    let b = instance(&cluster.urls, false, calls.clone()).await;
    until("tracked", || a.coherence() == Coherence::Tracked).await;
    assert_eq!(copied(&a, "k").await, "k#0");
    let seen = a.stats().invalidations;
    assert!(b.set("k", &"k by b".to_string()).await.unwrap());
    until("the set's invalidation", || a.stats().invalidations > seen).await;
    assert_eq!(a.get("k").await.unwrap().value, "k by b");
    settled(&[&a]).await;
    assert_eq!(copied(&a, "k").await, "k by b");
    // The slot moves, the value with it: read from its new primary.
    let lost = a.stats().tracking_lost;
    let (from, to) = cluster.move_slot_of(&a.value_key("k")).await;
    assert_ne!(from, to);
    let moved: Option<Vec<u8>> = redis::cmd("GET")
        .arg(a.value_key("k"))
        .query_async(&mut cluster.node(to).await)
        .await
        .unwrap();
    assert!(moved.is_some(), "the value moved with its slot");
    until("the move's invalidations", || {
        a.stats().invalidations > seen + 1
    })
    .await;
    settled(&[&a]).await;
    assert_eq!(copied(&a, "k").await, "k by b");
    let seen = a.stats().invalidations;
    assert!(b.set("k", &"k after the move".to_string()).await.unwrap());
    until("the set's invalidation from the new primary", || {
        a.stats().invalidations > seen
    })
    .await;
    assert_eq!(a.get("k").await.unwrap().value, "k after the move");
    assert_eq!(a.stats().tracking_lost, lost, "tracking never stopped");
    assert_eq!(a.coherence(), Coherence::Tracked);
}

/// A cluster whose primaries change (a node added and given the key's
/// slot): the next heartbeat's `CLUSTER SLOTS` sees it, every copy is
/// dropped (counted as a lost tracking connection), and tracking is made
/// again on the four primaries, after which the new primary's writes are
/// heard. Until that heartbeat a write on the new primary is not: the
/// bound README and ARCHITECTURE state (not timed here).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn on_a_cluster_a_new_primary_is_tracked_once_a_heartbeat_sees_it() {
    let mut cluster = stampede_testkit::TestCluster::start().await;
    let calls = Arc::new(AtomicU64::new(0));
    let a = instance(&cluster.urls, true, calls.clone()).await;
    let b = instance(&cluster.urls, false, calls.clone()).await;
    until("tracked", || a.coherence() == Coherence::Tracked).await;
    assert_eq!(copied(&a, "k").await, "k#0");
    let lost = a.stats().tracking_lost;
    let new = cluster.add_node().await;
    let (_, to) = cluster.move_slot_of_to(&a.value_key("k"), new).await;
    assert_eq!(to, new);
    until("the new primary seen", || a.stats().tracking_lost > lost).await;
    until("tracked again", || a.coherence() == Coherence::Tracked).await;
    settled(&[&a]).await;
    assert_eq!(copied(&a, "k").await, "k#0", "read from the new primary");
    let seen = a.stats().invalidations;
    assert!(b
        .set("k", &"k on the new primary".to_string())
        .await
        .unwrap());
    until("the set's invalidation from the new primary", || {
        a.stats().invalidations > seen
    })
    .await;
    assert_eq!(a.get("k").await.unwrap().value, "k on the new primary");
}
