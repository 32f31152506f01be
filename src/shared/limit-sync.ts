// Shares this instance's rate-limit consumption with the others through Redis (docs/routing.md "Shared
// limits across instances (Redis)"). Every `redis.syncMs` the control plane sends, in one
// script call, what its limiters took per bucket since the last sync; Redis adds it to one
// counter per bucket and answers each counter's new total. What the others took meanwhile
// (the total's growth beyond this instance's own part) is then debited from the local bucket
// (src/limits/remote-ledger.ts), which may go below zero. So each local bucket tracks the one
// global bucket, a sync late, and no request ever waits on the network.

import type { RateLimiter } from '../limits/limiter.js';
import { RemoteLedger } from '../limits/remote-ledger.js';
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
export interface LimitSyncOptions {
  syncMs: number;
  keyPrefix: string;
  /** Counters' last totals kept at most (the oldest go first). */
  maxSeen: number;
}

export class LimitSync {
  private readonly consume: Consume;
  private readonly ledger: RemoteLedger;
  private readonly timer: NodeJS.Timeout;
  private running = false;

  constructor(
    private readonly link: RedisLink,
    limiter: RateLimiter,
    readonly tally: ConsumptionTally,
    private readonly opts: LimitSyncOptions,
    private readonly log: Logger,
  ) {
    link.client.defineCommand('jumpgateConsume', { lua: CONSUME });
    const client = link.client as unknown as { jumpgateConsume: Consume };
    this.consume = (...args) => client.jumpgateConsume(...args);
    this.ledger = new RemoteLedger(limiter, opts.maxSeen, opts.syncMs);
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
      const ttl = this.ledger.ttlFor(table);
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
      this.ledger.apply(consumed, keys, ttls, totals);
    } catch (err) {
      // The consumption stays local: each instance keeps its own limits meanwhile.
      this.link.syncFailed((err as Error).message);
    } finally {
      this.running = false;
    }
  }

  stop(): void {
    clearInterval(this.timer);
    if (this.tally.dropped > 0) this.log.debug({ dropped: this.tally.dropped }, 'calls left out of the shared limits (tally full)');
  }
}
