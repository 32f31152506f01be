// Key affinity map (src/routing/keymap.ts): lookup rate including hashing (40-byte keys, one
// core), distribution error, keys moved against the minimum on membership / weight changes,
// and the cost of building a map. Figures over 1,000,000 seeded random keys.
// Run: npm run bench -- keymap

import { performance } from 'node:perf_hooks';
import { jumpHash } from '../src/routing/jump.js';
import { KeyHasher, KeyMap, SLOTS, type KeyNode } from '../src/routing/keymap.js';
import { rng } from '../src/tools/rng.js';

const KEYS = 1_000_000;
const SEED = 42;

export interface KeymapBenchResult {
  keys: number;
  /** Rates per second of CPU time (one core); `wallLookupsPerSec` per second of wall time. */
  lookup: {
    keyBytes: number;
    seconds: number;
    /** hasher.slot(key) + map.pick(slot, ok), primary usable. */
    lookupsPerSec: number;
    wallLookupsPerSec: number;
    /** The same while the key's node is down (fallback ranking computed per lookup). */
    fallbackLookupsPerSec: number;
    /** Parts: xxhash64 alone (into a BigUint64Array), jump hash alone, table pick alone. */
    hashPerSec: number;
    jumpPerSec: number;
    tablePerSec: number;
  };
  /**
   * Share of keys per node against its weight share (relative error, %), and the same for the
   * share of the 2^20 slots (the systematic part; the rest is the sampling noise of 1M keys).
   */
  distribution: { weights: number[]; maxRelErrorPct: number; errorsPct: number[]; maxSlotErrorPct: number }[];
  moves: { change: string; moved: number; minimum: number; ratio: number; strayMoves: number }[];
  build: { nodes: number; weights: string; constructMs: number; resolveAllMs: number; perSlotNs: number }[];
}

/** `n` distinct 40-byte ASCII keys (hex), seeded. */
function makeKeys(n: number, seed: number): string[] {
  const r = rng(seed);
  const word = () =>
    Math.floor(r() * 2 ** 32)
      .toString(16)
      .padStart(8, '0');
  const out = new Array<string>(n);
  for (let i = 0; i < n; i++) out[i] = word() + word() + word() + word() + word();
  return out;
}

/**
 * Calls per second of `fn` over `items`, repeated for about `seconds` after a warm-up pass:
 * per second of wall time, and per second of this process's CPU time (what one core does
 * when other processes share the machine; the loop is single-threaded).
 */
function rate<T>(items: readonly T[], seconds: number, fn: (x: T) => number): { wall: number; cpu: number } {
  let sink = 0;
  for (let i = 0; i < items.length; i++) sink ^= fn(items[i]!);
  let n = 0;
  const c0 = process.cpuUsage();
  const t0 = performance.now();
  const until = t0 + seconds * 1000;
  let now = t0;
  while (now < until) {
    for (let i = 0; i < items.length; i++) sink ^= fn(items[i]!);
    n += items.length;
    now = performance.now();
  }
  const c = process.cpuUsage(c0);
  if (sink === 0.5) console.log(sink); // keeps `sink` (and the calls) alive
  return { wall: (n / (now - t0)) * 1000, cpu: (n / (c.user + c.system)) * 1e6 };
}

const nodesOf = (weights: readonly number[], prefix = 'node-'): KeyNode[] => weights.map((weight, i) => ({ id: `${prefix}${i}`, weight }));

function ownerIds(map: KeyMap, slots: Uint32Array): string[] {
  const ids = map.nodes.map((n) => n.id);
  const out = new Array<string>(slots.length);
  for (let i = 0; i < slots.length; i++) out[i] = ids[map.primary(slots[i]!)]!;
  return out;
}

function shareOf(nodes: readonly KeyNode[], id: string): number {
  return nodes.find((n) => n.id === id)!.weight / nodes.reduce((s, n) => s + n.weight, 0);
}

