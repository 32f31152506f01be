// Jito block engines as a path (docs/jito.md) against the simulated cluster and its block engine
// (docs/simulator.md "Block engine"): a bundle sent through the gateway lands, its statuses and
// its transactions' statuses answer through the gateway, and /admin/landing credits the engine;
// an invalid bundle gets the engine's error byte for byte; the gateway holds each engine to its
// rate limit (7429, scope engine, Retry-After) so the engine never sees more; a sendTransaction
// also goes to an engine with routing.broadcast.engines.

import { randomBytes } from 'node:crypto';
import t from 'tap';
import { TIP_ACCOUNTS, bundleId, startBlockEngine, type BlockEngine } from '../../src/tools/sim/block-engine.js';
import { Cluster } from '../../src/tools/sim/cluster.js';
import { pubkeyBytes, transferTx } from '../../src/tools/sim/wire.js';
import { encodeBase58 } from '../../src/solana/base58.js';
import { eventually, eventuallyValue as waitValue } from '../helpers/eventually.js';
import { PLANES, startHarness, type Harness } from '../helpers/gateway.js';

const ADMIN = 'jito-admin-token-0123456789abc';
const SLOT_MS = 100;
const AUTH = '5b0b4a5e-3a4a-4c47-9f0e-0a7d6c3f4e21';

interface Setup {
  h: Harness;
  engine: BlockEngine;
  cluster: Cluster;
}

type Test = Parameters<Parameters<typeof t.test>[0]>[0];

async function setup(
  t: Test,
  workers: number,
  engineKnobs: Record<string, number> = {},
  gateway: Record<string, unknown> = {},
  rateLimit?: number,
): Promise<Setup> {
  const cluster = new Cluster({ slotMs: SLOT_MS });
  const engine = await startBlockEngine({ cluster, port: 0, bundleLandingMs: 150, ...engineKnobs });
  const h = await startHarness({
    workers,
    admin: true,
    sims: [{ cluster, synthetic: false }],
    extraNodes: [{ id: 'jito-a', url: engine.url, kind: 'jito', headers: { 'x-jito-auth': AUTH }, ...(rateLimit === undefined ? {} : { rateLimit }) }],
    config: { admin: { token: ADMIN }, health: { intervalMs: 200, chainWatch: true }, ...gateway },
  });
  t.teardown(async () => {
    await h.close();
    await engine.close();
  });
  return { h, engine, cluster };
}

/** A faucet transfer to `to` over `blockhash`, base64. */
function transfer(cluster: Cluster, to: Buffer, lamports: bigint, blockhash: string): string {
  return transferTx(cluster.ledger.faucet, to, lamports, blockhash).toString('base64');
}

async function blockhash(h: Harness): Promise<string> {
  return (await h.call('getLatestBlockhash', [{ commitment: 'finalized' }])).json.result.value.blockhash as string;
}

function sigOf(b64: string): string {
  return encodeBase58(Buffer.from(b64, 'base64').subarray(1, 65));
}

async function direct(engine: BlockEngine, body: string): Promise<{ status: number; text: string }> {
  const r = await fetch(engine.url + '/api/v1/bundles', { method: 'POST', headers: { 'content-type': 'application/json' }, body });
  return { status: r.status, text: await r.text() };
}

async function landing(h: Harness): Promise<any> {
  const r = await fetch(h.gw.admin!.url + '/admin/landing', { headers: { authorization: `Bearer ${ADMIN}` } });
  return r.json();
}

