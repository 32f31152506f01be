// The account cache's feed, on the control plane (docs/account-cache.md "How it stays exact").
// Hot keys join one accounts filter on the gRPC sources' shared processed streams (a tap on the
// hub's processed feed: first arrival wins, as for clients), with every slot status. Holding a
// key goes: filter → ping → first pong (every update after it is under the new filter) → the
// key is covered from two slots past the highest slot seen by then → one read from a node at
// `processed` with `minContextSlot` at that point → anchor; writes after the anchor apply on
// top. A source stream reopened without a covering `from_slot` unholds every key (each is
// covered and read again). Every decision is an event (src/cache/cache-events.ts) applied to
// this plane's store replica and sent to every data plane, which answer from their own.

import type { AccountStore } from '../cache/account-store.js';
import type { AccountState } from '../cache/account-value.js';
import { applyEvents, EV_ANCHOR, EV_SLOT, EV_TRACK, EV_UNHOLD, EV_UNTRACK, EV_WRITE, type CacheEvent, type SlotStatusName } from '../cache/cache-events.js';
import type { KeyDirectory } from '../cache/key-directory.js';
import { accountsFromRpcBody } from '../cache/account-from-rpc.js';
import type { Logger } from '../log.js';
import { decodeBase58 } from '../solana/base58.js';
import type { UpstreamNode } from '../upstream/node.js';
import { probePost } from '../upstream/health.js';
import { accountStateOf } from './account-state.js';
import type { Feed, FeedTap } from './feed.js';
import { COMMITMENT_PROCESSED } from './filters.js';
import type { GrpcHub } from './hub.js';
import type { SourceLink } from './source.js';
import { KIND_ACCOUNT, KIND_SLOT, type Update } from './update.js';

const STATUS: readonly (SlotStatusName | null)[] = ['processed', 'confirmed', 'finalized', null, null, null, 'dead'];
/** Slots past the highest seen at the pong before a key's writes are surely under the new filter (a source may apply a filter a little after answering the ping). */
const COVER_MARGIN = 3;
const SEED_BATCH = 16;
const SEED_RETRY_MS = 200;
const SEED_DEADLINE_MS = 10_000;
const SEED_TIMEOUT_MS = 2_000;
const HOUSEKEEPING_MS = 250;

export interface CacheFeedOptions {
  hub: GrpcHub;
  store: AccountStore;
  directory: KeyDirectory;
  /** The pool's nodes: seeds are read from the freshest usable one. */
  nodes: () => readonly UpstreamNode[];
  maxBytes: number;
  maxAccountBytes: number;
  /** Every data plane gets the events (each applies them to its own store). */
  publish: (events: CacheEvent[]) => void;
  log: Logger;
}

interface SeedRead {
  slot: number;
  apiVersion: string;
  states: AccountState[];
}

export interface CacheFeedFigures {
  held: number;
  anchored: number;
  seeds: number;
  seedFailures: number;
  unholds: number;
  evictions: number;
  gaps: number;
}

export class CacheFeed implements FeedTap {
  private readonly feed: Feed;
  /** base58 → raw (latin1) and back, for the held keys. */
  private readonly rawOf = new Map<string, string>();
  private readonly keyOf = new Map<string, string>();
  /** The held keys (base58), in the upstream filter. */
  private readonly held = new Set<string>();
  private pending: CacheEvent[] = [];
  private flushArmed = false;
  private maxSeenSlot = 0;
  private pingId = 0;
  /** Keys waiting for a pong of ping id → keys. */
  private readonly rounds = new Map<number, string[]>();
  private waiting: string[] = [];
  private readonly timer: NodeJS.Timeout;
  private closed = false;
  readonly figures: CacheFeedFigures = { held: 0, anchored: 0, seeds: 0, seedFailures: 0, unholds: 0, evictions: 0, gaps: 0 };

  private maxBytes: number;
  private maxAccountBytes: number;

