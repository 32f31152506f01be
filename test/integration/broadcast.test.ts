// Broadcast sends (docs/routing.md "Broadcast sends"): routing.broadcast sends a sendTransaction to the
// chosen node and fanout − 1 others at once; the first result answers, each node gets the
// transaction exactly once, node errors and failures are reported as documented.

import t from 'tap';
import { eventually } from '../helpers/eventually.js';
import { startHarness, TOKEN, type Harness } from '../helpers/gateway.js';
import { startScriptNode, type Script, type ScriptNode } from '../helpers/script-node.js';

const TX = '{"jsonrpc":"2.0","id":77,"method":"sendTransaction","params":["AQID"]}';

async function setup(t: { teardown(fn: () => unknown): void }, scripts: Script[], fanout = 3): Promise<{ h: Harness; nodes: ScriptNode[] }> {
  const nodes = await Promise.all(scripts.map((s, i) => startScriptNode(`b${i}`, s)));
  const h = await startHarness({
    sims: [],
    extraNodes: nodes.map((n) => ({ id: n.id, url: n.url })),
    // Sends pinned by client IP: the chosen (first) node is the same for every send of the test.
    config: { routing: { broadcast: { fanout }, autoAffinityMethods: ['sendTransaction'] } },
  });
  t.teardown(async () => {
    await h.close();
    await Promise.all(nodes.map((n) => n.close()));
  });
  return { h, nodes };
}

/** Every attempt of the gateway has ended (late answers included). */
async function settled(h: Harness): Promise<void> {
  await eventually('no attempt in flight', () => h.gw.pool.nodes.every((n) => n.inflight === 0));
}

t.test('each node gets the transaction exactly once; the answer names the node that answered and every node asked', async (t) => {
  const { h, nodes } = await setup(t, [() => ({}), () => ({}), () => ({})]);
  const r = await h.post(TX);
  t.equal(r.status, 200);
  const tried = r.headers.get('x-service-nodes-tried')!.split(',');
  t.same([...tried].sort(), ['b0', 'b1', 'b2'], 'all three nodes asked');
  const node = r.headers.get('x-service-node')!;
  t.ok(tried.includes(node));
  t.equal(r.text, `{"jsonrpc":"2.0","result":"${node}","id":77}`, "the answering node's bytes as they came");
  await settled(h);
  t.same(
    nodes.map((n) => n.count('sendTransaction')),
    [1, 1, 1],
  );
  t.match(await h.gw.metrics.text(), /jumpgate_broadcasts_total 1\n/);
});

t.test('fanout 1: one node, as without broadcast', async (t) => {
  const { h, nodes } = await setup(t, [() => ({}), () => ({})], 1);
  const r = await h.post(TX);
  t.equal(r.status, 200);
  t.equal(r.headers.get('x-service-nodes-tried'), null, 'one node asked: no list');
  await settled(h);
  t.equal(nodes[0]!.count('sendTransaction') + nodes[1]!.count('sendTransaction'), 1);
});

t.test('the first success wins: a fast node answers while the chosen one is slow', async (t) => {
  const slow: Script = () => ({ delayMs: 1500 });
  const { h, nodes } = await setup(t, [slow, slow, slow]);
  // Which node is chosen depends on the client IP's slot: make whichever is last in the order fast.
  const order = await (async () => {
    const r = await h.post(TX);
    return r.headers.get('x-service-nodes-tried')!.split(',');
  })();
  await settled(h);
  const fast = nodes.find((n) => n.id === order[2])!;
  fast.script = () => ({ delayMs: 0 });
  const r = await h.post(TX);
  t.equal(r.status, 200);
  // Answered by the fast node: before any slow node (1500 ms) could have answered.
  t.equal(r.headers.get('x-service-node'), fast.id, 'answered by the fast node');
  // The chosen node first; the copies go where default routing sends them, whose order follows
  // the nodes' measured latency (it once swapped the last two).
  const tried = r.headers.get('x-service-nodes-tried')!.split(',');
  t.equal(tried[0], order[0], 'the chosen node first');
  t.same([...tried].sort(), [...order].sort(), 'the same nodes');
  await settled(h);
  t.same(
    nodes.map((n) => n.count('sendTransaction')),
    [2, 2, 2],
    'every node still got each transaction once',
  );
});

