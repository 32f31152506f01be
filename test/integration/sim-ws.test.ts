// The simulated node's WebSocket (PubSub) part: Solana's exact shapes, ids, knobs, stats.

import t from 'tap';
import { request } from 'node:http';
import { connect, createServer } from 'node:net';
import { WebSocket } from 'undici';
import { decodeBase58 } from '../../src/solana/base58.js';
import { accountOf } from '../../src/tools/sim/chain.js';
import { rootOf, startSim, type SimNode, type SimOptions } from '../../src/tools/sim/node.js';
import { eventually } from '../helpers/eventually.js';

const PUBKEY = 'So11111111111111111111111111111111111111112';
const TIMEOUT_MS = 5000;

type Test = Parameters<Parameters<typeof t.test>[0]>[0];

async function sim(t: Test, opts: Partial<SimOptions> = {}): Promise<SimNode> {
  const node = await startSim({ id: 'ws-node', port: 0, slotMs: 50, synthetic: true, ...opts });
  t.teardown(() => node.close());
  return node;
}

interface Msg {
  jsonrpc: string;
  id?: unknown;
  result?: any;
  error?: { code: number; message: string };
  method?: string;
  params?: { result: any; subscription: number };
}

/** A test client that queues every text message and lets tests wait for one that matches. */
class Client {
  readonly raw: string[] = [];
  private readonly waiters: { pred: (text: string) => boolean; resolve: (text: string) => void }[] = [];
  readonly closed: Promise<{ code: number; reason: string }>;

  private constructor(readonly ws: WebSocket) {
    ws.addEventListener('message', (e) => {
      const text = String(e.data);
      const i = this.waiters.findIndex((w) => w.pred(text));
      if (i >= 0) this.waiters.splice(i, 1)[0]!.resolve(text);
      else this.raw.push(text);
    });
    this.closed = new Promise((resolve) => ws.addEventListener('close', (e) => resolve({ code: e.code, reason: e.reason })));
  }

  static open(url: string): Promise<Client> {
    const ws = new WebSocket(url);
    const c = new Client(ws);
    return new Promise((resolve, reject) => {
      ws.addEventListener('open', () => resolve(c));
      ws.addEventListener('error', () => reject(new Error(`cannot open ${url}`)));
    });
  }

  send(msg: string | object): void {
    this.ws.send(typeof msg === 'string' ? msg : JSON.stringify(msg));
  }

  /** The next message (queued or future) whose raw text passes `pred`. */
  next(pred: (text: string) => boolean = () => true, ms = TIMEOUT_MS): Promise<string> {
    const i = this.raw.findIndex(pred);
    if (i >= 0) return Promise.resolve(this.raw.splice(i, 1)[0]!);
    return new Promise((resolve, reject) => {
      const w = {
        pred,
        resolve: (text: string) => {
          clearTimeout(timer);
          resolve(text);
        },
      };
      const timer = setTimeout(() => {
        this.waiters.splice(this.waiters.indexOf(w), 1);
        reject(new Error(`no matching message within ${ms} ms; queued: ${this.raw.slice(0, 5).join(' | ')}`));
      }, ms);
      this.waiters.push(w);
    });
  }

  async nextJson(pred: (m: Msg) => boolean, ms?: number): Promise<Msg> {
    return JSON.parse(await this.next((text) => pred(JSON.parse(text) as Msg), ms)) as Msg;
  }

  /** Sends a request with `id` (raw JSON text) and waits for the answer with that id. */
  async call(method: string, params?: unknown, rawId = String(++idCounter)): Promise<Msg> {
    const p = params === undefined ? '' : `,"params":${JSON.stringify(params)}`;
    this.send(`{"jsonrpc":"2.0","id":${rawId},"method":"${method}"${p}}`);
    return JSON.parse(await this.next((text) => text.endsWith(`,"id":${rawId}}`))) as Msg;
  }

  /** The next message that is not a notification. */
  reply(): Promise<string> {
    return this.next((text) => !text.includes('"method":"'));
  }

