// The operator's first steps, as a new user runs them: the demo prints a working curl, a
// wrong token gets 401/7401, SIGTERM finishes in-flight requests and exits 0, config errors
// name the field.

import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { startSim } from '../../src/tools/sim/node.js';
import { openStore } from '../../src/store/open.js';
import { runCli } from '../helpers/cli.js';
import { eventually, eventuallyValue } from '../helpers/eventually.js';
import { startHarness, TOKEN } from '../helpers/gateway.js';
import { seedStore } from '../helpers/seeded-store.js';
import { openWs } from '../helpers/ws-client.js';

const GET_SLOT = '{"jsonrpc":"2.0","id":1,"method":"getSlot"}';

t.test('demo: printed curl returns a slot; wrong token is 401 with code 7401', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'jg-demo-'));
  const p = runCli(['start', '--port', '0', '--data', join(dir, 'data')], { cwd: dir });
  t.teardown(() => p.child.kill('SIGKILL'));
  const [, url] = await p.waitFor(/curl -s (http:\/\/127\.0\.0\.1:\d+\/api-token\/\S+) -H 'Content-Type: application\/json'/);
  const ok = await fetch(url!, { method: 'POST', headers: { 'content-type': 'application/json' }, body: GET_SLOT });
  t.equal(ok.status, 200);
  const json = (await ok.json()) as { result: number };
  t.type(json.result, 'number');
  t.ok(json.result > 300_000_000, 'a plausible slot');
  const bad = await fetch(url!.replace(/api-token\/.*/, 'api-token/wrong-token-0000000000'), {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: GET_SLOT,
  });
  t.equal(bad.status, 401);
  t.equal(((await bad.json()) as { error: { code: number } }).error.code, 7401);
  const logLines = p
    .out()
    .split('\n')
    .filter((l) => l.startsWith('{'));
  t.ok(logLines.length > 0, 'structured JSON log lines');
  t.notMatch(logLines.join('\n'), /wrong-token-0000000000/, 'the presented token is not logged');
  // The demo token is kept: a restart prints the same one.
  p.child.kill('SIGTERM');
  t.equal(await p.exited, 0, 'SIGTERM exits 0');
  const p2 = runCli(['start', '--port', '0', '--data', join(dir, 'data')], { cwd: dir });
  t.teardown(() => p2.child.kill('SIGKILL'));
  const [, url2] = await p2.waitFor(/curl -s (http:\/\/127\.0\.0\.1:\d+\/api-token\/\S+) -H/);
  t.equal(url2!.split('/api-token/')[1], url!.split('/api-token/')[1], 'same demo token after restart');
});

t.test('SIGTERM: stop accepting, finish in-flight requests, exit 0', async (t) => {
  const sim = await startSim({ id: 'slow', port: 0, latencyMs: [600, 700] });
  t.teardown(() => sim.close());
  const dir = mkdtempSync(join(tmpdir(), 'jg-term-'));
  const cfg = join(dir, 'jumpgate.yaml');
  writeFileSync(
    cfg,
    [
      'rpc: { port: 0, wsPort: 0 }',
      'console: { port: 0 }',
      'admin: { port: 0 }',
      'offload: { threads: 0 }',
      // No balancer to wait for (docs/instances.md "Running several instances"): drain at once.
      'shutdown: { readyDelayMs: 0 }',
      `store: { url: "sqlite://${join(dir, 'jumpgate.db')}" }`,
      `nodes: [{ id: slow, url: "${sim.url}" }]`,
      'tokens: [{ token: ${TERM_TOKEN}, stack: t }]',
    ].join('\n'),
  );
  const token = 'term-token-0123456789abcdef';
  const p = runCli(['start', '--config', cfg], { env: { TERM_TOKEN: token } });
  t.teardown(() => p.child.kill('SIGKILL'));
  const [, port] = await p.waitFor(/"port":(\d+)/);
  const url = `http://127.0.0.1:${port}/api-token/${token}`;
  const inflight = Array.from({ length: 20 }, () => fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: GET_SLOT }));
  // Health probes send getSlot too, one per getHealth.
  const clientCalls = (): number => (sim.stats.byMethod.get('getSlot') ?? 0) - (sim.stats.byMethod.get('getHealth') ?? 0);
  await eventually('the 20 requests to reach the node', () => clientCalls() >= 20);
  p.child.kill('SIGTERM');
  const answers = await Promise.all(inflight);
  t.same(
    answers.map((r) => r.status),
    Array(20).fill(200),
    'all in-flight requests answered',
  );
  for (const r of answers) t.type(((await r.json()) as { result: unknown }).result, 'number');
  t.equal(await p.exited, 0, 'exit code 0');
  await t.rejects(fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: GET_SLOT }), 'no longer accepting');
  t.notMatch(p.out(), new RegExp(token), 'token never logged');
});