  constructor(private readonly opts: CacheFeedOptions) {
    this.maxBytes = opts.maxBytes;
    this.maxAccountBytes = opts.maxAccountBytes;
    this.feed = opts.hub.addTap(COMMITMENT_PROCESSED, this);
    this.timer = setInterval(() => this.housekeeping(), HOUSEKEEPING_MS);
    this.timer.unref();
  }

  get accountKeys(): ReadonlySet<string> {
    return this.held;
  }

  wants(u: Update): boolean {
    return u.kind === KIND_SLOT || (u.kind === KIND_ACCOUNT && this.keyOf.has(u.key));
  }

  /** Reads the data planes counted since their last report, key → reads. */
  reads(counts: ReadonlyMap<string, number> | Record<string, number>): void {
    const now = performance.now();
    const entries = counts instanceof Map ? counts.entries() : Object.entries(counts);
    for (const [key, n] of entries) {
      if (!this.opts.directory.read(key, n, now)) continue;
      if (decodeBase58(key)?.length !== 32) continue;
      this.opts.directory.hold(key, now);
      this.waiting.push(key);
    }
    if (this.waiting.length > 0) this.startRound();
  }

  private startRound(): void {
    if (this.closed || this.waiting.length === 0) return;
    const keys = this.waiting;
    this.waiting = [];
    for (const k of keys) {
      if (this.rawOf.has(k)) continue;
      const raw = Buffer.from(decodeBase58(k)!).toString('latin1');
      this.rawOf.set(k, raw);
      this.keyOf.set(raw, k);
      this.held.add(k);
    }
    this.feed.filtersChanged(true);
    const id = ++this.pingId;
    // No stream open yet (a source still connecting): the round goes again shortly.
    if (this.feed.ping(id) === 0) {
      this.waiting.push(...keys);
      setTimeout(() => this.startRound(), SEED_RETRY_MS).unref();
      return;
    }
    this.rounds.set(id, keys);
  }

  pong(_link: SourceLink, id: number): void {
    const keys = this.rounds.get(id);
    if (keys === undefined) return;
    this.rounds.delete(id);
    const from = this.maxSeenSlot + COVER_MARGIN;
    const live = keys.filter((k) => this.rawOf.has(k));
    for (const k of live) this.emit({ t: EV_TRACK, key: k, from });
    void this.seed(live, from, performance.now() + SEED_DEADLINE_MS);
  }

  gap(link: SourceLink): void {
    this.figures.gaps++;
    this.opts.log.warn({ source: link.id }, 'account cache: a source reopened without replay; every key is read again');
    this.emit({ t: EV_UNHOLD, key: '' });
    this.figures.unholds += this.rawOf.size;
    this.waiting.push(...this.rawOf.keys());
    // Already in the filter: the round only pings and reads again.
    this.startRound();
  }

  update(u: Update): void {
    if (u.slot > this.maxSeenSlot) this.maxSeenSlot = u.slot;
    if (u.kind === KIND_SLOT) {
      const status = STATUS[u.status] ?? null;
      if (status !== null) this.emit({ t: EV_SLOT, slot: u.slot, parent: u.parent, status, at: performance.timeOrigin + u.arrivedAt });
      return;
    }
    if (u.kind !== KIND_ACCOUNT) return;
    const key = this.keyOf.get(u.key);
    if (key === undefined) return;
    const state = accountStateOf(u);
    if (state === undefined) return;
    this.emit({ t: EV_WRITE, key, slot: u.slot, wv: u.writeVersion, state });
  }

  private emit(e: CacheEvent): void {
    this.pending.push(e);
    if (!this.flushArmed) {
      this.flushArmed = true;
      setImmediate(() => this.flush());
    }
  }

  /** Applies this turn's events here and sends them to the data planes, in one message. */
  private flush(): void {
    this.flushArmed = false;
    const events = this.pending;
    this.pending = [];
    if (events.length === 0) return;
    applyEvents(this.opts.store, events);
    this.opts.publish(events);
  }

