// Markdown tables for the scenario results: printed after a run, and (docTables) the
// block that goes into docs/benchmarks.md, from a results file: `npm run bench -- --tables`.

import { broadcastTable, coalesceTable, hedgeTable, type BroadcastResult, type CoalesceResult, type HedgeResult } from './calls.js';
import { cpus, loadavg, release } from 'node:os';
import { readFileSync } from 'node:fs';
import type { ConsoleBenchResult } from './console.js';
import { floorTable, type FloorResult } from './floor.js';
import { freshnessTable, type FreshnessResult } from './freshness.js';
import { grpcTable, type GrpcBenchResult } from './grpc.js';
import type { HttpScenarioResult, TargetRow } from './http-scenarios.js';
import { hasWrk } from './load.js';
import { isolationTable, type IsolationResult } from './isolation.js';
import { landingTable, type LandingBenchResult } from './landing.js';
import { monotonicTable, type MonotonicResult } from './monotonic.js';
import { peerVersion } from './peers.js';
import { ONE_NODE, type WsScenarioResult } from './ws-fanout-peers.js';
import { workerScalingTable, type WorkerScalingResult } from './worker-scaling.js';

export interface Setup {
  date: string;
  cpu: string;
  cores: number;
  kernel: string;
  node: string;
  nginx: string | null;
  haproxy: string | null;
  wrk: boolean;
  /** 1-minute load average when the run started (each scenario also checks for other CPU use). */
  loadAvgAtStart: number;
}

export async function setup(): Promise<Setup> {
  let cpu = cpus()[0]?.model ?? 'unknown';
  try {
    cpu = /model name\s*:\s*(.+)/.exec(readFileSync('/proc/cpuinfo', 'utf8'))?.[1]?.trim() ?? cpu;
  } catch {
    // not Linux
  }
  return {
    date: new Date().toISOString(),
    cpu,
    cores: cpus().length,
    kernel: release(),
    node: process.version,
    nginx: await peerVersion('nginx'),
    haproxy: await peerVersion('haproxy'),
    wrk: await hasWrk(),
    loadAvgAtStart: loadavg()[0]!,
  };
}

export function setupText(s: Setup): string {
  return [
    `Setup: ${s.cores} cores (${s.cpu}), Linux ${s.kernel}, Node ${s.node}; nginx ${s.nginx ?? 'not installed'}, HAProxy ${s.haproxy ?? 'not installed'}; ${s.date.slice(0, 10)}.`,
    'Everything runs on the same cores, unpinned: two simulated nodes (one process each), the target under test,',
    'and the load generator (a child process per measurement). Compare within one run only.',
  ]
    .filter((l) => l !== '')
    .join('\n');
}

const n0 = (v: number): string => Math.round(v).toLocaleString('en-US');
const f2 = (v: number | null | undefined): string =>
  v === null || v === undefined || !Number.isFinite(v) ? '-' : v < 10 ? v.toFixed(2) : v < 100 ? v.toFixed(1) : n0(v);
const signed = (v: number): string => (v >= 0 ? '+' : '−') + f2(Math.abs(v));
const cpu = (r: TargetRow): string => (r.cpuPer1k === null ? '-' : r.cpuPer1k.toFixed(3) + (r.process === 'node' ? ' (nodes)' : ''));
const rss = (r: TargetRow): string => (r.peakRssMb === null ? '-' : n0(r.peakRssMb) + (r.process === 'node' ? ' (2 nodes)' : ''));
const errs = (r: TargetRow): string =>
  r.errors === 0
    ? '0'
    : `${n0(r.errors)} (${Object.entries(r.errorKinds)
        .map(([k, v]) => `${k} ×${v}`)
        .join(', ')})`;

function targetName(r: TargetRow): string {
  return r.process === 'node' ? `${r.target} (the limit)` : r.target;
}

function skippedLine(r: TargetRow, cols: number): string {
  return `| ${r.target} | skipped: ${r.skipped}${' |'.repeat(cols - 1)}`;
}

function notesOf(rows: { target: string; notes: string[]; skipped: string | null }[], extra: string[]): string {
  const lines = [...extra];
  for (const r of rows) if (r.skipped === null && r.notes.length > 0) lines.push(`${r.target}: ${r.notes.join('; ')}`);
  return lines.map((l) => `- ${l}`).join('\n');
}

