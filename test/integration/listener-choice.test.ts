// `jumpgate start` picks its listener as docs/runtimes.md says, end to end: rpc.server node
// serves on Node's http, uws where a uWebSockets.js binary loads; where none loads (Node 26),
// auto falls back to Node's listener and rpc.server uws stops the start with the reason.
// The start log, /admin/status and the wire (uWS's own answer header) agree.

import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { stringify } from 'yaml';
import { uwsLoad } from '../../src/server/engine.js';
import { startSim } from '../../src/tools/sim/node.js';
import { runCli } from '../helpers/cli.js';
import { startInstance } from '../helpers/instances.js';

type Test = Parameters<Parameters<typeof t.test>[0]>[0];

const ADMIN = 'listener-admin-token-0123456789';
const TOKEN = 'listener-token-0123456789abcdef';
const dir = mkdtempSync(join(tmpdir(), 'jg-listener-'));
const sim = await startSim({ id: 'n', port: 0 });
t.teardown(() => sim.close());
const uws = uwsLoad();

const config = (server: string) => ({
  rpc: { port: 0, wsPort: 0, workers: 1, server },
  console: { port: 0 },
  offload: { threads: 0 },
  store: { url: `sqlite://${join(dir, `${server}.db`)}` },
  nodes: [{ id: 'n', url: sim.url }],
  tokens: [{ token: TOKEN, stack: 'listener' }],
});

/** Starts with rpc.server `server` and checks every place that names the listener. */
async function servesWith(t: Test, server: string, engine: 'uws' | 'node'): Promise<void> {
  const gw = await startInstance({ dir, name: `gw-${server}`, adminToken: ADMIN, config: config(server), env: { JUMPGATE_SERVER: '' } });
  t.teardown(() => gw.proc.child.kill('SIGKILL'));
  t.match(gw.proc.out(), new RegExp(`"server":"${engine}","serverReason":"[^"]+"[^\\n]*"msg":"rpc listening"`), 'the start log names it');
  const status = JSON.parse((await gw.admin('/admin/status')).text) as { listener: { engine: string; reason: string } };
  t.equal(status.listener.engine, engine, `/admin/status: ${status.listener.reason}`);
  const res = await fetch(gw.rpcUrl(TOKEN), {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: '{"jsonrpc":"2.0","id":1,"method":"getSlot"}',
  });
  t.equal(res.status, 200, 'a call is served');
  t.match(await res.text(), /"result":\d+/);
  t.equal(res.headers.has('uwebsockets'), engine === 'uws', 'uWS marks its answers; Node does not');
}

t.test("rpc.server node: Node's listener, on any runtime", async (t) => {
  await servesWith(t, 'node', 'node');
});

t.test('auto: uWS where a binary loads, else Node with the reason', async (t) => {
  await servesWith(t, 'auto', uws.ok ? 'uws' : 'node');
});

t.test('rpc.server uws: serves where a binary loads; elsewhere the start fails with the reason', async (t) => {
  if (uws.ok) return servesWith(t, 'uws', 'uws');
  const file = join(dir, 'uws.yaml');
  writeFileSync(file, stringify({ ...config('uws'), admin: { port: 0 } }));
  const p = runCli(['start', '--config', file], { env: { JUMPGATE_SERVER: '' } });
  t.teardown(() => p.child.kill('SIGKILL'));
  t.equal(await p.exited, 2, 'exit status 2, as any config error');
  t.match(p.out(), /config: rpc\.server is uws, but no uWebSockets\.js binary for Node\.js [\d.]+ \(ABI \d+, /);
  t.match(p.out(), /set rpc\.server to auto or node \(docs\/runtimes\.md\)/);
  t.notMatch(p.out(), /rpc listening/, 'nothing listened');
});
