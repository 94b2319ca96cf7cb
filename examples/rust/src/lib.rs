//! The cache read path from the interview card, in Rust: singleflight inside
//! the process (this project's `stampede_redis::Group`, crates/stampede-redis/
//! src/group.rs: one flight per key under a lock, each waiter with its own
//! deadline, the entry removed when the flight settles), and a Redis claim
//! across processes, written out here.
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use redis::aio::MultiplexedConnection;
use redis::{AsyncConnectionConfig, Cmd, FromRedisValue, RedisResult, Script};
use stampede_redis::{Failure, Group};
use tokio::time::{sleep, Instant};

/// Delete only if still mine: past its TTL the claim may be another
/// instance's, and a plain DEL would free that one.
const RELEASE: &str = r#"
if redis.call("GET", KEYS[1]) == ARGV[1] then return redis.call("DEL", KEYS[1]) end
return 0"#;

pub type Origin = Arc<
    dyn Fn(String) -> Pin<Box<dyn Future<Output = Result<String, String>> + Send>> + Send + Sync,
>;

#[derive(Clone, Debug, PartialEq)]
pub enum Error {
    Origin(String), // the origin failed (shared with the flight's waiters)
    NoValue,        // the claim was held elsewhere and no value came in time
    TimedOut,       // this caller's deadline passed
}

/// The value's TTL, the claim's (longer than an origin call), and how long
/// a loser polls for the value at most.
const TTL: Duration = Duration::from_secs(60);
const LOCK_TTL: Duration = Duration::from_secs(3);
const WAIT: Duration = Duration::from_secs(2);

/// One instance (one process) of a fleet sharing a Redis.
#[derive(Clone)]
pub struct Cache {
    conn: Option<MultiplexedConnection>, // None: Redis was down at start
    origin: Origin,
    group: Group<String, String, Error>,
    pub claim: bool,            // claim across instances (false: singleflight only)
    pub claims: Arc<AtomicU64>, // claim attempts (SET NX), for the tests
}

impl Cache {
    /// An instance on the Redis at `url`, every command bounded by 100 ms.
    pub async fn new(url: &str, origin: Origin) -> Cache {
        let bound = Duration::from_millis(100);
        let config = AsyncConnectionConfig::new()
            .set_connection_timeout(bound)
            .set_response_timeout(bound);
        let client = redis::Client::open(url).expect("a redis:// URL");
        let conn = client
            .get_multiplexed_async_connection_with_config(&config)
            .await
            .ok();
        Cache {
            conn,
            origin,
            group: Group::new(),
            claim: true,
            claims: Arc::default(),
        }
    }

    /// `key`'s value. The deadline ends this caller's wait, not the work:
    /// the flight goes on and fills the cache for the others.
    pub async fn get(&self, key: &str, deadline: Duration) -> Result<String, Error> {
        // card 1: handle(key)
        let (this, k, until) = (self.clone(), key.to_owned(), Instant::now() + deadline);
        // card 4: singleflight(key): the group's one flight per key
        let shared = self
            .group
            .get_or_compute(key.to_owned(), until, move || this.load(k));
        // card 5: wait for the flight, until my own deadline
        match &*shared.await.map_err(|_| Error::TimedOut)? {
            Ok(value) => Ok(value.clone()), // card 13: every waiter shares one result
            Err(Failure::Error(e)) => Err(e.clone()),
            Err(Failure::Panicked) => Err(Error::Origin("the origin panicked".into())),
        }
    }

    /// The flight's work: GET, else claim, compute, write, release.
    async fn load(self, key: String) -> Result<String, Error> {
        let (value_key, lock_key) = (format!("value:{key}"), format!("lock:{key}"));
        // card 2: GET key (a Redis error counts as a miss: fail open)
        if let Ok(Some(value)) = self.run(redis::cmd("GET").arg(&value_key)).await {
            return Ok(value); // card 3: a hit is answered at once
        }
        // card 6: SET lock:key token NX PX ttl, with a random token
        let mut token = None;
        if self.claim {
            self.claims.fetch_add(1, Ordering::Relaxed);
            let mine = new_token();
            let px = LOCK_TTL.as_millis() as u64;
            let mut claim = redis::cmd("SET");
            claim.arg(&lock_key).arg(&mine).arg("NX").arg("PX").arg(px);
            match self.run::<Option<String>>(&claim).await {
                Ok(None) => return self.poll(&value_key).await, // card 12: lost: poll for the value
                Ok(Some(_)) => token = Some(mine),              // card 7: won
                Err(_) => {} // Redis failed: fail open, compute without the lock
            }
        }
        // card 9: the origin; runs on past every caller's deadline
        let result = (self.origin)(key.clone()).await.map_err(Error::Origin);
        // card 10: SET key v (a failed write still answers the value)
        if let Ok(value) = &result {
            let px = TTL.as_millis() as u64;
            let mut write = redis::cmd("SET");
            write.arg(&value_key).arg(value).arg("PX").arg(px);
            let _: RedisResult<()> = self.run(&write).await;
        }
        // card 11: release the claim only if it is still mine
        if let Some(token) = token {
            self.release(&key, &token).await;
        }
        result
    }

    /// Reads the value until the claim's holder has written it, or gives up.
    async fn poll(&self, value_key: &str) -> Result<String, Error> {
        let end = Instant::now() + WAIT;
        while Instant::now() < end {
            if let Ok(Some(value)) = self.run(redis::cmd("GET").arg(value_key)).await {
                return Ok(value);
            }
            sleep(Duration::from_millis(10)).await;
        }
        Err(Error::NoValue)
    }

    /// True if the claim was still ours and is now free.
    pub async fn release(&self, key: &str, token: &str) -> bool {
        let Some(mut conn) = self.conn.clone() else {
            return false;
        };
        let freed: RedisResult<i64> = Script::new(RELEASE)
            .key(format!("lock:{key}"))
            .arg(token)
            .invoke_async(&mut conn)
            .await;
        freed == Ok(1)
    }

    pub async fn run<T: FromRedisValue>(&self, cmd: &Cmd) -> RedisResult<T> {
        let mut conn = self
            .conn
            .clone()
            .ok_or((redis::ErrorKind::IoError, "Redis unreachable"))?;
        cmd.query_async(&mut conn).await
    }
}

fn new_token() -> String {
    let mut bytes = [0u8; 16];
    getrandom::fill(&mut bytes).expect("the operating system's randomness");
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}
