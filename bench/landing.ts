// Transactions that land (docs/landing.md "Measured"): one simulated cluster of three nodes that
// land 95%, 70% and 30% of what they accept, 0, 200 and 400 ms after accepting it. Real signed
// transfers, all over one confirmed blockhash fetched through the path, go through each path: jumpgate with default
// routing, with broadcast fanout 2, with fanout 2 and rebroadcast every 400 ms, and nginx
// round-robin. The truth is the cluster's ledger (getSignatureStatuses with history on a node,
// once every blockhash expired): landed share and slots from send to landing, p50/p90.

import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { encodeBase58 } from '../src/solana/base58.js';
import { signerFromSeed, transferTx, type Signer } from '../src/tools/sim/wire.js';
import { peerMissing, startNginx } from './peers.js';
import { proc, startGatewayProc, waitFor, type Proc } from './procs.js';

const TOKEN = 'bench-landing-token-0123456789';
const CLI = new URL('../src/cli/main.js', import.meta.url).pathname;
const NODES = [
  { txDropRate: 0.05, landingMs: 0 },
  { txDropRate: 0.3, landingMs: 200 },
  { txDropRate: 0.7, landingMs: 400 },
];

export interface LandingPath {
  path: string;
  sent: number;
  landed: number;
  landedPct: number;
  slotsP50: number | null;
  slotsP90: number | null;
  /** Why the path did not run (a peer not installed), else null. */
  skipped: string | null;
}

export interface LandingBenchResult {
  slotMs: number;
  sendsPerPath: number;
  nodes: typeof NODES;
  paths: LandingPath[];
}

async function rpc(url: string, method: string, params: unknown[]): Promise<any> {
  const r = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
  });
  const j = (await r.json()) as { result?: unknown; error?: { message: string } };
  if (j.error !== undefined) throw new Error(`${method}: ${j.error.message}`);
  return j.result;
}

async function until(what: string, check: () => Promise<boolean>, ms: number): Promise<void> {
  const end = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`landing bench: ${what} within ${ms} ms`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** `jumpgate sim --nodes 3` (one cluster), each node's landing knobs set over its control API. */
async function startCluster(slotMs: number): Promise<Proc & { urls: string[] }> {
  const child = spawn(process.execPath, [CLI, 'sim', '--nodes', '3', '--port', '0', '--id', 'land', '--slot-ms', String(slotMs)], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  await waitFor(child, /of one cluster/, 'simulated cluster');
  const urls = [...out.matchAll(/listening on (http:\/\/\S+)/g)].map((m) => m[1]!);
  for (let i = 0; i < urls.length; i++) {
    const r = await fetch(urls[i] + '/sim/control', { method: 'POST', body: JSON.stringify(NODES[i]) });
    if (r.status !== 200) throw new Error(`sim control: ${await r.text()}`);
  }
  return { ...proc(child), urls };
}

function percentile(sorted: number[], p: number): number | null {
  return sorted.length === 0 ? null : sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))]!;
}

/** Sends `n` transfers through `url` one after another; the ledger decides what landed. */
async function measure(path: string, url: string, node: string, payer: Signer, n: number, slotMs: number): Promise<LandingPath> {
  // As a bot does: the blockhash from the endpoint it sends through.
  const latest = (await rpc(url, 'getLatestBlockhash', [{ commitment: 'confirmed' }])).value as { blockhash: string };
  const sentSlot = (await rpc(node, 'getSlot', [{ commitment: 'processed' }])) as number;
  const to = randomBytes(32);
  const sigs: string[] = [];
  for (let i = 0; i < n; i++) {
    const wire = transferTx(payer, to, BigInt(1_000_000 + i), latest.blockhash);
    const r = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: i,
        method: 'sendTransaction',
        params: [wire.toString('base64'), { encoding: 'base64', preflightCommitment: 'confirmed' }],
      }),
    });
    const j = (await r.json()) as { result?: string };
    if (typeof j.result === 'string') sigs.push(j.result);
  }
  // Until the blockhash expired on the freshest node, then once more: nothing can land after.
  await until(
    'the blockhash to expire',
    async () => !(await rpc(node, 'isBlockhashValid', [latest.blockhash, { commitment: 'processed' }])).value,
    200 * slotMs + 30_000,
  );
  const slots: number[] = [];
  for (let i = 0; i < sigs.length; i += 256) {
    const value = (await rpc(node, 'getSignatureStatuses', [sigs.slice(i, i + 256), { searchTransactionHistory: true }])).value as ({ slot: number } | null)[];
    for (const s of value) if (s !== null) slots.push(Math.max(0, s.slot - sentSlot));
  }
  slots.sort((a, b) => a - b);
  return {
    path,
    sent: n,
    landed: slots.length,
    landedPct: Math.round((1000 * slots.length) / n) / 10,
    slotsP50: percentile(slots, 0.5),
    slotsP90: percentile(slots, 0.9),
    skipped: null,
  };
}

