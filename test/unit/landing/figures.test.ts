// The control plane's landing figures (src/landing/figures.ts): deltas add into totals per node
// and per token and into pending store rows per hour; the maps stay capped; malformed deltas
// are skipped; the flush (src/landing/flush.ts) writes, keeps rows over a failed write, merges
// them, and writes the rest on stop.

import t from 'tap';
import { emptyCounts, type LandingCounts, type LandingDelta } from '../../../src/landing/counts.js';
import { LandingFigures, OTHER_KEY } from '../../../src/landing/figures.js';
import { startLandingFlush } from '../../../src/landing/flush.js';
import { silentLogger } from '../../../src/log.js';
import { tokenNodeKey, type LandingRow } from '../../../src/store/types.js';

const HOUR = 3_600_000;
const T0 = Date.UTC(2025, 0, 10, 12, 30);

function counts(sent: number, landed: number, slot = 2): LandingCounts {
  const c = emptyCounts();
  c.sent = sent;
  c.landed = landed;
  c.slots[slot] = landed;
  return c;
}

t.test('deltas add into totals per node and per token, and into rows per hour', async (t) => {
  let now = T0;
  const f = new LandingFigures({ now: () => now });
  f.add({ nodes: { n0: counts(3, 2) }, tokens: { tokA: counts(3, 2) } });
  f.add({ nodes: { n0: counts(1, 1, 5), n1: counts(2, 0) }, tokens: { tokA: counts(3, 1) } });
  now += HOUR;
  f.add({ nodes: { n0: counts(1, 1) }, tokens: {} });
  t.equal(f.nodes().get('n0')!.sent, 5);
  t.equal(f.nodes().get('n0')!.landed, 4);
  t.same(f.nodes().get('n0')!.slots.slice(0, 6), [0, 0, 3, 0, 0, 1]);
  t.equal(f.nodes().get('n1')!.sent, 2);
  t.equal(f.tokens().get('tokA')!.sent, 6);
  const rows = f.drain();
  const n0 = rows.filter((r) => r.kind === 'node' && r.key === 'n0').sort((a, b) => a.hour - b.hour);
  t.same(
    n0.map((r) => [r.hour, r.sent, r.landed]),
    [
      [Math.floor(T0 / HOUR) * HOUR, 4, 3],
      [Math.floor(T0 / HOUR) * HOUR + HOUR, 1, 1],
    ],
    'one row per node and hour',
  );
  t.equal(rows.length, 4, 'n0 twice, n1, tokA');
  t.same(f.drain(), [], 'drained');
  t.equal(f.nodes().get('n0')!.sent, 5, 'totals stay after a drain');
});

t.test('per token and node: store rows only, keyed by both', async (t) => {
  const f = new LandingFigures({ now: () => T0 });
  f.add({
    nodes: { n0: counts(3, 2), n1: counts(1, 1) },
    tokens: { tokA: counts(3, 2), tokB: counts(1, 1) },
    tokenNodes: { tokA: { n0: counts(3, 2) }, tokB: { n1: counts(1, 1) } },
  });
  f.add({ nodes: { n0: counts(1, 0) }, tokens: { tokA: counts(1, 0) }, tokenNodes: { tokA: { n0: counts(1, 0) } } });
  t.same([...f.nodes().keys()].sort(), ['n0', 'n1'], 'the node totals are per node alone');
  const pairs = f
    .drain()
    .filter((r) => r.kind === 'token-node')
    .map((r) => [r.key, r.sent, r.landed])
    .sort();
  t.same(
    pairs,
    [
      [tokenNodeKey('tokA', 'n0'), 4, 2],
      [tokenNodeKey('tokB', 'n1'), 1, 1],
    ],
    'one row per token, node and hour',
  );
  f.add({ nodes: {}, tokens: {}, tokenNodes: { tokA: null, tokB: { n0: { sent: -1 } } } as never });
  t.same(f.drain(), [], 'malformed pairs are skipped');
});

