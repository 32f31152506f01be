// Fixed-bucket latency counts in the Prometheus histogram model, kept in plain typed arrays
// so recording is a few comparisons and increments; the exporter turns them into cumulative
// `_bucket{le=…}` series at scrape time.

import { LatencyHistogram, RollingHistogram } from './histogram.js';

/** Upper bounds in seconds: 0.5 ms … 30 s, enough for an RPC node and a gateway in front. */
export const LATENCY_BUCKETS_SEC: readonly number[] = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

export class Buckets {
  readonly boundsSec: readonly number[];
  private readonly boundsMs: Float64Array;
  /** counts[i]: observations in (bound[i-1], bound[i]]; the last entry is +Inf. */
  readonly counts: Float64Array;
  sumMs = 0;
  count = 0;

  constructor(boundsSec: readonly number[] = LATENCY_BUCKETS_SEC) {
    this.boundsSec = boundsSec;
    this.boundsMs = Float64Array.from(boundsSec, (s) => s * 1000);
    this.counts = new Float64Array(boundsSec.length + 1);
  }

  /** Adds counts another Buckets observed (same bounds): a worker's report, folded in. */
  addCounts(counts: readonly number[], sumMs: number): void {
    let n = 0;
    for (let i = 0; i < this.counts.length && i < counts.length; i++) {
      this.counts[i]! += counts[i]!;
      n += counts[i]!;
    }
    this.sumMs += sumMs;
    this.count += n;
  }

  observeMs(ms: number): void {
    const b = this.boundsMs;
    let i = 0;
    while (i < b.length && ms > b[i]!) i++;
    this.counts[i]!++;
    this.sumMs += ms;
    this.count++;
  }
}

/** Per-node latency of successful attempts: a rolling HDR window for the admin API and
 * cumulative buckets for Prometheus. Owned by UpstreamNode. */
export class NodeLatency {
  readonly window: RollingHistogram;
  readonly buckets: Buckets;

  constructor() {
    // 2 significant digits: 1% resolution, ~11 KiB per slice.
    this.window = new RollingHistogram({ windowMs: 60_000, slices: 6, digits: 2 });
    this.buckets = new Buckets();
  }

  /**
   * In a data-plane worker: what was recorded since the last report, sent to the control
   * plane once a second (null inline: nothing to report).
   */
  delta: LatencyHistogram | null = null;

  /** `ms`: attempt duration; `now`: performance.now() at its end. */
  record(ms: number, now: number): void {
    this.window.record(ms * 1000, now);
    this.buckets.observeMs(ms);
    if (this.delta !== null) this.delta.record(ms * 1000);
  }
}
