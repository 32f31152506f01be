import t from 'tap';
import { connect } from 'node:net';
import { decodeBase58, encodeBase58 } from '../../src/solana/base58.js';
import { parseSimArgs } from '../../src/cli/sim.js';
import { blockhashOf, blockHeightOf, rootOf, startSim, type SimNode } from '../../src/tools/sim/node.js';
import { eventually } from '../helpers/eventually.js';

interface Reply {
  status: number;
  type: string | null;
  text: string;
}

async function post(url: string, body: unknown, signal?: AbortSignal): Promise<Reply> {
  const r = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: typeof body === 'string' ? body : JSON.stringify(body),
    ...(signal ? { signal } : {}),
  });
  return { status: r.status, type: r.headers.get('content-type'), text: await r.text() };
}

interface RpcResponse {
  jsonrpc: string;
  id: unknown;
  result?: any;
  error?: { code: number; message: string; data?: any };
}

async function call(node: SimNode, method: string, params?: unknown[]): Promise<RpcResponse> {
  const r = await post(node.url, { jsonrpc: '2.0', id: 1, method, ...(params ? { params } : {}) });
  return JSON.parse(r.text) as RpcResponse;
}

async function sim(t: { teardown(fn: () => unknown): void }, opts: Partial<Parameters<typeof startSim>[0]> = {}): Promise<SimNode> {
  // Synthetic mode: the deterministic accounts and the node id as identity these tests read.
  const node = await startSim({ id: 'node-a', port: 0, synthetic: true, ...opts });
  t.teardown(() => node.close());
  return node;
}

const PUBKEY = 'So11111111111111111111111111111111111111112';

t.test('base58 round-trips and keeps leading zeros', async (t) => {
  const bytes = Uint8Array.from([0, 0, 1, 2, 255, 128, 7]);
  t.same(decodeBase58(encodeBase58(bytes)), bytes);
  t.equal(encodeBase58(new Uint8Array(32)), '11111111111111111111111111111111');
  t.equal(decodeBase58('0OIl'), null);
});

t.test('listens on an ephemeral port and serves the simple methods', async (t) => {
  const node = await sim(t);
  t.ok(node.port > 0);
  t.equal(node.url, `http://127.0.0.1:${node.port}`);

  const raw = await post(node.url, { jsonrpc: '2.0', id: 1, method: 'getHealth' });
  t.equal(raw.status, 200);
  t.equal(raw.type, 'application/json');
  t.equal(raw.text, '{"jsonrpc":"2.0","result":"ok","id":1}');

  // Agave's default commitment is finalized: 32 slots behind processed.
  const slot = (await call(node, 'getSlot')).result as number;
  t.ok(Number.isInteger(slot) && Math.abs(slot - node.views()[2]) <= 1);
  t.ok(Math.abs(node.slot() - 32 - slot) <= 1, 'finalized trails processed by 32');
  const height = (await call(node, 'getBlockHeight')).result as number;
  t.ok(Math.abs(height - blockHeightOf(node.views()[2])) <= 1);
  t.equal(rootOf(1000), 968);
  t.same((await call(node, 'getIdentity')).result, { identity: 'node-a' });
  t.same((await call(node, 'getVersion')).result, { 'feature-set': 3294202862, 'solana-core': '2.1.0' });
  const sim1 = await call(node, 'simulateTransaction', ['AQAB', { encoding: 'base64' }]);
  t.same(sim1.error, {
    code: -32602,
    message: 'failed to deserialize solana_transaction::versioned::VersionedTransaction: io error: failed to fill whole buffer',
  });

  // Synthetic mode acknowledges bytes that are no transaction, as benchmarks send them.
  const sig = (await call(node, 'sendTransaction', ['AQABAgM='])).result as string;
  t.match(sig, /^[1-9A-HJ-NP-Za-km-z]{88}$/);
  t.equal((await call(node, 'sendTransaction', ['AQABAgM='])).result, sig, 'deterministic');
  t.not((await call(node, 'sendTransaction', ['AQABAgQ='])).result, sig);
});

