// The account cache against the simulated cluster (docs/account-cache.md): transfers land in
// every slot while randomized reads (getAccountInfo, getMultipleAccounts, getBalance; every
// commitment; base64, base58 and the legacy binary encoding; dataSlice; minContextSlot) go
// through a gateway whose cache is fed by two cluster-fed gRPC sources. Every answer, from
// memory or from a node, must equal the cluster's ledger at the answer's context slot; a source
// killed and another stalled mid-run must not make any answer stale. Real clients read through
// the cache too.

import { Agent, request } from 'node:http';
import { Connection, PublicKey } from '@solana/web3.js';
import { address, createSolanaRpc, generateKeyPairSigner, lamports, type KeyPairSigner, type Rpc, type SolanaRpcApi } from '@solana/kit';
import t from 'tap';
import { resolveConfig } from '../../src/config/load.js';
import { startGateway, type Gateway } from '../../src/lifecycle/start-gateway.js';
import { silentLogger } from '../../src/log.js';
import { decodeBase58 } from '../../src/solana/base58.js';
import { Cluster, startSim, type SimNode } from '../../src/tools/sim/node.js';
import { startClusterGrpcSource } from '../../src/tools/sim-grpc/cluster-source.js';
import { eventually, eventuallyValue } from '../helpers/eventually.js';
import { TOKEN } from '../helpers/gateway.js';
import { createAccountIx, signTx, transferIx } from '../helpers/kit-tx.js';
import { rng } from '../../src/tools/rng.js';

const SLOT_MS = 100;
const DEADLINE_MS = 20_000;
/** Randomized reads per data-plane mode (inline and one worker): 2 × this in all; JG_CACHE_READS=50000 for the 100,000 of docs/account-cache.md. */
const READS = Number(process.env.JG_CACHE_READS ?? 25_000);
const CONCURRENCY = Number(process.env.JG_CACHE_CONC ?? 16);
const SYSTEM = '11111111111111111111111111111111';

type Test = Parameters<Parameters<typeof t.test>[0]>[0];

/** POSTs `body` on a kept-alive connection: one promise a read (fetch makes dozens, each traced by the test runner's hooks). */
function post(url: URL, agent: Agent, body: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method: 'POST', agent, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } }, (res) => {
      const parts: Buffer[] = [];
      res.on('data', (d: Buffer) => parts.push(d));
      res.on('end', () => resolve(Buffer.concat(parts).toString()));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(body);
  });
}

interface Truth {
  lamports: bigint;
  owner: string;
  executable: boolean;
  rentEpoch: bigint;
  data: Buffer;
}

async function cluster(t: Test) {
  const c = new Cluster({ slotMs: SLOT_MS });
  const nodes = [await startSim({ id: 'n0', port: 0, cluster: c }), await startSim({ id: 'n1', port: 0, cluster: c, lag: 1 })];
  const sources = [
    await startClusterGrpcSource(nodes[0]!, { seed: 1, knobs: { jitterMs: 5 } }),
    await startClusterGrpcSource(nodes[1]!, { seed: 2, knobs: { jitterMs: 5 } }),
  ];
  t.teardown(async () => {
    await Promise.all([...sources.map((s) => s.close()), ...nodes.map((n) => n.close())]);
  });
  return { c, nodes, sources };
}

async function gateway(t: Test, nodes: SimNode[], sourceUrls: string[], workers: number): Promise<Gateway> {
  const config = resolveConfig({
    rpc: { host: '127.0.0.1', port: 0, wsPort: 0, workers },
    console: { port: 0 },
    admin: { port: 0 },
    nodes: nodes.map((n) => ({ id: n.id, url: n.url })),
    tokens: [{ token: TOKEN, stack: 'test' }],
    offload: { threads: 0 },
    log: { level: 'silent' },
    grpc: { sources: sourceUrls.map((url, i) => ({ id: `src${i}`, url })) },
    cache: { accounts: { enabled: true, hotAfterReads: 1, maxLagSlots: 4 } },
  });
  const gw = await startGateway(config, { log: silentLogger(), store: null });
  t.teardown(() => gw.close());
  return gw;
}

