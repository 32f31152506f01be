// A simulated cluster: one chain (the slot clock, skipped slots, the ledger) that every node of
// it sees at its own lag. Nodes started in one process without a cluster of their own share the
// process's cluster for their slot time, so a transaction sent to any of them lands for all
// (docs/simulator.md "One cluster, many nodes").

import { isSkipped, tipSlot } from './chain.js';
import { Ledger } from './ledger.js';
import type { ParsedTx } from './wire.js';

export interface ClusterOptions {
  /** The slot advances every slotMs (default 400). */
  slotMs?: number;
  /** Fraction of slots whose leader skips them (default 0). */
  skipRate?: number;
}

export class Cluster {
  readonly slotMs: number;
  skipRate: number;
  readonly ledger: Ledger;
  /** Transactions accepted by some node and not landed or dropped yet. */
  private readonly inFlight = new Set<string>();
  private readonly timers = new Set<NodeJS.Timeout>();

  constructor(opts: ClusterOptions = {}) {
    this.slotMs = opts.slotMs ?? 400;
    this.skipRate = opts.skipRate ?? 0;
    this.ledger = new Ledger({ nextSlot: () => this.nextSlot() });
  }

  /** The processed slot of a node with no lag. */
  tip(now = Date.now()): number {
    return tipSlot(this.slotMs, now);
  }

  skipped(slot: number): boolean {
    return isSkipped(slot, this.skipRate);
  }

  /** The newest produced (not skipped) slot at or below `slot`. */
  produced(slot: number): number {
    let s = slot;
    while (this.skipped(s)) s--;
    return s;
  }

  private nextSlot(): number {
    let s = this.tip() + 1;
    while (this.skipped(s)) s++;
    return s;
  }

  /**
   * Forwards an accepted transaction to the leaders: it lands after `delayMs`, or never with
   * probability `dropRate`. A copy already on its way or landed changes nothing.
   */
  forward(tx: ParsedTx, delayMs: number, dropRate: number): void {
    const sig = tx.signatures[0]!;
    if (this.inFlight.has(sig) || this.ledger.record(sig) !== undefined) return;
    if (dropRate > 0 && Math.random() < dropRate) return;
    if (delayMs <= 0) {
      this.ledger.land(tx);
      return;
    }
    this.inFlight.add(sig);
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      this.inFlight.delete(sig);
      this.ledger.land(tx);
    }, delayMs);
    timer.unref();
    this.timers.add(timer);
  }
}

const shared = new Map<number, Cluster>();

/** The process's cluster for a slot time, created on first use. */
export function sharedCluster(slotMs: number): Cluster {
  let c = shared.get(slotMs);
  if (c === undefined) shared.set(slotMs, (c = new Cluster({ slotMs })));
  return c;
}
