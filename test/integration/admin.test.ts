// The admin listener on a real socket: bearer auth, node view, live weight/drain changes that
// drop no in-flight request, config reload (and SIGHUP), Prometheus text with bounded method
// labels, and the `jumpgate nodes` / `jumpgate reload` CLI against a running gateway.

import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { loadConfig } from '../../src/config/load.js';
import { silentLogger } from '../../src/log.js';
import { GatewayMetrics } from '../../src/metrics/prometheus.js';
import { startGateway, type Gateway } from '../../src/lifecycle/start-gateway.js';
import { startSim, type SimNode } from '../../src/tools/sim/node.js';
import { serverEngine } from '../../src/server/engine.js';
import { freePort } from '../../bench/procs.js';
import { runCli } from '../helpers/cli.js';
import { eventually } from '../helpers/eventually.js';
import { startHarness, TOKEN, type Harness } from '../helpers/gateway.js';

type Test = Parameters<Parameters<typeof t.test>[0]>[0];

const ADMIN = 'admin-token-0123456789abcdef';
const NEW_TOKEN = 'reloaded-token-0123456789ab';

interface AdminAnswer {
  status: number;
  headers: Headers;
  text: string;
  json: any;
}

async function admin(gw: Gateway, path: string, opts: { method?: string; body?: string; token?: string | null } = {}): Promise<AdminAnswer> {
  const headers: Record<string, string> = {};
  const token = opts.token === undefined ? ADMIN : opts.token;
  if (token !== null) headers.authorization = `Bearer ${token}`;
  const res = await fetch(gw.admin!.url + path, { method: opts.method ?? 'GET', headers, body: opts.body });
  const text = await res.text();
  let json: unknown = null;
  try {
    json = JSON.parse(text);
  } catch {
    // metrics text
  }
  return { status: res.status, headers: res.headers, text, json };
}

/** Runs `total` jobs with at most `concurrency` at a time. */
async function runPool(total: number, concurrency: number, job: (i: number) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < total) await job(next++);
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
}

/** Which node served each of `n` getIdentity calls (checks the answer names the same node). */
async function identities(h: { call: Harness['call'] }, n: number): Promise<string[]> {
  const seen: string[] = [];
  await runPool(n, 10, async () => {
    const r = await h.call('getIdentity');
    if (r.status !== 200) throw new Error(`HTTP ${r.status}: ${JSON.stringify(r.json)}`);
    const id = (r.json as { result: { identity: string } }).result.identity;
    if (id !== r.node) throw new Error(`answer from ${id} but header says ${r.node}`);
    seen.push(id);
  });
  return seen;
}

function count(list: string[], id: string): number {
  return list.filter((x) => x === id).length;
}

async function withAdmin(t: Test, sims: Parameters<typeof startHarness>[0] = {}): Promise<Harness> {
  const h = await startHarness({ sims: [{}, {}], ...sims, admin: true, config: { admin: { token: ADMIN }, ...(sims.config ?? {}) } });
  t.teardown(() => h.close());
  return h;
}

// ---------------------------------------------------------------------------------------------

t.test('auth: /healthz and /readyz are open, everything else needs the bearer token', async (t) => {
  const h = await withAdmin(t);
  const gw = h.gw;
  const health = await admin(gw, '/healthz', { token: null });
  t.equal(health.status, 200);
  t.same(health.json, { status: 'ok' });
  const ready = await admin(gw, '/readyz', { token: null });
  t.equal(ready.status, 200);
  t.equal(ready.json.status, 'ready');
  t.equal(ready.json.usableNodes, 2);

  for (const path of ['/admin/status', '/admin/nodes', '/admin/nodes/n0', '/metrics']) {
    const none = await admin(gw, path, { token: null });
    t.equal(none.status, 401, `${path} without a token`);
    t.match(none.json.error, /missing admin token.*Authorization: Bearer/);
    t.match(none.headers.get('www-authenticate') ?? '', /^Bearer /);
    const wrong = await admin(gw, path, { token: ADMIN + 'x' });
    t.equal(wrong.status, 401, `${path} with a wrong token`);
    t.match(wrong.json.error, /wrong admin token/);
    const short = await admin(gw, path, { token: 'a' });
    t.equal(short.status, 401, `${path} with a token of another length`);
    const right = await admin(gw, path);
    t.equal(right.status, 200, `${path} with the token`);
  }
  const post = await admin(gw, '/admin/reload', { method: 'POST', token: 'nope' });
  t.equal(post.status, 401, 'reload needs the token too');
  const lower = await fetch(gw.admin!.url + '/admin/nodes', { headers: { authorization: `bearer ${ADMIN}` } });
  t.equal(lower.status, 200, 'the scheme is case-insensitive');
  const basic = await fetch(gw.admin!.url + '/admin/nodes', { headers: { authorization: `Basic ${ADMIN}` } });
  t.equal(basic.status, 401, 'only Bearer');

  const unknown = await admin(gw, '/admin/nope');
  t.equal(unknown.status, 404);
  const wrongMethod = await admin(gw, '/admin/nodes', { method: 'DELETE' });
  t.equal(wrongMethod.status, 405);
  t.equal(wrongMethod.headers.get('allow'), 'GET');
  const getReload = await admin(gw, '/admin/reload');
  t.equal(getReload.status, 405);
  t.equal(getReload.headers.get('allow'), 'POST');
});

