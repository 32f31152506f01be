// The gateway's WebSocket endpoint against simulated nodes: auth at upgrade, shared upstream
// subscriptions, unsubscribe isolation, failover, calls over WS, bad frames, slow consumers.

import { connect, type Socket } from 'node:net';
import t from 'tap';
import { eventually } from '../helpers/eventually.js';
import { INACTIVE, startHarness, TOKEN, TOKEN2 } from '../helpers/gateway.js';
import { openWs } from '../helpers/ws-client.js';

const FAST = { slotMs: 50 };

function wsBase(url: string): string {
  return url.replace(/^http/, 'ws');
}

function slotSubs(h: { sims: { stats: { wsSubscriptionsByMethod: Map<string, number> } }[] }): number {
  return h.sims.reduce((a, s) => a + (s.stats.wsSubscriptionsByMethod.get('slotSubscribe') ?? 0), 0);
}

/** Raw upgrade request; resolves with the status line and whether the server closed the socket. */
function rawUpgrade(port: number, path: string): Promise<{ status: string; closed: boolean }> {
  return new Promise((resolve) => {
    const s = connect(port, '127.0.0.1');
    let data = '';
    s.on('data', (d) => (data += d.toString()));
    s.on('close', () => resolve({ status: data.split('\r\n')[0]!, closed: true }));
    s.write(
      `GET ${path} HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n`,
    );
    setTimeout(() => resolve({ status: data.split('\r\n')[0]!, closed: false }), 2000);
  });
}

t.test('token checked before the upgrade: 401 / 403, socket closed', async (t) => {
  const h = await startHarness({ sims: [FAST] });
  t.teardown(() => h.close());
  const port = h.gw.port;
  for (const [path, status] of [
    ['/api-token/unknown-token-000000000/', '401'],
    ['/', '401'],
    [`/api-token/${INACTIVE}/`, '403'],
    ['/elsewhere/x', '404'],
  ] as const) {
    const r = await rawUpgrade(port, path);
    t.match(r.status, new RegExp(`^HTTP/1.1 ${status}`), `${path} → ${status}`);
    t.ok(r.closed, 'no socket left open');
  }
  t.equal(h.gw.ws().connections, 0);
  for (const path of [`/api-token/${TOKEN}/`, `/api-token/${TOKEN}`, `/api-key/${TOKEN}`]) {
    const c = await openWs(wsBase(h.url) + path);
    c.send({ jsonrpc: '2.0', id: 1, method: 'getIdentity' });
    t.same((await c.next((f) => f.id === 1)).result, { identity: 'n0' }, `${path} works`);
    c.close();
  }
});

t.test('identical subscriptions share one upstream subscription; each client has its own id', async (t) => {
  const h = await startHarness({ sims: [FAST, FAST] });
  t.teardown(() => h.close());
  const clients = await Promise.all(Array.from({ length: 20 }, () => openWs(`${wsBase(h.url)}/api-token/${TOKEN}/`)));
  t.teardown(() => clients.forEach((c) => c.close()));
  clients.forEach((c, i) => c.send({ jsonrpc: '2.0', id: `s${i}`, method: 'slotSubscribe' }));
  const ids = await Promise.all(clients.map((c, i) => c.next((f) => f.id === `s${i}`).then((f) => f.result as number)));
  t.equal(new Set(ids).size, 20, 'twenty distinct client ids');
  await eventually('upstream subscription', () => slotSubs(h) === 1);
  t.equal(slotSubs(h), 1, 'one upstream slotSubscribe for twenty clients');
  for (let i = 0; i < clients.length; i++) {
    const n = await clients[i]!.next((f) => f.method === 'slotNotification');
    t.equal(n.params.subscription, ids[i], 'notification carries the client’s own id');
    t.type(n.params.result.slot, 'number');
    t.equal(n.params.result.parent, n.params.result.slot - 1);
  }
  // The last client to leave cancels upstream.
  for (const c of clients) c.close();
  await eventually('upstream unsubscribe', () => slotSubs(h) === 0);
  t.equal(h.gw.ws().sharedSubscriptions, 0);
});

