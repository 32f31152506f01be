// S7: does a second data-plane thread buy throughput? S1's load (getSlot, closed loop, 50
// connections, two simulated nodes in their own processes) against jumpgate with
// `rpc.workers` 1 and 2 and nginx with `worker_processes` 1 and 2, the same nodes behind all
// four, measured in turn and repeated (A B C D, A B C D) as S1–S5 are. CPU is the target's
// whole process from /proc/PID/stat: a worker thread's time is in its gateway's figure, and
// nginx's master and workers are summed.

import { cpus } from 'node:os';
import type { HttpLoadResult, LatencyMs } from '../src/tools/loadgen/http-load.js';
import { latencyMs } from '../src/tools/loadgen/http-load.js';
import { LatencyHistogram } from '../src/metrics/histogram.js';
import { TOKEN } from './http-scenarios.js';
import { generate } from './load.js';
import { peerMissing, startNginx } from './peers.js';
import { machineBusySeconds, selfCpuSeconds, startGatewayProc, startSimProc, type Proc } from './procs.js';

/** S1's generator flags. */
const LOAD = ['--closed', '--connections', '50'];
/** As in S1: batches parsed on the data plane itself (no piscina), so threads are only the workers. */
const GATEWAY_EXTRA = 'offload: { threads: 0 }';
const SCALE_TO_CORES = 16;

export interface S7Row {
  target: string;
  kind: 'jumpgate' | 'nginx';
  /** rpc.workers or worker_processes. */
  workers: number;
  skipped: string | null;
  throughput: number;
  spreadPct: number;
  latencyMs: LatencyMs | null;
  errors: number;
  /** CPU seconds of the target's processes (all threads) per 1,000 requests, warm-up included. */
  cpuPer1k: number | null;
  /** Mean cores the target used while measured. */
  cores: number | null;
  /** req/s of this row over the same target with 1 worker. */
  scaling: number | null;
  otherCores: number;
}

export interface WorkerScalingResult {
  title: string;
  rounds: number;
  seconds: number;
  cores: number;
  notes: string[];
  rows: S7Row[];
}

interface Target {
  name: string;
  kind: 'jumpgate' | 'nginx';
  workers: number;
  url: string;
  args: string[];
  proc: Proc;
}

function skipped(kind: 'jumpgate' | 'nginx', workers: number, reason: string): S7Row {
  return {
    target: `${kind}, ${workers} worker${workers > 1 ? 's' : ''}`,
    kind,
    workers,
    skipped: reason,
    throughput: 0,
    spreadPct: 0,
    latencyMs: null,
    errors: 0,
    cpuPer1k: null,
    cores: null,
    scaling: null,
    otherCores: 0,
  };
}

