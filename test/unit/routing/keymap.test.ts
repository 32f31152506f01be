// Key affinity map (src/routing/keymap.ts, docs/routing.md "Affinity and rate limits"): xxhash64 → jump consistent hash into
// 2^20 slots → weighted rendezvous hashing over node ids. Every property is checked with
// 1,000,000 seeded random keys (deterministic run to run):
//   - the same key maps to the same node across calls, maps, processes (a child process) and
//     versions (a golden list: a change of algorithm fails it);
//   - each node's share of keys is within ±2% (relative) of its weight share;
//   - adding / removing a node or changing a weight moves only keys that must move, within
//     +10% of the minimum;
//   - a down node's keys follow a deterministic fallback sequence, nobody else's move, and
//     they come back on recovery.

import { execFileSync } from 'node:child_process';
import t from 'tap';
import { jumpHash } from '../../../src/routing/jump.js';
import { KeyHasher, KeyMap, SLOT_BITS, SLOTS, type KeyNode } from '../../../src/routing/keymap.js';
import { rng } from '../../../src/tools/rng.js';

const KEYS = 1_000_000;
const SEED = 42;

// --- keys -----------------------------------------------------------------------------------

const rand = rng(0x6b65796d); // "keym"
const ALPHABET = '123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz-_.:/é€漢';

/** Affinity keys as clients send them: 4..40 characters, some IPs, some non-ASCII. */
function randomKey(): string {
  const kind = rand();
  if (kind < 0.2) {
    const b = () => Math.floor(rand() * 256);
    return `${b()}.${b()}.${b()}.${b()}`;
  }
  const len = 4 + Math.floor(rand() * 37);
  let s = '';
  for (let i = 0; i < len; i++) s += ALPHABET[Math.floor(rand() * ALPHABET.length)];
  return s;
}

const keys: string[] = [];
for (let i = 0; i < KEYS; i++) keys.push(randomKey());
const hasher = await KeyHasher.create(SEED);
const slots = new Uint32Array(KEYS);
for (let i = 0; i < KEYS; i++) slots[i] = hasher.slot(keys[i]!);

// --- helpers --------------------------------------------------------------------------------

const nodesOf = (weights: readonly number[], prefix = 'node-'): KeyNode[] => weights.map((weight, i) => ({ id: `${prefix}${i}`, weight }));

/** Owner id of every key (primary), as one string per key index (interned by the engine). */
function owners(map: KeyMap): string[] {
  const out = new Array<string>(KEYS);
  const ids = map.nodes.map((n) => n.id);
  for (let i = 0; i < KEYS; i++) out[i] = ids[map.primary(slots[i]!)]!;
  return out;
}

function counts(own: readonly string[]): Map<string, number> {
  const c = new Map<string, number>();
  for (const id of own) c.set(id, (c.get(id) ?? 0) + 1);
  return c;
}

interface Moves {
  moved: number;
  /** Moves not involving `node` (must be 0). */
  others: number;
  /** Moved onto / off `node`. */
  onto: number;
  off: number;
}

function moves(before: readonly string[], after: readonly string[], node: string): Moves {
  const r = { moved: 0, others: 0, onto: 0, off: 0 };
  for (let i = 0; i < KEYS; i++) {
    const a = before[i]!;
    const b = after[i]!;
    if (a === b) continue;
    r.moved++;
    if (b === node) r.onto++;
    else if (a === node) r.off++;
    else r.others++;
  }
  return r;
}

const share = (nodes: readonly KeyNode[], id: string): number => {
  const total = nodes.reduce((s, n) => s + n.weight, 0);
  return nodes.find((n) => n.id === id)!.weight / total;
};

// --- jump hash ------------------------------------------------------------------------------

/** The C reference of Lamping & Veach, transcribed with BigInt. */
function jumpReference(key: bigint, buckets: number): number {
  let b = -1n;
  let j = 0n;
  while (j < BigInt(buckets)) {
    b = j;
    key = BigInt.asUintN(64, key * 2862933555777941757n + 1n);
    j = BigInt(Math.trunc(Number(b + 1n) * (2147483648 / Number((key >> 33n) + 1n))));
  }
  return Number(b);
}

const halves = (k: bigint): [number, number] => [Number(k >> 32n), Number(k & 0xffffffffn)];

