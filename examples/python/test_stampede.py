"""The read path against a throwaway redis-server: python3 -m unittest -v

No test asserts a tight time: they count origin calls and claims and wait
on events or generous bounds, so that they hold on a loaded machine."""
import asyncio
import signal
import socket
import subprocess
import time
import unittest

import redis as sync_redis

from stampede import Cache, NoValue

P, C = 3, 50  # processes (instances) x concurrent calls each
URL = None
server = None
side = None  # another client of the same Redis: the test's own hand


def setUpModule():
    global URL, server, side
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    server = subprocess.Popen(["redis-server", "--port", str(port), "--bind", "127.0.0.1",
                               "--save", "", "--appendonly", "no"], stdout=subprocess.DEVNULL)
    URL = f"redis://127.0.0.1:{port}"
    side = sync_redis.Redis.from_url(URL, decode_responses=True)
    for _ in range(250):
        try:
            side.ping()
            return
        except sync_redis.ConnectionError:
            time.sleep(0.02)


def tearDownModule():
    server.terminate()
    server.wait()


class Origin:
    """Counts its calls; each sleeps `delay`, or waits for `gate` when given."""

    def __init__(self, delay=0, error=None, gate=None):
        self.calls, self.delay, self.error, self.gate = 0, delay, error, gate

    async def __call__(self, key):
        self.calls += 1
        if self.gate:
            await self.gate.wait()
        await asyncio.sleep(self.delay)
        if self.error:
            raise self.error
        return f"value of {key}"


caches = []  # closed after each test, on the loop they ran on


def cache_at(url, origin, **kw):
    cache = Cache(url, origin, **kw)
    caches.append(cache)
    return cache


def instance(origin, **kw):
    """A Cache whose Redis commands are bounded by 2 s, not 100 ms: on a
    loaded machine a slow answer must not be taken for a Redis failure
    (which fails open, and would add origin calls to the counts). The
    paused-Redis test keeps the 100 ms."""
    return cache_at(URL, origin, redis_timeout=2.0, **kw)


async def until(condition):
    for _ in range(1000):
        if condition():
            return
        await asyncio.sleep(0.005)
    raise AssertionError("never happened")


