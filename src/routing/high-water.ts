// A node's high-water mark (docs/routing.md "Monotonic reads"): the highest slot it has served to an
// affinity key, plus how often keys waited for, or were refused, a node that had caught up
// with it. The words live in a SharedArrayBuffer the control plane owns and hands to every
// worker with the node's health, so whichever worker saw an answer raises the one mark all of
// them route by, and the admin API and /metrics read the sums directly.
//
// Slots are stored as 32-bit unsigned words: Atomics work on integer arrays only, and a 64-bit
// one would hand back a new BigInt on every read of the hot path. Solana reaches slot 2^32 in
// about fifty years (EVM block numbers much later); past it a mark stays at 2^32 - 1, so keys
// keep their node and failovers wait (never a regression).
//
// A mark is kept per level (docs/solana-routing.md "Monotonic reads per commitment"): on Solana
// the level is the read's commitment (processed, confirmed, finalized), since a node's answers
// at each run at their own slot; other chains use level 0 only.

/** Why a key could not stay on its node, in counter order. */
export const MONOTONIC_REASONS = ['down', 'drained', 'retry', 'returning', 'moved'] as const;
export type MonotonicReason = (typeof MONOTONIC_REASONS)[number];
export const R_DOWN = 0;
export const R_DRAINED = 1;
export const R_RETRY = 2;
export const R_RETURNING = 3;
export const R_MOVED = 4;

/** Levels a mark is kept at (Solana's three commitments). */
export const MARK_LEVELS = 3;
const N_REASONS = MONOTONIC_REASONS.length;
const SLOT = 0;
const RETURNING = MARK_LEVELS;
const WAITS = RETURNING + 1;
const REFUSALS = WAITS + N_REASONS;
const WORDS = REFUSALS + N_REASONS;
const MAX_SLOT = 0xffffffff;

/** Raises word `i` to `value` unless another thread already went higher: a compare-and-swap
 * loop, no lock, no allocation. Shared with the chain view (solana/chain-view.ts). */
export function raiseWord(w: Uint32Array, i: number, value: number): void {
  let cur = Atomics.load(w, i);
  while (value > cur) {
    const prev = Atomics.compareExchange(w, i, cur, value);
    if (prev === cur) return;
    cur = prev;
  }
}

export class NodeMark {
  /** The words every thread shares once attach() was given the control plane's buffer. */
  private words: Uint32Array;

  constructor(buffer: SharedArrayBuffer = new SharedArrayBuffer(WORDS * 4)) {
    this.words = new Uint32Array(buffer);
  }

  get buffer(): SharedArrayBuffer {
    return this.words.buffer as SharedArrayBuffer;
  }

  /** Highest slot served at any level; 0 while none. */
  get slot(): number {
    const w = this.words;
    return Math.max(Atomics.load(w, SLOT), Atomics.load(w, SLOT + 1), Atomics.load(w, SLOT + 2));
  }

  /** Highest slot served at `level`; 0 while none. */
  at(level: number): number {
    return Atomics.load(this.words, SLOT + level);
  }

  /** Raises the mark at `level` to `slot` unless another thread already went higher (no lock, no allocation). */
  raise(slot: number, level = 0): void {
    raiseWord(this.words, SLOT + level, slot > MAX_SLOT ? MAX_SLOT : slot);
  }

  /**
   * Switches to a shared buffer (a worker takes the control plane's), keeping what this copy
   * saw before: its mark is carried over as a raise, its counters added.
   */
  attach(buffer: SharedArrayBuffer): void {
    if (buffer === this.words.buffer) return;
    const old = this.words;
    this.words = new Uint32Array(buffer);
    for (let l = 0; l < MARK_LEVELS; l++) this.raise(old[SLOT + l]!, l);
    if (old[RETURNING] !== 0) Atomics.store(this.words, RETURNING, 1);
    for (let i = WAITS; i < WORDS; i++) if (old[i]! > 0) Atomics.add(this.words, i, old[i]!);
  }

  /**
   * Back from being unusable (or from failing a keyed call another node then answered): keys
   * that left it may have been given higher slots elsewhere, so it takes keys again only once
   * probed at or above every node's mark (docs/routing.md "Monotonic reads").
   */
  get returning(): boolean {
    return Atomics.load(this.words, RETURNING) !== 0;
  }

  setReturning(on: boolean): void {
    Atomics.store(this.words, RETURNING, on ? 1 : 0);
  }

  /** A key whose node this is waited for another node to catch up. */
  waited(reason: number): void {
    Atomics.add(this.words, WAITS + reason, 1);
  }

  /** … and was answered 7505 when none had. */
  refused(reason: number): void {
    Atomics.add(this.words, REFUSALS + reason, 1);
  }

  waits(reason: number): number {
    return Atomics.load(this.words, WAITS + reason);
  }

  refusals(reason: number): number {
    return Atomics.load(this.words, REFUSALS + reason);
  }
}