  notification(method: string, sub?: number, ms?: number): Promise<Msg> {
    return this.nextJson((m) => m.method === method && (sub === undefined || m.params?.subscription === sub), ms);
  }

  close(): Promise<unknown> {
    this.ws.close();
    return this.closed;
  }
}
let idCounter = 1000;

async function client(t: Test, url: string): Promise<Client> {
  const c = await Client.open(url);
  t.teardown(() => {
    c.ws.close();
  });
  return c;
}

/** An upgrade request by hand, to see the HTTP status of a refusal. */
function upgradeStatus(url: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request(url.replace(/^ws/, 'http'), {
      headers: { Connection: 'Upgrade', Upgrade: 'websocket', 'Sec-WebSocket-Version': '13', 'Sec-WebSocket-Key': 'dGhlIHNhbXBsZSBub25jZQ==' },
    });
    req.on('upgrade', (res, socket) => {
      socket.destroy();
      resolve(res.statusCode ?? 0);
    });
    req.on('response', (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.on('error', reject);
    req.end();
  });
}

function refused(port: number): Promise<string> {
  return new Promise((resolve) => {
    const s = connect(port, '127.0.0.1');
    s.on('connect', () => {
      s.destroy();
      resolve('connected');
    });
    s.on('error', (e: NodeJS.ErrnoException) => resolve(e.code ?? 'error'));
  });
}

async function httpCall(node: SimNode, method: string, params?: unknown[]): Promise<Msg> {
  const r = await fetch(node.url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, ...(params ? { params } : {}) }),
  });
  return (await r.json()) as Msg;
}

t.test('URLs: WS on P and P+1, HTTP unchanged', async (t) => {
  const node = await sim(t);
  t.equal(node.wsUrl, `ws://127.0.0.1:${node.port}`);
  t.equal(node.wsUrlPlusOne, `ws://127.0.0.1:${node.port + 1}`);
  for (const url of [node.wsUrl, node.wsUrlPlusOne]) {
    const c = await client(t, url);
    t.equal((await c.call('slotSubscribe')).result !== undefined, true, `subscribe on ${url}`);
  }
  t.equal((await httpCall(node, 'getHealth')).result, 'ok', 'HTTP on P');
  const plusOneHttp = await fetch(`http://127.0.0.1:${node.port + 1}`, { method: 'POST', body: '{"jsonrpc":"2.0","id":1,"method":"getHealth"}' });
  t.equal(await plusOneHttp.text(), '{"jsonrpc":"2.0","result":"ok","id":1}', 'P+1 is the same app');
  const get = await fetch(node.url);
  t.equal(get.status, 405, 'a GET without upgrade is still refused');
  await get.arrayBuffer();
});

t.test('slotNotification: exact shape, every slot, strictly increasing', async (t) => {
  const node = await sim(t);
  const c = await client(t, node.wsUrl);
  const sub = await c.call('slotSubscribe', undefined, '7');
  t.same(Object.keys(sub), ['jsonrpc', 'result', 'id']);
  t.equal(typeof sub.result, 'number');
  const slots: number[] = [];
  for (let i = 0; i < 6; i++) {
    const raw = await c.next((text) => text.includes('"slotNotification"'));
    const m = JSON.parse(raw) as Msg;
    const { slot, parent, root } = m.params!.result as { slot: number; parent: number; root: number };
    t.equal(
      raw,
      `{"jsonrpc":"2.0","method":"slotNotification","params":{"result":{"parent":${slot - 1},"root":${rootOf(slot)},"slot":${slot}},"subscription":${sub.result}}}`,
    );
    t.equal(parent, slot - 1);
    t.equal(root, slot - 32);
    slots.push(slot);
  }
  for (let i = 1; i < slots.length; i++) t.ok(slots[i]! > slots[i - 1]!, `slot ${slots[i]} > ${slots[i - 1]}`);
  t.ok(
    slots.every((s, i) => i === 0 || s === slots[i - 1]! + 1),
    `one notification per slot: ${slots.join(',')}`,
  );
  t.ok(Math.abs(slots.at(-1)! - node.slot()) <= 1, 'the served slot');
});

