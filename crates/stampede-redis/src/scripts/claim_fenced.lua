if ARGV[1] ~= '' and not redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then
    return 0
end
local fence = redis.call('INCR', KEYS[2])
local stored = tonumber(redis.call('HGET', KEYS[3], 'fence') or '0')
if fence <= stored then
    fence = stored + 1
    redis.call('SET', KEYS[2], fence)
end
if redis.call('PTTL', KEYS[2]) < tonumber(ARGV[3]) then
    redis.call('PEXPIRE', KEYS[2], ARGV[3])
end
return fence
