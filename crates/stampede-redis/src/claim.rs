//! The cross-instance claim on a real Redis: `SET lock:<key> <token> NX PX
//! <ttl>` to take it, and a Lua compare-and-delete to release it, so only
//! the token's holder can ever delete it (a holder whose claim expired and
//! was retaken deletes nothing). The script is sent once and then invoked
//! by its hash; `redis::Script` loads it again if the server answers
//! NOSCRIPT (after a restart or `SCRIPT FLUSH`). The connection manager
//! reconnects by itself after Redis comes back; a cluster works as well
//! (see [`crate::conn`]).
//!
//! Bad input is an error in words, before anything is sent: an empty key, a
//! key longer than [`MAX_KEY_BYTES`], a TTL under one millisecond (a claim
//! that expires as it is taken protects nothing, and Redis would refuse a
//! `PX 0` anyway).

use std::time::Duration;

use redis::{ErrorKind, RedisError, RedisResult, Script};

use crate::conn::{Conn, Target};
use crate::row::{stored_row, wall_ms, Header};

// The scripts carry no comments: the page shows them as they are, in its
// first visit's bundle. What each does is said here.

/// Deletes the claim only if it still holds this token: 1 when it did, 0
/// when nobody holds the claim (it expired), -1 when another token does.
/// KEYS: the claim; ARGV: the token.
pub(crate) const RELEASE: &str = include_str!("scripts/release.lua");

/// Takes the claim and, in the same step, its fencing number; 0 when the
/// claim is held by someone else. KEYS: the claim, the fencing counter,
/// the value; ARGV: the token, the claim's TTL (ms), how long the counter
/// lives at least from here (ms).
///
/// The number is the counter's next, and above the stored value's fence
/// even if the counter was lost (expired), so a new holder's write is never
/// refused as older than what it replaces. With an empty token it takes no
/// claim and only the number (`Cache::set`'s own fence).
///
/// The stored fence is read from the row's header; from a hash's `fence`
/// field if the key still holds the layout of the crate's versions before
/// [`crate::row`] (a rolling deploy), so that fences keep growing across
/// the two layouts. `WRITE_FENCED` reads it the same way.
pub(crate) const CLAIM_FENCED: &str = include_str!("scripts/claim_fenced.lua");

/// Writes the value (the one layout of `value:{key}`, [`crate::row`],
/// shared by [`ClaimStore`] and the cache; `SET`, which replaces a key of
/// any type) with its writer's fencing number, unless
/// the stored value was written under a newer one: a late holder cannot
/// overwrite it (0). A write without a fence (0) lands and leaves the
/// stored fence in place, so fenced and unfenced writers never lock each
/// other out; unless it asks for newer data to win (ARGV 8 = `1`, the
/// cache's writes): then it is refused (0) when the stored row's version is
/// newer than its own (versions are wall-clock ms mod 2^32, compared
/// around the wrap). The fencing counter is kept at least at the stored
/// fence and alive at least as long as the value: the next claim's number
/// is larger. KEYS: the value, the fencing counter; ARGV: the payload, the
/// writer's fence (0: unfenced), its version, fresh until and stale until
/// (wall-clock ms), the recompute's delta (µs), how long the value is kept
/// (ms), and `1` for newer wins (optional).
pub(crate) const WRITE_FENCED: &str = include_str!("scripts/write_fenced.lua");

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

/// What a release found.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Release {
    /// The token held the claim, and it is deleted.
    Released,
    /// Nobody holds the claim: it expired (or was never taken).
    Expired,
    /// Another token holds it (it expired, and another holder took it): it
    /// is left alone.
    Taken,
}

impl Release {
    /// What the release script answered (1, 0 or -1).
    pub(crate) fn of_reply(reply: i64) -> Release {
        match reply {
            1 => Release::Released,
            0 => Release::Expired,
            _ => Release::Taken,
        }
    }
}

/// Claims on one Redis (or one node's slot: keys are hash-tagged, see
/// [`lock_key`]).
#[derive(Clone)]
pub struct ClaimStore {
    con: Conn,
    release: Script,
    claim_fenced: Script,
    write_fenced: Script,
    fence_life: Duration,
}

