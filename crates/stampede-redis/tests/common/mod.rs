// Shared by the test crates of this package, each using a part of it.
#![allow(dead_code)]

//! The cache's own test helpers, on the workspace's test support
//! (`crates/stampede-testkit`: the throwaway redis-server, its pause,
//! kill and restart, the cluster, the lag probe; shared with
//! stampede-fleet's tests): what reads or writes the cache's rows and
//! claims, and what waits on a `Cache`.

use std::time::Duration;

use stampede_redis::row::Header;
use stampede_redis::Cache;
#[allow(unused_imports)]
pub use stampede_testkit::{free_port, LagProbe, TestRedis};
use tokio::time::sleep;

/// What the cache's tests do to a [`TestRedis`] in the cache's terms: its
/// claims and its value rows.
#[allow(async_fn_in_trait)]
pub trait Rows {
    /// Another holder's claim on `key` (that never writes), for `for_`.
    async fn hold_claim(&self, key: &str, for_: Duration);

    /// A newer holder of `key`: the claim is taken from whoever held it
    /// (deleted, as if it had expired), claimed anew with a fencing
    /// number, and `payload` written under that fence (accepted).
    async fn newer_holder_writes(&self, key: &str, payload: &[u8]);

    /// The row stored at `key` (a full Redis key name), its header and its
    /// payload; `None` when the key holds nothing. Panics on a row not in
    /// the layout.
    async fn row(&self, key: &str) -> Option<(Header, Vec<u8>)>;
}

impl Rows for TestRedis {
    async fn hold_claim(&self, key: &str, for_: Duration) {
        let _: () = redis::cmd("SET")
            .arg(stampede_redis::lock_key(key))
            .arg("another holder")
            .arg("PX")
            .arg(for_.as_millis() as u64)
            .query_async(&mut self.connection().await)
            .await
            .unwrap();
    }

    async fn newer_holder_writes(&self, key: &str, payload: &[u8]) {
        let _: i64 = redis::cmd("DEL")
            .arg(stampede_redis::lock_key(key))
            .query_async(&mut self.connection().await)
            .await
            .unwrap();
        let store = stampede_redis::ClaimStore::connect(&self.url)
            .await
            .unwrap();
        let (_token, fence) = store
            .claim_fenced(key, Duration::from_secs(1))
            .await
            .unwrap()
            .expect("the claim is free");
        assert!(store
            .write_fenced(key, payload, fence, Duration::from_secs(10))
            .await
            .unwrap());
    }

    async fn row(&self, key: &str) -> Option<(Header, Vec<u8>)> {
        let row: Option<Vec<u8>> = redis::cmd("GET")
            .arg(key)
            .query_async(&mut self.connection().await)
            .await
            .unwrap();
        row.map(|row| {
            let (header, at) = Header::parse(&row).expect("a row in the layout");
            (header, row[at..].to_vec())
        })
    }
}

/// Waits until every request's task of each cache has ended (its write,
/// its settle and its release done). Waiting, not [`Cache::drain`], which
/// would also refuse the test's next requests. Not bounded in time: a
/// request that never ends hangs the test.
pub async fn settled<V: Send + 'static, C: stampede_redis::Codec<V>>(caches: &[&Cache<V, C>]) {
    while caches.iter().any(|c| c.running() > 0) {
        sleep(Duration::from_millis(5)).await;
    }
}