t.test('config errors name the field and exit 2', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'jg-cfg-'));
  const cfg = join(dir, 'bad.yaml');
  writeFileSync(cfg, 'nodes:\n  - { id: a, url: "http://127.0.0.1:1", weight: -1 }\nlimits: { maxBatch: 0 }\n');
  const p = runCli(['start', '--config', cfg]);
  t.equal(await p.exited, 2);
  t.match(p.out(), /nodes\[0\]\.weight/);
  t.match(p.out(), /limits\.maxBatch/);
  const typo = join(dir, 'typo.yaml');
  writeFileSync(typo, 'rpcc: {}\n');
  const q = runCli(['start', '--config', typo]);
  t.equal(await q.exited, 2);
  t.match(q.out(), /unknown key "rpcc".*did you mean "rpc"/);
  const missing = runCli(['start', '--config', join(dir, 'nope.yaml')]);
  t.equal(await missing.exited, 2);
  t.match(missing.out(), /nope\.yaml/);
  const noNodes = join(dir, 'empty.yaml');
  writeFileSync(noNodes, '{}\n');
  const empty = runCli(['start', '--config', noNodes]);
  t.equal(await empty.exited, 2);
  t.match(empty.out(), /nodes: at least one node/);
  const usage = runCli(['frobnicate']);
  t.equal(await usage.exited, 2);
  t.match(usage.out(), /unknown command "frobnicate"/);
});

t.test('demo: the printed WS URL streams slots, and dropping the serving node does not stop them', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'jg-demo-ws-'));
  const p = runCli(['start', '--port', '0', '--data', join(dir, 'data')], { cwd: dir });
  t.teardown(() => p.child.kill('SIGKILL'));
  const [, wsUrl] = await p.waitFor(/ ws (ws:\/\/127\.0\.0\.1:\d+\/api-token\/\S+\/)/);
  const [, admin, adminToken] = await p.waitFor(/--admin (http:\/\/127\.0\.0\.1:\d+) --token (\S+)/);
  const c = await openWs(wsUrl!);
  t.teardown(() => c.close());
  c.send({ jsonrpc: '2.0', id: 1, method: 'slotSubscribe' });
  const id = (await c.next((f) => f.id === 1)).result;
  await c.collect((f) => f.method === 'slotNotification', 2, 5000);
  const auth = { authorization: `Bearer ${adminToken}` };
  // The admin API shows the data-plane workers' figures as of their last report (once a second).
  const ws = await eventuallyValue('the upstream subscription in the admin view', async () => {
    const v = (await (await fetch(`${admin}/admin/ws`, { headers: auth })).json()) as { upstreamSubscriptions: Record<string, number> };
    return Object.keys(v.upstreamSubscriptions).length > 0 ? v : undefined;
  });
  const serving = Object.keys(ws.upstreamSubscriptions)[0]!;
  const nodes = (await (await fetch(`${admin}/admin/nodes`, { headers: auth })).json()) as { id: string; url: string }[];
  const simUrl = nodes.find((n) => n.id === serving)!.url;
  const drop = await fetch(`${simUrl}/sim/control`, { method: 'POST', body: '{"wsDrop":true}' });
  t.equal(drop.status, 200);
  const before = c.frames.filter((f) => f.method === 'slotNotification').length;
  await c.collect((f) => f.method === 'slotNotification', before + 3, 8000);
  t.ok(
    c.frames.filter((f) => f.method === 'slotNotification').every((f) => f.params.subscription === id),
    'same subscription id after the failover',
  );
  await eventually(`the subscription moved off ${serving} in the admin view`, async () => {
    const after = (await (await fetch(`${admin}/admin/ws`, { headers: auth })).json()) as { upstreamSubscriptions: Record<string, number> };
    return !(serving in after.upstreamSubscriptions && after.upstreamSubscriptions[serving]! > 0);
  });
  t.pass(`moved off ${serving}`);
});