t.test('unsubscribe touches only the caller’s ids', async (t) => {
  const h = await startHarness({ sims: [FAST] });
  t.teardown(() => h.close());
  const a = await openWs(`${wsBase(h.url)}/api-token/${TOKEN}/`);
  const b = await openWs(`${wsBase(h.url)}/api-token/${TOKEN2}/`);
  t.teardown(() => (a.close(), b.close()));
  a.send({ jsonrpc: '2.0', id: 1, method: 'slotSubscribe' });
  b.send({ jsonrpc: '2.0', id: 1, method: 'slotSubscribe' });
  const ida = (await a.next((f) => f.id === 1)).result;
  const idb = (await b.next((f) => f.id === 1)).result;
  a.send({ jsonrpc: '2.0', id: 2, method: 'slotUnsubscribe', params: [idb] });
  const foreign = await a.next((f) => f.id === 2);
  t.same(foreign.error, { code: -32602, message: 'Invalid subscription id.' }, 'a foreign id is refused');
  a.send({ jsonrpc: '2.0', id: 3, method: 'slotUnsubscribe', params: [123456] });
  t.equal((await a.next((f) => f.id === 3)).error.code, -32602, 'an unknown id is refused');
  const mark = b.frames.length;
  await b.next((f) => f.method === 'slotNotification' && f.params.subscription === idb, 3000, mark);
  t.pass('b still receives after a’s attempt');
  a.send({ jsonrpc: '2.0', id: 4, method: 'slotUnsubscribe', params: [ida] });
  t.equal((await a.next((f) => f.id === 4)).result, true, 'own id: true');
  t.equal(slotSubs(h), 1, 'the upstream subscription stays for b');
  const markB = b.frames.length;
  await b.next((f) => f.method === 'slotNotification', 3000, markB);
  const markA = a.frames.length;
  // Slots keep coming for b: after three more, a would have had its share had it still been subscribed.
  const markB2 = b.frames.length;
  await eventually('three more notifications for b', () => b.frames.slice(markB2).filter((f) => f.method === 'slotNotification').length >= 3);
  t.equal(a.frames.slice(markA).filter((f) => f.method === 'slotNotification').length, 0, 'a gets nothing more');
  a.send({ jsonrpc: '2.0', id: 5, method: 'slotSubscribe' });
  a.send({ jsonrpc: '2.0', id: 6, method: 'slotSubscribe' });
  t.equal((await a.next((f) => f.id === 6)).error.code, 7702, 'duplicate subscription on one connection: 7702');
});

for (const how of ['websocket drops', 'node killed'] as const) {
  t.test(`failover (${how}): notifications continue under the same id, never twice or backwards`, async (t) => {
    const h = await startHarness({ sims: [FAST, FAST], config: { health: { intervalMs: 100 } } });
    t.teardown(() => h.close());
    const c = await openWs(`${wsBase(h.url)}/api-token/${TOKEN}/`);
    t.teardown(() => c.close());
    c.send({ jsonrpc: '2.0', id: 1, method: 'slotSubscribe' });
    c.send({ jsonrpc: '2.0', id: 2, method: 'rootSubscribe' });
    const id = (await c.next((f) => f.id === 1)).result;
    await c.collect((f) => f.method === 'slotNotification', 5);
    const serving = h.sims.find((s) => (s.stats.wsSubscriptionsByMethod.get('slotSubscribe') ?? 0) > 0)!;
    const other = h.sims.find((s) => s !== serving)!;
    const before = c.frames.filter((f) => f.method === 'slotNotification').length;
    if (how === 'websocket drops') serving.set({ wsDrop: true });
    else await serving.close();
    await eventually('resubscribed on the other node', () => (other.stats.wsSubscriptionsByMethod.get('slotSubscribe') ?? 0) === 1);
    await c.collect((f) => f.method === 'slotNotification', before + 10, 5000);
    const slots = c.frames.filter((f) => f.method === 'slotNotification').map((f) => f.params.result.slot as number);
    for (let i = 1; i < slots.length; i++) if (slots[i]! <= slots[i - 1]!) t.fail(`slot ${slots[i]} after ${slots[i - 1]}`);
    t.pass(`${slots.length} slots strictly increasing across the failover`);
    t.ok(
      c.frames.filter((f) => f.method === 'slotNotification').every((f) => f.params.subscription === id),
      'same client id throughout',
    );
    const roots = c.frames.filter((f) => f.method === 'rootNotification').map((f) => f.params.result as number);
    for (let i = 1; i < roots.length; i++) if (roots[i]! <= roots[i - 1]!) t.fail('root went backwards');
    t.ok(roots.length > 0, 'root notifications flow too');
  });
}

t.test('other calls over the socket are forwarded and answered with the client’s ids; ping is not forwarded', async (t) => {
  const h = await startHarness({ sims: [FAST] });
  t.teardown(() => h.close());
  const c = await openWs(`${wsBase(h.url)}/api-token/${TOKEN}/`);
  t.teardown(() => c.close());
  const calls = h.sims[0]!.stats.calls;
  c.send('{"jsonrpc":"2.0","method":"ping"}');
  c.send('{"jsonrpc":"2.0","id":12345678901234567890,"method":"getSlot"}');
  const single = await c.next((f) => typeof f.result === 'number');
  t.ok(single, 'single call answered');
  c.send('[{"jsonrpc":"2.0","id":"x","method":"getIdentity"},{"jsonrpc":"2.0","id":null,"method":"getBlockHeight"},{"bad":1}]');
  const batch = await c.next((f) => Array.isArray(f));
  t.same(
    batch.map((e: any) => e.id),
    ['x', null, null],
  );
  t.equal(batch[2].error.code, -32600);
  // Exact id bytes: read the raw frame text.
  const raw: string[] = [];
  c.ws.addEventListener('message', (ev) => raw.push(ev.data as string));
  c.send('{"jsonrpc":"2.0","id":12345678901234567890,"method":"getIdentity"}');
  await eventually('raw answer', () => raw.length > 0);
  t.match(raw[0], /"id":12345678901234567890\}$/);
  t.equal(h.sims[0]!.stats.calls - calls, 4, 'ping never reached the node (4 calls: single, two batch calls, identity)');
});

