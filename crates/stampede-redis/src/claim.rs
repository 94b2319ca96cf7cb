//! The cross-instance claim on a real Redis: `SET lock:<key> <token> NX PX
//! <ttl>` to take it, and a Lua compare-and-delete to release it, so only
//! the token's holder can ever delete it (a holder whose claim expired and
//! was retaken deletes nothing). The script is sent once and then invoked
//! by its hash; `redis::Script` loads it again if the server answers
//! NOSCRIPT (after a restart or `SCRIPT FLUSH`). The connection manager
//! reconnects by itself after Redis comes back.

use std::time::Duration;

use redis::aio::ConnectionManager;
use redis::{RedisResult, Script};

/// Deletes the claim only if it still holds this token.
const RELEASE: &str = r"
if redis.call('GET', KEYS[1]) == ARGV[1] then
    return redis.call('DEL', KEYS[1])
end
return 0
";

/// A claim's token: 128 bits from the operating system's randomness, so
/// that it cannot be guessed and two claims never share one.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Token(String);

impl Token {
    pub fn new() -> Token {
        let mut bytes = [0u8; 16];
        // Without the OS's randomness a token could be guessed: better to
        // stop than to hand out a weak one.
        getrandom::fill(&mut bytes).expect("the operating system's randomness");
        Token(bytes.iter().map(|b| format!("{b:02x}")).collect())
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl Default for Token {
    fn default() -> Self {
        Token::new()
    }
}

/// Claims on one Redis (or one node's slot: keys are hash-tagged, see
/// [`lock_key`]).
#[derive(Clone)]
pub struct ClaimStore {
    con: ConnectionManager,
    release: Script,
}

/// The claim's key for a cache key. The `{...}` hash tag puts a value and
/// its claim in the same Redis Cluster slot.
pub fn lock_key(key: &str) -> String {
    format!("lock:{{{key}}}")
}

impl ClaimStore {
    pub async fn connect(url: &str) -> RedisResult<ClaimStore> {
        let client = redis::Client::open(url)?;
        let con = ConnectionManager::new(client).await?;
        Ok(ClaimStore {
            con,
            release: Script::new(RELEASE),
        })
    }

    /// Takes the claim on `key` for `ttl` if nobody holds it: `Some(token)`
    /// when won, `None` when someone else holds it.
    pub async fn claim(&self, key: &str, ttl: Duration) -> RedisResult<Option<Token>> {
        let token = Token::new();
        let ms = ttl.as_millis().clamp(1, u128::from(u64::MAX)) as u64;
        let reply: Option<String> = redis::cmd("SET")
            .arg(lock_key(key))
            .arg(token.as_str())
            .arg("NX")
            .arg("PX")
            .arg(ms)
            .query_async(&mut self.con.clone())
            .await?;
        Ok(reply.map(|_| token))
    }

    /// Releases the claim if `token` still holds it; true when it did.
    pub async fn release(&self, key: &str, token: &Token) -> RedisResult<bool> {
        let deleted: i64 = self
            .release
            .key(lock_key(key))
            .arg(token.as_str())
            .invoke_async(&mut self.con.clone())
            .await?;
        Ok(deleted == 1)
    }

    /// The token holding `key`'s claim, if any.
    pub async fn holder(&self, key: &str) -> RedisResult<Option<String>> {
        redis::cmd("GET")
            .arg(lock_key(key))
            .query_async(&mut self.con.clone())
            .await
    }

    /// A raw command on the store's connection (tests and tools).
    pub fn connection(&self) -> ConnectionManager {
        self.con.clone()
    }
}
