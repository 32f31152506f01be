// Fresh-state routing side by side (docs/solana-routing.md; docs/benchmarks.md "Freshness:
// minContextSlot reads and fresh-blockhash sends"): three simulated nodes of one cluster at 0,
// 30 and 120 slots of lag. Clients, paced to a fixed rate, read getBalance with
// minContextSlot equal to the processed slot they last saw from the freshest node, and send real
// signed transfers over a blockhash taken from the freshest node (preflight at confirmed). The
// same load goes direct to a random node, through jumpgate (default routing, key affinity, and
// without fresh routing as the control) and through nginx round-robin; per path: the -32016
// and BlockhashNotFound answers clients see per 10,000 calls, p50/p99 latency added over
// direct, and the proxy's CPU per request.
// Run: npm run bench -- freshness [--quick]

import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { signerFromSeed, transferTx, type Signer } from '../src/tools/sim/wire.js';
import { peerMissing, startNginx } from './peers.js';
import { freePort, proc, startGatewayProc, waitFor, type Proc } from './procs.js';
import { median } from './stats.js';

const TOKEN = 'bench-token-freshness-0123456789';
const ADMIN_TOKEN = 'bench-admin-freshness-0123456789';
/** jumpgate_fresh_routing_total causes shown per jumpgate row. */
const CAUSES = ['waited_context_slot', 'waited_blockhash', 'sent_to_freshest'] as const;
const LAGS = [0, 30, 120];
/** The control row: jumpgate routing as in S1, without fresh routing. */
export const PLAIN_ROW = 'jumpgate without fresh routing (chainWatch off)';
const CLIENTS = 16;
/**
 * Calls per second over all clients, paced (each client sends on its own schedule, and waits
 * for its answer first when one is late): about 60% of what the simulated cluster executes, so
 * latency is each path's own, not queueing in a saturated node, and every path carries the same
 * load for the CPU comparison.
 */
const RATE = 1500;
/**
 * Measured rounds per path, in alternating order. CPU is compared round by round (the median of
 * each round's ratio to the control): a burst of other work on the machine spoils one round of
 * one path, not the comparison.
 */
const ROUNDS = 6;
/** One call in SEND_EVERY is a sendTransaction, the others reads. */
const SEND_EVERY = 5;
/** Transfers signed per refresh of the freshest blockhash (every 100 ms): more than the sends in that time. */
const SIGN_BATCH = 150;

export interface FreshnessRow {
  target: string;
  skipped: string | null;
  calls: number;
  reads: number;
  sends: number;
  /** Client-visible -32016 (minContextSlot not reached) and BlockhashNotFound per 10,000 calls. */
  minContextPer10k: number;
  blockhashNotFoundPer10k: number;
  /** Other errors (any code, or a failed request). */
  otherErrors: number;
  p50Ms: number;
  p99Ms: number;
  /** Over the direct row; null on the direct row itself. */
  addedP50Ms: number | null;
  addedP99Ms: number | null;
  /** The proxy's CPU per call, in µs (null direct). */
  cpuUsPerCall: number | null;
  /** The same less what the proxy spends idle (jumpgate's chain watch and probes), per call. */
  cpuUsPerCallOverIdle: number | null;
  /** cpuUsPerCall and cpuUsPerCallOverIdle of each measured round, in round order (absent in older results). */
  roundsCpuUs?: [number, number][];
  /** jumpgate: calls that waited for a node (or the blockhash book) to catch up, and went to the freshest node after the wait. */
  fresh: Record<(typeof CAUSES)[number], number> | null;
}

export interface FreshnessResult {
  lags: number[];
  secondsPerPath: number;
  clients: number;
  /** Calls per second offered, over all clients (absent in results of closed-loop runs). */
  rate?: number;
  rows: FreshnessRow[];
}

function pct(sorted: Float64Array, p: number): number {
  return sorted.length === 0 ? 0 : sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

async function rpc(url: string, method: string, params: unknown[]): Promise<any> {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
  });
  return ((await res.json()) as { result?: unknown }).result;
}