t.test('jump hash is bit-for-bit the Lamping & Veach reference', async (t) => {
  const r = rng(1);
  const rand64 = () => (BigInt(Math.floor(r() * 2 ** 32)) << 32n) | BigInt(Math.floor(r() * 2 ** 32));
  const edges = [0n, 1n, 0xffffffffn, 0x100000000n, 0xffffffffffffffffn, 0x8000000000000000n, 0x87b0b0fdn, 0xffffffff00000000n];
  const keys64 = [...edges, ...Array.from({ length: 20000 }, rand64)];
  let bad = 0;
  for (const k of keys64) {
    const [hi, lo] = halves(k);
    for (const n of [1, 2, 3, 7, 100, 65536, SLOTS, 2 ** 31 - 1]) if (jumpHash(hi, lo, n) !== jumpReference(k, n)) bad++;
    // Signed halves (as they come out of Int32 arithmetic) give the same answer.
    if (jumpHash(hi | 0, lo | 0, SLOTS) !== jumpHash(hi, lo, SLOTS)) bad++;
  }
  t.equal(bad, 0, `${keys64.length} keys × 8 bucket counts agree with the BigInt reference`);
});

t.test('jump hash: growing the bucket count moves keys only into the new bucket', async (t) => {
  const r = rng(2);
  let bad = 0;
  let moved = 0;
  const K = 20000;
  for (let i = 0; i < K; i++) {
    const hi = Math.floor(r() * 2 ** 32);
    const lo = Math.floor(r() * 2 ** 32);
    let prev = jumpHash(hi, lo, 1);
    for (let n = 2; n <= 64; n++) {
      const b = jumpHash(hi, lo, n);
      if (b !== prev) {
        moved++;
        if (b !== n - 1) bad++;
      }
      prev = b;
    }
  }
  t.equal(bad, 0, 'every move lands in the new bucket');
  // Expected moves: Σ_{n=2..64} K/n.
  let expected = 0;
  for (let n = 2; n <= 64; n++) expected += K / n;
  t.ok(Math.abs(moved / expected - 1) < 0.02, `moved ${moved} ≈ ${expected.toFixed(0)}`);
});

// --- key → slot -----------------------------------------------------------------------------

t.test('xxhash64 and slots', async (t) => {
  const h0 = await KeyHasher.create(0);
  t.equal(h0.hash64(''), 0xef46db3751d8e999n, 'XXH64("", 0) known answer');
  t.equal(h0.hash64('abc'), 0x44bc2cf5ad770999n, 'XXH64("abc", 0) known answer');
  t.equal(SLOTS, 2 ** SLOT_BITS);
  let outOfRange = 0;
  for (let i = 0; i < KEYS; i++) if (!(slots[i]! >= 0 && slots[i]! < SLOTS && Number.isInteger(slots[i]))) outOfRange++;
  t.equal(outOfRange, 0, 'every slot in [0, 2^20)');
  // The slot is jump(xxhash64) of the key.
  let mismatch = 0;
  for (let i = 0; i < 1000; i++) {
    const [hi, lo] = halves(hasher.hash64(keys[i]!));
    if (jumpHash(hi, lo, SLOTS) !== slots[i]) mismatch++;
  }
  t.equal(mismatch, 0, 'slot = jumpHash(xxhash64(key, seed), 2^20)');
  // Keys cover the slots evenly: d distinct keys thrown into 2^20 slots use 1 - e^(-d/2^20)
  // of them.
  const distinct = new Set(keys).size;
  const used = new Set(slots).size;
  const expected = SLOTS * (1 - Math.exp(-distinct / SLOTS));
  t.ok(Math.abs(used / expected - 1) < 0.005, `${distinct} distinct keys use ${used} slots, expected ${expected.toFixed(0)}`);
  await t.rejects(KeyHasher.create(-1));
  await t.rejects(KeyHasher.create(1.5));
  const other = await KeyHasher.create(SEED + 1);
  let same = 0;
  for (let i = 0; i < 10000; i++) if (other.slot(keys[i]!) === slots[i]) same++;
  t.ok(same < 10, 'another seed gives another mapping');
});

// --- determinism ----------------------------------------------------------------------------

