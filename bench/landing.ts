// Transactions that land (docs/landing.md "Measured"): one simulated cluster of three nodes that
// land 95%, 70% and 30% of what they accept, 0, 200 and 400 ms after accepting it. Real signed
// transfers, all over one confirmed blockhash fetched through the path, go through each path: jumpgate with default
// routing, with broadcast fanout 2, with fanout 2 and rebroadcast every 400 ms, and nginx
// round-robin. The truth is the cluster's ledger (getSignatureStatuses with history on a node,
// once every blockhash expired): landed share and slots from send to landing, p50/p90.

import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { Agent, request } from 'node:http';
import { generate } from './load.js';
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

/** S1's load (getSlot, closed loop, 50 connections) with 1% of it as real sends, tracking off and on. */
export interface LandingCost {
  sendsPerSecond: number;
  /** Mean getSlot requests/s over the rounds: tracking off (maxTracked 0), and on with fanout 2 and rebroadcast every 400 ms. */
  off: number;
  on: number;
  /** on / off. */
  ratio: number;
  rounds: number;
}

export interface LandingBenchResult {
  slotMs: number;
  sendsPerPath: number;
  nodes: typeof NODES;
  paths: LandingPath[];
  cost: LandingCost;
}

export async function rpc(url: string, method: string, params: unknown[]): Promise<any> {
  const r = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
  });
  const j = (await r.json()) as { result?: unknown; error?: { message: string } };
  if (j.error !== undefined) throw new Error(`${method}: ${j.error.message}`);
  return j.result;
}

export async function until(what: string, check: () => Promise<boolean>, ms: number): Promise<void> {
  const end = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`bench: ${what} within ${ms} ms`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** `jumpgate sim --nodes 3` (one cluster); the landing knobs are set once the payer is funded (setLandingKnobs). */
export async function startCluster(slotMs: number): Promise<Proc & { urls: string[] }> {
  const child = spawn(process.execPath, [CLI, 'sim', '--nodes', '3', '--port', '0', '--id', 'land', '--slot-ms', String(slotMs)], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  await waitFor(child, /of one cluster/, 'simulated cluster');
  const urls = [...out.matchAll(/listening on (http:\/\/\S+)/g)].map((m) => m[1]!);
  return { ...proc(child), urls };
}

/** Each node's landing knobs, over its control API: after the airdrop, which is a transaction too and would be dropped as often. */
export async function setLandingKnobs(urls: string[], knobs: readonly object[] = NODES): Promise<void> {
  for (let i = 0; i < urls.length; i++) {
    const r = await fetch(urls[i] + '/sim/control', { method: 'POST', body: JSON.stringify(knobs[i]) });
    if (r.status !== 200) throw new Error(`sim control: ${await r.text()}`);
  }
}

export function percentile(sorted: number[], p: number): number | null {
  return sorted.length === 0 ? null : sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))]!;
}

/** Sends `n` transfers through `url` one after another; the ledger decides what landed. */
async function measure(path: string, url: string, node: string, payer: Signer, n: number, slotMs: number): Promise<LandingPath> {
  // As a bot does: the blockhash from the endpoint it sends through.
  const latest = (await rpc(url, 'getLatestBlockhash', [{ commitment: 'confirmed' }])).value as { blockhash: string };
  // Each send's slot: the node's slot when sending began plus the slots since (the cluster's clock).
  const firstSlot = (await rpc(node, 'getSlot', [{ commitment: 'processed' }])) as number;
  const t0 = Date.now();
  const sentSlots: number[] = [];
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
    if (typeof j.result === 'string') {
      sigs.push(j.result);
      sentSlots.push(firstSlot + Math.floor((Date.now() - t0) / slotMs));
    }
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
    value.forEach((s, k) => {
      if (s !== null) slots.push(Math.max(0, s.slot - sentSlots[i + k]!));
    });
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
    await setLandingKnobs(cluster.urls);
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
    const cost = await measureCost(nodes, payer, opts);
    return { slotMs, sendsPerPath: n, nodes: NODES, paths, cost };
  } finally {
    await Promise.all(procs.map((p) => p.stop().catch(() => {})));
  }
}

