// Batch ids a node echoes byte for byte, and a table of a batch's ids by their bytes.
//
// A batch whose requests all carry such ids, all different, goes to the nodes as the client
// wrote it (docs/interface.md "Batches"): no id is rewritten, and the node's answer is checked rather
// than rebuilt. That only holds if every node writes an id back exactly as it read it, so
// "such ids" are the ones every JSON encoder writes one way: integers of at most 15 digits
// (exact in a double; no sign on zero, no fraction or exponent) and short strings of
// letters, digits and `-_.:` (no escapes, nothing an encoder might escape, like Go's `<>&`).
// Any other id (null, 20 digits, `1.0`, `"é"`) keeps the old way: positions upstream, the
// client's bytes spliced back.

import { Byte } from './bytes.js';
import { uintOf } from './json-bytes.js';

/** Longest string id (quotes excluded) that is forwarded as it is. */
const MAX_STRING_ID = 64;

/**
 * The id at [s, e) as a number when it is a plain integer a node echoes as it is; -1 when it
 * is a string a node echoes as it is; NaN for any other id.
 */
export function echoedId(buf: Uint8Array, s: number, e: number): number {
  let c = buf[s]!;
  if (c === Byte.QUOTE) {
    if (e - s - 2 > MAX_STRING_ID) return NaN;
    for (let i = s + 1; i < e - 1; i++) {
      c = buf[i]!;
      const l = c | 0x20; // ASCII letters fold to lower case
      if ((l >= 0x61 && l <= 0x7a) || (c >= 0x30 && c <= 0x3a) || c === 0x2d || c === 0x5f || c === 0x2e) continue; // a-z A-Z 0-9 : - _ .
      return NaN;
    }
    return -1;
  }
  let i = s;
  let sign = 1;
  if (c === Byte.MINUS) {
    sign = -1;
    c = buf[++i]!;
  }
  if (c === 0x30) return e - i === 1 && sign === 1 ? 0 : NaN; // 0, not -0 or 0.5
  const v = uintOf(buf, i, e); // at most 15 digits: exact in a double
  return v < 0 ? NaN : sign * v;
}

const EMPTY = new Uint8Array(0);
const NO_SPANS = new Int32Array(0);

function hashOf(buf: Uint8Array, s: number, e: number): number {
  let h = 0x811c9dc5; // FNV-1a
  for (let i = s; i < e; i++) h = Math.imul(h ^ buf[i]!, 0x01000193);
  return h;
}

/**
 * Open-addressing table of a batch's elements keyed by their id bytes. One instance is
 * reused for every batch by code that fills and reads it in one synchronous step.
 */
export class IdTable {
  /** Element index + 1 per slot; 0 = empty. */
  private slots = new Int32Array(256);
  private mask = 255;
  private body: Uint8Array = EMPTY;
  private ids: Int32Array = NO_SPANS;

  /** Empties the table for elements of `body` whose id spans are `idSpans` (2 per element). */
  reset(body: Uint8Array, idSpans: Int32Array, count: number): void {
    let size = this.slots.length;
    while (size < 2 * count) size *= 2;
    if (size !== this.slots.length) this.slots = new Int32Array(size);
    else this.slots.fill(0);
    this.mask = size - 1;
    this.body = body;
    this.ids = idSpans;
  }

  /** Drops the references to the last body (the table itself is kept for the next batch). */
  forget(): void {
    this.body = EMPTY;
    this.ids = NO_SPANS;
  }

  /** Adds element i; false when an element with the same id bytes is already in. */
  add(i: number): boolean {
    const s = this.ids[2 * i]!;
    const e = this.ids[2 * i + 1]!;
    let k = hashOf(this.body, s, e) & this.mask;
    for (;;) {
      const at = this.slots[k]!;
      if (at === 0) {
        this.slots[k] = i + 1;
        return true;
      }
      if (this.equals(at - 1, this.body, s, e)) return false;
      k = (k + 1) & this.mask;
    }
  }

  /** The element whose id bytes are buf[s, e), or -1. */
  find(buf: Uint8Array, s: number, e: number): number {
    let k = hashOf(buf, s, e) & this.mask;
    for (;;) {
      const at = this.slots[k]!;
      if (at === 0) return -1;
      if (this.equals(at - 1, buf, s, e)) return at - 1;
      k = (k + 1) & this.mask;
    }
  }

  private equals(i: number, buf: Uint8Array, s: number, e: number): boolean {
    const is = this.ids[2 * i]!;
    if (this.ids[2 * i + 1]! - is !== e - s) return false;
    const body = this.body;
    for (let k = 0; k < e - s; k++) if (body[is + k] !== buf[s + k]) return false;
    return true;
  }
}
