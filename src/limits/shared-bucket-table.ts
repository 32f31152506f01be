// Token buckets keyed by string, like BucketTable, but kept in a SharedArrayBuffer: every
// thread holding a table over the same buffer takes from the same buckets, so a limit holds
// for the whole process and no thread sends a message per request.
//
// Layout: an open-addressing table (linear probing, a power-of-two number of slots) of
// 32-byte slots, two per cache line: [state, hash1, hash2, unused] as Int32, then [tokens,
// stamp] as Float64. The state word is the slot's lock: EMPTY, LOCKED or READY. A slot is
// claimed EMPTY -> LOCKED -> READY and updated READY -> LOCKED -> READY; it never becomes
// EMPTY again, so a probe that meets an empty slot knows the key is nowhere further on.
// Tokens and stamp are read and written only under the lock (JS has no atomic Float64).
//
// Keys are stored as a 64-bit hash, two 32-bit lanes computed over the UTF-16 units with
// per-table random seeds (kept in the header, so attached tables agree, and which keys collide
// cannot be worked out in advance; the hash is fast, not cryptographic). Two keys whose hashes
// collide share a bucket; at 2^-64 per pair that is accepted. (0, 0) is reserved: it is what
// a slot being claimed reads.
//
// Memory is fixed at creation. A key lives within WINDOW slots of its home slot; when that
// window holds neither the key nor an empty slot, a slot whose bucket has refilled
// completely (it carries no information) is replaced, else the one touched longest ago
// (such a key merely starts again with a full bucket), as BucketTable does.
//
// Two threads inserting the same new key into a full window at the same instant may each
// replace a different slot; the key then briefly has two buckets (one extra burst at most)
// until the unused copy ages out. That is no worse than an eviction and spares every miss a
// second scan.

import { avalanche, M1, randomSeed, stepA, stepB } from './key-hash.js';

const EMPTY = 0;
const LOCKED = 1;
const READY = 2;

const MAGIC = 0x4a474254; // 'JGBT'
// A holder keeps a slot for a few arithmetic operations, so a waiter spins; past SPINS tries
// the holder is likely off its core (more threads than cores), and the waiter sleeps a moment
// so as not to keep it off.
const SPINS = 256;
const PAUSE_MS = 0.05;
/**
 * A slot locked this long is taken as abandoned: a worker terminated between locking and
 * unlocking it would otherwise stall every thread that meets the slot, forever. Should the
 * holder be alive after all (descheduled that long), both update the bucket, which may then
 * hand out up to a burst too many: a bounded error, against a gateway that hangs.
 */
const STALE_LOCK_MS = 1000;
/** Slots a key may sit from its home slot; bounds the work of a miss in a full table. */
const WINDOW = 32;
const SLOT_BYTES = 32;
const HEADER_BYTES = 32;
/** Int32 words and Float64 words per slot, and where slot 0 starts in each view. */
const I32_PER_SLOT = SLOT_BYTES / 4;
const F64_PER_SLOT = SLOT_BYTES / 8;
const I32_BASE = HEADER_BYTES / 4;
const F64_BASE = HEADER_BYTES / 8 + 2;

// Header words (Int32 view): magic, slot count, the two hash seeds; Float64 word 2: epoch.
const H_MAGIC = 0;
const H_SLOTS = 1;
const H_SEED1 = 2;
const H_SEED2 = 3;
const H_EPOCH = 2;

export class SharedBucketTable {
  readonly buffer: SharedArrayBuffer;
  /** Slots in the table (a power of two); at most this many keys are tracked. */
  readonly slots: number;
  rate: number;
  burst: number;
  private readonly i32: Int32Array;
  private readonly f64: Float64Array;
  private readonly mask: number;
  private readonly seed1: number;
  private readonly seed2: number;
  /**
   * Added to the caller's performance.now() to reach the creator's clock: threads may have
   * different performance.timeOrigin. Exactly 0 in the creating thread.
   */
  private readonly offset: number;
  // Scratch written by hash() and acquire(): returning them in fields spares an object per take.
  private h1 = 0;
  private h2 = 0;
  private fresh = false;