/** The three nodes, one cluster in one process (a transfer sent to any lands for all). */
async function startCluster(): Promise<{ proc: Proc; urls: string[] }> {
  const cli = new URL('../src/cli/main.js', import.meta.url).pathname;
  const child = spawn(process.execPath, [cli, 'sim', '--port', '0', '--nodes', '3', '--id', 'n', '--lag', LAGS.join(',')], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  await waitFor(child, /nodes of one cluster/, 'sim cluster');
  const urls = [...out.matchAll(/sim node \S+ listening on (\S+)/g)].map((m) => m[1]!);
  if (urls.length !== 3) throw new Error(`sim cluster printed ${urls.length} node URLs: ${out}`);
  return { proc: proc(child), urls };
}

/** What the clients go by: the freshest node's processed slot, and transfers signed over its newest blockhash. */
class Freshest {
  slot = 0;
  private txs: string[] = [];
  private amount = 1;
  private timer: NodeJS.Timeout | null = null;
  private signing = false;

  constructor(
    private readonly url: string,
    private readonly payer: Signer,
    private readonly to: Signer,
  ) {}

  async start(): Promise<void> {
    await this.refresh();
    this.timer = setInterval(() => void this.refresh(), 100);
  }

  stop(): void {
    if (this.timer !== null) clearInterval(this.timer);
  }

  /** A transfer signed over the newest blockhash (each once: distinct amounts). */
  next(): string | null {
    return this.txs.pop() ?? null;
  }

  private async refresh(): Promise<void> {
    const slot = (await rpc(this.url, 'getSlot', [{ commitment: 'processed' }])) as number;
    if (slot > this.slot) this.slot = slot;
    if (this.signing) return;
    this.signing = true;
    try {
      const latest = (await rpc(this.url, 'getLatestBlockhash', [{ commitment: 'confirmed' }])) as { value: { blockhash: string } };
      // node:crypto's ed25519 (~50 µs a signature): real transfers, distinct amounts, each sent once.
      const batch: string[] = [];
      for (let i = 0; i < SIGN_BATCH; i++) batch.push(transferTx(this.payer, this.to.pubkey, BigInt(this.amount++), latest.value.blockhash).toString('base64'));
      this.txs = batch;
    } finally {
      this.signing = false;
    }
  }
}

/** jumpgate's fresh-routing counters now (docs/solana-routing.md "Counters"). */
async function freshCounts(adminUrl: string): Promise<Record<string, number>> {
  const text = await (await fetch(`${adminUrl}/metrics`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } })).text();
  const out: Record<string, number> = {};
  for (const c of CAUSES) out[c] = Number(new RegExp(`jumpgate_fresh_routing_total\\{cause="${c}"\\} (\\d+)`).exec(text)?.[1] ?? 0);
  return out;
}

interface Target {
  name: string;
  /** The URL of each call (a random node for the direct path). */
  url: () => string;
  headers: (client: number) => Record<string, string>;
  proc: Proc | null;
  /** jumpgate's admin URL (its fresh-routing counters); null for the others. */
  admin: string | null;
}

/** What one path's measured rounds add up to. */
interface Tally {
  latencies: number[];
  calls: number;
  reads: number;
  sends: number;
  minContext: number;
  blockhash: number;
  otherErrors: number;
  /** The proxy's CPU seconds over the rounds, and what it would have spent idle in that time. */
  cpu: number;
  idle: number;
  /** Each round's CPU µs per call, and over idle. */
  rounds: [number, number][];
  fresh: Record<(typeof CAUSES)[number], number> | null;
}

function newTally(): Tally {
  return { latencies: [], calls: 0, reads: 0, sends: 0, minContext: 0, blockhash: 0, otherErrors: 0, cpu: 0, idle: 0, rounds: [], fresh: null };
}

