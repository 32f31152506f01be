// Default routing (pickNode) against plain nodes: tiers, operator exclusions, the tried-nodes
// mask, weights and the two-choice score.

import t from 'tap';
import { pickNode } from '../../../src/routing/select.js';
import { fakeNodes, type FakeNode } from '../../helpers/fake-node.js';

/** Simulates a load where each pick stays in flight for `hold` picks. */
function share(ns: FakeNode[], picks: number, hold: number): number[] {
  const counts = ns.map(() => 0);
  const live: FakeNode[] = [];
  for (let i = 0; i < picks; i++) {
    const n = pickNode(ns, 0)!;
    counts[ns.indexOf(n)]!++;
    n.inflight++;
    live.push(n);
    if (live.length > hold) live.shift()!.inflight--;
  }
  return counts.map((c) => c / picks);
}

t.test('weights count even with two nodes', async (t) => {
  const ns = fakeNodes([{ weight: 2 }, { weight: 1 }]);
  const [a, b] = share(ns, 20000, 20);
  t.ok(a! > 0.6 && b! > 0.2, `2:1 weights give ${a!.toFixed(2)} : ${b!.toFixed(2)}`);
});

t.test('a slow node gets little traffic', async (t) => {
  const ns = fakeNodes([{ ewmaMs: 0.2 }, { ewmaMs: 40 }, { ewmaMs: 0.3 }]);
  const s = share(ns, 20000, 10);
  t.ok(s[1]! < 0.05, `slow node share ${s[1]!.toFixed(3)}`);
});

t.test('two choices: of the two drawn nodes the lower latency × (in-flight + 1) / weight wins', async (t) => {
  // With two eligible nodes both are always drawn, so the score alone decides.
  const ns = fakeNodes([{ ewmaMs: 10 }, { ewmaMs: 2 }]);
  for (let i = 0; i < 100; i++) t.equal(pickNode(ns, 0), ns[1], 'faster node');
  ns[1]!.inflight = 9; // 2 × 10 = 20 > 10 × 1
  for (let i = 0; i < 100; i++) t.equal(pickNode(ns, 0), ns[0], 'the faster node is busier: the other wins');
  ns[0]!.weight = 0.25; // 10 × 1 / 0.25 = 40 > 20
  for (let i = 0; i < 100; i++) t.equal(pickNode(ns, 0), ns[1], 'weight divides the score');
});

t.test('tiers: healthy first, then lagging, then unhealthy; never ejected', async (t) => {
  const ns = fakeNodes([{ state: 'unhealthy' }, { state: 'lagging' }, { state: 'healthy', ewmaMs: 1000 }, { state: 'ejected', ewmaMs: 0.001 }]);
  for (let i = 0; i < 50; i++) t.equal(pickNode(ns, 0), ns[2], 'a slow healthy node beats faster lagging and ejected ones');
  t.equal(pickNode(ns, ns[2]!.bit), ns[1], 'lagging before unhealthy');
  t.equal(pickNode(ns, ns[2]!.bit | ns[1]!.bit), ns[0], 'unhealthy as a last resort');
  t.equal(pickNode(ns, ns[2]!.bit | ns[1]!.bit | ns[0]!.bit), null, 'ejected nodes are never picked');
});

t.test('drained and weight-0 nodes are never picked, whatever their health', async (t) => {
  const ns = fakeNodes([{ drained: true }, { weight: 0 }, { state: 'unhealthy' }]);
  for (let i = 0; i < 50; i++) t.equal(pickNode(ns, 0), ns[2], 'only the unhealthy node takes traffic');
  ns[2]!.drained = true;
  t.equal(pickNode(ns, 0), null, 'nothing left');
  ns[0]!.drained = false;
  t.equal(pickNode(ns, 0), ns[0], 'undrained: back in');
});

t.test('excluded (already tried) nodes are skipped', async (t) => {
  const ns = fakeNodes([{}, {}, {}]);
  for (let i = 0; i < 200; i++) t.not(pickNode(ns, ns[1]!.bit), ns[1]);
  for (let i = 0; i < 50; i++) t.equal(pickNode(ns, ns[0]!.bit | ns[2]!.bit), ns[1], 'the one not tried');
  t.equal(pickNode(ns, ns[0]!.bit | ns[1]!.bit | ns[2]!.bit), null, 'all tried');
});

t.test('an empty pool gives null', async (t) => {
  t.equal(pickNode([], 0), null);
});
