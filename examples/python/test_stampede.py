"""The read path against a throwaway redis-server: python3 -m unittest -v"""
import asyncio
import socket
import subprocess
import time
import unittest

import redis as sync_redis

from stampede import Cache

P, C = 3, 50  # processes (instances) x concurrent calls each
URL = None
server = None


def setUpModule():
    global URL, server
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    server = subprocess.Popen(["redis-server", "--port", str(port), "--bind", "127.0.0.1",
                               "--save", "", "--appendonly", "no"], stdout=subprocess.DEVNULL)
    URL = f"redis://127.0.0.1:{port}"
    for _ in range(100):
        try:
            sync_redis.Redis.from_url(URL).ping()
            return
        except sync_redis.ConnectionError:
            time.sleep(0.02)


def tearDownModule():
    server.terminate()
    server.wait()


class Origin:
    def __init__(self, delay, error=None):
        self.calls, self.delay, self.error = 0, delay, error

    async def __call__(self, key):
        self.calls += 1
        await asyncio.sleep(self.delay)
        if self.error:
            raise self.error
        return f"value of {key}"


class ReadPath(unittest.IsolatedAsyncioTestCase):
    async def burst(self, key, claim):
        """P instances sharing the Redis, C concurrent gets on each, on a cold key."""
        origin = Origin(0.1)
        fleet = [Cache(URL, origin, claim=claim) for _ in range(P)]
        got = await asyncio.gather(*(c.get(key) for c in fleet for _ in range(C)))
        self.assertEqual(got, [f"value of {key}"] * (P * C))
        return origin.calls, sum(c.claims for c in fleet)

    async def test_burst_makes_one_origin_call(self):
        calls, claims = await self.burst("burst", claim=True)
        print(f"\npython: {P} processes x {C} calls -> {calls} origin calls ({claims} claim attempts)")
        self.assertEqual((calls, claims), (1, P))
        self.assertEqual(await self.burst("burst-sf", claim=False), (P, 0))  # singleflight only

    async def test_failure_is_shared_not_remembered(self):
        origin = Origin(0.05, RuntimeError("origin down"))
        cache = Cache(URL, origin)
        got = await asyncio.gather(*(cache.get("failing") for _ in range(C)), return_exceptions=True)
        self.assertEqual(origin.calls, 1)
        self.assertTrue(all(isinstance(e, RuntimeError) for e in got))
        with self.assertRaises(RuntimeError):
            await cache.get("failing")
        self.assertEqual(origin.calls, 2, "the next call must try again")

    async def test_deadline_ends_the_wait_not_the_work(self):
        cache = Cache(URL, Origin(0.3))
        start = time.monotonic()
        with self.assertRaises(asyncio.TimeoutError):
            await cache.get("slow", timeout=0.05)
        self.assertLess(time.monotonic() - start, 0.15)
        await asyncio.sleep(0.4)
        self.assertEqual(await cache.redis.get("value:slow"), "value of slow")

    async def test_release_never_deletes_another_holders_claim(self):
        cache = Cache(URL, Origin(0))
        await cache.redis.set("lock:held", "theirs", px=10_000)
        self.assertFalse(await cache.release("held", "mine"))
        self.assertEqual(await cache.redis.get("lock:held"), "theirs")
        self.assertTrue(await cache.release("held", "theirs"))

    async def test_redis_down_fails_open(self):
        cache = Cache("redis://127.0.0.1:1", Origin(0))  # nothing listens there
        self.assertEqual(await cache.get("k"), "value of k")


if __name__ == "__main__":
    unittest.main()
