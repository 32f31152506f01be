// The account cache on a data plane (docs/account-cache.md): answers getAccountInfo,
// getMultipleAccounts and getBalance from this plane's replica of the account store when every
// key asked is held at the commitment's slot, and counts the reads of every key it is asked
// for, which the control plane turns into the keys it holds (src/grpc/cache-feed.ts). A read
// it cannot answer exactly goes to a node, as without the cache.

import { rawIdOf } from '../rpc/scan.js';
import { readAccountRequest } from './account-read.js';
import { accountAnswer } from './account-answer.js';
import { AccountStore } from './account-store.js';
import type { AccountState } from './account-value.js';
import { applyEvents, EV_SLOT, EV_WRITE, type CacheEvent } from './cache-events.js';

/** The methods the cache may answer. */
export const ACCOUNT_METHODS: ReadonlySet<string> = new Set(['getAccountInfo', 'getMultipleAccounts', 'getBalance']);
/** What the node header and metrics name as the answerer of a read from memory. */
export const CACHE_NODE_ID = 'cache';

/** Why a read went to a node; the order of `CacheCounts.misses`. */
export const MISS_REASONS = ['unsupported', 'commitment', 'not-held', 'behind', 'min-context-slot', 'affinity'] as const;
export const M_UNSUPPORTED = 0;
export const M_COMMITMENT = 1;
export const M_NOT_HELD = 2;
export const M_BEHIND = 3;
export const M_MIN_CONTEXT = 4;
export const M_AFFINITY = 5;

export interface CacheSettings {
  /** Bit c set: commitment c (0 processed, 1 confirmed, 2 finalized) is answered from memory. */
  commitments: number;
  maxLagSlots: number;
  /** affinity.monotonic: a key's reads never go back, which is a node's own guarantee (affine reads go to their node). */
  monotonic: boolean;
}

export function cacheSettings(c: {
  cache: { accounts: { commitments: readonly string[]; maxLagSlots: number } };
  affinity: { monotonic: boolean };
}): CacheSettings {
  const names = ['processed', 'confirmed', 'finalized'];
  let bits = 0;
  for (const n of c.cache.accounts.commitments) bits |= 1 << names.indexOf(n);
  return { commitments: bits, maxLagSlots: c.cache.accounts.maxLagSlots, monotonic: c.affinity.monotonic };
}

/** What a plane counted since its last report. */
export interface CacheCounts {
  hits: number;
  misses: number[];
  /** Key → reads (hits and misses). */
  reads: Map<string, number>;
  /**
   * Per processed slot that wrote held accounts, from the first arrival of its status (what makes
   * its writes answerable: they come before it) to applied here, in µs (at most MAX_VISIBLE_SAMPLES a report).
   */
  visibleUs: number[];
}

const MAX_VISIBLE_SAMPLES = 2000;

const REPORT_MS = 50;

export class AccountCache {
  readonly store = new AccountStore();
  private apiVersion = '';
  private counts: CacheCounts = { hits: 0, misses: MISS_REASONS.map(() => 0), reads: new Map(), visibleUs: [] };
  private readonly timer: NodeJS.Timeout;
  private readonly states: AccountState[] = [];
  /** The slot of the last write applied whose processed status has not come yet (-1: none). */
  private writtenSlot = -1;
  /** The last answer given is a JSON-RPC error (base58 data over 128 bytes). */
  answeredError = false;

  constructor(
    private settings: CacheSettings,
    /** The freshest processed slot any node is known to have (the chain view), 0 while unknown. */
    private readonly freshest: () => number,
    /** Where this plane's counts go (the control plane's feed and metrics). */
    private readonly report: (counts: CacheCounts) => void,
  ) {
    this.timer = setInterval(() => this.flush(), REPORT_MS);
    this.timer.unref();
  }

  reconfigure(settings: CacheSettings): void {
    this.settings = settings;
  }

  /** Events from the control plane's feed, in order. */
  apply(events: readonly CacheEvent[]): void {
    const v = applyEvents(this.store, events);
    if (v !== '') this.apiVersion = v;
    const now = performance.timeOrigin + performance.now();
    const samples = this.counts.visibleUs;
    for (const e of events) {
      if (e.t === EV_WRITE) this.writtenSlot = e.slot;
      else if (e.t === EV_SLOT && e.status === 'processed' && e.slot >= this.writtenSlot && this.writtenSlot >= 0) {
        this.writtenSlot = -1;
        if (samples.length < MAX_VISIBLE_SAMPLES) samples.push(Math.round((now - e.at) * 1000));
      }
    }
  }

  /** Learns the nodes' apiVersion when this plane's store is the feed's own (inline). */
  setApiVersion(v: string): void {
    if (v !== '') this.apiVersion = v;
  }

  /**
   * The answer bytes for a single request of an account method, or null: the read goes to a
   * node. `affine`: the read has key, node or IP affinity.
   */
  answer(body: Buffer, method: string, affine: boolean): Buffer | null {
    const read = readAccountRequest(body, method);
    if (read === null) return this.miss(M_UNSUPPORTED);
    const reads = this.counts.reads;
    for (const k of read.keys) reads.set(k, (reads.get(k) ?? 0) + 1);
    if (affine && this.settings.monotonic) return this.miss(M_AFFINITY);
    if ((this.settings.commitments & (1 << read.commitment)) === 0) return this.miss(M_COMMITMENT);
    const store = this.store;
    const processed = store.tip(0);
    if (processed < 0 || this.apiVersion === '') return this.miss(M_NOT_HELD);
    // A feed behind the nodes (a stalled or slow source) would answer an older state than a node.
    if (this.freshest() - processed > this.settings.maxLagSlots) return this.miss(M_BEHIND);
    const slot = store.tip(read.commitment);
    if (slot < 0) return this.miss(M_NOT_HELD);
    if (read.minContextSlot > slot) return this.miss(M_MIN_CONTEXT);
    const states = this.states;
    states.length = 0;
    for (const k of read.keys) {
      if (store.read(k, read.commitment) !== slot) return this.miss(M_NOT_HELD);
      states.push(store.lastState);
    }
    this.counts.hits++;
    const out = accountAnswer(read, slot, states, this.apiVersion, rawIdOf(body) ?? 'null');
    // Agave's error answers start `{"jsonrpc":"2.0","error"`; results `…"result"`.
    this.answeredError = out[18] === 0x65;
    return out;
  }

  private miss(reason: number): null {
    this.counts.misses[reason]!++;
    return null;
  }

  private flush(): void {
    const c = this.counts;
    if (c.hits === 0 && c.reads.size === 0 && c.visibleUs.length === 0 && c.misses.every((m) => m === 0)) return;
    this.counts = { hits: 0, misses: MISS_REASONS.map(() => 0), reads: new Map(), visibleUs: [] };
    this.report(c);
  }

  close(): void {
    clearInterval(this.timer);
    this.flush();
  }
}
