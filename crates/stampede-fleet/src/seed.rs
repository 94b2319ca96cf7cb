//! The values a fleet run starts from, written straight into Redis in the
//! cache's layout (`value:{k}`, read by the driver; its field names are the
//! driver's, `stampede_redis::driver::field`), and a deploy's
//! re-warm (the `ttl-sync` fault). Test helpers: a service fills its cache
//! through `Cache::set` or its origin.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use stampede::claim::Micros;
use stampede_redis::driver::field;
use stampede_redis::value_key;

/// Wall-clock milliseconds since the Unix epoch (the value hash's times,
/// shared by every instance).
fn wall_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

/// A deploy's warm-up (a `ttl-sync` fault), for one key: a row holding a
/// value is written again fresh until `ARGV[1]` and stale until `ARGV[2]`
/// (wall-clock ms), its negative mark cleared, kept `ARGV[3]` ms; a key
/// with no value is left alone. Returns 1 when it re-warmed the key.
fn sync_ttl_script() -> redis::Script {
    redis::Script::new(&format!(
        "
if redis.call('HEXISTS', KEYS[1], '{payload}') == 0 then return 0 end
redis.call('HSET', KEYS[1], '{fresh}', ARGV[1], '{stale}', ARGV[2], '{neg}', 0)
redis.call('PEXPIRE', KEYS[1], ARGV[3])
return 1
",
        payload = field::PAYLOAD,
        fresh = field::FRESH,
        stale = field::STALE,
        neg = field::NEGATIVE,
    ))
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
    redis::cmd("HSET")
        .arg(value_key(&key.to_string()))
        .arg(field::PAYLOAD)
        .arg(payload)
        .arg(field::VERSION)
        .arg(0)
        .arg(field::FRESH)
        .arg(fresh_until)
        .arg(field::STALE)
        .arg(stale_until)
        .arg(field::DELTA)
        .arg(delta)
        .query_async::<i64>(con)
        .await?;
    if stale_until > now {
        redis::cmd("PEXPIRE")
            .arg(value_key(&key.to_string()))
            .arg(stale_until - now + 1000)
            .query_async::<i64>(con)
            .await?;
    }
    Ok(())
}