const GOLDEN_NODES: KeyNode[] = [
  { id: 'alpha', weight: 1 },
  { id: 'bravo', weight: 2 },
  { id: 'charlie', weight: 3 },
  { id: 'delta', weight: 1 },
];

/** Seed 42, GOLDEN_NODES: key → [slot, owner, fallback sequence]. */
const GOLDEN: [string, number, string, string[]][] = [
  ['', 180722, 'delta', ['delta', 'bravo', 'charlie', 'alpha']],
  ['a', 58328, 'delta', ['delta', 'charlie', 'bravo', 'alpha']],
  ['203.0.113.7', 927694, 'charlie', ['charlie', 'bravo', 'delta', 'alpha']],
  ['::ffff:198.51.100.1', 1039975, 'alpha', ['alpha', 'charlie', 'delta', 'bravo']],
  ['user-1234', 1044701, 'charlie', ['charlie', 'bravo', 'delta', 'alpha']],
  ['session:9f8e7d6c', 824342, 'delta', ['delta', 'alpha', 'bravo', 'charlie']],
  ['ÄÖÜ-漢字', 97879, 'delta', ['delta', 'charlie', 'bravo', 'alpha']],
  ['x'.repeat(40), 621823, 'delta', ['delta', 'bravo', 'charlie', 'alpha']],
  ['user-1235', 1023649, 'delta', ['delta', 'charlie', 'alpha', 'bravo']],
  ['2001:db8::1', 730638, 'charlie', ['charlie', 'bravo', 'delta', 'alpha']],
  ['198.51.100.23', 545618, 'bravo', ['bravo', 'delta', 'charlie', 'alpha']],
  ['k', 676204, 'alpha', ['alpha', 'charlie', 'bravo', 'delta']],
];

t.test('golden list: the mapping does not change between versions', async (t) => {
  const map = new KeyMap(GOLDEN_NODES);
  const actual = GOLDEN.map(([k]): [string, number, string, string[]] => {
    const s = hasher.slot(k);
    return [k, s, GOLDEN_NODES[map.primary(s)]!.id, map.sequence(s).map((i) => GOLDEN_NODES[i]!.id)];
  });
  t.same(actual, GOLDEN, 'slots, owners and fallback sequences as recorded');
});

t.test('same key, same node: across calls, maps, node order and processes', async (t) => {
  const nodes = nodesOf([1, 2, 3, 4]);
  const a = owners(new KeyMap(nodes));
  const again = owners(new KeyMap(nodes));
  const reversed = owners(new KeyMap([...nodes].reverse()));
  const h2 = await KeyHasher.create(SEED);
  let diffSlot = 0;
  for (let i = 0; i < KEYS; i++) if (h2.slot(keys[i]!) !== slots[i] || hasher.slot(keys[i]!) !== slots[i]) diffSlot++;
  t.equal(diffSlot, 0, 'a second hasher (and the first, again) gives the same slots');
  let diff = 0;
  let diffRev = 0;
  for (let i = 0; i < KEYS; i++) {
    if (a[i] !== again[i]) diff++;
    if (a[i] !== reversed[i]) diffRev++;
  }
  t.equal(diff, 0, 'a second KeyMap from the same config gives the same nodes');
  t.equal(diffRev, 0, 'node identity is its id: listing the nodes in another order changes nothing');

  // Another process (a restart): the first 2000 keys.
  const sample = keys.slice(0, 2000);
  const url = new URL('../../../src/routing/keymap.js', import.meta.url).href;
  const code = `
    import { KeyHasher, KeyMap } from ${JSON.stringify(url)};
    const keys = JSON.parse(process.argv[1]);
    const nodes = ${JSON.stringify(nodes)};
    const h = await KeyHasher.create(${SEED});
    const m = new KeyMap(nodes);
    process.stdout.write(JSON.stringify(keys.map((k) => nodes[m.primary(h.slot(k))].id)));`;
  const out = execFileSync(process.execPath, ['--input-type=module', '-e', code, JSON.stringify(sample)], { encoding: 'utf8' });
  t.same(JSON.parse(out), a.slice(0, 2000), 'a child process maps the keys to the same nodes');
});

// --- distribution ---------------------------------------------------------------------------

