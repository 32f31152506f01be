// Coalescing (docs/routing.md "Coalescing"): identical calls of routing.coalesce.methods share one
// upstream call within windowMs; each caller keeps its own id bytes and usage record;
// different params, late callers and writes get calls of their own.

import { connect, type Socket } from 'node:net';
import t from 'tap';
import { eventually } from '../helpers/eventually.js';
import { startSim } from '../../src/tools/sim/node.js';
import { startHarness, TOKEN, type Harness } from '../helpers/gateway.js';

async function setup(t: { teardown(fn: () => unknown): void }, coalesce: Record<string, unknown>, extra: Record<string, unknown> = {}): Promise<Harness> {
  // No pipelining: the simulator (uWS) drops a connection that carries pipelined requests, and
  // the retry that follows would be one more upstream call than the counts below expect.
  const h = await startHarness({ sims: [{}], config: { routing: { coalesce }, upstream: { pipelining: 1 }, ...extra } });
  t.teardown(() => h.close());
  // Slow enough that every caller below arrives while the first call is in flight.
  h.sims[0]!.set({ latencyMs: [150, 150] });
  return h;
}

const body = (id: string, method = 'getLatestBlockhash', params = '[{"commitment":"confirmed"}]') =>
  `{"jsonrpc":"2.0","id":${id},"method":"${method}","params":${params}}`;
const upstream = (h: Harness, method: string) => h.sims[0]!.stats.byMethod.get(method) ?? 0;

t.test('identical concurrent calls: one upstream call; each caller gets its own id bytes, the result as the node wrote it', async (t) => {
  const h = await setup(t, { methods: ['getLatestBlockhash'], windowMs: 1000 });
  const ids = ['1', '"a"', '12345678901234567890', '-0.5e3', '"x\\"y"', 'null', ...Array.from({ length: 14 }, (_, i) => String(1000 + i))];
  const userId = h.gw.tokens.find(TOKEN)!.id;
  const before = h.gw.usage.totals(userId).calls;
  const answers = await Promise.all(ids.map((id) => h.post(body(id))));
  t.equal(upstream(h, 'getLatestBlockhash'), 1, 'one call reached the node');
  const results = new Set<string>();
  for (let i = 0; i < ids.length; i++) {
    const a = answers[i]!;
    t.equal(a.status, 200);
    t.ok(a.text.endsWith(`"id":${ids[i]}}`), `caller ${ids[i]}: its id, byte for byte (${a.text.slice(-30)})`);
    results.add(a.text.slice(0, a.text.lastIndexOf('"id":')));
    t.equal(a.headers.get('x-service-node'), 'n0');
  }
  t.equal(results.size, 1, 'every caller got the same result bytes');
  t.equal(h.gw.usage.totals(userId).calls - before, ids.length, 'usage: one record per caller');
  t.match(await h.gw.metrics.text(), new RegExp(`jumpgate_coalesced_joins_total ${ids.length - 1}\\n`));
  t.equal(h.gw.inflight(), 0, 'nothing left in flight');
});

t.test('different params, or another method, are separate calls', async (t) => {
  const h = await setup(t, { methods: ['getLatestBlockhash', 'getBalance'], windowMs: 1000 });
  await Promise.all([
    h.post(body('1')),
    h.post(body('2', 'getLatestBlockhash', '[{"commitment":"finalized"}]')),
    h.post(body('3', 'getLatestBlockhash', '[]')),
    h.post(body('4', 'getBalance', '["Acc1"]')),
    h.post(body('5', 'getBalance', '["Acc2"]')),
  ]);
  t.equal(upstream(h, 'getLatestBlockhash'), 3);
  t.equal(upstream(h, 'getBalance'), 2);
});