t.test('blockhashes: latest, then valid for 150 slots only', async (t) => {
  const node = await sim(t);
  const latest = await call(node, 'getLatestBlockhash');
  const { context, value } = latest.result;
  t.match(value.blockhash, /^[1-9A-HJ-NP-Za-km-z]{43,44}$/);
  t.equal(value.lastValidBlockHeight, blockHeightOf(context.slot) + 150);
  t.equal(value.blockhash, blockhashOf(context.slot), 'same hash in every sim for a slot');

  const valid = async (h: string): Promise<unknown> => (await call(node, 'isBlockhashValid', [h])).result.value;
  t.equal(await valid(value.blockhash), true);
  t.equal(await valid(blockhashOf(node.slot() - 140)), true);
  t.equal(await valid(blockhashOf(node.slot() - 200)), false, 'expired');
  t.equal(await valid(blockhashOf(node.slot() + 100)), false, 'not yet seen');
  t.equal(await valid('4uQeVj5tqViQh7yWWGStvkEG1Zmhx6uasJtWCJziofM'), false, 'never issued');
  t.same((await call(node, 'isBlockhashValid', ['not base58 0OIl'])).error, { code: -32602, message: 'Invalid param: Invalid' });
  t.same((await call(node, 'isBlockhashValid', ['1111'])).error, { code: -32602, message: 'Invalid param: WrongSize' });
  t.equal((await call(node, 'isBlockhashValid')).error?.code, -32602);
});

t.test('accounts: deterministic, exact rentEpoch bytes, dataSlice', async (t) => {
  const node = await sim(t);
  const raw = await post(node.url, { jsonrpc: '2.0', id: 1, method: 'getAccountInfo', params: [PUBKEY] });
  t.match(raw.text, /,"rentEpoch":18446744073709551615,/);
  const acct = (JSON.parse(raw.text) as RpcResponse).result.value;
  t.same(Object.keys(acct), ['data', 'executable', 'lamports', 'owner', 'rentEpoch', 'space']);
  t.equal(acct.data[1], 'base64');
  t.equal(Buffer.from(acct.data[0], 'base64').length, acct.space);
  t.ok(acct.space >= 0 && acct.space < 1024);
  t.equal(acct.executable, false);
  t.equal(acct.owner, '11111111111111111111111111111111');

  const bal = await call(node, 'getBalance', [PUBKEY]);
  t.equal(bal.result.value, acct.lamports);
  t.ok(Number.isInteger(bal.result.context.slot));

  const sliced = (await call(node, 'getAccountInfo', [PUBKEY, { encoding: 'base64', dataSlice: { offset: 2, length: 4 } }])).result.value;
  t.equal(sliced.space, acct.space, 'space is the full length');
  t.same(Buffer.from(sliced.data[0], 'base64'), Buffer.from(acct.data[0], 'base64').subarray(2, 6));

  for (const bad of [[], [42], undefined]) {
    const r = await call(node, 'getAccountInfo', bad);
    t.same(r.error, { code: -32602, message: 'Invalid params' });
  }
  t.equal((await call(node, 'getBalance', [])).error?.code, -32602);
  t.equal((await call(node, 'getMultipleAccounts', ['x'])).error?.code, -32602);
});

t.test('getMultipleAccounts answers in order, up to 100 keys as Agave', async (t) => {
  const node = await sim(t);
  const keys = Array.from({ length: 100 }, (_, i) => `Key${i}1111111111111111111111111111111111111`);
  const raw = await post(node.url, { jsonrpc: '2.0', id: 1, method: 'getMultipleAccounts', params: [keys] });
  t.ok(raw.text.length > 50_000, `${raw.text.length} bytes`);
  const over = await call(node, 'getMultipleAccounts', [[...keys, 'One1111111111111111111111111111111111111111']]);
  t.same(over.error, { code: -32602, message: 'Too many inputs provided; max 100' });
  const value = (JSON.parse(raw.text) as RpcResponse).result.value as { lamports: number }[];
  t.equal(value.length, keys.length);
  const one = (await call(node, 'getAccountInfo', [keys[7]!])).result.value;
  t.same(value[7], one);
});