for (const weights of [
  [1, 1, 1],
  [1, 2, 3, 4],
  [5, 1],
  [1, 1, 1, 1, 1, 1, 1, 1],
  [0.5, 2.5, 1],
]) {
  t.test(`share of keys per node within ±2% of its weight share: [${weights}]`, async (t) => {
    const nodes = nodesOf(weights);
    const c = counts(owners(new KeyMap(nodes)));
    for (const n of nodes) {
      const expected = share(nodes, n.id) * KEYS;
      const err = (c.get(n.id) ?? 0) / expected - 1;
      t.ok(Math.abs(err) <= 0.02, `${n.id} (weight ${n.weight}): ${c.get(n.id)} keys, expected ${expected.toFixed(0)}, error ${(err * 100).toFixed(2)}%`);
    }
  });
}

// --- membership and weight changes ----------------------------------------------------------

t.test('adding a node moves only keys onto the new node, about its share', async (t) => {
  for (const weights of [
    [1, 1, 1],
    [1, 2, 3, 4],
  ]) {
    const nodes = nodesOf(weights);
    const added = [...nodes, { id: 'new', weight: 2 }];
    const m = moves(owners(new KeyMap(nodes)), owners(new KeyMap(added)), 'new');
    // Minimum: the new node must end up with its share of the keys, and all of them move.
    const min = share(added, 'new') * KEYS;
    t.equal(m.others + m.off, 0, `[${weights}] + new(2): no key moves between old nodes`);
    t.ok(
      m.moved <= 1.1 * min && m.moved >= 0.9 * min,
      `[${weights}] + new(2): moved ${m.moved}, minimum ${min.toFixed(0)}, ratio ${(m.moved / min).toFixed(4)}`,
    );
  }
});

t.test('removing a node moves only that node’s keys', async (t) => {
  const nodes = nodesOf([1, 2, 3, 4]);
  for (const gone of ['node-0', 'node-2']) {
    const before = owners(new KeyMap(nodes));
    const after = owners(new KeyMap(nodes.filter((n) => n.id !== gone)));
    const m = moves(before, after, gone);
    const had = counts(before).get(gone)!;
    t.equal(m.others + m.onto, 0, `- ${gone}: only its keys move`);
    t.equal(m.off, had, `- ${gone}: all ${had} of its keys move (the minimum)`);
    const min = share(nodes, gone) * KEYS;
    t.ok(m.moved <= 1.1 * min, `- ${gone}: moved ${m.moved}, minimum by weight ${min.toFixed(0)}, ratio ${(m.moved / min).toFixed(4)}`);
    // The survivors share its keys by weight (±3%: ~100–400k keys split over three nodes).
    const to = new Map<string, number>();
    for (let i = 0; i < KEYS; i++) if (before[i] === gone) to.set(after[i]!, (to.get(after[i]!) ?? 0) + 1);
    const rest = nodes.filter((n) => n.id !== gone);
    for (const n of rest) {
      const err = (to.get(n.id) ?? 0) / (share(rest, n.id) * had) - 1;
      t.ok(Math.abs(err) < 0.03, `- ${gone}: ${n.id} takes ${to.get(n.id)} of its keys (error ${(err * 100).toFixed(2)}%)`);
    }
  }
});

// Minimum for a weight change. With node k's weight going from w to w' (total W → W'), its
// share goes from s = w/W to s' = w'/W'; every other node's share scales by the same factor
// (W/W'), so all of them move in the opposite direction to k. Keys are conserved, so the
// smallest possible number of moved keys is the total-variation distance between the two
// share vectors, Σ max(0, new − old) over nodes, which is |s' − s| × keys: if k grows, exactly
// the keys it gains must move (onto k, from the others); if it shrinks, the keys it loses.
t.test('changing one node’s weight moves within +10% of the minimum, only to or from that node', async (t) => {
  const base = [1, 2, 3, 4];
  for (const [k, w] of [
    [0, 3],
    [3, 1],
    [1, 2.5],
    [2, 0],
    [2, 30],
  ] as const) {
    const nodes = nodesOf(base);
    const changed = nodes.map((n, i) => (i === k ? { ...n, weight: w } : n));
    const id = `node-${k}`;
    const m = moves(owners(new KeyMap(nodes)), owners(new KeyMap(changed)), id);
    const min = Math.abs(share(changed, id) - share(nodes, id)) * KEYS;
    const label = `[${base}] ${id} ${base[k]} → ${w}`;
    t.equal(m.others, 0, `${label}: no key moves between other nodes`);
    t.equal(w > base[k]! ? m.off : m.onto, 0, `${label}: keys move only ${w > base[k]! ? 'onto' : 'off'} ${id}`);
    t.ok(m.moved <= 1.1 * min && m.moved >= 0.9 * min, `${label}: moved ${m.moved}, minimum ${min.toFixed(0)}, ratio ${(m.moved / min).toFixed(4)}`);
  }
});

