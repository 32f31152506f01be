// Two data-plane worker threads behind one port (README "Architecture"): what a user sees is
// the same as with one event loop. Requests go over fresh connections so the kernel spreads
// them over both workers (SO_REUSEPORT); each test checks that both workers served some.

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { hashPassword } from '../../src/accounts/password.js';
import { openStore } from '../../src/store/open.js';
import { eventually } from '../helpers/eventually.js';
import { startHarness, TOKEN, type Harness } from '../helpers/gateway.js';
import { openWs } from '../helpers/ws-client.js';

type Test = Parameters<Parameters<typeof t.test>[0]>[0];

const ADMIN = 'admin-token-0123456789abcdef';
const GET_SLOT = '{"jsonrpc":"2.0","id":1,"method":"getSlot"}';

async function workersHarness(t: Test, config: Record<string, unknown> = {}, admin = false): Promise<Harness> {
  const h = await startHarness({ sims: [{}, {}], admin, config: { rpc: { workers: 2 }, admin: { token: ADMIN }, ...config } });
  t.teardown(() => h.close());
  return h;
}

/** One call on a connection of its own (a new connection may land on either worker). */
async function fresh(
  url: string,
  token: string,
  headers: Record<string, string> = {},
  body = GET_SLOT,
): Promise<{ status: number; node: string | null; text: string }> {
  const r = await fetch(`${url}/api-token/${token}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', connection: 'close', ...headers },
    body,
  });
  return { status: r.status, node: r.headers.get('x-service-node'), text: await r.text() };
}

async function many(n: number, url: string, token = TOKEN, headers: Record<string, string> = {}): Promise<{ status: number; node: string | null }[]> {
  const out: { status: number; node: string | null }[] = [];
  // A few at a time: enough for the kernel to use both workers, few enough for two cores.
  for (let i = 0; i < n; i += 10) out.push(...(await Promise.all(Array.from({ length: Math.min(10, n - i) }, () => fresh(url, token, headers)))));
  return out;
}

async function bothWorkersServed(t: Test, h: Harness): Promise<void> {
  await eventually(
    () => `requests reported by both workers (${JSON.stringify(h.gw.dataPlane.requestsByWorker())})`,
    () => h.gw.dataPlane.requestsByWorker().every((n) => n > 0),
    5000,
  );
  t.pass(`both workers served requests: ${JSON.stringify(h.gw.dataPlane.requestsByWorker())}`);
}

function admin(h: Harness, path: string, init: RequestInit = {}): Promise<Response> {
  return fetch(h.gw.admin!.url + path, { ...init, headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json', ...(init.headers ?? {}) } });
}

t.test('two workers share the port; every answer is right and both serve', async (t) => {
  const h = await workersHarness(t);
  t.equal(h.gw.dataPlane.workers, 2);
  const answers = await many(60, h.url);
  t.ok(
    answers.every((a) => a.status === 200),
    '60 calls answered',
  );
  await bothWorkersServed(t, h);
});

t.test('a key maps to the same node in every worker, and its fallback too', async (t) => {
  const h = await workersHarness(t, {}, true);
  const keys = ['alpha', 'bravo', 'charlie', 'delta'];
  for (const key of keys) {
    const nodes = new Set((await many(20, h.url, TOKEN, { 'x-service-affinity': 'key', 'x-service-affinity-key': key })).map((a) => a.node));
    t.equal(nodes.size, 1, `${key}: one node over 20 connections (${[...nodes].join(',')})`);
  }
  await bothWorkersServed(t, h);
  // Drain the node of the first key: every worker moves the key to the same fallback.
  const first = (await fresh(h.url, TOKEN, { 'x-service-affinity': 'key', 'x-service-affinity-key': 'alpha' })).node!;
  t.equal((await admin(h, `/admin/nodes/${first}`, { method: 'PATCH', body: JSON.stringify({ drained: true }) })).status, 200);
  await eventually('every worker routes alpha away from the drained node', async () => {
    const nodes = new Set((await many(20, h.url, TOKEN, { 'x-service-affinity': 'key', 'x-service-affinity-key': 'alpha' })).map((a) => a.node));
    return nodes.size === 1 && !nodes.has(first);
  });
  t.pass('the drain reached every worker and they agree on the fallback');
});

t.test('store tokens reach every worker: created, deactivated, deleted', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'jg-workers-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const h = await workersHarness(t, { store: { url: `sqlite://${join(dir, 'store.db')}` } });
  const store = h.gw.store!;
  const account = await store.createAccount('w@example.com', await hashPassword('pw'));
  const stack = await store.createStack(account.id, 'main', null);
  const { token, record } = await store.createToken(account.id, stack.id, 'bot');
  const seenAfterChange = async (what: string, status: number): Promise<void> => {
    // The time is shown, not compared: the store is polled every 500 ms; ten polls' deadline.
    const started = performance.now();
    await eventually(`${what}: every connection gets ${status}`, async () => (await many(10, h.url, token)).every((a) => a.status === status), 5000, 50);
    t.pass(`${what}: ${status} on every connection after ${Math.round(performance.now() - started)} ms`);
  };
  await seenAfterChange('created', 200);
  await store.setTokenActive(account.id, record.id, false);
  await seenAfterChange('deactivated', 403);
  await store.setTokenActive(account.id, record.id, true);
  await seenAfterChange('reactivated', 200);
  await store.deleteToken(account.id, record.id);
  await seenAfterChange('deleted', 401);
  await bothWorkersServed(t, h);
});

