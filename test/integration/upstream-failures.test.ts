// Upstream failure modes (docs/errors.md "Gateway errors", docs/routing.md "Retries and node health"): refused connections, resets mid-response, stalls,
// HTTP 500, garbage bytes, slow drips and black-holed connects, each against the retry
// rules, maxAttempts, the documented gateway errors, passive ejection with half-open
// readmission, and batches.
//
// Routing is made deterministic without touching internals: the healthy simulated node is
// started with `lag: 100`, so after the first probe round it is `lagging` while the scripted
// upstream (answering getSlot with the chain's true slot) is `healthy` and always the first
// choice; the sim is only reached by a retry. Live traffic uses getBlockHeight where
// counting matters, because the health probes send getHealth and getSlot.

import { connect } from 'node:net';
import t from 'tap';
import { eventually } from '../helpers/eventually.js';
import { startHarness, type Harness } from '../helpers/gateway.js';
import { startBlackhole, startRawUpstream, type RawBehaviour, type RawUpstream, type RawUpstreamOptions } from '../helpers/raw-upstream.js';

type Test = Parameters<Parameters<typeof t.test>[0]>[0];

const BIG_ID = '12345678901234567890';
const TIMEOUT_MS = 300;

interface Mode {
  mode: RawBehaviour;
  /** The gateway error when the failure cannot be retried; null: always retried (refuse). */
  code: number | null;
  http: number;
}

const MODES: Mode[] = [
  { mode: 'refuse', code: null, http: 200 },
  { mode: 'reset', code: 7502, http: 502 },
  { mode: 'stall', code: 7504, http: 504 },
  { mode: 'http500', code: 7502, http: 502 },
  { mode: 'garbage', code: 7502, http: 502 },
  { mode: 'drip', code: 7504, http: 504 },
];

interface Setup {
  h: Harness;
  /** The scripted upstreams, node ids bad0, bad1, … */
  raws: RawUpstream[];
}

/**
 * A gateway over `faulty` scripted upstreams (started `ok` so the first probe finds them
 * healthy) and, unless `sim` is false, one simulated node that lags (the retry target).
 */
async function setup(
  t: Test,
  opts: { faulty?: number; sim?: boolean; weight?: number; raw?: RawUpstreamOptions; config?: Record<string, unknown> } = {},
): Promise<Setup> {
  const raws: RawUpstream[] = [];
  for (let i = 0; i < (opts.faulty ?? 1); i++) raws.push(await startRawUpstream('ok', opts.raw));
  const config = opts.config ?? {};
  const h = await startHarness({
    sims: opts.sim === false ? [] : [{ lag: 100 }],
    extraNodes: raws.map((r, i) => ({ id: `bad${i}`, url: r.url, weight: opts.weight ?? 1 })),
    config: {
      ...config,
      limits: { upstreamTimeoutMs: TIMEOUT_MS, ...(config.limits as object) },
      // The scripted upstream answers pipelined requests as they come, not in order (no real
      // server does): one request per connection here. Pipelining has its own tests.
      upstream: { pipelining: 1, ...(config.upstream as object) },
      health: { intervalMs: 60_000, ejectAfterFailures: 100, ...(config.health as object) },
    },
  });
  t.teardown(async () => {
    await h.close();
    await Promise.all(raws.map((r) => r.close()));
  });
  return { h, raws };
}

/** `id` is the id's raw JSON text (a number, or a quoted string). */
function rpcBody(method: string, id: string | number = 1): string {
  return `{"jsonrpc":"2.0","id":${id},"method":"${method}"}`;
}

async function rpc(h: Harness, method: string, id: string | number = 1): Promise<{ status: number; text: string; json: any; node: string | null }> {
  const r = await h.post(rpcBody(method, id));
  return { status: r.status, text: r.text, json: r.text === '' ? null : JSON.parse(r.text), node: r.headers.get('x-service-node') };
}

function simCalls(h: Harness, method: string, sim = 0): number {
  return h.sims[sim]!.stats.byMethod.get(method) ?? 0;
}

/** Checks the docs/errors.md "Gateway errors" error body shape on the raw text; `rawId` is the id's JSON text. */
function checkErrorBody(t: Test, text: string, code: number, rawId: string): void {
  const re = new RegExp(
    `^\\{"jsonrpc":"2\\.0","error":\\{"code":${code},"message":"[^"]+","data":\\{.*\\}\\},"id":${rawId.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\\}$`,
  );
  t.match(text, re, `error body shape, code ${code}, id ${rawId} byte-for-byte`);
  const j = JSON.parse(text);
  t.same(Object.keys(j), ['jsonrpc', 'error', 'id']);
  t.same(Object.keys(j.error), ['code', 'message', 'data']);
  t.equal(typeof j.error.message, 'string');
  t.equal(typeof j.error.data, 'object');
}