t.test('weight 0: never chosen, same as absent; all zero: no node', async (t) => {
  const withZero = new KeyMap([
    { id: 'a', weight: 1 },
    { id: 'z', weight: 0 },
    { id: 'c', weight: 2 },
  ]);
  const without = new KeyMap([
    { id: 'a', weight: 1 },
    { id: 'c', weight: 2 },
  ]);
  let bad = 0;
  for (let i = 0; i < 200000; i++) {
    const s = slots[i]!;
    const id = withZero.nodes[withZero.primary(s)]!.id;
    if (id === 'z' || id !== without.nodes[without.primary(s)]!.id) bad++;
    if (withZero.pick(s, (j) => j !== withZero.primary(s)) === 1) bad++;
    if (i < 10000 && withZero.sequence(s).includes(1)) bad++;
  }
  t.equal(bad, 0, 'the weight-0 node is never primary, picked or in a sequence; others map as if it were absent');
  t.equal(
    withZero.pick(slots[0]!, (j) => j === 1),
    -1,
    'only the weight-0 node usable: none',
  );
  const zero = new KeyMap([
    { id: 'a', weight: 0 },
    { id: 'b', weight: 0 },
  ]);
  t.equal(zero.primary(123), -1);
  t.equal(
    zero.pick(123, () => true),
    -1,
  );
  t.same(zero.sequence(123), []);
  const empty = new KeyMap([]);
  t.equal(empty.primary(0), -1);
  t.equal(
    empty.pick(0, () => true),
    -1,
  );
});

// --- down / unhealthy nodes -----------------------------------------------------------------

t.test('a down node’s keys follow the fallback sequence; others stay; they return on recovery', async (t) => {
  const nodes = nodesOf([1, 1, 2, 3]);
  const map = new KeyMap(nodes);
  const twin = new KeyMap(nodes);
  const up = () => true;
  const before = Int32Array.from(slots, (s) => map.pick(s, up));

  for (const down of [[1], [3], [0, 2]]) {
    const ok = (i: number) => !down.includes(i);
    let othersMoved = 0;
    let notFallback = 0;
    let differs = 0;
    const to = new Map<number, number>();
    let fromDown = 0;
    for (let i = 0; i < KEYS; i++) {
      const s = slots[i]!;
      const p = map.pick(s, ok);
      if (p !== twin.pick(s, ok)) differs++;
      if (!down.includes(before[i]!)) {
        if (p !== before[i]) othersMoved++;
      } else {
        fromDown++;
        to.set(p, (to.get(p) ?? 0) + 1);
        if (i < 100000 && p !== map.sequence(s).find(ok)) notFallback++;
      }
    }
    const label = `down ${down.map((i) => nodes[i]!.id).join('+')}`;
    t.equal(othersMoved, 0, `${label}: keys of usable nodes stay put`);
    t.equal(notFallback, 0, `${label}: its keys go to the first usable node of their sequence`);
    t.equal(differs, 0, `${label}: the fallback is the same in another map of the same config`);
    // The fallback spreads a down node's keys over the others by weight.
    const rest = nodes.filter((_, i) => ok(i));
    for (const n of rest) {
      const i = nodes.indexOf(n);
      const err = (to.get(i) ?? 0) / (share(rest, n.id) * fromDown) - 1;
      t.ok(Math.abs(err) < 0.03, `${label}: ${n.id} takes ${to.get(i) ?? 0} of ${fromDown} (error ${(err * 100).toFixed(2)}%)`);
    }
    t.notOk(to.has(-1), `${label}: every key finds a node`);
    let back = 0;
    for (let i = 0; i < KEYS; i++) if (map.pick(slots[i]!, up) !== before[i]) back++;
    t.equal(back, 0, `${label} recovers: every key is back on its node`);
  }
  t.equal(
    map.pick(slots[0]!, () => false),
    -1,
    'nothing usable: -1',
  );
});

