// The read path against a throwaway redis-server: make examples (tsc, then node --test).
// No test asserts a tight time: they count origin calls and claims and wait
// on gates or generous bounds, so that they hold on a loaded machine.
import assert from "node:assert/strict";
import { ChildProcess, spawn } from "node:child_process";
import { createServer } from "node:net";
import { after, before, test } from "node:test";
import { RefreshCache } from "./refresh";
import { Cache, NoValue, Options, TimedOut, within } from "./stampede";

const P = 3, C = 50; // processes (instances) x concurrent calls each
let url = "";
let server: ChildProcess;
let side: Cache; // another client of the same Redis: the test's own hand
const caches: { close(): Promise<void> }[] = [];
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

before(async () => {
  const port = await new Promise<number>((resolve) => {
    const s = createServer().listen(0, "127.0.0.1", () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });
  server = spawn("redis-server", ["--port", `${port}`, "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"]);
  url = `redis://127.0.0.1:${port}`;
  for (let i = 0; i < 250; i++) {
    side = new Cache(url, async (k) => k, { redisMs: 5_000 });
    caches.push(side);
    await sleep(20);
    if (side.redis.isReady) break;
  }
});

after(async () => {
  await Promise.all(caches.map((c) => c.close()));
  server.kill();
});

/** A Cache whose Redis commands are bounded by 2 s, not 100 ms: on a loaded
 *  machine a slow answer must not be taken for a Redis failure (which fails
 *  open, and would add origin calls to the counts). The paused-Redis test
 *  keeps the 100 ms. */
function cache(origin: (key: string) => Promise<string>, opts: Partial<Options> = {}, at = url): Cache {
  const c = new Cache(at, origin, { redisMs: 2_000, ...opts });
  caches.push(c);
  return c;
}

/** Counts its calls; each sleeps ms, or waits for open() when gated. */
function slowOrigin(ms: number, error?: Error, gated = false) {
  let open = () => {};
  const gate = gated ? new Promise<void>((resolve) => (open = resolve)) : Promise.resolve();
  const origin = async (key: string) => {
    origin.calls++;
    await gate;
    await sleep(ms);
    if (error) throw error;
    return `value of ${key}`;
  };
  origin.calls = 0;
  origin.open = () => open();
  return origin;
}

async function until(condition: () => boolean | Promise<boolean>) {
  for (let i = 0; i < 1000; i++) {
    if (await condition()) return;
    await sleep(5);
  }
  throw new Error("never happened");
}

/** P instances sharing the Redis, C concurrent gets on each, on key. */
async function burst(origin: (key: string) => Promise<string>, key: string, claim: boolean) {
  const fleet = Array.from({ length: P }, () => cache(origin, { claim }));
  const got = await Promise.all(fleet.flatMap((c) => Array.from({ length: C }, () => c.get(key))));
  assert.deepEqual(new Set(got), new Set([`value of ${key}`]));
  assert.deepEqual(fleet.map((c) => c.flights.size), Array(P).fill(0), "flights left in the map");
  return fleet.reduce((n, c) => n + c.claims, 0);
}

test("a burst makes one origin call", async () => {
  let origin = slowOrigin(100);
  const claims = await burst(origin, "burst", true);
  console.log(`typescript: ${P} processes x ${C} calls -> ${origin.calls} origin calls (${claims} claim attempts)`);
  assert.equal(origin.calls, 1);
  assert.ok(claims >= P);
  origin = slowOrigin(100);
  assert.equal(await burst(origin, "burst-sf", false), 0); // singleflight only
  assert.equal(origin.calls, P);
});

test("a hit never enters a flight", async () => {
  // While this instance's flight waits on its origin, another instance
  // writes the value: a caller finds it with its GET and answers at once.
  const origin = slowOrigin(0, undefined, true);
  const c = cache(origin);
  const flight = c.get("hot");
  await until(() => origin.calls === 1);
  await side.redis.set("value:hot", "cached", { PX: 10_000 });
  assert.equal(await c.get("hot", 10_000), "cached");
  origin.open();
  await flight;
});

test("a failure is shared with the flight's waiters, never remembered", async () => {
  // A caller whose first GET ends only after a flight settled starts the
  // next one: on a loaded machine the C callers can make a few flights, never C.
  const origin = slowOrigin(200, new Error("origin down"));
  const c = cache(origin);
  const got = await Promise.allSettled(Array.from({ length: C }, () => c.get("failing")));
  const calls = origin.calls;
  assert.ok(calls >= 1 && calls <= 5, `${calls} origin calls`);
  assert.ok(got.every((r) => r.status === "rejected" && r.reason.message === "origin down"));
  assert.equal(c.flights.size, 0);
  await assert.rejects(c.get("failing"));
  assert.equal(origin.calls, calls + 1, "the next call must try again");
});

test("a deadline ends the wait, not the work", async () => {
  const origin = slowOrigin(0, undefined, true); // answers only when the test says so
  const c = cache(origin);
  await assert.rejects(c.get("slow", 50), TimedOut);
  origin.open(); // the flight goes on and lands its value
  await until(async () => (await side.redis.get("value:slow")) === "value of slow");
});

test("a release never deletes another holder's claim", async () => {
  const c = cache(slowOrigin(0));
  await side.redis.set("lock:held", "theirs", { PX: 10_000 });
  assert.equal(await c.release("held", "mine"), false);
  assert.equal(await side.redis.get("lock:held"), "theirs");
  assert.equal(await c.release("held", "theirs"), true);
});

test("a killed holder's claim is taken over", async () => {
  // A holder died holding the claim (a token nobody releases): the pollers
  // claim again while they poll, and one takes over when its TTL runs out.
  await side.redis.set("lock:dead", "a holder that died", { PX: 300 });
  const origin = slowOrigin(20);
  await burst(origin, "dead", true);
  assert.equal(origin.calls, 1, "the poller that took the claim over computes");
  assert.equal(await side.redis.get("lock:dead"), null, "and releases it");
});

test("a poll ends and leaves no flight", async () => {
  await side.redis.set("lock:stuck", "a holder that never writes", { PX: 60_000 });
  const origin = slowOrigin(0);
  const c = cache(origin, { waitMs: 200 });
  await assert.rejects(c.get("stuck"), NoValue);
  assert.equal(c.flights.size, 0);
  await side.redis.del("lock:stuck");
  assert.equal(await c.get("stuck"), "value of stuck");
  assert.equal(origin.calls, 1);
});

test("a value written during the poll is read", async () => {
  await side.redis.set("lock:polled", "another instance", { PX: 60_000 });
  const origin = slowOrigin(0);
  const c = cache(origin, { waitMs: 10_000 }); // ends long before the claim's TTL
  const got = c.get("polled");
  await until(() => c.claims >= 3); // it has polled and claimed again
  await side.redis.set("value:polled", "written by the holder");
  assert.equal(await got, "written by the holder");
  assert.equal(origin.calls, 0);
});

/** Runs before() ahead of c's claim (a SET NX) on lock:<key>. */
function beforeClaim(c: Cache | RefreshCache, key: string, before: () => Promise<unknown>) {
  const send = c.redis.set.bind(c.redis) as (...args: unknown[]) => Promise<unknown>;
  (c.redis as unknown as { set: unknown }).set = async (...args: unknown[]) => {
    if (args[0] === `lock:${key}` && (args[2] as { NX?: boolean })?.NX) await before();
    return send(...args);
  };
}

test("the GET after winning finds a value written since the first", async () => {
  // The last holder writes the value and releases between this instance's
  // first GET and its claim: the GET after the won claim finds it.
  const origin = slowOrigin(0);
  const c = cache(origin);
  beforeClaim(c, "recheck", () => side.redis.set("value:recheck", "written meanwhile"));
  assert.equal(await c.get("recheck"), "written meanwhile");
  assert.equal(origin.calls, 0);
  assert.equal(await side.redis.get("lock:recheck"), null, "released");
});

test("Redis down: fail open", async () => {
  const c = cache(slowOrigin(0), { redisMs: 100 }, "redis://127.0.0.1:1"); // nothing listens there
  assert.equal(await c.get("k"), "value of k");
});

test("Redis paused (SIGSTOP): fail open within the timeouts", async () => {
  // Every command ends at its 100 ms bound, and every caller gets the
  // origin's value while Redis is still stopped.
  const c = cache(slowOrigin(0), { redisMs: 100 });
  await c.get("warm");
  server.kill("SIGSTOP");
  try {
    // 20 s: far past the bounds, only a hang reaches it.
    const got = await within(Promise.all(Array.from({ length: C }, () => c.get("paused"))), 20_000);
    assert.deepEqual(new Set(got), new Set(["value of paused"]));
  } finally {
    server.kill("SIGCONT");
  }
});

// The second seed's variant (refresh.ts): a claim on the refresh path only.

function refreshFleet(origin: (key: string) => Promise<string>) {
  const fleet = Array.from({ length: P }, () => new RefreshCache(url, origin, 60_000, 300_000, 3_000, 2_000));
  caches.push(...fleet);
  return fleet;
}

test("refresh variant: a cold caller computes and never waits on a lock", async () => {
  const origin = slowOrigin(100);
  const fleet = refreshFleet(origin);
  await side.redis.set("lock:cold", "another holder"); // a claim held elsewhere, for good
  const got = await within(Promise.all(fleet.flatMap((c) => Array.from({ length: C }, () => c.get("cold")))), 20_000);
  assert.deepEqual(new Set(got), new Set(["value of cold"]));
  console.log(`typescript (refresh, cold): ${P} processes x ${C} calls -> ${origin.calls} origin calls`);
  assert.deepEqual({ calls: origin.calls, claims: fleet.reduce((n, c) => n + c.claims, 0) }, { calls: P, claims: 0 });
  await side.redis.del("lock:cold");
});

const stale = (value: string) => JSON.stringify({ value, freshUntil: Date.now() - 1 });
const refreshed = (fleet: RefreshCache[]) => until(() => fleet.every((c) => c.flights.size === 0));

test("refresh variant: a stale value is answered at once, one instance refreshes it", async () => {
  const origin = slowOrigin(0, undefined, true); // the refresh waits for the test
  const fleet = refreshFleet(origin);
  await side.redis.set("value:stale", stale("old"), { PX: 10_000 });
  // 20 s: only a caller that waits on the gated refresh reaches it.
  const got = await within(Promise.all(fleet.flatMap((c) => Array.from({ length: C }, () => c.get("stale")))), 20_000);
  assert.deepEqual(new Set(got), new Set(["old"]), "answered while the refresh waits on its origin");
  origin.open();
  await refreshed(fleet);
  console.log(`typescript (refresh, stale): ${P} processes x ${C} calls -> ${origin.calls} origin calls`);
  assert.equal(origin.calls, 1);
  assert.equal(await fleet[0].get("stale"), "value of stale");
  assert.equal(await side.redis.get("lock:stale"), null, "released");
});

test("refresh variant: the GET after winning finds a value refreshed since the first", async () => {
  const origin = slowOrigin(0);
  const [c] = refreshFleet(origin);
  await side.redis.set("value:rechecked", stale("old"), { PX: 10_000 });
  const fresh = JSON.stringify({ value: "refreshed meanwhile", freshUntil: Date.now() + 60_000 });
  beforeClaim(c, "rechecked", () => side.redis.set("value:rechecked", fresh));
  assert.equal(await c.get("rechecked"), "old");
  await refreshed([c]);
  assert.equal(origin.calls, 0);
  assert.equal(await c.get("rechecked"), "refreshed meanwhile");
});