t.test('setup: the scripted upstream is the first choice, the lagging sim the fallback', async (t) => {
  const { h, raws } = await setup(t);
  t.equal(h.gw.pool.byId('bad0')!.state, 'healthy');
  t.equal(h.gw.pool.byId('n0')!.state, 'lagging');
  for (let i = 0; i < 5; i++) {
    const r = await rpc(h, 'getBlockHeight');
    t.equal(r.status, 200);
    t.equal(r.node, 'bad0');
  }
  t.equal(raws[0]!.calls('getBlockHeight'), 5);
  t.equal(simCalls(h, 'getBlockHeight'), 0);
});

for (const m of MODES) {
  t.test(`${m.mode}: retry-safe call is retried, noRetry call gets ${m.code ?? 'retried anyway'}`, async (t) => {
    const { h, raws } = await setup(t, { config: { routing: { noRetryMethods: ['getBlockHeight'] } } });
    const raw = raws[0]!;
    const bad = h.gw.pool.byId('bad0')!;
    await raw.set(m.mode);
    const before = raw.stats.requests;

    // a) retry-safe: the failure costs a retry on the healthy node, not a client error.
    const a = await rpc(h, 'getSlot', 7);
    t.equal(a.status, 200, 'HTTP 200');
    t.equal(a.node, 'n0', 'served by the healthy node');
    t.type(a.json.result, 'number', 'a slot');
    t.equal(a.json.id, 7);
    t.equal(bad.failures, 1, 'the faulty node was tried first and failed');
    if (m.mode !== 'refuse') t.equal(raw.stats.requests, before + 1, 'the faulty node received the request');
    else t.equal(raw.stats.requests, before, 'nothing listens');
    t.equal(bad.state, 'healthy', 'one failure does not eject');

    // b) noRetry method, faulty node first: the documented gateway error (refuse: still retried).
    const simBefore = simCalls(h, 'getBlockHeight');
    const b = await rpc(h, 'getBlockHeight', BIG_ID);
    t.equal(bad.failures, 2, 'the faulty node was tried');
    if (m.code === null) {
      t.equal(b.status, 200, 'refused connection never carried the request: retried even for a noRetry method');
      t.equal(b.node, 'n0');
      t.type(b.json.result, 'number');
      t.ok(b.text.endsWith(`"id":${BIG_ID}}`), 'node answer keeps the id');
      t.equal(simCalls(h, 'getBlockHeight'), simBefore + 1);
    } else {
      t.equal(b.status, m.http, `HTTP ${m.http}`);
      t.equal(b.node, null, 'no serving node');
      checkErrorBody(t, b.text, m.code, BIG_ID);
      t.equal(b.json.error.code, m.code);
      t.equal(b.json.error.data.attempts, 1, 'one attempt, not retried');
      t.match(b.json.error.data.reason, /^bad0: /, 'reason names the node');
      t.equal(simCalls(h, 'getBlockHeight'), simBefore, 'the healthy node never saw the noRetry call');
      t.equal(raw.calls('getBlockHeight'), 1);
      // f) a string id comes back as the same string.
      const s = await rpc(h, 'getBlockHeight', '"req-1"');
      checkErrorBody(t, s.text, m.code, '"req-1"');
    }
  });
}

for (const m of MODES) {
  t.test(`${m.mode}: only faulty nodes`, async (t) => {
    const { h, raws } = await setup(t, { faulty: 2, sim: false });
    await Promise.all(raws.map((r) => r.set(m.mode)));
    const r = await rpc(h, 'getBlockHeight', 42);
    const code = m.code ?? 7502;
    t.equal(r.status, code === 7504 ? 504 : 502);
    checkErrorBody(t, r.text, code, '42');
    t.equal(r.json.error.data.attempts, 2, 'both nodes tried, then no node left');
    if (m.mode !== 'refuse')
      t.same(
        raws.map((x) => x.calls('getBlockHeight')),
        [1, 1],
      );
  });
}

t.test('7503 when every node is drained (weight 0)', async (t) => {
  const { h, raws } = await setup(t, { faulty: 2, sim: false, weight: 0 });
  const r = await rpc(h, 'getBlockHeight', 5);
  t.equal(r.status, 503);
  checkErrorBody(t, r.text, 7503, '5');
  t.equal(r.json.error.data.attempts, 0);
  t.same(
    raws.map((x) => x.calls('getBlockHeight')),
    [0, 0],
    'drained nodes get no traffic',
  );
});

