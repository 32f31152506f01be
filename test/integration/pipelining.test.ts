// The gateway's pipelined upstream client end to end, against simulated nodes: requests of
// one loop turn share a connection, and a node that drops pipelined connections (the
// simulator is uWS, which does so while an answer is pending) costs retries, not errors.

import t from 'tap';
import { serverEngine } from '../../src/server/engine.js';
import { eventually } from '../helpers/eventually.js';
import { startHarness } from '../helpers/gateway.js';
import type { Http1Pool } from '../../src/upstream/http1/pool.js';

// The simulated node drops pipelined connections only on uWebSockets.js (as uWS does); on
// Node's listener it answers them in order, so there is no drop to learn from.
const NO_DROPS =
  serverEngine('auto').name === 'uws' ? false : "the simulated nodes run on Node's listener, which serves pipelined requests instead of dropping them";

t.test('a burst through the gateway shares few upstream connections', async (t) => {
  // A generous stall limit: on a loaded machine the probes' latency can pass the 5 ms default,
  // which (rightly) turns pipelining off for the node and opens a connection per request.
  const h = await startHarness({ sims: [{}], config: { upstream: { pipelineStallMs: 1000 } } });
  t.teardown(() => h.close());
  const answers = await Promise.all(Array.from({ length: 40 }, () => h.call('getSlot')));
  t.ok(
    answers.every((a) => a.status === 200 && typeof a.json.result === 'number'),
    '40 slots',
  );
  const pool = h.gw.pool.nodes[0]!.client as Http1Pool;
  t.ok(pool.connectionCount <= 40 / 4 + 1, `at most one connection per 4 requests (${pool.connectionCount})`);
});

t.test('a node that drops pipelined connections: answered by retries, then no pipelining', { skip: NO_DROPS }, async (t) => {
  // The same generous stall limit as above: on a loaded machine slow probes would turn
  // pipelining off before the node had a chance to drop a pipelined connection.
  // Three nodes: a dropped head is retried on another node, which may have dropped one too.
  const h = await startHarness({ sims: [{}, {}, {}], config: { upstream: { pipelineStallMs: 1000 } } });
  t.teardown(() => h.close());
  for (const s of h.sims) s.set({ latencyMs: [30, 30] });
  const first = await Promise.all(Array.from({ length: 12 }, () => h.call('getBlockHeight')));
  t.same(
    first.map((a) => a.status),
    Array(12).fill(200),
    'every call of the first burst answered',
  );
  const pools = h.gw.pool.nodes.map((n) => n.client as Http1Pool);
  t.ok(
    pools.some((p) => p.noPipeliningUntil > performance.now()),
    'pipelining is off for the node that dropped it',
  );
  // A node that has not dropped a pipelined connection yet may still do so in the next burst
  // (which of them got pipelined requests depends on timing); those that did must not again.
  const learned = h.gw.pool.nodes.filter((_, i) => pools[i]!.noPipeliningUntil > performance.now());
  const failuresBefore = learned.reduce((n, x) => n + x.failures, 0);
  const second = await Promise.all(Array.from({ length: 12 }, () => h.call('getBlockHeight')));
  t.same(
    second.map((a) => a.status),
    Array(12).fill(200),
  );
  t.equal(
    learned.reduce((n, x) => n + x.failures, 0),
    failuresBefore,
    'no failure in the next burst on the nodes that dropped pipelining',
  );
});

t.test('a burst that finds a node refusing pipelining: no error, and the node is not ejected for it', { skip: NO_DROPS }, async (t) => {
  // One node, so no other node can hide a failure; its drops are the pool learning, not the
  // node failing: they must not count towards ejection (health.ejectAfterFailures: 3).
  const h = await startHarness({ sims: [{}], config: { upstream: { pipelineStallMs: 1000 } } });
  t.teardown(() => h.close());
  h.sims[0]!.set({ latencyMs: [30, 30] });
  const node = h.gw.pool.nodes[0]!;
  const answers = await Promise.all(Array.from({ length: 40 }, () => h.call('getBlockHeight')));
  t.same(
    answers.map((a) => a.status),
    Array(40).fill(200),
    'every call of the burst answered',
  );
  t.ok((node.client as Http1Pool).noPipeliningUntil > performance.now(), 'the node dropped pipelined connections');
  t.not(node.state, 'ejected', 'the node is not ejected');
  t.equal(node.failures, 0, 'no failure recorded against it');
  const next = await Promise.all(Array.from({ length: 20 }, () => h.call('getBlockHeight')));
  t.ok(
    next.every((a) => a.status === 200),
    'the next burst is answered too',
  );
});

t.test('upstream.client: undici still carries the traffic', async (t) => {
  const h = await startHarness({ sims: [{}, {}], config: { upstream: { client: 'undici' } } });
  t.teardown(() => h.close());
  const answers = await Promise.all(Array.from({ length: 20 }, () => h.call('getSlot')));
  t.ok(answers.every((a) => a.status === 200 && typeof a.json.result === 'number'));
  const batch = await h.post('[{"jsonrpc":"2.0","id":1,"method":"getSlot"},{"jsonrpc":"2.0","id":2,"method":"getHealth"}]');
  t.equal(JSON.parse(batch.text).length, 2);
});

t.test('broadcast copies never ride a pipelined connection: each node gets each transaction once, none fails', async (t) => {
  // The simulator drops a connection that carries a second request while an answer is
  // pending; a broadcast copy is never retried, so one caught on such a connection used to be
  // lost (or, queued behind the dropped head, sent again).
  const h = await startHarness({ sims: [{}, {}, {}], config: { upstream: { pipelineStallMs: 1000 }, routing: { broadcast: { fanout: 3 } } } });
  t.teardown(() => h.close());
  for (const s of h.sims) s.set({ latencyMs: [30, 30] });
  const n = 24;
  const answers = await Promise.all(
    Array.from({ length: n }, (_, i) => h.post(`{"jsonrpc":"2.0","id":${i},"method":"sendTransaction","params":["AQID${i}"]}`)),
  );
  t.same(
    answers.map((a) => a.status),
    Array(n).fill(200),
    'every broadcast answered',
  );
  await eventually('every copy ended', () => h.gw.pool.nodes.every((x) => x.inflight === 0));
  t.same(
    h.sims.map((s) => s.stats.byMethod.get('sendTransaction') ?? 0),
    [n, n, n],
    'each node received each transaction exactly once',
  );
  const pools = h.gw.pool.nodes.map((x) => x.client as Http1Pool);
  t.ok(
    pools.every((p) => p.noPipeliningUntil === 0),
    'no node had to drop a pipelined connection',
  );
});