/** One round of `ms` on `target`, added into `tally`. */
async function measure(target: Target, fresh: Freshest, ms: number, account: string, idleCpuPerSecond: number, tally: Tally): Promise<void> {
  const counts0 = target.admin === null ? null : await freshCounts(target.admin);
  const cpu0 = target.proc?.cpuSeconds() ?? 0;
  const start = performance.now();
  const end = start + ms;
  const interval = (CLIENTS * 1000) / RATE;
  const client = async (c: number): Promise<void> => {
    for (let n = c, at = start + (c * interval) / CLIENTS; performance.now() < end; n++, at += interval) {
      const wait = at - performance.now();
      if (wait > 0) await new Promise((r) => setTimeout(r, wait));
      const tx = n % SEND_EVERY === 0 ? fresh.next() : null;
      const body =
        tx !== null
          ? `{"jsonrpc":"2.0","id":1,"method":"sendTransaction","params":["${tx}",{"encoding":"base64","preflightCommitment":"confirmed"}]}`
          : `{"jsonrpc":"2.0","id":1,"method":"getBalance","params":["${account}",{"commitment":"processed","minContextSlot":${fresh.slot}}]}`;
      const t0 = performance.now();
      try {
        const res = await fetch(target.url(), { method: 'POST', headers: { 'content-type': 'application/json', ...target.headers(c) }, body });
        const text = await res.text();
        tally.latencies.push(performance.now() - t0);
        tally.calls++;
        if (tx !== null) tally.sends++;
        else tally.reads++;
        if (!text.includes('"error"')) continue;
        if (text.includes('"code":-32016')) tally.minContext++;
        else if (text.includes('BlockhashNotFound')) tally.blockhash++;
        else tally.otherErrors++;
      } catch {
        tally.otherErrors++;
      }
    }
  };
  const calls0 = tally.calls;
  await Promise.all(Array.from({ length: CLIENTS }, (_, c) => client(c)));
  const cpu = (target.proc?.cpuSeconds() ?? 0) - cpu0;
  const idle = (idleCpuPerSecond * (performance.now() - start)) / 1000;
  tally.cpu += cpu;
  tally.idle += idle;
  const calls = tally.calls - calls0;
  if (calls > 0) tally.rounds.push([(cpu / calls) * 1e6, (Math.max(0, cpu - idle) / calls) * 1e6]);
  if (counts0 === null) return;
  const counts1 = await freshCounts(target.admin!);
  tally.fresh ??= Object.fromEntries(CAUSES.map((c) => [c, 0])) as Tally['fresh'];
  for (const c of CAUSES) tally.fresh![c] += counts1[c]! - counts0[c]!;
}

function rowOf(target: Target, t: Tally): Omit<FreshnessRow, 'addedP50Ms' | 'addedP99Ms'> {
  const sorted = Float64Array.from(t.latencies).sort();
  const per10k = (k: number): number => (t.calls === 0 ? 0 : Math.round((k / t.calls) * 10_000 * 10) / 10);
  const perCall = (cpu: number): number | null => (target.proc === null || t.calls === 0 ? null : Math.round((cpu / t.calls) * 1e6 * 10) / 10);
  return {
    target: target.name,
    skipped: null,
    calls: t.calls,
    reads: t.reads,
    sends: t.sends,
    minContextPer10k: per10k(t.minContext),
    blockhashNotFoundPer10k: per10k(t.blockhash),
    otherErrors: t.otherErrors,
    p50Ms: pct(sorted, 50),
    p99Ms: pct(sorted, 99),
    cpuUsPerCall: perCall(t.cpu),
    cpuUsPerCallOverIdle: perCall(Math.max(0, t.cpu - t.idle)),
    roundsCpuUs: target.proc === null ? [] : t.rounds.map(([a, b]) => [Math.round(a * 10) / 10, Math.round(b * 10) / 10]),
    fresh: t.fresh,
  };
}

function skippedRow(target: string, why: string): FreshnessRow {
  return {
    target,
    skipped: why,
    calls: 0,
    reads: 0,
    sends: 0,
    minContextPer10k: 0,
    blockhashNotFoundPer10k: 0,
    otherErrors: 0,
    p50Ms: 0,
    p99Ms: 0,
    addedP50Ms: null,
    addedP99Ms: null,
    cpuUsPerCall: null,
    cpuUsPerCallOverIdle: null,
    fresh: null,
  };
}

