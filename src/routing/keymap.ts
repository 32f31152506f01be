// Key affinity (docs/routing.md "Affinity and rate limits"): a weighted jump consistent hash over xxhash64(key).
//
//   key ──xxhash64(utf8(key), seed)──▶ 64-bit hash ──jump hash──▶ slot ∈ [0, 2^20)
//   slot ──table (weighted rendezvous hashing over node ids)──▶ node
//
// 1. The seed comes from config (`affinity.seed`), so every gateway with the same config
//    maps a key to the same slot, across processes and restarts.
// 2. Jump consistent hash (./jump.ts) into a FIXED number of slots S = 2^SLOT_BITS. The
//    key→slot step therefore never moves keys; should S ever grow, jump hash moves only
//    the keys that must move to the new slots.
// 3. Slot → node: weighted rendezvous (highest random weight) hashing. Every (slot, node)
//    pair gets a uniform u ∈ (0,1) from the slot number and a hash of the node's *id* (not
//    its position in the list), and the slot belongs to the node with the largest
//        score = -weight / ln(u)
//    (equivalently: the largest ln(u) / weight, which is what the code compares). Each node
//    wins a slot with probability weight / Σweight, independently per slot, and since a
//    node's scores do not depend on the other nodes:
//      - adding a node only moves slots onto the new node;
//      - removing a node only moves the slots it owned;
//      - raising one node's weight only moves slots onto that node, lowering it only moves
//        slots off it — the minimum possible (see test/unit/keymap.test.ts);
//      - weight 0 never wins.
//    Slot owners live in a table (S entries: Uint8Array, 1 MiB, up to 255 nodes; else
//    Uint16Array), so a lookup is one array read. The table fills lazily: a slot's owner is
//    computed on its first lookup (O(nodes) draws + one log per distinct weight: ~40 ns for
//    3 nodes, ~140–250 ns for 32, ~230–390 ns for 64) and kept. Building the whole table
//    eagerly costs S times that (40–65 ms for 3 nodes, 140–260 ms for 32, 230–390 ms for 64,
//    see bench/keymap.ts), too slow to do on every weight change on the event loop; lazily,
//    `new KeyMap` takes ~0.2 ms and the cost is spread over the first lookups of each slot.
//    The rest of a slot's ranking (2nd, 3rd, … best score) is its fallback
//    sequence for when the owner is down or unhealthy; it is computed on demand in O(nodes)
//    and depends only on the slot and the nodes, so it is the same on every gateway, other
//    slots are untouched, and the slot returns to its owner when the owner is usable again.
//
// Ordering, exactly: for slot s and node i with 32-bit mix x_i(s) and u = (x + 0.5)/2^32,
// key_i(s) = Math.log(u) · (1/w_i); nodes rank by key descending, ties (equal keys) by node
// id ascending. For nodes of equal weight, ordering by key is ordering by x: neighbouring
// x values differ in ln(u) by at least ~2^-32 while Math.log's error is below one ulp of
// |ln u| ≤ 23 (~2^-48), and scaling by a positive constant keeps them apart (relative gap
// ≥ 2^-37 ≫ 2^-53). The build uses this: inside a group of equal weights it keeps the
// largest x with integer compares, and computes one logarithm per slot per distinct weight
// instead of one per node. V8's Math.log is a software (fdlibm) implementation, identical
// on every platform, so the ranking is too.

import xxhash from 'xxhash-wasm';
import { jumpHash } from './jump.js';

export const SLOT_BITS = 20;
export const SLOTS = 1 << SLOT_BITS;
/** Most nodes a map can hold (the table stores index + 1, at most as uint16). */
export const MAX_KEYMAP_NODES = 0xffff;

// --- key → slot --------------------------------------------------------------------------

