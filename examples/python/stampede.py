"""The cache read path from the interview card, in Python (asyncio):
singleflight inside the process, a Redis claim across processes."""
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

    def __init__(self, url, origin, claim=True, ttl=60.0, lock_ttl=3.0, wait=2.0):
        # Every command is bounded by 100 ms.
        self.redis = redis.Redis.from_url(
            url, decode_responses=True, socket_timeout=0.1, socket_connect_timeout=0.1)
        self.origin, self.claim = origin, claim
        self.ttl_ms, self.lock_ttl_ms, self.wait = int(ttl * 1000), int(lock_ttl * 1000), wait
        self.claims = 0  # claim attempts (SET NX), for the tests
        self.flights: dict[str, asyncio.Future] = {}
        self._release = self.redis.register_script(RELEASE)

    async def get(self, key, timeout=None):  # card 1: handle(key)
        """key's value. The timeout ends this caller's wait, not the work:
        the flight goes on and fills the cache for the others."""
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
        del self.flights[key]  # a failure is shared with this flight, never remembered
        if not flight.cancelled():
            flight.exception()  # retrieved, even if every caller gave up

    async def _load(self, key):
        """The flight's work: GET, else claim, compute, write, release."""
        try:
            value = await self.redis.get(f"value:{key}")  # card 2: GET key
            # card 3: a hit is answered at once
            if value is not None:
                return value
        except REDIS_DOWN:
            pass  # a miss: fail open
        token = None
        if self.claim:
            # card 6: SET lock:key token NX PX ttl, with a random token
            self.claims += 1
            token = secrets.token_hex(16)
            try:
                if not await self.redis.set(f"lock:{key}", token, nx=True, px=self.lock_ttl_ms):
                    return await self._poll(key)  # card 12: lost: poll for the value
            except REDIS_DOWN:
                token = None  # fail open: compute without the lock
        try:  # card 7: won (or failed open): compute, write, release
            value = await self.origin(key)  # card 9: the origin; runs on past every timeout
            try:
                await self.redis.set(f"value:{key}", value, px=self.ttl_ms)  # card 10: SET key v
            except REDIS_DOWN:
                pass  # a failed write still answers the value
            return value
        finally:
            if token:
                await self.release(key, token)  # card 11: only if the claim is still mine

    async def _poll(self, key):
        """Read the value until the claim's holder has written it, or give up."""
        loop = asyncio.get_running_loop()
        end = loop.time() + self.wait
        while loop.time() < end:
            value = await self.redis.get(f"value:{key}")
            if value is not None:
                return value
            await asyncio.sleep(0.01)
        raise NoValue(key)

    async def release(self, key, token):
        """True if the claim was still ours and is now free."""
        try:
            return await self._release(keys=[f"lock:{key}"], args=[token]) == 1
        except REDIS_DOWN:
            return False  # it expires with its TTL
