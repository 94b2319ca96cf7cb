if ARGV[1] ~= '' and not redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then
    return 0
end
local fence = redis.call('INCR', KEYS[2])
local row = redis.pcall('GET', KEYS[3])
local stored = 0
if type(row) == 'string' then
    stored = tonumber(string.match(row, '^S1 (%d+) ') or '0')
elseif row then
    row = redis.pcall('HGET', KEYS[3], 'fence')
    stored = tonumber(type(row) == 'string' and row or '0')
end
if fence <= stored then
    fence = stored + 1
    redis.call('SET', KEYS[2], fence)
end
if redis.call('PTTL', KEYS[2]) < tonumber(ARGV[3]) then
    redis.call('PEXPIRE', KEYS[2], ARGV[3])
end
return fence