t.test('subscription frames are read from the one-pass analysis: escapes, whitespace and key order as JSON.parse reads them', async (t) => {
  const h = await startHarness({ sims: [FAST] });
  t.teardown(() => h.close());
  const a = await openWs(`${wsBase(h.url)}/api-token/${TOKEN}/`);
  const b = await openWs(`${wsBase(h.url)}/api-token/${TOKEN}/`);
  t.teardown(() => [a, b].forEach((c) => c.close()));
  const key = 'Acct1x'.padEnd(32, '1');
  a.send(`{"jsonrpc":"2.0","id":"a1","method":"accountSubscribe","params":["${key}",{"encoding":"base64","commitment":"confirmed"}]}`);
  // The same subscription written differently: escaped method name, whitespace, other key order.
  b.send(
    `{ "params" : [ "${key}" , { "commitment" : "confirmed" , "encoding" : "base64" } ] , "method" : "account\u0053ubscribe" , "id" : 12345678901234567890 , "jsonrpc" : "2.0" }`,
  );
  const subA = (await a.next((f) => f.id === 'a1')).result;
  t.type(subA, 'number', 'first client subscribed');
  const raw: string[] = [];
  b.ws.addEventListener('message', (ev) => raw.push(ev.data as string));
  await eventually('second client answered', () => raw.some((r) => r.includes('12345678901234567890')));
  t.match(
    raw.find((r) => r.includes('12345678901234567890')),
    /"result":\d+,"id":12345678901234567890\}$/,
    'subscribed, the id bytes as sent',
  );
  t.equal(h.gw.hub!.sharedCount, 1, 'both share one upstream subscription');
  b.send({ jsonrpc: '2.0', id: 'dup', method: 'accountSubscribe', params: [key, { encoding: 'base64', commitment: 'confirmed' }] });
  t.match(await b.next((f) => f.id === 'dup'), { error: { code: 7702 } }, 'the same subscription again on one connection: 7702');
  b.send({ jsonrpc: '2.0', id: 'bad', method: 'slotSubscribe', params: 5 });
  t.match(await b.next((f) => f.id === 'bad'), { error: { code: -32600 } }, 'params neither array nor object: invalid request');
  a.send(`{"jsonrpc":"2.0","id":"u1","method":"accountUnsubscribe","params":[${subA}]}`);
  t.same((await a.next((f) => f.id === 'u1')).result, true, 'unsubscribed by the id it got');
  t.equal(h.gw.hub!.sharedCount, 1, 'the other client keeps the shared subscription');
});

t.test('bad frames: binary 1003, invalid JSON -32700, oversize closed, 10,000 subscribe attempts bounded by 7703', async (t) => {
  const h = await startHarness({ sims: [FAST], config: { ws: { maxMessageBytes: 4096 } } });
  t.teardown(() => h.close());
  const url = `${wsBase(h.url)}/api-token/${TOKEN}/`;
  const bin = await openWs(url);
  bin.ws.send(new Uint8Array([1, 2, 3]));
  t.equal((await bin.waitClosed()).code, 1003, 'binary frame: closed with 1003');
  const j = await openWs(url);
  t.teardown(() => j.close());
  j.send('{"jsonrpc":');
  t.same(await j.next((f) => f.error !== undefined), { jsonrpc: '2.0', error: { code: -32700, message: 'Parse error', data: { offset: 11 } }, id: null });
  const big = await openWs(url);
  big.send(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'getSlot', params: ['x'.repeat(5000)] }));
  const closed = await big.waitClosed();
  t.ok(closed.code === 1009 || closed.code === 1006, `oversize message: closed (${closed.code})`);
  // 10,000 subscribe attempts on one connection: 100 accepted, the rest refused with 7703.
  const many = await openWs(url);
  t.teardown(() => many.close());
  for (let i = 0; i < 10_000; i++)
    many.send({ jsonrpc: '2.0', id: i, method: 'accountSubscribe', params: [`Acct${i}x`.replace(/0/g, 'z').padEnd(32, '1'), { encoding: 'base64' }] });
  const answers = await many.collect((f) => typeof f.id === 'number', 10_000, 15_000);
  const ok = answers.filter((f) => typeof f.result === 'number').length;
  const limited = answers.filter((f) => f.error?.code === 7703).length;
  t.equal(ok, 100, '100 subscriptions (ws.maxSubscriptionsPerConnection)');
  t.equal(
    limited,
    9900,
    `the rest: 7703 (others: ${JSON.stringify(answers.filter((f) => typeof f.result !== 'number' && f.error?.code !== 7703).slice(0, 3))})`,
  );
  t.ok(h.sims[0]!.stats.wsSubscriptions <= 100, 'the node holds at most 100');
  j.send({ jsonrpc: '2.0', id: 'alive', method: 'getIdentity' });
  t.ok(await j.next((f) => f.id === 'alive'), 'other connections unaffected');
});