t.test('sequence: primary first, every weighted node once, pick = first usable', async (t) => {
  const nodes = nodesOf([1, 2, 2, 3, 0, 1.5, 3]);
  const map = new KeyMap(nodes);
  const r = rng(3);
  let bad = 0;
  for (let i = 0; i < 20000; i++) {
    const s = slots[i]!;
    const seq = map.sequence(s);
    if (seq[0] !== map.primary(s)) bad++;
    if (seq.length !== 6 || new Set(seq).size !== 6 || seq.includes(4)) bad++;
    const usable = new Set(seq.filter(() => r() < 0.5));
    const expected = seq.find((j) => usable.has(j)) ?? -1;
    if (map.pick(s, (j) => usable.has(j)) !== expected) bad++;
  }
  t.equal(bad, 0, '20000 slots × random usable sets');
  // Second places are distributed by weight, too: P(second = j | first = p) ∝ w_j.
  const second = new Map<number, number>();
  let firstIs3 = 0;
  for (let s = 0; s < SLOTS; s += 3) {
    const seq = map.sequence(s);
    if (seq[0] !== 3) continue;
    firstIs3++;
    second.set(seq[1]!, (second.get(seq[1]!) ?? 0) + 1);
  }
  const restW = 1 + 2 + 2 + 1.5 + 3;
  for (const j of [0, 1, 2, 5, 6]) {
    const err = (second.get(j) ?? 0) / ((nodes[j]!.weight / restW) * firstIs3) - 1;
    t.ok(Math.abs(err) < 0.05, `after node-3, ${nodes[j]!.id} is second in ${second.get(j)} of ${firstIs3} slots (error ${(err * 100).toFixed(2)}%)`);
  }
});

t.test('more than 255 nodes (16-bit table)', async (t) => {
  const nodes = nodesOf(Array.from({ length: 300 }, (_, i) => 1 + (i % 3)));
  const map = new KeyMap(nodes);
  let bad = 0;
  let high = 0;
  for (let i = 0; i < 5000; i++) {
    const s = slots[i]!;
    const p = map.primary(s);
    if (p >= 256) high++;
    if (p !== map.sequence(s)[0] || p !== map.primary(s)) bad++;
  }
  t.equal(bad, 0, 'owners agree with the ranking');
  t.ok(high > 0, `indexes above 255 are stored (${high} of 5000)`);
});

t.test('invalid configurations are refused', async (t) => {
  t.throws(() => new KeyMap(nodesOf(Array.from({ length: 65536 }, () => 1))), /at most/);
  t.throws(
    () =>
      new KeyMap([
        { id: 'a', weight: 1 },
        { id: 'a', weight: 2 },
      ]),
    /duplicate/,
  );
  t.throws(() => new KeyMap([{ id: 'a', weight: -1 }]), /weight/);
  t.throws(() => new KeyMap([{ id: 'a', weight: NaN }]), /weight/);
  t.throws(() => new KeyMap([{ id: 'a', weight: Infinity }]), /weight/);
  t.throws(() => new KeyMap([{ id: 'a', weight: 5e-324 }]), /weight/);
});

t.test('the fallback sequence is the order of repeated picks, each skipping the nodes before it', async (t) => {
  // sequenceInto (no allocation, walked on every call of a key whose primary is behind) against
  // pick(): equal weights (ties broken by id), unequal ones and a weight-0 node.
  const nodes = [...nodesOf([1, 1, 3, 2, 1]), { id: 'zero', weight: 0 }];
  const map = new KeyMap(nodes);
  const out = new Int32Array(nodes.length);
  let wrong = 0;
  for (let slot = 0; slot < SLOTS; slot += 97) {
    const n = map.sequenceInto(slot, out);
    const seen = new Set<number>();
    for (let k = 0; k < n; k++) {
      if (map.pick(slot, (i) => !seen.has(i)) !== out[k]) wrong++;
      seen.add(out[k]!);
    }
    if (n !== 5 || map.pick(slot, (i) => !seen.has(i)) !== -1) wrong++;
  }
  t.equal(wrong, 0, 'every slot: the same order, weight-0 nodes never in it');
});
