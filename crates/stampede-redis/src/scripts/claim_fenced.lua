-- KEYS: the claim, the fencing counter, the value; ARGV: the token, the
-- claim's TTL (ms), how long the counter lives at least from here (ms).
-- Takes the claim and its fencing number; 0 when someone else holds it.
if not redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then
    return 0
end
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