export async function runFreshness(o: { quick: boolean; log: (s: string) => void }): Promise<FreshnessResult> {
  const ms = o.quick ? 3000 : 20_000;
  const cluster = await startCluster();
  const stops: (() => Promise<void>)[] = [() => cluster.proc.stop()];
  try {
    const [payer, to] = [signerFromSeed(randomBytes(32)), signerFromSeed(randomBytes(32))];
    const n0 = cluster.urls[0]!;
    // Funded at the tip; preflight simulates against the cluster's newest state, so every node can.
    for (const k of [payer, to]) await rpc(n0, 'requestAirdrop', [k.address, 1_000_000_000_000]);
    for (let i = 0; i < 100 && ((await rpc(n0, 'getBalance', [payer.address, { commitment: 'processed' }])) as { value: number }).value === 0; i++) {
      await new Promise((r) => setTimeout(r, 50));
    }
    const fresh = new Freshest(n0, payer, to);
    await fresh.start();
    stops.push(async () => fresh.stop());
    const nodes = cluster.urls.map((url, i) => ({ id: `n${i}`, url }));
    const adminPort = await freePort();
    const gw = await startGatewayProc(
      nodes,
      TOKEN,
      `admin: { port: ${adminPort}, token: ${ADMIN_TOKEN} }\nhealth: { intervalMs: 400, chainWatch: true }\naffinity: { keyRate: 1000000, keyBurst: 1000000 }`,
    );
    const admin = `http://127.0.0.1:${adminPort}`;
    stops.push(() => gw.stop());
    // The control: the same gateway without a chain watch routes as S1 does (no fresh routing,
    // docs/solana-routing.md), so the CPU fresh routing costs is the ratio of the two at one load.
    const plain = await startGatewayProc(nodes, TOKEN, `health: { intervalMs: 400, chainWatch: false }\naffinity: { keyRate: 1000000, keyBurst: 1000000 }`);
    stops.push(() => plain.stop());
    // The chain watch's first views (a few polls and the slot streams), then what the gateway spends idle.
    await new Promise((r) => setTimeout(r, 500));
    // Over 3 s: the CPU clock ticks in 10 ms, a tick over 1 s was 7 µs a call at this rate.
    const idleSeconds = o.quick ? 1 : 3;
    const idleCpu0 = [gw.cpuSeconds(), plain.cpuSeconds()];
    await new Promise((r) => setTimeout(r, idleSeconds * 1000));
    const idlePerSecond = new Map<Proc, number>([
      [gw, (gw.cpuSeconds() - idleCpu0[0]!) / idleSeconds],
      [plain, (plain.cpuSeconds() - idleCpu0[1]!) / idleSeconds],
    ]);
    const gwUrl = `${gw.url}/api-token/${TOKEN}`;
    const none = (): Record<string, string> => ({});
    const targets: (Target | FreshnessRow)[] = [
      { name: 'direct to a random node', url: () => cluster.urls[Math.floor(Math.random() * 3)]!, headers: none, proc: null, admin: null },
      { name: 'jumpgate, default routing', url: () => gwUrl, headers: none, proc: gw, admin },
      { name: PLAIN_ROW, url: () => `${plain.url}/api-token/${TOKEN}`, headers: none, proc: plain, admin: null },
      {
        name: 'jumpgate, key affinity',
        url: () => gwUrl,
        headers: (c) => ({ 'x-service-affinity': 'key', 'x-service-affinity-key': `client-${c}` }),
        proc: gw,
        admin,
      },
    ];
    const missing = await peerMissing('nginx');
    if (missing !== null) targets.push(skippedRow('nginx round-robin', missing));
    else {
      const nginx = await startNginx(cluster.urls);
      stops.push(() => nginx.stop());
      targets.push({ name: 'nginx round-robin', url: () => nginx.url, headers: none, proc: nginx, admin: null });
    }
    const measured = targets.filter((t): t is Target => !('skipped' in t));
    const idleOf = (t: Target): number => (t.proc === null ? 0 : (idlePerSecond.get(t.proc) ?? 0));
    // Connections opened and code warmed before the measured rounds.
    for (const t of measured) await measure(t, fresh, o.quick ? 500 : 2000, payer.address, idleOf(t), newTally());
    // Rounds alternate the order (like S1-S5), so no path always follows the same one.
    const tallies = new Map(measured.map((t) => [t, newTally()]));
    for (let round = 0; round < ROUNDS; round++) {
      for (const t of round % 2 === 0 ? measured : [...measured].reverse()) {
        o.log(`[freshness] round ${round + 1}: ${t.name}…`);
        await measure(t, fresh, ms / ROUNDS, payer.address, idleOf(t), tallies.get(t)!);
      }
    }
    const rows: FreshnessRow[] = [];
    for (const t of targets) {
      if ('skipped' in t) {
        rows.push(t);
        continue;
      }
      const r = rowOf(t, tallies.get(t)!);
      const direct = rows[0];
      rows.push({
        ...r,
        addedP50Ms: direct === undefined ? null : r.p50Ms - direct.p50Ms,
        addedP99Ms: direct === undefined ? null : r.p99Ms - direct.p99Ms,
      });
    }
    return { lags: LAGS, secondsPerPath: ms / 1000, clients: CLIENTS, rate: RATE, rows };
  } finally {
    for (const s of stops.reverse()) await s().catch(() => undefined);
  }
}