/** The ledger's account at `slot` (a key it never touched: as at genesis). */
function truthAt(c: Cluster, key: string, slot: number): Truth | null {
  const l = c.ledger;
  const s = l.knows(key) ? l.accountAt(key, slot)! : l.genesis(decodeBase58(key)!);
  return s === null || s.lamports === 0n ? null : s;
}

interface ReadSpec {
  method: 'getAccountInfo' | 'getMultipleAccounts' | 'getBalance';
  keys: string[];
  commitment: 'processed' | 'confirmed' | 'finalized';
  encoding: 'base64' | 'base58' | null;
  slice: { offset: number; length: number } | null;
  minContextSlot: number | null;
}

function bodyOf(r: ReadSpec, id: number): string {
  const cfg: Record<string, unknown> = { commitment: r.commitment };
  if (r.encoding !== null) cfg.encoding = r.encoding;
  if (r.slice !== null) cfg.dataSlice = r.slice;
  if (r.minContextSlot !== null) cfg.minContextSlot = r.minContextSlot;
  const first = r.method === 'getMultipleAccounts' ? r.keys : r.keys[0];
  return JSON.stringify({ jsonrpc: '2.0', id, method: r.method, params: [first, cfg] });
}

/** '' when `answer` is what Agave gives for `r` at the answer's slot; else what differs. */
function check(c: Cluster, r: ReadSpec, answer: { result?: { context: { slot: number }; value: unknown }; error?: { code: number; message: string } }): string {
  if (answer.error !== undefined) {
    // The one error a valid read may answer: base58 data over 128 bytes (Agave's limit).
    if (answer.error.code === -32600 && /base 58/.test(answer.error.message) && r.encoding !== 'base64') return '';
    if (answer.error.code === -32016 && r.minContextSlot !== null) return '';
    return `error ${JSON.stringify(answer.error)}`;
  }
  const slot = answer.result!.context.slot;
  if (r.minContextSlot !== null && slot < r.minContextSlot) return `slot ${slot} below minContextSlot ${r.minContextSlot}`;
  const values = r.method === 'getMultipleAccounts' ? (answer.result!.value as unknown[]) : [answer.result!.value];
  for (let i = 0; i < r.keys.length; i++) {
    const want = truthAt(c, r.keys[i]!, slot);
    const got = values[i] as
      null | number | { data: string | [string, string]; executable: boolean; lamports: number; owner: string; rentEpoch: number; space: number };
    if (r.method === 'getBalance') {
      if (BigInt(got as number) !== (want?.lamports ?? 0n)) return `${r.keys[i]} balance ${String(got)} at ${slot}, ledger ${want?.lamports ?? 0n}`;
      continue;
    }
    if (want === null || got === null) {
      if (want !== got) return `${r.keys[i]} at ${slot}: ${JSON.stringify(got)} vs ledger ${want === null ? 'null' : 'an account'}`;
      continue;
    }
    const g = got as Exclude<typeof got, null | number>;
    let data = want.data;
    if (r.slice !== null) data = data.subarray(Math.min(r.slice.offset, data.length), Math.min(r.slice.offset + r.slice.length, data.length));
    const gotData =
      typeof g.data === 'string'
        ? Buffer.from(decodeBase58(g.data) ?? [])
        : g.data[1] === 'base64'
          ? Buffer.from(g.data[0], 'base64')
          : Buffer.from(decodeBase58(g.data[0]) ?? []);
    if (
      BigInt(g.lamports) !== want.lamports ||
      g.owner !== want.owner ||
      g.executable !== want.executable ||
      g.space !== want.data.length ||
      !gotData.equals(data)
    )
      return `${r.keys[i]} at ${slot}: ${JSON.stringify(g)} vs ledger lamports ${want.lamports} owner ${want.owner} space ${want.data.length}`;
  }
  return '';
}

