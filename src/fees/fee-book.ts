// A data plane's copy of recent blocks' fees (docs/priority-fees.md): the control plane's
// watcher sends each new block's digest (SlotFees); getPriorityFeeEstimate is answered here,
// synchronously, from what is held. Per block, an index from account to the prices of the
// transactions that write-lock it is built once, when the block arrives.

import { errorBody, Errors, RpcErrors } from '../errors.js';
import { rawIdOf } from '../rpc/scan.js';
import { LEVEL_KEYS, MEDIUM, LEVEL_PERCENTILES, RECOMMENDED_FLOOR, type SlotFees } from './levels.js';
import { readFeeQuery, type FeeQuery } from './request.js';

export const FEE_METHOD = 'getPriorityFeeEstimate';
/** The node label of an answer given here (X-…-Node, metrics), as the account cache's. */
export const FEE_NODE_ID = 'fees';

/** Accounts' levels kept between blocks, at most (a new block forgets them all). */
const MAX_CACHED = 10_000;

interface HeldSlot {
  slot: number;
  /** Every transaction's price, ascending. */
  prices: Float64Array;
  /** Account → prices of the transactions that write-lock it, ascending. */
  byAccount: Map<string, Float64Array>;
}

export class FeeBook {
  /** Held slots, ascending. */
  private readonly held: HeldSlot[] = [];
  /** Sorted prices of every transaction, per lookback, for the newest slot held (rebuilt after each block). */
  /** Levels per lookback and account (`lookback:account`, '' for every transaction) for the newest slot held; at most MAX_CACHED entries. */
  private readonly cached = new Map<string, number[]>();
  /** The answer was an error (for usage), as the account cache tells. */
  answeredError = false;
  /** Its HTTP status. */
  answeredHttp = 200;

  constructor(private windowSlots: number) {}

  /** The newest slot held; -1 while none is. */
  get top(): number {
    return this.held.length === 0 ? -1 : this.held[this.held.length - 1]!.slot;
  }

  get slots(): number {
    return this.held.length;
  }

  reconfigure(windowSlots: number): void {
    this.windowSlots = windowSlots;
    this.trim();
  }

  /** New blocks (any order; a slot already held is replaced). */
  apply(blocks: readonly SlotFees[]): void {
    for (const b of blocks) {
      const lists = new Map<string, number[]>();
      for (let i = 0; i < b.prices.length; i++) {
        for (const k of b.writes[i]!) {
          let list = lists.get(k);
          if (list === undefined) lists.set(k, (list = []));
          list.push(b.prices[i]!);
        }
      }
      const byAccount = new Map<string, Float64Array>();
      for (const [k, list] of lists) byAccount.set(k, Float64Array.from(list).sort());
      const h: HeldSlot = { slot: b.slot, prices: Float64Array.from(b.prices).sort(), byAccount };
      let at = this.held.length;
      while (at > 0 && this.held[at - 1]!.slot >= b.slot) at--;
      if (at < this.held.length && this.held[at]!.slot === b.slot) this.held[at] = h;
      else this.held.splice(at, 0, h);
    }
    this.trim();
  }

  private trim(): void {
    const from = this.top - this.windowSlots + 1;
    let drop = 0;
    while (drop < this.held.length && this.held[drop]!.slot < from) drop++;
    if (drop > 0) this.held.splice(0, drop);
    this.cached.clear();
  }

  /** The held slots of a lookback, oldest first. */
  private span(lookback: number): HeldSlot[] {
    const from = this.top - lookback + 1;
    let i = this.held.length;
    while (i > 0 && this.held[i - 1]!.slot >= from) i--;
    return this.held.slice(i);
  }

  /** The ascending runs of samples (one a block): every transaction's price (account null) or those write-locking `account`. */
  runs(lookback: number, account: string | null): Float64Array[] {
    const span = this.span(lookback);
    if (account === null) return span.map((h) => h.prices);
    const lists: Float64Array[] = [];
    for (const h of span) {
      const list = h.byAccount.get(account);
      if (list !== undefined) lists.push(list);
    }
    return lists;
  }

