-- KEYS: the value, the fencing counter; ARGV: the payload, the writer's
-- fence (0: an unfenced writer), its version, fresh until and stale until
-- (wall-clock ms), the recompute's delta (µs), how long the value is kept
-- (ms).
-- A fenced write older than the stored value's fence is refused (0). An
-- unfenced write always lands and leaves the stored fence in place, so
-- fenced and unfenced writers never lock each other out.
local fence = tonumber(ARGV[2])
local current = tonumber(redis.call('HGET', KEYS[1], 'fence') or '0')
if fence > 0 and fence < current then
    return 0
end
redis.call('HSET', KEYS[1], 'v', ARGV[1], 'version', ARGV[3], 'fresh', ARGV[4],
    'stale', ARGV[5], 'delta', ARGV[6], 'neg', 0)
if fence > 0 then
    redis.call('HSET', KEYS[1], 'fence', fence)
    current = fence
end
redis.call('PEXPIRE', KEYS[1], ARGV[7])
-- The counter outlives the value it fences and never falls below its
-- fence: the next claim's number is larger.
if current > 0 then
    if tonumber(redis.call('GET', KEYS[2]) or '0') < current then
        redis.call('SET', KEYS[2], current)
    end
    if redis.call('PTTL', KEYS[2]) < tonumber(ARGV[7]) then
        redis.call('PEXPIRE', KEYS[2], ARGV[7])
    end
end
return 1
