// Key affinity, IP affinity (source addresses 127.x.y.z), X-Forwarded-For, failover and return
// of a key, automatic affinity for state-bound methods, and hot-key limits, end to end.

import { request } from 'node:http';
import t from 'tap';
import { startSim } from '../../src/tools/sim/node.js';
import { eventually } from '../helpers/eventually.js';
import { PLANES, startHarness, TOKEN, type Harness } from '../helpers/gateway.js';
import { startTcpProxy } from '../helpers/tcp-proxy.js';

const IDENTITY = '{"jsonrpc":"2.0","id":1,"method":"getIdentity"}';

/** POST from a chosen local address; resolves with status, headers and body. */
function postFrom(
  h: Harness,
  localAddress: string,
  body: string,
  headers: Record<string, string> = {},
): Promise<{ status: number; node: string; text: string; headers: Record<string, string | string[] | undefined> }> {
  const u = new URL(h.url);
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: u.hostname,
        port: u.port,
        path: `/api-token/${TOKEN}`,
        method: 'POST',
        localAddress,
        agent: false,
        headers: { 'content-type': 'application/json', ...headers },
      },
      (res) => {
        let text = '';
        res.on('data', (d: Buffer) => (text += d.toString()));
        res.on('end', () => resolve({ status: res.statusCode!, node: String(res.headers['x-service-node'] ?? ''), text, headers: res.headers }));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

async function identityFor(h: Harness, headers: Record<string, string>): Promise<string> {
  const r = await h.post(IDENTITY, { headers });
  if (r.status !== 200) throw new Error(`status ${r.status}: ${r.text}`);
  return (JSON.parse(r.text) as { result: { identity: string } }).result.identity;
}

function keyHeaders(key: string): Record<string, string> {
  return { 'x-service-affinity': 'key', 'x-service-affinity-key': key };
}

t.test('1,000 keys stick to their node and spread over all nodes', async (t) => {
  const h = await startHarness({ sims: [{}, {}, {}] });
  t.teardown(() => h.close());
  const first = new Map<string, string>();
  const counts = new Map<string, number>();
  for (let i = 0; i < 1000; i += 50) {
    const batch = Array.from({ length: 50 }, (_, j) => `user-${i + j}`);
    const nodes = await Promise.all(batch.map((k) => identityFor(h, keyHeaders(k))));
    batch.forEach((k, j) => first.set(k, nodes[j]!));
  }
  for (const n of first.values()) counts.set(n, (counts.get(n) ?? 0) + 1);
  t.equal(counts.size, 3, 'all three nodes own keys');
  for (const [n, c] of counts) t.ok(c > 200 && c < 470, `${n} owns ${c} of 1000 keys (about a third)`);
  let moved = 0;
  for (let i = 0; i < 1000; i += 50) {
    const batch = Array.from({ length: 50 }, (_, j) => `user-${i + j}`);
    const nodes = await Promise.all(batch.map((k) => identityFor(h, keyHeaders(k))));
    batch.forEach((k, j) => {
      if (first.get(k) !== nodes[j]) moved++;
    });
  }
  t.equal(moved, 0, 'every key answered by the same node again');
  // The key header is also accepted without the X- prefix, and a batch under key affinity goes whole.
  const bare = await identityFor(h, { 'x-service-affinity': 'key', 'service-affinity-key': 'user-7' });
  t.equal(bare, first.get('user-7'));
  const batch = JSON.stringify(Array.from({ length: 120 }, (_, i) => ({ jsonrpc: '2.0', id: i, method: 'getIdentity' })));
  const r = await h.post(batch, { headers: keyHeaders('user-7') });
  t.equal(r.headers.get('x-service-node'), first.get('user-7'), 'a 120-call batch goes whole to the key node');
});

t.test('IP affinity: key mode without a key sticks per source address', async (t) => {
  const h = await startHarness({ sims: [{}, {}, {}] });
  t.teardown(() => h.close());
  const seen = new Map<string, string>();
  for (let i = 1; i <= 40; i++) {
    const ip = `127.0.${i}.${i + 1}`;
    const a = await postFrom(h, ip, IDENTITY, { 'x-service-affinity': 'key' });
    const b = await postFrom(h, ip, IDENTITY, { 'x-service-affinity': 'key' });
    t.equal(a.status, 200);
    t.equal(a.node, b.node, `${ip} sticks`);
    // The IP is the key: the same node as an explicit key equal to the IP.
    t.equal(a.node, await identityFor(h, keyHeaders(ip)), `${ip} maps like the key "${ip}"`);
    seen.set(ip, a.node);
  }
  t.ok(new Set(seen.values()).size >= 2, 'different IPs land on different nodes');
});

t.test('X-Forwarded-For: believed only from trusted proxies', async (t) => {
  const h = await startHarness({ sims: [{}, {}, {}], config: { trustedProxies: ['127.0.0.1/32'] } });
  t.teardown(() => h.close());
  let differs = 0;
  for (let i = 0; i < 30; i++) {
    const client = `203.0.113.${i + 1}`;
    const viaProxy = await postFrom(h, '127.0.0.1', IDENTITY, { 'x-service-affinity': 'key', 'x-forwarded-for': `198.51.100.7, ${client}` });
    t.equal(viaProxy.node, await identityFor(h, keyHeaders(client)), 'trusted peer: the right-most hop is the client');
    const untrusted = await postFrom(h, '127.0.0.9', IDENTITY, { 'x-service-affinity': 'key', 'x-forwarded-for': client });
    t.equal(untrusted.node, await identityFor(h, keyHeaders('127.0.0.9')), 'untrusted peer: its header is ignored');
    if (viaProxy.node !== untrusted.node) differs++;
  }
  t.ok(differs > 0, 'the two rules really pick different keys');
});

t.test('a key fails over to a fixed fallback while its node is down, then returns', async (t) => {
  // The middle node sits behind a TCP proxy so it can be stopped and started on one port.
  const mid = await startSim({ id: 'mid', port: 0, synthetic: true });
  const proxy = await startTcpProxy(mid.port);
  t.teardown(async () => {
    await proxy.close();
    await mid.close();
  });
  const h = await startHarness({
    sims: [{}, {}],
    extraNodes: [{ id: 'mid', url: proxy.url }],
    config: { health: { intervalMs: 100, ejectBackoffMs: 100, ejectBackoffMaxMs: 200 } },
  });
  t.teardown(() => h.close());
  const keys = Array.from({ length: 300 }, (_, i) => `acct-${i}`);
  const home = new Map<string, string>();
  for (const k of keys) home.set(k, await identityFor(h, keyHeaders(k)));
  t.ok([...home.values()].includes('mid'), 'the middle node owns keys');
  await proxy.stop();
  const during = new Map<string, string>();
  for (const k of keys) during.set(k, await identityFor(h, keyHeaders(k)));
  let moved = 0;
  for (const k of keys) {
    if (home.get(k) === 'mid') {
      if (during.get(k) !== 'mid') moved++;
    } else if (during.get(k) !== home.get(k)) t.fail(`${k} moved from ${home.get(k)} to ${during.get(k)}`);
  }
  t.equal(moved, [...home.values()].filter((n) => n === 'mid').length, 'every key of the dead node moved, no other key did');
  // The fallback is deterministic: asking again gives the same node.
  for (const k of keys.filter((k) => home.get(k) === 'mid').slice(0, 20)) t.equal(await identityFor(h, keyHeaders(k)), during.get(k));
  await proxy.start();
  const node = h.gw.pool.byId('mid')!;
  await eventually('the node to be readmitted', () => node.state === 'healthy', 5000, 100);
  t.equal(node.state, 'healthy', 'the node is readmitted');
  let home2 = 0;
  for (const k of keys) if ((await identityFor(h, keyHeaders(k))) === home.get(k)) home2++;
  t.equal(home2, keys.length, 'every key is home again');
});

t.test('state-bound methods get IP affinity automatically in default mode', async (t) => {
  const h = await startHarness({ sims: [{}, {}, {}] });
  t.teardown(() => h.close());
  const body = '{"jsonrpc":"2.0","id":1,"method":"getLatestBlockhash"}';
  const nodes = new Set<string>();
  for (let i = 0; i < 30; i++) nodes.add((await postFrom(h, '127.0.5.5', body)).node);
  t.equal(nodes.size, 1, 'every getLatestBlockhash from one IP hits one node');
  const batch = JSON.stringify([
    ...Array.from({ length: 60 }, (_, i) => ({ jsonrpc: '2.0', id: i, method: 'getSlot' })),
    { jsonrpc: '2.0', id: 99, method: 'getLatestBlockhash' },
  ]);
  const r = await postFrom(h, '127.0.5.5', batch);
  t.equal(r.node, [...nodes][0], 'a batch with getLatestBlockhash goes whole to the IP node');
  const plain = new Set<string>();
  for (let i = 0; i < 30; i++) plain.add((await postFrom(h, '127.0.5.5', '{"jsonrpc":"2.0","id":1,"method":"getSlot"}')).node);
  t.ok(plain.size >= 2, 'other methods are still balanced');
});

// The limits run inline and with the shipped default of one worker thread.
for (const plane of PLANES) {
  t.test(`${plane.name}: hot key gets 429 (7429, Retry-After, scope) while well-spread keys do not`, async (t) => {
    const h = await startHarness({ workers: plane.workers, sims: [{}, {}], config: { affinity: { keyRate: 20, keyBurst: 40 } } });
    t.teardown(() => h.close());
    const statuses: number[] = [];
    let limited: { status: number; headers: Headers; text: string } | null = null;
    for (let i = 0; i < 10; i++) {
      const rs = await Promise.all(Array.from({ length: 20 }, () => h.post(IDENTITY, { headers: keyHeaders('hot') })));
      for (const r of rs) {
        statuses.push(r.status);
        if (r.status === 429) limited = r;
      }
    }
    const refused = statuses.filter((s) => s === 429).length;
    t.ok(refused >= 100, `${refused} of 200 hot-key requests refused`);
    t.ok(limited !== null);
    const body = JSON.parse(limited!.text) as { error: { code: number; data: { scope: string; retryAfterMs: number } }; id: unknown };
    t.equal(body.error.code, 7429);
    t.equal(body.error.data.scope, 'affinity-key');
    t.ok(body.error.data.retryAfterMs > 0);
    t.equal(body.id, 1, 'id echoed');
    t.ok(Number(limited!.headers.get('retry-after')) >= 1, 'Retry-After header');
    // The same total, spread over 1,000 keys: nothing refused.
    let spreadRefused = 0;
    for (let i = 0; i < 1000; i += 50) {
      const rs = await Promise.all(Array.from({ length: 50 }, (_, j) => h.post(IDENTITY, { headers: keyHeaders(`spread-${i + j}`) })));
      spreadRefused += rs.filter((r) => r.status === 429).length;
    }
    t.equal(spreadRefused, 0, 'no well-spread key is limited');
    // Without a key, the IP is limited with scope "ip".
    let ipLimited = 0;
    let scope = '';
    for (let i = 0; i < 80; i++) {
      const r = await postFrom(h, '127.0.7.7', IDENTITY, { 'x-service-affinity': 'key' });
      if (r.status === 429) {
        ipLimited++;
        scope = (JSON.parse(r.text) as { error: { data: { scope: string } } }).error.data.scope;
      }
    }
    t.ok(ipLimited > 0, 'a hot IP is limited');
    t.equal(scope, 'ip');
  });

  t.test(`${plane.name}: per-token and per-method limits`, async (t) => {
    const h = await startHarness({
      workers: plane.workers,
      sims: [{}],
      config: { rateLimits: { token: { rate: 5, burst: 30 }, methods: { getBalance: { rate: 1, burst: 3 } } } },
    });
    t.teardown(() => h.close());
    const bal = '{"jsonrpc":"2.0","id":1,"method":"getBalance","params":["11111111111111111111111111111111"]}';
    const b = await Promise.all(Array.from({ length: 6 }, () => h.post(bal)));
    const methodRefused = b.filter((r) => r.status === 429);
    t.ok(methodRefused.length >= 2, 'getBalance over its per-method burst is refused');
    t.equal((JSON.parse(methodRefused[0]!.text) as { error: { data: { scope: string } } }).error.data.scope, 'method');
    const batch = JSON.stringify(Array.from({ length: 40 }, (_, i) => ({ jsonrpc: '2.0', id: i, method: 'getSlot' })));
    const r = await h.post(batch);
    t.equal(r.status, 429, 'a 40-call batch exceeds the 30-call token burst');
    t.equal((JSON.parse(r.text) as { error: { data: { scope: string } } }).error.data.scope, 'token');
  });
}

t.test('a weight change through the admin API moves the expected share of keys, and only those', async (t) => {
  const h = await startHarness({ sims: [{}, {}, {}], admin: true, config: { admin: { token: 'admin-token-0123456789' } } });
  t.teardown(() => h.close());
  const keys = Array.from({ length: 1500 }, (_, i) => `w-${i}`);
  const lookup = async (): Promise<Map<string, string>> => {
    const m = new Map<string, string>();
    for (let i = 0; i < keys.length; i += 100) {
      const part = keys.slice(i, i + 100);
      const nodes = await Promise.all(part.map((k) => identityFor(h, keyHeaders(k))));
      part.forEach((k, j) => m.set(k, nodes[j]!));
    }
    return m;
  };
  const before = await lookup();
  const res = await fetch(`http://127.0.0.1:${h.gw.admin!.port}/admin/nodes/n0`, {
    method: 'PATCH',
    headers: { authorization: 'Bearer admin-token-0123456789', 'content-type': 'application/json' },
    body: '{"weight":2}',
  });
  t.equal(res.status, 200);
  const after = await lookup();
  const share = (m: Map<string, string>): number => [...m.values()].filter((n) => n === 'n0').length / keys.length;
  t.ok(Math.abs(share(before) - 1 / 3) < 0.05, `n0 held about 1/3 of the keys (${share(before).toFixed(3)})`);
  t.ok(Math.abs(share(after) - 1 / 2) < 0.05, `n0 holds about 1/2 after weight 2 (${share(after).toFixed(3)})`);
  let wrongMove = 0;
  for (const k of keys) if (before.get(k) !== after.get(k) && after.get(k) !== 'n0') wrongMove++;
  t.equal(wrongMove, 0, 'keys only moved onto the heavier node');
});
