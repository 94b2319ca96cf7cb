// The cache read path from the interview card, in TypeScript:
// singleflight inside the process, a Redis claim across processes.
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
  redisMs: number; // one Redis command's bound
}
const defaults: Options = { claim: true, ttlMs: 60_000, lockTtlMs: 3_000, waitMs: 2_000, redisMs: 100 };

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
  private readonly flights = new Map<string, Promise<string>>();
  private readonly connected: Promise<void>;

  constructor(url: string, private readonly origin: (key: string) => Promise<string>, opts: Partial<Options> = {}) {
    this.opts = { ...defaults, ...opts };
    this.redis = createClient({ url, socket: { connectTimeout: this.opts.redisMs, reconnectStrategy: false } });
    this.redis.on("error", () => {}); // each command's own failure is handled where it is sent
    this.connected = this.redis.connect().then(() => {}, () => {});
  }

  /** key's value. The deadline ends this caller's wait, not the work:
   *  the flight goes on and fills the cache for the others. */
  get(key: string, deadlineMs?: number): Promise<string> { // card 1: handle(key)
    // card 4: singleflight(key): one flight per key in this process
    let flight = this.flights.get(key);
    if (!flight) { // the leader: start the flight
      // Settled, it leaves the map: a failure is shared, never remembered.
      flight = this.load(key).finally(() => this.flights.delete(key)); // card 13: one result for every caller
      flight.catch(() => {}); // handled, even if every caller gave up
      this.flights.set(key, flight);
    }
    // card 5: wait for the flight, until my own deadline
    return deadlineMs === undefined ? flight : within(flight, deadlineMs);
  }

  /** The flight's work: GET, else claim, compute, write, release. */
  private async load(key: string): Promise<string> {
    await this.connected;
    const hit = await this.cmd((r) => r.get(`value:${key}`)).catch(() => null); // card 2: GET key (an error: a miss)
    if (hit !== null) return hit; // card 3: a hit is answered at once
    let token: string | undefined;
    if (this.opts.claim) {
      // card 6: SET lock:key token NX PX ttl, with a random token
      this.claims++;
      token = randomBytes(16).toString("hex");
      let won = true;
      try {
        won = (await this.cmd((r) => r.set(`lock:${key}`, token!, { NX: true, PX: this.opts.lockTtlMs }))) !== null;
      } catch {
        token = undefined; // Redis failed: fail open, compute without the lock
      }
      if (!won) return this.poll(key); // card 12: lost: poll for the holder's value
    }
    try { // card 7: won (or failed open): compute, write, release
      const value = await this.origin(key); // card 9: the origin; runs on past every deadline
      await this.cmd((r) => r.set(`value:${key}`, value, { PX: this.opts.ttlMs })).catch(() => {}); // card 10: SET key v
      return value; // a failed write still answers the value
    } finally {
      if (token) await this.release(key, token); // card 11: only if the claim is still mine
    }
  }

  /** Reads the value until the claim's holder has written it, or gives up. */
  private async poll(key: string): Promise<string> {
    for (const end = Date.now() + this.opts.waitMs; Date.now() < end; await sleep(10)) {
      const value = await this.cmd((r) => r.get(`value:${key}`));
      if (value !== null) return value;
    }
    throw new NoValue(key);
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