t.test('usage is counted once across workers, and a drain loses no count', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'jg-workers-usage-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const url = `sqlite://${join(dir, 'store.db')}`;
  // No pipelining: the nodes turn slow below, and a uWS node drops pipelined connections.
  const h = await startHarness({ sims: [{}, {}], config: { rpc: { workers: 2 }, store: { url }, upstream: { pipelining: 1 } } });
  t.teardown(() => h.close());
  const store = h.gw.store!;
  const account = await store.createAccount('u@example.com', await hashPassword('pw'));
  const stack = await store.createStack(account.id, 'main', null);
  const { token } = await store.createToken(account.id, stack.id, 'bot');
  // Until the token reached every worker some calls get 401 (not the token's usage): count the 200s.
  let warm = 0;
  await eventually(
    'the token in every worker',
    async () => {
      const round = await many(10, h.url, token);
      warm += round.filter((a) => a.status === 200).length;
      return round.every((a) => a.status === 200);
    },
    3000,
  );
  const settled = await many(40, h.url, token);
  t.ok(
    settled.every((a) => a.status === 200),
    '40 calls answered',
  );
  await bothWorkersServed(t, h);
  // 40 more are still at the nodes when the drain starts: they finish and are counted.
  for (const s of h.sims) s.set({ latencyMs: [300, 400] });
  const callsBefore = h.sims.reduce((n, s) => n + s.stats.calls, 0);
  const flying = Array.from({ length: 40 }, () => fresh(h.url, token));
  await eventually('40 calls at the nodes', () => h.sims.reduce((n, s) => n + s.stats.calls, 0) - callsBefore >= 40, 5000, 5);
  const draining = h.gw.drain(5000);
  const late = await Promise.all(flying);
  await draining;
  t.ok(
    late.every((a) => a.status === 200),
    'the 40 in flight at the drain are answered',
  );
  const reopened = await openStore(url);
  t.teardown(() => reopened.close());
  const overview = await reopened.overview(account.id, stack.id, Date.now());
  t.equal(overview.calls24h, 80 + warm, `every call counted once: ${overview.calls24h}`);
  const analytics = await reopened.analytics(account.id, stack.id, '1h', Date.now());
  t.equal(
    analytics.methods.reduce((n, m) => n + m.calls, 0),
    overview.calls24h,
    'RPC analytics agrees with the overview',
  );
});