/// How long a fencing counter lives at least after a claim is won, unless
/// [`ClaimStore::fence_life`] says otherwise: a holder that writes later
/// than that, with no write by anyone in between, may find its fence
/// reused by a newer holder.
pub const FENCE_LIFE: Duration = Duration::from_secs(3600);

/// The fencing counter's key; same hash tag as the claim and the value.
/// With no prefix, as [`ClaimStore`] names it; a cache's, with its
/// [`key_prefix`](crate::CacheBuilder::key_prefix), is
/// [`Cache::fence_key`](crate::Cache::fence_key).
pub fn fence_key(key: &str) -> String {
    key_name("", "fence", key)
}

/// `PREFIXkind:{key}`, built in one allocation (a read builds one).
pub(crate) fn key_name(prefix: &str, kind: &str, key: &str) -> String {
    let mut name = String::with_capacity(prefix.len() + kind.len() + key.len() + 3);
    name.push_str(prefix);
    name.push_str(kind);
    name.push_str(":{");
    name.push_str(key);
    name.push('}');
    name
}

/// The value's key: one string, a header (the writer's fence, a
/// negative-cache mark, the value's version, when it stops being fresh and
/// stale, the recompute's delta) and the payload, as [`crate::row`] lays it
/// out. One layout for [`ClaimStore`] and the cache. With no prefix; a
/// cache's is [`Cache::value_key`](crate::Cache::value_key).
pub fn value_key(key: &str) -> String {
    key_name("", "value", key)
}

fn millis(d: Duration) -> u64 {
    d.as_millis().clamp(1, u128::from(u64::MAX)) as u64
}

/// The longest cache key the store accepts. Redis itself takes keys up to
/// 512 MB; a key this long is a bug in the caller (a payload passed as a
/// key), and every round trip would carry it three times.
pub const MAX_KEY_BYTES: usize = 1024;

fn invalid(what: &'static str, detail: String) -> RedisError {
    RedisError::from((ErrorKind::InvalidClientConfig, what, detail))
}

fn check_key(key: &str) -> RedisResult<()> {
    if key.is_empty() {
        return Err(invalid("bad cache key", "the key is empty".into()));
    }
    if key.len() > MAX_KEY_BYTES {
        return Err(invalid(
            "bad cache key",
            format!(
                "the key is {} bytes long; the limit is {MAX_KEY_BYTES}",
                key.len()
            ),
        ));
    }
    Ok(())
}

fn check_ttl(ttl: Duration) -> RedisResult<()> {
    if ttl < Duration::from_millis(1) {
        return Err(invalid(
            "bad TTL",
            format!("a TTL of {ttl:?} expires as it is set; it must be at least 1 ms"),
        ));
    }
    Ok(())
}

/// The claim's key for a cache key. The `{...}` hash tag puts a value and
/// its claim in the same Redis Cluster slot. With no prefix; a cache's is
/// [`Cache::lock_key`](crate::Cache::lock_key).
pub fn lock_key(key: &str) -> String {
    key_name("", "lock", key)
}

impl ClaimStore {
    /// Connects to one Redis (`redis://host:port`) or a cluster (several
    /// URLs separated by commas, or a [`Target::Cluster`]).
    pub async fn connect(target: impl Into<Target>) -> RedisResult<ClaimStore> {
        let con = target.into().connect().await?;
        Ok(ClaimStore {
            con,
            release: Script::new(RELEASE),
            claim_fenced: Script::new(CLAIM_FENCED),
            write_fenced: Script::new(WRITE_FENCED),
            fence_life: FENCE_LIFE,
        })
    }

    /// How long a fencing counter lives at least after each claim won
    /// ([`FENCE_LIFE`], an hour, unless set): longer than the latest a
    /// holder may still write. Each write keeps it, besides, as long as
    /// its value.
    pub fn fence_life(mut self, life: Duration) -> ClaimStore {
        self.fence_life = life;
        self
    }

