// Which token snapshot each data-plane worker serves from (docs/accounts.md "When a change takes
// effect"): the control plane numbers every snapshot it sends, each worker answers with the
// number once its table is swapped, and a console write is acknowledged once every worker is at
// the number of the snapshot that carried it. The wait is bounded: a worker that does not answer
// is logged by index, and the change is acknowledged anyway (it is in the store, and that worker
// still gets the snapshot whenever its loop runs again).

import type { Logger } from '../log.js';

/**
 * How long an acknowledgement waits for the workers. A worker applies a snapshot between two
 * requests, in well under a millisecond for thousands of tokens: one that has not answered by
 * then is stuck (a blocked loop), not slow.
 */
export const TOKENS_APPLIED_WAIT_MS = 2000;

interface Waiter {
  gen: number;
  done: () => void;
}

export class TokenAcks {
  /** The number of the last snapshot sent; 0 is the table each worker started with. */
  private gen = 0;
  /** Per worker index: the newest snapshot it said it serves from, or null once it exited. */
  private readonly applied: (number | null)[] = [];
  private readonly waiters = new Set<Waiter>();

  constructor(
    private readonly log: Pick<Logger, 'error'>,
    private readonly waitMs = TOKENS_APPLIED_WAIT_MS,
  ) {}

  /** A worker starts with the table as it is now, every snapshot sent so far included. */
  join(index: number): void {
    this.applied[index] = this.gen;
  }

  /** The number for a snapshot about to be sent. */
  next(): number {
    return ++this.gen;
  }

  /** Worker `index` serves from snapshot `gen` now. */
  ack(index: number, gen: number): void {
    const was = this.applied[index];
    if (was === null || was === undefined) return;
    this.applied[index] = Math.max(was, gen);
    this.check();
  }

  /** Worker `index` exited: nobody waits for it. */
  gone(index: number): void {
    this.applied[index] = null;
    this.check();
  }

  /** Resolves once every live worker serves from the last snapshot sent (or after waitMs, logged). */
  wait(): Promise<void> {
    const gen = this.gen;
    if (this.behind(gen).length === 0) return Promise.resolve();
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.log.error(
          { gen, behind: this.behind(gen), waitedMs: this.waitMs },
          'data-plane workers did not confirm a token change in time: acknowledged anyway, they may serve the old table a while longer',
        );
        waiter.done();
      }, this.waitMs);
      timer.unref();
      const waiter: Waiter = {
        gen,
        done: () => {
          clearTimeout(timer);
          this.waiters.delete(waiter);
          resolve();
        },
      };
      this.waiters.add(waiter);
    });
  }

  /** Live workers not yet at `gen`: their index and the snapshot they serve from. */
  private behind(gen: number): { worker: number; applied: number }[] {
    return this.applied.flatMap((a, worker) => (a === null || a >= gen ? [] : [{ worker, applied: a }]));
  }

  private check(): void {
    for (const w of this.waiters) if (this.behind(w.gen).length === 0) w.done();
  }
}