t.test('lag applies to slot notifications', async (t) => {
  const node = await sim(t, { lag: 100 });
  const fresh = await sim(t, { id: 'fresh' });
  const c = await client(t, node.wsUrl);
  await c.call('slotSubscribe');
  const m = await c.notification('slotNotification');
  const diff = fresh.slot() - (m.params!.result.slot as number);
  t.ok(diff >= 99 && diff <= 102, `100 slots behind (${diff})`);
  t.equal(m.params!.result.root, m.params!.result.slot - 32);
});

t.test('rootNotification: exact shape, root advances', async (t) => {
  const node = await sim(t);
  const c = await client(t, node.wsUrlPlusOne);
  const sub = await c.call('rootSubscribe', []);
  const raw1 = await c.next((text) => text.includes('"rootNotification"'));
  const raw2 = await c.next((text) => text.includes('"rootNotification"'));
  const r1 = (JSON.parse(raw1) as Msg).params!.result as number;
  const r2 = (JSON.parse(raw2) as Msg).params!.result as number;
  t.equal(raw1, `{"jsonrpc":"2.0","method":"rootNotification","params":{"result":${r1},"subscription":${sub.result}}}`);
  t.ok(r2 > r1, 'the root advances');
  t.ok(Math.abs(r2 - rootOf(node.slot())) <= 1);
});

t.test('accountNotification: exact shape, every 4 slots, exact rentEpoch, encodings', async (t) => {
  const node = await sim(t);
  const c = await client(t, node.wsUrl);
  const sub = await c.call('accountSubscribe', [PUBKEY, { encoding: 'base64', commitment: 'confirmed' }]);
  const raw = await c.next((text) => text.includes('"accountNotification"'));
  t.match(raw, /,"rentEpoch":18446744073709551615,/, 'u64 rentEpoch digits exact');
  t.ok(raw.startsWith('{"jsonrpc":"2.0","method":"accountNotification","params":{"result":{"context":{"slot":'));
  t.ok(raw.endsWith(`}},"subscription":${sub.result}}}`));
  const m = JSON.parse(raw) as Msg;
  t.same(Object.keys(m.params!), ['result', 'subscription']);
  t.same(Object.keys(m.params!.result), ['context', 'value']);
  t.same(Object.keys(m.params!.result.context), ['slot']);
  const slot = m.params!.result.context.slot as number;
  t.equal(slot % 4, 0, 'every 4 slots');
  const value = m.params!.result.value;
  t.same(Object.keys(value), ['data', 'executable', 'lamports', 'owner', 'rentEpoch', 'space']);

  // The same account as getAccountInfo, lamports moving with the slot.
  const http = (await httpCall(node, 'getAccountInfo', [PUBKEY, { encoding: 'base64' }])).result.value;
  t.same(value.data, http.data);
  t.equal(value.space, http.space);
  t.equal(value.owner, http.owner);
  t.equal(value.executable, false);
  t.equal(value.lamports, http.lamports + (slot % 1_000_000));

  const next = await c.notification('accountNotification', sub.result as number);
  const slot2 = next.params!.result.context.slot as number;
  t.equal(slot2, slot + 4, 'the next one 4 slots later');
  t.equal(next.params!.result.value.lamports - value.lamports, 4, 'lamports vary with the slot');

  // base58 and Solana's PubSub default ('binary': a bare base58 string), small and large data.
  let small = '';
  for (let i = 0; small === ''; i++) if (accountOf(`Small${i}`).data.length <= 128) small = `Small${i}`;
  const bytes = accountOf(small).data;
  const s58 = await c.call('accountSubscribe', [small, { encoding: 'base58' }]);
  const sDefault = await c.call('accountSubscribe', [small]);
  const sParsed = await c.call('accountSubscribe', [small, { encoding: 'jsonParsed' }]);
  const bigDefault = await c.call('accountSubscribe', [PUBKEY, null]);
  const v58 = (await c.notification('accountNotification', s58.result as number)).params!.result.value;
  t.equal(v58.data[1], 'base58');
  t.same(Buffer.from(decodeBase58(v58.data[0] as string)!), bytes);
  const vDef = (await c.notification('accountNotification', sDefault.result as number)).params!.result.value;
  t.equal(vDef.data, v58.data[0], 'default encoding: a bare base58 string');
  const vParsed = (await c.notification('accountNotification', sParsed.result as number)).params!.result.value;
  t.same(vParsed.data, [bytes.toString('base64'), 'base64'], 'jsonParsed falls back to base64');
  const vBig = (await c.notification('accountNotification', bigDefault.result as number)).params!.result.value;
  t.ok(value.space > 128, 'the So111… account is larger than 128 bytes');
  t.equal(vBig.data, 'error: data too large for bs58 encoding', 'as Solana does for base58 over 128 bytes');
});

