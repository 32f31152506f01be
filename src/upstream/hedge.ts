// Hedged reads (docs/routing.md "Hedged reads"): when a call of a hedged method has not been answered
// after the node's observed percentile latency for that method, the same call also goes to
// the next best node and the first answer wins. The latency is kept per node × hedged method
// in a small fixed-bucket histogram: recording is a few comparisons, reading the percentile
// walks 24 counters, and nothing is allocated per call.

/** Bucket upper bounds in ms: roughly ×1.5 steps from 0.25 ms to ~4 s. */
const BOUNDS_MS = Float64Array.from({ length: 24 }, (_, i) => 0.25 * Math.pow(1.5, i));
/** Counts are halved once they add up to this: the histogram follows the node's recent behaviour. */
const DECAY_AT = 2048;
/**
 * Fewer answers than this on record for a node: its own percentile is not trusted and the
 * method's over all nodes is used; with fewer than this for the method too, maxDelayMs.
 */
const MIN_SAMPLES = 20;
/** Nodes tracked per method (a node's bit index; nodes past 31 share the last slot). */
const MAX_NODES = 32;

/** Recent latency of one node for one method. */
export class LatencyBuckets {
  readonly counts = new Float64Array(BOUNDS_MS.length + 1);
  total = 0;

  record(ms: number): void {
    let i = 0;
    while (i < BOUNDS_MS.length && ms > BOUNDS_MS[i]!) i++;
    this.counts[i]!++;
    if (++this.total >= DECAY_AT) {
      let t = 0;
      for (let k = 0; k < this.counts.length; k++) t += this.counts[k] = Math.floor(this.counts[k]! / 2);
      this.total = t;
    }
  }

  /** Upper bound of the bucket holding the `p`-th percentile (0 < p < 1); -1 with too few samples. */
  percentile(p: number): number {
    if (this.total < MIN_SAMPLES) return -1;
    const want = p * this.total;
    let seen = 0;
    for (let i = 0; i < BOUNDS_MS.length; i++) {
      seen += this.counts[i]!;
      if (seen >= want) return BOUNDS_MS[i]!;
    }
    return Infinity;
  }
}

/** Bit index of a node's routing bit (NodeView.bit). */
function bitIndex(bit: number): number {
  return 31 - Math.clz32(bit);
}

export interface HedgeSettings {
  percentile: number;
  minDelayMs: number;
  maxDelayMs: number;
  maxExtra: number;
}

/** How one hedged method is hedged, and its latency per node. */
export class HedgePlan {
  private readonly byNode: (LatencyBuckets | undefined)[] = new Array<LatencyBuckets | undefined>(MAX_NODES).fill(undefined);
  // Routing that favours the fast node leaves a slow one with few answers of its own: waiting
  // maxDelayMs for it (it used to) put every slow call it got at maxDelayMs.
  private readonly anyNode = new LatencyBuckets();
  readonly maxExtra: number;
  private readonly p: number;
  private readonly minMs: number;
  private readonly maxMs: number;

  constructor(
    readonly method: string,
    s: HedgeSettings,
  ) {
    this.p = s.percentile / 100;
    this.minMs = s.minDelayMs;
    this.maxMs = Math.max(s.minDelayMs, s.maxDelayMs);
    this.maxExtra = s.maxExtra;
  }

  record(bit: number, ms: number): void {
    const i = bitIndex(bit);
    let b = this.byNode[i];
    if (b === undefined) this.byNode[i] = b = new LatencyBuckets();
    b.record(ms);
    this.anyNode.record(ms);
  }

  /**
   * How long to wait for the node before hedging: its percentile (the method's over all nodes
   * while it has too few answers), clamped to [minDelayMs, maxDelayMs].
   */
  delayFor(bit: number): number {
    const b = this.byNode[bitIndex(bit)];
    let ms = b === undefined ? -1 : b.percentile(this.p);
    if (ms < 0) ms = this.anyNode.percentile(this.p);
    if (ms < 0) return this.maxMs;
    return ms < this.minMs ? this.minMs : ms > this.maxMs ? this.maxMs : ms;
  }
}
