// How one call reaches nodes (docs/routing.md "Broadcast sends", "Hedged reads", "Coalescing"), each
// scenario against simulated nodes in processes of their own and a gateway process:
//   hedge      one node answers 5% of getBalance calls 200 ms late, the other is healthy:
//              p50/p99 through jumpgate without and with hedging, the healthy node's own
//              p99 (direct), and the extra upstream calls hedging costs
//   coalesce   1,000 clients poll getLatestBlockhash in a burst at each slot (400 ms): upstream
//              calls per client call and gateway CPU, without and with coalescing
//   broadcast  sendTransaction when the client's node is the slowest of three: time to the
//              first success with fanout 1 and 3

import { Agent, request } from 'node:http';
import { generate } from './load.js';
import { startGatewayProc, startSimProc, type Proc } from './procs.js';
import type { LatencyMs } from '../src/tools/loadgen/http-load.js';

const TOKEN = 'bench-calls-token-0123456789';

type Sim = Proc & { url: string };

async function simStats(s: Sim): Promise<Record<string, number>> {
  const r = await fetch(s.url + '/sim/stats');
  return ((await r.json()) as { byMethod: Record<string, number> }).byMethod;
}

async function simCalls(sims: Sim[], method: string): Promise<number> {
  let n = 0;
  for (const s of sims) n += (await simStats(s))[method] ?? 0;
  return n;
}

async function setKnobs(s: Sim, knobs: Record<string, unknown>): Promise<void> {
  const r = await fetch(s.url + '/sim/control', { method: 'POST', body: JSON.stringify(knobs) });
  if (r.status !== 200) throw new Error(`sim control: ${await r.text()}`);
}

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return 0;
  return sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))]!;
}

