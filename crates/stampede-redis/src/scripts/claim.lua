-- KEYS: the claim, the fencing counter, the value; ARGV: the token, the
-- claim's TTL (ms), how long the counter lives at least from here (ms).
-- Takes the claim and its fencing number; 0 when someone else holds it.
if not redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then
    return 0
end