// xxhash-wasm hands the 64-bit hash back as a BigInt. Measured ways to get its two 32-bit
// halves out (node 20, 40-byte keys, one core, hashing included):
//   h64 → write into a BigUint64Array, read two Uint32Array cells   11.1 M/s
//   h64 → Number(h >> 32n), Number(BigInt.asUintN(32, h))            7.7 M/s
//   h64 → Number(h >> 32n), Number(h & 0xffffffffn)                  7.6 M/s
//   TextEncoder.encodeInto a reused Uint8Array → h64Raw → BigUint64  7.2 M/s (subarray per
//     call), 7.6–8.4 M/s (a cached view per length); JS ASCII loop instead: 6.9 M/s
//   h64ToString → two parseInt(…, 16)                                4.5 M/s
//   (h64 alone with one BigInt op on the result: 8.7 M/s; h32 alone: 13 M/s)
// A typed-array store converts the BigInt without allocating another one. What is left,
// ~85 ns a call, is xxhash-wasm's own wrapper: TextEncoder.encodeInto into wasm memory
// (~35 ns for 40 bytes), the JS→wasm call with a BigInt seed, and two BigInt allocations on
// the way back (the i64 result and the library's `& (2^64-1)`).
const HALVES = new ArrayBuffer(8);
const H64 = new BigUint64Array(HALVES);
const H32 = new Uint32Array(HALVES);
const LITTLE_ENDIAN = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;
const LO = LITTLE_ENDIAN ? 0 : 1;
const HI = LITTLE_ENDIAN ? 1 : 0;

type H64Fn = (input: string, seed?: bigint) => bigint;

/** Hashes keys to slots; create once per process (xxhash-wasm init is async). */
export class KeyHasher {
  readonly seed: number;
  private readonly seed64: bigint;
  private readonly h64: H64Fn;

  private constructor(seed: number, h64: H64Fn) {
    this.seed = seed;
    this.seed64 = BigInt(seed);
    this.h64 = h64;
  }

  /** `seed`: an integer in [0, 2^53) (config `affinity.seed`). */
  static async create(seed: number): Promise<KeyHasher> {
    if (!Number.isSafeInteger(seed) || seed < 0) throw new RangeError(`affinity seed must be an integer >= 0, got ${seed}`);
    const api = await xxhash();
    return new KeyHasher(seed, api.h64);
  }

  /** xxhash64 of the key's UTF-8 bytes with this hasher's seed. */
  hash64(key: string): bigint {
    return this.h64(key, this.seed64);
  }

  /** Slot of the key: 0 .. 2^SLOT_BITS-1. */
  slot(key: string): number {
    H64[0] = this.h64(key, this.seed64);
    return jumpHash(H32[HI]!, H32[LO]!, SLOTS);
  }
}

// --- slot → node -------------------------------------------------------------------------

export interface KeyNode {
  id: string;
  weight: number;
}

function fmix32(h: number): number {
  h = Math.imul(h ^ (h >>> 16), 0x85ebca6b);
  h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35);
  return h ^ (h >>> 16);
}

/** MurmurHash3 (x86, 32-bit) of the UTF-8 bytes of `s`. */
function murmur3(s: string, seed: number): number {
  const bytes = Buffer.from(s, 'utf8');
  let h = seed | 0;
  const n = bytes.length;
  const blocks = n & ~3;
  for (let i = 0; i < blocks; i += 4) {
    let k = bytes[i]! | (bytes[i + 1]! << 8) | (bytes[i + 2]! << 16) | (bytes[i + 3]! << 24);
    k = Math.imul(k, 0xcc9e2d51);
    k = (k << 15) | (k >>> 17);
    h ^= Math.imul(k, 0x1b873593);
    h = (h << 13) | (h >>> 19);
    h = (Math.imul(h, 5) + 0xe6546b64) | 0;
  }
  let k = 0;
  const tail = n & 3;
  if (tail === 3) k ^= bytes[blocks + 2]! << 16;
  if (tail >= 2) k ^= bytes[blocks + 1]! << 8;
  if (tail >= 1) {
    k ^= bytes[blocks]!;
    k = Math.imul(k, 0xcc9e2d51);
    k = (k << 15) | (k >>> 17);
    h ^= Math.imul(k, 0x1b873593);
  }
  return fmix32(h ^ n);
}

/**
 * The 32-bit rendezvous draw of (slot, node): node identity (a, b) is a 64-bit hash of the
 * node id, so two nodes draw the same sequence only if their ids collide in 64 bits.
 */
