local current = tonumber(redis.call('HGET', KEYS[1], 'fence') or '0')
if tonumber(ARGV[2]) < current then
    return 0
end
redis.call('HSET', KEYS[1], 'value', ARGV[1], 'fence', ARGV[2])
redis.call('PEXPIRE', KEYS[1], ARGV[3])
return 1
