// The node rules (src/routing/node-view.ts) against plain nodes: who takes traffic, who is
// usable, tiers, the best slot and lag.

import t from 'tap';
import { answersProbes, bestSlot, inTier, NODE_STATES, probedState, routable, slotLag, takesTraffic, usable } from '../../../src/routing/node-view.js';
import { FakeNode, fakeNodes } from '../../helpers/fake-node.js';

t.test('takesTraffic: the operator has not drained it nor set weight 0', async (t) => {
  t.equal(takesTraffic(new FakeNode(0)), true);
  t.equal(takesTraffic(new FakeNode(0, { drained: true })), false);
  t.equal(takesTraffic(new FakeNode(0, { weight: 0 })), false);
  t.equal(takesTraffic(new FakeNode(0, { state: 'ejected' })), true, 'health is not the operator');
});

t.test('answersProbes: healthy or lagging only', async (t) => {
  const got = NODE_STATES.map((state) => answersProbes(new FakeNode(0, { state })));
  t.same(got, [true, true, false, false], NODE_STATES.join(', '));
  t.equal(answersProbes(new FakeNode(0, { drained: true })), true, 'draining does not change what probes say');
});

t.test('routable: takes traffic and not ejected (unhealthy is a last resort)', async (t) => {
  t.same(
    NODE_STATES.map((state) => routable(new FakeNode(0, { state }))),
    [true, true, true, false],
  );
  t.equal(routable(new FakeNode(0, { drained: true })), false);
  t.equal(routable(new FakeNode(0, { weight: 0 })), false);
});

t.test('usable: takes traffic and answers probes', async (t) => {
  t.same(
    NODE_STATES.map((state) => usable(new FakeNode(0, { state }))),
    [true, true, false, false],
  );
  t.equal(usable(new FakeNode(0, { drained: true })), false);
  t.equal(usable(new FakeNode(0, { weight: 0, state: 'lagging' })), false);
});

t.test('inTier: state, operator and the tried-nodes mask', async (t) => {
  const n = new FakeNode(3, { state: 'lagging' });
  t.equal(inTier(n, 'lagging', 0), true);
  t.equal(inTier(n, 'healthy', 0), false, 'other tier');
  t.equal(inTier(n, 'lagging', n.bit), false, 'already tried');
  t.equal(inTier(n, 'lagging', ~n.bit), true, 'other nodes tried');
  n.drained = true;
  t.equal(inTier(n, 'lagging', 0), false, 'drained');
  n.drained = false;
  n.weight = 0;
  t.equal(inTier(n, 'lagging', 0), false, 'weight 0');
});

t.test('bestSlot counts only nodes that answer probes; -1 when none', async (t) => {
  t.equal(bestSlot([]), -1);
  const ns = fakeNodes([
    { state: 'healthy', slot: 100 },
    { state: 'lagging', slot: 120 },
    { state: 'unhealthy', slot: 5000 },
    { state: 'ejected', slot: 9000 },
  ]);
  t.equal(bestSlot(ns), 120, 'the lagging node counts, stale unhealthy and ejected slots do not');
  t.equal(bestSlot(ns.slice(2)), -1, 'only unhealthy and ejected nodes');
  t.equal(
    bestSlot(
      fakeNodes([
        { drained: true, slot: 7 },
        { weight: 0, slot: 8 },
      ]),
    ),
    8,
    'drained and weight-0 nodes still report their slot',
  );
});

t.test('slotLag: behind the best, never negative, null while unknown', async (t) => {
  t.equal(slotLag(new FakeNode(0, { slot: 90 }), 100), 10);
  t.equal(slotLag(new FakeNode(0, { slot: 110 }), 100), 0, 'ahead of the best (an unhealthy node) counts as 0');
  t.equal(slotLag(new FakeNode(0, { slot: -1 }), 100), null, 'node slot unknown');
  t.equal(slotLag(new FakeNode(0, { slot: 5 }), -1), null, 'no best slot');
});

t.test('probedState: lagging only beyond maxSlotLag behind the best', async (t) => {
  t.equal(probedState(68, 100, 32), 'healthy', 'exactly maxSlotLag behind');
  t.equal(probedState(67, 100, 32), 'lagging', 'one more');
  t.equal(probedState(100, 100, 0), 'healthy');
  t.equal(probedState(200, 100, 0), 'healthy', 'ahead');
});
