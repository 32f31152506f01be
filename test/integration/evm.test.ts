// The gateway in front of a real EVM node (anvil, from the @foundry-rs/anvil npm package) with
// `chain: evm`, driven by viem and by raw WebSocket clients (docs/interface.md "WebSocket", docs/routing.md "Retries and node health"): HTTP
// pass-through and batches, eth_subscribe newHeads multiplexed onto one upstream
// subscription, per-client hex subscription ids, unsubscribe isolation, and no anvil ids
// leaking to clients. Skips with the reason when the anvil binary is missing or cannot run.

import t from 'tap';
import { WebSocket } from 'undici';
import { createPublicClient, http, webSocket } from 'viem';
import { anvilUnavailable, startAnvil, type Anvil } from '../helpers/anvil.js';
import { eventually } from '../helpers/eventually.js';
import { startHarness, TOKEN, TOKEN2, type Harness } from '../helpers/gateway.js';

const NODE = 'anvil';
const CHAIN_ID = 31337;
/** anvil's first default dev account (10000 ETH at genesis). */
const DEV_ACCOUNT = '0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266';
const HEX_ID = /^0x[0-9a-f]+$/;
const STEP_MS = 10_000;

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** Mines one block at a time (anvil HTTP, not the gateway) until `cond` holds. */
function mineUntil(anvil: Anvil, what: string, cond: () => boolean, timeoutMs = 5000): Promise<void> {
  return eventually(
    `mining until ${what}`,
    async () => {
      if (cond()) return true;
      await anvil.mine(1);
      return false;
    },
    timeoutMs,
    80,
  );
}

/** What the hub holds upstream: the node's subscription ids (SharedSub.upstreamId). */
function upstreamIds(h: Harness): string[] {
  const byKey = (h.gw.hub! as unknown as { byKey: Map<string, { placements: { upstreamId: string | null }[] }> }).byKey;
  return [...byKey.values()].flatMap((s) => s.placements.map((p) => p.upstreamId)).filter((id): id is string => id !== null);
}

const upstreamCount = (h: Harness): number => h.gw.ws().upstreamSubscriptions[NODE] ?? 0;

/** A raw WebSocket client that keeps every frame's text. */
interface Raw {
  texts: string[];
  frames: any[];
  request(method: string, params: unknown[]): Promise<any>;
  notifications(subId: string): any[];
  close(): void;
}

let rawIds = 1000;

async function openRaw(url: string): Promise<Raw> {
  const ws = new WebSocket(url);
  const raw: Raw = {
    texts: [],
    frames: [],
    async request(method, params) {
      const id = rawIds++;
      const seen = raw.frames.length;
      ws.send(JSON.stringify({ jsonrpc: '2.0', id, method, params }));
      let answer: any;
      await eventually(`answer to ${method}`, () => (answer = raw.frames.slice(seen).find((f) => f.id === id)) !== undefined);
      return answer;
    },
    notifications: (subId) => raw.frames.filter((f) => f.method === 'eth_subscription' && f.params?.subscription === subId),
    close: () => ws.close(),
  };
  ws.addEventListener('message', (ev) => {
    const text = typeof ev.data === 'string' ? ev.data : Buffer.from(ev.data as ArrayBuffer).toString();
    raw.texts.push(text);
    raw.frames.push(JSON.parse(text));
  });
  await new Promise<void>((resolve, reject) => {
    ws.addEventListener('open', () => resolve());
    ws.addEventListener('error', () => reject(new Error('websocket to the gateway failed')));
  });
  return raw;
}

const reason = anvilUnavailable();

