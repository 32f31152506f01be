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

/** Method label for WebSocket notifications the gateway delivered (bytes out only). */
export const WS_NOTIFICATIONS = '(ws notifications)';
/** Method label for a WebSocket frame that was not a readable call. */
export const WS_OTHER = '(ws other)';
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
  private readonly cells = new Map<string, Cell>();
  private readonly methodsPerToken = new Map<string, number>();

  private cell(tokenId: string, method: string): Cell {
    const key = tokenId + '\0' + method;
    let c = this.cells.get(key);
    if (c === undefined) {
      const n = this.methodsPerToken.get(tokenId) ?? 0;
      if (n >= MAX_METHODS_PER_TOKEN && method !== '(other)') return this.cell(tokenId, '(other)');
      this.methodsPerToken.set(tokenId, n + 1);
      c = new Cell(tokenId, method);
      this.cells.set(key, c);
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

  /** Totals per token so far (undrained), for tests and the admin view. */
  totals(tokenId: string): { calls: number; errors: number; bytesIn: number; bytesOut: number } {
    const t = { calls: 0, errors: 0, bytesIn: 0, bytesOut: 0 };
    for (const c of this.cells.values()) {
      if (c.tokenId !== tokenId) continue;
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
    for (const [key, c] of this.cells) {
      if (c.calls === 0 && c.errors === 0 && c.bytesIn === 0 && c.bytesOut === 0 && c.timed === 0) {
        // Idle for a whole interval: free it (and its histogram).
        this.cells.delete(key);
        const n = this.methodsPerToken.get(c.tokenId)! - 1;
        if (n === 0) this.methodsPerToken.delete(c.tokenId);
        else this.methodsPerToken.set(c.tokenId, n);
        continue;
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
    return out;
  }
}
