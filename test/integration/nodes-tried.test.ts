// X-<brand>-Node and X-<brand>-Nodes-Tried (docs/interface.md "Public interface"): the node that
// answered, and every node asked in order once more than one was (here: a retry).

import t from 'tap';
import { startHarness, type Harness } from '../helpers/gateway.js';
import { startScriptNode, type Script, type ScriptNode } from '../helpers/script-node.js';

/** The first node to get a call with a given id fails it with HTTP 500; the next answers. */
function failFirst(): Script {
  const seen = new Set<string>();
  return (_m, id) => {
    if (seen.has(id)) return {};
    seen.add(id);
    return { status: 500, body: 'Internal Server Error' };
  };
}

async function setup(t: { teardown(fn: () => unknown): void }, config: Record<string, unknown> = {}): Promise<{ h: Harness; nodes: ScriptNode[] }> {
  const script = failFirst();
  const nodes = await Promise.all([startScriptNode('r0', script), startScriptNode('r1', script)]);
  const h = await startHarness({ sims: [], extraNodes: nodes.map((n) => ({ id: n.id, url: n.url })), config });
  t.teardown(async () => {
    await h.close();
    await Promise.all(nodes.map((n) => n.close()));
  });
  return { h, nodes };
}

const call = (id: number) => `{"jsonrpc":"2.0","id":${id},"method":"getBalance","params":["A"]}`;

t.test('a retried call names the node that answered and both nodes asked, in order', async (t) => {
  const { h, nodes } = await setup(t);
  const r = await h.post(call(1));
  t.equal(r.status, 200);
  const answered = r.headers.get('x-service-node')!;
  const failed = nodes.find((n) => n.id !== answered)!.id;
  t.equal(r.headers.get('x-service-nodes-tried'), `${failed},${answered}`);
  t.match(r.headers.get('access-control-expose-headers') ?? '', /X-Service-Nodes-Tried/);
  // Both nodes fail it: the error lists them too.
  for (const n of nodes) n.script = () => ({ status: 500, body: 'no' });
  const e = await h.post(call(2));
  t.equal(e.status, 502);
  t.equal(e.headers.get('x-service-nodes-tried')?.split(',').length, 2);
  for (const n of nodes) n.script = () => ({});
  const one = await h.post(call(3));
  t.equal(one.headers.get('x-service-nodes-tried'), null, 'one node asked: no list');
});

t.test('a batch lists every node its sub-batches asked', async (t) => {
  const { h } = await setup(t, { routing: { upstreamBatch: 1 } });
  const r = await h.post(`[${call(10)},${call(11)}]`);
  t.equal(r.status, 200);
  t.same(r.headers.get('x-service-nodes-tried')!.split(',').sort(), ['r0', 'r1']);
});

t.test('the brand names the header; exposeNode false hides it', async (t) => {
  const { h } = await setup(t, { headers: { brand: 'Acme' } });
  const r = await h.post(call(1));
  t.equal(r.headers.get('x-acme-nodes-tried')?.split(',').length, 2);
  const { h: hidden } = await setup(t, { exposeNode: false });
  const s = await hidden.post(call(1));
  t.equal(s.status, 200);
  t.equal(s.headers.get('x-service-nodes-tried'), null);
  t.equal(s.headers.get('x-service-node'), null);
});
