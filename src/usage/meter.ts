// Usage on the hot path: per token and method, calls, errors and bytes in both directions,
// aggregated in memory (a Map lookup and a few additions per record, no I/O). The accounts
// store drains it in the background; `drain()` hands over everything since the last drain.

export interface UsageCell {
  tokenId: string;
  method: string;
  calls: number;
  errors: number;
  bytesIn: number;
  bytesOut: number;
}

/** Method label for WebSocket notifications the gateway delivered (bytes out only). */
export const WS_NOTIFICATIONS = '(ws notifications)';
/** Method label for a WebSocket frame that was not a readable call. */
export const WS_OTHER = '(ws other)';
/** At most this many distinct method names per token; later ones count as '(other)'. */
const MAX_METHODS_PER_TOKEN = 256;

export class UsageMeter {
  private cells = new Map<string, UsageCell>();
  private methodsPerToken = new Map<string, number>();

  private cell(tokenId: string, method: string): UsageCell {
    const key = tokenId + '\0' + method;
    let c = this.cells.get(key);
    if (c === undefined) {
      const n = this.methodsPerToken.get(tokenId) ?? 0;
      if (n >= MAX_METHODS_PER_TOKEN && method !== '(other)') return this.cell(tokenId, '(other)');
      this.methodsPerToken.set(tokenId, n + 1);
      c = { tokenId, method, calls: 0, errors: 0, bytesIn: 0, bytesOut: 0 };
      this.cells.set(key, c);
    }
    return c;
  }

  record(tokenId: string, method: string, calls: number, errors: number, bytesIn: number, bytesOut: number): void {
    const c = this.cell(tokenId, method);
    c.calls += calls;
    c.errors += errors;
    c.bytesIn += bytesIn;
    c.bytesOut += bytesOut;
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

  /** Everything recorded since the last drain; the meter starts empty again. */
  drain(): UsageCell[] {
    const out = [...this.cells.values()];
    this.cells = new Map();
    this.methodsPerToken = new Map();
    return out;
  }
}
