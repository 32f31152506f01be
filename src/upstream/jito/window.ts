// A block engine's send limit on one data plane (docs/jito.md "Rate limit"): at most `max`
// calls in any window of `windowMs`, strictly, so the engine never sees more than its
// `rateLimit` per second from this instance. The times of the last `max` sends sit in a ring.

export class SendWindow {
  private readonly times: Float64Array;
  private at = 0;

  constructor(
    readonly max: number,
    readonly windowMs: number,
  ) {
    this.times = new Float64Array(max).fill(-Infinity);
  }

  /**
   * A call per second limit shared by `planes` data planes: each plane may send
   * floor(limit / planes) a second (at least one call, then over a longer window).
   */
  static forLimit(limit: number, planes: number): SendWindow {
    const share = limit / planes;
    if (share >= 1) return new SendWindow(Math.floor(share), 1000);
    return new SendWindow(1, Math.ceil(1000 / share));
  }

  /** The ms until a send is free (0: now). */
  wait(now: number): number {
    const free = this.times[this.at]! + this.windowMs;
    return free > now ? Math.max(1, Math.ceil(free - now)) : 0;
  }

  /** Takes a send at `now`: 0 when taken, else the ms until one is free. */
  take(now: number): number {
    const oldest = this.times[this.at]!;
    const free = oldest + this.windowMs;
    if (free > now) return Math.max(1, Math.ceil(free - now));
    this.times[this.at] = now;
    this.at = (this.at + 1) % this.max;
    return 0;
  }
}