t.test('7503 once the only node is ejected', async (t) => {
  const { h, raws } = await setup(t, { sim: false, config: { health: { ejectAfterFailures: 2 } } });
  const raw = raws[0]!;
  await raw.set('http500');
  for (let i = 0; i < 2; i++) {
    const r = await rpc(h, 'getBlockHeight', i);
    t.equal(r.status, 502);
    t.equal(r.json.error.code, 7502);
    t.equal(r.json.error.data.attempts, 1, 'no other node to retry on');
  }
  t.equal(h.gw.pool.byId('bad0')!.state, 'ejected');
  const r = await rpc(h, 'getBlockHeight', 9);
  t.equal(r.status, 503);
  checkErrorBody(t, r.text, 7503, '9');
  t.equal(raw.calls('getBlockHeight'), 2, 'the ejected node was not asked');
});

t.test('routing.maxAttempts is respected', async (t) => {
  for (const [maxAttempts, mode] of [
    [1, 'stall'],
    [2, 'http500'],
    [3, 'reset'],
  ] as const) {
    await t.test(`maxAttempts ${maxAttempts} over three ${mode} nodes`, async (t) => {
      const { h, raws } = await setup(t, { faulty: 3, config: { routing: { maxAttempts } } });
      await Promise.all(raws.map((r) => r.set(mode)));
      const r = await rpc(h, 'getBlockHeight', 3);
      t.equal(r.json.error.code, mode === 'stall' ? 7504 : 7502);
      t.equal(r.json.error.data.attempts, maxAttempts);
      const got = raws.map((x) => x.calls('getBlockHeight'));
      t.equal(
        got.reduce((a, b) => a + b, 0),
        maxAttempts,
        'faulty nodes received exactly maxAttempts requests',
      );
      t.ok(
        got.every((n) => n <= 1),
        'never the same node twice',
      );
      t.equal(simCalls(h, 'getBlockHeight'), 0, 'the healthy fallback was out of attempts');
    });
  }
  await t.test('maxAttempts 4: three faulty nodes then the healthy one', async (t) => {
    const { h, raws } = await setup(t, { faulty: 3, config: { routing: { maxAttempts: 4 } } });
    await Promise.all(raws.map((r) => r.set('http500')));
    const r = await rpc(h, 'getBlockHeight', 3);
    t.equal(r.status, 200);
    t.equal(r.node, 'n0');
    t.same(
      raws.map((x) => x.calls('getBlockHeight')),
      [1, 1, 1],
    );
    t.equal(simCalls(h, 'getBlockHeight'), 1);
  });
});

t.test('passive ejection after consecutive failures, half-open readmission', async (t) => {
  const { h, raws } = await setup(t, {
    config: { health: { intervalMs: 100, ejectAfterFailures: 3, ejectBackoffMs: 400, ejectBackoffMaxMs: 800 } },
  });
  const raw = raws[0]!;
  const bad = h.gw.pool.byId('bad0')!;
  // Live traffic fails, probes (getHealth/getSlot) pass: only passive ejection can catch it.
  await raw.set('http500', { methods: ['getBlockHeight'] });
  for (let i = 0; i < 3; i++) {
    const r = await rpc(h, 'getBlockHeight', i);
    t.equal(r.status, 200, 'retried on the healthy node');
    t.equal(r.node, 'n0');
  }
  t.equal(raw.calls('getBlockHeight'), 3);
  t.equal(bad.state, 'ejected', `ejected after ejectAfterFailures (3) failures in a row`);
  for (let i = 0; i < 10; i++) {
    const r = await rpc(h, 'getBlockHeight', i);
    t.equal(r.node, 'n0');
  }
  t.equal(raw.calls('getBlockHeight'), 3, 'an ejected node gets no live traffic');

  // Now it fails probes too: the half-open probe after the backoff fails, it stays out.
  await raw.set('http500');
  const probes = raw.calls('getHealth');
  await eventually('a half-open probe', () => raw.calls('getHealth') > probes);
  await eventually('the half-open probe to finish', () => !bad.probing);
  t.equal(bad.state, 'ejected', 'a failed half-open probe keeps it ejected');
  t.equal(raw.calls('getBlockHeight'), 3);

  // Healthy again: the next half-open probe readmits it and it is the first choice again.
  await raw.set('ok');
  await eventually('readmission', () => bad.state === 'healthy');
  const r = await rpc(h, 'getBlockHeight', 1);
  t.equal(r.status, 200);
  t.equal(r.node, 'bad0', 'traffic returns to the readmitted node');
  t.equal(raw.calls('getBlockHeight'), 4);
});

