// The read path against a throwaway redis-server: make examples (tsc, then node --test).
import assert from "node:assert/strict";
import { ChildProcess, spawn } from "node:child_process";
import { createServer } from "node:net";
import { after, before, test } from "node:test";
import { RefreshCache } from "./refresh";
import { Cache, TimedOut } from "./stampede";

const P = 3, C = 50; // processes (instances) x concurrent calls each
let url = "";
let server: ChildProcess;
const caches: { close(): Promise<void> }[] = [];

before(async () => {
  const port = await new Promise<number>((resolve) => {
    const s = createServer().listen(0, "127.0.0.1", () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });
  server = spawn("redis-server", ["--port", `${port}`, "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"]);
  url = `redis://127.0.0.1:${port}`;
  for (let i = 0; i < 100; i++) {
    const probe = cache(async (k) => k);
    await new Promise((resolve) => setTimeout(resolve, 20));
    if (probe.redis.isReady) break;
  }
});

after(async () => {
  await Promise.all(caches.map((c) => c.close()));
  server.kill();
});

function cache(origin: (key: string) => Promise<string>, opts = {}, at = url): Cache {
  const c = new Cache(at, origin, opts);
  caches.push(c);
  return c;
}

function slowOrigin(ms: number, error?: Error) {
  const origin = async (key: string) => {
    origin.calls++;
    await new Promise((resolve) => setTimeout(resolve, ms));
    if (error) throw error;
    return `value of ${key}`;
  };
  origin.calls = 0;
  return origin;
}

/** P instances sharing the Redis, C concurrent gets on each, on a cold key. */
async function burst(key: string, claim: boolean) {
  const origin = slowOrigin(100);
  const fleet = Array.from({ length: P }, () => cache(origin, { claim }));
  const got = await Promise.all(fleet.flatMap((c) => Array.from({ length: C }, () => c.get(key))));
  assert.deepEqual(new Set(got), new Set([`value of ${key}`]));
  return { calls: origin.calls, claims: fleet.reduce((n, c) => n + c.claims, 0) };
}

test("a burst makes one origin call", async () => {
  const { calls, claims } = await burst("burst", true);
  console.log(`typescript: ${P} processes x ${C} calls -> ${calls} origin calls (${claims} claim attempts)`);
  assert.deepEqual({ calls, claims }, { calls: 1, claims: P });
  assert.deepEqual(await burst("burst-sf", false), { calls: P, claims: 0 }); // singleflight only
});

test("a failure is shared with the flight's waiters, never remembered", async () => {
  const origin = slowOrigin(50, new Error("origin down"));
  const c = cache(origin);
  const got = await Promise.allSettled(Array.from({ length: C }, () => c.get("failing")));
  assert.equal(origin.calls, 1);
  assert.ok(got.every((r) => r.status === "rejected" && r.reason.message === "origin down"));
  await assert.rejects(c.get("failing"));
  assert.equal(origin.calls, 2, "the next call must try again");
});

test("a deadline ends the wait, not the work", async () => {
  const c = cache(slowOrigin(300));
  const start = Date.now();
  await assert.rejects(c.get("slow", 50), TimedOut);
  assert.ok(Date.now() - start < 150);
  await new Promise((resolve) => setTimeout(resolve, 400));
  assert.equal(await c.redis.get("value:slow"), "value of slow");
});

test("a release never deletes another holder's claim", async () => {
  const c = cache(slowOrigin(0));
  await c.redis.set("lock:held", "theirs", { PX: 10_000 });
  assert.equal(await c.release("held", "mine"), false);
  assert.equal(await c.redis.get("lock:held"), "theirs");
  assert.equal(await c.release("held", "theirs"), true);
});

test("Redis down: fail open", async () => {
  const c = cache(slowOrigin(0), {}, "redis://127.0.0.1:1"); // nothing listens there
  assert.equal(await c.get("k"), "value of k");
});

// The second seed's variant (refresh.ts): a claim on the refresh path only.

function refreshFleet(origin: (key: string) => Promise<string>) {
  const fleet = Array.from({ length: P }, () => new RefreshCache(url, origin));
  caches.push(...fleet);
  return fleet;
}

test("refresh variant: a cold caller computes and never waits on a lock", async () => {
  const origin = slowOrigin(100);
  const fleet = refreshFleet(origin);
  await fleet[0].redis.set("lock:cold", "another holder", { PX: 10_000 }); // a claim held elsewhere
  const start = Date.now();
  const got = await Promise.all(fleet.flatMap((c) => Array.from({ length: C }, () => c.get("cold"))));
  assert.deepEqual(new Set(got), new Set(["value of cold"]));
  assert.ok(Date.now() - start < 400, `${Date.now() - start} ms: waited`);
  console.log(`typescript (refresh, cold): ${P} processes x ${C} calls -> ${origin.calls} origin calls`);
  assert.deepEqual({ calls: origin.calls, claims: fleet.reduce((n, c) => n + c.claims, 0) }, { calls: P, claims: 0 });
});

test("refresh variant: a stale value is answered at once, one instance refreshes it", async () => {
  const origin = slowOrigin(100);
  const fleet = refreshFleet(origin);
  const stale = JSON.stringify({ value: "old", freshUntil: Date.now() - 1 });
  await fleet[0].redis.set("value:stale", stale, { PX: 10_000 });
  const start = Date.now();
  const got = await Promise.all(fleet.flatMap((c) => Array.from({ length: C }, () => c.get("stale"))));
  assert.deepEqual(new Set(got), new Set(["old"]));
  assert.ok(Date.now() - start < 100, "answered before the refresh's origin call ended");
  await new Promise((resolve) => setTimeout(resolve, 300));
  console.log(`typescript (refresh, stale): ${P} processes x ${C} calls -> ${origin.calls} origin calls`);
  assert.deepEqual({ calls: origin.calls, claims: fleet.reduce((n, c) => n + c.claims, 0) }, { calls: 1, claims: P });
  assert.equal(await fleet[0].get("stale"), "value of stale");
  assert.equal(await fleet[0].redis.get("lock:stale"), null, "released");
});