export async function runKeymapBench(opts: { seconds?: number } = {}): Promise<KeymapBenchResult> {
  const seconds = opts.seconds ?? 2;
  const hasher = await KeyHasher.create(SEED);

  // Lookup rate: 65,536 distinct 40-byte keys cycled for ~2 s (the table slots they touch are
  // resolved in the warm-up pass, as they would be after the first requests).
  const hot = makeKeys(1 << 16, 7);
  const map3 = new KeyMap(nodesOf([1, 1, 1]));
  const up = new Uint8Array([1, 1, 1]);
  const ok = (i: number): boolean => up[i] === 1;
  const lookups = rate(hot, seconds, (k) => map3.pick(hasher.slot(k), ok));
  const big = new BigUint64Array(1);
  const hashPerSec = rate(hot, seconds / 2, (k) => {
    big[0] = hasher.hash64(k);
    return 0;
  }).cpu;
  const halves = hot.map((k) => {
    const h = hasher.hash64(k);
    return [Number(h >> 32n), Number(h & 0xffffffffn)] as const;
  });
  const jumpPerSec = rate(halves, seconds / 2, ([hi, lo]) => jumpHash(hi, lo, SLOTS)).cpu;
  const hotSlots = hot.map((k) => hasher.slot(k));
  const tablePerSec = rate(hotSlots, seconds / 2, (s) => map3.pick(s, ok)).cpu;
  // Node 0 down: a third of the keys take the fallback path.
  up[0] = 0;
  const fallbackLookupsPerSec = rate(
    hot.filter((k) => map3.primary(hasher.slot(k)) === 0),
    seconds / 2,
    (k) => map3.pick(hasher.slot(k), ok),
  ).cpu;
  up[0] = 1;

  // 1M keys for the figures.
  const keys = makeKeys(KEYS, 11);
  const slots = new Uint32Array(KEYS);
  for (let i = 0; i < KEYS; i++) slots[i] = hasher.slot(keys[i]!);

  const distribution: KeymapBenchResult['distribution'] = [];
  for (const weights of [[1, 1, 1], [1, 2, 3, 4], [5, 1], Array.from({ length: 32 }, () => 1), Array.from({ length: 32 }, (_, i) => 1 + (i % 4))]) {
    const nodes = nodesOf(weights);
    const map = new KeyMap(nodes);
    const count = new Float64Array(nodes.length);
    for (let i = 0; i < KEYS; i++) count[map.primary(slots[i]!)]!++;
    const total = weights.reduce((a, b) => a + b, 0);
    const errorsPct = weights.map((w, i) => (count[i]! / KEYS / (w / total) - 1) * 100);
    map.resolveAll();
    const slotCount = new Float64Array(nodes.length);
    for (let s = 0; s < SLOTS; s++) slotCount[map.primary(s)]!++;
    const slotErrors = weights.map((w, i) => Math.abs(slotCount[i]! / SLOTS / (w / total) - 1) * 100);
    distribution.push({ weights, maxRelErrorPct: Math.max(...errorsPct.map(Math.abs)), errorsPct, maxSlotErrorPct: Math.max(...slotErrors) });
  }

  // Moves. Minimum: keys must move only onto (or off) the changed node, and its share changes
  // by |new − old|, so at least |new share − old share| × keys move (all other shares scale the
  // other way; see test/unit/keymap.test.ts). "stray" = moves between unchanged nodes.
  const moves: KeymapBenchResult['moves'] = [];
  const measure = (change: string, before: KeyNode[], after: KeyNode[], id: string): void => {
    const a = ownerIds(new KeyMap(before), slots);
    const b = ownerIds(new KeyMap(after), slots);
    let moved = 0;
    let strayMoves = 0;
    for (let i = 0; i < KEYS; i++) {
      if (a[i] === b[i]) continue;
      moved++;
      if (a[i] !== id && b[i] !== id) strayMoves++;
    }
    const oldShare = before.some((n) => n.id === id) ? shareOf(before, id) : 0;
    const newShare = after.some((n) => n.id === id) ? shareOf(after, id) : 0;
    const minimum = Math.abs(newShare - oldShare) * KEYS;
    moves.push({ change, moved, minimum: Math.round(minimum), ratio: moved / minimum, strayMoves });
  };
  const n3 = nodesOf([1, 1, 1]);
  const n4 = nodesOf([1, 2, 3, 4]);
  measure('[1,1,1] + node (weight 1)', n3, [...n3, { id: 'new', weight: 1 }], 'new');
  measure('[1,2,3,4] + node (weight 2)', n4, [...n4, { id: 'new', weight: 2 }], 'new');
  measure(
    '[1,1,1] − node-1',
    n3,
    n3.filter((n) => n.id !== 'node-1'),
    'node-1',
  );
  measure(
    '[1,2,3,4] − node-3 (weight 4)',
    n4,
    n4.filter((n) => n.id !== 'node-3'),
    'node-3',
  );
  const reweigh = (nodes: KeyNode[], i: number, w: number) => nodes.map((n, j) => (j === i ? { ...n, weight: w } : n));
  measure('[1,2,3,4] node-0 weight 1 → 2', n4, reweigh(n4, 0, 2), 'node-0');
  measure('[1,2,3,4] node-3 weight 4 → 1', n4, reweigh(n4, 3, 1), 'node-3');
  measure('[1,1,1] node-2 weight 1 → 1.5', n3, reweigh(n3, 2, 1.5), 'node-2');

  // Build: the constructor (the table fills lazily, one slot per first lookup) and resolving
  // all 2^20 slots at once (the total cost of the lazy fill). Median of 5.
  const build: KeymapBenchResult['build'] = [];
  const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
  for (const [n, weighted] of [
    [3, false],
    [3, true],
    [32, false],
    [32, true],
    [64, false],
    [64, true],
  ] as const) {
    const nodes = nodesOf(Array.from({ length: n }, (_, i) => (weighted ? 1 + (i % 4) : 1)));
    const construct: number[] = [];
    const resolve: number[] = [];
    for (let r = 0; r < 5; r++) {
      const t0 = performance.now();
      const m = new KeyMap(nodes);
      const t1 = performance.now();
      m.resolveAll();
      const t2 = performance.now();
      construct.push(t1 - t0);
      resolve.push(t2 - t1);
    }
    const resolveAllMs = median(resolve);
    build.push({ nodes: n, weights: weighted ? '1..4' : 'equal', constructMs: median(construct), resolveAllMs, perSlotNs: (resolveAllMs * 1e6) / SLOTS });
  }

  return {
    keys: KEYS,
    lookup: {
      keyBytes: 40,
      seconds,
      lookupsPerSec: lookups.cpu,
      wallLookupsPerSec: lookups.wall,
      fallbackLookupsPerSec,
      hashPerSec,
      jumpPerSec,
      tablePerSec,
    },
    distribution,
    moves,
    build,
  };
}