/** A raw client that completes the handshake, sends frames, and never reads. */
function stubbornClient(port: number, path: string): Promise<{ sock: Socket; sendText(s: string): void }> {
  return new Promise((resolve, reject) => {
    const sock = connect(port, '127.0.0.1');
    sock.once('data', (d) => {
      if (!d.toString().startsWith('HTTP/1.1 101')) return reject(new Error(d.toString()));
      sock.pause();
      resolve({
        sock,
        sendText(s: string) {
          const payload = Buffer.from(s);
          const mask = Buffer.from([1, 2, 3, 4]);
          const head =
            payload.length < 126 ? Buffer.from([0x81, 0x80 | payload.length]) : Buffer.from([0x81, 0x80 | 126, payload.length >> 8, payload.length & 255]);
          const body = Buffer.alloc(payload.length);
          for (let i = 0; i < payload.length; i++) body[i] = payload[i]! ^ mask[i & 3]!;
          sock.write(Buffer.concat([head, mask, body]));
        },
      });
    });
    sock.write(
      `GET ${path} HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n`,
    );
  });
}

t.test('a client that does not read is closed; others are not slowed down', async (t) => {
  const h = await startHarness({ sims: [FAST], config: { ws: { maxBufferedBytes: 262144 } } });
  t.teardown(() => h.close());
  const slow = await stubbornClient(h.gw.port, `/api-token/${TOKEN}/`);
  t.teardown(() => slow.sock.destroy());
  const keys = JSON.stringify(Array.from({ length: 100 }, (_, i) => `Key${i}`.padEnd(32, '1')));
  for (let i = 0; i < 400; i++) slow.sendText(`{"jsonrpc":"2.0","id":${i},"method":"getMultipleAccounts","params":[${keys}]}`);
  const fine = await openWs(`${wsBase(h.url)}/api-token/${TOKEN}/`);
  t.teardown(() => fine.close());
  await eventually('the slow client to be closed', () => h.gw.ws().connections === 1, 15_000);
  t.equal(h.gw.ws().connections, 1, 'only the reading client is left');
  fine.send({ jsonrpc: '2.0', id: 'x', method: 'getSlot' });
  t.type((await fine.next((f) => f.id === 'x')).result, 'number', 'the reading client is served');
});

t.test('connections per token are limited at the upgrade (429)', async (t) => {
  const h = await startHarness({ sims: [FAST], config: { ws: { maxConnectionsPerToken: 2 } } });
  t.teardown(() => h.close());
  const a = await openWs(`${wsBase(h.url)}/api-token/${TOKEN}/`);
  const b = await openWs(`${wsBase(h.url)}/api-token/${TOKEN}/`);
  t.teardown(() => (a.close(), b.close()));
  const r = await rawUpgrade(h.gw.port, `/api-token/${TOKEN}/`);
  t.match(r.status, /^HTTP\/1.1 429/);
  const other = await openWs(`${wsBase(h.url)}/api-token/${TOKEN2}/`);
  t.pass('another token still connects');
  other.close();
});

t.test('a token deactivated while its socket is open: the next frame closes it with 1008', async (t) => {
  const h = await startHarness({ sims: [FAST] });
  t.teardown(() => h.close());
  const store = h.gw.store!;
  const account = await store.createAccount('ws@example.com', 'x');
  const stack = await store.createStack(account.id, 's', null);
  const { token, record } = await store.createToken(account.id, stack.id, 'ws');
  await eventually('token synced', () => h.gw.tokens.find(token) !== null, 3000);
  const c = await openWs(`${wsBase(h.url)}/api-token/${token}/`);
  c.send({ jsonrpc: '2.0', id: 1, method: 'getSlot' });
  await c.next((f) => f.id === 1);
  await store.setTokenActive(account.id, record.id, false);
  await eventually('token deactivated in the gateway', () => h.gw.tokens.find(token)?.active === false, 3000);
  c.send({ jsonrpc: '2.0', id: 2, method: 'getSlot' });
  t.equal((await c.waitClosed()).code, 1008);
});
