local row = redis.pcall('GET', KEYS[1])
local head, rest
if type(row) == 'string' then
    head, rest = string.match(row, '^(S1 %d+ )%d+( %d.*)$')
end
if head then
    redis.call('SET', KEYS[1], head .. ARGV[1] .. rest, 'KEEPTTL')
else
    redis.call('SET', KEYS[1], 'S1 0 ' .. ARGV[1] .. ' - 0 0 0\n', 'PX', ARGV[2])
end
return 1
