-- The next fencing number (KEYS[2], KEYS[3], ARGV[3] as for the claim).
local fence = redis.call('INCR', KEYS[2])
-- Above the stored value's fence even if the counter was lost: a new
-- holder's write is never refused as older than what it replaces.
local stored = tonumber(redis.call('HGET', KEYS[3], 'fence') or '0')
if fence <= stored then
    fence = stored + 1
    redis.call('SET', KEYS[2], fence)
end
if redis.call('PTTL', KEYS[2]) < tonumber(ARGV[3]) then
    redis.call('PEXPIRE', KEYS[2], ARGV[3])
end
return fence