export function httpTable(s: HttpScenarioResult): string {
  const rounds = `${s.rounds} round${s.rounds > 1 ? 's' : ''} × ${s.seconds} s per target, alternating`;
  const out: string[] = [`**${s.title}** (${rounds})`, ''];
  if (s.id === 's2') {
    out.push(
      '| target | req/s | p50 ms | p99 ms | p99.9 ms | added p50 | added p99 | added p99.9 | errors | CPU s / 1k req | peak RSS MB |',
      '|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
    );
    for (const r of s.targets) {
      if (r.skipped !== null) {
        out.push(skippedLine(r, 10));
        continue;
      }
      const l = r.latencyMs!;
      const a = r.addedMs;
      out.push(
        `| ${targetName(r)} | ${n0(r.throughput)} | ${f2(l.p50)} | ${f2(l.p99)} | ${f2(l.p999)} | ${a ? signed(a.p50) : '–'} | ${a ? signed(a.p99) : '–'} | ${a ? signed(a.p999) : '–'} | ${errs(r)} | ${cpu(r)} | ${rss(r)} |`,
      );
    }
  } else {
    const batch = s.callsPerRequest > 1;
    const big = s.id === 's5';
    const wrk = s.targets.some((r) => r.wrkRps !== null);
    const head = [
      'target',
      batch ? 'batches/s' : 'req/s',
      ...(batch ? ['calls/s'] : []),
      ...(big ? ['MB/s'] : []),
      'spread',
      'p50 ms',
      'p90 ms',
      'p99 ms',
      'p99.9 ms',
      'max ms',
      'errors',
      batch ? 'CPU s / 1k batches' : 'CPU s / 1k req',
      'peak RSS MB',
      ...(wrk ? ['wrk req/s'] : []),
    ];
    out.push(`| ${head.join(' | ')} |`, `|---|${'---:|'.repeat(head.length - 1)}`);
    for (const r of s.targets) {
      if (r.skipped !== null) {
        out.push(skippedLine(r, head.length - 1));
        continue;
      }
      const l = r.latencyMs!;
      const cells = [
        targetName(r),
        n0(r.throughput),
        ...(batch ? [n0(r.throughput * s.callsPerRequest)] : []),
        ...(big ? [f2(r.mbPerSec)] : []),
        s.rounds > 1 ? `±${(r.spreadPct / 2).toFixed(0)}%` : '–',
        f2(l.p50),
        f2(l.p90),
        f2(l.p99),
        f2(l.p999),
        f2(l.max),
        errs(r),
        cpu(r),
        rss(r),
        ...(wrk ? [r.wrkRps === null ? '-' : n0(r.wrkRps)] : []),
      ];
      out.push(`| ${cells.join(' | ')} |`);
    }
  }
  const extra = [...s.notes];
  if (s.otherCores >= 0.15) extra.push(`other processes on the machine used ${s.otherCores.toFixed(2)} cores on average while this ran: figures disturbed`);
  if (s.responseBytes !== null && (s.id === 's5' || s.id === 's4')) extra.push(`answer size ${n0(s.responseBytes)} bytes`);
  const notes = notesOf(s.targets, extra);
  if (notes !== '') out.push('', notes);
  return out.join('\n');
}

export function wsTable(s: WsScenarioResult): string {
  const out = [
    `**${s.title}**`,
    '',
    '| target | subscribed | failed | upstream subscriptions | upstream TCP conns | delay p50 ms | p90 | p99 | p99.9 | max | p99 over direct | p99 over one node | missing | RSS idle → with clients MB | peak RSS MB | CPU while streaming |',
    '|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
  ];
  for (const r of s.targets) {
    if (r.skipped !== null) {
      out.push(`| ${r.target} | skipped: ${r.skipped}${' |'.repeat(15)}`);
      continue;
    }
    const d = r.delayMs!;
    // Results written before the direct row existed have neither field.
    const nodes = r.process === 'node';
    const over = r.p99OverDirectMs ?? null;
    const overOne = r.p99OverOneNodeMs ?? null;
    const which = r.target === ONE_NODE ? ' (1 node)' : ' (2 nodes)';
    const failed =
      r.failed === 0
        ? '0'
        : `${n0(r.failed)} (${Object.entries(r.failKinds)
            .map(([k, v]) => `${k} ×${v}`)
            .join(', ')})`;
    const by = r.upstreamByNode === null ? '' : ` ${JSON.stringify(r.upstreamByNode)}`;
    out.push(
      `| ${nodes ? `${r.target} (the limit)` : r.target} | ${n0(r.subscribed)} | ${failed} | ${r.upstreamSubscriptions === null ? '-' : n0(r.upstreamSubscriptions)}${by} | ${r.upstreamConnections === null ? '-' : n0(r.upstreamConnections)} | ${f2(d.p50)} | ${f2(d.p90)} | ${f2(d.p99)} | ${f2(d.p999)} | ${f2(d.max)} | ${over === null ? '–' : signed(over)} | ${overOne === null ? '–' : signed(overOne)} | ${n0(r.missing)} | ${f2(r.rssIdleMb)} → ${f2(r.rssConnectedMb)}${nodes ? which : ''} | ${f2(r.peakRssMb)} | ${r.cpuPct === null ? '-' : r.cpuPct.toFixed(0) + '%' + (nodes ? ' (nodes)' : '')} |`,
    );
  }
  const extra = [...s.notes];
  // Results written before the check existed have no otherCores.
  if ((s.otherCores ?? 0) >= 0.15) {
    const each = s.targets.filter((r) => r.otherCores !== null).map((r) => `${r.target} ${r.otherCores!.toFixed(2)}`);
    extra.push(`other processes on the machine used ${s.otherCores.toFixed(2)} cores on average while this ran (${each.join(', ')}): figures disturbed`);
  }
  const notes = notesOf(s.targets, extra);
  if (notes !== '') out.push('', notes);
  return out.join('\n');
}

