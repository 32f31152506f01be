// First arrival wins (docs/grpc.md "Several sources: dedup"): the same event from several sources passes once.
// Keys live per slot in a window of `windowSlots` slots behind the highest slot seen, and the
// window's first arrivals are kept for clients resuming with `from_slot`; both are bounded by
// the window and by `maxBytes` of kept updates (oldest slots go first). An update older than
// the window cannot be told from a duplicate and is dropped as late. An account update older
// than one already delivered for that account (a source that dropped the newer one's
// predecessor) is dropped as superseded, so each account's updates reach clients in slot order.

import { KIND_ACCOUNT, type Update } from './update.js';

class SlotEntry {
  /** Dedup key → first arrival time (performance.now()). */
  readonly keys = new Map<string, number>();
  readonly updates: Update[] = [];
  bytes = 0;
  constructor(readonly slot: number) {}
}

export const ACCEPTED = 0;
export const DUPLICATE = 1;
export const LATE = 2;
export const SUPERSEDED = 3;

export class DedupWindow {
  private readonly slots = new Map<number, SlotEntry>();
  /** Slots in the map, ascending (appended as they appear; sorted on the rare out-of-order slot). */
  private order: number[] = [];
  private highest = 0;
  private bytes = 0;
  /** Every slot at or below this one has been dropped from the window. */
  private floor = -1;
  /** Account key → [slot, writeVersion] of the newest update delivered. */
  private readonly newest = new Map<string, [number, number]>();
  /** Time between the first arrival and this one, for the last DUPLICATE answer (ms). */
  lagMs = 0;

  constructor(
    private readonly windowSlots: number,
    private readonly maxBytes: number,
  ) {}

  /** The oldest slot whose first arrivals are all still kept (for `from_slot`), or -1 when empty. */
  get oldestSlot(): number {
    return this.order.length === 0 ? -1 : this.order[0]!;
  }

  get highestSlot(): number {
    return this.highest;
  }

  accept(u: Update, now: number): number {
    if (u.slot <= this.floor || this.highest - u.slot >= this.windowSlots) return LATE;
    let entry = this.slots.get(u.slot);
    const key = u.dedupKey();
    if (entry !== undefined) {
      const first = entry.keys.get(key);
      if (first !== undefined) {
        this.lagMs = now - first;
        return DUPLICATE;
      }
    }
    if (u.kind === KIND_ACCOUNT) {
      const last = this.newest.get(u.key);
      if (last !== undefined && (u.slot < last[0] || (u.slot === last[0] && u.writeVersion < last[1]))) return SUPERSEDED;
      if (last === undefined) this.newest.set(u.key, [u.slot, u.writeVersion]);
      else {
        last[0] = u.slot;
        last[1] = u.writeVersion;
      }
    }
    if (entry === undefined) entry = this.open(u.slot);
    entry.keys.set(key, now);
    entry.updates.push(u);
    entry.bytes += u.body.length + key.length;
    this.bytes += u.body.length + key.length;
    u.arrivedAt = now;
    if (u.slot > this.highest) this.advance(u.slot);
    if (this.bytes > this.maxBytes) this.evictOldest();
    return ACCEPTED;
  }

  /** First arrivals of slots >= from, oldest slot first. */
  *since(from: number): Generator<Update> {
    for (const slot of [...this.order]) {
      if (slot < from) continue;
      const e = this.slots.get(slot);
      if (e !== undefined) yield* e.updates;
    }
  }

  private open(slot: number): SlotEntry {
    const e = new SlotEntry(slot);
    this.slots.set(slot, e);
    const n = this.order.length;
    this.order.push(slot);
    if (n > 0 && this.order[n - 1]! > slot) this.order.sort((a, b) => a - b);
    return e;
  }

  private advance(slot: number): void {
    this.highest = slot;
    let pruned = false;
    while (this.order.length > 0 && slot - this.order[0]! >= this.windowSlots) {
      this.drop(this.order.shift()!);
      pruned = true;
    }
    if (pruned) {
      const floor = slot - this.windowSlots;
      for (const [k, v] of this.newest) if (v[0] <= floor) this.newest.delete(k);
    }
  }

  private evictOldest(): void {
    while (this.bytes > this.maxBytes && this.order.length > 1) this.drop(this.order.shift()!);
  }

  private drop(slot: number): void {
    const e = this.slots.get(slot);
    if (slot > this.floor) this.floor = slot;
    if (e === undefined) return;
    this.bytes -= e.bytes;
    this.slots.delete(slot);
  }
}