t.test('subscription ids: one node-wide counter from 0, across connections and both ports', async (t) => {
  const node = await sim(t);
  const a = await client(t, node.wsUrl);
  const b = await client(t, node.wsUrlPlusOne);
  const ids = [
    (await a.call('slotSubscribe')).result,
    (await b.call('slotSubscribe')).result,
    (await a.call('rootSubscribe')).result,
    (await b.call('accountSubscribe', [PUBKEY, { encoding: 'base64' }])).result,
    (await a.call('accountSubscribe', [PUBKEY, { encoding: 'base64' }])).result,
  ];
  t.same(ids, [0, 1, 2, 3, 4]);

  // Each connection gets notifications only for its own ids, even on the same slot.
  const na = await a.notification('slotNotification');
  const nb = await b.notification('slotNotification');
  t.equal(na.params!.subscription, 0);
  t.equal(nb.params!.subscription, 1);

  const invalid = { code: -32602, message: 'Invalid subscription id.' };
  t.same(await b.call('slotUnsubscribe', [0]), { jsonrpc: '2.0', error: invalid, id: idCounter }, "another connection's id");
  t.same((await a.call('rootUnsubscribe', [0])).error, invalid, 'own id, other kind');
  t.same((await a.call('slotUnsubscribe', [99])).error, invalid, 'unknown id');
  t.same((await a.call('accountUnsubscribe', [3])).error, invalid, 'foreign account subscription');
  t.same(await a.call('slotUnsubscribe', [0]), { jsonrpc: '2.0', result: true, id: idCounter }, 'own id');
  t.same((await a.call('slotUnsubscribe', [0])).error, invalid, 'twice');
  t.equal((await a.call('accountUnsubscribe', [4])).result, true);
  t.equal((await b.call('accountUnsubscribe', [3])).result, true);
  t.equal((await a.call('rootUnsubscribe', [2])).result, true);
  t.equal((await b.call('slotSubscribe')).result, 5, 'ids are never reused');

  // After its unsubscribe answer, a connection hears no more about that id.
  a.raw.length = 0;
  await b.notification('slotNotification', 5);
  await b.notification('slotNotification', 5);
  t.notOk(
    a.raw.some((text) => text.includes('"subscription":0}')),
    'no notification after unsubscribe',
  );
});