async function funded(rpc: Rpc<SolanaRpcApi>, payer: KeyPairSigner): Promise<void> {
  await rpc.requestAirdrop(payer.address, lamports(100_000_000_000n), { commitment: 'processed' }).send();
  await eventually('the airdrop to land', async () => (await rpc.getBalance(payer.address, { commitment: 'processed' }).send()).value > 0n, DEADLINE_MS);
}

/** Sends one transfer a slot from the payer, round robin over `to`, until stopped. */
function writer(rpc: Rpc<SolanaRpcApi>, payer: KeyPairSigner, to: string[]): { stop(): Promise<void>; sent(): number } {
  let running = true;
  let n = 0;
  const loop = (async () => {
    while (running) {
      const { value: bh } = await rpc.getLatestBlockhash({ commitment: 'processed' }).send();
      const tx = await signTx(payer, [transferIx(payer, address(to[n % to.length]!), 1000n + BigInt(n))], bh.blockhash, bh.lastValidBlockHeight);
      await rpc.sendTransaction(tx.wire as never, { encoding: 'base64', preflightCommitment: 'processed', skipPreflight: true }).send();
      n++;
      await new Promise((r) => setTimeout(r, SLOT_MS));
    }
  })();
  return {
    stop: async () => {
      running = false;
      await loop;
    },
    sent: () => n,
  };
}

for (const workers of [0, 1]) {
  t.test(`every read through the cache equals the ledger at its context slot (workers: ${workers})`, async (t) => {
    const { c, nodes, sources } = await cluster(t);
    const gw = await gateway(
      t,
      nodes,
      sources.map((s) => s.url),
      workers,
    );
    const url = `${gw.url}/api-token/${TOKEN}`;
    const rpc = createSolanaRpc(url);
    const payer = await generateKeyPairSigner();
    await funded(rpc, payer);
    // Eight accounts written in turn; two more with data (200 bytes: over base58's 128).
    const to = await Promise.all(Array.from({ length: 8 }, () => generateKeyPairSigner()));
    const withData = await Promise.all(Array.from({ length: 2 }, () => generateKeyPairSigner()));
    const { value: bh } = await rpc.getLatestBlockhash({ commitment: 'processed' }).send();
    for (const acct of withData) {
      const tx = await signTx(payer, [createAccountIx(payer, acct, 10_000_000n, 200n, decodeBase58(SYSTEM)!)], bh.blockhash, bh.lastValidBlockHeight);
      await rpc.sendTransaction(tx.wire as never, { encoding: 'base64', preflightCommitment: 'processed' }).send();
    }
    const w = writer(
      rpc,
      payer,
      to.map((k) => k.address),
    );
    t.teardown(() => w.stop());
    const never = (await generateKeyPairSigner()).address;
    const keys = [payer.address, ...to.map((k) => k.address), ...withData.map((k) => k.address), never, SYSTEM, 'SysvarRent111111111111111111111111111111111'];
    const random = rng(workers + 11);
    const pick = <T>(xs: readonly T[]): T => xs[Math.floor(random() * xs.length)]!;
    const spec = (): ReadSpec => {
      const method = pick(['getAccountInfo', 'getAccountInfo', 'getMultipleAccounts', 'getBalance'] as const);
      const n = method === 'getMultipleAccounts' ? 1 + Math.floor(random() * 5) : 1;
      const tip = c.tip();
      return {
        method,
        keys: Array.from({ length: n }, () => pick(keys)),
        commitment: pick(['processed', 'processed', 'confirmed', 'finalized'] as const),
        encoding: method === 'getBalance' ? null : pick(['base64', 'base64', 'base58', null] as const),
        slice: method !== 'getBalance' && random() < 0.2 ? { offset: Math.floor(random() * 250), length: Math.floor(random() * 100) } : null,
        minContextSlot: random() < 0.1 ? tip - 40 + Math.floor(random() * 42) : null,
      };
    };
    // Hot first: every key read once, then held once the feed anchored it.
    for (const k of keys) await rpc.getAccountInfo(address(k), { encoding: 'base64', commitment: 'processed' }).send();
    await eventually('every key held', () => (gw.cache?.view().keys ?? 0) >= keys.length, DEADLINE_MS);

    const mismatches: string[] = [];
    let done = 0;
    const faults = async (): Promise<void> => {
      // A quarter in: one source killed, then back; half way: the other stalls, then resumes.
      await eventually('a quarter of the reads', () => done >= READS / 4, 120_000, 50);
      await sources[0]!.kill();
      await eventually('more reads with one source', () => done >= READS / 3, 120_000, 50);
      await sources[0]!.restart();
      await eventually('half of the reads', () => done >= READS / 2, 120_000, 50);
      sources[1]!.knobs.hang = true;
      await eventually('reads past the stall', () => done >= (READS * 2) / 3, 120_000, 50);
      sources[1]!.knobs.hang = false;
    };
    const target = new URL(url);
    const agent = new Agent({ keepAlive: true, maxSockets: CONCURRENCY });
    t.teardown(() => agent.destroy());
    const reader = async (lane: number): Promise<void> => {
      for (let i = lane; i < READS; i += CONCURRENCY) {
        const r = spec();
        const answer = JSON.parse(await post(target, agent, bodyOf(r, i))) as Parameters<typeof check>[2];
        const why = check(c, r, answer);
        if (why !== '' && mismatches.length < 20) mismatches.push(`${bodyOf(r, i)} → ${why}`);
        done++;
      }
    };
    await Promise.all([faults(), ...Array.from({ length: CONCURRENCY }, (_, i) => reader(i))]);
    await w.stop();
    t.same(mismatches, [], `${READS} reads: every answer is the ledger's state at its context slot`);
    const view = gw.cache!.view();
    t.ok(view.hits > READS / 2, `most reads answered from memory (${view.hits} of ${READS}; misses ${JSON.stringify(view.misses)})`);
    t.ok(w.sent() > 20, `accounts written in most slots (${w.sent()} transfers)`);
  });
}