class ReadPath(unittest.IsolatedAsyncioTestCase):
    async def asyncSetUp(self):
        asyncio.get_running_loop().set_debug(False)  # no slow-callback warnings on a loaded machine

    async def asyncTearDown(self):
        while caches:
            await caches.pop().redis.connection_pool.disconnect()

    async def burst(self, origin, key, claim):
        """P instances sharing the Redis, C concurrent gets on each."""
        fleet = [instance(origin, claim=claim) for _ in range(P)]
        got = await asyncio.gather(*(c.get(key) for c in fleet for _ in range(C)))
        self.assertEqual(got, [f"value of {key}"] * (P * C))
        self.assertEqual([len(c.flights) for c in fleet], [0] * P, "flights left in the map")
        return sum(c.claims for c in fleet)

    async def test_burst_makes_one_origin_call(self):
        origin = Origin(0.1)
        claims = await self.burst(origin, "burst", claim=True)
        print(f"\npython: {P} processes x {C} calls -> {origin.calls} origin calls ({claims} claim attempts)")
        self.assertEqual(origin.calls, 1)
        self.assertGreaterEqual(claims, P)
        origin = Origin(0.1)
        self.assertEqual(await self.burst(origin, "burst-sf", claim=False), 0)  # singleflight only
        self.assertEqual(origin.calls, P)

    async def test_a_hit_never_enters_a_flight(self):
        """While this instance's flight waits on its origin, another instance
        writes the value: a caller finds it with its GET and answers at once."""
        origin = Origin(gate=asyncio.Event())
        cache = instance(origin)
        flight = asyncio.ensure_future(cache.get("hot"))
        await until(lambda: origin.calls == 1)
        side.set("value:hot", "cached", px=10_000)
        self.assertEqual(await cache.get("hot", timeout=10), "cached")
        origin.gate.set()
        await flight

    async def test_failure_is_shared_not_remembered(self):
        """A caller whose first GET ends only after a flight settled starts
        the next one: on a loaded machine the C callers can make a few
        flights, never C."""
        origin = Origin(0.2, RuntimeError("origin down"))
        cache = instance(origin)
        got = await asyncio.gather(*(cache.get("failing") for _ in range(C)), return_exceptions=True)
        calls = origin.calls
        self.assertIn(calls, range(1, 6))
        self.assertTrue(all(isinstance(e, RuntimeError) for e in got))
        self.assertEqual(cache.flights, {})
        with self.assertRaises(RuntimeError):
            await cache.get("failing")
        self.assertEqual(origin.calls, calls + 1, "the next call must try again")

    async def test_deadline_ends_the_wait_not_the_work(self):
        origin = Origin(gate=asyncio.Event())  # answers only when the test says so
        cache = instance(origin)
        with self.assertRaises(asyncio.TimeoutError):
            await cache.get("slow", timeout=0.05)
        origin.gate.set()  # the flight goes on and lands its value
        await until(lambda: side.get("value:slow") == "value of slow")

    async def test_release_never_deletes_another_holders_claim(self):
        cache = instance(Origin())
        side.set("lock:held", "theirs", px=10_000)
        self.assertFalse(await cache.release("held", "mine"))
        self.assertEqual(side.get("lock:held"), "theirs")
        self.assertTrue(await cache.release("held", "theirs"))

    async def test_a_killed_holders_claim_is_taken_over(self):
        """A holder died holding the claim (a token nobody releases): the
        pollers claim again while they poll, and one takes over at its TTL."""
        side.set("lock:dead", "a holder that died", px=300)
        origin = Origin(0.02)
        await self.burst(origin, "dead", claim=True)
        self.assertEqual(origin.calls, 1, "the poller that took the claim over computes")
        self.assertIsNone(side.get("lock:dead"), "and releases it")

    async def test_a_poll_ends_and_leaves_no_flight(self):
        side.set("lock:stuck", "a holder that never writes", px=60_000)
        origin = Origin()
        cache = instance(origin, wait=0.2)
        with self.assertRaises(NoValue):
            await cache.get("stuck")
        self.assertEqual(cache.flights, {})
        side.delete("lock:stuck")
        self.assertEqual(await cache.get("stuck"), "value of stuck")
        self.assertEqual(origin.calls, 1)

    async def test_a_value_written_during_the_poll_is_read(self):
        side.set("lock:polled", "another instance", px=60_000)
        origin = Origin()
        cache = instance(origin, wait=10)  # ends long before the claim's TTL
        got = asyncio.ensure_future(cache.get("polled"))
        await until(lambda: cache.claims >= 3)  # it has polled and claimed again
        side.set("value:polled", "written by the holder")
        self.assertEqual(await got, "written by the holder")
        self.assertEqual(origin.calls, 0)

    async def test_the_get_after_winning_finds_a_value_written_since_the_first(self):
        """The last holder writes the value and releases between this
        instance's first GET and its claim: the GET after the won claim
        finds it, and the origin is not called."""
        origin = Origin()
        cache = instance(origin)
        send = cache.redis.set

        async def set_(name, value, **kw):
            if name == "lock:recheck" and kw.get("nx"):
                side.set("value:recheck", "written meanwhile")
            return await send(name, value, **kw)

        cache.redis.set = set_
        self.assertEqual(await cache.get("recheck"), "written meanwhile")
        self.assertEqual(origin.calls, 0)
        self.assertIsNone(side.get("lock:recheck"), "released")

    async def test_redis_down_fails_open(self):
        cache = cache_at("redis://127.0.0.1:1", Origin())  # nothing listens there
        self.assertEqual(await cache.get("k"), "value of k")

    async def test_redis_paused_fails_open_within_the_timeouts(self):
        """Redis hangs (SIGSTOP): every command ends at its 100 ms bound, and
        every caller gets the origin's value while Redis is still stopped."""
        cache = cache_at(URL, Origin())
        await cache.get("warm")  # a pooled connection, open before the pause
        server.send_signal(signal.SIGSTOP)
        try:
            # 20 s: far past the bounds, only a hang reaches it.
            got = await asyncio.wait_for(asyncio.gather(*(cache.get("paused") for _ in range(C))), 20)
        finally:
            server.send_signal(signal.SIGCONT)
        self.assertEqual(got, ["value of paused"] * C)


if __name__ == "__main__":
    unittest.main()