t.test('errors: invalid params, unknown methods, parse errors, pings, raw ids', async (t) => {
  const node = await sim(t);
  const c = await client(t, node.wsUrl);
  const invalidParams = { code: -32602, message: 'Invalid params' };
  for (const [method, params] of [
    ['slotSubscribe', [1]],
    ['rootSubscribe', { a: 1 }],
    ['accountSubscribe', undefined],
    ['accountSubscribe', []],
    ['accountSubscribe', [42]],
    ['accountSubscribe', [PUBKEY, { encoding: 'hex' }]],
    ['accountSubscribe', [PUBKEY, { commitment: 'max' }]],
    ['accountSubscribe', [PUBKEY, 'base64']],
    ['slotUnsubscribe', []],
    ['slotUnsubscribe', ['0']],
    ['rootUnsubscribe', [-1]],
    ['accountUnsubscribe', undefined],
  ] as const) {
    t.same((await c.call(method, params)).error, invalidParams, `${method} ${JSON.stringify(params)}`);
  }
  t.equal(node.stats.wsSubscriptions, 0, 'nothing was subscribed');

  for (const method of ['getSlot', 'blockSubscribe', 'signatureSubscribe_', 'ping']) {
    t.same((await c.call(method)).error, { code: -32601, message: 'Method not found' }, method);
  }

  c.send('{"jsonrpc":"2.0",');
  t.equal(await c.reply(), '{"jsonrpc":"2.0","error":{"code":-32700,"message":"Parse error"},"id":null}');

  // kit's and web3.js's keep-alive: a notification without id, never answered.
  c.send('{"jsonrpc":"2.0","method":"ping"}');
  c.send({ jsonrpc: '2.0', method: 'slotSubscribe' });
  const after = await c.call('getVersion');
  t.equal(after.id, idCounter, 'the first answer after the pings is the next call');
  t.equal(c.raw.length, 0, 'nothing else was sent');
  t.equal(node.stats.wsSubscriptions, 0, 'a subscribe without id subscribes nothing');

  for (const rawId of ['12345678901234567890', '"a\\"b"', '-1.5e3', 'null', '"x"']) {
    c.send(`{"jsonrpc":"2.0","id":${rawId},"method":"slotSubscribe"}`);
    const text = await c.reply();
    t.ok(text.endsWith(`,"id":${rawId}}`), `id ${rawId}: ${text}`);
  }
  c.send('{ "id" : 12345678901234567891 , "jsonrpc":"2.0","method":"getSlot"}');
  t.equal(await c.reply(), '{"jsonrpc":"2.0","error":{"code":-32601,"message":"Method not found"},"id":12345678901234567891}');
  c.send('{"id":3,"method":"slotSubscribe"}');
  t.equal(await c.reply(), '{"jsonrpc":"2.0","error":{"code":-32600,"message":"Invalid Request"},"id":3}');
  c.send('[{"jsonrpc":"2.0","id":"b1","method":"getSlot"},{"jsonrpc":"2.0","method":"ping"},{"jsonrpc":"2.0","id":"b2","method":"rootSubscribe"}]');
  const batch = JSON.parse(await c.reply()) as Msg[];
  t.same(
    batch.map((m) => m.id),
    ['b1', 'b2'],
    'a batch answers its calls in order',
  );
  t.equal(typeof batch[1]!.result, 'number');
});

t.test('stats: connections, live subscriptions by method, messages', async (t) => {
  const node = await sim(t);
  const s = node.stats;
  t.same([s.wsConnections, s.wsSubscriptions, s.wsMessages, s.wsSubscriptionsByMethod.size], [0, 0, 0, 0]);
  const a = await client(t, node.wsUrl);
  const b = await client(t, node.wsUrlPlusOne);
  await eventually('two connections', () => s.wsConnections === 2);
  await a.call('slotSubscribe');
  await a.call('slotSubscribe');
  await b.call('slotSubscribe');
  await b.call('accountSubscribe', [PUBKEY]);
  const root = (await b.call('rootSubscribe')).result as number;
  t.equal(s.wsSubscriptions, 5);
  t.same(Object.fromEntries(s.wsSubscriptionsByMethod), { slotSubscribe: 3, accountSubscribe: 1, rootSubscribe: 1 });
  await b.call('rootUnsubscribe', [root]);
  t.same(Object.fromEntries(s.wsSubscriptionsByMethod), { slotSubscribe: 3, accountSubscribe: 1 }, 'entries at zero are removed');
  b.send('{"jsonrpc":"2.0","method":"ping"}');
  await b.call('getSlot');
  t.equal(s.wsMessages, 8, 'every message received counts, pings included');

  await a.close();
  await eventually('a gone', () => s.wsConnections === 1);
  t.equal(s.wsSubscriptions, 2, "a closed connection's subscriptions end");
  t.same(Object.fromEntries(s.wsSubscriptionsByMethod), { slotSubscribe: 1, accountSubscribe: 1 });
  t.same(s.byMethod, new Map(), 'WS calls are not HTTP calls');
  t.equal(s.requests, 0);
  const http = (await (await fetch(`${node.url}/sim/stats`)).json()) as Record<string, unknown>;
  t.same(Object.keys(http), ['requests', 'calls', 'byMethod', 'limited', 'credits'], '/sim/stats keeps its shape');
});

