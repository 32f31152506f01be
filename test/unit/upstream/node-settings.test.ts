// NodePool.applyNodeSettings (docs/configuration.md "Reload"): a reload's per-node settings on the
// nodes it keeps. Labels move label routing at once, a weight the file changed is applied (0
// drains and tells the unusable-node listeners, leaving 0 undrains), a weight the file did not
// change keeps an admin API change; a new ws replaces the node like a new url.

import t from 'tap';
import { resolveConfig } from '../../../src/config/load.js';
import type { Config } from '../../../src/config/schema.js';
import { silentLogger } from '../../../src/log.js';
import type { NodeSpec } from '../../../src/upstream/node.js';
import { NodePool } from '../../../src/upstream/pool.js';

type Test = Parameters<Parameters<typeof t.test>[0]>[0];

const specs = (labelled: string, weights: Record<string, number> = {}): NodeSpec[] =>
  ['a', 'b'].map((id, i) => ({
    id,
    url: `http://127.0.0.1:9/${i}`,
    weight: weights[id] ?? 1,
    ...(id === labelled ? { labels: { tier: 'x' } } : {}),
  }));

/** A pool that is never started: nothing is probed or connected. */
function pool(t: Test, nodes: NodeSpec[]): NodePool {
  const config: Config = resolveConfig(
    { nodes, health: { intervalMs: 60_000, timeoutMs: 200 }, routing: { methods: { getBalance: { labels: { tier: 'x' }, fallback: 'none' } } } },
    {},
  );
  const p = new NodePool(config, silentLogger());
  t.teardown(() => p.close());
  return p;
}

/** Where default routing sends `method` (null: no node may take it). */
const routed = (p: NodePool, method: string): string | null => p.route({ slot: -1, tried: 0, method })?.id ?? null;

t.test('labels moved to another node route the method there at once', async (t) => {
  const before = specs('a');
  const p = pool(t, before);
  for (let i = 0; i < 5; i++) t.equal(routed(p, 'getBalance'), 'a');
  const after = specs('b');
  t.same(p.applyNodeSettings(after, before), {}, 'no weight changed');
  t.same(p.byId('a')!.labels, undefined);
  t.same(p.byId('b')!.labels, { tier: 'x' });
  for (let i = 0; i < 5; i++) t.equal(routed(p, 'getBalance'), 'b', 'the label moved: b only');
  p.applyNodeSettings(specs(''), after);
  t.equal(routed(p, 'getBalance'), null, 'no node labelled: none (fallback none)');
});

t.test('weights the file changed: applied, 0 drains and is heard, leaving 0 undrains', async (t) => {
  const before = specs('');
  const p = pool(t, before);
  const unusable: string[] = [];
  p.unusableListeners.push((n) => unusable.push(n.id));
  let told = 0;
  p.healthListeners.push(() => told++);
  const drained = specs('', { a: 0 });
  t.same(p.applyNodeSettings(drained, before), { a: { from: 1, to: 0 } });
  t.equal(p.byId('a')!.drained, true);
  t.same(unusable, ['a']);
  t.equal(told, 1, 'the workers are told (health listeners)');
  for (let i = 0; i < 5; i++) t.equal(routed(p, 'getSlot'), 'b');
  t.same(p.applyNodeSettings(before, drained), { a: { from: 0, to: 1 } });
  t.equal(p.byId('a')!.drained, false, 'undrained');
  // An admin API weight survives a file that did not change that node's weight.
  p.setWeight('b', 5);
  t.same(p.applyNodeSettings(specs('a'), before), {});
  t.equal(p.byId('b')!.weight, 5);
  t.same(p.byId('a')!.labels, { tier: 'x' }, 'other settings still apply');
});

t.test('a new ws replaces the node; the node that leaves is heard of', async (t) => {
  const before = specs('');
  const p = pool(t, before);
  const unusable: string[] = [];
  p.unusableListeners.push((n) => unusable.push(n.id));
  const old = p.byId('a')!;
  const next = before.map((s) => (s.id === 'a' ? { ...s, ws: 'ws://127.0.0.1:9/socket' } : s));
  const change = await p.replaceNodes(next);
  t.same(change, { added: [], removed: [], replaced: ['a'] });
  t.not(p.byId('a'), old, 'a new node object');
  t.equal(p.byId('a')!.wsUrl, 'ws://127.0.0.1:9/socket');
  t.same(unusable, ['a'], 'the WebSocket hub hears the old node left');
});
