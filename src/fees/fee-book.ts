// A data plane's copy of recent blocks' fees (docs/priority-fees.md): the control plane's
// watcher sends each new block's digest (SlotFees); getPriorityFeeEstimate is answered here,
// synchronously, from what is held. Per block, an index from account to the prices of the
// transactions that write-lock it is built once, when the block arrives.

import { errorBody, Errors, RpcErrors } from '../errors.js';
import { rawIdOf } from '../rpc/scan.js';
import { LEVEL_KEYS, levelsOf, MEDIUM, LEVEL_PERCENTILES, RECOMMENDED_FLOOR, type SlotFees } from './levels.js';
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
  private readonly globalSorted = new Map<number, Float64Array>();
  /** An account's levels per lookback (`lookback:account`), for the newest slot held; at most MAX_CACHED entries. */
  private readonly accountLevels = new Map<string, number[]>();
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
    this.globalSorted.clear();
    this.accountLevels.clear();
  }

  /** The held slots of a lookback, oldest first. */
  private span(lookback: number): HeldSlot[] {
    const from = this.top - lookback + 1;
    let i = this.held.length;
    while (i > 0 && this.held[i - 1]!.slot >= from) i--;
    return this.held.slice(i);
  }

  /** Sorted samples: every transaction's price (accounts null) or those write-locking `account`. */
  samples(lookback: number, account: string | null): Float64Array {
    const span = this.span(lookback);
    if (account === null) {
      let s = this.globalSorted.get(lookback);
      if (s === undefined) {
        this.globalSorted.set(lookback, (s = sortedUnion(span.map((h) => h.prices))));
      }
      return s;
    }
    const lists: Float64Array[] = [];
    for (const h of span) {
      const list = h.byAccount.get(account);
      if (list !== undefined) lists.push(list);
    }
    return sortedUnion(lists);
  }

  /** Every level for a query: per account the level's percentile of its samples, the highest over accounts. */
  levels(q: FeeQuery): number[] {
    const lookback = Math.min(q.lookbackSlots ?? this.windowSlots, this.windowSlots);
    if (q.accounts.length === 0) return levelsOf(this.samples(lookback, null));
    const best = LEVEL_PERCENTILES.map(() => 0);
    for (const a of q.accounts) {
      const cacheKey = lookback + ':' + a;
      let levels = this.accountLevels.get(cacheKey);
      if (levels === undefined) {
        levels = levelsOf(this.samples(lookback, a));
        if (this.accountLevels.size >= MAX_CACHED) this.accountLevels.clear();
        this.accountLevels.set(cacheKey, levels);
      }
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

/** The ascending union of ascending runs: merged pairwise (each run is one block's, already sorted). */
function sortedUnion(runs: Float64Array[]): Float64Array {
  if (runs.length === 0) return new Float64Array(0);
  let level = runs;
  while (level.length > 1) {
    const next: Float64Array[] = [];
    for (let i = 0; i < level.length; i += 2) next.push(i + 1 < level.length ? merge(level[i]!, level[i + 1]!) : level[i]!);
    level = next;
  }
  return level[0]!;
}

function merge(a: Float64Array, b: Float64Array): Float64Array {
  const out = new Float64Array(a.length + b.length);
  let i = 0;
  let j = 0;
  let k = 0;
  while (i < a.length && j < b.length) out[k++] = a[i]! <= b[j]! ? a[i++]! : b[j++]!;
  while (i < a.length) out[k++] = a[i++]!;
  while (j < b.length) out[k++] = b[j++]!;
  return out;
}
