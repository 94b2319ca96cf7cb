local fence = tonumber(ARGV[2])
local stored = tonumber(redis.call('HGET', KEYS[1], 'fence') or '0')
if fence > 0 and fence < stored then
    return 0
end
redis.call('HSET', KEYS[1], 'v', ARGV[1], 'version', ARGV[3], 'fresh', ARGV[4],
    'stale', ARGV[5], 'delta', ARGV[6], 'neg', 0)
if fence > 0 then
    redis.call('HSET', KEYS[1], 'fence', fence)
    stored = fence
end
redis.call('PEXPIRE', KEYS[1], ARGV[7])
if stored > 0 then
    if tonumber(redis.call('GET', KEYS[2]) or '0') < stored then
        redis.call('SET', KEYS[2], stored)
    end
    if redis.call('PTTL', KEYS[2]) < tonumber(ARGV[7]) then
        redis.call('PEXPIRE', KEYS[2], ARGV[7])
    end
end
return 1