  private constructor(buffer: SharedArrayBuffer, rate: number, burst: number) {
    const i32 = new Int32Array(buffer);
    const slots = i32[H_SLOTS]!;
    if (i32[H_MAGIC] !== MAGIC || slots < WINDOW || (slots & (slots - 1)) !== 0 || buffer.byteLength !== HEADER_BYTES + slots * SLOT_BYTES) {
      throw new Error('SharedBucketTable: the buffer was not made by SharedBucketTable.create()');
    }
    this.buffer = buffer;
    this.slots = slots;
    this.rate = rate;
    this.burst = burst;
    this.i32 = i32;
    this.f64 = new Float64Array(buffer);
    this.mask = slots - 1;
    this.seed1 = i32[H_SEED1]!;
    this.seed2 = i32[H_SEED2]!;
    this.offset = performance.timeOrigin - this.f64[H_EPOCH]!;
  }

  /** A new table with room for about `capacityKeys` keys (2 to 4 slots per key). */
  static create(capacityKeys: number, rate: number, burst: number): SharedBucketTable {
    return new SharedBucketTable(SharedBucketTable.allocate(capacityKeys), rate, burst);
  }

  /** The buffer of a new table, for a thread that hands tables out but takes from none. */
  static allocate(capacityKeys: number): SharedArrayBuffer {
    let slots = WINDOW;
    while (slots < 2 * capacityKeys) slots *= 2;
    const buffer = new SharedArrayBuffer(HEADER_BYTES + slots * SLOT_BYTES);
    const i32 = new Int32Array(buffer);
    i32[H_MAGIC] = MAGIC;
    i32[H_SLOTS] = slots;
    i32[H_SEED1] = randomSeed();
    i32[H_SEED2] = randomSeed();
    new Float64Array(buffer)[H_EPOCH] = performance.timeOrigin;
    return buffer;
  }

  /** The table another thread created (its `.buffer`, passed through workerData or postMessage). */
  static attach(buffer: SharedArrayBuffer, rate: number, burst: number): SharedBucketTable {
    return new SharedBucketTable(buffer, rate, burst);
  }

  /**
   * Takes `n` tokens for `key` at time `now` (this thread's performance.now(), ms). Returns 0
   * when allowed, else the milliseconds until `n` tokens would be available.
   */
  take(key: string, n: number, now: number): number {
    this.hash(-1, key);
    return this.takeHashed(n, now + this.offset);
  }

  /**
   * take(String.fromCharCode(tag) + key, n, now) without building that string: one table can
   * hold keys of several kinds (affinity keys, IPs) that must not share buckets.
   */
  takeTagged(tag: number, key: string, n: number, now: number): number {
    this.hash(tag, key);
    return this.takeHashed(n, now + this.offset);
  }

  /**
   * Takes `n` tokens for `key` at `now` whatever its level: the bucket may go below zero (a
   * debt that refills at the rate). Shared limits (docs/routing.md "Shared limits across instances (Redis)")
   * debit what other instances consumed.
   */
  debit(key: string, n: number, now: number): void {
    this.hash(-1, key);
    this.debitHashed(n, now + this.offset);
  }

  /** debit() of the key takeTagged() would take from. */
  debitTagged(tag: number, key: string, n: number, now: number): void {
    this.hash(tag, key);
    this.debitHashed(n, now + this.offset);
  }

  /** Tokens `key` holds at `now` (the burst when untracked); takes nothing. */
  level(key: string, now: number): number {
    this.hash(-1, key);
    const t = now + this.offset;
    const s = this.find();
    if (s < 0) return this.burst;
    const f = F64_BASE + s * F64_PER_SLOT;
    const level = this.refilled(this.f64[f]!, this.f64[f + 1]!, t);
    Atomics.store(this.i32, I32_BASE + s * I32_PER_SLOT, READY);
    return level;
  }

