// Latency histograms: a small wrapper that records integer microseconds and
// rotates windows, so the HDR library underneath (hdr-histogram-js) can change without
// touching callers. Recording allocates nothing: the counts live in a preallocated typed
// array, values outside the range are clamped, and window rotation only resets a slice.

import * as hdr from 'hdr-histogram-js';

/** Percentiles and count of one histogram, in the recorded unit (µs). Zero when empty. */
export interface LatencySummary {
  count: number;
  p50: number;
  p90: number;
  p99: number;
  p999: number;
  max: number;
}

export interface HistogramOptions {
  /** Largest value kept apart; larger values are recorded as this. Default 10 minutes. */
  highestUs?: number;
  /** Significant decimal digits (1..5). 2 keeps 1% resolution in ~11 KiB; 3 costs ~70 KiB. */
  digits?: 1 | 2 | 3 | 4 | 5;
}

const DEFAULT_HIGHEST_US = 600_000_000;

/** The library's own fields that its bucket index is computed from. */
interface IndexFields {
  unitMagnitude: number;
  subBucketHalfCountMagnitude: number;
  subBucketHalfCount: number;
  highestTrackableValue: number;
  countsArrayIndex(value: number): number;
}

/**
 * hdr-histogram-js computes a value's counts index with Math.log2 and two Math.pow calls,
 * a visible share of a request's CPU with two records per request. For the integers below
 * 2^31 recorded here the same index comes from a count of leading zeros and shifts; it is
 * installed on the instance and checked against the library's own method in the tests.
 */
export function useIntegerIndex(h: hdr.Histogram): void {
  const f = h as unknown as IndexFields;
  if (typeof f.countsArrayIndex !== 'function' || typeof f.subBucketHalfCountMagnitude !== 'number') return;
  if (!(f.highestTrackableValue < 2 ** 31)) return;
  const unit = f.unitMagnitude;
  const half = f.subBucketHalfCountMagnitude;
  const halfCount = f.subBucketHalfCount;
  const general = f.countsArrayIndex.bind(f);
  f.countsArrayIndex = (value: number): number => {
    if (!(value < 2 ** 31)) return general(value);
    const bucket = Math.max(31 - Math.clz32(value) - half - unit, 0);
    return ((bucket + 1) << half) + (value >>> (bucket + unit)) - halfCount;
  };
}

/** One HDR histogram of integer microseconds. */
export class LatencyHistogram {
  readonly highest: number;
  private readonly h: hdr.Histogram;

  constructor(opts: HistogramOptions = {}, from?: hdr.Histogram) {
    this.highest = opts.highestUs ?? DEFAULT_HIGHEST_US;
    this.h =
      from ??
      hdr.build({
        bitBucketSize: 32,
        autoResize: false,
        lowestDiscernibleValue: 1,
        highestTrackableValue: this.highest,
        numberOfSignificantValueDigits: opts.digits ?? 3,
      });
    useIntegerIndex(this.h);
  }

  /** Records a value `count` times; negatives count as 0, values above `highest` as `highest`. */
  record(us: number, count = 1): void {
    const v = us > 0 ? (us < this.highest ? Math.round(us) : this.highest) : 0;
    if (count === 1) this.h.recordValue(v);
    else this.h.recordValueWithCount(v, count);
  }

  get count(): number {
    return this.h.totalCount;
  }

  /** Value at a percentile (0..100); 0 when empty. */
  percentile(p: number): number {
    return this.h.totalCount === 0 ? 0 : this.h.getValueAtPercentile(p);
  }

  summary(): LatencySummary {
    const h = this.h;
    if (h.totalCount === 0) return { count: 0, p50: 0, p90: 0, p99: 0, p999: 0, max: 0 };
    return {
      count: h.totalCount,
      p50: h.getValueAtPercentile(50),
      p90: h.getValueAtPercentile(90),
      p99: h.getValueAtPercentile(99),
      p999: h.getValueAtPercentile(99.9),
      max: h.maxValue,
    };
  }

