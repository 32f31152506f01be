// Hedged reads (docs/routing.md "Hedged reads"): a call of a hedged method not answered after the
// node's percentile latency (clamped) also goes to the next best node; the first answer wins,
// the other is read and dropped on its pipelined connection; never for no-retry methods, nor
// under affinity.

import t from 'tap';
import { eventually } from '../helpers/eventually.js';
import { startHarness, type Harness } from '../helpers/gateway.js';
import { startScriptNode, type Script, type ScriptNode } from '../helpers/script-node.js';

const SLOW_MS = 1500;

/** The first node to get a call with a given id answers it SLOW_MS late, any other at once. */
function slowFirst(): Script {
  const seen = new Set<string>();
  return (method, id) => {
    if (method !== 'getBalance') return {};
    if (seen.has(id)) return {};
    seen.add(id);
    return { delayMs: SLOW_MS };
  };
}

async function setup(t: { teardown(fn: () => unknown): void }, config: Record<string, unknown> = {}): Promise<{ h: Harness; nodes: ScriptNode[] }> {
  const script = slowFirst();
  const nodes = await Promise.all([startScriptNode('h0', script), startScriptNode('h1', script)]);
  const h = await startHarness({
    sims: [],
    extraNodes: nodes.map((n) => ({ id: n.id, url: n.url })),
    config: {
      upstream: { connections: 1 },
      ...config,
      routing: { hedge: { methods: ['getBalance'], minDelayMs: 20, maxDelayMs: 200 }, ...((config.routing as object | undefined) ?? {}) },
    },
  });
  t.teardown(async () => {
    await h.close();
    await Promise.all(nodes.map((n) => n.close()));
  });
  return { h, nodes };
}

const call = (id: number, method = 'getBalance') => `{"jsonrpc":"2.0","id":${id},"method":"${method}","params":["Acc1"]}`;

async function timed(h: Harness, body: string, headers?: Record<string, string>) {
  const t0 = performance.now();
  const r = await h.post(body, headers === undefined ? {} : { headers });
  return { ...r, ms: performance.now() - t0 };
}

t.test('a slow node: the other answers within about maxDelayMs, the late answer is dropped on its connection', async (t) => {
  const { h, nodes } = await setup(t);
  const r = await timed(h, call(1));
  t.equal(r.status, 200);
  const tried = r.headers.get('x-service-nodes-tried')!.split(',');
  t.equal(tried.length, 2, 'two nodes asked');
  t.equal(r.headers.get('x-service-node'), tried[1], 'answered by the hedge');
  t.equal(r.text, `{"jsonrpc":"2.0","result":"${tried[1]}","id":1}`);
  const text = await h.gw.metrics.text();
  t.match(text, /jumpgate_hedges_fired_total 1\n/);
  t.match(text, /jumpgate_hedges_won_total 1\n/);

  // The slow node's connection (upstream.connections: 1) carries the abandoned request: calls
  // sent to that node now wait behind it and must get their own answers once it is read.
  const slow = h.gw.pool.byId(tried[0]!)!;
  const ids = Array.from({ length: 12 }, (_, i) => 100 + i);
  const answers = await Promise.all(ids.map((id) => h.post(call(id, 'getIdentity'))));
  for (let i = 0; i < ids.length; i++) {
    const node = answers[i]!.headers.get('x-service-node')!;
    t.equal(answers[i]!.text, `{"jsonrpc":"2.0","result":"${node}","id":${ids[i]}}`, `call ${ids[i]} got its own answer`);
  }
  await eventually('the late answer was read', () => slow.inflight === 0, 5000);
  t.equal(nodes.find((n) => n.id === tried[0])!.connections, 1, "the slow node's connection was kept, not reopened");
  const after = await Promise.all([1, 2, 3, 4].map((k) => h.post(call(200 + k, 'getIdentity'))));
  for (let k = 0; k < 4; k++) t.match(after[k]!.text, new RegExp(`"id":${201 + k}}$`));
  t.same(
    nodes.map((n) => n.connections),
    [1, 1],
    'one connection per node throughout',
  );
});

t.test("the delay follows the node's percentile: once a node answers fast, hedges come after minDelayMs", async (t) => {
  // maxDelayMs far beyond the slow node's SLOW_MS: a hedge sent after maxDelayMs would come
  // after the slow node's own answer, so an answer by the hedge shows the percentile was used.
  const { h, nodes } = await setup(t, { routing: { hedge: { methods: ['getBalance'], minDelayMs: 30, maxDelayMs: 60_000 } } });
  // Warm up: every call's first node is slow, so answers come by hedges; send distinct ids
  // to both nodes directly fast first (ids repeat: the second arrival answers at once).
  for (const n of nodes) n.script = () => ({});
  for (let i = 0; i < 60; i++) t.equal((await h.post(call(1000 + i))).status, 200);
  const script = slowFirst();
  for (const n of nodes) n.script = script;
  const r = await timed(h, call(5000));
  t.equal(r.status, 200);
  const tried = r.headers.get('x-service-nodes-tried')!.split(',');
  t.equal(tried.length, 2, 'hedged before the slow node answered');
  t.equal(r.headers.get('x-service-node'), tried[1], `answered by the hedge (${r.ms.toFixed(0)} ms), sent after the node's p90, not maxDelayMs`);
});

t.test('never hedged: no-retry methods, key affinity', async (t) => {
  const { h, nodes } = await setup(t, { routing: { noRetryMethods: ['getBalance'], hedge: { methods: ['getBalance'], minDelayMs: 20, maxDelayMs: 50 } } });
  const r = await timed(h, call(1));
  t.equal(r.status, 200);
  t.ok(r.ms >= SLOW_MS - 50, `waited for the only node asked: ${r.ms.toFixed(0)} ms`);
  t.equal(r.headers.get('x-service-nodes-tried'), null);
  t.equal(nodes[0]!.count('getBalance') + nodes[1]!.count('getBalance'), 1);

  const { h: h2, nodes: n2 } = await setup(t, { routing: { hedge: { methods: ['getBalance'], minDelayMs: 20, maxDelayMs: 50 } } });
  const k = await timed(h2, call(2), { 'x-service-affinity': 'key', 'x-service-affinity-key': 'wallet-1' });
  t.equal(k.status, 200);
  t.ok(k.ms >= SLOW_MS - 50, `key affinity keeps the call on its node: ${k.ms.toFixed(0)} ms`);
  t.equal(n2[0]!.count('getBalance') + n2[1]!.count('getBalance'), 1);
  t.match(await h2.gw.metrics.text(), /jumpgate_hedges_fired_total 0\n/);
});