t.test('a delta does not share its arrays with the figures', async (t) => {
  const f = new LandingFigures();
  const d: LandingDelta = { nodes: { n0: counts(1, 1) }, tokens: {} };
  f.add(d);
  d.nodes.n0!.slots[2] = 100;
  d.nodes.n0!.sent = 100;
  t.equal(f.nodes().get('n0')!.slots[2], 1);
  t.equal(f.drain()[0]!.sent, 1);
});

t.test('keys beyond the cap count under (other); the pending rows are capped too', async (t) => {
  const f = new LandingFigures({ maxKeys: 3 });
  const tokens: Record<string, LandingCounts> = {};
  for (let i = 0; i < 10; i++) tokens[`tok${i}`] = counts(1, 1);
  f.add({ nodes: {}, tokens });
  t.equal(f.tokens().size, 4, 'three tokens and (other)');
  t.equal(f.tokens().get(OTHER_KEY)!.sent, 7);
  let sum = 0;
  for (const c of f.tokens().values()) sum += c.sent;
  t.equal(sum, 10, 'nothing lost');
  t.ok(f.pendingRows <= 3 * 3 + 1, `pending rows bounded (${f.pendingRows})`);
  t.equal(
    f.drain().reduce((n, r) => n + r.sent, 0),
    10,
    'the rows hold every count',
  );
});

t.test('malformed deltas are skipped whole', async (t) => {
  const f = new LandingFigures();
  const bad = [
    { nodes: { n0: { ...counts(1, 1), sent: -1 } }, tokens: {} },
    { nodes: { n0: { ...counts(1, 1), landed: Number.NaN } }, tokens: {} },
    { nodes: { n0: { ...counts(1, 1), slots: 'x' } }, tokens: {} },
    { nodes: { n0: null }, tokens: null },
    { nodes: { n0: { ...counts(1, 1), slots: [1, Infinity] } } },
  ];
  for (const d of bad) f.add(d as unknown as LandingDelta);
  t.equal(f.nodes().size, 0);
  t.equal(f.drain().length, 0);
});

t.test('the flush writes, keeps rows over failures (merged), and writes the rest on stop', async (t) => {
  const f = new LandingFigures({ now: () => T0 });
  const written: LandingRow[][] = [];
  let fail = true;
  const store = {
    addLanding: async (rows: LandingRow[]) => {
      if (fail) throw new Error('down');
      written.push(rows.map((r) => ({ ...r })));
    },
    compactLanding: async () => {},
  };
  const flush = startLandingFlush(f, store, { log: silentLogger(), intervalMs: 3_600_000, compactEveryMs: 0 });
  f.add({ nodes: { n0: counts(2, 1) }, tokens: {} });
  await flush.flush();
  f.add({ nodes: { n0: counts(3, 3) }, tokens: {} });
  await flush.flush();
  t.equal(flush.pendingRows, 1, 'the failed rows merged into one per key and hour');
  fail = false;
  f.add({ nodes: { n0: counts(1, 0) }, tokens: { tokA: counts(1, 1) } });
  await flush.stop();
  t.equal(written.length, 1);
  const n0 = written[0]!.find((r) => r.key === 'n0')!;
  t.same([n0.sent, n0.landed, n0.slots[2]], [6, 4, 4], 'every count written once');
  t.equal(flush.pendingRows, 0);
});

t.test('the flush drops the oldest hours beyond its bound', async (t) => {
  let now = T0;
  const f = new LandingFigures({ now: () => now });
  const store = {
    addLanding: async () => {
      throw new Error('down');
    },
    compactLanding: async () => {},
  };
  const flush = startLandingFlush(f, store, { log: silentLogger(), intervalMs: 3_600_000, compactEveryMs: 0, maxPendingRows: 3 });
  for (let h = 0; h < 6; h++) {
    f.add({ nodes: { n0: counts(1, 1) }, tokens: {} });
    await flush.flush();
    now += HOUR;
  }
  t.equal(flush.pendingRows, 3);
  await flush.stop();
});