t.test('GET /admin/status: the runtime, and which listener serves the RPC port and why', async (t) => {
  const h = await withAdmin(t);
  const status = await admin(h.gw, '/admin/status');
  t.equal(status.status, 200);
  const engine = serverEngine('auto');
  t.same(status.json, { node: process.versions.node, listener: { engine: engine.name, reason: engine.reason }, workers: 0, draining: false });
  t.same(h.gw.listener, { engine: engine.name, reason: engine.reason }, 'the gateway says the same');
  // The listener actually serving is the one named: uWS adds its own header to every answer.
  const res = await fetch(`http://127.0.0.1:${h.gw.port}/`, { method: 'OPTIONS' });
  t.equal(res.headers.has('uwebsockets'), engine.name === 'uws', `${engine.name}: uWebSockets header ${res.headers.has('uwebsockets') ? 'present' : 'absent'}`);
});

t.test('no admin.token configured: 401 everywhere except /healthz and /readyz', async (t) => {
  const h = await startHarness({ sims: [{}], admin: true });
  t.teardown(() => h.close());
  t.equal((await admin(h.gw, '/healthz', { token: null })).status, 200);
  t.equal((await admin(h.gw, '/readyz', { token: null })).status, 200);
  for (const [path, method] of [
    ['/admin/nodes', 'GET'],
    ['/admin/nodes/n0', 'PATCH'],
    ['/admin/reload', 'POST'],
    ['/metrics', 'GET'],
  ] as const) {
    for (const token of [null, '', 'anything-at-all']) {
      const r = await admin(h.gw, path, { method, token, body: method === 'PATCH' ? '{"weight":0}' : undefined });
      t.equal(r.status, 401, `${method} ${path} with token ${JSON.stringify(token)}`);
      t.match(r.json.error, /admin API disabled: set admin\.token/);
    }
  }
  t.equal(h.gw.pool.byId('n0')!.weight, 1, 'nothing changed');
});

t.test('readyz: 503 when no node can take traffic, and while draining', async (t) => {
  const h = await withAdmin(t, { sims: [{}] });
  await admin(h.gw, '/admin/nodes/n0', { method: 'PATCH', body: '{"drained":true}' });
  const r = await admin(h.gw, '/readyz', { token: null });
  t.equal(r.status, 503);
  t.same(r.json, { status: 'no usable node', usableNodes: 0 });
  await admin(h.gw, '/admin/nodes/n0', { method: 'PATCH', body: '{"drained":false}' });
  t.equal((await admin(h.gw, '/readyz', { token: null })).status, 200);
  h.gw.unready();
  const d = await admin(h.gw, '/readyz', { token: null });
  t.equal(d.status, 503);
  t.equal(d.json.status, 'draining');
});

t.test('GET /admin/nodes: shape and live values after traffic', async (t) => {
  const h = await withAdmin(t);
  await runPool(60, 10, async () => {
    const r = await h.call('getSlot');
    if (r.status !== 200) throw new Error('getSlot failed');
  });
  const r = await admin(h.gw, '/admin/nodes');
  t.equal(r.status, 200);
  t.match(r.headers.get('content-type'), /^application\/json/);
  const nodes = r.json as any[];
  t.same(
    nodes.map((n) => n.id),
    ['n0', 'n1'],
  );
  for (const n of nodes) {
    t.same(
      Object.keys(n).sort(),
      [
        'budget',
        'chain',
        'chainLag',
        'coolingMs',
        'costs',
        'unsupported',
        'drained',
        'ewmaMs',
        'failures',
        'highWaterSlot',
        'id',
        'inflight',
        'lag',
        'lastError',
        'latency',
        'requests',
        'routable',
        'rps',
        'slot',
        'state',
        'url',
        'weight',
      ].sort(),
      'fields',
    );
    t.equal(n.url, h.sims.find((s) => s.id === n.id)!.url);
    t.equal(n.state, 'healthy');
    t.equal(n.weight, 1);
    t.equal(n.drained, false);
    t.equal(n.routable, true);
    t.type(n.slot, 'number');
    t.ok(n.slot > 300_000_000, 'a slot from the probe');
    t.type(n.lag, 'number');
    t.ok(n.lag >= 0 && n.lag <= 32);
    t.equal(n.inflight, 0);
    t.equal(n.failures, 0);
    t.equal(n.lastError, null);
    t.type(n.ewmaMs, 'number');
    t.same(Object.keys(n.latency).sort(), ['count', 'p50', 'p90', 'p99', 'p999']);
  }
  const requests = nodes.reduce((a, n) => a + n.requests, 0);
  t.equal(requests, 60, 'every attempt counted');
  const counted = nodes.reduce((a, n) => a + n.latency.count, 0);
  t.equal(counted, 60, 'every successful attempt is in a latency window');
  for (const n of nodes.filter((x) => x.latency.count > 0)) {
    const l = n.latency;
    t.ok(l.p50 > 0 && l.p50 <= l.p90 && l.p90 <= l.p99 && l.p99 <= l.p999, `ordered percentiles in ms: ${JSON.stringify(l)}`);
    t.ok(l.p999 < 1000, 'plausible milliseconds');
  }
  const one = await admin(h.gw, '/admin/nodes/n1');
  t.equal(one.status, 200);
  t.equal(one.json.id, 'n1');
  t.equal((await admin(h.gw, '/admin/nodes/nope')).status, 404);
});

