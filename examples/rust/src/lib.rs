//! The cache read path from the interview card, in Rust: a GET first, then
//! singleflight inside the process (this project's `stampede_redis::Group`,
//! crates/stampede-redis/src/group.rs: one flight per key under a lock, each
//! waiter with its own deadline, the entry removed when the flight settles,
//! even on a panic), and a Redis claim inside the flight across processes,
//! written out here.
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

/// The value's TTL, the claim's (longer than an origin call), how long a
/// loser polls for the value at most, and how often.
const TTL: Duration = Duration::from_secs(60);
const LOCK_TTL: Duration = Duration::from_secs(3);
const WAIT: Duration = Duration::from_secs(2);
const POLL: Duration = Duration::from_millis(10);

/// One instance (one process) of a fleet sharing a Redis.
#[derive(Clone)]
pub struct Cache {
    conn: Option<MultiplexedConnection>, // None: Redis was down at start
    origin: Origin,
    pub group: Group<String, String, Error>, // the flights of this process
    pub claim: bool,                         // claim across instances (false: singleflight only)
    pub wait: Duration,                      // a loser polls this long at most (WAIT)
    pub claims: Arc<AtomicU64>,              // claim attempts (SET NX), for the tests
}

impl Cache {
    /// An instance on the Redis at `url`, every command bounded by 100 ms.
    pub async fn new(url: &str, origin: Origin) -> Cache {
        Cache::bounded(url, origin, Duration::from_millis(100)).await
    }

    /// Every command bounded by `bound` (to connect, and to answer), so a
    /// Redis that hangs costs a bounded wait, then the code fails open.
    pub async fn bounded(url: &str, origin: Origin, bound: Duration) -> Cache {
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
            wait: WAIT,
            claims: Arc::default(),
        }
    }

    /// `key`'s value. The deadline ends this caller's wait, not the work:
    /// the flight goes on and fills the cache for the others.
    pub async fn get(&self, key: &str, deadline: Duration) -> Result<String, Error> {
        // card 1: handle(key), my deadline counted from now
        let until = Instant::now() + deadline;

        let hit = self.read(key).await; // card 2: GET key (a Redis error is a miss: fail open)
        if let Some(value) = hit {
            return Ok(value); // card 3: a hit never enters a flight
        }
        let (this, k) = (self.clone(), key.to_owned());
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

    /// The flight's work: claim, GET again, compute, write, release; or,
    /// having lost the claim, poll.
    async fn load(self, key: String) -> Result<String, Error> {
        if !self.claim {
            return self.compute(&key).await;
        }
        let end = Instant::now() + self.wait;
        loop {
            // card 6: SET lock:key token NX PX ttl, with a random token
            let token = new_token();
            self.claims.fetch_add(1, Ordering::Relaxed);
            let mut claim = redis::cmd("SET");
            claim.arg(format!("lock:{key}")).arg(&token);
            claim.arg("NX").arg("PX").arg(LOCK_TTL.as_millis() as u64);
            let Ok(won) = self.run::<Option<String>>(&claim).await else {
                return self.compute(&key).await; // Redis failed: fail open, compute without the lock
            };
            // card 7: won (None: another instance holds the claim)
            if won.is_some() {
                // card 8: GET again: the last holder may have written it since my first GET
                let result = match self.read(&key).await {
                    Some(value) => Ok(value),
                    None => self.compute(&key).await,
                };
                self.release(&key, &token).await; // card 11: only if the claim is still mine
                return result;
            }
            // card 12: lost: poll for the holder's value, and claim again on
            // the next turn (a dead holder's claim expires); never past the wait
            if Instant::now() >= end {
                return Err(Error::NoValue);
            }
            sleep(POLL).await;
            if let Some(value) = self.read(&key).await {
                return Ok(value);
            }
        }
    }

    async fn compute(&self, key: &str) -> Result<String, Error> {
        // card 9: the origin; runs on past every caller's deadline
        let value = (self.origin)(key.to_owned()).await.map_err(Error::Origin)?;
        // card 10: SET key v (a failed write still answers the value)
        let mut write = redis::cmd("SET");
        write.arg(format!("value:{key}")).arg(&value);
        write.arg("PX").arg(TTL.as_millis() as u64);
        let _: RedisResult<()> = self.run(&write).await;
        Ok(value)
    }

    /// `key`'s value, or None: a miss, or Redis failing (fail open).
    async fn read(&self, key: &str) -> Option<String> {
        let get = redis::cmd("GET").arg(format!("value:{key}")).clone();
        self.run(&get).await.ok().flatten()
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
