// A node's chain view (docs/solana-routing.md "Chain view"): its processed, confirmed and
// finalized slots and its first available slot, in words of a SharedArrayBuffer that the
// control plane owns and hands to every worker with the node's health (like the high-water
// mark, routing/high-water.ts). The control plane's slot stream and probes write it; any
// worker that sees a fresher context slot in an answer raises it too. Readers pay one
// Atomics.load per word and allocate nothing.
//
// Slots are 32-bit unsigned words for the reason given in routing/high-water.ts; 0 means
// "not known yet".

import { raiseWord } from '../routing/high-water.js';
import { answersProbes, type NodeView } from '../routing/node-view.js';

export const enum Commitment {
  Processed = 0,
  Confirmed = 1,
  Finalized = 2,
}

export const COMMITMENT_NAMES = ['processed', 'confirmed', 'finalized'] as const;

const FIRST_AVAILABLE = 3;
/** Slots behind the best as the node itself said (-32005's numSlotsBehind), +1; 0 = none said. */
const SAID_BEHIND = 4;
/** When the node last said so (ms since the epoch / 1000, so it fits a word). */
const SAID_AT = 5;
const WORDS = 6;
const MAX_SLOT = 0xffffffff;

function clamp(slot: number): number {
  return slot > MAX_SLOT ? MAX_SLOT : slot < 0 ? 0 : slot;
}

export class ChainView {
  private words: Uint32Array;

  constructor(buffer: SharedArrayBuffer = new SharedArrayBuffer(WORDS * 4)) {
    this.words = new Uint32Array(buffer);
  }

  get buffer(): SharedArrayBuffer {
    return this.words.buffer as SharedArrayBuffer;
  }

  /** The node's slot at `c`; 0 while unknown. */
  slot(c: Commitment): number {
    return Atomics.load(this.words, c);
  }

  /**
   * Raises the slot at `c` (a node never goes back at a commitment as far as routing is
   * concerned: a lower report is an older answer arriving late). Raising a commitment also
   * raises the ones below it: a node that finalized S has processed S.
   */
  raise(c: Commitment, slot: number): void {
    const s = clamp(slot);
    for (let i = c as number; i >= 0; i--) raiseWord(this.words, i, s);
  }

  /** The node's first available block (its `minimumLedgerSlot` / `getFirstAvailableBlock`). */
  get firstAvailable(): number {
    return Atomics.load(this.words, FIRST_AVAILABLE);
  }

  setFirstAvailable(slot: number): void {
    Atomics.store(this.words, FIRST_AVAILABLE, clamp(slot));
  }

  /** What the node last said of its own lag (-32005 numSlotsBehind), -1 when it said nothing. */
  get saidBehind(): number {
    return Atomics.load(this.words, SAID_BEHIND) - 1;
  }

  /** Seconds since the epoch when it said so. */
  get saidAt(): number {
    return Atomics.load(this.words, SAID_AT);
  }

  sayBehind(slots: number, nowMs: number): void {
    Atomics.store(this.words, SAID_BEHIND, clamp(slots + 1));
    Atomics.store(this.words, SAID_AT, Math.floor(nowMs / 1000));
  }

  clearBehind(): void {
    Atomics.store(this.words, SAID_BEHIND, 0);
  }

  /** Switches to a shared buffer (a worker takes the control plane's), keeping what it knew. */
  attach(buffer: SharedArrayBuffer): void {
    if (buffer === this.words.buffer) return;
    const old = this.words;
    this.words = new Uint32Array(buffer);
    for (let c = 0; c < 3; c++) raiseWord(this.words, c, old[c]!);
    if (old[FIRST_AVAILABLE]! > 0 && this.firstAvailable === 0) this.setFirstAvailable(old[FIRST_AVAILABLE]!);
  }

  /** Plain data for the admin API and logs. */
  snapshot(): { processed: number | null; confirmed: number | null; finalized: number | null; firstAvailable: number | null } {
    const v = (n: number): number | null => (n === 0 ? null : n);
    return {
      processed: v(this.slot(Commitment.Processed)),
      confirmed: v(this.slot(Commitment.Confirmed)),
      finalized: v(this.slot(Commitment.Finalized)),
      firstAvailable: v(this.firstAvailable),
    };
  }
}

/** Agave's default commitment when a request names none. */
export const DEFAULT_COMMITMENT = Commitment.Finalized;

/** The commitment named by the bytes `body[start,end)` (inside the quotes), or -1 if none of the three. */
export function commitmentOf(body: Uint8Array, start: number, end: number): number {
  const n = end - start;
  // processed / confirmed / finalized differ in length or first letter; compare fully anyway.
  for (let c = 0; c < 3; c++) {
    const name = COMMITMENT_NAMES[c]!;
    if (name.length !== n) continue;
    let k = 0;
    while (k < n && body[start + k] === name.charCodeAt(k)) k++;
    if (k === n) return c;
  }
  return -1;
}

/**
 * The freshest slot at each commitment (0 where none is known), over the nodes that answer
 * probes (a down node's view stays where it stopped, ahead of nothing). Admin API and scrape
 * time only: it allocates.
 */
export function freshestSlots(nodes: readonly (NodeView & { readonly chain?: ChainView })[]): number[] {
  const best = [0, 0, 0];
  for (const n of nodes) {
    if (n.chain === undefined || !answersProbes(n)) continue;
    for (let c = 0; c < 3; c++) best[c] = Math.max(best[c]!, n.chain.slot(c));
  }
  return best;
}

/** Slots `view` is behind `best` (freshestSlots) at commitment `c`; null while either is unknown. */
export function lagAt(view: ChainView, best: readonly number[], c: number): number | null {
  const s = view.slot(c);
  const b = best[c]!;
  return s === 0 || b === 0 ? null : Math.max(0, b - s);
}
