// Usage on the hot path: per token and method, calls, errors, bytes in both directions and a
// latency histogram, aggregated in memory (a Map lookup and a few additions per record, no
// I/O). The accounts store drains it in the background (src/usage/flush.ts); `drain()` hands
// over everything since the last drain. Cells survive a drain (reset, not reallocated) while
// they stay busy, so a record allocates only when it creates a cell or its first histogram;
// a cell idle for a whole drain interval is dropped.

import { LatencyHistogram } from '../metrics/histogram.js';

/** What a drain hands over for one token and method. */
export interface UsageCell {
  tokenId: string;
  method: string;
  calls: number;
  errors: number;
  bytesIn: number;
  bytesOut: number;
  /** Encoded latency histogram in µs (LatencyHistogram.encode()), null when no latency was recorded. */
  histogram: string | null;
}

/** At most this many distinct method names per token; later ones count as '(other)'. */
const MAX_METHODS_PER_TOKEN = 256;
/** Usage histograms: 2 significant digits (1% resolution, ~12 KiB per busy cell), up to 10 min. */
const HISTOGRAM_OPTS = { digits: 2, highestUs: 600_000_000 } as const;

class Cell {
  calls = 0;
  errors = 0;
  bytesIn = 0;
  bytesOut = 0;
  /** Latencies recorded since the last drain (count > 0). */
  timed = 0;
  histogram: LatencyHistogram | null = null;
  constructor(
    readonly tokenId: string,
    readonly method: string,
  ) {}
}

export class UsageMeter {
  /**
   * Token id → method → cell. Two lookups of strings whose hashes V8 keeps (the token
   * record's id, the method names) instead of building a combined key per record, which
   * cost more than the rest of a WebSocket notification's bookkeeping.
   */
  private readonly byToken = new Map<string, Map<string, Cell>>();

  private cell(tokenId: string, method: string): Cell {
    let methods = this.byToken.get(tokenId);
    if (methods === undefined) this.byToken.set(tokenId, (methods = new Map()));
    let c = methods.get(method);
    if (c === undefined) {
      if (methods.size >= MAX_METHODS_PER_TOKEN && method !== '(other)') return this.cell(tokenId, '(other)');
      c = new Cell(tokenId, method);
      methods.set(method, c);
    }
    return c;
  }

  /**
   * `latencyUs` < 0 (the default) records no latency (bytes-only and bookkeeping records);
   * otherwise each of the `calls` took it (a batch's calls share the batch's latency).
   */
  record(tokenId: string, method: string, calls: number, errors: number, bytesIn: number, bytesOut: number, latencyUs = -1): void {
    const c = this.cell(tokenId, method);
    c.calls += calls;
    c.errors += errors;
    c.bytesIn += bytesIn;
    c.bytesOut += bytesOut;
    if (latencyUs >= 0 && calls > 0) {
      (c.histogram ??= new LatencyHistogram(HISTOGRAM_OPTS)).record(latencyUs, calls);
      c.timed += calls;
    }
  }

  /**
   * Adds cells another meter drained (a data-plane worker's, sent to the control plane in
   * the background): the control plane's flush then writes every worker's usage once.
   */
  merge(cells: readonly UsageCell[]): void {
    for (const u of cells) {
      const c = this.cell(u.tokenId, u.method);
      c.calls += u.calls;
      c.errors += u.errors;
      c.bytesIn += u.bytesIn;
      c.bytesOut += u.bytesOut;
      if (u.histogram === null) continue;
      const h = LatencyHistogram.decode(u.histogram, HISTOGRAM_OPTS);
      const count = h.count;
      if (count === 0) continue;
      (c.histogram ??= new LatencyHistogram(HISTOGRAM_OPTS)).add(h);
      c.timed += count;
    }
  }

  /** Totals per token so far (undrained), for tests and the admin view. */
  totals(tokenId: string): { calls: number; errors: number; bytesIn: number; bytesOut: number } {
    const t = { calls: 0, errors: 0, bytesIn: 0, bytesOut: 0 };
    for (const c of this.byToken.get(tokenId)?.values() ?? []) {
      t.calls += c.calls;
      t.errors += c.errors;
      t.bytesIn += c.bytesIn;
      t.bytesOut += c.bytesOut;
    }
    return t;
  }

  /** Everything recorded since the last drain (cells with something in them); the meter starts empty again. */
  drain(): UsageCell[] {
    const out: UsageCell[] = [];
    for (const [tokenId, methods] of this.byToken) {
      for (const c of methods.values()) this.drainCell(c, methods, out);
      if (methods.size === 0) this.byToken.delete(tokenId);
    }
    return out;
  }

  private drainCell(c: Cell, methods: Map<string, Cell>, out: UsageCell[]): void {
    if (c.calls === 0 && c.errors === 0 && c.bytesIn === 0 && c.bytesOut === 0 && c.timed === 0) {
      // Idle for a whole interval: free it (and its histogram).
      methods.delete(c.method);
      return;
    }
    out.push({
      tokenId: c.tokenId,
      method: c.method,
      calls: c.calls,
      errors: c.errors,
      bytesIn: c.bytesIn,
      bytesOut: c.bytesOut,
      histogram: c.timed > 0 ? c.histogram!.encode() : null,
    });
    c.calls = 0;
    c.errors = 0;
    c.bytesIn = 0;
    c.bytesOut = 0;
    if (c.timed > 0) {
      c.timed = 0;
      c.histogram!.reset();
    }
  }
}