export async function runLandingBench(opts: { quick: boolean; log: (line: string) => void }): Promise<LandingBenchResult> {
  const slotMs = opts.quick ? 50 : 100;
  const n = opts.quick ? 40 : 300;
  const cluster = await startCluster(slotMs);
  const procs: Proc[] = [cluster];
  try {
    const nodes = cluster.urls.map((url, i) => ({ id: `n${i}`, url }));
    const payer = signerFromSeed(randomBytes(32));
    await rpc(nodes[0]!.url, 'requestAirdrop', [encodeBase58(payer.pubkey), 1_000_000_000_000]);
    await until('the airdrop', async () => (await rpc(nodes[0]!.url, 'getBalance', [payer.address, { commitment: 'confirmed' }])).value > 0, 30_000);
    const fanout2 = 'routing: { broadcast: { methods: [sendTransaction], fanout: 2 }, landing: { rebroadcastMs: REBROADCAST } }';
    const gateways = [
      { path: 'jumpgate, default routing', extra: '' },
      { path: 'jumpgate, broadcast fanout 2', extra: fanout2.replace('REBROADCAST', '0') },
      { path: 'jumpgate, fanout 2 + rebroadcast 400 ms', extra: fanout2.replace('REBROADCAST', '400') },
    ];
    const paths: LandingPath[] = [];
    for (const g of gateways) {
      const gw = await startGatewayProc(nodes, TOKEN, g.extra);
      procs.push(gw);
      opts.log(`[landing] ${g.path}`);
      paths.push(await measure(g.path, `${gw.url}/api-token/${TOKEN}`, nodes[0]!.url, payer, n, slotMs));
      await gw.stop();
    }
    const missing = await peerMissing('nginx');
    if (missing !== null) paths.push({ path: 'nginx, round-robin', sent: 0, landed: 0, landedPct: 0, slotsP50: null, slotsP90: null, skipped: missing });
    else {
      const nginx = await startNginx(cluster.urls);
      procs.push(nginx);
      opts.log('[landing] nginx');
      paths.push(await measure('nginx, round-robin', nginx.url, nodes[0]!.url, payer, n, slotMs));
    }
    return { slotMs, sendsPerPath: n, nodes: NODES, paths };
  } finally {
    await Promise.all(procs.map((p) => p.stop().catch(() => {})));
  }
}

export function landingTable(r: LandingBenchResult): string {
  const rows = r.paths.map((p) =>
    p.skipped !== null
      ? `| ${p.path} | skipped: ${p.skipped} | | | |`
      : `| ${p.path} | ${p.sent} | ${p.landedPct}% | ${p.slotsP50 ?? '-'} | ${p.slotsP90 ?? '-'} |`,
  );
  return [
    `Transactions that land: nodes landing ${r.nodes.map((x) => `${100 - x.txDropRate * 100}% after ${x.landingMs} ms`).join(', ')}; ${r.slotMs} ms slots`,
    '| path | sent | landed | slots to land p50 | p90 |',
    '|---|---|---|---|---|',
    ...rows,
  ].join('\n');
}
