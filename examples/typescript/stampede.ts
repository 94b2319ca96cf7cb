// The cache read path from the interview card, in TypeScript: a GET first,
// then singleflight inside the process, a Redis claim inside the flight
// across processes.
import { randomBytes } from "node:crypto";
import { createClient } from "redis";

type Redis = ReturnType<typeof createClient>;

// Delete only if still mine: past its TTL the claim may be another
// instance's, and a plain DEL would free that one.
export const RELEASE = `
if redis.call("GET", KEYS[1]) == ARGV[1] then return redis.call("DEL", KEYS[1]) end
return 0`;

export class NoValue extends Error {} // the claim was held elsewhere and no value came in time
export class TimedOut extends Error {}

export interface Options {
  claim: boolean; // claim across instances (false: singleflight only)
  ttlMs: number; // the value's
  lockTtlMs: number; // the claim's: longer than an origin call
  waitMs: number; // a loser polls for the value this long at most
  pollMs: number; // between two polls
  redisMs: number; // one Redis command's bound (and the connect's)
}
const defaults: Options = { claim: true, ttlMs: 60_000, lockTtlMs: 3_000, waitMs: 2_000, pollMs: 10, redisMs: 100 };

/** p, or a rejection after ms. */
export function within<T>(p: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new TimedOut(`no answer within ${ms} ms`)), ms);
  });
  return Promise.race([p, late]).finally(() => clearTimeout(timer));
}

/** One instance (one process) of a fleet sharing a Redis. */
export class Cache {
  readonly redis: Redis;
  readonly opts: Options;
  claims = 0; // claim attempts (SET NX), for the tests
  readonly flights = new Map<string, Promise<string>>();
  private readonly connected: Promise<void>;

  constructor(url: string, private readonly origin: (key: string) => Promise<string>, opts: Partial<Options> = {}) {
    this.opts = { ...defaults, ...opts };
    // Every Redis command is bounded (redisMs, 100 ms), so a Redis that
    // hangs costs a bounded wait, then the code fails open.
    this.redis = createClient({ url, socket: { connectTimeout: this.opts.redisMs, reconnectStrategy: false } });
    this.redis.on("error", () => {}); // each command's own failure is handled where it is sent
    this.connected = this.redis.connect().then(() => {}, () => {});
  }

  /** key's value. The deadline ends this caller's wait, not the work:
   *  the flight goes on and fills the cache for the others. */
  async get(key: string, deadlineMs?: number): Promise<string> { // card 1: handle(key)
    const hit = await this.read(key); // card 2: GET key (a Redis error is a miss: fail open)
    if (hit !== null) return hit; // card 3: a hit never enters a flight
    // card 4: singleflight(key): one flight per key in this process
    let flight = this.flights.get(key);
    if (!flight) { // the leader: start the flight
      // Settled in every path, it leaves the map: a failure is shared, never remembered.
      flight = this.load(key).finally(() => this.flights.delete(key)); // card 13: one result for every caller
      flight.catch(() => {}); // handled, even if every caller gave up
      this.flights.set(key, flight);
    }
    // card 5: wait for the flight, until my own deadline
    return deadlineMs === undefined ? flight : within(flight, deadlineMs);
  }

  /** The flight's work: claim, GET again, compute, write, release; or,
   *  having lost the claim, poll. */
  private async load(key: string): Promise<string> {
    if (!this.opts.claim) return this.compute(key);
    for (const end = Date.now() + this.opts.waitMs; ; ) {
      // card 6: SET lock:key token NX PX ttl, with a random token
      const token = randomBytes(16).toString("hex");
      this.claims++;
      let won: string | null;
      try {
        won = await this.cmd((r) => r.set(`lock:${key}`, token, { NX: true, PX: this.opts.lockTtlMs }));
      } catch {
        return this.compute(key); // Redis failed: fail open, compute without the lock
      }
      // card 7: won (null: another instance holds the claim)
      if (won !== null) {
        try {
          // card 8: GET again: the last holder may have written it since my first GET
          const value = await this.read(key);
          return value ?? (await this.compute(key));
        } finally {
          await this.release(key, token); // card 11: only if the claim is still mine
        }
      }
      // card 12: lost: poll for the holder's value, and claim again on
      // the next turn (a dead holder's claim expires); never past the wait
      if (Date.now() >= end) throw new NoValue(key);
      await sleep(this.opts.pollMs);
      const value = await this.read(key);
      if (value !== null) return value;
    }
  }

  private async compute(key: string): Promise<string> {
    const value = await this.origin(key); // card 9: the origin; runs on past every deadline
    await this.cmd((r) => r.set(`value:${key}`, value, { PX: this.opts.ttlMs })).catch(() => {}); // card 10: SET key v
    return value; // a failed write still answers the value
  }

  /** key's value, or null: a miss, or Redis failing (fail open). */
  private async read(key: string): Promise<string | null> {
    await this.connected;
    return this.cmd((r) => r.get(`value:${key}`)).catch(() => null);
  }

  /** True if the claim was still ours and is now free. */
  async release(key: string, token: string): Promise<boolean> {
    const freed = await this.cmd((r) => r.eval(RELEASE, { keys: [`lock:${key}`], arguments: [token] })).catch(() => 0);
    return freed === 1;
  }

  async close(): Promise<void> {
    if (this.redis.isOpen) await this.redis.disconnect();
  }

  private cmd<T>(send: (r: Redis) => Promise<T>): Promise<T> {
    return within(send(this.redis), this.opts.redisMs);
  }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
