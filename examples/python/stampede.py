"""The cache read path from the interview card, in Python (asyncio): a GET
first, then singleflight inside the process, a Redis claim inside the flight
across processes."""
import asyncio
import secrets

import redis.asyncio as redis
from redis.exceptions import RedisError

# Delete only if still mine: past its TTL the claim may be another
# instance's, and a plain DEL would free that one.
RELEASE = """
if redis.call("GET", KEYS[1]) == ARGV[1] then return redis.call("DEL", KEYS[1]) end
return 0"""

REDIS_DOWN = (RedisError, OSError)


class NoValue(Exception):
    """Another instance held the claim and wrote nothing in time."""


class Cache:
    """One instance (one process) of a fleet sharing a Redis."""

    def __init__(self, url, origin, claim=True, ttl=60.0, lock_ttl=3.0, wait=2.0, poll=0.01,
                 redis_timeout=0.1):
        # Every Redis command is bounded (100 ms to connect, to send, to
        # answer), so a Redis that hangs costs a bounded wait, then fails open.
        self.redis = redis.Redis.from_url(
            url, decode_responses=True,
            socket_timeout=redis_timeout, socket_connect_timeout=redis_timeout)
        self.origin, self.claim = origin, claim
        self.ttl_ms, self.lock_ttl_ms = int(ttl * 1000), int(lock_ttl * 1000)
        self.wait, self.poll = wait, poll  # a loser polls this long at most, this often
        self.claims = 0  # claim attempts (SET NX), for the tests
        self.flights: dict[str, asyncio.Future] = {}
        self._release = self.redis.register_script(RELEASE)

    async def get(self, key, timeout=None):  # card 1: handle(key)
        """key's value. The timeout ends this caller's wait, not the work:
        the flight goes on and fills the cache for the others."""
        value = await self._get(key)  # card 2: GET key (a Redis error is a miss: fail open)
        if value is not None:
            return value  # card 3: a hit never enters a flight
        # card 4: singleflight(key). No lock: one event loop, and nothing is
        # awaited between the lookup and the insert.
        flight = self.flights.get(key)
        if flight is None:  # the leader: start the flight as a task of its own
            flight = asyncio.ensure_future(self._load(key))
            self.flights[key] = flight
            flight.add_done_callback(lambda f: self._settled(key, f))
        # card 5: wait for the flight, until my own timeout
        return await asyncio.wait_for(asyncio.shield(flight), timeout)

    def _settled(self, key, flight):  # card 13: every waiter gets this result
        # Called however the flight ended (a value, an error, cancelled): a
        # failure is shared with this flight's waiters, never remembered.
        del self.flights[key]
        if not flight.cancelled():
            flight.exception()  # retrieved, even if every caller gave up

    async def _load(self, key):
        """The flight's work: claim, GET again, compute, write, release; or,
        having lost the claim, poll."""
        if not self.claim:
            return await self._compute(key)
        loop = asyncio.get_running_loop()
        end = loop.time() + self.wait
        while True:
            # card 6: SET lock:key token NX PX ttl, with a random token
            token = secrets.token_hex(16)
            self.claims += 1
            try:
                won = await self.redis.set(f"lock:{key}", token, nx=True, px=self.lock_ttl_ms)
            except REDIS_DOWN:
                return await self._compute(key)  # Redis failed: fail open, compute without the lock
            # card 7: won (None: another instance holds the claim)
            if won:
                try:
                    # card 8: GET again: the last holder may have written it since my first GET
                    value = await self._get(key)
                    return value if value is not None else await self._compute(key)
                finally:
                    await self.release(key, token)  # card 11: only if the claim is still mine
            # card 12: lost: poll for the holder's value, and claim again on
            # the next turn (a dead holder's claim expires); never past the wait
            if loop.time() >= end:
                raise NoValue(key)
            await asyncio.sleep(self.poll)
            value = await self._get(key)
            if value is not None:
                return value

    async def _compute(self, key):
        value = await self.origin(key)  # card 9: the origin; runs on past every timeout
        try:
            await self.redis.set(f"value:{key}", value, px=self.ttl_ms)  # card 10: SET key v
        except REDIS_DOWN:
            pass  # a failed write still answers the value
        return value

    async def _get(self, key):
        """key's value, or None: a miss, or Redis failing (fail open)."""
        try:
            return await self.redis.get(f"value:{key}")
        except REDIS_DOWN:
            return None

    async def release(self, key, token):
        """True if the claim was still ours and is now free."""
        try:
            return await self._release(keys=[f"lock:{key}"], args=[token]) == 1
        except REDIS_DOWN:
            return False  # it expires with its TTL
