// The limit side of sharing consumption between instances (docs/routing.md "Shared limits across
// instances (Redis)"): how long a bucket's shared counter must live, and, from the counters'
// new totals, what the other instances took since this one last looked, debited from the local
// buckets (which may go below zero). The transport, one script call per sync, is
// src/shared/limit-sync.ts.

import type { RateLimiter } from './limiter.js';

/** A counter outlives the last take by this much beyond its bucket's refill time. */
const COUNTER_SLACK_MS = 2000;
/** How often counters' last totals that expired in the shared store are forgotten here. */
const SWEEP_MS = 1000;

/** A counter's total as this instance last saw it. */
class Seen {
  constructor(
    public total: number,
    public expires: number,
  ) {}
}

export class RemoteLedger {
  private readonly seen = new Map<string, Seen>();
  private lastSweep = 0;

  constructor(
    private readonly limiter: RateLimiter,
    /** Counters' last totals kept at most (the oldest go first). */
    private readonly maxSeen: number,
    private readonly syncMs: number,
  ) {}

  /** How long the shared counter of a bucket in `table` (a tally's table id) must live, in ms. */
  ttlFor(table: string): number {
    const shape = this.limiter.shapeOf(table);
    const refillMs = shape === null ? 0 : (shape.burst * 1000) / shape.rate;
    return Math.ceil(refillMs + COUNTER_SLACK_MS + 4 * this.syncMs);
  }

  /**
   * The counters named `keys` now hold `totals`, of which this instance added `consumed[i][2]`:
   * debits what the others took since the last look.
   */
  apply(
    consumed: readonly (readonly [table: string, key: string, n: number])[],
    keys: readonly string[],
    ttls: readonly number[],
    totals: readonly number[],
  ): void {
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
        // A counter new to this instance, or reset (expired, the store restarted): what the
        // others took is known but not when, so at most a full bucket of it is debited.
        others = Math.min(before, this.limiter.shapeOf(table)?.burst ?? 0);
      }
      if (others > 0) this.limiter.debit(table, key, others, now);
      if (prev !== undefined) this.seen.delete(k);
      this.seen.set(k, new Seen(total, wall + ttls[i]!));
    }
    this.forget(wall);
  }

  /** Drops last totals of counters that expired in the store, and the oldest beyond the cap. */
  private forget(wall: number): void {
    let excess = this.seen.size - this.maxSeen;
    if (excess <= 0 && wall - this.lastSweep < SWEEP_MS) return;
    this.lastSweep = wall;
    // Insertion order is update order: the stalest come first.
    for (const [k, s] of this.seen) {
      if (excess <= 0 && s.expires > wall) break;
      this.seen.delete(k);
      excess--;
    }
  }
}