    /// Takes the claim on `key` for `ttl` if nobody holds it: `Some(token)`
    /// when won, `None` when someone else holds it.
    pub async fn claim(&self, key: &str, ttl: Duration) -> RedisResult<Option<Token>> {
        check_key(key)?;
        check_ttl(ttl)?;
        let token = Token::new();
        let reply: Option<String> = redis::cmd("SET")
            .arg(lock_key(key))
            .arg(token.as_str())
            .arg("NX")
            .arg("PX")
            .arg(millis(ttl))
            .query_async(&mut self.con.clone())
            .await?;
        Ok(reply.map(|_| token))
    }

    /// Releases the claim if `token` still holds it, and says what it
    /// found: [`Release::Released`], [`Release::Expired`] (nobody holds it)
    /// or [`Release::Taken`] (another holder does; left alone).
    pub async fn release(&self, key: &str, token: &Token) -> RedisResult<Release> {
        check_key(key)?;
        let reply: i64 = self
            .release
            .key(lock_key(key))
            .arg(token.as_str())
            .invoke_async(&mut self.con.clone())
            .await?;
        Ok(Release::of_reply(reply))
    }

    /// The token holding `key`'s claim, if any.
    pub async fn holder(&self, key: &str) -> RedisResult<Option<String>> {
        check_key(key)?;
        redis::cmd("GET")
            .arg(lock_key(key))
            .query_async(&mut self.con.clone())
            .await
    }

    /// Takes the claim with a fencing number: `Some((token, fence))` when
    /// won, each win on a key getting a larger fence than the last and
    /// than the stored value's. The fencing counter (`fence:{key}`) lives
    /// at least the claim's TTL and the [`ClaimStore::fence_life`] from the
    /// win, and as long as the value from each
    /// [`ClaimStore::write_fenced`]: it expires once both have passed.
    pub async fn claim_fenced(
        &self,
        key: &str,
        ttl: Duration,
    ) -> RedisResult<Option<(Token, u64)>> {
        check_key(key)?;
        check_ttl(ttl)?;
        let token = Token::new();
        let fence: u64 = self
            .claim_fenced
            .key(lock_key(key))
            .key(fence_key(key))
            .key(value_key(key))
            .arg(token.as_str())
            .arg(millis(ttl))
            .arg(millis(ttl.max(self.fence_life)))
            .invoke_async(&mut self.con.clone())
            .await?;
        Ok((fence > 0).then_some((token, fence)))
    }

    /// Writes `value` under `fence`, fresh for `ttl` (no stale window), in
    /// the layout the cache reads; false when a newer fence already wrote
    /// (the write is refused, the newer value stays). Fence 0 is an
    /// unfenced write: it always lands, and leaves the stored fence.
    pub async fn write_fenced(
        &self,
        key: &str,
        value: &[u8],
        fence: u64,
        ttl: Duration,
    ) -> RedisResult<bool> {
        check_key(key)?;
        check_ttl(ttl)?;
        let now = wall_ms();
        let fresh = now + millis(ttl);
        let written: i64 = self
            .write_fenced
            .key(value_key(key))
            .key(fence_key(key))
            .arg(value)
            .arg(fence)
            // The version: when the value was made (here, written).
            .arg(now & 0xffff_ffff)
            .arg(fresh)
            .arg(fresh)
            .arg(0)
            .arg(millis(ttl))
            .invoke_async(&mut self.con.clone())
            .await?;
        Ok(written == 1)
    }

    /// The stored value and the fence it was written under; `None` when
    /// there is no value (nothing stored, a failure mark alone, or a row
    /// not in the layout, such as an older version's hash).
    pub async fn read(&self, key: &str) -> RedisResult<Option<(Vec<u8>, u64)>> {
        check_key(key)?;
        let row = stored_row(
            redis::cmd("GET")
                .arg(value_key(key))
                .query_async::<Option<Vec<u8>>>(&mut self.con.clone())
                .await,
        )?;
        Ok(row.and_then(|mut row| {
            let (header, at) = Header::parse(&row)?;
            header.version?;
            row.drain(..at);
            Some((row, header.fence))
        }))
    }

    /// A raw command on the store's connection (tests and tools).
    pub fn connection(&self) -> Conn {
        self.con.clone()
    }
}