t.test('a probe already in flight when the node is ejected does not readmit it', async (t) => {
  // Every answer drips (~0.5 s): live calls time out at 100 ms and eject the node after
  // three, while the probe round that started before the ejection is still reading. Its
  // late "ok" predates the ejection and must not cut the backoff short.
  const { h, raws } = await setup(t, {
    raw: { dripMs: 10 },
    config: {
      limits: { upstreamTimeoutMs: 100 },
      health: { intervalMs: 50, timeoutMs: 2000, ejectAfterFailures: 3, ejectBackoffMs: 2000, ejectBackoffMaxMs: 2000 },
    },
  });
  const raw = raws[0]!;
  const bad = h.gw.pool.byId('bad0')!;
  await raw.set('drip');
  const probes = raw.calls('getHealth');
  await eventually('a probe of the dripping node', () => raw.calls('getHealth') > probes);
  for (let i = 0; i < 3; i++) t.equal((await rpc(h, 'getBlockHeight', i)).node, 'n0');
  t.equal(bad.state, 'ejected');
  t.ok(bad.probing, 'the probe that started before the ejection is still running');
  await eventually('the stale probe to finish', () => !bad.probing);
  t.equal(bad.state, 'ejected', 'still ejected: only a probe after the backoff may readmit');
  t.equal((await rpc(h, 'getBlockHeight', 9)).node, 'n0');
});

t.test('black-holed node (connect never completes) is retried for every method', async (t) => {
  const hole = await startBlackhole();
  t.teardown(() => hole.close());
  const h = await startHarness({
    sims: [{ lag: 100 }],
    // The sim is not lagging here (the hole reports no slot): weight makes the hole the first choice.
    extraNodes: [{ id: 'hole', url: hole.url, weight: 1_000_000 }],
    config: {
      limits: { upstreamTimeoutMs: TIMEOUT_MS },
      routing: { noRetryMethods: ['getBlockHeight'] },
      health: { intervalMs: 60_000, timeoutMs: 200, ejectAfterFailures: 100 },
    },
  });
  t.teardown(() => h.close());
  const node = h.gw.pool.byId('hole')!;
  t.equal(node.state, 'unhealthy', 'its first probe timed out');
  // As if it died right after its last good probe.
  node.state = 'healthy';
  const a = await rpc(h, 'getSlot', 1);
  t.equal(a.status, 200);
  t.equal(a.node, 'n0');
  t.equal(node.failures, 1, 'the black-holed node was tried first');
  const b = await rpc(h, 'getBlockHeight', 2);
  t.equal(b.status, 200, 'the request was never written: retried even for a noRetry method');
  t.equal(b.node, 'n0');
  t.equal(node.failures, 2);
});

t.test('only black-holed nodes: 7504', async (t) => {
  const holes = [await startBlackhole(), await startBlackhole()];
  t.teardown(() => Promise.all(holes.map((x) => x.close())));
  const h = await startHarness({
    sims: [],
    extraNodes: holes.map((x, i) => ({ id: `hole${i}`, url: x.url })),
    config: {
      limits: { upstreamTimeoutMs: TIMEOUT_MS },
      routing: { noRetryMethods: ['getBlockHeight'] },
      health: { intervalMs: 60_000, timeoutMs: 200, ejectAfterFailures: 100 },
    },
  });
  t.teardown(() => h.close());
  const r = await rpc(h, 'getBlockHeight', 3);
  t.equal(r.status, 504);
  checkErrorBody(t, r.text, 7504, '3');
  t.equal(r.json.error.data.attempts, 2, 'both tried');
});

function batchBody(): string {
  const calls: string[] = [];
  for (let i = 0; i < 10; i++) calls.push(`{"jsonrpc":"2.0","id":${i + 1},"method":"${i < 5 ? 'getBlockHeight' : 'getSlot'}"}`);
  return '[' + calls.join(',') + ']';
}