export function keymapTable(r: KeymapBenchResult): string {
  const m = (x: number): string => `${(x / 1e6).toFixed(2)} M/s`;
  const L = r.lookup;
  const lines = [
    `lookups (xxhash64 + jump hash + table, ${L.keyBytes}-byte keys, one core): ${m(L.lookupsPerSec)} per CPU second (${(1e9 / L.lookupsPerSec).toFixed(0)} ns), ${m(L.wallLookupsPerSec)} per wall second`,
    `  with the key's node down (fallback ranking per lookup, 3 nodes): ${m(L.fallbackLookupsPerSec)}`,
    `  parts alone: xxhash64 ${m(L.hashPerSec)}, jump hash into 2^20 slots ${m(L.jumpPerSec)}, table pick ${m(L.tablePerSec)}`,
    '',
    `| weights | max relative error of key share (${r.keys} keys) | of slot share (2^20 slots) |`,
    '|---|---:|---:|',
  ];
  for (const d of r.distribution) {
    const w = d.weights.length > 8 ? `${d.weights.length} nodes, ${new Set(d.weights).size === 1 ? 'equal' : '1..4'}` : `[${d.weights.join(',')}]`;
    lines.push(`| ${w} | ${d.maxRelErrorPct.toFixed(2)}% | ${d.maxSlotErrorPct.toFixed(2)}% |`);
  }
  lines.push(
    '',
    `(Sampling noise alone: a node with share p gets a key share with relative σ ≈ √((1−p)/(p·n)) over n keys or slots, e.g. 0.9% for p = 1/80 over 1M keys, 0.87% over 2^20 slots.)`,
  );
  lines.push('', '| change | keys moved | minimum | ratio | moves between other nodes |', '|---|---:|---:|---:|---:|');
  for (const x of r.moves) lines.push(`| ${x.change} | ${x.moved} | ${x.minimum} | ${x.ratio.toFixed(4)} | ${x.strayMoves} |`);
  lines.push('', '| nodes | weights | new KeyMap (ms) | resolve all 2^20 slots (ms) | per slot (ns) |', '|---:|---|---:|---:|---:|');
  for (const b of r.build) lines.push(`| ${b.nodes} | ${b.weights} | ${b.constructMs.toFixed(2)} | ${b.resolveAllMs.toFixed(1)} | ${b.perSlotNs.toFixed(0)} |`);
  return lines.join('\n');
}