export async function runWorkerScaling(o: { quick: boolean; log?: (line: string) => void }): Promise<WorkerScalingResult> {
  const log = o.log ?? (() => undefined);
  const rounds = o.quick ? 1 : 2;
  const seconds = o.quick ? 0.5 : 5;
  const warmup = o.quick ? '200ms' : '1s';
  const sims = await Promise.all([startSimProc('s7-a'), startSimProc('s7-b')]);
  const stops: (() => Promise<void>)[] = sims.map((s) => () => s.stop());
  const targets: Target[] = [];
  const rows = new Map<string, S7Row>();
  const order: string[] = [];
  try {
    const nodes = sims.map((s, i) => ({ id: `node-${i}`, url: s.url }));
    for (const workers of [1, 2]) {
      const gw = await startGatewayProc(nodes, TOKEN, GATEWAY_EXTRA, ['--workers', String(workers)]);
      stops.unshift(() => gw.stop());
      const name = `jumpgate, rpc.workers ${workers}`;
      order.push(name);
      targets.push({ name, kind: 'jumpgate', workers, url: gw.url, args: ['--token', TOKEN], proc: gw });
    }
    const missing = await peerMissing('nginx');
    for (const workers of [1, 2]) {
      const name = `nginx, worker_processes ${workers}`;
      order.push(name);
      if (missing !== null) {
        rows.set(name, { ...skipped('nginx', workers, missing), target: name });
        continue;
      }
      try {
        const peer = await startNginx(
          sims.map((s) => s.url),
          { workers },
        );
        stops.unshift(peer.stop);
        targets.push({ name, kind: 'nginx', workers, url: peer.url, args: [], proc: peer });
      } catch (e) {
        rows.set(name, { ...skipped('nginx', workers, `failed to start: ${(e as Error).message.split('\n')[0]}`), target: name });
      }
    }
    // Each gateway's hot path compiled before round 1 (bench/README.md "Setup"); nginx has nothing to warm.
    if (!o.quick)
      for (const t of targets) if (t.kind === 'jumpgate') await generate(['--url', t.url, ...LOAD, ...t.args, '--duration', '2s', '--warmup', '0s']);
    const measured = new Map<string, { r: HttpLoadResult; cpuS: number; other: number }[]>(targets.map((t) => [t.name, []]));
    for (let round = 1; round <= rounds; round++) {
      for (const t of targets) {
        const ours0 = t.proc.cpuSeconds() + sims.reduce((a, s) => a + s.cpuSeconds(), 0) + selfCpuSeconds();
        const busy0 = machineBusySeconds();
        const w0 = performance.now();
        const cpu0 = t.proc.cpuSeconds();
        const r = await generate(['--url', t.url, ...LOAD, ...t.args, '--duration', `${seconds}s`, '--warmup', warmup]);
        const cpuS = t.proc.cpuSeconds() - cpu0;
        const ours = t.proc.cpuSeconds() + sims.reduce((a, s) => a + s.cpuSeconds(), 0) + selfCpuSeconds() - ours0 + r.clientCpuS;
        const other = Math.max(0, machineBusySeconds() - busy0 - ours) / ((performance.now() - w0) / 1000);
        measured.get(t.name)!.push({ r, cpuS, other });
        log(
          `  s7 round ${round} ${t.name}: ${Math.round(r.throughput).toLocaleString('en-US')} req/s, CPU ${((cpuS / Math.max(1, r.allAnswered)) * 1000).toFixed(3)} s / 1k`,
        );
      }
    }
    for (const t of targets) {
      const ms = measured.get(t.name)!;
      const tp = ms.map((m) => m.r.throughput);
      const mean = tp.reduce((a, b) => a + b, 0) / tp.length;
      const h = new LatencyHistogram({ digits: 3 });
      for (const m of ms) h.add(LatencyHistogram.decode(m.r.histogram));
      const cpu = ms.reduce((a, m) => a + m.cpuS, 0);
      const all = ms.reduce((a, m) => a + m.r.allAnswered, 0);
      // The generator's warm-up is in both the CPU and the requests; its wall time is not in elapsedS.
      const wall = ms.reduce((a, m) => a + m.r.elapsedS + parseFloat(warmup) / (warmup.endsWith('ms') ? 1000 : 1), 0);
      rows.set(t.name, {
        target: t.name,
        kind: t.kind,
        workers: t.workers,
        skipped: null,
        throughput: mean,
        spreadPct: tp.length > 1 ? ((Math.max(...tp) - Math.min(...tp)) / mean) * 100 : 0,
        latencyMs: latencyMs(
          h.summary(),
          ms.reduce((a, m) => a + m.r.latencyMs.mean * 1000 * m.r.latencyMs.count, 0),
        ),
        errors: ms.reduce((a, m) => a + m.r.errors, 0),
        cpuPer1k: all > 0 ? (cpu / all) * 1000 : null,
        cores: wall > 0 ? cpu / wall : null,
        scaling: null,
        otherCores: ms.reduce((a, m) => a + m.other, 0) / ms.length,
      });
    }
    for (const row of rows.values()) {
      const one = [...rows.values()].find((r) => r.kind === row.kind && r.workers === 1);
      if (row.skipped === null && one !== undefined && one.skipped === null && one.throughput > 0) row.scaling = row.throughput / one.throughput;
    }
  } finally {
    for (const stop of stops) await stop();
  }
  const cores = cpus().length;
  return {
    title: 'S7: single getSlot, closed loop, 50 connections, 1 and 2 data-plane workers',
    rounds,
    seconds,
    cores,
    notes: [
      'jumpgate: rpc.workers N (CLI --workers N), offload.threads 0 as in S1; nginx: the template with worker_processes N; the same two simulated nodes behind all four',
      'CPU s / 1k req: the target process’s user+system time from /proc/PID/stat (all its threads: workers, control plane, V8 helpers; nginx: master and workers) over the run, warm-up included, per 1,000 requests answered; cores: that CPU over the wall time',
      'scaling: req/s with 2 workers over req/s with 1, same target',
    ],
    rows: order.map((n) => rows.get(n)!),
  };
}

