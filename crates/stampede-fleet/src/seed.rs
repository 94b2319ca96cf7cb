//! The values a fleet run starts from, written straight into Redis in the
//! cache's layout (`value:{k}`, one string laid out by
//! `stampede_redis::row`, read by the driver), and a deploy's
//! re-warm (the `ttl-sync` fault). Test helpers: a service fills its cache
//! through `Cache::set` or its origin.

use std::time::Duration;

use stampede::claim::Micros;
use stampede_redis::row::{wall_ms, Header};
use stampede_redis::value_key;

/// A deploy's warm-up (a `ttl-sync` fault), for one key: a row holding a
/// value is written again fresh until `ARGV[1]` and stale until `ARGV[2]`
/// (wall-clock ms), its negative mark cleared, its fence, version, delta
/// and payload kept, and kept `ARGV[3]` ms; a key with no value (nothing,
/// or a failure mark alone, whose version is `-`) is left alone. The
/// header's order is `stampede_redis::row`'s. Returns 1 when it re-warmed
/// the key.
fn sync_ttl_script() -> redis::Script {
    redis::Script::new(
        "
local row = redis.call('GET', KEYS[1])
if not row then return 0 end
local fence, version, delta, payload =
    string.match(row, '^S1 (%d+) %d+ (%d+) %d+ %d+ (%d+)\\n(.*)$')
if not fence then return 0 end
redis.call('SET', KEYS[1], 'S1 ' .. fence .. ' 0 ' .. version .. ' ' .. ARGV[1] .. ' ' ..
    ARGV[2] .. ' ' .. delta .. '\\n' .. payload, 'PX', ARGV[3])
return 1
",
    )
}

/// Performs a `ttl-sync` fault on keys `0..keys`: every key holding a
/// value is made fresh for exactly `ttl` from one instant (no jitter),
/// then stale for `stale` more, as the simulation's deploy re-warms the
/// cache. One script call per key (a cluster keeps each key in its own
/// slot). Returns how many keys it re-warmed.
pub async fn sync_ttls(
    con: &mut impl redis::aio::ConnectionLike,
    keys: u32,
    ttl: Duration,
    stale: Duration,
) -> redis::RedisResult<u32> {
    let script = sync_ttl_script();
    let now = wall_ms();
    let fresh = now + (ttl.as_millis() as u64).max(1);
    let stale_until = fresh + stale.as_millis() as u64;
    let keep = (stale_until - now).max(1);
    let mut warmed = 0;
    for k in 0..keys {
        let done: i64 = script
            .key(value_key(&k.to_string()))
            .arg(fresh)
            .arg(stale_until)
            .arg(keep)
            .invoke_async(con)
            .await?;
        warmed += u32::from(done == 1);
    }
    Ok(warmed)
}

/// Stores `key` as already expired but servable stale for `stale` (what a
/// burst with a stale window starts from), in the layout `read_value` reads.
pub async fn seed_stale(
    con: &mut impl redis::aio::ConnectionLike,
    key: u32,
    payload: &[u8],
    stale: Duration,
    delta: Micros,
) -> redis::RedisResult<()> {
    seed_value(con, key, payload, Duration::ZERO, stale, delta).await
}

/// Stores `key` (version 0) fresh for `fresh`, then servable stale for
/// `stale` more (what steady traffic starts from), in the layout
/// `read_value` reads.
pub async fn seed_value(
    con: &mut impl redis::aio::ConnectionLike,
    key: u32,
    payload: &[u8],
    fresh: Duration,
    stale: Duration,
    delta: Micros,
) -> redis::RedisResult<()> {
    let now = wall_ms();
    let fresh_until = now + fresh.as_millis() as u64;
    let stale_until = fresh_until + stale.as_millis() as u64;
    let row = Header {
        version: Some(0),
        fresh_until,
        stale_until,
        delta,
        ..Header::default()
    }
    .encode(payload);
    let mut set = redis::cmd("SET");
    set.arg(value_key(&key.to_string())).arg(row);
    if stale_until > now {
        set.arg("PX").arg(stale_until - now + 1000);
    }
    set.query_async::<()>(con).await
}
