// The console's numbers add up (docs/usage.md): a known mix of calls (singles and batches
// with node errors, an invalid element, WebSocket calls, a refused subscribe and
// unsubscribe, a keep-alive ping) through a gateway with 1 and 2 data-plane workers and a
// SQLite file store; the console API's overview and analytics show exactly the mix, and twice
// the mix after the gateway restarts on the same file.

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { resolveConfig } from '../../src/config/load.js';
import { startGateway, type Gateway } from '../../src/lifecycle/start-gateway.js';
import { silentLogger } from '../../src/log.js';
import { startSim, type SimNode } from '../../src/tools/sim/node.js';
import { openWs } from '../helpers/ws-client.js';

type Test = Parameters<Parameters<typeof t.test>[0]>[0];

/** A console session: its cookie and CSRF token. */
class Session {
  cookie = '';
  csrf = '';
  constructor(readonly base: string) {}

  async send(method: string, path: string, body?: unknown): Promise<any> {
    const headers: Record<string, string> = { cookie: this.cookie };
    if (body !== undefined) headers['content-type'] = 'application/json';
    if (method !== 'GET') headers['x-csrf-token'] = this.csrf;
    const res = await fetch(this.base + path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
    const set = res.headers.get('set-cookie');
    if (set !== null) this.cookie = set.split(';')[0]!;
    const json = (await res.json()) as any;
    if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${JSON.stringify(json)}`);
    if (typeof json?.csrfToken === 'string') this.csrf = json.csrfToken;
    return json;
  }
}

function startOn(sim: SimNode, storeUrl: string, workers: number): Promise<Gateway> {
  const config = resolveConfig({
    rpc: { host: '127.0.0.1', port: 0, wsPort: 0, workers },
    console: { host: '127.0.0.1', port: 0 },
    admin: { port: 0 },
    store: { url: storeUrl },
    nodes: [{ id: 'n0', url: sim.url, weight: 1 }],
    offload: { threads: 0 },
    log: { level: 'silent' },
  });
  return startGateway(config, { log: silentLogger(), consoleEphemeral: true, tokenSyncIntervalMs: 100 });
}

const CALL = (id: number, method: string, params?: unknown): string =>
  JSON.stringify({ jsonrpc: '2.0', id, method, ...(params === undefined ? {} : { params }) });

/** What one round of the mix books, per method: [calls, errors]. */
const PER_ROUND: Record<string, [number, number]> = {
  getSlot: [4, 0],
  getIdentity: [1, 0],
  nope: [5, 5],
  '(invalid)': [1, 1],
  signatureSubscribe: [1, 1],
  slotUnsubscribe: [1, 1],
};

/** Sends the mix with `token`; returns the bytes the client sent and received. */
async function sendMix(t: Test, gw: Gateway, token: string): Promise<number> {
  let bytes = 0;
  const http = async (body: string, status = 200): Promise<void> => {
    // the token is waiting for the sync to reach the data plane: retry the first call
    const deadline = Date.now() + 10_000;
    for (;;) {
      const res = await fetch(`${gw.url}/api-token/${token}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
      const text = await res.text();
      if (res.status === 401 && Date.now() < deadline) continue;
      t.equal(res.status, status, body);
      bytes += Buffer.byteLength(body) + Buffer.byteLength(text);
      return;
    }
  };
  await http(CALL(1, 'getSlot'));
  await http(CALL(2, 'nope')); // the node answers -32601
  await http(`[${CALL(1, 'getSlot')},${CALL(2, 'nope')},{"bad":true},${CALL(3, 'getIdentity')}]`);
  await http(`[${CALL(1, 'nope')},${CALL(2, 'nope')}]`); // one method, both node errors