t.test('PATCH weight 0 and drain move traffic; bad bodies are 400 naming the field', async (t) => {
  const h = await withAdmin(t);
  const before = await identities(h, 100);
  t.ok(count(before, 'n1') > 0 && count(before, 'n0') > 0, 'both nodes serve at first');

  const w0 = await admin(h.gw, '/admin/nodes/n1', { method: 'PATCH', body: '{"weight":0}' });
  t.equal(w0.status, 200);
  t.equal(w0.json.weight, 0);
  t.equal(w0.json.routable, false);
  t.equal(h.gw.pool.byId('n1')!.weight, 0);
  t.equal(count(await identities(h, 100), 'n1'), 0, 'weight 0: n1 gets none of the next 100');

  const w1 = await admin(h.gw, '/admin/nodes/n1', { method: 'PATCH', body: '{"weight":1}' });
  t.equal(w1.json.weight, 1);
  t.ok(count(await identities(h, 100), 'n1') > 0, 'weight back: n1 serves again');

  const d = await admin(h.gw, '/admin/nodes/n0', { method: 'PATCH', body: '{"drained":true}' });
  t.equal(d.status, 200);
  t.equal(d.json.drained, true);
  t.equal(d.json.weight, 1, 'drain keeps the weight');
  t.equal(count(await identities(h, 100), 'n0'), 0, 'drained: n0 gets none of the next 100');
  const u = await admin(h.gw, '/admin/nodes/n0', { method: 'PATCH', body: '{"drained":false,"weight":2.5}' });
  t.equal(u.json.drained, false);
  t.equal(u.json.weight, 2.5, 'fractional weights are fine');
  t.ok(count(await identities(h, 100), 'n0') > 0, 'undrained: n0 serves again');

  const bad: [string, RegExp][] = [
    ['{"weight":-1}', /^weight: expected a number >= 0, got -1$/],
    ['{"weight":"2"}', /^weight: expected a number >= 0, got "2"$/],
    ['{"weight":null}', /^weight: expected a number >= 0, got null$/],
    ['{"drained":"yes"}', /^drained: expected true or false, got "yes"$/],
    ['{"weight":1,"colour":"red"}', /^unknown field "colour"; allowed: weight, drained$/],
    ['{}', /^nothing to change/],
    ['[1]', /^body must be a JSON object/],
    ['weight=1', /^body must be JSON/],
    ['', /^body must be JSON/],
  ];
  for (const [body, re] of bad) {
    const r = await admin(h.gw, '/admin/nodes/n0', { method: 'PATCH', body });
    t.equal(r.status, 400, `400 for ${body}`);
    t.match(r.json.error, re);
  }
  t.equal(h.gw.pool.byId('n0')!.weight, 2.5, 'bad bodies changed nothing');
  const missing = await admin(h.gw, '/admin/nodes/zz', { method: 'PATCH', body: '{"weight":1}' });
  t.equal(missing.status, 404);
  t.match(missing.json.error, /no node "zz"; nodes: n0, n1/);
  const big = await admin(h.gw, '/admin/nodes/n0', { method: 'PATCH', body: '{"weight":1,"x":"' + 'a'.repeat(70_000) + '"}' });
  t.equal(big.status, 413);
});

t.test('draining a node does not drop its in-flight requests', async (t) => {
  // The simulated node (uWS) drops a connection that pipelines while an answer is pending;
  // that costs a retry (pipelining.test.ts), and this test counts every answer's node.
  const h = await withAdmin(t, { config: { upstream: { pipelining: 1 } } });
  const slow = h.sims[0]!;
  slow.set({ latencyMs: [400, 500] });
  await admin(h.gw, '/admin/nodes/n1', { method: 'PATCH', body: '{"drained":true}' });
  const inflight = Array.from({ length: 10 }, () => h.call('getIdentity'));
  await eventually('ten requests in flight at n0', () => h.gw.pool.byId('n0')!.inflight === 10);
  const view = await admin(h.gw, '/admin/nodes/n0');
  t.equal(view.json.inflight, 10, 'ten requests in flight at the slow node');
  // Drain it and set its weight to 0 while they run; the other node takes new traffic.
  await admin(h.gw, '/admin/nodes/n1', { method: 'PATCH', body: '{"drained":false}' });
  t.equal((await admin(h.gw, '/admin/nodes/n0', { method: 'PATCH', body: '{"drained":true,"weight":0}' })).status, 200);
  const fresh = await h.call('getIdentity');
  t.equal(fresh.node, 'n1', 'a new request goes to the other node at once');
  const answers = await Promise.all(inflight);
  t.same(
    answers.map((a) => [a.status, a.node, a.json.result?.identity]),
    Array(10).fill([200, 'n0', 'n0']),
    'every in-flight request was answered by the node it was sent to',
  );
  t.equal(h.gw.pool.byId('n0')!.failures, 0);
});

