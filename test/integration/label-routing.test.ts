// Label routing (docs/routing.md "Label routing"): routing.methods sends a method's calls only to nodes
// with its labels; fallback any / none when none is usable; default-mode batches give routed
// calls sub-batches of their own.

import t from 'tap';
import { startHarness, type Harness } from '../helpers/gateway.js';
import { startSim, type SimNode } from '../../src/tools/sim/node.js';

type Test = Parameters<Parameters<typeof t.test>[0]>[0];

const GPA = '{"jsonrpc":"2.0","id":1,"method":"getProgramAccounts","params":["11111111111111111111111111111111"]}';

async function setup(t: Test, fallback: 'any' | 'none'): Promise<{ h: Harness; gpa: SimNode }> {
  const gpa = await startSim({ id: 'gpa', port: 0 });
  const h = await startHarness({
    sims: [{}, {}],
    extraNodes: [{ id: 'gpa', url: gpa.url, labels: { role: 'gpa' } }],
    config: { routing: { methods: { getProgramAccounts: { labels: { role: 'gpa' }, fallback } } } },
  });
  t.teardown(async () => {
    await h.close();
    await gpa.close();
  });
  return { h, gpa };
}

t.test('a routed method goes only to the labelled node; other methods go anywhere', async (t) => {
  const { h } = await setup(t, 'none');
  const gpaNodes = new Set<string | null>();
  for (let i = 0; i < 20; i++) gpaNodes.add((await h.post(GPA)).headers.get('x-service-node'));
  t.same([...gpaNodes], ['gpa']);
  const keyed = await h.post(GPA, { headers: { 'x-service-affinity': 'key', 'x-service-affinity-key': 'some-key' } });
  t.equal(keyed.headers.get('x-service-node'), 'gpa', 'under key affinity too');
  const other = new Set<string | null>();
  for (let i = 0; i < 60; i++) other.add((await h.call('getBalance', ['11111111111111111111111111111111'])).node);
  t.ok(other.has('n0') || other.has('n1'), `getBalance spread over the pool (${[...other].join(',')})`);
});

t.test('fallback none: 7503 naming the method and labels while no labelled node is usable', async (t) => {
  const { h } = await setup(t, 'none');
  h.gw.pool.setDrained('gpa', true);
  const r = await h.post(GPA);
  t.equal(r.status, 503);
  const j = JSON.parse(r.text) as { error: { code: number; message: string; data: unknown } };
  t.equal(j.error.code, 7503);
  t.equal(j.error.message, 'No node with labels role=gpa is available for getProgramAccounts');
  t.same(j.error.data, { attempts: 0, method: 'getProgramAccounts', labels: { role: 'gpa' } });
  t.equal((await h.call('getSlot')).status, 200, 'other methods are served');
});

t.test('fallback any: any node while no labelled node is usable', async (t) => {
  const { h } = await setup(t, 'any');
  h.gw.pool.setDrained('gpa', true);
  const r = await h.post(GPA);
  t.equal(r.status, 200);
  t.match(r.headers.get('x-service-node'), /^n[01]$/);
  h.gw.pool.setDrained('gpa', false);
  t.equal((await h.post(GPA)).headers.get('x-service-node'), 'gpa', 'back to the labelled node');
});

t.test('a default-mode batch: routed calls in sub-batches of their own, answered in request order', async (t) => {
  const { h, gpa } = await setup(t, 'none');
  const count = (sim: SimNode, m: string): number => sim.stats.byMethod.get(m) ?? 0;
  const all = [...h.sims, gpa];
  const gpaBefore = all.map((s) => count(s, 'getProgramAccounts'));
  const balanceBefore = all.map((s) => count(s, 'getBalance'));
  const batch = JSON.stringify([
    { jsonrpc: '2.0', id: 'a', method: 'getBalance', params: ['11111111111111111111111111111111'] },
    { jsonrpc: '2.0', id: 'b', method: 'getProgramAccounts', params: ['11111111111111111111111111111111'] },
    { jsonrpc: '2.0', id: 'c', method: 'getBalance', params: ['11111111111111111111111111111111'] },
    { jsonrpc: '2.0', id: 'd', method: 'getProgramAccounts', params: ['11111111111111111111111111111111'] },
  ]);
  // Ten times: a batch sent whole, routed by its first call, would reach a plain node with
  // its getProgramAccounts calls two times in three.
  for (let i = 0; i < 10; i++) {
    const r = await h.post(batch);
    t.equal(r.status, 200);
    t.same(
      (JSON.parse(r.text) as { id: string }[]).map((a) => a.id),
      ['a', 'b', 'c', 'd'],
      'answered in request order',
    );
  }
  t.same(
    all.map((s, i) => count(s, 'getProgramAccounts') - gpaBefore[i]!),
    [0, 0, 20],
    'every getProgramAccounts call reached the labelled node, none a plain one',
  );
  t.equal(
    all.reduce((sum, s, i) => sum + count(s, 'getBalance') - balanceBefore[i]!, 0),
    20,
    'the getBalance calls were answered too (by any node)',
  );
});
