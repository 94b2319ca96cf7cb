local fence = tonumber(ARGV[2])
local row = redis.pcall('GET', KEYS[1])
local stored = 0
local version = nil
if type(row) == 'string' then
    local f, v = string.match(row, '^S1 (%d+) %d+ (%S+) ')
    stored = tonumber(f or '0')
    version = tonumber(v)
elseif row then
    row = redis.pcall('HGET', KEYS[1], 'fence')
    stored = tonumber(type(row) == 'string' and row or '0')
end
if fence > 0 and fence < stored then
    return 0
end
-- ARGV[8] = '1' (an unfenced write that newer data wins over): refused if
-- the stored row's version (when its computation started, or its set or
-- delete, wall-clock ms mod 2^32) is newer than this one's.
if fence == 0 and ARGV[8] == '1' and version then
    local d = (version - tonumber(ARGV[3])) % 4294967296
    if d > 0 and d < 2147483648 then
        return 0
    end
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
