// The control plane's landing figures (docs/landing.md "Figures"): every delta the data plane
// reports (worker reports once a second, or the inline tracker's timer) is added into this
// instance's totals since start, per node and per token, which the admin API and /metrics read,
// and into pending store rows per hour, which the landing flush (flush.ts) drains into the
// store. The store also gets rows per token and node, kept nowhere else: they are what the
// console sums for one account's per-node figures. Node ids and token ids are bounded sets already; the maps are capped all the same, a
// key beyond the cap counting under OTHER_KEY, so no input can grow them without bound.

import { tokenNodeKey, type LandingRow } from '../store/types.js';
import { addCounts, emptyCounts, type LandingCounts, type LandingDelta } from './counts.js';
import type { SendRanking } from './ranking.js';

/** Distinct nodes, and distinct tokens, kept at most (each). */
export const DEFAULT_MAX_KEYS = 10_000;
/** Where counts of keys beyond the cap go. */
export const OTHER_KEY = '(other)';

const HOUR_MS = 3_600_000;

export interface LandingFiguresOptions {
  /** Wall clock for the pending rows' hour (tests). */
  now?: () => number;
  maxKeys?: number;
}

/** Counts the tracker could have sent: finite, not negative. Anything else is left out whole. */
function wellFormed(c: LandingCounts | undefined): c is LandingCounts {
  if (typeof c !== 'object' || c === null || !Array.isArray(c.slots)) return false;
  for (const v of [c.sent, c.landed, c.expired, c.failed, c.untracked, c.resent]) if (!(typeof v === 'number' && v >= 0 && Number.isFinite(v))) return false;
  for (const v of c.slots) if (!(typeof v === 'number' && v >= 0 && Number.isFinite(v))) return false;
  return true;
}

/** `c` as a store row of `kind`/`key` at `hour` (its slots copied: the row is added into later). */
export function landingRow(hour: number, kind: LandingRow['kind'], key: string, c: LandingCounts): LandingRow {
  const row: LandingRow = { hour, kind, key, ...emptyCounts() };
  addCounts(row, c);
  return row;
}

/** The identity of a store row: rows with the same one are added together. */
export function rowKey(r: Pick<LandingRow, 'hour' | 'kind' | 'key'>): string {
  return r.kind + '\0' + r.key + '\0' + r.hour;
}

/** Adds `rows` into `into` (by rowKey), copying those it did not hold. */
export function mergeRows(into: Map<string, LandingRow>, rows: Iterable<LandingRow>): void {
  for (const r of rows) {
    const k = rowKey(r);
    const held = into.get(k);
    if (held === undefined) into.set(k, landingRow(r.hour, r.kind, r.key, r));
    else addCounts(held, r);
  }
}

export class LandingFigures {
  private readonly byNode = new Map<string, LandingCounts>();
  private readonly byToken = new Map<string, LandingCounts>();
  private pending = new Map<string, LandingRow>();
  private readonly now: () => number;
  readonly maxKeys: number;
  /** Where the reports' send-ranking samples go (docs/landing.md "Sends go where they land"); null: nowhere. */
  ranking: SendRanking | null = null;

  constructor(opts: LandingFiguresOptions = {}) {
    this.now = opts.now ?? Date.now;
    this.maxKeys = Math.max(1, opts.maxKeys ?? DEFAULT_MAX_KEYS);
  }

  /** Adds one report's counts; malformed entries are skipped (a delta is plain data from another thread). */
  add(delta: LandingDelta): void {
    const hour = Math.floor(this.now() / HOUR_MS) * HOUR_MS;
    if (delta.rank !== undefined) this.ranking?.add(delta.rank);
    this.addKind(this.byNode, 'node', delta.nodes, hour);
    this.addKind(this.byToken, 'token', delta.tokens, hour);
    const pairs = delta.tokenNodes;
    if (typeof pairs !== 'object' || pairs === null) return;
    for (const [token, nodes] of Object.entries(pairs)) {
      if (typeof nodes !== 'object' || nodes === null) continue;
      for (const [node, c] of Object.entries(nodes)) if (wellFormed(c)) this.addPending(hour, 'token-node', tokenNodeKey(token, node), c);
    }
  }

  private addKind(totals: Map<string, LandingCounts>, kind: LandingRow['kind'], counts: Record<string, LandingCounts> | undefined, hour: number): void {
    if (typeof counts !== 'object' || counts === null) return;
    for (const [id, c] of Object.entries(counts)) {
      if (!wellFormed(c)) continue;
      const key = totals.has(id) || totals.size < this.maxKeys ? id : OTHER_KEY;
      let total = totals.get(key);
      if (total === undefined) totals.set(key, (total = emptyCounts()));
      addCounts(total, c);
      this.addPending(hour, kind, key, c);
    }
  }

  /**
   * Pending rows: one per kind, key and hour, drained every few seconds, so rarely more than
   * two hours' worth; the cap (per kind) holds them. A token-node row beyond it counts under
   * OTHER_KEY, which no account's figures read.
   */
  private addPending(hour: number, kind: LandingRow['kind'], key: string, c: LandingCounts): void {
    const k = rowKey({ hour, kind, key });
    const held = this.pending.get(k);
    if (held !== undefined) addCounts(held, c);
    else if (this.pending.size < 3 * this.maxKeys) this.pending.set(k, landingRow(hour, kind, key, c));
    else mergeRows(this.pending, [landingRow(hour, kind, OTHER_KEY, c)]);
  }

  /** Since start, per node id. */
  nodes(): ReadonlyMap<string, Readonly<LandingCounts>> {
    return this.byNode;
  }

  /** Since start, per token id. */
  tokens(): ReadonlyMap<string, Readonly<LandingCounts>> {
    return this.byToken;
  }

  /** Takes the rows added since the last drain (the landing flush writes them). */
  drain(): LandingRow[] {
    if (this.pending.size === 0) return [];
    const rows = [...this.pending.values()];
    this.pending = new Map();
    return rows;
  }

  /** Rows waiting for the next drain. */
  get pendingRows(): number {
    return this.pending.size;
  }
}