/** One POST through a keep-alive agent: the answer's status, node header and time. */
function post(agent: Agent, url: string, body: string): Promise<{ status: number; node: string; ms: number }> {
  const t0 = performance.now();
  return new Promise((resolve, reject) => {
    const req = request(
      url + '/api-token/' + TOKEN,
      { method: 'POST', agent, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } },
      (res) => {
        res.resume();
        res.on('end', () => resolve({ status: res.statusCode ?? 0, node: String(res.headers['x-service-node'] ?? ''), ms: performance.now() - t0 }));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

async function stopAll(procs: Proc[]): Promise<void> {
  await Promise.all(procs.map((p) => p.stop()));
}

// ---- hedge ----

export interface HedgeRow {
  target: string;
  latencyMs: LatencyMs;
  clientCalls: number;
  upstreamCalls: number;
  /** (upstream − client) / client. */
  extraCalls: number;
  /** Share of the upstream calls node "slow" got. */
  slowShare: number;
  errors: number;
}

export interface HedgeResult {
  rate: number;
  seconds: number;
  /** The first three rows: medians over this many alternating runs. */
  rounds?: number;
  rows: HedgeRow[];
  /** The hedged p99 over the healthy node's own p99 (goal ≤ 2). */
  p99Ratio: number;
}

/** Each figure's median over the rounds (the rows are measured in alternation, see runHedge). */
function medianLatency(rounds: LatencyMs[]): LatencyMs {
  const out = { ...rounds[0]! };
  for (const k of Object.keys(out) as (keyof LatencyMs)[]) {
    const v = rounds.map((r) => r[k]).sort((a, b) => a - b);
    out[k] = v[Math.floor(v.length / 2)]!;
  }
  return out;
}

export async function runHedge(o: { quick: boolean; log?: (line: string) => void }): Promise<HedgeResult> {
  const rate = o.quick ? 200 : 500;
  const seconds = o.quick ? 1 : 8;
  // The healthy node direct, jumpgate without and with hedging are measured in turn, three
  // times over: a p99 of 4,000 calls on a shared machine moves with whatever else runs, and
  // alternating keeps such a phase from landing on one row only. Each figure is the median.
  const rounds = o.quick ? 1 : 3;
  const load = [
    '--rate',
    String(rate),
    '--connections',
    '20',
    '--method',
    'getBalance',
    '--params',
    '["Acc1"]',
    '--duration',
    `${seconds}s`,
    '--warmup',
    o.quick ? '200ms' : '1s',
  ];
  const slow = await startSimProc('slow', ['--slow-rate', '0.05', '--slow-ms', '200', '--slow-methods', 'getBalance']);
  const healthy = await startSimProc('healthy');
  const sims = [slow, healthy];
  const procs: Proc[] = [...sims];
  const rows: HedgeRow[] = [];
  const nodes = sims.map((s, i) => ({ id: i === 0 ? 'slow' : 'healthy', url: s.url }));
  const HEDGE = 'routing: { hedge: { methods: [getBalance] } }';
  const measure = async (target: string, url: string, viaGateway: boolean): Promise<HedgeRow> => {
    const before = await simCalls(sims, 'getBalance');
    const slowBefore = await simCalls([slow], 'getBalance');
    const r = await generate(viaGateway ? ['--url', url, '--token', TOKEN, ...load] : ['--url', url, ...load]);
    const upstream = (await simCalls(sims, 'getBalance')) - before;
    const slowCalls = (await simCalls([slow], 'getBalance')) - slowBefore;
    return {
      target,
      latencyMs: r.latencyMs,
      clientCalls: r.allAnswered,
      upstreamCalls: upstream,
      extraCalls: (upstream - r.allAnswered) / Math.max(1, r.allAnswered),
      slowShare: slowCalls / Math.max(1, upstream),
      errors: r.errors,
    };
  };
  const merge = (runs: HedgeRow[]): HedgeRow => {
    const clientCalls = runs.reduce((n, r) => n + r.clientCalls, 0);
    const upstreamCalls = runs.reduce((n, r) => n + r.upstreamCalls, 0);
    const slowCalls = runs.reduce((n, r) => n + r.slowShare * r.upstreamCalls, 0);
    return {
      target: runs[0]!.target,
      latencyMs: medianLatency(runs.map((r) => r.latencyMs)),
      clientCalls,
      upstreamCalls,
      extraCalls: (upstreamCalls - clientCalls) / Math.max(1, clientCalls),
      slowShare: slowCalls / Math.max(1, upstreamCalls),
      errors: runs.reduce((n, r) => n + r.errors, 0),
    };
  };
  try {
    const plain = await startGatewayProc(nodes, TOKEN, '');
    procs.push(plain);
    const hedged = await startGatewayProc(nodes, TOKEN, HEDGE);
    procs.push(hedged);
    const targets: [string, string, boolean][] = [
      ['healthy node direct', healthy.url, false],
      ['jumpgate, no hedging', plain.url, true],
      ['jumpgate, hedge getBalance (defaults: p90, 2-100 ms)', hedged.url, true],
    ];
    const runs: HedgeRow[][] = targets.map(() => []);
    for (let round = 0; round < rounds; round++) {
      for (let i = 0; i < targets.length; i++) {
        const [target, url, viaGateway] = targets[i]!;
        o.log?.(`hedge: ${target} (round ${round + 1} of ${rounds})`);
        runs[i]!.push(await measure(target, url, viaGateway));
      }
    }
    rows.push(...runs.map(merge));
    await setKnobs(healthy, { slowRate: 0.05, slowMs: 200, slowMethods: ['getBalance'] });
    for (const [target, gw] of [
      ['both nodes slow 5%: jumpgate, no hedging', plain],
      ['both nodes slow 5%: jumpgate, hedging', hedged],
    ] as const) {
      o.log?.(`hedge: ${target}`);
      rows.push(await measure(target, gw.url, true));
    }
  } finally {
    await stopAll(procs);
  }
  return { rate, seconds, rounds, rows, p99Ratio: rows[2]!.latencyMs.p99 / Math.max(0.001, rows[0]!.latencyMs.p99) };
}

export function hedgeTable(r: HedgeResult): string {
  return [
    `**Hedged reads: getBalance at ${r.rate} req/s (open loop, 20 connections, ${r.seconds} s${(r.rounds ?? 1) > 1 ? `; the first three rows measured in turn ${r.rounds} times, each figure the median, calls summed` : ''}); node "slow" answers 5% of them 200 ms late, node "healthy" none**`,
    '',
    '| target | p50 ms | p90 ms | p99 ms | p99.9 ms | max ms | client calls | upstream calls | extra calls | node "slow"\'s share | errors |',
    '|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
    ...r.rows.map(
      (x) =>
        `| ${x.target} | ${x.latencyMs.p50.toFixed(2)} | ${x.latencyMs.p90.toFixed(2)} | ${x.latencyMs.p99.toFixed(2)} | ${x.latencyMs.p999.toFixed(1)} | ${x.latencyMs.max.toFixed(1)} | ${x.clientCalls} | ${x.upstreamCalls} | ${(x.extraCalls * 100).toFixed(1)}% | ${(x.slowShare * 100).toFixed(0)}% | ${x.errors} |`,
    ),
    '',
    `- hedged p99 (one slow node) / healthy node's own p99: ${r.p99Ratio.toFixed(2)}× (goal ≤ 2×); extra upstream calls goal ≤ 15%`,
  ].join('\n');
}

// ---- coalesce ----

export interface CoalesceRow {
  target: string;
  clientCalls: number;
  upstreamCalls: number;
  upstreamPerClientCall: number;
  gatewayCpuMsPer1k: number;
  p50Ms: number;
  p99Ms: number;
  errors: number;
}

export interface CoalesceResult {
  clients: number;
  bursts: number;
  nodeLatencyMs: string;
  rows: CoalesceRow[];
}

export async function runCoalesce(o: { quick: boolean; log?: (line: string) => void }): Promise<CoalesceResult> {
  const clients = o.quick ? 100 : 1000;
  const bursts = o.quick ? 3 : 15;
  const latency = '2-4';
  const sims = [await startSimProc('c0', ['--latency-ms', latency]), await startSimProc('c1', ['--latency-ms', latency])];
  const procs: Proc[] = [...sims];
  const rows: CoalesceRow[] = [];
  const body = '{"jsonrpc":"2.0","id":1,"method":"getLatestBlockhash","params":[{"commitment":"confirmed"}]}';
  try {
    const nodes = sims.map((s, i) => ({ id: `c${i}`, url: s.url }));
    for (const [target, extra] of [
      ['no coalescing', ''],
      ['coalesce, windowMs 0', 'routing: { coalesce: { methods: [getLatestBlockhash], windowMs: 0 } }'],
      ['coalesce, windowMs 50', 'routing: { coalesce: { methods: [getLatestBlockhash], windowMs: 50 } }'],
    ] as const) {
      o.log?.(`coalesce: ${target}`);
      const gw = await startGatewayProc(nodes, TOKEN, extra);
      procs.push(gw);
      // Each client has its own connection, as 1,000 bots would.
      const agent = new Agent({ keepAlive: true, maxSockets: clients });
      await Promise.all(Array.from({ length: clients }, () => post(agent, gw.url, body)));
      const before = await simCalls(sims, 'getLatestBlockhash');
      const cpu0 = gw.cpuSeconds();
      const times: number[] = [];
      let errors = 0;
      for (let b = 0; b < bursts; b++) {
        const start = performance.now();
        const answers = await Promise.all(Array.from({ length: clients }, () => post(agent, gw.url, body)));
        for (const a of answers) {
          times.push(a.ms);
          if (a.status !== 200) errors++;
        }
        // The next slot.
        const wait = 400 - (performance.now() - start);
        if (wait > 0) await new Promise((r) => setTimeout(r, wait));
      }
      const cpu = gw.cpuSeconds() - cpu0;
      const upstream = (await simCalls(sims, 'getLatestBlockhash')) - before;
      agent.destroy();
      times.sort((a, b) => a - b);
      const calls = clients * bursts;
      rows.push({
        target,
        clientCalls: calls,
        upstreamCalls: upstream,
        upstreamPerClientCall: upstream / calls,
        gatewayCpuMsPer1k: (cpu * 1e6) / calls,
        p50Ms: percentile(times, 0.5),
        p99Ms: percentile(times, 0.99),
        errors,
      });
      await gw.stop();
    }
  } finally {
    await stopAll(procs);
  }
  return { clients, bursts, nodeLatencyMs: latency, rows };
}

export function coalesceTable(r: CoalesceResult): string {
  const base = r.rows[0]!;
  return [
    `**Coalescing: ${r.clients} clients (a connection each) send getLatestBlockhash together at each slot (400 ms), ${r.bursts} slots; two nodes answering in ${r.nodeLatencyMs} ms**`,
    '',
    '| gateway | client calls | upstream calls | upstream per client call | fewer upstream calls | gateway CPU ms / 1k calls | p50 ms | p99 ms | errors |',
    '|---|---:|---:|---:|---:|---:|---:|---:|---:|',
    ...r.rows.map(
      (x) =>
        `| ${x.target} | ${x.clientCalls} | ${x.upstreamCalls} | ${x.upstreamPerClientCall.toFixed(3)} | ${(base.upstreamCalls / Math.max(1, x.upstreamCalls)).toFixed(1)}× | ${x.gatewayCpuMsPer1k.toFixed(0)} | ${x.p50Ms.toFixed(1)} | ${x.p99Ms.toFixed(1)} | ${x.errors} |`,
    ),
    '',
    '- goal: ≥ 10× fewer upstream calls; latency is each client call, burst sent at once',
  ].join('\n');
}

// ---- broadcast ----

export interface BroadcastRow {
  /** 0: the fastest node, straight. */
  fanout: number;
  /** Every node at the fastest one's latency. */
  equal?: boolean;
  p50Ms: number;
  p90Ms: number;
  p99Ms: number;
  answeredBy: Record<string, number>;
  upstreamCalls: number;
  clientCalls: number;
  errors: number;
}

export interface BroadcastResult {
  /** Node id → its fixed latency; the first is the client's affinity node. */
  latencies: Record<string, number>;
  calls: number;
  rows: BroadcastRow[];
}

function txBody(i: number): string {
  return `{"jsonrpc":"2.0","id":${i},"method":"sendTransaction","params":["AQID${i}"]}`;
}

/** Ten clients, one transaction at a time each, `calls` in all: times and who answered. */
async function sendTransactions(agent: Agent, url: string, calls: number): Promise<BroadcastRow> {
  const times: number[] = [];
  const answeredBy: Record<string, number> = {};
  let errors = 0;
  let next = 1;
  await Promise.all(
    Array.from({ length: 10 }, async () => {
      while (next <= calls) {
        const a = await post(agent, url, txBody(next++));
        times.push(a.ms);
        answeredBy[a.node] = (answeredBy[a.node] ?? 0) + 1;
        if (a.status !== 200) errors++;
      }
    }),
  );
  times.sort((a, b) => a - b);
  return {
    fanout: 0,
    p50Ms: percentile(times, 0.5),
    p90Ms: percentile(times, 0.9),
    p99Ms: percentile(times, 0.99),
    answeredBy,
    upstreamCalls: calls,
    clientCalls: calls,
    errors,
  };
}

export async function runBroadcast(o: { quick: boolean; log?: (line: string) => void }): Promise<BroadcastResult> {
  const calls = o.quick ? 20 : 300;
  const sims = [await startSimProc('b0'), await startSimProc('b1'), await startSimProc('b2')];
  const procs: Proc[] = [...sims];
  const rows: BroadcastRow[] = [];
  const latencies: Record<string, number> = {};
  try {
    const nodes = sims.map((s, i) => ({ id: `b${i}`, url: s.url }));
    const broadcastGateway = (fanout: number) => startGatewayProc(nodes, TOKEN, `routing: { broadcast: { methods: [sendTransaction], fanout: ${fanout} } }`);
    /** The client calls through `gw`, then its upstream calls (the slower nodes' late answers counted too). */
    const through = async (gw: Proc & { url: string }, agent: Agent, fanout: number, equal: boolean): Promise<void> => {
      const before = await simCalls(sims, 'sendTransaction');
      const row = await sendTransactions(agent, gw.url, calls);
      await new Promise((r) => setTimeout(r, 200));
      rows.push({ ...row, fanout, equal, upstreamCalls: (await simCalls(sims, 'sendTransaction')) - before });
      agent.destroy();
      await gw.stop();
    };
    for (const fanout of [1, 3]) {
      const gw = await broadcastGateway(fanout);
      procs.push(gw);
      const agent = new Agent({ keepAlive: true, maxSockets: 10 });
      if (fanout === 1) {
        // The client's node (automatic IP affinity for sendTransaction) is made the slowest.
        const mine = (await post(agent, gw.url, txBody(0))).node;
        const others = nodes.filter((n) => n.id !== mine);
        latencies[mine] = 40;
        latencies[others[0]!.id] = 15;
        latencies[others[1]!.id] = 3;
        for (let i = 0; i < 3; i++) await setKnobs(sims[i]!, { latencyMs: [latencies[nodes[i]!.id]!, latencies[nodes[i]!.id]!] });
      }
      o.log?.(`broadcast: fanout ${fanout}`);
      await through(gw, agent, fanout, false);
    }
    // The goal's yardstick: the same clients straight to the fastest node.
    o.log?.('broadcast: the fastest node direct');
    const f = nodes.findIndex((n) => latencies[n.id] === 3);
    const agent = new Agent({ keepAlive: true, maxSockets: 10 });
    const direct = await sendTransactions(agent, sims[f]!.url, calls);
    rows.push({ ...direct, fanout: 0, answeredBy: { [nodes[f]!.id]: calls - direct.errors } });
    agent.destroy();
    // Equal nodes: whichever answers first varies call by call (the race the slow-node rows never lose).
    // Fanout 1 beside it: the gateway's hop alone, so the difference is what the copies cost.
    for (const sim of sims) await setKnobs(sim, { latencyMs: [3, 3] });
    for (const fanout of [3, 1]) {
      o.log?.(`broadcast: fanout ${fanout}, every node at 3 ms`);
      const gw = await broadcastGateway(fanout);
      procs.push(gw);
      await through(gw, new Agent({ keepAlive: true, maxSockets: 10 }), fanout, true);
    }
  } finally {
    await stopAll(procs);
  }
  return { latencies, calls, rows };
}

function fastestRatio(r: BroadcastResult): string {
  const direct = r.rows.find((x) => x.fanout === 0);
  const f3 = r.rows.find((x) => x.fanout === 3 && x.equal !== true);
  const e3 = r.rows.find((x) => x.fanout === 3 && x.equal === true);
  const e1 = r.rows.find((x) => x.fanout === 1 && x.equal === true);
  const hop =
    e3 === undefined || e1 === undefined
      ? ''
      : `; with every node equal, fanout 3 p50 ${(e3.p50Ms / Math.max(0.001, e1.p50Ms)).toFixed(2)}× fanout 1's (what the copies cost over the gateway's hop)`;
  return direct === undefined || f3 === undefined
    ? ''
    : `: p50 ${(f3.p50Ms / Math.max(0.001, direct.p50Ms)).toFixed(2)}× the fastest node's own, p90 ${(f3.p90Ms / Math.max(0.001, direct.p90Ms)).toFixed(2)}×${hop}`;
}

export function broadcastTable(r: BroadcastResult): string {
  const lat = Object.entries(r.latencies)
    .map(([id, ms], i) => `${id} ${ms} ms${i === 0 ? " (the client's node)" : ''}`)
    .join(', ');
  return [
    `**Broadcast: sendTransaction, ${r.calls} calls from 10 clients; nodes answer in ${lat}**`,
    '',
    '| through | p50 ms | p90 ms | p99 ms | answered by | upstream calls per client call | errors |',
    '|---|---:|---:|---:|---|---:|---:|',
    ...r.rows.map(
      (x) =>
        `| ${x.fanout === 0 ? 'the fastest node, direct' : `jumpgate, fanout ${x.fanout}${x.equal === true ? ', every node at 3 ms' : ''}`} | ${x.p50Ms.toFixed(1)} | ${x.p90Ms.toFixed(1)} | ${x.p99Ms.toFixed(1)} | ${Object.entries(
          x.answeredBy,
        )
          .map(([n, c]) => `${n} ${c}`)
          .join(', ')} | ${(x.upstreamCalls / x.clientCalls).toFixed(2)} | ${x.errors} |`,
    ),
    '',
    `- goal: with fanout 3, the fastest node's latency${fastestRatio(r)}`,
  ].join('\n');
}