const f2 = (v: number | null): string =>
  v === null || !Number.isFinite(v) ? '–' : v < 10 ? v.toFixed(2) : v < 100 ? v.toFixed(1) : Math.round(v).toLocaleString('en-US');

/** What the figures say about more cores: the note under the table. */
function model(r: WorkerScalingResult): string[] {
  const out: string[] = [];
  const other = Math.max(0, ...r.rows.map((x) => x.otherCores));
  out.push(
    `${r.cores} cores are shared by the target, the load generator (one Node process, which in S1 is itself the limit) and the two node processes: a second worker can only take CPU from them, so the 1 → 2 factor here measures how much spare CPU there is, not how the data plane scales. A factor near 1 with more cores used (the cores column) is the second thread competing for the same two cores.`,
  );
  for (const kind of ['jumpgate', 'nginx'] as const) {
    const rows = r.rows.filter((x) => x.kind === kind && x.skipped === null && x.cpuPer1k !== null);
    if (rows.length === 0) continue;
    const best = Math.min(...rows.map((x) => x.cpuPer1k!));
    const perCore = 1000 / best;
    out.push(
      `${kind} model for ${SCALE_TO_CORES} cores: ${(best * 1000).toFixed(1)} µs of CPU per request → ~${Math.round(perCore).toLocaleString('en-US')} req/s per fully used core; with ${SCALE_TO_CORES} workers on ${SCALE_TO_CORES} cores of their own (generator and nodes elsewhere) and linear scaling, ~${Math.round((perCore * SCALE_TO_CORES) / 1000).toLocaleString('en-US')}k req/s. An upper bound: the kernel's loopback and the memory bus are shared, and the per-request cost grows when fewer requests share a wake-up.`,
    );
  }
  if (other >= 0.15) out.push(`other processes on the machine used up to ${other.toFixed(2)} cores on average during a row: figures disturbed`);
  return out;
}

export function workerScalingTable(r: WorkerScalingResult): string {
  const out = [
    `**${r.title}** (${r.rounds} round${r.rounds > 1 ? 's' : ''} × ${r.seconds} s per target, alternating)`,
    '',
    '| target | req/s | spread | p50 ms | p99 ms | max ms | errors | CPU s / 1k req | cores used | scaling 1 → 2 |',
    '|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
  ];
  for (const row of r.rows) {
    if (row.skipped !== null) {
      out.push(`| ${row.target} | skipped: ${row.skipped} |${' |'.repeat(8)}`);
      continue;
    }
    const l = row.latencyMs!;
    out.push(
      `| ${row.target} | ${Math.round(row.throughput).toLocaleString('en-US')} | ${r.rounds > 1 ? `±${(row.spreadPct / 2).toFixed(0)}%` : '–'} | ${f2(l.p50)} | ${f2(l.p99)} | ${f2(l.max)} | ${row.errors} | ${row.cpuPer1k === null ? '-' : row.cpuPer1k.toFixed(3)} | ${f2(row.cores)} | ${row.workers === 1 ? '1 (base)' : row.scaling === null ? '–' : `${row.scaling.toFixed(2)}×`} |`,
    );
  }
  out.push('', ...[...r.notes, ...model(r)].map((n) => `- ${n}`));
  return out.join('\n');
}