t.test('real clients read through the cache', async (t) => {
  const { nodes, sources } = await cluster(t);
  const gw = await gateway(
    t,
    nodes,
    sources.map((s) => s.url),
    0,
  );
  const url = `${gw.url}/api-token/${TOKEN}`;
  const rpc = createSolanaRpc(url);
  const payer = await generateKeyPairSigner();
  await funded(rpc, payer);
  await rpc.getBalance(payer.address, { commitment: 'confirmed' }).send();
  await eventually('the payer held', () => (gw.cache?.view().keys ?? 0) >= 1, DEADLINE_MS);
  const before = gw.cache!.view().hits;
  const kit = await eventuallyValue(
    'a kit read from memory',
    async () => {
      const v = await rpc.getAccountInfo(payer.address, { encoding: 'base64', commitment: 'confirmed' }).send();
      // Confirmed trails processed, where the airdrop was seen first.
      return gw.cache!.view().hits > before && v.value !== null ? v : undefined;
    },
    DEADLINE_MS,
  );
  t.equal(kit.value?.lamports, 100_000_000_000n, '@solana/kit: the balance');
  t.equal(kit.value?.owner, SYSTEM);
  const conn = new Connection(url, 'confirmed');
  const hits = gw.cache!.view().hits;
  const info = await conn.getAccountInfo(new PublicKey(payer.address));
  const balance = await conn.getBalance(new PublicKey(payer.address));
  t.equal(info?.lamports, 100_000_000_000, '@solana/web3.js: getAccountInfo');
  t.ok(info?.owner.equals(PublicKey.default), 'owned by the system program');
  t.equal(balance, 100_000_000_000, '@solana/web3.js: getBalance');
  await eventually('the web3.js reads counted as hits', () => gw.cache!.view().hits >= hits + 2, 5000);
});
