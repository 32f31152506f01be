// The slots above the finalized root as the account store sees them (src/cache/account-store.ts):
// parent links from the stream's slot statuses, the three tips, and the chain of the processed
// tip kept as a set so that "is slot v an ancestor of the tip" is one lookup on the read path.
//
// A relation the links cannot prove is UNKNOWN, never a guess: a parent link is missing only
// for slots first seen without one (the first slots after the stream starts), and an exact
// cache misses there rather than answering from a slot that may be on another fork.

export type SlotStatus = 'processed' | 'confirmed' | 'finalized' | 'dead';

export const OFF = 0;
export const ON = 1;
export const UNKNOWN = -1;

export class SlotTree {
  /** Slot above the root (and the root) → parent, -1 while not known. */
  private readonly parents = new Map<number, number>();
  /** Slots with a status other than dead: their writes have all been delivered. */
  private readonly complete = new Set<number>();
  /** Slots above the root that can no longer be on the chain (dead, or off the root's fork): later events for them are dropped. */
  private readonly gone = new Set<number>();
  private r = -1;
  private c = -1;
  private p = -1;
  /** The processed tip, its parent, … down to the root or to the first slot whose parent is not known. */
  private readonly chain = new Set<number>();
  private chainLow = -1;
  /** The chain ends at the root: every slot below chainLow that the store keeps is on it. */
  private chainRooted = false;
  /** The root's chain from the new root down to the previous one, for the store's collapse (valid until the next advance). */
  private readonly rootPath = new Set<number>();
  private rootPathLow = -1;
  private rootPathRooted = false;
  /** Slots the last status event took out (dead, off the root's fork): the store drops their versions. */
  readonly dropped: number[] = [];
  /** The root before the last status event (equal to `root` when it did not advance). */
  prevRoot = -1;

  get root(): number {
    return this.r;
  }

  get confirmed(): number {
    return this.c;
  }

  get processed(): number {
    return this.p;
  }

  /** The tip of commitment 0 processed, 1 confirmed, 2 finalized; -1 while not known. */
  tip(commitment: number): number {
    return commitment === 0 ? this.p : commitment === 1 ? this.c : this.r;
  }

  isGone(slot: number): boolean {
    return this.gone.has(slot);
  }

  /** Slots kept above the root (for tests and figures). */
  get size(): number {
    return this.parents.size;
  }

  /**
   * Whether slot v (v <= s) is s or an ancestor of s. `s` is one of the tips: they sit on the
   * processed tip's chain, so the set answers; the walk is for a tip off it (a root whose link to
   * the confirmed tip is not known).
   */
  relation(v: number, s: number): number {
    if (this.chain.has(s)) {
      if (v >= this.chainLow) return this.chain.has(v) ? ON : OFF;
      return this.chainRooted ? ON : UNKNOWN;
    }
    let cur = s;
    while (cur > v) {
      // Below the root the store keeps only versions on the root's chain.
      if (cur === this.r) return ON;
      const up = this.parents.get(cur);
      if (up === undefined || up < 0) return UNKNOWN;
      cur = up;
    }
    return cur === v ? ON : OFF;
  }

  /** After a root advance: whether slot v (at or below the new root) is on the root's chain. */
  rootRelation(v: number): number {
    if (this.rootPath.has(v)) return ON;
    if (v >= this.rootPathLow) return OFF;
    return this.rootPathRooted ? ON : UNKNOWN;
  }

  /** The last root advance linked the new root to the previous one: versions below the previous root stay on the chain. */
  get lastAdvanceLinked(): boolean {
    return this.rootPathRooted;
  }

  /** Whether x is a or descends from it, as far as the links tell. */
  descends(x: number, a: number): number {
    let cur = x;
    while (cur > a) {
      const up = this.parents.get(cur);
      if (up === undefined || up < 0) return UNKNOWN;
      cur = up;
    }
    return cur === a ? ON : OFF;
  }

  /** One slot status from the stream. Fills `dropped` and `prevRoot`. */
  status(slot: number, parent: number | null, status: SlotStatus): void {
    this.dropped.length = 0;
    this.prevRoot = this.r;
    if (slot <= this.r || this.gone.has(slot)) return;
    if (status === 'dead') {
      this.kill(slot);
      return;
    }
    let relinked = false;
    const known = this.parents.get(slot);
    if (parent !== null && parent >= 0 && parent < slot && (known === undefined || known < 0)) {
      this.parents.set(slot, parent);
      relinked = known !== undefined;
    } else if (known === undefined) this.parents.set(slot, -1);
    const up = this.parents.get(slot)!;
    // Off the root's fork: its parent was taken out, or is below the root.
    if (up >= 0 && (this.gone.has(up) || (this.r >= 0 && up < this.r))) {
      this.parents.delete(slot);
      this.gone.add(slot);
      this.dropped.push(slot);
      return;
    }
    const fresh = !this.complete.has(slot);
    this.complete.add(slot);
    if (status === 'finalized') {
      if (slot > this.c) this.c = slot;
      this.advanceRoot(slot);
      return;
    }
    if (status === 'confirmed' && slot > this.c) {
      this.c = slot;
      if (relinked || !(this.chain.has(slot) && this.p >= slot)) this.recomputeProcessed();
      return;
    }
    if (relinked) this.recomputeProcessed();
    else if (fresh && slot > this.p) {
      // The usual slot: a child of the processed tip, which already descends from the base.
      const base = this.base();
      if (base < 0 || (this.p >= 0 && up === this.p) || this.descends(slot, base) === ON) this.setProcessed(slot);
    }
  }

