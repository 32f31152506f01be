// The account cache's store: for each held key, the versions the stream wrote and the anchors
// read from nodes, by slot and fork, answering a read at a commitment exactly (the key's state at
// that commitment's tip, on the tip's fork) or not at all. Slot bookkeeping: ./slot-tree.ts.
//
// What the caller (src/grpc/cache-feed.ts) guarantees, and the answers rest on:
// - Within the stream every write of slot s arrives before any status of s, and a slot's
//   status comes after its ancestors' writes (a bank freezes after its parent): a status of s
//   means every write of s and of its ancestors was delivered.
// - `track(key, coveredFrom)`: from the call on, every write of the key at a slot >= coveredFrom
//   is delivered, and none at such a slot was delivered before the call.
// - `anchor(key, slot, state)`: the key's whole state at the end of `slot`, from a node whose bank
//   at `slot` is frozen. With slot >= coveredFrom - 1 every later write is covered, so the anchor
//   plus the writes above it on a fork is the key's state on that fork. At its own slot an anchor
//   is newer than any write (it includes them).
// A read at tip S answers the newest version on S's chain at or below S (by slot, then anchor
// above write, then write version) when it is an anchor, or a write with a covering anchor below
// it on that chain. Versions at or below the root collapse into one anchor per key, so memory
// holds the slots above the root only.

import { stateBytes, type AccountState } from './account-value.js';
import { OFF, ON, SlotTree, UNKNOWN, type SlotStatus } from './slot-tree.js';

export type { SlotStatus };

/** read() misses (negative; a hit answers the slot). */
export const MISS_UNTRACKED = -1;
/** Tracked but no covering anchor on the tip's chain (not anchored yet, or unheld since). */
export const MISS_UNCOVERED = -2;
/** No status seen yet for the commitment. */
export const MISS_NO_TIP = -3;
/** A version's place against the tip's fork is not known (a parent link missing). */
export const MISS_FORK_UNKNOWN = -4;

/** The write version of an anchor: above every write of its slot. */
const ANCHOR = Number.POSITIVE_INFINITY;
/** Memory a key costs beyond its states (its entry, arrays and index places). */
export const KEY_OVERHEAD_BYTES = 200;

interface Entry {
  /** -1 while unheld: anchors are refused until a new track sets the coverage again. */
  coveredFrom: number;
  /** The versions, ascending by (slot, wv); an anchor's wv is ANCHOR. */
  slots: number[];
  wvs: number[];
  states: AccountState[];
  /** How many of the versions are anchors. */
  anchors: number;
  bytes: number;
}

/** A kept version as tests see it. */
export interface VersionView {
  slot: number;
  /** null for an anchor. */
  writeVersion: number | null;
  state: AccountState;
}

export class AccountStore {
  private readonly tree = new SlotTree();
  private readonly entries = new Map<string, Entry>();
  /** Slot above the root → keys with a version there, for a dead slot, a pruned fork or a root advance. Stale keys are tolerated. */
  private readonly bySlot = new Map<number, Set<string>>();
  private total = 0;
  /** Held keys whose every anchor went with a fork (dead, pruned, or not placeable at a root) since the last takeUnanchored(). */
  private readonly unanchored = new Set<string>();
  /** The state of the last hit of read(). */
  lastState: AccountState = null;

  get bytes(): number {
    return this.total;
  }

  get keys(): number {
    return this.entries.size;
  }

  get root(): number {
    return this.tree.root;
  }

  get confirmed(): number {
    return this.tree.confirmed;
  }

  get processed(): number {
    return this.tree.processed;
  }

  /** Slots kept above the root. */
  get slotCount(): number {
    return this.tree.size;
  }

  tip(commitment: number): number {
    return this.tree.tip(commitment);
  }

  keyBytes(key: string): number {
    return this.entries.get(key)?.bytes ?? 0;
  }

  versionsOf(key: string): VersionView[] {
    const e = this.entries.get(key);
    if (e === undefined) return [];
    return e.slots.map((slot, i) => ({ slot, writeVersion: e.wvs[i] === ANCHOR ? null : e.wvs[i]!, state: e.states[i]! }));
  }

  /** Starts (or, after an unhold, restarts) holding a key. A key still held keeps its coverage: the filter has been in effect since then. */
  track(key: string, coveredFrom: number): void {
    const e = this.entries.get(key);
    if (e === undefined) {
      const bytes = KEY_OVERHEAD_BYTES + 2 * key.length;
      this.entries.set(key, { coveredFrom, slots: [], wvs: [], states: [], anchors: 0, bytes });
      this.total += bytes;
    } else if (e.coveredFrom < 0) e.coveredFrom = coveredFrom;
  }