  /** Keys tracked now (idle ones included until replaced); walks every slot. */
  countKeys(): number {
    let n = 0;
    for (let s = 0; s < this.slots; s++) if (Atomics.load(this.i32, I32_BASE + s * I32_PER_SLOT) !== EMPTY) n++;
    return n;
  }

  private takeHashed(n: number, t: number): number {
    const s = this.acquire(t);
    const f = F64_BASE + s * F64_PER_SLOT;
    const level = this.levelAt(f, t);
    const allowed = level >= n;
    this.f64[f] = allowed ? level - n : level;
    Atomics.store(this.i32, I32_BASE + s * I32_PER_SLOT, READY);
    return allowed ? 0 : Math.max(1, Math.ceil(((n - level) * 1000) / this.rate));
  }

  private debitHashed(n: number, t: number): void {
    const s = this.acquire(t);
    const f = F64_BASE + s * F64_PER_SLOT;
    this.f64[f] = this.levelAt(f, t) - n;
    Atomics.store(this.i32, I32_BASE + s * I32_PER_SLOT, READY);
  }

  /** The level of the acquired slot whose tokens are Float64 word `f`, refilled to `t` (stamped). */
  private levelAt(f: number, t: number): number {
    const f64 = this.f64;
    if (this.fresh) {
      f64[f + 1] = t;
      return this.burst;
    }
    const stamp = f64[f + 1]!;
    // Threads' calls interleave, so `t` may be a little older than the stamp: never go back.
    if (t > stamp) f64[f + 1] = t;
    return this.refilled(f64[f]!, stamp, t);
  }

  private refilled(tokens: number, stamp: number, t: number): number {
    const level = t > stamp ? tokens + ((t - stamp) * this.rate) / 1000 : tokens;
    return level < this.burst ? level : this.burst;
  }

  /**
   * Sets h1/h2 to the 64-bit hash of the tag's unit (if `tag` >= 0) followed by the key's units.
   * Two 16-bit units go into each step; the length, mixed in at the end, tells a lone last
   * unit from a pair ending in 0.
   */
  private hash(tag: number, key: string): void {
    let a = this.seed1;
    let b = this.seed2;
    const n = key.length;
    let i = 0;
    if (tag >= 0) {
      const w = n > 0 ? tag | (key.charCodeAt(i++) << 16) : tag;
      a = stepA(a, w);
      b = stepB(b, w);
    }
    for (; i + 1 < n; i += 2) {
      const w = key.charCodeAt(i) | (key.charCodeAt(i + 1) << 16);
      a = stepA(a, w);
      b = stepB(b, w);
    }
    if (i < n) {
      const w = key.charCodeAt(i);
      a = stepA(a, w);
      b = stepB(b, w);
    }
    const len = tag >= 0 ? n + 1 : n;
    a = avalanche(a ^ len);
    b = avalanche(b ^ Math.imul(len, M1));
    if (a === 0 && b === 0) b = 1;
    this.h1 = a;
    this.h2 = b;
  }

  /** Waits out another thread's claim or update of the slot at word `w`; returns its state. */
  private settled(w: number): number {
    const i32 = this.i32;
    let since = 0;
    for (let spins = 0; ; spins++) {
      const st = Atomics.load(i32, w);
      if (st !== LOCKED) return st;
      if (spins < SPINS) continue;
      if (since === 0) since = performance.now();
      else if (performance.now() - since > STALE_LOCK_MS) {
        // Released on the holder's behalf; a claim cut short leaves hash (0, 0), which no key
        // has, and the slot is replaced like any other.
        Atomics.compareExchange(i32, w, LOCKED, READY);
        return READY;
      }
      Atomics.wait(i32, w, LOCKED, PAUSE_MS);
    }
  }

