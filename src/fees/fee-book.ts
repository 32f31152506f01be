// A data plane's copy of recent blocks' fees (docs/priority-fees.md): the control plane's
// watcher sends each new block's digest (SlotFees); getPriorityFeeEstimate is answered here,
// synchronously, from what is held. Per block, an index from account to the prices of the
// transactions that write-lock it is built once, when the block arrives.

import { errorBody, Errors, RpcErrors } from '../errors.js';
import { rawIdOf } from '../rpc/scan.js';
import { LEVEL_KEYS, levelsOf, MEDIUM, percentile, LEVEL_PERCENTILES, RECOMMENDED_FLOOR, type SlotFees } from './levels.js';
import { readFeeQuery, type FeeQuery } from './request.js';

export const FEE_METHOD = 'getPriorityFeeEstimate';
/** The node label of an answer given here (X-…-Node, metrics), as the account cache's. */
export const FEE_NODE_ID = 'fees';

interface HeldSlot {
  slot: number;
  /** Every transaction's price. */
  prices: number[];
  /** Account → prices of the transactions that write-lock it. */
  byAccount: Map<string, number[]>;
}

export class FeeBook {
  /** Held slots, ascending. */
  private readonly held: HeldSlot[] = [];
  /** Sorted prices of every transaction, per lookback, for the newest slot held (rebuilt after each block). */
  private readonly globalSorted = new Map<number, Float64Array>();
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
      const byAccount = new Map<string, number[]>();
      for (let i = 0; i < b.prices.length; i++) {
        for (const k of b.writes[i]!) {
          let list = byAccount.get(k);
          if (list === undefined) byAccount.set(k, (list = []));
          list.push(b.prices[i]!);
        }
      }
      const h: HeldSlot = { slot: b.slot, prices: b.prices, byAccount };
      let at = this.held.length;
      while (at > 0 && this.held[at - 1]!.slot >= b.slot) at--;
      if (at < this.held.length && this.held[at]!.slot === b.slot) this.held[at] = h;
      else this.held.splice(at, 0, h);
    }
    this.trim();
    this.globalSorted.clear();
  }

  private trim(): void {
    const from = this.top - this.windowSlots + 1;
    let drop = 0;
    while (drop < this.held.length && this.held[drop]!.slot < from) drop++;
    if (drop > 0) this.held.splice(0, drop);
    this.globalSorted.clear();
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
    if (account === null) {
      let s = this.globalSorted.get(lookback);
      if (s === undefined) {
        const parts = this.span(lookback).map((h) => h.prices);
        s = Float64Array.from(parts.flat()).sort();
        this.globalSorted.set(lookback, s);
      }
      return s;
    }
    const out: number[] = [];
    for (const h of this.span(lookback)) {
      const list = h.byAccount.get(account);
      if (list !== undefined) for (const p of list) out.push(p);
    }
    return Float64Array.from(out).sort();
  }

  /** Every level for a query: per account the level's percentile of its samples, the highest over accounts. */
  levels(q: FeeQuery): number[] {
    const lookback = Math.min(q.lookbackSlots ?? this.windowSlots, this.windowSlots);
    if (q.accounts.length === 0) return levelsOf(this.samples(lookback, null));
    const best = LEVEL_PERCENTILES.map(() => 0);
    for (const a of q.accounts) {
      const s = this.samples(lookback, a);
      for (let l = 0; l < best.length; l++) best[l] = Math.max(best[l]!, percentile(s, LEVEL_PERCENTILES[l]!));
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