  untrack(key: string): void {
    const e = this.entries.get(key);
    if (e === undefined) return;
    this.total -= e.bytes;
    this.entries.delete(key);
    this.unanchored.delete(key);
  }

  /** A gap in the key's stream: everything kept goes, and anchors wait for a new track. */
  unhold(key: string): void {
    const e = this.entries.get(key);
    if (e !== undefined) this.clear(e);
    this.unanchored.delete(key);
  }

  unholdAll(): void {
    for (const e of this.entries.values()) this.clear(e);
    this.bySlot.clear();
    this.unanchored.clear();
  }

  /**
   * The held keys that lost their last anchor since the last call: it was on a fork that died or
   * lost (a node answered from a minority fork), so the key misses until the caller anchors it again.
   */
  takeUnanchored(): string[] {
    const keys = [...this.unanchored];
    this.unanchored.clear();
    return keys;
  }

  private clear(e: Entry): void {
    e.coveredFrom = -1;
    this.cut(e, 0, e.slots.length);
  }

  write(key: string, slot: number, writeVersion: number, state: AccountState): void {
    const e = this.entries.get(key);
    if (e === undefined || e.coveredFrom < 0 || slot < e.coveredFrom) return;
    // At or below the root every write was delivered before the root's status.
    if (slot <= this.tree.root || this.tree.isGone(slot)) return;
    this.insert(e, key, slot, writeVersion, state);
  }

  /** Whether the anchor was taken; false: the caller reads the key again later. */
  anchor(key: string, slot: number, state: AccountState): boolean {
    const e = this.entries.get(key);
    if (e === undefined || e.coveredFrom < 0 || slot < e.coveredFrom - 1) return false;
    // Below the root the store no longer knows whether the slot is on the root's chain.
    if (slot < this.tree.root || this.tree.isGone(slot)) return false;
    if (slot === this.tree.root) {
      // The root's state: nothing at or below it matters any more.
      let n = 0;
      while (n < e.slots.length && e.slots[n]! <= slot) n++;
      this.cut(e, 0, n);
    }
    this.insert(e, key, slot, ANCHOR, state);
    this.unanchored.delete(key);
    return true;
  }

  slotStatus(slot: number, parent: number | null, status: SlotStatus): void {
    const tree = this.tree;
    tree.status(slot, parent, status);
    if (tree.root !== tree.prevRoot) this.collapse(tree.root);
    for (const s of tree.dropped) {
      const keys = this.bySlot.get(s);
      if (keys === undefined) continue;
      this.bySlot.delete(s);
      for (const k of keys) {
        const e = this.entries.get(k);
        if (e === undefined) continue;
        const had = e.anchors;
        this.dropSlot(e, s);
        this.noteLoss(k, e, had);
      }
    }
  }

  /**
   * The key at the commitment's tip: the slot (>= 0) with `lastState` set, or a MISS_* code.
   * A few map lookups and a walk down the key's versions from the tip; nothing allocated.
   */
  read(key: string, commitment: number): number {
    const e = this.entries.get(key);
    if (e === undefined) return MISS_UNTRACKED;
    const tree = this.tree;
    const s = tree.tip(commitment);
    if (s < 0) return MISS_NO_TIP;
    const slots = e.slots;
    const wvs = e.wvs;
    let i = lastAtOrBelow(slots, s);
    for (; i >= 0; i--) {
      const r = tree.relation(slots[i]!, s);
      if (r === ON) break;
      if (r === UNKNOWN) return MISS_FORK_UNKNOWN;
    }
    if (i < 0) return MISS_UNCOVERED;
    if (wvs[i] !== ANCHOR) {
      const covered = this.coveredBelow(e, i, s);
      if (covered !== ON) return covered === UNKNOWN ? MISS_FORK_UNKNOWN : MISS_UNCOVERED;
    }
    this.lastState = e.states[i]!;
    return s;
  }

  /** Whether an anchor at coveredFrom - 1 or above sits below version i on the chain of s. */
  private coveredBelow(e: Entry, i: number, s: number): number {
    const floor = e.coveredFrom - 1;
    const slots = e.slots;
    // The usual case: the key's oldest version is its anchor at or below the root.
    if (e.wvs[0] === ANCHOR && slots[0]! >= floor && this.tree.relation(slots[0]!, s) === ON) return ON;
    for (let j = i - 1; j > 0 && slots[j]! >= floor; j--) {
      if (e.wvs[j] !== ANCHOR) continue;
      const r = this.tree.relation(slots[j]!, s);
      if (r !== OFF) return r;
    }
    return OFF;
  }