/** Open-loop sends of pre-signed transfers at `perSecond` until `stop` resolves; answers are read and dropped. */
async function sendAtRate(url: string, wires: string[], perSecond: number, stop: Promise<void>): Promise<number> {
  const agent = new Agent({ keepAlive: true, maxSockets: 8 });
  let done = false;
  void stop.then(() => (done = true));
  let sent = 0;
  const t0 = performance.now();
  while (!done && sent < wires.length) {
    const due = Math.floor(((performance.now() - t0) / 1000) * perSecond);
    for (; sent < due && sent < wires.length; sent++) {
      const body = JSON.stringify({
        jsonrpc: '2.0',
        id: sent,
        method: 'sendTransaction',
        params: [wires[sent], { encoding: 'base64', preflightCommitment: 'confirmed' }],
      });
      const req = request(url, { method: 'POST', agent, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } }, (res) =>
        res.resume(),
      );
      req.on('error', () => {});
      req.end(body);
    }
    await new Promise((r) => setTimeout(r, 5));
  }
  agent.destroy();
  return sent;
}

/**
 * What tracking costs the request path: S1's getSlot load through jumpgate with real transfers
 * at 1% of its rate beside it, tracking off then on (fanout 2, rebroadcast every 400 ms), in
 * alternating rounds (off, on, off, on) so drift on the shared cores spreads over both.
 */
async function measureCost(nodes: { id: string; url: string }[], payer: Signer, opts: { quick: boolean; log: (line: string) => void }): Promise<LandingCost> {
  const seconds = opts.quick ? 2 : 10;
  const rounds = opts.quick ? 1 : 2;
  const token = `${TOKEN}`;
  // The same routing both ways (broadcast fanout 2): only tracking and rebroadcast differ.
  const base = 'offload: { threads: 0 }\nrouting: { broadcast: { methods: [sendTransaction], fanout: 2 }, landing: LANDING }';
  const off = await startGatewayProc(nodes, token, base.replace('LANDING', '{ maxTracked: 0 }'));
  const on = await startGatewayProc(nodes, token, base.replace('LANDING', '{ rebroadcastMs: 400 }'));
  const load = (gw: { url: string }, s: number): Promise<{ throughput: number }> =>
    generate(['--url', `${gw.url}/api-token/${token}`, '--closed', '--connections', '50', '--method', 'getSlot', '--duration', `${s}s`, '--warmup', '1s']);
  const rates: Record<'off' | 'on', number[]> = { off: [], on: [] };
  let sendsPerSecond = 0;
  try {
    // Sends are 1% of the traffic this machine carries.
    sendsPerSecond = Math.max(10, Math.round((await load(off, 2)).throughput / 100));
    for (let round = 0; round < rounds; round++) {
      for (const [name, gw] of [
        ['off', off],
        ['on', on],
      ] as const) {
        const blockhash = ((await rpc(`${gw.url}/api-token/${token}`, 'getLatestBlockhash', [{ commitment: 'confirmed' }])).value as { blockhash: string })
          .blockhash;
        const to = randomBytes(32);
        const wires = Array.from({ length: sendsPerSecond * (seconds + 2) }, (_, i) =>
          transferTx(payer, to, BigInt(1_000_000 + i), blockhash).toString('base64'),
        );
        opts.log(`[landing] cost: tracking ${name}, round ${round + 1}`);
        let stop!: () => void;
        const stopped = new Promise<void>((r) => (stop = r));
        const sender = sendAtRate(`${gw.url}/api-token/${token}`, wires, sendsPerSecond, stopped);
        const r = await load(gw, seconds);
        stop();
        await sender;
        rates[name].push(r.throughput);
      }
    }
  } finally {
    await Promise.all([off.stop(), on.stop()]);
  }
  const mean = (a: number[]): number => a.reduce((x, y) => x + y, 0) / a.length;
  return {
    sendsPerSecond,
    off: Math.round(mean(rates.off)),
    on: Math.round(mean(rates.on)),
    ratio: Math.round((1000 * mean(rates.on)) / mean(rates.off)) / 1000,
    rounds,
  };
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
    '',
    `Cost: getSlot closed loop (50 connections) with ${r.cost.sendsPerSecond} real sends/s beside it: ${r.cost.off} req/s with tracking off, ${r.cost.on} with tracking, fanout 2 and rebroadcast (${r.cost.ratio}×; goal ≥ 0.98×)`,
  ].join('\n');
}