t.test('a bundle through the gateway lands on the simulated engine, credited to the engine', async (t) => {
  const { h, engine, cluster } = await setup(t, 0);
  const hash = await blockhash(h);
  const payTo = randomBytes(32);
  const a = transfer(cluster, payTo, 1_000_000_000n, hash);
  const tip = transfer(cluster, pubkeyBytes(TIP_ACCOUNTS[3]!)!, 1_000_000n, hash);
  const sigs = [sigOf(a), sigOf(tip)];

  const sent = await h.call('sendBundle', [[a, tip], { encoding: 'base64' }]);
  t.equal(sent.status, 200);
  t.equal(sent.json.result, bundleId(sigs), 'the bundle id is the engine answer');
  t.equal(sent.node, 'jito-a', 'the engine answered, not the RPC node');
  t.equal(engine.stats.auth, AUTH, 'the configured x-jito-auth header reached the engine');

  const status = await eventuallyResult(
    h,
    'getBundleStatuses',
    [[bundleId(sigs)]],
    (r) => r.value[0] !== null && r.value[0].confirmation_status !== 'processed',
  );
  t.same(status.value[0].transactions, sigs);
  t.same(status.value[0].err, { Ok: null });
  const inflight = await engineCall(h, 'getInflightBundleStatuses', [[bundleId(sigs), 'ff'.repeat(32)]]);
  t.equal(inflight.json.result.value[0].status, 'Landed');
  t.equal(inflight.json.result.value[0].landed_slot, status.value[0].slot);
  t.same(inflight.json.result.value[1], { bundle_id: 'ff'.repeat(32), status: 'Invalid', landed_slot: null });
  const sigStatuses = await h.call('getSignatureStatuses', [sigs]);
  t.equal(sigStatuses.node, 'n0', 'signature statuses come from the RPC node');
  t.ok(
    sigStatuses.json.result.value.every((s: { slot: number } | null) => s !== null && s.slot === status.value[0].slot),
    'both transactions are in the ledger, in the bundle slot',
  );
  t.equal((await engineCall(h, 'getTipAccounts')).json.result.length, 8);
  const admin = (path: string) => fetch(h.gw.admin!.url + path, { headers: { authorization: `Bearer ${ADMIN}` } }).then((r) => r.json() as Promise<any>);
  t.same(await admin('/admin/engines'), [{ id: 'jito-a', url: engine.url, rateLimit: 5 }], 'the engine is listed, without its headers');
  t.same(
    (await admin('/admin/nodes')).map((n: { id: string }) => n.id),
    ['n0'],
    'the node list holds only the RPC node',
  );
  t.equal(h.gw.pool.nodes.length, 1, 'the pool holds only the RPC node');

  // Tracked like sends: the engine is the node they went to.
  const view = await eventuallyValue(async () => {
    const v = await landing(h);
    return v.nodes['jito-a']?.landed === 2 ? v : undefined;
  }, 'the landing figures credit the engine');
  t.equal(view.nodes['jito-a'].sent, 2);
  t.equal(view.nodes.n0, undefined, 'the RPC node sent none of them');
});

t.test('invalid bundles get the engine error unchanged', async (t) => {
  const { h, engine, cluster } = await setup(t, 0);
  const hash = await blockhash(h);
  const one = (i: number) => transfer(cluster, randomBytes(32), BigInt(1000 + i), hash);
  const tip = transfer(cluster, pubkeyBytes(TIP_ACCOUNTS[0]!)!, 1_000_000n, hash);
  const bodies = {
    'no tip': [[one(1), one(2)], { encoding: 'base64' }],
    'six transactions': [[one(1), one(2), one(3), one(4), one(5), tip], { encoding: 'base64' }],
    'bad encoding': [['not*base64', tip], { encoding: 'base64' }],
    'unknown encoding': [[tip], { encoding: 'hex' }],
  };
  for (const [what, params] of Object.entries(bodies)) {
    const body = JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'sendBundle', params });
    const through = await h.post(body);
    const straight = await direct(engine, body);
    t.equal(through.status, straight.status, `${what}: same status`);
    t.equal(through.text, straight.text, `${what}: same bytes`);
    t.match(JSON.parse(through.text), { error: { code: -32602 } }, what);
  }
  t.match(
    (await h.post(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'sendBundle', params: [[one(9)], { encoding: 'base64' }] }))).text,
    /write lock at least one tip account/,
  );
  t.equal(engine.stats.bundles, 0, 'no bundle was accepted');
});

