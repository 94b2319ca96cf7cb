redis.call('HSET', KEYS[1], 'neg', ARGV[1])
if redis.call('PTTL', KEYS[1]) < 0 then
    redis.call('PEXPIRE', KEYS[1], ARGV[2])
end
return 1