export function consoleTable(r: ConsoleBenchResult): string {
  const ms = (t: { medianMs: number; maxMs: number; runs: number } | null): string => (t === null ? '- | -' : `${f2(t.medianMs)} | ${f2(t.maxMs)}`);
  const runs = [...new Set(r.pages.flatMap((p) => [p.store.runs, ...(p.http === null ? [] : [p.http.runs])]))].sort((a, b) => a - b);
  const out = [
    `**Console: a stack's pages with ${r.tokens} tokens × ${r.methods} methods of history** (${r.minuteHours} h of minutes, ${r.hourDays} days of hours; SQLite file, ${runs.join('–')} calls per page)`,
    '',
    '| page | store median ms | store max ms | HTTP median ms | HTTP max ms |',
    '|---|---:|---:|---:|---:|',
  ];
  for (const p of r.pages) out.push(`| ${p.page} | ${ms(p.store)} | ${p.httpError === undefined ? ms(p.http) : `failed: ${p.httpError} | -`} |`);
  out.push(
    '',
    `- seeded through the store's API (addUsage, then compactUsage): ${n0(r.rowsWritten)} usage rows in ${f2(r.seedSeconds)} s, ${n0(r.dbMb)} MB on disk`,
    ...(r.flush === undefined
      ? []
      : [
          `- writing: an addUsage of ${n0(r.flush.rows)} rows into the current minute (a 5 s flush) took ${f2(r.flush.cpuMs)} ms of CPU, ${f2(r.flush.wallMs)} ms (mean of ${r.flush.calls})`,
        ]),
    `- HTTP: GET /api/v1/stacks/:id/overview and /analytics?window=… with a session cookie, one at a time, each on a new connection, the JSON read whole; a page's calls stop after ${f2(r.capSeconds)} s`,
  );
  return out.join('\n');
}

/** The docs/benchmarks.md block: setup, then each S1–S7 table, the floor, the console and isolation present in `results`. */
export function docTables(results: Record<string, unknown>): string {
  const parts: string[] = [];
  const s = results.setup as Setup | undefined;
  if (s !== undefined) parts.push(setupText(s));
  for (const id of ['s1', 's2', 's3', 's4', 's5'] as const) {
    const r = results[id] as HttpScenarioResult | undefined;
    if (r?.targets !== undefined) parts.push(httpTable(r));
  }
  const ws = results.s6 as WsScenarioResult | undefined;
  if (ws?.targets !== undefined) parts.push(wsTable(ws));
  const floor = results.floor as FloorResult | undefined;
  if (floor?.rows !== undefined) parts.push(floorTable(floor));
  const consolePages = results.console as ConsoleBenchResult | undefined;
  if (consolePages?.pages !== undefined) parts.push(consoleTable(consolePages));
  const s7 = results.s7 as WorkerScalingResult | undefined;
  if (s7?.rows !== undefined) parts.push(workerScalingTable(s7));
  const isolation = results.isolation as IsolationResult | undefined;
  if (isolation?.rows !== undefined) parts.push(isolationTable(isolation));
  const hedge = results.hedge as HedgeResult | undefined;
  if (hedge?.rows !== undefined) parts.push(hedgeTable(hedge));
  const coalesce = results.coalesce as CoalesceResult | undefined;
  if (coalesce?.rows !== undefined) parts.push(coalesceTable(coalesce));
  const broadcast = results.broadcast as BroadcastResult | undefined;
  if (broadcast?.rows !== undefined) parts.push(broadcastTable(broadcast));
  const monotonic = results.monotonic as MonotonicResult | undefined;
  if (monotonic?.rows !== undefined) parts.push(monotonicTable(monotonic));
  const landing = results.landing as LandingBenchResult | undefined;
  if (landing?.paths !== undefined) parts.push(landingTable(landing));
  const freshness = results.freshness as FreshnessResult | undefined;
  if (freshness?.rows !== undefined) parts.push(freshnessTable(freshness));
  const grpc = results.grpc as GrpcBenchResult | undefined;
  // Results written before the floor was measured have none.
  if (grpc?.paths !== undefined && grpc.floor !== undefined) parts.push(grpcTable(grpc));
  return parts.join('\n\n');
}