t.test('wsDrop: closes open sockets with 1001 and refuses upgrades with 503; HTTP stays up', async (t) => {
  const node = await sim(t);
  const a = await client(t, node.wsUrl);
  const b = await client(t, node.wsUrlPlusOne);
  await a.call('slotSubscribe');
  await b.call('accountSubscribe', [PUBKEY]);
  node.set({ wsDrop: true });
  t.same(await a.closed, { code: 1001, reason: 'wsDrop' });
  t.equal((await b.closed).code, 1001);
  t.equal(node.stats.wsConnections, 0);
  t.equal(node.stats.wsSubscriptions, 0);
  t.equal(node.stats.wsSubscriptionsByMethod.size, 0);
  t.equal(node.knobs().wsDrop, true);

  t.equal(await upgradeStatus(node.wsUrl), 503);
  t.equal(await upgradeStatus(node.wsUrlPlusOne), 503);
  await t.rejects(Client.open(node.wsUrl), /cannot open/);
  t.equal((await httpCall(node, 'getHealth')).result, 'ok', 'HTTP still answers');

  // Through the control endpoint too.
  const off = await fetch(`${node.url}/sim/control`, { method: 'POST', body: '{"wsDrop":false}' });
  t.equal(off.status, 200);
  t.equal(((await off.json()) as { wsDrop: boolean }).wsDrop, false);
  t.equal(await upgradeStatus(node.wsUrl), 101);
  const c = await client(t, node.wsUrl);
  t.equal(typeof (await c.call('slotSubscribe')).result, 'number');
  await c.notification('slotNotification');

  t.throws(() => node.set({ wsDrop: 'yes' as unknown as boolean }), /wsDrop/);
  const bad = await fetch(`${node.url}/sim/control`, { method: 'POST', body: '{"wsDrop":1}' });
  t.equal(bad.status, 400);
  await bad.arrayBuffer();
});

t.test('startSim with wsDrop refuses WS from the start', async (t) => {
  const node = await sim(t, { wsDrop: true });
  t.equal(await upgradeStatus(node.wsUrl), 503);
  t.equal((await httpCall(node, 'getSlot')).error, undefined);
});

t.test('close() closes WS connections and both listeners', async (t) => {
  const node = await startSim({ id: 'c', port: 0, slotMs: 50 });
  const a = await Client.open(node.wsUrl);
  const b = await Client.open(node.wsUrlPlusOne);
  await a.call('slotSubscribe');
  await b.call('rootSubscribe');
  await node.close();
  const [ca, cb] = await Promise.all([a.closed, b.closed]);
  t.ok(ca.code === 1001 || ca.code === 1006, `a closed (${ca.code})`);
  t.ok(cb.code === 1001 || cb.code === 1006, `b closed (${cb.code})`);
  await eventually('stats at zero', () => node.stats.wsConnections === 0);
  t.equal(node.stats.wsSubscriptions, 0);
  t.equal(await refused(node.port), 'ECONNREFUSED');
  t.equal(await refused(node.port + 1), 'ECONNREFUSED');
  await node.close();
});