t.test('/metrics: Prometheus text with request, node and process metrics', async (t) => {
  const h = await withAdmin(t);
  await admin(h.gw, '/admin/nodes/n1', { method: 'PATCH', body: '{"weight":0}' });
  for (let i = 0; i < 5; i++) await h.call('getSlot');
  await h.call('noSuchMethod');
  await h.post('{"jsonrpc":"2.0","id":1,"method":"getSlot"');
  await h.post('[{"jsonrpc":"2.0","id":1,"method":"getSlot"},{"jsonrpc":"2.0","id":2,"method":"getBlockHeight"}]');
  h.gw.metrics.rateLimited('token');
  const r = await admin(h.gw, '/metrics');
  t.equal(r.status, 200);
  t.match(r.headers.get('content-type'), /^text\/plain; version=0\.0\.4/);
  const text = r.text;
  const line =
    /^[a-zA-Z_:][a-zA-Z0-9_:]*(\{[a-zA-Z_][a-zA-Z0-9_]*="(?:\\.|[^"\\])*"(,[a-zA-Z_][a-zA-Z0-9_]*="(?:\\.|[^"\\])*")*\})? (-?[0-9.]+(e[+-]?[0-9]+)?|NaN|\+Inf|-Inf)$/;
  const bad = text.split('\n').filter((l) => l !== '' && !l.startsWith('# HELP ') && !l.startsWith('# TYPE ') && !line.test(l));
  t.same(bad, [], 'every line is a comment or a sample');
  t.match(text, /^# TYPE jumpgate_requests_total counter$/m);
  t.match(text, /^jumpgate_requests_total\{method="getSlot",status="200",node="n0"\} 5$/m);
  t.match(text, /^jumpgate_requests_total\{method="noSuchMethod",status="200",node="n0"\} 1$/m, 'node errors are answers too');
  t.match(text, /^jumpgate_requests_total\{method="\(none\)",status="200",node="\(none\)"\} 1$/m, 'parse error: no method, no node');
  t.match(text, /^jumpgate_requests_total\{method="\(batch\)",status="200",node="n0"\} 1$/m);
  t.match(text, /^jumpgate_request_duration_seconds_count 8$/m);
  t.match(text, /^jumpgate_request_duration_seconds_bucket\{le="\+Inf"\} 8$/m);
  t.match(text, /^jumpgate_node_state\{node="n0",state="healthy"\} 1$/m);
  t.match(text, /^jumpgate_node_state\{node="n0",state="ejected"\} 0$/m);
  t.match(text, /^jumpgate_node_state\{node="n1",state="healthy"\} 1$/m);
  t.match(text, /^jumpgate_node_weight\{node="n1"\} 0$/m);
  t.match(text, /^jumpgate_node_drained\{node="n1"\} 0$/m);
  t.match(text, /^jumpgate_node_slot\{node="n0"\} \d{9,}$/m);
  t.match(text, /^jumpgate_node_slot_lag\{node="n0"\} \d+$/m);
  t.match(text, /^jumpgate_node_inflight\{node="n0"\} 0$/m);
  t.match(text, /^jumpgate_node_attempts_total\{node="n0"\} 7$/m);
  t.match(text, /^jumpgate_node_failures_total\{node="n0"\} 0$/m);
  t.match(text, /^jumpgate_node_latency_seconds_bucket\{node="n0",le="\+Inf"\} 7$/m);
  t.match(text, /^jumpgate_node_latency_seconds_count\{node="n0"\} 7$/m);
  t.match(text, /^jumpgate_inflight_requests 0$/m);
  t.match(text, /^jumpgate_rate_limited_total\{scope="token"\} 1$/m);
  t.match(text, /^process_cpu_user_seconds_total \d/m, 'process metrics');
  t.match(text, /^nodejs_eventloop_lag_seconds /m);
  // Cumulative buckets never decrease.
  const buckets = [...text.matchAll(/^jumpgate_node_latency_seconds_bucket\{node="n0",le="[^"]+"\} (\d+)$/gm)].map((m) => Number(m[1]));
  t.ok(buckets.length > 5 && buckets.every((v, i) => i === 0 || v >= buckets[i - 1]!), 'cumulative');
});

t.test('method labels are capped: random method names cannot grow memory', async (t) => {
  const h = await withAdmin(t, { sims: [{}] });
  await runPool(500, 20, async (i) => {
    await h.post(JSON.stringify({ jsonrpc: '2.0', id: i, method: `m${i}_${Math.random().toString(36).slice(2)}` }));
  });
  await h.post(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'x'.repeat(1000) }));
  const text = (await admin(h.gw, '/metrics')).text;
  const methods = new Set([...text.matchAll(/^jumpgate_requests_total\{method="([^"]*)"/gm)].map((m) => m[1]));
  t.equal(methods.size, 257, '256 names plus (other)');
  t.ok(methods.has('(other)'));
  const other = /^jumpgate_requests_total\{method="\(other\)",status="200",node="n0"\} (\d+)$/m.exec(text);
  t.equal(Number(other?.[1]), 245, 'the rest (and an over-long name) count as (other)');
  const total = [...text.matchAll(/^jumpgate_requests_total\{[^}]*\} (\d+)$/gm)].reduce((a, m) => a + Number(m[1]), 0);
  t.equal(total, 501, 'nothing lost');
});

t.test('exporter unit: cap, batch and node labels, rate-limit scopes', async (t) => {
  const m = new GatewayMetrics({ nodes: () => [], inflight: () => 3 }, 2);
  m.request('a', false, '200 OK', 'n0', 1);
  m.request('b', false, '200 OK', 'n0', 1);
  m.request('c', false, '200 OK', 'n0', 1);
  m.request('a', true, '200 OK', 'n0,n1', 2);
  m.request('', false, '413 Payload Too Large', '', 0.1);
  m.request('a', false, '502 Bad Gateway', '', 30);
  for (let i = 0; i < 40; i++) m.rateLimited('scope' + i);
  const text = await m.text();
  t.match(text, /^jumpgate_requests_total\{method="a",status="200",node="n0"\} 1$/m);
  t.match(text, /^jumpgate_requests_total\{method="\(other\)",status="200",node="n0"\} 1$/m, 'c is past the cap of 2');
  t.match(text, /^jumpgate_requests_total\{method="\(batch\)",status="200",node="\(multiple\)"\} 1$/m);
  t.match(text, /^jumpgate_requests_total\{method="\(none\)",status="413",node="\(none\)"\} 1$/m);
  t.match(text, /^jumpgate_requests_total\{method="a",status="502",node="\(none\)"\} 1$/m);
  t.match(text, /^jumpgate_inflight_requests 3$/m);
  t.equal([...text.matchAll(/^jumpgate_rate_limited_total\{/gm)].length, 16, 'scopes are bounded too');
});

// ---------------------------------------------------------------------------------------------
// Reload

interface FileGateway {
  gw: Gateway;
  file: string;
  write(lines: string[]): void;
  call(method: string, token?: string, body?: string): Promise<{ status: number; json: any; node: string | null }>;
}

async function fileGateway(t: Test, lines: string[]): Promise<FileGateway> {
  const dir = mkdtempSync(join(tmpdir(), 'jg-reload-'));
  const file = join(dir, 'jumpgate.yaml');
  const write = (l: string[]): void => writeFileSync(file, l.join('\n') + '\n');
  write(lines);
  const gw = await startGateway(loadConfig(file), { log: silentLogger(), configPath: file, adminEphemeral: true });
  t.teardown(() => gw.close());
  const call: FileGateway['call'] = async (method, token = TOKEN, body) => {
    const res = await fetch(`${gw.url}/api-token/${token}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: body ?? JSON.stringify({ jsonrpc: '2.0', id: 1, method }),
    });
    const text = await res.text();
    return { status: res.status, json: text === '' ? null : JSON.parse(text), node: res.headers.get('x-service-node') };
  };
  return { gw, file, write, call };
}

// Inline data plane: these tests read the pool's own in-flight counts (workers report them once
// a second); reload through workers is tested in workers.test.ts.
const BASE = [
  'rpc: { port: 0, wsPort: 0, workers: 0 }',
  'console: { port: 0 }',
  "store: { url: 'sqlite://:memory:' }",
  'offload: { threads: 0 }',
  'log: { level: silent }',
  `admin: { port: 0, token: ${ADMIN} }`,
];

async function sims(t: Test, n: number): Promise<SimNode[]> {
  const list = await Promise.all(Array.from({ length: n }, (_, i) => startSim({ id: `n${i}`, port: 0, synthetic: true })));
  t.teardown(() => Promise.all(list.map((s) => s.close())));
  return list;
}

t.test('reload applies weights, tokens, limits and node changes; a bad file changes nothing', async (t) => {
  const [s0, s1, s2] = await sims(t, 3);
  const nodes = (spec: string[]): string => `nodes: [${spec.join(', ')}]`;
  const f = await fileGateway(t, [
    ...BASE,
    nodes([`{ id: n0, url: "${s0!.url}" }`, `{ id: n1, url: "${s1!.url}" }`]),
    `tokens: [{ token: ${TOKEN}, stack: t }]`,
  ]);
  t.equal((await f.call('getSlot')).status, 200);
  t.equal((await f.call('getSlot', NEW_TOKEN)).status, 401, 'the new token is unknown before the reload');

  // Unchanged file: nothing to do.
  const same = await admin(f.gw, '/admin/reload', { method: 'POST' });
  t.equal(same.status, 200);
  t.equal(same.json.changed, false);

  // Weight, token and limits changes.
  f.write(
    [
      ...BASE,
      nodes([`{ id: n0, url: "${s0!.url}" }`, `{ id: n1, url: "${s1!.url}", weight: 0 }`]),
      `tokens: [{ token: ${NEW_TOKEN}, stack: t }]`,
      'limits: { maxBatch: 2 }',
      'rpc: { port: 0, wsPort: 0, workers: 0, host: 127.0.0.2 }',
    ].filter((l) => !l.startsWith('rpc: { port: 0, wsPort: 0, workers: 0 }')),
  );
  // A node drained by the file is reported like a PATCHed one (the WebSocket hub listens).
  const unusable: string[] = [];
  f.gw.pool.unusableListeners.push((n) => unusable.push(n.id));
  const r = await admin(f.gw, '/admin/reload', { method: 'POST' });
  t.equal(r.status, 200, r.text);
  t.same(unusable, ['n1'], 'the reload told the unusable-node listeners (WebSocket hub) of n1');
  t.same(r.json, {
    changed: true,
    nodes: { added: [], removed: [], replaced: [], weights: { n1: { from: 1, to: 0 } } },
    tokens: { added: 1, removed: 1, changed: 0 },
    applied: ['nodes.n1.weight', 'tokens', 'limits.maxBatch'],
    restartRequired: ['rpc.host'],
    // Every change, old → new; tokens by count only.
    changes: {
      'rpc.host': { from: '127.0.0.1', to: '127.0.0.2' },
      'nodes.n1.weight': { from: 1, to: 0 },
      tokens: { from: '1 token', to: '1 token' },
      'limits.maxBatch': { from: 1000, to: 2 },
    },
  });
  t.equal((await f.call('getSlot', NEW_TOKEN)).status, 200, 'the new token works');
  t.equal((await f.call('getSlot', TOKEN)).status, 401, 'the removed token is gone');
  const batch = JSON.stringify([1, 2, 3].map((id) => ({ jsonrpc: '2.0', id, method: 'getSlot' })));
  const tooBig = await f.call('', NEW_TOKEN, batch);
  t.equal(tooBig.status, 413);
  t.equal(tooBig.json.error.code, 7701, 'limits.maxBatch applies to requests after the reload');
  const seen = await identities({ call: (m) => f.call(m, NEW_TOKEN) }, 100);
  t.equal(count(seen, 'n1'), 0, 'n1 (weight 0 in the file) gets no traffic');
  t.equal(f.gw.pool.byId('n1')!.drained, true, 'weight 0 in the file drains');

  // Bad files: nothing changes.
  const good = JSON.stringify((await admin(f.gw, '/admin/nodes')).json.map((n: any) => [n.id, n.weight, n.drained]));
  f.write([...BASE, `nodes: [{ id: n0, url: "${s0!.url}", weight: -1 }]`, 'limits: { maxBatch: 0 }']);
  const bad = await admin(f.gw, '/admin/reload', { method: 'POST' });
  t.equal(bad.status, 400);
  t.match(bad.json.error, /nodes\[0\]\.weight: expected a number >= 0, got -1/);
  t.match(bad.json.error, /limits\.maxBatch/);
  f.write(['nodes: [ { id: a']);
  const yaml = await admin(f.gw, '/admin/reload', { method: 'POST' });
  t.equal(yaml.status, 400);
  t.match(yaml.json.error, /invalid YAML/);
  f.write([...BASE, 'nodes: []']);
  const empty = await admin(f.gw, '/admin/reload', { method: 'POST' });
  t.equal(empty.status, 400);
  t.match(empty.json.error, /nodes: at least one node is required/);
  t.equal(JSON.stringify((await admin(f.gw, '/admin/nodes')).json.map((n: any) => [n.id, n.weight, n.drained])), good, 'nodes unchanged');
  t.equal((await f.call('getSlot', NEW_TOKEN)).status, 200, 'token table unchanged');
  t.equal((await f.call('', NEW_TOKEN, batch)).status, 413, 'limits unchanged');

  // A live change the file does not touch survives a reload.
  await admin(f.gw, '/admin/nodes/n0', { method: 'PATCH', body: '{"weight":3}' });
  // Nodes: n0 leaves, n2 arrives, n1 stays at weight 0.
  f.write([...BASE, nodes([`{ id: n1, url: "${s1!.url}", weight: 0 }`, `{ id: n2, url: "${s2!.url}" }`]), `tokens: [{ token: ${NEW_TOKEN}, stack: t }]`]);
  const moved = await admin(f.gw, '/admin/reload', { method: 'POST' });
  t.equal(moved.status, 200, moved.text);
  t.same(moved.json.nodes, { added: ['n2'], removed: ['n0'], replaced: [], weights: {} });
  t.same(moved.json.applied, ['nodes.n0', 'nodes.n2', 'limits.maxBatch'], 'n0 removed, n2 added, maxBatch back to its default');
  t.same(moved.json.changes['nodes.n2'], { from: null, to: { id: 'n2', url: s2!.url + '/', weight: 1 } }, 'an added node, as resolved');
  const list = (await admin(f.gw, '/admin/nodes')).json as any[];
  t.same(
    list.map((n) => [n.id, n.state, n.weight]),
    [
      ['n1', 'healthy', 0],
      ['n2', 'healthy', 1],
    ],
  );
  t.ok(list[1].slot > 0, 'the new node was probed before taking traffic');
  t.same(new Set(await identities({ call: (m) => f.call(m, NEW_TOKEN) }, 50)), new Set(['n2']), 'the new node takes the traffic');
  t.equal((await f.call('', NEW_TOKEN, batch)).status, 200);

  // Same id, new url: the node is replaced.
  f.write([...BASE, nodes([`{ id: n1, url: "${s1!.url}", weight: 0 }`, `{ id: n2, url: "${s0!.url}" }`]), `tokens: [{ token: ${NEW_TOKEN}, stack: t }]`]);
  const replaced = await admin(f.gw, '/admin/reload', { method: 'POST' });
  t.same(replaced.json.nodes, { added: [], removed: [], replaced: ['n2'], weights: {} });
  const who = await f.call('getIdentity', NEW_TOKEN);
  t.equal(who.node, 'n2');
  t.equal(who.json.result.identity, 'n0', 'n2 now points at the first sim');
});

t.test('reload removes a node only after its in-flight requests finish', async (t) => {
  const [s0, s1] = await sims(t, 2);
  // One request per connection: see 'draining a node does not drop its in-flight requests'.
  const f = await fileGateway(t, [
    ...BASE,
    `nodes: [{ id: n0, url: "${s0!.url}" }, { id: n1, url: "${s1!.url}", weight: 0 }]`,
    `tokens: [{ token: ${TOKEN}, stack: t }]`,
    'upstream: { pipelining: 1 }',
  ]);
  s0!.set({ latencyMs: [400, 500] });
  const inflight = Array.from({ length: 8 }, () => f.call('getIdentity'));
  await eventually('eight requests in flight at n0', () => f.gw.pool.byId('n0')!.inflight === 8);
  t.equal(f.gw.pool.byId('n0')!.inflight, 8);
  f.write([...BASE, `nodes: [{ id: n1, url: "${s1!.url}" }]`, `tokens: [{ token: ${TOKEN}, stack: t }]`]);
  const r = await admin(f.gw, '/admin/reload', { method: 'POST' });
  t.same(r.json.nodes, { added: [], removed: ['n0'], replaced: [], weights: { n1: { from: 0, to: 1 } } });
  t.equal((await f.call('getIdentity')).node, 'n1', 'new requests go to the remaining node');
  const answers = await Promise.all(inflight);
  t.same(
    answers.map((a) => [a.status, a.node]),
    Array(8).fill([200, 'n0']),
    'the removed node answered everything it had',
  );
});

t.test('reload without a config file (demo mode) is 409', async (t) => {
  const h = await withAdmin(t, { sims: [{}] });
  const r = await admin(h.gw, '/admin/reload', { method: 'POST' });
  t.equal(r.status, 409);
  t.match(r.json.error, /started without --config/);
});

// ---------------------------------------------------------------------------------------------
// CLI

t.test('CLI: nodes, set-weight, drain, undrain, reload against a running gateway', async (t) => {
  const h = await withAdmin(t);
  await identities(h, 20);
  const base = ['--admin', h.gw.admin!.url];
  const env = { JUMPGATE_ADMIN_TOKEN: ADMIN };
  const run = async (args: string[], e: NodeJS.ProcessEnv = env): Promise<{ code: number | null; out: string }> => {
    const p = runCli(args, { env: e });
    const code = await p.exited;
    return { code, out: p.out() };
  };

  const list = await run(['nodes', ...base]);
  t.equal(list.code, 0, list.out);
  const rows = list.out.trim().split('\n');
  t.match(rows[0], /^ID\s+STATE\s+WEIGHT\s+DRAINED\s+SLOT\s+LAG\s+REQ\/S\s+INFLIGHT\s+P50 MS\s+P99 MS$/);
  t.match(rows[1], /^n0\s+healthy\s+1\s+no\s+\d{9,}\s+\d+\s+\d+\s+0\s+[\d.]+\s+[\d.]+$/);
  t.match(rows[2], /^n1\s+healthy\s+1\s+no\s+/);
  const json = await run(['nodes', '--json', ...base]);
  t.same(
    JSON.parse(json.out).map((n: any) => n.id),
    ['n0', 'n1'],
  );

  const sw = await run(['nodes', 'set-weight', 'n1', '0', '--token', ADMIN, ...base], {});
  t.equal(sw.code, 0, sw.out);
  t.match(sw.out, /^node n1: weight 0, not drained, state healthy$/m);
  t.equal(h.gw.pool.byId('n1')!.weight, 0, 'token from --token works');
  t.equal(count(await identities(h, 50), 'n1'), 0);

  const dr = await run(['nodes', 'drain', 'n0', ...base]);
  t.equal(dr.code, 0);
  t.match(dr.out, /node n0: weight 1, drained/);
  t.equal(h.gw.pool.byId('n0')!.drained, true);
  const ud = await run(['nodes', 'undrain', 'n0', ...base]);
  t.equal(ud.code, 0);
  t.equal(h.gw.pool.byId('n0')!.drained, false);

  // Errors.
  const noToken = await run(['nodes', ...base], {});
  t.equal(noToken.code, 1);
  t.match(noToken.out, /^jumpgate nodes: admin API: HTTP 401: missing admin token.*\(pass --token or set JUMPGATE_ADMIN_TOKEN\)$/m);
  const unknown = await run(['nodes', 'drain', 'zz', ...base]);
  t.equal(unknown.code, 1);
  t.match(unknown.out, /HTTP 404: no node "zz"/);
  const badWeight = await run(['nodes', 'set-weight', 'n0', 'heavy', ...base]);
  t.equal(badWeight.code, 2);
  t.match(badWeight.out, /WEIGHT must be a number >= 0, got "heavy"/);
  const missingArg = await run(['nodes', 'drain', ...base]);
  t.equal(missingArg.code, 2);
  t.match(missingArg.out, /expected: jumpgate nodes drain ID/);
  const badSub = await run(['nodes', 'frob', ...base]);
  t.equal(badSub.code, 2);
  t.match(badSub.out, /unknown nodes command "frob"/);
  const badUrl = await run(['nodes', '--admin', 'not a url']);
  t.equal(badUrl.code, 2);
  const port = await freePort();
  const down = await run(['nodes', '--admin', `http://127.0.0.1:${port}`]);
  t.equal(down.code, 1);
  t.match(
    down.out,
    new RegExp(
      `^jumpgate nodes: admin API not reachable at http://127\\.0\\.0\\.1:${port} \\(ECONNREFUSED\\); is jumpgate running with admin\\.port set\\?$`,
      'm',
    ),
  );
  const reload = await run(['reload', ...base]);
  t.equal(reload.code, 1);
  t.match(reload.out, /jumpgate reload: admin API: HTTP 409: nothing to reload/);
});

t.test('CLI: SIGHUP and `jumpgate reload` re-read the file of a running gateway', async (t) => {
  const [s0, s1] = await sims(t, 2);
  const dir = mkdtempSync(join(tmpdir(), 'jg-hup-'));
  const file = join(dir, 'jumpgate.yaml');
  const adminPort = await freePort();
  const lines = (token: string, w1: number): string =>
    [
      'rpc: { port: 0, wsPort: 0 }',
      'console: { port: 0 }',
      "store: { url: 'sqlite://:memory:' }",
      'offload: { threads: 0 }',
      `admin: { port: ${adminPort}, token: \${ADMIN_TOKEN} }`,
      `nodes: [{ id: n0, url: "${s0!.url}" }, { id: n1, url: "${s1!.url}", weight: ${w1} }]`,
      `tokens: [{ token: ${token}, stack: t }]`,
    ].join('\n');
  writeFileSync(file, lines(TOKEN, 1));
  const p = runCli(['start', '--config', file], { env: { ADMIN_TOKEN: ADMIN } });
  t.teardown(() => p.child.kill('SIGKILL'));
  const [, rpcPort] = await p.waitFor(/"port":(\d+).*rpc listening/);
  await p.waitFor(/admin listening/);
  const rpc = (token: string): Promise<number> =>
    fetch(`http://127.0.0.1:${rpcPort}/api-token/${token}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"jsonrpc":"2.0","id":1,"method":"getSlot"}',
    }).then((r) => r.status);
  t.equal(await rpc(TOKEN), 200);
  t.equal(await rpc(NEW_TOKEN), 401);

  writeFileSync(file, lines(NEW_TOKEN, 1));
  p.child.kill('SIGHUP');
  await p.waitFor(/"msg":"config reloaded"/);
  t.equal(await rpc(NEW_TOKEN), 200, 'SIGHUP applied the new token');
  t.equal(await rpc(TOKEN), 401);

  writeFileSync(file, 'nodes: [{ id: n0, url: "http://127.0.0.1:1", weight: -1 }]\n');
  p.child.kill('SIGHUP');
  await p.waitFor(/config reload refused; nothing changed/);
  t.match(p.out(), /nodes\[0\]\.weight/);
  t.equal(await rpc(NEW_TOKEN), 200, 'a bad file on SIGHUP changes nothing');
  t.equal(p.child.exitCode, null, 'and the gateway keeps running');

  writeFileSync(file, lines(NEW_TOKEN, 0));
  const cli = runCli(['reload', '--admin', `http://127.0.0.1:${adminPort}`], { env: { JUMPGATE_ADMIN_TOKEN: ADMIN } });
  t.equal(await cli.exited, 0, cli.out());
  const summary = JSON.parse(cli.out());
  t.same(summary.nodes.weights, { n1: { from: 1, to: 0 } });
  const nodes = runCli(['nodes', '--admin', `http://127.0.0.1:${adminPort}`], { env: { JUMPGATE_ADMIN_TOKEN: ADMIN } });
  t.equal(await nodes.exited, 0);
  t.match(nodes.out(), /^n1\s+healthy\s+0\s+yes\s/m);

  p.child.kill('SIGTERM');
  t.equal(await p.exited, 0);
  t.notMatch(p.out(), new RegExp(ADMIN), 'the admin token is never logged');
});