t.test('windowMs: a caller joins only a call sent at most windowMs before it arrived', async (t) => {
  // Each second caller is sent once the node has the first call (it was written), so what
  // decides is the window, not how fast this machine is.
  const h = await setup(t, { methods: ['getBlockHeight'], windowMs: 50 });
  h.sims[0]!.set({ latencyMs: [1000, 1000] });
  const sent = performance.now();
  const first = h.post(body('1', 'getBlockHeight', '[]'));
  await eventually('the first call at the node', () => upstream(h, 'getBlockHeight') === 1, 5000, 2);
  // Past the 50 ms window (a condition on the clock, not a guess at how long things take).
  await eventually('60 ms since the first call', () => performance.now() - sent >= 60, 1000, 5);
  const second = await h.post(body('2', 'getBlockHeight', '[]'));
  await first;
  t.equal(second.status, 200);
  t.equal(upstream(h, 'getBlockHeight'), 2, 'older than the window: a call of its own');

  const h2 = await setup(t, { methods: ['getBlockHeight'], windowMs: 10_000 });
  h2.sims[0]!.set({ latencyMs: [1000, 1000] });
  const a = h2.post(body('1', 'getBlockHeight', '[]'));
  await eventually('the first call at the node', () => upstream(h2, 'getBlockHeight') === 1, 5000, 2);
  await Promise.all([a, h2.post(body('2', 'getBlockHeight', '[]'))]);
  t.equal(upstream(h2, 'getBlockHeight'), 1, 'within the window: joined');

  const h3 = await setup(t, { methods: ['getBlockHeight'], windowMs: 0 });
  h3.sims[0]!.set({ latencyMs: [1000, 1000] });
  const b = h3.post(body('1', 'getBlockHeight', '[]'));
  await eventually('the first call at the node', () => upstream(h3, 'getBlockHeight') === 1, 5000, 2);
  await Promise.all([b, h3.post(body('2', 'getBlockHeight', '[]'))]);
  t.equal(upstream(h3, 'getBlockHeight'), 2, 'windowMs 0: a call already written is not joined');
});

t.test('writes are never coalesced, even when listed', async (t) => {
  const h = await setup(t, { methods: ['sendTransaction', 'getBlockHeight'], windowMs: 1000 });
  const tx = (id: number) => `{"jsonrpc":"2.0","id":${id},"method":"sendTransaction","params":["AQID"]}`;
  await Promise.all([1, 2, 3, 4].map((i) => h.post(tx(i))));
  t.equal(upstream(h, 'sendTransaction'), 4);
});

t.test('not coalesced under key affinity, nor for notifications', async (t) => {
  const h = await setup(t, { methods: ['getBlockHeight'], windowMs: 1000 });
  const key = { 'x-service-affinity': 'key', 'x-service-affinity-key': 'k1' };
  await Promise.all([h.post(body('1', 'getBlockHeight', '[]'), { headers: key }), h.post(body('2', 'getBlockHeight', '[]'), { headers: key })]);
  t.equal(upstream(h, 'getBlockHeight'), 2);
});

t.test('rpc.workers 2: coalescing is per worker, each caller still gets its own id', async (t) => {
  const h = await setup(t, { methods: ['getLatestBlockhash'], windowMs: 1000 }, { rpc: { workers: 2 } });
  const ids = Array.from({ length: 16 }, (_, i) => String(i + 1));
  const answers = await Promise.all(ids.map((id) => h.post(body(id))));
  for (let i = 0; i < ids.length; i++) t.ok(answers[i]!.text.endsWith(`"id":${ids[i]}}`), `caller ${ids[i]} got its own id`);
  const n = upstream(h, 'getLatestBlockhash');
  t.ok(n >= 1 && n <= 2, `at most one upstream call per worker: ${n}`);
  // Each worker reports its joins once a second; the control plane's exporter adds them up.
  await eventually(
    'joins reported by the workers',
    async () => /jumpgate_coalesced_joins_total (\d+)\n/.exec(await h.gw.metrics.text())?.[1] === String(ids.length - n),
    5000,
    100,
  );
});