t.test('an explicit port whose P+1 is taken still starts, without the P+1 listener', async (t) => {
  // A pair Q, Q+1 where Q is free and Q+1 is held by us. Other tests open ports at the same
  // time, so Q can be taken between the probe and the start: then another pair is tried.
  let node: SimNode | null = null;
  let q = 0;
  let reason = 'no free port pair Q, Q+1 with Q free and Q+1 ours to hold';
  for (let i = 0; i < 40 && node === null; i++) {
    const s = createServer();
    await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
    const p = (s.address() as { port: number }).port;
    if (p < 2 || (await refused(p - 1)) !== 'ECONNREFUSED') {
      s.close();
      continue;
    }
    try {
      node = await startSim({ id: 'p', port: p - 1 });
      q = p - 1;
      t.teardown(() => s.close());
    } catch (e) {
      s.close();
      reason = `port ${p - 1} was taken meanwhile: ${(e as Error).message}`;
    }
  }
  if (node === null) {
    t.test('starts on Q without the P+1 listener', { skip: reason }, () => undefined);
    return;
  }
  const started = node;
  t.teardown(() => started.close());
  t.equal(started.port, q);
  t.equal(started.wsUrlPlusOne, '');
  const c = await client(t, started.wsUrl);
  t.equal((await c.call('slotSubscribe')).result, 0);
});

t.test('port 0 gives pairs P, P+1 for many sims at once', async (t) => {
  const nodes = await Promise.all(Array.from({ length: 8 }, (_, i) => startSim({ id: `m${i}`, port: 0, synthetic: true })));
  t.teardown(() => Promise.all(nodes.map((n) => n.close())));
  const ports = new Set<number>();
  for (const n of nodes) {
    t.equal(n.wsUrlPlusOne, `ws://127.0.0.1:${n.port + 1}`);
    ports.add(n.port);
    ports.add(n.port + 1);
  }
  t.equal(ports.size, 16, 'no port is shared');
  // Each P+1 answers as its own sim.
  const ids = await Promise.all(
    nodes.map(async (n) => {
      const r = await fetch(`http://127.0.0.1:${n.port + 1}`, { method: 'POST', body: '{"jsonrpc":"2.0","id":1,"method":"getIdentity"}' });
      return ((await r.json()) as Msg).result.identity as string;
    }),
  );
  t.same(
    ids,
    nodes.map((n) => n.id),
  );
});

t.test('slow readers: notifications skip a socket with a large send buffer', async (t) => {
  const node = await sim(t, { slotMs: 5 });
  // Many large account subscriptions on one connection; the client never reads.
  const SLOW_SUBS = 1000;
  const raw = connect(node.port, '127.0.0.1');
  t.teardown(() => raw.destroy());
  await new Promise((r) => raw.once('connect', r));
  raw.write(
    'GET / HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n',
  );
  await new Promise((r) => raw.once('data', r));
  raw.pause();
  let big = '';
  for (let i = 0; big === ''; i++) if (accountOf(`Big${i}`).data.length > 900) big = `Big${i}`;
  const frame = (text: string): Buffer => {
    const payload = Buffer.from(text);
    const mask = Buffer.from([1, 2, 3, 4]);
    const head =
      payload.length < 126 ? Buffer.from([0x81, 0x80 | payload.length]) : Buffer.from([0x81, 0x80 | 126, payload.length >> 8, payload.length & 0xff]);
    const body = Buffer.from(payload.map((b, i) => b ^ mask[i % 4]!));
    return Buffer.concat([head, mask, body]);
  };
  for (let i = 0; i < SLOW_SUBS; i++) raw.write(frame(`{"jsonrpc":"2.0","id":${i},"method":"accountSubscribe","params":["${big}",{"encoding":"base64"}]}`));
  await eventually('all subscriptions', () => node.stats.wsSubscriptions === SLOW_SUBS);
  const rss = process.memoryUsage().rss;
  // 300 slots (75 account notifications per subscription) come due: the sim should queue
  // nothing more for this socket, so memory stays flat meanwhile.
  const from = node.slot();
  await eventually('300 slots', () => node.slot() >= from + 300, 20_000);
  const grown = process.memoryUsage().rss - rss;
  // 75 account ticks * 1000 subs * ~1.4 KB would be ~100 MB without the cap.
  t.ok(grown < 40 * 1024 * 1024, `memory grew ${Math.round(grown / 1024 / 1024)} MB`);
  t.equal(node.stats.wsConnections, 1, 'the slow socket is skipped, not closed');
});