  /** What the processed tip must descend from: the confirmed tip, else the root. */
  private base(): number {
    return this.c >= 0 ? this.c : this.r;
  }

  private setProcessed(slot: number): void {
    const up = this.parents.get(slot);
    if (this.p >= 0 && up === this.p && this.chain.has(this.p)) {
      this.chain.add(slot);
      this.p = slot;
      return;
    }
    this.p = slot;
    this.rebuildChain();
  }

  private rebuildChain(): void {
    this.chain.clear();
    this.chainRooted = false;
    this.chainLow = -1;
    let cur = this.p;
    if (cur < 0) return;
    for (;;) {
      this.chain.add(cur);
      this.chainLow = cur;
      if (cur === this.r) {
        this.chainRooted = true;
        return;
      }
      const up = this.parents.get(cur);
      if (up === undefined || up < 0 || up < this.r) return;
      cur = up;
    }
  }

  /** The kept slots, ascending: a parent before its children. Allocates; for the rare events. */
  private ascending(): number[] {
    return [...this.parents.keys()].sort((a, b) => a - b);
  }

  /** How every kept slot above `a` stands to it (ON: a descendant), in one pass instead of a walk per slot. */
  private relationsTo(a: number, slots: readonly number[]): Map<number, number> {
    const rel = new Map<number, number>([[a, ON]]);
    for (const x of slots) {
      if (x <= a) continue;
      const up = this.parents.get(x)!;
      rel.set(x, up < 0 ? UNKNOWN : up < a ? OFF : (rel.get(up) ?? UNKNOWN));
    }
    return rel;
  }

  /** The highest complete slot that is the base or descends from it; rare (a fork switch, a dead tip, a root advance). */
  private recomputeProcessed(): void {
    const base = this.base();
    let best = base;
    if (base < 0) {
      for (const x of this.complete) if (x > best) best = x;
    } else {
      const rel = this.relationsTo(base, this.ascending());
      for (const x of this.complete) if (x > best && rel.get(x) === ON) best = x;
    }
    this.p = best;
    this.rebuildChain();
  }

  private kill(slot: number): void {
    // A confirmed slot cannot die; a status saying so is ignored rather than emptying the tips.
    if (this.c >= 0 && this.descends(this.c, slot) === ON) return;
    this.gone.add(slot);
    this.dropped.push(slot);
    for (const x of this.ascending()) {
      if (x > slot && this.gone.has(this.parents.get(x)!)) {
        this.gone.add(x);
        this.dropped.push(x);
      }
    }
    for (const x of this.dropped) {
      this.parents.delete(x);
      this.complete.delete(x);
    }
    if (this.gone.has(this.p)) this.recomputeProcessed();
  }

  private advanceRoot(slot: number): void {
    if (slot <= this.r) return;
    const old = this.r;
    this.rootPath.clear();
    this.rootPathRooted = false;
    let cur = slot;
    for (;;) {
      this.rootPath.add(cur);
      this.rootPathLow = cur;
      if (cur === old) {
        this.rootPathRooted = true;
        break;
      }
      const up = this.parents.get(cur);
      if (up === undefined || up < 0) break;
      // The new root does not descend from the old one (finality says it must): nothing below can be placed.
      if (up < old) {
        this.rootPath.clear();
        this.rootPath.add(slot);
        this.rootPathLow = slot;
        break;
      }
      cur = up;
    }
    const oldBase = this.base();
    this.r = slot;
    if (this.c < slot || this.descends(this.c, slot) === OFF) this.c = slot;
    // Decided before any link goes: a fork's walk passes through slots below the root.
    const slots = this.ascending();
    const rel = this.relationsTo(slot, slots);
    for (const x of slots) {
      if (x < slot) {
        this.parents.delete(x);
        this.complete.delete(x);
      } else if (rel.get(x) === OFF) this.dropped.push(x);
    }
    for (const x of this.dropped) {
      this.parents.delete(x);
      this.complete.delete(x);
      this.gone.add(x);
    }
    for (const g of this.gone) if (g <= slot) this.gone.delete(g);
    // The confirmed tip unmoved: the processed tip is still the highest of its descendants; its chain now ends at the new root.
    if (this.base() === oldBase && !this.gone.has(this.p) && this.p >= slot) this.rebuildChain();
    else this.recomputeProcessed();
  }
}