  const ws = await openWs(`${gw.url.replace('http', 'ws')}/api-token/${token}/`);
  t.teardown(() => ws.close());
  const received: string[] = [];
  ws.ws.addEventListener('message', (ev) => received.push(ev.data as string));
  const frames = [
    '{"jsonrpc":"2.0","method":"ping"}', // keep-alive: bytes, no call
    CALL(10, 'signatureSubscribe', ['not-a-signature']), // the node refuses it (-32602)
    CALL(11, 'slotUnsubscribe', [999]), // the gateway refuses it: no such subscription
    CALL(12, 'getSlot'),
    `[${CALL(13, 'getSlot')},${CALL(14, 'nope')}]`,
  ];
  for (const f of frames) {
    ws.send(f);
    bytes += Buffer.byteLength(f);
  }
  for (const id of [10, 11, 12]) await ws.next((f) => f.id === id);
  await ws.next((f) => Array.isArray(f));
  ws.close();
  await ws.waitClosed();
  t.equal(received.length, 4, 'four answers, nothing for the ping');
  for (const r of received) bytes += Buffer.byteLength(r);
  return bytes;
}

/** Polls the console until the overview shows `calls` calls (flushing usage meanwhile). */
async function overviewWhen(gw: Gateway, s: Session, stackId: string, calls: number): Promise<any> {
  const deadline = Date.now() + 20_000;
  for (;;) {
    await gw.usageFlush!.flush();
    const o = await s.send('GET', `/api/v1/stacks/${stackId}/overview`);
    if (o.calls24h >= calls || Date.now() > deadline) return o;
    await new Promise((r) => setTimeout(r, 100));
  }
}

async function check(t: Test, gw: Gateway, s: Session, stackId: string, rounds: number, bytes: number): Promise<void> {
  const calls = rounds * Object.values(PER_ROUND).reduce((n, [c]) => n + c, 0);
  const o = await overviewWhen(gw, s, stackId, calls);
  t.equal(o.calls24h, calls, 'overview: calls in the last 24 hours');
  t.equal(o.bytes24h, bytes, 'overview: bytes both ways, as the clients counted them');
  const a = await s.send('GET', `/api/v1/stacks/${stackId}/analytics`);
  const got = Object.fromEntries(a.methods.map((m: any) => [m.method, [m.calls, m.errors]]));
  const want = Object.fromEntries(Object.entries(PER_ROUND).map(([m, [c, e]]) => [m, [c * rounds, e * rounds]]));
  t.same(got, want, 'analytics: calls and errors per method; no ping, no bytes-only rows');
  t.equal(
    a.series.reduce((n: number, p: any) => n + p.calls, 0),
    calls,
    'analytics: the series adds up to the same calls',
  );
}

for (const workers of [1, 2]) {
  t.test(`${workers} worker(s): overview and analytics show the mix, and keep it across a restart`, { timeout: 120_000 }, async (t) => {
    const dir = mkdtempSync(join(tmpdir(), 'jg-usage-'));
    t.teardown(() => rmSync(dir, { recursive: true, force: true }));
    const storeUrl = `sqlite://${join(dir, 'jg.db')}`;
    const sim = await startSim({ id: 'n0', port: 0 });
    t.teardown(() => sim.close());

    let gw = await startOn(sim, storeUrl, workers);
    const s = new Session(gw.console!.url);
    await s.send('POST', '/api/v1/register', { email: `w${workers}@example.com`, password: 'correct horse battery' });
    const stack = await s.send('POST', '/api/v1/stacks', { name: 'main' });
    const { token } = await s.send('POST', `/api/v1/stacks/${stack.id}/tokens`, { label: 'bot' });
    let bytes = await sendMix(t, gw, token);
    await check(t, gw, s, stack.id, 1, bytes);
    await gw.close();

    gw = await startOn(sim, storeUrl, workers);
    t.teardown(() => gw.close());
    const again = new Session(gw.console!.url);
    await again.send('POST', '/api/v1/login', { email: `w${workers}@example.com`, password: 'correct horse battery' });
    bytes += await sendMix(t, gw, token);
    await check(t, gw, again, stack.id, 2, bytes);
  });
}