t.test('admin and /metrics show one view: attempts add up over workers, probes do not multiply', async (t) => {
  const h = await workersHarness(t, { health: { intervalMs: 200 } }, true);
  const before = h.sims.map((s) => s.stats.byMethod.get('getHealth') ?? 0);
  const started = performance.now();
  await many(40, h.url);
  await bothWorkersServed(t, h);
  await eventually('the admin view counts every attempt', async () => {
    const nodes = (await (await admin(h, '/admin/nodes')).json()) as { requests: number }[];
    return nodes.reduce((n, x) => n + x.requests, 0) >= 40;
  });
  const nodes = (await (await admin(h, '/admin/nodes')).json()) as { id: string; requests: number; latency: { count: number } }[];
  t.equal(
    nodes.reduce((n, x) => n + x.requests, 0),
    40,
    'attempts over both workers: 40',
  );
  t.ok(nodes.reduce((n, x) => n + x.latency.count, 0) === 40, 'latency histograms merged');
  const metrics = await (await admin(h, '/metrics')).text();
  const served = [...metrics.matchAll(/^jumpgate_requests_total\{method="getSlot",status="200",node="[^"]+"\} (\d+)$/gm)].reduce((n, m) => n + Number(m[1]), 0);
  t.equal(served, 40, '/metrics counts 40 getSlot answers');
  const seconds = (performance.now() - started) / 1000;
  const probes = h.sims.map((s, i) => (s.stats.byMethod.get('getHealth') ?? 0) - before[i]!);
  const perNodePerSecond = Math.max(...probes) / seconds;
  t.ok(perNodePerSecond <= 1.5 * (1000 / 200), `one prober: ${perNodePerSecond.toFixed(1)} probes/s per node at a 200 ms interval`);
});

t.test('WebSocket subscriptions work on every worker', async (t) => {
  const h = await workersHarness(t, {}, true);
  const wsUrl = `${h.url.replace('http', 'ws')}/api-token/${TOKEN}/`;
  const clients = await Promise.all(Array.from({ length: 6 }, () => openWs(wsUrl)));
  t.teardown(() => {
    for (const c of clients) c.close();
  });
  for (const c of clients) c.send({ jsonrpc: '2.0', id: 1, method: 'slotSubscribe' });
  await Promise.all(clients.map((c) => c.next((f) => f.method === 'slotNotification')));
  t.pass('6 clients get slot notifications');
  await eventually(
    'the admin view counts the connections of both workers',
    async () => ((await (await admin(h, '/admin/ws')).json()) as { connections: number }).connections === 6,
  );
  t.pass('admin /admin/ws: 6 connections');
});

t.test('hot-key limits hold for the whole gateway: one connection or eight over both workers', async (t) => {
  // A burst of a second's worth: a client paused by a loaded machine loses no refill to the cap.
  // Low enough that one connection sending call after call passes it on the slower Node listener
  // too (Node 26: about 240 calls a second from one client on a busy machine).
  const rate = 100;
  const burst = 100;
  const h = await workersHarness(t, { affinity: { keyRate: rate, keyBurst: burst } });
  const { Agent } = await import('undici');
  const headers = { 'content-type': 'application/json', 'x-service-affinity': 'key', 'x-service-affinity-key': 'hot' };
  /** `clients` keep-alive connections, each sending one call after another for `ms`; counts the 200s. */
  const hammer = async (clients: number, key: string, ms: number): Promise<{ ok: number; limited: number; seconds: number }> => {
    const agents = Array.from({ length: clients }, () => new Agent({ connections: 1 }));
    let ok = 0;
    let limited = 0;
    const started = performance.now();
    await Promise.all(
      agents.map(async (dispatcher) => {
        while (performance.now() - started < ms) {
          const r = await fetch(`${h.url}/api-token/${TOKEN}`, {
            method: 'POST',
            headers: { ...headers, 'x-service-affinity-key': key },
            body: GET_SLOT,
            dispatcher,
          } as RequestInit);
          await r.arrayBuffer();
          if (r.status === 200) ok++;
          else if (r.status === 429) limited++;
        }
      }),
    );
    const seconds = (performance.now() - started) / 1000;
    await Promise.all(agents.map((a) => a.close()));
    return { ok, limited, seconds };
  };
  const byWorker = (): number[] => h.gw.dataPlane.requestsByWorker();
  const total = (): number => byWorker().reduce((a, b) => a + b, 0);
  // Workers report once a second: a round's counts are read once every call sent so far is in.
  let sent = total();
  const reported = (): Promise<void> =>
    eventually(
      () => `${sent} requests reported (${total()})`,
      () => total() >= sent,
      5000,
    );
  // The kernel spreads connections over the workers; now and then it gives all eight to one,
  // and such a round tests one worker's limit only: it is run again, new connections, new key.
  for (let round = 0; ; round++) {
    const clients = round === 0 ? 1 : 8;
    await reported();
    const before = byWorker();
    const r = await hammer(clients, `${clients}-connections-${round}`, 3000);
    sent += r.ok + r.limited;
    const allowed = burst + rate * r.seconds;
    t.ok(r.limited > 0, `${clients} client(s): the limit was reached (${r.limited} refused)`);
    t.ok(
      Math.abs(r.ok - allowed) <= 0.1 * allowed,
      `${clients} client(s): ${r.ok} answered in ${r.seconds.toFixed(2)} s, allowed ${Math.round(allowed)} (±10%)`,
    );
    if (clients === 1) continue;
    await reported();
    const served = byWorker().map((n, i) => n - before[i]!);
    if (served.every((n) => n > 0) || round === 4) {
      t.ok(
        served.every((n) => n > 0),
        `eight connections: both workers served the round (${JSON.stringify(served)})`,
      );
      break;
    }
  }
});

t.test('a reload reaches every worker before it answers: nodes, weights, limits', async (t) => {
  const { mkdtempSync: mk, writeFileSync } = await import('node:fs');
  const { startGateway } = await import('../../src/lifecycle/start-gateway.js');
  const { loadConfig } = await import('../../src/config/load.js');
  const { silentLogger } = await import('../../src/log.js');
  const { startSim } = await import('../../src/tools/sim/node.js');
  const sims = await Promise.all([0, 1].map((i) => startSim({ id: `n${i}`, port: 0 })));
  t.teardown(() => Promise.all(sims.map((s) => s.close())));
  const dir = mk(join(tmpdir(), 'jg-workers-reload-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const file = join(dir, 'jumpgate.yaml');
  const base = [
    'rpc: { port: 0, wsPort: 0, workers: 2 }',
    'console: { port: 0 }',
    "store: { url: 'sqlite://:memory:' }",
    'offload: { threads: 0 }',
    'log: { level: silent }',
    `admin: { port: 0, token: ${ADMIN} }`,
    `tokens: [{ token: ${TOKEN}, stack: t }]`,
  ];
  writeFileSync(file, [...base, `nodes: [{ id: n0, url: "${sims[0]!.url}" }]`].join('\n'));
  const gw = await startGateway(loadConfig(file), { log: silentLogger(), configPath: file, adminEphemeral: true });
  t.teardown(() => gw.close());
  t.same(new Set((await many(20, gw.url)).map((a) => a.node)), new Set(['n0']), 'before: n0 only');
  writeFileSync(file, [...base, `nodes: [{ id: n1, url: "${sims[1]!.url}" }]`, 'affinity: { keyRate: 1, keyBurst: 1 }'].join('\n'));
  const r = await fetch(gw.admin!.url + '/admin/reload', { method: 'POST', headers: { authorization: `Bearer ${ADMIN}` } });
  t.equal(r.status, 200);
  const answers = await many(20, gw.url);
  t.same(new Set(answers.map((a) => a.node)), new Set(['n1']), 'right after the reload answered, every worker routes to n1');
  const keyed = await many(6, gw.url, TOKEN, { 'x-service-affinity': 'key', 'x-service-affinity-key': 'k' });
  t.equal(keyed.filter((a) => a.status === 200).length, 1, 'the reloaded hot-key limit (burst 1) holds across workers');
  t.ok(gw.dataPlane.requestsByWorker().length === 2, 'two workers');
});

t.test('a second gateway on the same address fails to start, even though workers share the port', async (t) => {
  const { createServer } = await import('node:net');
  const { startGateway } = await import('../../src/lifecycle/start-gateway.js');
  const { resolveConfig } = await import('../../src/config/load.js');
  const { silentLogger } = await import('../../src/log.js');
  const probe = createServer();
  const port = await new Promise<number>((resolve) => probe.listen(0, '127.0.0.1', () => resolve((probe.address() as { port: number }).port)));
  await new Promise((r) => probe.close(r));
  const h = await workersHarness(t, { rpc: { workers: 2, port } });
  for (const workers of [2, 0]) {
    const config = resolveConfig(
      {
        rpc: { host: '127.0.0.1', port, wsPort: 0, workers },
        console: { port: 0 },
        admin: { port: 0 },
        offload: { threads: 0 },
        nodes: [{ id: 'n0', url: h.sims[0]!.url }],
      },
      {},
    );
    await t.rejects(
      startGateway(config, { log: silentLogger(), store: null }),
      /cannot listen on 127\.0\.0\.1:\d+ \(address in use/,
      `a second gateway (workers ${workers}) is refused`,
    );
  }
  t.equal((await fresh(h.url, TOKEN)).status, 200, 'the first still serves');
});
