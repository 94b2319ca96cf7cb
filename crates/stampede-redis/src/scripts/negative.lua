-- KEYS: the value; ARGV: the failure mark's end (wall-clock ms), how long
-- it lasts (ms). Marks the value as failed; a hash this creates (no value
-- under the mark) expires with the mark, one that holds a value keeps its
-- own expiry.
redis.call('HSET', KEYS[1], 'neg', ARGV[1])
if redis.call('PTTL', KEYS[1]) < 0 then
    redis.call('PEXPIRE', KEYS[1], ARGV[2])
end
return 1
