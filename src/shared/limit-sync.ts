// Shares this instance's rate-limit consumption with the others through Redis (README "Shared
// limits across instances (Redis)"). Every `redis.syncMs` the control plane sends, in one
// script call, what its limiters took per bucket since the last sync; Redis adds it to one
// counter per bucket and answers each counter's new total. What the others took meanwhile
// (the total's growth beyond this instance's own part) is then debited from the local bucket,
// which may go below zero. So each local bucket tracks the one global bucket, a sync late, and
// no request ever waits on the network.

import type { RateLimiter } from '../limits/limiter.js';
import type { Logger } from '../log.js';
import type { ConsumptionTally } from '../limits/consumption-tally.js';
import type { RedisLink } from './redis-link.js';

// KEYS: one counter per bucket; ARGV: (calls, ttl ms) per key. Answers the new totals.
const CONSUME = `
local out = {}
for i = 1, #KEYS do
  out[i] = redis.call('INCRBY', KEYS[i], ARGV[2 * i - 1])
  redis.call('PEXPIRE', KEYS[i], ARGV[2 * i])
end
return out
`;

type Consume = (numKeys: number, ...args: (string | number)[]) => Promise<number[]>;

/** Counters per script call: a call's arguments must fit a function call and Redis's stack. */
const KEYS_PER_CALL = 1000;
/** A counter outlives the last take by this much beyond its bucket's refill time. */
const COUNTER_SLACK_MS = 2000;
/** How often counters' last totals that expired in Redis are forgotten here. */
const SWEEP_MS = 1000;

/** A counter's total as this instance last saw it. */
class Seen {
  constructor(
    public total: number,
    public expires: number,
  ) {}
}

export interface LimitSyncOptions {
  syncMs: number;
  keyPrefix: string;
  /** Counters' last totals kept at most (the oldest go first). */
  maxSeen: number;
}

export class LimitSync {
  private readonly consume: Consume;
  private readonly seen = new Map<string, Seen>();
  private readonly timer: NodeJS.Timeout;
  private running = false;
  private lastSweep = 0;

  constructor(
    private readonly link: RedisLink,
    private readonly limiter: RateLimiter,
    readonly tally: ConsumptionTally,
    private readonly opts: LimitSyncOptions,
    private readonly log: Logger,
  ) {
    link.client.defineCommand('jumpgateConsume', { lua: CONSUME });
    const client = link.client as unknown as { jumpgateConsume: Consume };
    this.consume = (...args) => client.jumpgateConsume(...args);
    this.timer = setInterval(() => void this.sync(), opts.syncMs);
    this.timer.unref();
  }

  /** One round: sends the tally, debits what the others took. A round still running skips this one (the tally keeps growing, bounded). */
  async sync(): Promise<void> {
    if (this.running || this.tally.entries === 0) return;
    this.running = true;
    const consumed = this.tally.drain();
    const prefix = this.opts.keyPrefix;
    const keys: string[] = [];
    const args: number[] = [];
    const ttls: number[] = [];
    for (const [table, key, n] of consumed) {
      const shape = this.limiter.shapeOf(table);
      const refillMs = shape === null ? 0 : (shape.burst * 1000) / shape.rate;
      const ttl = Math.ceil(refillMs + COUNTER_SLACK_MS + 4 * this.opts.syncMs);
      keys.push(prefix + table + ':' + key);
      args.push(n, ttl);
      ttls.push(ttl);
    }
    try {
      // Sent back to back on the one connection; Redis runs each call atomically.
      const calls: Promise<number[]>[] = [];
      for (let i = 0; i < keys.length; i += KEYS_PER_CALL) {
        const part = keys.slice(i, i + KEYS_PER_CALL);
        calls.push(this.consume(part.length, ...part, ...args.slice(2 * i, 2 * (i + KEYS_PER_CALL))));
      }
      const totals = (await Promise.all(calls)).flat();
      this.link.syncSucceeded();
      this.apply(consumed, keys, ttls, totals);
    } catch (err) {
      // The consumption stays local: each instance keeps its own limits meanwhile.
      this.link.syncFailed((err as Error).message);
    } finally {
      this.running = false;
    }
  }

  private apply(consumed: [string, string, number][], keys: string[], ttls: number[], totals: number[]): void {
    const now = performance.now();
    const wall = Date.now();
    for (let i = 0; i < keys.length; i++) {
      const [table, key, own] = consumed[i]!;
      const total = Number(totals[i]);
      const k = keys[i]!;
      const prev = this.seen.get(k);
      const before = total - own;
      let others: number;
      if (prev !== undefined && before >= prev.total) others = before - prev.total;
      else {
        // A counter new to this instance, or reset (expired, Redis restarted): what the others
        // took is known but not when, so at most a full bucket of it is debited.
        others = Math.min(before, this.limiter.shapeOf(table)?.burst ?? 0);
      }
      if (others > 0) this.limiter.debit(table, key, others, now);
      if (prev !== undefined) this.seen.delete(k);
      this.seen.set(k, new Seen(total, wall + ttls[i]!));
    }
    this.forget(wall);
  }

  /** Drops last totals of counters that expired in Redis, and the oldest beyond the cap. */
  private forget(wall: number): void {
    let excess = this.seen.size - this.opts.maxSeen;
    if (excess <= 0 && wall - this.lastSweep < SWEEP_MS) return;
    this.lastSweep = wall;
    // Insertion order is update order: the stalest come first.
    for (const [k, s] of this.seen) {
      if (excess <= 0 && s.expires > wall) break;
      this.seen.delete(k);
      excess--;
    }
  }

  stop(): void {
    clearInterval(this.timer);
    if (this.tally.dropped > 0) this.log.debug({ dropped: this.tally.dropped }, 'calls left out of the shared limits (tally full)');
  }
}