  /** The freshest usable node (its processed slot), for seeds. */
  private seedNode(): UpstreamNode | null {
    let best: UpstreamNode | null = null;
    for (const n of this.opts.nodes()) {
      if (n.state !== 'healthy' && n.state !== 'lagging') continue;
      if (best === null || n.chain.slot(0) > best.chain.slot(0)) best = n;
    }
    return best;
  }

  private async seed(keys: string[], from: number, deadline: number): Promise<void> {
    for (let i = 0; i < keys.length; i += SEED_BATCH) {
      let batch = keys.slice(i, i + SEED_BATCH);
      while (!this.closed && batch.length > 0) {
        batch = batch.filter((k) => this.rawOf.has(k));
        if (batch.length === 0) break;
        const node = this.seedNode();
        const got = node === null ? null : await this.readOnce(node, batch, from);
        if (got !== null) {
          for (let j = 0; j < batch.length; j++) {
            const state = got.states[j]!;
            if (state !== null && state.data.length > this.maxAccountBytes) {
              this.drop(batch[j]!);
              continue;
            }
            this.emit({ t: EV_ANCHOR, key: batch[j]!, slot: got.slot, state, apiVersion: got.apiVersion });
            this.figures.anchored++;
          }
          break;
        }
        this.figures.seedFailures++;
        if (performance.now() > deadline) {
          // Left unanchored (reads go to nodes); the next read of the key tries again.
          for (const k of batch) this.drop(k);
          break;
        }
        await new Promise((r) => setTimeout(r, SEED_RETRY_MS).unref());
      }
    }
  }

  private async readOnce(node: UpstreamNode, keys: string[], from: number): Promise<SeedRead | null> {
    this.figures.seeds++;
    const body = `{"jsonrpc":"2.0","id":1,"method":"getMultipleAccounts","params":[${JSON.stringify(keys)},{"encoding":"base64","commitment":"processed","minContextSlot":${Math.max(0, from - 1)}}]}`;
    try {
      const text = await probePost(node, body, SEED_TIMEOUT_MS);
      const got = accountsFromRpcBody(Buffer.from(text));
      if (got === undefined || got.states.length !== keys.length || got.slot < from - 1) return null;
      return got;
    } catch {
      return null;
    }
  }

  setLimits(maxBytes: number, maxAccountBytes: number): void {
    this.maxBytes = maxBytes;
    this.maxAccountBytes = maxAccountBytes;
  }

  /** Stops holding a key: out of the filter (after the feed's shrink pause), out of every store. */
  drop(key: string): void {
    const raw = this.rawOf.get(key);
    this.opts.directory.drop(key);
    if (raw === undefined) return;
    this.rawOf.delete(key);
    this.keyOf.delete(raw);
    this.held.delete(key);
    this.emit({ t: EV_UNTRACK, key });
    this.feed.filtersChanged(false);
  }

  private housekeeping(): void {
    const now = performance.now();
    // Keys whose anchor went with a fork that died: covered and read again.
    for (const k of this.opts.store.takeUnanchored()) {
      if (!this.rawOf.has(k)) continue;
      this.emit({ t: EV_UNHOLD, key: k });
      this.figures.unholds++;
      this.waiting.push(k);
    }
    if (this.waiting.length > 0) this.startRound();
    for (const k of this.opts.directory.idle(now)) {
      this.figures.evictions++;
      this.drop(k);
    }
    if (this.opts.store.bytes > this.maxBytes) {
      let over = this.opts.store.bytes - this.maxBytes;
      const victims: string[] = [];
      for (const k of this.opts.directory.leastRecent()) {
        if (over <= 0) break;
        over -= this.opts.store.keyBytes(k);
        victims.push(k);
      }
      for (const k of victims) {
        this.figures.evictions++;
        this.drop(k);
      }
    }
    this.figures.held = this.rawOf.size;
  }

  close(): void {
    this.closed = true;
    clearInterval(this.timer);
    this.feed.taps.delete(this);
  }
}