if (reason !== null) {
  t.test('EVM gateway against anvil', { skip: `anvil cannot run here: ${reason}` }, async () => undefined);
} else {
  let anvil: Anvil;
  let h: Harness;
  let httpUrl: string;
  let wsUrl: string;
  let wsUrl2: string;
  /** Every subscription id a client was handed, and every id anvil handed the gateway. */
  const clientIds = new Set<string>();
  const nodeIds = new Set<string>();
  /** Frames anvil pushed to the gateway's upstream socket (notifications), counted by the hub. */
  let nodeFrames = 0;
  const noteIds = (ids: Iterable<string>): void => {
    for (const id of ids) clientIds.add(id);
    for (const id of upstreamIds(h)) nodeIds.add(JSON.parse(id) as string);
  };

  t.before(async () => {
    anvil = await startAnvil();
    h = await startHarness({
      sims: [],
      extraNodes: [{ id: NODE, url: anvil.httpUrl }],
      config: { chain: 'evm', health: { intervalMs: 200 } },
    });
    httpUrl = `${h.url}/api-token/${TOKEN}`;
    wsUrl = `${h.url.replace(/^http/, 'ws')}/api-token/${TOKEN}`;
    wsUrl2 = `${h.url.replace(/^http/, 'ws')}/api-token/${TOKEN2}`;
    const hub = h.gw.hub!;
    const notification = hub.notification.bind(hub);
    hub.notification = (socket, frame) => {
      nodeFrames++;
      notification(socket, frame);
    };
  });
  t.teardown(async () => {
    await h?.close();
    await anvil?.close();
  });

  t.test('health probes anvil with eth_blockNumber', { timeout: STEP_MS }, async (t) => {
    const node = h.gw.pool.byId(NODE)!;
    t.equal(node.state, 'healthy', 'anvil is healthy');
    await anvil.mine(3);
    const head = Number.parseInt(await anvil.rpc<string>('eth_blockNumber'), 16);
    await eventually('the probe to see the new head', () => node.slot === head, 2000);
    t.equal(node.slot, head, `the node's slot is anvil's block number (${head})`);
  });

  t.test('HTTP pass-through with viem', { timeout: STEP_MS }, async (t) => {
    const client = createPublicClient({ transport: http(httpUrl, { retryCount: 0 }) });
    const direct = BigInt(await anvil.rpc<string>('eth_blockNumber'));
    t.equal(await client.getBlockNumber({ cacheTime: 0 }), direct, 'getBlockNumber');
    t.equal(await client.getChainId(), CHAIN_ID, 'getChainId');
    await anvil.mine(2);
    t.equal(await client.getBlockNumber({ cacheTime: 0 }), direct + 2n, 'sees blocks mined on the node');
    const block = await client.getBlock({ blockNumber: direct + 1n });
    t.equal(block.number, direct + 1n, 'getBlock');
    t.equal(await client.getBalance({ address: DEV_ACCOUNT, blockNumber: 0n }), 10_000n * 10n ** 18n, 'getBalance');

    // viem's own JSON-RPC batching (one HTTP body holding an array).
    const batched = createPublicClient({ transport: http(httpUrl, { batch: true, retryCount: 0 }) });
    const [n, id, bal] = await Promise.all([
      batched.getBlockNumber({ cacheTime: 0 }),
      batched.getChainId(),
      batched.getBalance({ address: DEV_ACCOUNT, blockNumber: 0n }),
    ]);
    t.same([n, id, bal], [direct + 2n, CHAIN_ID, 10_000n * 10n ** 18n], 'viem batch transport');
  });

  t.test('raw batch: answered in order, ids intact', { timeout: STEP_MS }, async (t) => {
    const batch = [
      { jsonrpc: '2.0', id: 7, method: 'eth_chainId', params: [] },
      { jsonrpc: '2.0', id: 'second', method: 'eth_blockNumber', params: [] },
      { jsonrpc: '2.0', id: 0, method: 'net_version', params: [] },
      { jsonrpc: '2.0', id: 'unknown-method', method: 'eth_noSuchMethod', params: [] },
      { jsonrpc: '2.0', id: 3.5, method: 'eth_getBalance', params: [DEV_ACCOUNT, '0x0'] },
      { jsonrpc: '2.0', id: null, method: 'eth_chainId', params: [] },
    ];
    const r = await h.post(JSON.stringify(batch));
    t.equal(r.status, 200);
    const out = JSON.parse(r.text) as any[];
    t.ok(Array.isArray(out), 'an array');
    t.same(
      out.map((e) => e.id),
      batch.map((e) => e.id),
      'one answer per call, same order, same ids',
    );
    t.equal(out[0].result, '0x7a69', 'eth_chainId');
    t.match(out[1].result, HEX_ID, 'eth_blockNumber');
    t.equal(out[2].result, String(CHAIN_ID), 'net_version');
    t.ok(out[3].error && typeof out[3].error.code === 'number', `unknown method: error ${JSON.stringify(out[3].error)}`);
    t.equal(out[4].result, '0x21e19e0c9bab2400000', 'eth_getBalance at genesis');
    t.equal(out[5].result, '0x7a69', 'id null');
    t.ok(r.text.includes('"id":3.5'), 'a fractional id comes back as written');
  });

  t.test("viem webSocket: watchBlocks gets new blocks, ids are the gateway's", { timeout: STEP_MS }, async (t) => {
    const client = createPublicClient({ transport: webSocket(wsUrl, { retryCount: 0, reconnect: false }) });
    const rpc = await client.transport.getRpcClient();
    t.teardown(() => rpc.close());
    t.equal(await client.getChainId(), CHAIN_ID, 'a plain call over WS is forwarded and answered');

    const blocks: bigint[] = [];
    const errors: unknown[] = [];
    const unwatch = client.watchBlocks({
      poll: false,
      onBlock: (b) => blocks.push(b.number),
      onError: (e) => errors.push(e),
    });
    await eventually('the subscription', () => rpc.subscriptions.size === 1 && upstreamCount(h) === 1);
    const first = blocks.length;
    await mineUntil(anvil, '3 blocks arrived', () => blocks.length >= first + 3);
    t.same(errors, [], 'no errors');
    const got = blocks.slice(first);
    t.ok(
      got.every((n, i) => i === 0 || n === got[i - 1]! + 1n),
      `consecutive block numbers (${got.join(', ')})`,
    );

    const ids = [...rpc.subscriptions.keys()] as string[];
    noteIds(ids);
    t.match(ids[0], HEX_ID, `the client's subscription id is hex (${ids[0]})`);
    const upstream = upstreamIds(h).map((s) => JSON.parse(s) as string);
    t.equal(upstream.length, 1);
    t.not(ids[0], upstream[0], `anvil's id (${upstream[0]}) is not what the client sees`);

    await unwatch();
    t.equal(rpc.subscriptions.size, 0, 'viem dropped the subscription');
    await eventually('the upstream subscription to go', () => upstreamCount(h) === 0, 1000);
    t.equal(upstreamCount(h), 0, 'nothing held upstream');
    const after = blocks.length;
    await anvil.mine(2);
    // Nothing is expected to arrive: this only gives a stray newHeads time to show up.
    await sleep(200);
    t.equal(blocks.length, after, 'no blocks after unwatch');
  });

  t.test('two viem clients watching newHeads share one upstream subscription', { timeout: STEP_MS }, async (t) => {
    // Separate connections (viem caches one socket per URL and options): one per token.
    const a = createPublicClient({ transport: webSocket(wsUrl, { retryCount: 0, reconnect: false }) });
    const b = createPublicClient({ transport: webSocket(wsUrl2, { retryCount: 0, reconnect: false }) });
    const rpcA = await a.transport.getRpcClient();
    const rpcB = await b.transport.getRpcClient();
    t.teardown(() => {
      rpcA.close();
      rpcB.close();
    });
    t.not(rpcA, rpcB, 'two sockets');

    const blocksA: bigint[] = [];
    const numbersB: bigint[] = [];
    const errors: unknown[] = [];
    const unwatchA = a.watchBlocks({ poll: false, onBlock: (blk) => blocksA.push(blk.number), onError: (e) => errors.push(e) });
    // No `poll` here: viem's client-level typing rejects `poll: false` for watchBlockNumber;
    // over a webSocket transport it subscribes to newHeads by default.
    const unwatchB = b.watchBlockNumber({ onBlockNumber: (n) => numbersB.push(n), onError: (e) => errors.push(e) });
    await eventually('both subscriptions', () => rpcA.subscriptions.size === 1 && rpcB.subscriptions.size === 1);
    t.same(h.gw.ws().upstreamSubscriptions, { [NODE]: 1 }, 'one upstream eth_subscribe for both clients');
    t.equal(h.gw.ws().sharedSubscriptions, 1);
    await mineUntil(anvil, 'both saw 2 blocks', () => blocksA.length >= 2 && numbersB.length >= 2);
    t.same(h.gw.ws().upstreamSubscriptions, { [NODE]: 1 }, 'still one while both watch');

    const idA = [...rpcA.subscriptions.keys()][0] as string;
    const idB = [...rpcB.subscriptions.keys()][0] as string;
    noteIds([idA, idB]);
    t.match(idA, HEX_ID);
    t.match(idB, HEX_ID);
    t.not(idA, idB, 'each client has its own id');

    await unwatchA();
    t.same(h.gw.ws().upstreamSubscriptions, { [NODE]: 1 }, 'one left watching keeps the upstream subscription');
    const nb = numbersB.length;
    const na = blocksA.length;
    await mineUntil(anvil, 'B saw another block', () => numbersB.length > nb);
    t.equal(blocksA.length, na, 'A, unwatched, got nothing more');

    unwatchB();
    await eventually('the upstream subscription to go', () => upstreamCount(h) === 0, 1000);
    t.equal(upstreamCount(h), 0, 'zero after both unwatch');
    t.equal(h.gw.ws().sharedSubscriptions, 0);
    t.same(errors, [], 'no errors');
    // The upstream eth_unsubscribe really reached anvil: it stops pushing newHeads.
    // Time for the eth_unsubscribe to reach anvil and for frames already on the wire to land;
    // then, with nothing expected, time for a stray newHeads to show up.
    await sleep(100);
    nodeFrames = 0;
    await anvil.mine(2);
    await sleep(200);
    t.equal(nodeFrames, 0, 'anvil sends nothing more once the last client left');
  });

  t.test("unsubscribe only cancels the caller's own ids", { timeout: STEP_MS }, async (t) => {
    const a = await openRaw(wsUrl);
    const b = await openRaw(wsUrl2);
    t.teardown(() => {
      a.close();
      b.close();
    });
    const subA = await a.request('eth_subscribe', ['newHeads']);
    const subB = await b.request('eth_subscribe', ['newHeads']);
    const idA = subA.result as string;
    const idB = subB.result as string;
    t.match(idA, HEX_ID, `A's id is hex (${idA})`);
    t.match(idB, HEX_ID, `B's id is hex (${idB})`);
    t.not(idA, idB);
    t.equal(upstreamCount(h), 1, 'shared upstream');
    noteIds([idA, idB]);

    const steal = await b.request('eth_unsubscribe', [idA]);
    t.same(steal.error, { code: -32602, message: 'Invalid subscription id.' }, "B cannot cancel A's id");
    t.notOk('result' in steal, 'no result');
    const steal2 = await a.request('eth_unsubscribe', [idB]);
    t.equal(steal2.error?.code, -32602, "nor A B's");

    await mineUntil(anvil, 'A got 2 notifications', () => a.notifications(idA).length >= 2);
    const note = a.notifications(idA).at(-1);
    t.equal(note.jsonrpc, '2.0');
    t.match(note.params.result.number, HEX_ID, 'a newHeads block header');
    t.match(note.params.result.hash, /^0x[0-9a-f]{64}$/);
    t.ok(b.notifications(idB).length >= 1, 'B receives too');

    const own = await a.request('eth_unsubscribe', [idA]);
    t.same(own, { jsonrpc: '2.0', result: true, id: own.id }, 'own unsubscribe → true');
    const again = await a.request('eth_unsubscribe', [idA]);
    t.equal(again.error?.code, -32602, 'a second unsubscribe is an invalid id');
    t.equal(upstreamCount(h), 1, "B's subscription keeps the upstream one");

    const na = a.notifications(idA).length;
    const nb = b.notifications(idB).length;
    await mineUntil(anvil, 'B got another', () => b.notifications(idB).length > nb);
    t.equal(a.notifications(idA).length, na, 'A gets nothing after unsubscribing');
    t.same((await b.request('eth_unsubscribe', [idB])).result, true);
    await eventually('upstream to go', () => upstreamCount(h) === 0, 1000);

    // No frame either client saw carries anvil's ids.
    for (const id of nodeIds) {
      t.notOk(
        [...a.texts, ...b.texts].some((s) => s.includes(id.slice(2))),
        `anvil's id ${id} never reached a client`,
      );
    }
    t.ok(
      a.texts.some((s) => s.includes(`"subscription":"${idA}"`)),
      "notifications carry the client's own id",
    );
  });

  t.test('no anvil subscription id was ever handed to a client', async (t) => {
    t.ok(nodeIds.size >= 3, `saw ${nodeIds.size} anvil ids`);
    t.ok(clientIds.size >= 5, `saw ${clientIds.size} client ids`);
    for (const id of clientIds) t.notOk(nodeIds.has(id), `${id} is the gateway's`);
    for (const id of nodeIds) t.match(id, /^0x[0-9a-f]{16,}$/, `anvil's ids look like ${id}`);
  });
}
