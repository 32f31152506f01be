// Sends that land first (docs/landing.md "Sends go where they land"): one simulated cluster of
// three nodes that land 95%, 60% and 20% of what they accept, 0, 200 and 400 ms after accepting
// it; one client address sends real transfers at a steady rate, the blockhash fetched through
// the path every 2 s, as a bot does. Paths: direct to the best node (the reference), jumpgate with
// sends pinned by client IP (routing.autoAffinityMethods with sendTransaction, the old default),
// jumpgate's default (landing-aware ranking), jumpgate with broadcast fanout 2, nginx
// round-robin. No rebroadcast anywhere. The truth is the cluster's ledger, read once every
// blockhash used expired.

import { randomBytes } from 'node:crypto';
import { encodeBase58 } from '../src/solana/base58.js';
import { signerFromSeed, transferTx, type Signer } from '../src/tools/sim/wire.js';
import { percentile, rpc, setLandingKnobs, startCluster, until } from './landing.js';
import { peerMissing, startNginx } from './peers.js';
import { startGatewayProc, type Proc } from './procs.js';

const TOKEN = 'bench-sends-token-0123456789';
const NODES = [
  { txDropRate: 0.05, landingMs: 0 },
  { txDropRate: 0.4, landingMs: 200 },
  { txDropRate: 0.8, landingMs: 400 },
];

export interface SendsPath {
  path: string;
  sent: number;
  landedPct: number;
  slotsP50: number | null;
  slotsP90: number | null;
  /** Share of the sends each node answered (X-Service-Node), when the path names it. */
  byNode: Record<string, number>;
  skipped: string | null;
}

export interface SendsBenchResult {
  slotMs: number;
  sendsPerPath: number;
  perSecond: number;
  nodes: typeof NODES;
  paths: SendsPath[];
}

/** `n` transfers through `url` at `perSecond`; landed share and slots to land from the ledger. */
async function measure(path: string, url: string, ledgerNode: string, payer: Signer, n: number, perSecond: number, slotMs: number): Promise<SendsPath> {
  const to = randomBytes(32);
  const sigs: string[] = [];
  const sentSlots: number[] = [];
  const hashes = new Set<string>();
  const byNode: Record<string, number> = {};
  let hash = '';
  let hashAt = 0;
  const firstSlot = (await rpc(ledgerNode, 'getSlot', [{ commitment: 'processed' }])) as number;
  const t0 = Date.now();
  for (let i = 0; i < n; i++) {
    const due = t0 + (i * 1000) / perSecond;
    if (Date.now() < due) await new Promise((r) => setTimeout(r, due - Date.now()));
    if (Date.now() - hashAt > 2000) {
      hash = ((await rpc(url, 'getLatestBlockhash', [{ commitment: 'confirmed' }])).value as { blockhash: string }).blockhash;
      hashAt = Date.now();
      hashes.add(hash);
    }
    const wire = transferTx(payer, to, BigInt(1_000_000 + i), hash);
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
    const node = r.headers.get('x-service-node');
    const j = (await r.json()) as { result?: string };
    if (typeof j.result !== 'string') continue;
    sigs.push(j.result);
    sentSlots.push(firstSlot + Math.floor((Date.now() - t0) / slotMs));
    if (node !== null) byNode[node] = (byNode[node] ?? 0) + 1;
  }
  // Once every blockhash used expired, nothing more can land.
  await until(
    'the blockhashes to expire',
    async () => {
      for (const h of hashes) if ((await rpc(ledgerNode, 'isBlockhashValid', [h, { commitment: 'processed' }])).value) return false;
      return true;
    },
    200 * slotMs + 30_000,
  );
  const slots: number[] = [];
  for (let i = 0; i < sigs.length; i += 256) {
    const value = (await rpc(ledgerNode, 'getSignatureStatuses', [sigs.slice(i, i + 256), { searchTransactionHistory: true }])).value as ({
      slot: number;
    } | null)[];
    value.forEach((s, k) => {
      if (s !== null) slots.push(Math.max(0, s.slot - sentSlots[i + k]!));
    });
  }
  slots.sort((a, b) => a - b);
  for (const k of Object.keys(byNode)) byNode[k] = Math.round((1000 * byNode[k]!) / sigs.length) / 10;
  return {
    path,
    sent: n,
    landedPct: Math.round((1000 * slots.length) / n) / 10,
    slotsP50: percentile(slots, 0.5),
    slotsP90: percentile(slots, 0.9),
    byNode,
    skipped: null,
  };
}