  /** Locks the READY slot at word `w`, waiting while another thread holds it. */
  private lock(w: number): void {
    const i32 = this.i32;
    let since = 0;
    for (let spins = 0; ; spins++) {
      if (Atomics.compareExchange(i32, w, READY, LOCKED) === READY) return;
      if (spins < SPINS) continue;
      if (since === 0) since = performance.now();
      else if (performance.now() - since > STALE_LOCK_MS) return; // the holder's lock, taken over as it stands
      Atomics.wait(i32, w, LOCKED, PAUSE_MS);
    }
  }

  /** The slot holding the current hash, locked, or -1 when the key is untracked. */
  private find(): number {
    const i32 = this.i32;
    const home = this.h1 & this.mask;
    for (;;) {
      let p = 0;
      for (; p < WINDOW; p++) {
        const s = (home + p) & this.mask;
        const w = I32_BASE + s * I32_PER_SLOT;
        if (this.settled(w) === EMPTY) return -1;
        if (i32[w + 1] !== this.h1 || i32[w + 2] !== this.h2) continue;
        this.lock(w);
        if (i32[w + 1] === this.h1 && i32[w + 2] === this.h2) return s;
        Atomics.store(i32, w, READY);
        break; // replaced meanwhile: look again
      }
      if (p === WINDOW) return -1;
    }
  }

  /**
   * The slot for the current hash, locked: the key's own (fresh = false) or one claimed or
   * replaced for it (fresh = true).
   */
  private acquire(t: number): number {
    const i32 = this.i32;
    const f64 = this.f64;
    const mask = this.mask;
    const h1 = this.h1;
    const h2 = this.h2;
    const home = h1 & mask;
    const burst = this.burst;
    for (;;) {
      let idle = -1;
      let oldest = -1;
      let oldestStamp = Infinity;
      let retry = false;
      for (let p = 0; p < WINDOW; p++) {
        const s = (home + p) & mask;
        const w = I32_BASE + s * I32_PER_SLOT;
        let st = Atomics.load(i32, w);
        if (st === EMPTY) {
          if (Atomics.compareExchange(i32, w, EMPTY, LOCKED) === EMPTY) {
            i32[w + 1] = h1;
            i32[w + 2] = h2;
            this.fresh = true;
            return s;
          }
          st = LOCKED; // another thread claimed it first, maybe for this very key
        }
        // A slot being claimed has no hash yet: wait for it, or the key could end up twice.
        if (st === LOCKED) this.settled(w);
        if (i32[w + 1] === h1 && i32[w + 2] === h2) {
          this.lock(w);
          if (i32[w + 1] === h1 && i32[w + 2] === h2) {
            this.fresh = false;
            return s;
          }
          Atomics.store(i32, w, READY);
          retry = true;
          break;
        }
        // Read without the lock, so possibly stale: a choice only, checked again under the lock.
        const f = F64_BASE + s * F64_PER_SLOT;
        const stamp = f64[f + 1]!;
        if (idle < 0 && this.refilled(f64[f]!, stamp, t) >= burst) idle = s;
        if (stamp < oldestStamp) {
          oldestStamp = stamp;
          oldest = s;
        }
      }
      if (retry) continue;
      const victim = idle >= 0 ? idle : oldest;
      if (victim < 0) continue;
      if (this.replace(victim, idle >= 0, oldestStamp, t)) return victim;
    }
  }

  /**
   * Gives slot `s` to the current hash if it is still what was chosen: idle, or untouched
   * since it was seen as the oldest with `stamp`. Returns false, unlocked, if not.
   */
  private replace(s: number, idle: boolean, stamp: number, t: number): boolean {
    const i32 = this.i32;
    const w = I32_BASE + s * I32_PER_SLOT;
    const f = F64_BASE + s * F64_PER_SLOT;
    this.lock(w);
    const last = this.f64[f + 1]!;
    const still = idle ? this.refilled(this.f64[f]!, last, t) >= this.burst : last === stamp;
    if (!still) {
      Atomics.store(i32, w, READY);
      return false;
    }
    i32[w + 1] = this.h1;
    i32[w + 2] = this.h2;
    this.fresh = true;
    return true;
  }
}