for (const plane of PLANES) {
  t.test(`${plane.name}: the engine rate limit is held by the gateway (7429 scope engine)`, async (t) => {
    const { h, engine } = await setup(t, plane.workers, {}, {}, 5);
    const body = JSON.stringify({ jsonrpc: '2.0', id: 3, method: 'getTipAccounts' });
    const answers = await Promise.all(Array.from({ length: 12 }, () => h.post(body)));
    const ok = answers.filter((a) => a.status === 200);
    const limited = answers.filter((a) => a.status === 429);
    t.ok(ok.length >= 1 && ok.length <= 5, `at most 5 went to the engine (${ok.length})`);
    t.equal(ok.length + limited.length, 12);
    for (const a of limited) {
      const j = JSON.parse(a.text);
      t.equal(j.error.code, 7429);
      t.equal(j.error.data.scope, 'engine');
      t.ok(j.error.data.retryAfterMs > 0 && j.error.data.retryAfterMs <= 1000);
      t.equal(a.headers.get('retry-after'), '1');
    }
    t.ok(engine.stats.calls + engine.stats.limited <= 5, `the engine saw at most 5 calls (${engine.stats.calls})`);
    t.equal(engine.stats.limited, 0, 'the engine never had to refuse');
  });
}

t.test("the engine's own 429 passes through unchanged", async (t) => {
  const { h, engine } = await setup(t, 0, { engineRateLimit: 1 }, {}, 100);
  const body = JSON.stringify({ jsonrpc: '2.0', id: 4, method: 'getTipAccounts' });
  const first = await h.post(body);
  t.equal(first.status, 200);
  const second = await h.post(body);
  t.equal(second.status, 429);
  t.equal(second.text, '{"jsonrpc":"2.0","error":{"code":-32097,"message":"Network congested. Endpoint is globally rate limited."},"id":4}');
  t.equal(engine.stats.limited, 1);
});

t.test('routing.broadcast.engines: a sendTransaction also goes to an engine and is credited to it', async (t) => {
  const { h, engine, cluster } = await setup(t, 0, {}, { routing: { broadcast: { engines: true } } });
  const hash = await blockhash(h);
  const tx = transfer(cluster, randomBytes(32), 5_000_000n, hash);
  const r = await h.call('sendTransaction', [tx, { encoding: 'base64' }]);
  t.equal(r.json.result, sigOf(tx));
  t.equal(r.node, 'n0', 'the RPC node answered the client');
  await eventually('the engine took the copy', () => engine.stats.transactions === 1, 5000);
  const view = await eventuallyValue(async () => {
    const v = await landing(h);
    return v.nodes['jito-a']?.landed === 1 && v.nodes.n0?.landed === 1 ? v : undefined;
  }, 'both paths credited with the landed transaction');
  t.equal(view.tokens[Object.keys(view.tokens)[0]!].sent, 1, 'one transaction for the token');
});

t.test('without an engine, the bundle methods go to RPC nodes like any method', async (t) => {
  const h = await startHarness({});
  t.teardown(() => h.close());
  const r = await h.call('getTipAccounts');
  t.equal(r.node, 'n0');
  t.equal(r.json.error.code, -32601);
});

/** A call to the engine's methods as a client that honours the engine's 429 does it: after Retry-After, again (a few times). */
async function engineCall(h: Harness, method: string, params?: unknown): Promise<Awaited<ReturnType<Harness['call']>>> {
  for (let i = 0; ; i++) {
    const r = await h.call(method, params);
    if (r.status !== 429 || r.json.error?.data?.scope !== 'engine' || i === 5) return r;
    await new Promise((res) => setTimeout(res, r.json.error.data.retryAfterMs));
  }
}

async function eventuallyResult(h: Harness, method: string, params: unknown, ok: (r: any) => boolean): Promise<any> {
  return eventuallyValue(async () => {
    const r = (await engineCall(h, method, params)).json.result;
    return r !== undefined && ok(r) ? r : undefined;
  }, `${method} answered as expected`);
}

function eventuallyValue<T>(get: () => Promise<T | undefined>, what: string): Promise<T> {
  return waitValue(what, get, 15_000, 100);
}