t.test("no node gives a result: the first node's error answer, unchanged, even when it comes last", async (t) => {
  const err =
    (name: string, delayMs: number): Script =>
    (_m, id) => ({ delayMs, body: `{"jsonrpc":"2.0","error":{"code":-32002,"message":"rejected by ${name}"},"id":${id}}` });
  const { h, nodes } = await setup(t, [err('b0', 0), err('b1', 0), err('b2', 0)]);
  const first = (await h.post(TX)).headers.get('x-service-nodes-tried')!.split(',')[0]!;
  await settled(h);
  // The first node is now the slowest to answer.
  nodes.find((n) => n.id === first)!.script = err(first, 300);
  const r = await h.post(TX);
  t.equal(r.status, 200);
  t.equal(r.text, `{"jsonrpc":"2.0","error":{"code":-32002,"message":"rejected by ${first}"},"id":77}`);
  t.equal(r.headers.get('x-service-node'), first);
});

t.test("no node answers: 7502 with every node's reason; nothing is retried", async (t) => {
  const fail: Script = () => ({ status: 500, body: 'Internal Server Error' });
  const { h, nodes } = await setup(t, [fail, fail, fail]);
  const r = await h.post(TX);
  t.equal(r.status, 502);
  const body = JSON.parse(r.text) as { error: { code: number; data: { attempts: number; reasons: string[] } }; id: number };
  t.equal(body.error.code, 7502);
  t.equal(body.id, 77);
  t.equal(body.error.data.attempts, 3);
  t.same(body.error.data.reasons.map((s) => s.split(':')[0]).sort(), ['b0', 'b1', 'b2']);
  t.ok(body.error.data.reasons.every((s) => s.endsWith(': HTTP 500')));
  await settled(h);
  t.same(
    nodes.map((n) => n.count('sendTransaction')),
    [1, 1, 1],
    'no retry on top of a broadcast',
  );
});

t.test('usage: one client call is booked once, however many nodes were asked', async (t) => {
  const { h } = await setup(t, [() => ({}), () => ({}), () => ({})]);
  const id = h.gw.tokens.find(TOKEN)!.id;
  const before = h.gw.usage.totals(id).calls;
  for (let i = 0; i < 3; i++) t.equal((await h.post(TX)).status, 200);
  await settled(h);
  t.equal(h.gw.usage.totals(id).calls - before, 3);
});

t.test('eth_sendRawTransaction is in the default list (EVM)', async (t) => {
  const { h, nodes } = await setup(t, [() => ({}), () => ({})], 2);
  const r = await h.post('{"jsonrpc":"2.0","id":1,"method":"eth_sendRawTransaction","params":["0x00"]}');
  t.equal(r.status, 200);
  await settled(h);
  t.same(
    nodes.map((n) => n.count('eth_sendRawTransaction')),
    [1, 1],
  );
});

t.test('nodes that lose the race are not held back: the next broadcasts of the same client wait for nothing', async (t) => {
  // Each node in turn answers first. A sendTransaction answer has no slot, so the key (the
  // client IP) was given nothing the losers could be behind on.
  const inTurn =
    (k: number): Script =>
    (_m, _id, n) => ({ delayMs: n % 3 === k ? 2 : 25 });
  const { h } = await setup(t, [inTurn(1), inTurn(2), inTurn(0)]);
  const answeredBy = new Set<string>();
  for (let i = 0; i < 15; i++) {
    const r = await h.post(TX);
    t.equal(r.status, 200);
    answeredBy.add(r.headers.get('x-service-node')!);
  }
  const text = await h.gw.metrics.text();
  // The counter, not the clock: a broadcast that waited for a probe round would count here.
  t.notMatch(text, /jumpgate_monotonic_waits_total\{[^}]*\} [1-9]/, 'no keyed call waited for a node to catch up');
  t.same([...answeredBy].sort(), ['b0', 'b1', 'b2'], 'each node answered first in turn');
});