  /** Every level over the samples of `account` (null: every transaction), kept until the next block. */
  private levelsFor(lookback: number, account: string | null): number[] {
    const cacheKey = lookback + ':' + (account ?? '');
    let levels = this.cached.get(cacheKey);
    if (levels === undefined) {
      const runs = this.runs(lookback, account);
      levels = LEVEL_PERCENTILES.map((p) => percentileOfRuns(runs, p));
      if (this.cached.size >= MAX_CACHED) this.cached.clear();
      this.cached.set(cacheKey, levels);
    }
    return levels;
  }

  /** Every level for a query: per account the level's percentile of its samples, the highest over accounts. */
  levels(q: FeeQuery): number[] {
    const lookback = Math.min(q.lookbackSlots ?? this.windowSlots, this.windowSlots);
    if (q.accounts.length === 0) return this.levelsFor(lookback, null);
    const best = LEVEL_PERCENTILES.map(() => 0);
    for (const a of q.accounts) {
      const levels = this.levelsFor(lookback, a);
      for (let l = 0; l < best.length; l++) best[l] = Math.max(best[l]!, levels[l]!);
    }
    return best;
  }

  /** The whole answer to a getPriorityFeeEstimate request (its params at [start, end) of `body`). */
  answer(body: Buffer, start: number, end: number): string {
    const id = rawIdOf(body) ?? 'null';
    this.answeredError = true;
    this.answeredHttp = 200;
    let params: unknown;
    try {
      params = start < 0 ? undefined : (JSON.parse(body.toString('utf8', start, end)) as unknown);
    } catch {
      params = undefined;
    }
    const q = readFeeQuery(params);
    if (typeof q === 'string') return errorBody(RpcErrors.invalidParams, id, undefined, 'Invalid params: ' + q);
    if (this.held.length === 0) {
      this.answeredHttp = Errors.feesUnavailable.http;
      return errorBody(Errors.feesUnavailable, id);
    }
    this.answeredError = false;
    const levels = this.levels(q);
    let result: string;
    if (q.allLevels) result = '{"priorityFeeLevels":{' + LEVEL_KEYS.map((k, i) => '"' + k + '":' + levels[i]).join(',') + '}}';
    else result = '{"priorityFeeEstimate":' + (q.recommended ? Math.max(levels[MEDIUM]!, RECOMMENDED_FLOOR) : levels[q.level]) + '}';
    return '{"jsonrpc":"2.0","result":' + result + ',"id":' + id + '}';
  }
}

/**
 * The nearest-rank percentile (levels.ts `percentile`) of the union of ascending runs without
 * building it: the smallest integer v with more than rank samples at or below it is the sample at
 * that rank (prices are integers); about 50 halvings of one binary search per run each.
 */
export function percentileOfRuns(runs: readonly Float64Array[], p: number): number {
  let n = 0;
  let lo = Infinity;
  let hi = -Infinity;
  for (const x of runs) {
    if (x.length === 0) continue;
    n += x.length;
    if (x[0]! < lo) lo = x[0]!;
    if (x[x.length - 1]! > hi) hi = x[x.length - 1]!;
  }
  if (n === 0) return 0;
  const rank = p <= 0 ? 0 : Math.min(n, Math.ceil((p / 100) * n)) - 1;
  while (lo < hi) {
    const mid = Math.floor((lo + hi) / 2);
    let atMost = 0;
    for (const x of runs) atMost += upperBound(x, mid);
    if (atMost > rank) hi = mid;
    else lo = mid + 1;
  }
  return lo;
}

/** How many of ascending `x` are <= v. */
function upperBound(x: Float64Array, v: number): number {
  let lo = 0;
  let hi = x.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (x[mid]! <= v) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
