// Which slot each recent blockhash belongs to (docs/solana-routing.md "Blockhash-aware sends"),
// shared by every thread. A node "has" a blockhash when its processed slot has reached the
// blockhash's slot, so with this book and each node's chain view the gateway can tell, for
// a transaction, which nodes would accept its blockhash in preflight.
//
// Learned from the control plane's probes (each node's latest blockhash every slot) and from
// `getLatestBlockhash` answers passing through any worker, whose context slot is an upper
// bound of the blockhash's own slot: routing by it may wait a little longer than needed, never
// send to a node that lacks the hash.
//
// Layout: a direct-mapped table of BUCKETS × WAYS entries in one SharedArrayBuffer; an entry
// is [seq, slot, 8 words of hash]. Writers from any thread claim an entry with a seqlock (odd
// while writing); readers check the seq around their read, so a torn entry reads as a miss.
// A blockhash lives ~150 slots; the table holds far more than the ~150 × forks alive at once.

import { decodeBase58Into } from './transaction-bytes.js';

const BUCKETS = 1024;
const WAYS = 2;
const ENTRY = 10;
const SEQ = 0;
const SLOT = 1;
const HASH = 2;
export const BLOCKHASH_BOOK_BYTES = BUCKETS * WAYS * ENTRY * 4;

/** A blockhash as 8 little-endian words, the form the book compares. */
const words = new Int32Array(8);

function load(hash: Uint8Array, at: number): void {
  for (let i = 0; i < 8; i++) {
    const o = at + i * 4;
    words[i] = hash[o]! | (hash[o + 1]! << 8) | (hash[o + 2]! << 16) | (hash[o + 3]! << 24);
  }
}

const decoded = new Uint8Array(32);

export class BlockhashBook {
  private readonly t: Int32Array;

  constructor(buffer: SharedArrayBuffer = new SharedArrayBuffer(BLOCKHASH_BOOK_BYTES)) {
    this.t = new Int32Array(buffer);
  }

  get buffer(): SharedArrayBuffer {
    return this.t.buffer as SharedArrayBuffer;
  }

  /** Records that the 32 bytes at `hash[at…]` belong to `slot` (kept: the lowest slot seen). */
  learn(hash: Uint8Array, at: number, slot: number): void {
    load(hash, at);
    const t = this.t;
    const base = (((words[0]! ^ words[1]!) >>> 0) % BUCKETS) * WAYS * ENTRY;
    let victim = base;
    let victimSlot = 0xffffffff;
    for (let w = 0; w < WAYS; w++) {
      const e = base + w * ENTRY;
      if (this.matches(e)) {
        const seen = Atomics.load(t, e + SLOT) >>> 0;
        if (slot >= seen) return;
        victim = e;
        victimSlot = -1;
        break;
      }
      const s = Atomics.load(t, e + SLOT) >>> 0;
      if (s < victimSlot) {
        victimSlot = s;
        victim = e;
      }
    }
    // Seqlock: make the entry odd (claimed), write, make it even again.
    const seq = Atomics.load(t, victim + SEQ);
    if ((seq & 1) !== 0 || Atomics.compareExchange(t, victim + SEQ, seq, seq + 1) !== seq) return; // another writer has it
    for (let i = 0; i < 8; i++) Atomics.store(t, victim + HASH + i, words[i]!);
    Atomics.store(t, victim + SLOT, slot > 0xffffffff ? -1 : slot | 0);
    Atomics.store(t, victim + SEQ, seq + 2);
  }

  /** `learn` for a base58 blockhash at `text[start,end)` (as it stands in a JSON answer); ignores anything else. */
  learnBase58(text: Uint8Array, start: number, end: number, slot: number): void {
    if (decodeBase58Into(text, start, end, decoded) === 32) this.learn(decoded, 0, slot);
  }

  /** The slot of the 32 bytes at `hash[at…]`, or -1 when the book has not seen it. */
  slotOf(hash: Uint8Array, at: number): number {
    load(hash, at);
    const t = this.t;
    const base = (((words[0]! ^ words[1]!) >>> 0) % BUCKETS) * WAYS * ENTRY;
    for (let w = 0; w < WAYS; w++) {
      const e = base + w * ENTRY;
      const seq = Atomics.load(t, e + SEQ);
      if ((seq & 1) !== 0 || seq === 0) continue;
      if (!this.matches(e)) continue;
      const slot = Atomics.load(t, e + SLOT) >>> 0;
      if (Atomics.load(t, e + SEQ) !== seq) continue;
      return slot;
    }
    return -1;
  }

  private matches(e: number): boolean {
    const t = this.t;
    for (let i = 0; i < 8; i++) if (Atomics.load(t, e + HASH + i) !== words[i]) return false;
    return true;
  }
}
