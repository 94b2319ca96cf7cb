local fence = tonumber(ARGV[2])
local row = redis.pcall('GET', KEYS[1])
local stored = 0
if type(row) == 'string' then
    stored = tonumber(string.match(row, '^S1 (%d+) ') or '0')
elseif row then
    row = redis.pcall('HGET', KEYS[1], 'fence')
    stored = tonumber(type(row) == 'string' and row or '0')
end
if fence > 0 and fence < stored then
    return 0
end
if fence > 0 then
    stored = fence
end
redis.call('SET', KEYS[1], string.format('S1 %d 0 %s %s %s %s\n', stored, ARGV[3], ARGV[4],
    ARGV[5], ARGV[6]) .. ARGV[1], 'PX', ARGV[7])
if stored > 0 then
    if tonumber(redis.call('GET', KEYS[2]) or '0') < stored then
        redis.call('SET', KEYS[2], stored)
    end
    if redis.call('PTTL', KEYS[2]) < tonumber(ARGV[7]) then
        redis.call('PEXPIRE', KEYS[2], ARGV[7])
    end
end
return 1