t.test('ids are echoed byte for byte', async (t) => {
  const node = await sim(t);
  for (const id of ['"7"', '7', '12345678901234567890', 'null', '-1.5e3', '"a\\"b"']) {
    const r = await post(node.url, `{"jsonrpc":"2.0","method":"getVersion","id":${id}}`);
    t.ok(r.text.endsWith(`,"id":${id}}`), `id ${id}: ${r.text}`);
  }
  const r = await post(node.url, '{"id" : 12345678901234567890 , "jsonrpc":"2.0","method":"getSlot"}');
  t.ok(r.text.endsWith(',"id":12345678901234567890}'));
});

t.test('batches keep order, skip notifications, reject junk elements', async (t) => {
  const node = await sim(t);
  const body =
    '[{"jsonrpc":"2.0","id":"x","method":"getIdentity"},{"jsonrpc":"2.0","method":"getSlot"},' +
    '5,{"jsonrpc":"2.0","id":12345678901234567890,"method":"nope"},{"id":3,"method":"getSlot"},' +
    '{"jsonrpc":"2.0","id":4,"method":"getHealth"}]';
  const r = await post(node.url, body);
  const arr = JSON.parse(r.text) as RpcResponse[];
  t.equal(arr.length, 5);
  t.same(arr[0], { jsonrpc: '2.0', result: { identity: 'node-a' }, id: 'x' });
  t.same(arr[1], { jsonrpc: '2.0', error: { code: -32600, message: 'Invalid Request' }, id: null });
  t.same(arr[2]!.error, { code: -32601, message: 'Method not found' });
  t.ok(r.text.includes('"id":12345678901234567890}'));
  t.same(arr[3], { jsonrpc: '2.0', error: { code: -32600, message: 'Invalid Request' }, id: 3 }, 'no jsonrpc member');
  t.same(arr[4], { jsonrpc: '2.0', result: 'ok', id: 4 });

  const empty = await post(node.url, '[]');
  t.same(JSON.parse(empty.text), { jsonrpc: '2.0', error: { code: -32600, message: 'Invalid Request' }, id: null });

  const notes = await post(node.url, '[{"jsonrpc":"2.0","method":"getSlot"}]');
  t.equal(notes.status, 200);
  t.equal(notes.text, '', 'only notifications: empty body');

  t.equal(node.stats.requests, 3);
  t.equal(node.stats.calls, 7, 'elements of a batch count, an empty batch does not');
  t.equal(node.stats.byMethod.get('getSlot'), 2, 'invalid requests are not counted by method');
});

t.test('parse errors and unknown methods', async (t) => {
  const node = await sim(t);
  const r = await post(node.url, '{"jsonrpc":"2.0",');
  t.equal(r.text, '{"jsonrpc":"2.0","error":{"code":-32700,"message":"Parse error"},"id":null}');
  t.same((await call(node, 'eth_blockNumber')).error, { code: -32601, message: 'Method not found' });
  const get = await fetch(node.url);
  t.equal(get.status, 405);
  await get.arrayBuffer();
});

t.test('lag: sims started apart agree on the true slot', async (t) => {
  const a = await sim(t, { id: 'a' });
  const b = await sim(t, { id: 'b', lag: 50 });
  const [sa, sb] = await Promise.all([call(a, 'getSlot'), call(b, 'getSlot')]);
  const diff = (sa.result as number) - (sb.result as number);
  t.ok(diff >= 49 && diff <= 51, `diff ${diff}`);
  t.equal(b.slot(), a.slot() - 50);
});

