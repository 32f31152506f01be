// Calls parked until a node catches up with their key's slot (docs/routing.md "Monotonic reads"). A
// parked call is routed again on every poll and after every probe round; once its wait
// (affinity.monotonicWaitMs from its first park) is over, the router answers it 7505. Only
// failovers park calls, so the Map and the timer exist only while one is waiting.

/** What a parked call offers: routing it again (it parks itself again if still behind). */
export interface Resumable {
  start(): void;
}

const POLL_MS = 20;

export class CatchUpWaits {
  private readonly calls = new Map<Resumable, number>();
  private timer: NodeJS.Timeout | null = null;
  /** The deadline of the call being routed again by wake(); -1 outside wake(). */
  private resuming = -1;

  /** Whether the call being routed now is parked for the first time. */
  get first(): boolean {
    return this.resuming < 0;
  }

  get size(): number {
    return this.calls.size;
  }

  /** Parks `call` until its deadline (now + waitMs at its first park); false when it has passed. */
  park(call: Resumable, waitMs: number, now: number): boolean {
    const until = this.resuming >= 0 ? this.resuming : now + waitMs;
    if (now >= until) return false;
    this.calls.set(call, until);
    if (this.timer === null) {
      this.timer = setInterval(() => this.wake(), POLL_MS);
      this.timer.unref();
    }
    return true;
  }

  /** Routes every parked call again: it goes to a node, parks again, or is refused. */
  wake(): void {
    if (this.calls.size === 0) return this.stopTimer();
    const parked = [...this.calls];
    this.calls.clear();
    for (const [call, until] of parked) {
      this.resuming = until;
      try {
        call.start();
      } finally {
        this.resuming = -1;
      }
    }
    if (this.calls.size === 0) this.stopTimer();
  }

  /** Ends every wait now (the pool closes): each call is refused. */
  close(): void {
    for (const k of this.calls.keys()) this.calls.set(k, 0);
    this.wake();
    this.stopTimer();
  }

  private stopTimer(): void {
    if (this.timer !== null) clearInterval(this.timer);
    this.timer = null;
  }
}