export async function runSendsBench(opts: { quick: boolean; log: (line: string) => void }): Promise<SendsBenchResult> {
  const slotMs = opts.quick ? 50 : 100;
  const n = opts.quick ? 150 : 1000;
  const perSecond = opts.quick ? 50 : 40;
  const cluster = await startCluster(slotMs);
  const procs: Proc[] = [cluster];
  try {
    const nodes = cluster.urls.map((url, i) => ({ id: `n${i}`, url }));
    const payer = signerFromSeed(randomBytes(32));
    await rpc(nodes[0]!.url, 'requestAirdrop', [encodeBase58(payer.pubkey), 1_000_000_000_000]);
    await until('the airdrop', async () => (await rpc(nodes[0]!.url, 'getBalance', [payer.address, { commitment: 'confirmed' }])).value > 0, 30_000);
    await setLandingKnobs(cluster.urls, NODES);
    const paths: SendsPath[] = [];
    opts.log('[sends] direct to the best node');
    paths.push(await measure('direct to the best node (n0)', nodes[0]!.url, nodes[0]!.url, payer, n, perSecond, slotMs));
    const gateways = [
      {
        path: 'jumpgate, sends pinned by client IP',
        extra: 'routing: { autoAffinityMethods: [getLatestBlockhash, isBlockhashValid, sendTransaction, simulateTransaction] }',
      },
      { path: 'jumpgate, default (landing-aware)', extra: '' },
      { path: 'jumpgate, broadcast fanout 2', extra: 'routing: { broadcast: { methods: [sendTransaction], fanout: 2 } }' },
    ];
    for (const g of gateways) {
      const gw = await startGatewayProc(nodes, TOKEN, g.extra);
      procs.push(gw);
      opts.log(`[sends] ${g.path}`);
      paths.push(await measure(g.path, `${gw.url}/api-token/${TOKEN}`, nodes[0]!.url, payer, n, perSecond, slotMs));
      await gw.stop();
    }
    const missing = await peerMissing('nginx');
    if (missing !== null) paths.push({ path: 'nginx, round-robin', sent: 0, landedPct: 0, slotsP50: null, slotsP90: null, byNode: {}, skipped: missing });
    else {
      const nginx = await startNginx(cluster.urls);
      procs.push(nginx);
      opts.log('[sends] nginx');
      paths.push(await measure('nginx, round-robin', nginx.url, nodes[0]!.url, payer, n, perSecond, slotMs));
    }
    return { slotMs, sendsPerPath: n, perSecond, nodes: NODES, paths };
  } finally {
    await Promise.all(procs.map((p) => p.stop().catch(() => {})));
  }
}

export function sendsTable(r: SendsBenchResult): string {
  const shares = (p: SendsPath): string =>
    Object.entries(p.byNode)
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([k, v]) => `${k} ${v}%`)
      .join(', ') || '-';
  const rows = r.paths.map((p) =>
    p.skipped !== null
      ? `| ${p.path} | skipped: ${p.skipped} | | | | |`
      : `| ${p.path} | ${p.sent} | ${p.landedPct}% | ${p.slotsP50 ?? '-'} | ${p.slotsP90 ?? '-'} | ${shares(p)} |`,
  );
  return [
    `Sends from one client address, ${r.perSecond}/s: nodes landing ${r.nodes.map((x) => `${100 - x.txDropRate * 100}% after ${x.landingMs} ms`).join(', ')}; ${r.slotMs} ms slots; no rebroadcast`,
    '| path | sent | landed | slots to land p50 | p90 | sends per node |',
    '|---|---|---|---|---|---|',
    ...rows,
  ].join('\n');
}