t.test('SIGTERM writes the usage counted so far: nothing is lost', async (t) => {
  const sim = await startSim({ id: 'n', port: 0 });
  t.teardown(() => sim.close());
  const { dir, dbUrl, account, stack, token, record } = await seedStore('jg-usage-');
  const cfg = join(dir, 'jumpgate.yaml');
  writeFileSync(
    cfg,
    [
      'rpc: { port: 0, wsPort: 0 }',
      'console: { port: 0 }',
      'admin: { port: 0 }',
      'offload: { threads: 0 }',
      'shutdown: { readyDelayMs: 0 }',
      `store: { url: "${dbUrl}" }`,
      `nodes: [{ id: n, url: "${sim.url}" }]`,
    ].join('\n'),
  );
  const p = runCli(['start', '--config', cfg]);
  t.teardown(() => p.child.kill('SIGKILL'));
  const [, port] = await p.waitFor(/"port":(\d+)/);
  const url = `http://127.0.0.1:${port}/api-token/${token}`;
  const n = 37;
  for (let i = 0; i < n; i++) {
    const r = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: GET_SLOT });
    t.equal(r.status, 200);
  }
  // Well before the 5 s flush: only the shutdown flush can have written these.
  p.child.kill('SIGTERM');
  t.equal(await p.exited, 0);
  const after = await openStore(dbUrl);
  t.teardown(() => after.close());
  const a = await after.analytics(account.id, stack.id, '1h', Date.now(), record.id);
  t.equal(a.methods.find((m) => m.method === 'getSlot')?.calls, n, `all ${n} calls stored`);
  const o = await after.overview(account.id, stack.id, Date.now());
  t.equal(o.calls24h, n);
});

t.test('tokens CLI: create, list, revoke against the store', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'jg-tokens-'));
  const dbUrl = `sqlite://${join(dir, 'jumpgate.db')}`;
  const store = await openStore(dbUrl);
  await store.createAccount('ops@example.com', 'x');
  await store.close();
  const created = runCli(['tokens', 'create', '--stack', 'prod', '--label', 'bot', '--store', dbUrl]);
  t.equal(await created.exited, 0, created.out());
  const token = /jg_[A-Za-z0-9_-]{20,}/.exec(created.out())?.[0];
  t.ok(token, 'the full token is printed once');
  const list = runCli(['tokens', 'list', '--store', dbUrl, '--json']);
  t.equal(await list.exited, 0, list.out());
  const rows = JSON.parse(list.out()) as { id: string; label: string; prefix: string; active: boolean }[];
  t.equal(rows.length, 1);
  t.equal(rows[0]!.label, 'bot');
  t.notMatch(list.out(), new RegExp(token!), 'the list never shows the full token');
  const revoke = runCli(['tokens', 'revoke', rows[0]!.id, '--store', dbUrl]);
  t.equal(await revoke.exited, 0, revoke.out());
  const after = runCli(['tokens', 'list', '--store', dbUrl, '--json']);
  await after.exited;
  t.equal((JSON.parse(after.out()) as { active: boolean }[])[0]!.active, false, 'revoked');
});

t.test('jumpgate ws: a refused upgrade prints its HTTP status and JSON-RPC error body, exit 1', async (t) => {
  const h = await startHarness();
  t.teardown(() => h.close());
  const ws = h.url.replace(/^http/, 'ws');
  const wrong = runCli(['ws', `${ws}/api-token/wrong-token-0000000000/`]);
  const [, status, body] = await wrong.waitFor(/^refused: HTTP (.*)\n(.*)\n/m);
  t.equal(status, '401 Unauthorized');
  t.match(JSON.parse(body!), { jsonrpc: '2.0', error: { code: 7401, data: { reason: 'unknown API token' } }, id: null }, 'the error body, as sent');
  t.equal(await wrong.exited, 1);
  t.notMatch(wrong.out(), /closed: 1006/, 'not the bare close code');
  // The right token still streams: the slotSubscribe answer and a notification, then exit 0.
  const right = runCli(['ws', `${ws}/api-token/${TOKEN}/`, '--count', '2']);
  await right.waitFor(/"method":"slotNotification"/);
  t.equal(await right.exited, 0, right.out());
});
