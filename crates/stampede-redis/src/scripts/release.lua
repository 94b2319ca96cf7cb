local holder = redis.call('GET', KEYS[1])
if holder == ARGV[1] then
    redis.call('DEL', KEYS[1])
    return 1
end
if holder then
    return -1
end
return 0
