// NodePool routing with no traffic: the keyed router follows a slot's fixed node sequence
// while the primary is usable and falls back along it otherwise; weight and drain changes;
// the listeners told when a node stops being usable. Node states are set by hand here (the
// health loop has tests of its own); one test lets a real probe fail against a closed port.

import { createServer } from 'node:net';
import t from 'tap';
import { resolveConfig } from '../../../src/config/load.js';
import { silentLogger } from '../../../src/log.js';
import { NodePool } from '../../../src/upstream/pool.js';
import type { UpstreamNode } from '../../../src/upstream/node.js';

type Test = Parameters<Parameters<typeof t.test>[0]>[0];

/** A pool of `count` nodes (n0, n1, …) that is never started: nothing is probed or connected. */
function pool(t: Test, count: number, url = (i: number) => `http://127.0.0.1:9/${i}`): NodePool {
  const nodes = Array.from({ length: count }, (_, i) => ({ id: `n${i}`, url: url(i) }));
  const p = new NodePool(resolveConfig({ nodes, health: { intervalMs: 60_000 } }, {}), silentLogger());
  t.teardown(() => p.close());
  return p;
}

const id = (n: UpstreamNode | null): string | null => (n === null ? null : n.id);

/** The slot's node sequence as ids, primary first. */
function sequence(p: NodePool, slot: number): string[] {
  return p.keyMap.sequence(slot).map((i) => p.nodes[i]!.id);
}

/** Where a keyed call goes after trying the nodes in `tried` (ids). */
function keyed(p: NodePool, slot: number, tried: string[] = []): string | null {
  const mask = tried.reduce((m, i) => m | p.byId(i)!.bit, 0);
  return id(p.route({ slot, tried: mask, method: '' }));
}

t.test('a keyed call goes to its slot primary, retries walk the fixed sequence', async (t) => {
  const p = pool(t, 4);
  for (const slot of [0, 1, 77, 4242, 1 << 19]) {
    const seq = sequence(p, slot);
    t.equal(seq.length, 4);
    t.equal(keyed(p, slot), seq[0], `slot ${slot}: primary`);
    t.equal(keyed(p, slot, [seq[0]!]), seq[1], `slot ${slot}: first retry`);
    t.equal(keyed(p, slot, [seq[0]!, seq[1]!]), seq[2], `slot ${slot}: second retry`);
    t.equal(keyed(p, slot, seq), null, `slot ${slot}: every node tried`);
  }
});

t.test('keyed fallback: drained, ejected and unhealthy primaries are passed over; lagging is not', async (t) => {
  const p = pool(t, 4);
  const slot = 1234;
  const [first, second, third] = sequence(p, slot) as [string, string, string, string];
  const primary = p.byId(first)!;

  primary.state = 'lagging';
  t.equal(keyed(p, slot), first, 'a lagging primary keeps its keys');

  for (const state of ['unhealthy', 'ejected'] as const) {
    primary.state = state;
    t.equal(keyed(p, slot), second, `${state} primary: the next in the sequence`);
  }
  primary.state = 'healthy';
  p.setDrained(first, true);
  t.equal(keyed(p, slot), second, 'drained primary: the next in the sequence');
  p.setDrained(first, false);
  t.equal(keyed(p, slot), first, 'undrained: the keys return to their primary');

  p.byId(second)!.state = 'ejected';
  primary.state = 'unhealthy';
  t.equal(keyed(p, slot), third, 'the first usable node of the sequence');
});

t.test('keyed last resort: unhealthy nodes in sequence order, never ejected or drained ones', async (t) => {
  const p = pool(t, 3);
  const slot = 99;
  const seq = sequence(p, slot);
  for (const n of p.nodes) n.state = 'unhealthy';
  t.equal(keyed(p, slot), seq[0], 'all unhealthy: the primary');
  t.equal(keyed(p, slot, [seq[0]!]), seq[1], 'retry: the next unhealthy one');
  p.byId(seq[0]!)!.state = 'ejected';
  p.setDrained(seq[1]!, true);
  t.equal(keyed(p, slot), seq[2]);
  p.byId(seq[2]!)!.state = 'ejected';
  t.equal(keyed(p, slot), null, 'nothing usable');
});

t.test('default routing (no slot) skips tried, drained and ejected nodes', async (t) => {
  const p = pool(t, 3);
  p.setDrained('n0', true);
  p.byId('n1')!.state = 'ejected';
  for (let i = 0; i < 20; i++) t.equal(id(p.route({ slot: -1, tried: 0, method: '' })), 'n2');
  t.equal(p.route({ slot: -1, tried: p.byId('n2')!.bit, method: '' }), null);
});

t.test('weight 0 takes a node out of every sequence; its weight back restores the same slots', async (t) => {
  const p = pool(t, 3);
  const slots = Array.from({ length: 200 }, (_, i) => i * 5003);
  const before = slots.map((s) => keyed(p, s));
  const owned = slots.filter((_, i) => before[i] === 'n1');
  t.ok(owned.length > 0, 'n1 owns some of the slots');

  t.equal(p.setWeight('n1', 0)?.weight, 0);
  t.notOk(
    slots.some((s) => keyed(p, s) === 'n1'),
    'no keyed call goes to n1',
  );
  t.notOk(sequence(p, owned[0]!).includes('n1'), 'n1 is in no sequence');
  t.same(
    slots.filter((_, i) => before[i] !== 'n1').map((s) => keyed(p, s)),
    before.filter((n) => n !== 'n1'),
    'slots of other nodes did not move',
  );

  p.setWeight('n1', 1);
  t.same(
    slots.map((s) => keyed(p, s)),
    before,
    'back to where every slot was',
  );
  t.equal(p.setWeight('nope', 2), undefined, 'unknown node');
});

t.test('unusable listeners hear about drains, not undrains', async (t) => {
  const p = pool(t, 2);
  const told: string[] = [];
  p.unusableListeners.push((n) => told.push(n.id));
  t.equal(p.setDrained('n1', true)?.drained, true);
  t.same(told, ['n1']);
  p.setDrained('n1', false);
  t.same(told, ['n1'], 'undraining tells nobody');
  t.equal(p.setDrained('nope', true), undefined, 'unknown node');
  t.same(told, ['n1']);
});

t.test('unusable listeners hear about a node the health loop finds down', async (t) => {
  // A port that was just free: the probe is refused at once.
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  const p = pool(t, 1, () => `http://127.0.0.1:${port}`);
  const told: string[] = [];
  p.unusableListeners.push((n) => told.push(`${n.id} ${n.state}`));
  await p.health.round();
  t.same(told, ['n0 unhealthy']);
  t.equal(keyed(p, 5), 'n0', 'still a last resort for keyed calls');
});