/** One HTTP/1.1 POST per socket, all written in one go; resolves with each answer's body. */
async function burst(h: Harness, sockets: Socket[], bodies: string[]): Promise<string[]> {
  const port = new URL(h.url).port;
  const answers = sockets.map(
    (so) =>
      new Promise<string>((resolve) => {
        let buf = '';
        const on = (d: Buffer): void => {
          buf += d.toString('latin1');
          const end = buf.indexOf('\r\n\r\n');
          if (end < 0) return;
          const len = Number(/content-length: (\d+)/i.exec(buf.slice(0, end))?.[1] ?? -1);
          if (buf.length < end + 4 + len) return;
          so.off('data', on);
          resolve(buf.slice(end + 4, end + 4 + len));
        };
        so.on('data', on);
      }),
  );
  for (let i = 0; i < sockets.length; i++) {
    const b = bodies[i]!;
    sockets[i]!.write(
      `POST /api-token/${TOKEN} HTTP/1.1\r\nhost: 127.0.0.1:${port}\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(b)}\r\n\r\n${b}`,
    );
  }
  return Promise.all(answers);
}

t.test('windowMs 0: calls that arrive before the first is written share it', async (t) => {
  const h = await setup(t, { methods: ['getBlockHeight'], windowMs: 0 });
  const port = Number(new URL(h.url).port);
  const sockets = await Promise.all(
    Array.from(
      { length: 20 },
      () =>
        new Promise<Socket>((resolve) => {
          const so = connect(port, '127.0.0.1', () => resolve(so));
        }),
    ),
  );
  t.teardown(() => sockets.forEach((so) => so.destroy()));
  // Requests read in one event-loop turn reach the gateway before its upstream write (end of
  // the turn); on a busy machine a burst may spread over turns, so a few bursts are allowed.
  let calls = 0;
  let upstreamAll = 0;
  for (let round = 0; round < 5; round++) {
    const before = upstream(h, 'getBlockHeight');
    const ids = sockets.map((_, i) => String(round * 100 + i));
    const answers = await burst(
      h,
      sockets,
      ids.map((id) => body(id, 'getBlockHeight', '[]')),
    );
    for (let i = 0; i < ids.length; i++) t.ok(answers[i]!.endsWith(`"id":${ids[i]}}`), `caller ${ids[i]}: own id`);
    calls += ids.length;
    upstreamAll += upstream(h, 'getBlockHeight') - before;
    if (upstreamAll < calls / 2) break;
  }
  t.ok(upstreamAll < calls / 2, `${upstreamAll} upstream calls for ${calls} client calls`);
});

t.test('under automatic IP affinity the key names the node label rules pick: callers on different slots share the call', async (t) => {
  // n0 is unlabelled; only `labelled` carries role a, and the rule sends getBlockHeight there
  // whatever a client's IP slot would have picked.
  const labelled = await startSim({ id: 'labelled', port: 0, latencyMs: [150, 150] });
  const h = await startHarness({
    sims: [{ latencyMs: [150, 150] }],
    extraNodes: [{ id: 'labelled', url: labelled.url, labels: { role: 'a' } }],
    config: {
      trustedProxies: ['127.0.0.1/32'],
      upstream: { pipelining: 1 },
      routing: {
        coalesce: { methods: ['getBlockHeight'], windowMs: 1000 },
        autoAffinityMethods: ['getBlockHeight'],
        methods: { getBlockHeight: { labels: { role: 'a' }, fallback: 'none' } },
      },
    },
  });
  t.teardown(async () => {
    await h.close();
    await labelled.close();
  });
  // Sixteen client IPs: without the rule their slots spread over both nodes (all on one node by
  // chance: 2^-16 with equal weights).
  const ips = Array.from({ length: 16 }, (_, i) => `198.51.100.${i + 1}`);
  const answers = await Promise.all(ips.map((ip, i) => h.post(body(String(i), 'getBlockHeight', '[]'), { headers: { 'x-forwarded-for': ip } })));
  for (let i = 0; i < answers.length; i++) {
    t.equal(answers[i]!.status, 200);
    t.equal(answers[i]!.headers.get('x-service-node'), 'labelled', `caller ${i}: the labelled node`);
    t.ok(answers[i]!.text.endsWith(`"id":${i}}`), `caller ${i}: own id`);
  }
  t.equal(labelled.stats.byMethod.get('getBlockHeight') ?? 0, 1, 'one upstream call for every caller');
  t.equal(upstream(h, 'getBlockHeight'), 0, 'none reached the unlabelled node');
});
