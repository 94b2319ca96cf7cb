//! The claim against a real `redis-server`, which each test starts on a
//! free loopback port in a temporary directory (no persistence) and stops
//! when it ends, pass or fail. `make setup` installs Debian's redis-server.

use std::time::Duration;

use stampede_redis::{lock_key, ClaimStore, Release, Token};
use tokio::time::sleep;

mod common;
use common::TestRedis;

#[tokio::test]
async fn one_holder_and_only_its_token_releases() {
    let redis = TestRedis::start().await;
    let store = ClaimStore::connect(&redis.url).await.unwrap();
    let ttl = Duration::from_secs(10);
    let won = store
        .claim("product:42", ttl)
        .await
        .unwrap()
        .expect("the first claim wins");
    assert_eq!(store.claim("product:42", ttl).await.unwrap(), None, "held");
    // A release with another token leaves the claim where it is, and says
    // another holder has it.
    assert_eq!(
        store.release("product:42", &Token::new()).await.unwrap(),
        Release::Taken
    );
    assert_eq!(
        store.holder("product:42").await.unwrap().as_deref(),
        Some(won.as_str())
    );
    assert_eq!(
        store.release("product:42", &won).await.unwrap(),
        Release::Released
    );
    assert_eq!(store.holder("product:42").await.unwrap(), None);
    // Released twice: the second finds nobody holding it.
    assert_eq!(
        store.release("product:42", &won).await.unwrap(),
        Release::Expired
    );
    assert!(
        store.claim("product:42", ttl).await.unwrap().is_some(),
        "free again"
    );
}

#[tokio::test]
async fn an_expired_and_retaken_claim_is_not_deleted_by_its_old_holder() {
    let redis = TestRedis::start().await;
    let store = ClaimStore::connect(&redis.url).await.unwrap();
    let old = store
        .claim("k", Duration::from_millis(100))
        .await
        .unwrap()
        .unwrap();
    sleep(Duration::from_millis(250)).await;
    // Expired and not retaken: the old holder's release finds nobody.
    assert_eq!(store.release("k", &old).await.unwrap(), Release::Expired);
    let new = store
        .claim("k", Duration::from_secs(10))
        .await
        .unwrap()
        .expect("expired: free");
    assert_eq!(
        store.release("k", &old).await.unwrap(),
        Release::Taken,
        "the late holder deletes nothing"
    );
    assert_eq!(
        store.holder("k").await.unwrap().as_deref(),
        Some(new.as_str())
    );
}

#[tokio::test]
async fn a_holder_that_dies_blocks_for_the_ttl_and_not_after() {
    let redis = TestRedis::start().await;
    let store = ClaimStore::connect(&redis.url).await.unwrap();
    // The holder "crashes": it never releases.
    let _dead = store
        .claim("k", Duration::from_millis(400))
        .await
        .unwrap()
        .unwrap();
    sleep(Duration::from_millis(100)).await;
    assert_eq!(
        store.claim("k", Duration::from_secs(1)).await.unwrap(),
        None,
        "not before the TTL"
    );
    sleep(Duration::from_millis(500)).await;
    assert!(
        store
            .claim("k", Duration::from_secs(1))
            .await
            .unwrap()
            .is_some(),
        "after it"
    );
}

#[tokio::test]
async fn release_survives_a_flushed_script_cache() {
    let redis = TestRedis::start().await;
    let store = ClaimStore::connect(&redis.url).await.unwrap();
    let t = store
        .claim("k", Duration::from_secs(10))
        .await
        .unwrap()
        .unwrap();
    // Load the script, then make the server forget it: NOSCRIPT must reload.
    assert_ne!(
        store.release("k", &Token::new()).await.unwrap(),
        Release::Released
    );
    let _: String = redis::cmd("SCRIPT")
        .arg("FLUSH")
        .query_async(&mut store.connection())
        .await
        .unwrap();
    assert_eq!(store.release("k", &t).await.unwrap(), Release::Released);
}

#[tokio::test]
async fn tokens_are_unguessable_and_never_repeat() {
    let tokens: std::collections::HashSet<String> = (0..10_000)
        .map(|_| Token::new().as_str().to_string())
        .collect();
    assert_eq!(tokens.len(), 10_000);
    assert!(tokens
        .iter()
        .all(|t| t.len() == 32 && t.bytes().all(|b| b.is_ascii_hexdigit())));
    assert_eq!(
        lock_key("product:42"),
        "lock:{product:42}",
        "hash-tagged for a cluster"
    );
}

#[tokio::test]
async fn a_late_holder_cannot_overwrite_newer_data() {
    let redis = TestRedis::start().await;
    let store = ClaimStore::connect(&redis.url).await.unwrap();
    let ttl = Duration::from_secs(60);
    // A wins, computes slowly; its claim expires under it.
    let (_a, fence_a) = store
        .claim_fenced("k", Duration::from_millis(100))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(store.claim_fenced("k", ttl).await.unwrap(), None, "held");
    sleep(Duration::from_millis(250)).await;
    // B takes the claim, computes fast and writes first.
    let (_b, fence_b) = store.claim_fenced("k", ttl).await.unwrap().unwrap();
    assert!(
        fence_b > fence_a,
        "fences only grow: {fence_a} then {fence_b}"
    );
    assert!(store.write_fenced("k", b"new", fence_b, ttl).await.unwrap());
    // A's older value arrives last, and is refused.
    assert!(!store.write_fenced("k", b"old", fence_a, ttl).await.unwrap());
    assert_eq!(
        store.read("k").await.unwrap(),
        Some((b"new".to_vec(), fence_b))
    );
    // A newer fence still writes.
    assert!(store
        .write_fenced("k", b"newer", fence_b + 1, ttl)
        .await
        .unwrap());
}