function draw(slot: number, a: number, b: number): number {
  let h = Math.imul(slot, 0x9e3779b1) ^ a;
  h = Math.imul(h ^ (h >>> 16), 0x85ebca6b);
  h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35) ^ b;
  h = Math.imul(h ^ (h >>> 16), 0x7feb352d);
  h = Math.imul(h ^ (h >>> 15), 0x846ca68b);
  return (h ^ (h >>> 16)) >>> 0;
}

/** ln(u)/weight for the draw x, u = (x + 0.5) / 2^32 ∈ (0, 1); larger ranks first. */
function rankKey(x: number, invWeight: number): number {
  return Math.log((x + 0.5) * 2.3283064365386963e-10) * invWeight;
}

export class KeyMap {
  /** The nodes, as given (index i = nodes[i]). */
  readonly nodes: readonly KeyNode[];
  /** Slot → owner index + 1; 0 = not resolved yet. */
  private readonly table: Uint8Array | Uint16Array;
  /** Nodes with weight > 0, grouped by weight, in id order inside a group. */
  private readonly order: Int32Array;
  /** Id hash halves of order[j]. */
  private readonly orderA: Int32Array;
  private readonly orderB: Int32Array;
  /** Group g is order[groupEnd[g-1] .. groupEnd[g]), all of weight 1/groupInv[g]. */
  private readonly groupEnd: Int32Array;
  private readonly groupInv: Float64Array;
  /** Position of each node's id in code-unit order: the tie-breaker between equal keys. */
  private readonly idRank: Int32Array;
  /** 1/weight of each node (0 for weight 0). */
  private readonly invWeight: Float64Array;
  private readonly idA: Int32Array;
  private readonly idB: Int32Array;
  /** sequenceInto's keys. */
  private scratch = new Float64Array(0);

  constructor(nodes: readonly KeyNode[]) {
    const n = nodes.length;
    if (n > MAX_KEYMAP_NODES) throw new RangeError(`a key map holds at most ${MAX_KEYMAP_NODES} nodes, got ${n}`);
    const seen = new Set<string>();
    for (const node of nodes) {
      if (typeof node.id !== 'string') throw new TypeError('node id must be a string');
      if (seen.has(node.id)) throw new RangeError(`duplicate node id ${JSON.stringify(node.id)}`);
      seen.add(node.id);
      const w = node.weight;
      if (typeof w !== 'number' || !Number.isFinite(w) || w < 0 || (w > 0 && !Number.isFinite(1 / w))) {
        throw new RangeError(`node ${JSON.stringify(node.id)}: weight must be 0 or a finite number > 0, got ${w}`);
      }
    }
    this.nodes = nodes.map((x) => ({ id: x.id, weight: x.weight }));
    this.idA = new Int32Array(n);
    this.idB = new Int32Array(n);
    this.invWeight = new Float64Array(n);
    this.idRank = new Int32Array(n);
    const byId = [...Array(n).keys()].sort((i, j) => (nodes[i]!.id < nodes[j]!.id ? -1 : 1));
    byId.forEach((i, r) => (this.idRank[i] = r));
    for (let i = 0; i < n; i++) {
      const { id, weight } = nodes[i]!;
      this.idA[i] = murmur3(id, 0x6a756d70); // "jump"
      this.idB[i] = murmur3(id, 0x67617465); // "gate"
      this.invWeight[i] = weight > 0 ? 1 / weight : 0;
    }
    const groups = new Map<number, number[]>();
    for (const i of byId) {
      const w = nodes[i]!.weight;
      if (w === 0) continue;
      const g = groups.get(w);
      if (g) g.push(i);
      else groups.set(w, [i]);
    }
    this.order = Int32Array.from([...groups.values()].flat());
    this.orderA = this.order.map((i) => this.idA[i]!);
    this.orderB = this.order.map((i) => this.idB[i]!);
    this.groupInv = Float64Array.from([...groups.keys()].map((w) => 1 / w));
    let end = 0;
    this.groupEnd = Int32Array.from([...groups.values()].map((g) => (end += g.length)));
    // 1 MiB for up to 255 nodes: a random slot misses the CPU caches less often than in a
    // 2 MiB table (full lookup measured 235 ns → 200 ns with 65,536 keys cycling).
    this.table = n <= 0xff ? new Uint8Array(SLOTS) : new Uint16Array(SLOTS);
  }