t.test('unhealthy getHealth', async (t) => {
  const node = await sim(t, { unhealthy: true, lag: 12 });
  t.same((await call(node, 'getHealth')).error, { code: -32005, message: 'Node is behind by 12 slots', data: { numSlotsBehind: 12 } });
  t.equal((await call(node, 'getSlot')).error, undefined, 'other methods still answer');
});

t.test('failRate 1 in each mode', async (t) => {
  const node = await sim(t, { failRate: 1, failMode: 'http500' });
  const r500 = await post(node.url, { jsonrpc: '2.0', id: 1, method: 'getSlot' });
  t.equal(r500.status, 500);
  t.equal(r500.text, 'Internal Server Error');

  node.set({ failMode: 'rpc-error' });
  const rpc = await post(node.url, { jsonrpc: '2.0', id: '9', method: 'getSlot' });
  t.equal(rpc.status, 200);
  t.same(JSON.parse(rpc.text), {
    jsonrpc: '2.0',
    error: { code: -32005, message: 'Node is unhealthy', data: { numSlotsBehind: null } },
    id: '9',
  });
  const batch = JSON.parse(
    (await post(node.url, '[{"jsonrpc":"2.0","id":1,"method":"getSlot"},{"jsonrpc":"2.0","id":2,"method":"getSlot"}]')).text,
  ) as RpcResponse[];
  t.same(
    batch.map((x) => [x.id, x.error?.code]),
    [
      [1, -32005],
      [2, -32005],
    ],
  );

  node.set({ failMode: 'mixed' });
  const statuses = new Set<number>();
  for (let i = 0; i < 40; i++) statuses.add((await post(node.url, { jsonrpc: '2.0', id: i, method: 'getSlot' })).status);
  t.same([...statuses].sort(), [200, 500], 'both kinds');
});

t.test('dropRate 1 closes the connection without a response', async (t) => {
  const node = await sim(t, { dropRate: 1 });
  await t.rejects(post(node.url, { jsonrpc: '2.0', id: 1, method: 'getSlot' }));
  t.equal(node.stats.requests, 1);
});

t.test('stallRate 1 never answers', async (t) => {
  const node = await sim(t, { stallRate: 1 });
  const started = Date.now();
  await t.rejects(post(node.url, { jsonrpc: '2.0', id: 1, method: 'getSlot' }, AbortSignal.timeout(300)), { name: 'TimeoutError' });
  t.ok(Date.now() - started >= 290);
});

t.test('latency is added', async (t) => {
  const node = await sim(t, { latencyMs: [80, 100] });
  const started = Date.now();
  const r = await call(node, 'getSlot');
  t.ok(Date.now() - started >= 75, `${Date.now() - started} ms`);
  t.equal(typeof r.result, 'number');
});

t.test('POST /sim/control and GET /sim/stats', async (t) => {
  const node = await sim(t);
  const before = node.slot();
  const r = await post(`${node.url}/sim/control`, { lag: 1000, latencyMs: [0, 5] });
  t.equal(r.status, 200);
  const knobs = JSON.parse(r.text) as Record<string, unknown>;
  t.equal(knobs.lag, 1000);
  t.same(knobs.latencyMs, [0, 5]);
  t.equal(knobs.failMode, 'mixed');
  t.ok(before - node.slot() >= 999);
  t.ok(before - ((await call(node, 'getSlot')).result as number) >= 999);

  const bad = await post(`${node.url}/sim/control`, { failRate: 2 });
  t.equal(bad.status, 400);
  t.match(JSON.parse(bad.text), { error: /failRate/ });
  t.equal((await post(`${node.url}/sim/control`, { nope: 1 })).status, 400);
  t.equal((await post(`${node.url}/sim/control`, '{')).status, 400);

  const stats = await (await fetch(`${node.url}/sim/stats`)).json();
  t.same(stats, { requests: 1, calls: 1, byMethod: { getSlot: 1 }, limited: 0, credits: 0 });
  t.throws(() => node.set({ slotMs: 0 }), /slotMs/);
});

