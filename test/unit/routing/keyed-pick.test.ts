// Which node serves an affinity slot, with and without monotonic reads (src/routing/keyed-pick.ts),
// on plain node objects.

import t from 'tap';
import { NodeMark } from '../../../src/routing/high-water.js';
import { KeyedPicker, markFloor, WAIT, type MarkedNode, type PreviousMap } from '../../../src/routing/keyed-pick.js';
import { KeyMap } from '../../../src/routing/keymap.js';
import type { NodeStateName } from '../../../src/routing/node-view.js';

interface TestNode extends MarkedNode {
  state: NodeStateName;
  drained: boolean;
  weight: number;
  slot: number;
}

function nodes(n: number): TestNode[] {
  return Array.from({ length: n }, (_, i) => ({
    id: `n${i}`,
    bit: 1 << i,
    state: 'healthy' as NodeStateName,
    drained: false,
    weight: 1,
    slot: 1000,
    ewmaMs: 1,
    inflight: 0,
    mark: new NodeMark(),
  }));
}

/** A slot whose sequence is [first, second, …] for these nodes. */
function slotWith(map: KeyMap, first: number, second: number): number {
  for (let s = 0; ; s++) {
    const q = map.sequence(s);
    if (q[0] === first && q[1] === second) return s;
  }
}

t.test('fast path: the usable primary, whatever the marks', async (t) => {
  const ns = nodes(3);
  const map = new KeyMap(ns);
  const p = new KeyedPicker<TestNode>();
  const s = slotWith(map, 0, 1);
  ns[1]!.mark.raise(5000);
  t.equal(p.pick(map, ns, s, 0, null, null), 0);
});

t.test('the primary down: a fallback behind its mark is not used (WAIT), one caught up is', async (t) => {
  const ns = nodes(3);
  const map = new KeyMap(ns);
  const p = new KeyedPicker<TestNode>();
  const s = slotWith(map, 0, 1);
  ns[0]!.mark.raise(1100);
  ns[0]!.state = 'unhealthy';
  ns[1]!.slot = 1000;
  ns[2]!.slot = 1000;
  t.equal(p.pick(map, ns, s, 0, null, null), WAIT);
  t.equal(p.need, 1100);
  t.equal(p.best, 1000);
  t.equal(p.left, ns[0]);
  ns[2]!.slot = 1100;
  t.equal(p.pick(map, ns, s, 0, null, null), 2, 'the next node that caught up, even past one behind');
  ns[1]!.mark.raise(1150);
  t.equal(p.pick(map, ns, s, 0, null, null), 1, "a node's own mark shows where it is too");
  p.monotonic = false;
  ns[1]!.slot = 0;
  ns[2]!.slot = 0;
  t.equal(p.pick(map, ns, s, 0, null, null), 1, 'without monotonic reads: the plain fallback');
});

t.test('a retry leaves the tried node; drained and ejected nodes count as left too', async (t) => {
  const ns = nodes(3);
  const map = new KeyMap(ns);
  const p = new KeyedPicker<TestNode>();
  const s = slotWith(map, 0, 1);
  ns[0]!.mark.raise(1200);
  t.equal(p.pick(map, ns, s, ns[0]!.bit, null, null), WAIT, 'tried primary: the others are behind its mark');
  ns[0]!.drained = true;
  t.equal(p.pick(map, ns, s, 0, null, null), WAIT);
  ns[0]!.drained = false;
  ns[0]!.state = 'ejected';
  ns[1]!.state = 'ejected';
  ns[2]!.state = 'ejected';
  t.equal(p.pick(map, ns, s, 0, null, null), -1, 'nothing usable: no node at all (7503), not a wait');
});

t.test('a returning node takes no keys until it is caught up; keys wait for it if it is the only one', async (t) => {
  const ns = nodes(2);
  const map = new KeyMap(ns);
  const p = new KeyedPicker<TestNode>();
  const s = slotWith(map, 0, 1);
  ns[1]!.mark.raise(1300);
  ns[0]!.mark.setReturning(true);
  t.equal(p.pick(map, ns, s, 0, null, null), 1, 'the key stays on the node that served it');
  ns[1]!.state = 'unhealthy';
  t.equal(p.pick(map, ns, s, 0, null, null), WAIT, 'the only other node is returning: wait');
  t.equal(p.best, 1000);
});