const f2 = (x: number | null): string => (x === null ? '–' : x.toFixed(2));

export function freshnessTable(r: FreshnessResult): string {
  const lines = [
    `**Freshness: nodes at ${r.lags.join(', ')} slots of lag, ${r.clients} clients at ${r.rate ?? 'as many as answered'} calls/s in all, ${r.secondsPerPath} s per path; reads with minContextSlot = the freshest node's last slot, transfers over its newest blockhash (1 call in ${SEND_EVERY})**`,
    '',
    '| path | calls (sends) | -32016 per 10k | BlockhashNotFound per 10k | other errors | p50 ms | p99 ms | added p50 | added p99 | CPU µs/call | over idle | waited: slot / blockhash, then freshest |',
    '|---|---|---|---|---|---|---|---|---|---|---|---|',
  ];
  for (const x of r.rows) {
    if (x.skipped !== null) {
      lines.push(`| ${x.target} | skipped: ${x.skipped} | | | | | | | | | | |`);
      continue;
    }
    lines.push(
      `| ${x.target} | ${x.calls} (${x.sends}) | ${x.minContextPer10k} | ${x.blockhashNotFoundPer10k} | ${x.otherErrors} | ${f2(x.p50Ms)} | ${f2(x.p99Ms)} | ${f2(x.addedP50Ms)} | ${f2(x.addedP99Ms)} | ${x.cpuUsPerCall ?? '–'} | ${x.cpuUsPerCallOverIdle ?? '–'} | ${x.fresh === null ? '–' : `${x.fresh.waited_context_slot} / ${x.fresh.waited_blockhash}, ${x.fresh.sent_to_freshest}`} |`,
    );
  }
  const plain = r.rows.find((x) => x.target === PLAIN_ROW && x.skipped === null);
  if (plain?.cpuUsPerCall != null && plain.cpuUsPerCall > 0) {
    const ratio = (a: number | null, b: number | null): string => (a === null || b === null || b <= 0 ? '–' : `${(a / b).toFixed(2)}×`);
    const ratios = r.rows
      .filter((x) => x.fresh !== null)
      .map(
        (x) =>
          `${x.target.replace('jumpgate, ', '')} ${ratio(x.cpuUsPerCall, plain.cpuUsPerCall)} (over idle ${ratio(x.cpuUsPerCallOverIdle, plain.cpuUsPerCallOverIdle)})`,
      );
    lines.push(
      '',
      `CPU per call against the same load without fresh routing (${plain.cpuUsPerCall} µs, ${plain.cpuUsPerCallOverIdle} over idle): ${ratios.join(', ')}`,
    );
    const base = plain.roundsCpuUs ?? [];
    if (base.length > 1) {
      const medians = r.rows
        .filter((x) => x.fresh !== null && x.roundsCpuUs?.length === base.length)
        .map((x) => {
          const each = (k: 0 | 1): number => median(x.roundsCpuUs!.map((v, i) => v[k] / base[i]![k]));
          return `${x.target.replace('jumpgate, ', '')} ${each(0).toFixed(2)}× (over idle ${each(1).toFixed(2)}×)`;
        });
      lines.push('', `The median of the ${base.length} rounds' ratios (each round against the control's same round): ${medians.join(', ')}`);
    }
  }
  return lines.join('\n');
}
