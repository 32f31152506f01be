// The priority levels of getPriorityFeeEstimate and the percentile each takes
// (docs/priority-fees.md "How an estimate is computed"), over samples of compute-unit prices.

/** Helius's level names, as a request names them. */
export const LEVEL_NAMES = ['Min', 'Low', 'Medium', 'High', 'VeryHigh', 'UnsafeMax'] as const;
/** The keys of `priorityFeeLevels` in an answer, in the same order. */
export const LEVEL_KEYS = ['min', 'low', 'medium', 'high', 'veryHigh', 'unsafeMax'] as const;
/** The percentile of each level, in the same order. */
export const LEVEL_PERCENTILES = [0, 25, 50, 75, 95, 100] as const;
export const MEDIUM = 2;
/** `recommended: true` answers at least this many micro-lamports per compute unit. */
export const RECOMMENDED_FLOOR = 10_000;

/** What one block says about fees: each non-vote transaction's price and the accounts it write-locks. */
export interface SlotFees {
  slot: number;
  /** Micro-lamports per compute unit, per transaction (0 when it sets none). */
  prices: number[];
  /** Per transaction, its write-locked static account keys. */
  writes: string[][];
}

/**
 * The nearest-rank percentile of ascending `sorted`: the value at index ceil(p/100 × n) − 1
 * (index 0 for p = 0); 0 for no samples.
 */
export function percentile(sorted: ArrayLike<number>, p: number): number {
  const n = sorted.length;
  if (n === 0) return 0;
  return sorted[p <= 0 ? 0 : Math.min(n, Math.ceil((p / 100) * n)) - 1]!;
}

/** Every level's value over ascending `sorted`. */
export function levelsOf(sorted: ArrayLike<number>): number[] {
  return LEVEL_PERCENTILES.map((p) => percentile(sorted, p));
}