t.test('a weight change: the moved key leaves its old node only for one at its old mark', async (t) => {
  const before = nodes(3);
  const oldMap = new KeyMap(before);
  // Raise n2's weight: some slots move to it.
  const after = before;
  after[2]!.weight = 4;
  const newMap = new KeyMap(after);
  let s = -1;
  let old = -1;
  for (let x = 0; x < 100000 && s < 0; x++) {
    if (newMap.primary(x) === 2 && oldMap.primary(x) !== 2) {
      s = x;
      old = oldMap.primary(x);
    }
  }
  t.ok(s >= 0, 'found a moved slot');
  before[old]!.mark.raise(1500);
  const prev: PreviousMap<TestNode> = { map: oldMap, nodes: before, floor: markFloor(before) };
  const p = new KeyedPicker<TestNode>();
  t.equal(p.pick(newMap, after, s, 0, null, prev), old, 'the new node is behind: the key stays on its old node');
  after[2]!.slot = 1500;
  t.equal(p.pick(newMap, after, s, 0, null, prev), 2, 'caught up: the key moves');
});

t.test('a weight change under a label rule: the moved key waits for the new node too', async (t) => {
  const ns = nodes(3);
  const oldMap = new KeyMap(ns);
  const allowed = Uint8Array.from([0, 1, 1]);
  // n2's weight up: find a slot whose allowed owner moves from n1 to n2.
  ns[2]!.weight = 6;
  const newMap = new KeyMap(ns);
  const firstAllowed = (m: KeyMap, s: number): number => m.sequence(s).find((i) => allowed[i] === 1)!;
  let s = 0;
  while (!(firstAllowed(oldMap, s) === 1 && firstAllowed(newMap, s) === 2)) s++;
  ns[1]!.mark.raise(2000);
  const prev: PreviousMap<TestNode> = { map: oldMap, nodes: ns, floor: markFloor(ns) };
  const p = new KeyedPicker<TestNode>();
  t.equal(p.pick(newMap, ns, s, 0, allowed, prev), 1, 'stays on n1 while n2 is behind its mark');
  ns[2]!.slot = 2000;
  t.equal(p.pick(newMap, ns, s, 0, allowed, prev), 2, 'moves once n2 caught up');
});

t.test('labels: only allowed nodes, in the slot order', async (t) => {
  const ns = nodes(3);
  const map = new KeyMap(ns);
  const p = new KeyedPicker<TestNode>();
  const s = slotWith(map, 0, 1);
  const allowed = Uint8Array.from([0, 1, 1]);
  t.equal(p.pick(map, ns, s, 0, allowed, null), 1);
  ns[0]!.mark.raise(9999);
  t.equal(p.pick(map, ns, s, 0, allowed, null), 1, "a node outside the rule never served the key's routed calls: its mark does not count");
});

t.test('per level: a failover compares the marks and chain views at the call level only', async (t) => {
  const ns = nodes(2);
  // n1's chain view: processed 1050, confirmed 1040, finalized 1010 (its probe, finalized, said 1000).
  const views = [0, 0, 0, 1050, 1040, 1010];
  for (const [i, n] of ns.entries()) (n as { chain?: MarkedNode['chain'] }).chain = { slot: (l: number) => views[i * 3 + l]! };
  const map = new KeyMap(ns);
  const p = new KeyedPicker<TestNode>();
  const s = slotWith(map, 0, 1);
  ns[0]!.mark.raise(1100, 0);
  ns[0]!.mark.raise(1045, 1);
  ns[0]!.mark.raise(1005, 2);
  ns[0]!.state = 'unhealthy';
  t.equal(p.pick(map, ns, s, 0, null, null, 2), 1, "finalized: n1's finalized 1010 reached the key's 1005");
  t.equal(p.pick(map, ns, s, 0, null, null, 1), WAIT, "confirmed: n1's 1040 is behind the key's 1045");
  t.equal(p.need, 1045);
  t.equal(p.pick(map, ns, s, 0, null, null, 0), WAIT, "processed: n1's 1050 is behind the key's 1100");
  t.equal(p.need, 1100, 'the need is the mark at that level, not another');
  views[4] = 1045;
  t.equal(p.pick(map, ns, s, 0, null, null, 1), 1, 'confirmed once its chain view reached the mark');
});