for (const mode of ['reset', 'http500', 'stall'] as const) {
  t.test(`batch of 10, upstreamBatch 5, one sub-batch on a ${mode} node`, async (t) => {
    await t.test('retried: 10 answers in order', async (t) => {
      const { h, raws } = await setup(t, { config: { routing: { upstreamBatch: 5 } } });
      const raw = raws[0]!;
      // Only the getBlockHeight sub-batch (elements 1-5) fails; the getSlot one is answered.
      await raw.set(mode, { methods: ['getBlockHeight'] });
      const r = await h.post(batchBody());
      t.equal(r.status, 200);
      const j = JSON.parse(r.text) as any[];
      t.equal(j.length, 10);
      t.same(
        j.map((e) => e.id),
        [1, 2, 3, 4, 5, 6, 7, 8, 9, 10],
        'request order',
      );
      t.ok(
        j.every((e) => typeof e.result === 'number'),
        'every element has a result',
      );
      t.equal(raw.calls('getBlockHeight'), 5, 'the faulty sub-batch reached the faulty node once');
      t.equal(simCalls(h, 'getBlockHeight'), 5, 'and was retried on the healthy node');
      t.same((r.headers.get('x-service-node') ?? '').split(',').sort(), ['bad0', 'n0']);
    });
    await t.test('noRetry: the failed part carries the gateway error in place', async (t) => {
      const { h, raws } = await setup(t, { config: { routing: { upstreamBatch: 5, noRetryMethods: ['getBlockHeight'] } } });
      const raw = raws[0]!;
      await raw.set(mode, { methods: ['getBlockHeight'] });
      const r = await h.post(batchBody());
      t.equal(r.status, 200, 'HTTP 200 when part of the batch was answered');
      const j = JSON.parse(r.text) as any[];
      t.same(
        j.map((e) => e.id),
        [1, 2, 3, 4, 5, 6, 7, 8, 9, 10],
      );
      const code = mode === 'stall' ? 7504 : 7502;
      for (let i = 0; i < 5; i++) {
        t.equal(j[i].error?.code, code, `element ${i + 1}: gateway error`);
        t.equal(j[i].result, undefined);
      }
      for (let i = 5; i < 10; i++) t.type(j[i].result, 'number', `element ${i + 1}: result`);
      t.match(r.text, new RegExp(`^\\[\\{"jsonrpc":"2\\.0","error":\\{"code":${code},"message":"[^"]+","data":\\{[^}]*\\}\\},"id":1\\},`));
      t.equal(simCalls(h, 'getBlockHeight'), 0, 'not retried');
      t.equal(raw.calls('getBlockHeight'), 5);
    });
  });
}

t.test('batch with noRetry methods on a refusing node is still retried', async (t) => {
  const { h, raws } = await setup(t, { config: { routing: { upstreamBatch: 5, noRetryMethods: ['getBlockHeight', 'getSlot'] } } });
  await raws[0]!.set('refuse');
  const r = await h.post(batchBody());
  t.equal(r.status, 200);
  const j = JSON.parse(r.text) as any[];
  t.same(
    j.map((e) => e.id),
    [1, 2, 3, 4, 5, 6, 7, 8, 9, 10],
  );
  t.ok(j.every((e) => typeof e.result === 'number'));
  t.equal(r.headers.get('x-service-node'), 'n0');
});

t.test('raw upstream helper: keep-alive, counting, refuse and back', async (t) => {
  const raw = await startRawUpstream('ok');
  t.teardown(() => raw.close());
  const body = rpcBody('getSlot', 3);
  for (let i = 0; i < 3; i++) {
    const res = await fetch(raw.url, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
    const j = (await res.json()) as any;
    t.equal(j.id, 3);
    t.type(j.result, 'number');
  }
  t.equal(raw.stats.requests, 3);
  t.ok(raw.stats.connections < 3, 'keep-alive connections are reused');
  // Two requests in one write on one connection, the second split across writes.
  const conns = raw.stats.connections;
  const req = (b: string) => `POST / HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(b)}\r\n\r\n${b}`;
  const text = await new Promise<string>((resolve, reject) => {
    const s = connect(raw.port, '127.0.0.1');
    let got = '';
    s.on('data', (d) => {
      got += d.toString();
      if ((got.match(/HTTP\/1\.1 200 OK/g) ?? []).length === 3 && got.endsWith('}')) {
        s.destroy();
        resolve(got);
      }
    });
    s.on('error', reject);
    const two = req(rpcBody('getHealth', 1)) + req(rpcBody('getHealth', 2));
    const third = req(rpcBody('getHealth', 3));
    s.write(two + third.slice(0, 30));
    setTimeout(() => s.write(third.slice(30)), 20);
  });
  t.equal(raw.stats.connections, conns + 1);
  t.equal(raw.stats.requests, 6);
  t.same(
    [...text.matchAll(/"id":(\d)/g)].map((m) => m[1]),
    ['1', '2', '3'],
    'three answers on one connection, in order',
  );
  await raw.set('refuse');
  await t.rejects(fetch(raw.url, { method: 'POST', body }), 'refused');
  await raw.set('ok');
  const res = await fetch(raw.url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: `[${body},${rpcBody('getHealth', 4)}]` });
  t.same(
    ((await res.json()) as any[]).map((e) => [e.id, e.result === 'ok' || typeof e.result === 'number']),
    [
      [3, true],
      [4, true],
    ],
  );
});