t.test('close() refuses new connections and ends open ones', async (t) => {
  const node = await startSim({ id: 'c', port: 0, stallRate: 1 });
  const stalled = post(node.url, { jsonrpc: '2.0', id: 1, method: 'getSlot' });
  await eventually('the stalled request to reach the sim', () => node.stats.requests === 1);
  await node.close();
  await t.rejects(stalled, 'open request is cut');
  const code = await new Promise<string>((resolve) => {
    const s = connect(node.port, '127.0.0.1');
    s.on('connect', () => {
      s.destroy();
      resolve('connected');
    });
    s.on('error', (e: NodeJS.ErrnoException) => resolve(e.code ?? 'error'));
  });
  t.equal(code, 'ECONNREFUSED');
  await node.close();
});

t.test('startSim rejects bad knobs', async (t) => {
  await t.rejects(startSim({ id: 'x', port: 0, failRate: 3 }), /failRate/);
});

t.test('CLI flags', async (t) => {
  t.same(parseSimArgs(['--port', '9001', '--id', 'a', '--latency-ms', '5-20', '--lag', '3', '--fail-rate', '0.1', '--fail-mode', 'http500']), {
    id: 'a',
    host: '127.0.0.1',
    port: 9001,
    nodes: 1,
    knobs: { lag: 3, latencyMs: [5, 20], failRate: 0.1, failMode: 'http500' },
    lags: null,
    grpcPort: null,
    grpcKnobs: {},
    enginePort: null,
    engineKnobs: {},
    help: false,
  });
  t.same(parseSimArgs(['--port', '1', '--latency-ms', '7']).knobs, { latencyMs: [7, 7] });
  t.same(parseSimArgs(['--port', '0', '--nodes', '3', '--lag', '0,4,40', '--landing-ms', '300', '--synthetic', '--skip-rate', '0.05']), {
    id: 'sim-0',
    host: '127.0.0.1',
    port: 0,
    nodes: 3,
    knobs: { landingMs: 300, synthetic: true, skipRate: 0.05 },
    lags: [0, 4, 40],
    grpcPort: null,
    grpcKnobs: {},
    enginePort: null,
    engineKnobs: {},
    help: false,
  });
  const g = parseSimArgs(['--port', '0', '--nodes', '2', '--grpc-port', '10000', '--grpc-jitter-ms', '20', '--grpc-drop-rate', '0.1', '--grpc-stall-ms', '50']);
  t.same([g.grpcPort, g.grpcKnobs], [10000, { jitterMs: 20, dropRate: 0.1, stallMs: 50 }], 'gRPC source flags');
  t.throws(() => parseSimArgs(['--port', '1', '--grpc-delay-ms', '5']), /--grpc-delay-ms needs --grpc-port/);
  t.throws(() => parseSimArgs(['--port', '1', '--grpc-port', '0', '--grpc-drop-rate', '2']), /--grpc-drop-rate/);
  t.throws(() => parseSimArgs(['--port', '1', '--nodes', '2', '--grpc-port', '65535']), /--grpc-port/);
  t.equal(parseSimArgs(['--help']).help, true, '--help needs no --port');
  t.throws(() => parseSimArgs(['--port', '1', '--nodes', '2', '--lag', '1,2,3']), /--lag lists 3 values for 2 nodes/);
  t.throws(() => parseSimArgs(['--port', '1', '--bogus']), /--bogus/);
  t.throws(() => parseSimArgs(['--port', 'x']), /--port/);
  t.throws(() => parseSimArgs(['--id', 'a']), /--port is required/);
  t.throws(() => parseSimArgs(['--port', '1', '--fail-rate', '1.5']), /--fail-rate/);
  t.throws(() => parseSimArgs(['--port', '1', '--latency-ms', '9-3']), /--latency-ms/);
  t.throws(() => parseSimArgs(['--port', '1', '--fail-mode', 'x']), /--fail-mode/);
  t.throws(() => parseSimArgs(['--port', '1', '--slot-ms', '0']), /--slot-ms/);
});
