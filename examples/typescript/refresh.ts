// The second seed's variant: coalesce inside the process, and claim only to
// refresh a stale value. A cold caller computes (once per process, through
// its flight) and never waits on a lock; a stale value is answered at once
// while one instance of the fleet refreshes it. Every Redis command is
// bounded by 100 ms, and a Redis error fails open, as in stampede.ts.
import { randomBytes } from "node:crypto";
import { createClient } from "redis";
import { RELEASE, within } from "./stampede";

type Redis = ReturnType<typeof createClient>;
interface Entry {
  value: string;
  freshUntil: number; // ms since the epoch; kept stale for staleMs after that
}

export class RefreshCache {
  readonly redis: Redis;
  claims = 0; // claim attempts (SET NX), for the tests
  readonly flights = new Map<string, Promise<string>>();
  private readonly connected: Promise<void>;

  constructor(
    url: string,
    private readonly origin: (key: string) => Promise<string>,
    readonly freshMs = 60_000,
    readonly staleMs = 300_000,
    readonly lockTtlMs = 3_000,
    readonly redisMs = 100,
  ) {
    this.redis = createClient({ url, socket: { connectTimeout: redisMs, reconnectStrategy: false } });
    this.redis.on("error", () => {});
    this.connected = this.redis.connect().then(() => {}, () => {});
  }

  async get(key: string): Promise<string> { // card 1: handle(key)
    const entry = await this.read(key); // card 2: GET key (an error: a miss)
    if (entry && Date.now() < entry.freshUntil) return entry.value; // card 3: fresh: answered at once
    // card 12: stale: answered at once, while one instance refreshes it
    if (entry) {
      this.coalesce(key, () => this.refresh(key)); // in the background
      return entry.value; // stale, at once
    }
    // card 5: cold: wait for this process's flight (no lock, and no deadline here)
    return this.coalesce(key, () => this.compute(key));
  }

  /** One flight per key in this process; it leaves the map when it settles. */
  private coalesce(key: string, work: () => Promise<string>): Promise<string> {
    // card 4: singleflight(key)
    let flight = this.flights.get(key);
    if (!flight) {
      flight = work().finally(() => this.flights.delete(key));
      flight.catch(() => {});
      this.flights.set(key, flight);
    }
    return flight; // card 13: one result for every caller of the key
  }

  private async compute(key: string): Promise<string> {
    const value = await this.origin(key); // card 9: the origin
    // card 10: SET key v, kept stale for staleMs after it is no longer fresh
    const entry: Entry = { value, freshUntil: Date.now() + this.freshMs };
    const px = this.freshMs + this.staleMs;
    await this.cmd((r) => r.set(`value:${key}`, JSON.stringify(entry), { PX: px })).catch(() => {});
    return value;
  }

  /** The claim guards the refresh only: a loser leaves it to the holder. */
  private async refresh(key: string): Promise<string> {
    // card 6: SET lock:key token NX PX ttl, with a random token
    this.claims++;
    let token: string | undefined = randomBytes(16).toString("hex");
    try {
      const won = await this.cmd((r) => r.set(`lock:${key}`, token!, { NX: true, PX: this.lockTtlMs }));
      if (won === null) return ""; // another instance refreshes
    } catch {
      token = undefined; // Redis failed: fail open, refresh without the lock
    }
    // card 7: won (or failed open): GET again, compute, write, release
    try {
      // card 8: GET again: another instance may have refreshed it since my first GET
      const entry = await this.read(key);
      if (entry && Date.now() < entry.freshUntil) return entry.value;
      return await this.compute(key);
    } finally {
      // card 11: release the claim only if it is still mine
      if (token) await this.cmd((r) => r.eval(RELEASE, { keys: [`lock:${key}`], arguments: [token!] })).catch(() => 0);
    }
  }

  /** key's entry, or null: a miss, or Redis failing (fail open). */
  private async read(key: string): Promise<Entry | null> {
    await this.connected;
    const raw = await this.cmd((r) => r.get(`value:${key}`)).catch(() => null);
    return raw === null ? null : JSON.parse(raw);
  }

  async close(): Promise<void> {
    if (this.redis.isOpen) await this.redis.disconnect();
  }

  private cmd<T>(send: (r: Redis) => Promise<T>): Promise<T> {
    return within(send(this.redis), this.redisMs);
  }
}