  private insert(e: Entry, key: string, slot: number, wv: number, state: AccountState): void {
    const slots = e.slots;
    const wvs = e.wvs;
    let i = slots.length;
    while (i > 0 && (slots[i - 1]! > slot || (slots[i - 1] === slot && wvs[i - 1]! > wv))) i--;
    const bytes = stateBytes(state);
    if (i > 0 && slots[i - 1] === slot && wvs[i - 1] === wv) {
      // A duplicate write is dropped; a second anchor of a slot is the same truth, read again.
      if (wv !== ANCHOR) return;
      const old = stateBytes(e.states[i - 1]!);
      e.states[i - 1] = state;
      e.bytes += bytes - old;
      this.total += bytes - old;
      return;
    }
    if (wv === ANCHOR) e.anchors++;
    if (i === slots.length) {
      slots.push(slot);
      wvs.push(wv);
      e.states.push(state);
    } else {
      slots.splice(i, 0, slot);
      wvs.splice(i, 0, wv);
      e.states.splice(i, 0, state);
    }
    e.bytes += bytes;
    this.total += bytes;
    if (slot > this.tree.root) {
      let keys = this.bySlot.get(slot);
      if (keys === undefined) this.bySlot.set(slot, (keys = new Set()));
      keys.add(key);
    }
  }

  /** Removes versions [from, to) of a key. */
  private cut(e: Entry, from: number, to: number): void {
    if (to <= from) return;
    let freed = 0;
    for (let i = from; i < to; i++) {
      freed += stateBytes(e.states[i]!);
      if (e.wvs[i] === ANCHOR) e.anchors--;
    }
    e.slots.splice(from, to - from);
    e.wvs.splice(from, to - from);
    e.states.splice(from, to - from);
    e.bytes -= freed;
    this.total -= freed;
  }

  private dropSlot(e: Entry, slot: number): void {
    let from = 0;
    while (from < e.slots.length && e.slots[from]! < slot) from++;
    let to = from;
    while (to < e.slots.length && e.slots[to] === slot) to++;
    this.cut(e, from, to);
  }

  /** The root moved to `root`: each key touched since collapses its versions at or below it into one anchor at the root, or none. */
  private collapse(root: number): void {
    if (!this.tree.lastAdvanceLinked) {
      // A link missing between the roots: even a version below the previous root is in question.
      for (const [k, e] of this.entries) this.collapseKey(k, e, root);
    }
    for (const [slot, keys] of this.bySlot) {
      if (slot > root) continue;
      this.bySlot.delete(slot);
      for (const k of keys) {
        const e = this.entries.get(k);
        if (e !== undefined) this.collapseKey(k, e, root);
      }
    }
  }

  private noteLoss(key: string, e: Entry, had: number): void {
    if (had > 0 && e.anchors === 0 && e.coveredFrom >= 0) this.unanchored.add(key);
  }

  private collapseKey(key: string, e: Entry, root: number): void {
    const slots = e.slots;
    let n = 0;
    while (n < slots.length && slots[n]! <= root) n++;
    if (n === 0 || (n === 1 && slots[0] === root && e.wvs[0] === ANCHOR)) return;
    const tree = this.tree;
    let newest = -1;
    for (let i = n - 1; i >= 0; i--) {
      const r = tree.rootRelation(slots[i]!);
      if (r === UNKNOWN) break;
      if (r === ON) {
        newest = i;
        break;
      }
    }
    // Only a version that a read could answer survives; anything else waits for an anchor at or above the root.
    let keep: AccountState | undefined;
    if (newest >= 0) {
      if (e.wvs[newest] === ANCHOR) keep = e.states[newest]!;
      else {
        const floor = e.coveredFrom - 1;
        for (let j = newest - 1; j >= 0 && slots[j]! >= floor; j--) {
          if (e.wvs[j] === ANCHOR && tree.rootRelation(slots[j]!) === ON) {
            keep = e.states[newest]!;
            break;
          }
        }
      }
    }
    const had = e.anchors;
    this.cut(e, 0, n);
    if (keep === undefined) {
      this.noteLoss(key, e, had);
      return;
    }
    const bytes = stateBytes(keep);
    slots.unshift(root);
    e.wvs.unshift(ANCHOR);
    e.states.unshift(keep);
    e.anchors++;
    e.bytes += bytes;
    this.total += bytes;
  }
}

/** Index of the last version at or below slot s, -1 when none. */
function lastAtOrBelow(slots: readonly number[], s: number): number {
  let hi = slots.length - 1;
  if (hi < 0 || slots[hi]! <= s) return hi;
  let lo = 0;
  if (slots[0]! > s) return -1;
  // slots[lo] <= s < slots[hi]
  while (hi - lo > 1) {
    const mid = (lo + hi) >> 1;
    if (slots[mid]! <= s) lo = mid;
    else hi = mid;
  }
  return lo;
}
