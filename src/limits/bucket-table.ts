// Token buckets keyed by string (affinity key, IP, token, token+method) in a bounded table.
// Buckets live in typed-array slabs, not objects. A bucket that has refilled completely holds
// no information (a new one would be identical), so idle buckets are dropped first; if a
// flood of distinct keys still fills the table, the oldest entries go (such a key merely
// starts again with a full bucket). Memory therefore stays bounded for random keys.

export class BucketTable {
  private readonly index = new Map<string, number>();
  private readonly tokens: Float64Array;
  private readonly stamp: Float64Array;
  private readonly free: number[] = [];
  private next = 0;
  rate: number;
  burst: number;

  constructor(
    readonly capacity: number,
    rate: number,
    burst: number,
  ) {
    this.tokens = new Float64Array(capacity);
    this.stamp = new Float64Array(capacity);
    this.rate = rate;
    this.burst = burst;
  }

  get size(): number {
    return this.index.size;
  }

  /**
   * Takes `n` tokens for `key` at time `now` (ms). Returns 0 when allowed, else the
   * milliseconds until `n` tokens would be available.
   */
  take(key: string, n: number, now: number): number {
    const i = this.refill(key, now);
    const level = this.tokens[i]!;
    if (level >= n) {
      this.tokens[i] = level - n;
      return 0;
    }
    return Math.max(1, Math.ceil(((n - level) * 1000) / this.rate));
  }

  /**
   * Takes `n` tokens for `key` at `now` whatever its level: the bucket may go below zero (a
   * debt that refills at the rate). Shared limits (docs/routing.md "Shared limits across instances (Redis)")
   * debit what other instances consumed.
   */
  debit(key: string, n: number, now: number): void {
    const i = this.refill(key, now);
    this.tokens[i] = this.tokens[i]! - n;
  }

  /** `key`'s slot (a new key gets a full bucket), its level brought up to `now`. */
  private refill(key: string, now: number): number {
    let i = this.index.get(key);
    if (i === undefined) {
      i = this.slot();
      this.index.set(key, i);
      this.tokens[i] = this.burst;
    } else {
      this.tokens[i] = Math.min(this.burst, this.tokens[i]! + ((now - this.stamp[i]!) * this.rate) / 1000);
    }
    this.stamp[i] = now;
    return i;
  }

  private slot(): number {
    if (this.free.length > 0) return this.free.pop()!;
    if (this.next < this.capacity) return this.next++;
    this.sweep(performance.now());
    if (this.free.length > 0) return this.free.pop()!;
    // Still full of active keys: evict the oldest quarter (Map keeps insertion order).
    let drop = this.capacity >> 2;
    for (const [k, i] of this.index) {
      this.index.delete(k);
      this.free.push(i);
      if (--drop === 0) break;
    }
    return this.free.pop()!;
  }

  /** Drops buckets that have refilled completely by `now`. */
  sweep(now: number): void {
    const full = (this.burst * 1000) / this.rate;
    for (const [k, i] of this.index) {
      if (now - this.stamp[i]! >= full) {
        this.index.delete(k);
        this.free.push(i);
      }
    }
  }
}