  /** Owner of a slot not looked up before (stored in the table). */
  private resolve(slot: number): number {
    const best = this.best(slot, -1, null);
    if (best >= 0) this.table[slot] = best + 1;
    return best;
  }

  /**
   * The best-ranked node for `slot` other than `skip` for which `ok` holds (any node when
   * null): the largest draw per weight group, then one log per group; no allocation.
   */
  private best(slot: number, skip: number, ok: ((index: number) => boolean) | null): number {
    const order = this.order;
    const a = this.orderA;
    const b = this.orderB;
    const ends = this.groupEnd;
    const rank = this.idRank;
    let best = -1;
    let bestKey = -Infinity;
    let start = 0;
    for (let g = 0; g < ends.length; g++) {
      const end = ends[g]!;
      let bx = -1;
      let bi = -1;
      for (let j = start; j < end; j++) {
        const i = order[j]!;
        if (i === skip) continue;
        const x = draw(slot, a[j]!, b[j]!);
        if (x > bx && (ok === null || ok(i))) {
          bx = x;
          bi = i;
        }
      }
      start = end;
      if (bi < 0) continue;
      const k = rankKey(bx, this.groupInv[g]!);
      if (k > bestKey || (k === bestKey && rank[bi]! < rank[best]!)) {
        bestKey = k;
        best = bi;
      }
    }
    return best;
  }

  /**
   * Resolves every slot now (the table is otherwise filled lazily, one slot on its first
   * lookup, so building a map costs next to nothing). For benchmarks and tests.
   */
  resolveAll(): void {
    const table = this.table;
    for (let s = 0; s < SLOTS; s++) if (table[s] === 0) this.resolve(s);
  }

  /** Node index owning the slot when every node is usable; -1 when all weights are 0. */
  primary(slot: number): number {
    const v = this.table[slot]!;
    return v !== 0 ? v - 1 : this.resolve(slot);
  }

  /**
   * First node in the slot's deterministic preference order (primary first, then HRW ranking)
   * for which ok(i) is true; -1 if none. Weight-0 nodes are never returned.
   */
  pick(slot: number, ok: (index: number) => boolean): number {
    const v = this.table[slot]!;
    const p = v !== 0 ? v - 1 : this.resolve(slot);
    if (p < 0 || ok(p)) return p;
    return this.best(slot, p, ok);
  }

  /** Fallback order for a slot (primary first), for tests and the admin API. */
  sequence(slot: number): number[] {
    const out = new Int32Array(this.order.length);
    return Array.from(out.subarray(0, this.sequenceInto(slot, out)));
  }

  /**
   * The slot's fallback order (primary first) into `out`, at least as long as the nodes of
   * weight > 0; returns how many. Without allocating: fresh routing walks it on every call of a
   * key whose primary is behind (keyed-pick.ts), not only on a failover.
   */
  sequenceInto(slot: number, out: Int32Array): number {
    const order = this.order;
    const n = order.length;
    const keys = this.scratch.length >= n ? this.scratch : (this.scratch = new Float64Array(n));
    const rank = this.idRank;
    // Insertion by key, descending, ties by id: a handful of nodes, so no sort call.
    for (let j = 0; j < n; j++) {
      const i = order[j]!;
      const k = rankKey(draw(slot, this.orderA[j]!, this.orderB[j]!), this.invWeight[i]!);
      let p = j;
      for (; p > 0 && (keys[p - 1]! < k || (keys[p - 1]! === k && rank[out[p - 1]!]! > rank[i]!)); p--) {
        keys[p] = keys[p - 1]!;
        out[p] = out[p - 1]!;
      }
      keys[p] = k;
      out[p] = i;
    }
    return n;
  }
}