  /** Adds another histogram's counts (merging windows, nodes or usage records). */
  add(other: LatencyHistogram): void {
    if (other.h.totalCount > 0) this.h.add(other.h);
  }

  reset(): void {
    this.h.reset();
  }

  /** Compressed base64 (HdrHistogram's standard encoding, readable by other HDR ports). */
  encode(): string {
    return hdr.encodeIntoCompressedBase64(this.h);
  }

  static decode(encoded: string, opts: HistogramOptions = {}): LatencyHistogram {
    const h = hdr.decodeFromCompressedBase64(encoded, 32, false);
    return new LatencyHistogram({ ...opts, highestUs: Math.max(opts.highestUs ?? DEFAULT_HIGHEST_US, h.highestTrackableValue) }, h);
  }

  /** Frees the library's memory (only needed for the WebAssembly flavour; harmless here). */
  destroy(): void {
    this.h.destroy();
  }
}

export interface RollingOptions extends HistogramOptions {
  /** Length of the window. Default 60 s. */
  windowMs?: number;
  /** Sub-windows the window rotates through. Default 6 (10 s each). */
  slices?: number;
}

/**
 * A rolling window made of a ring of sub-window histograms. A read covers the current slice
 * and the ones before it that are still inside the window, i.e. the last
 * (slices-1)·slice to slices·slice milliseconds (50–60 s with the defaults). Time is the
 * caller's monotonic clock in ms (performance.now()), passed in so a record needs no clock read.
 */
export class RollingHistogram {
  readonly windowMs: number;
  readonly sliceMs: number;
  private readonly ring: LatencyHistogram[];
  /** The slice number (time / sliceMs) each ring entry holds. */
  private readonly epochs: Float64Array;
  private cur = 0;
  private epoch = -1;
  /** Reused by reads. */
  private readonly merged: LatencyHistogram;

  constructor(opts: RollingOptions = {}) {
    const slices = opts.slices ?? 6;
    if (!Number.isInteger(slices) || slices < 1) throw new RangeError(`slices must be an integer >= 1, got ${slices}`);
    this.windowMs = opts.windowMs ?? 60_000;
    if (!(this.windowMs > 0)) throw new RangeError(`windowMs must be > 0, got ${this.windowMs}`);
    this.sliceMs = this.windowMs / slices;
    this.ring = Array.from({ length: slices }, () => new LatencyHistogram(opts));
    this.epochs = new Float64Array(slices).fill(-Infinity);
    this.merged = new LatencyHistogram(opts);
  }

  record(us: number, nowMs: number): void {
    const e = Math.floor(nowMs / this.sliceMs);
    if (e !== this.epoch) this.rotate(e);
    this.ring[this.cur]!.record(us);
  }

  private rotate(e: number): void {
    const n = this.ring.length;
    const i = ((e % n) + n) % n;
    if (this.epochs[i] !== e) {
      this.ring[i]!.reset();
      this.epochs[i] = e;
    }
    this.cur = i;
    this.epoch = e;
  }

  /** Adds another histogram's counts to the current slice (a worker's report, folded in). */
  addAt(h: LatencyHistogram, nowMs: number): void {
    const e = Math.floor(nowMs / this.sliceMs);
    if (e !== this.epoch) this.rotate(e);
    this.ring[this.cur]!.add(h);
  }

  /** The window's histogram as of `nowMs` (a shared object: read it before the next call). */
  window(nowMs: number): LatencyHistogram {
    const e = Math.floor(nowMs / this.sliceMs);
    const m = this.merged;
    m.reset();
    for (let i = 0; i < this.ring.length; i++) {
      const se = this.epochs[i]!;
      if (se <= e && se > e - this.ring.length) m.add(this.ring[i]!);
    }
    return m;
  }

  summary(nowMs: number): LatencySummary {
    return this.window(nowMs).summary();
  }

  encode(nowMs: number): string {
    return this.window(nowMs).encode();
  }
}
