// Isolation: does someone watching the console slow the RPC traffic down? A client sends
// getSlot at a steady 1,000 req/s (open loop, so a stall is charged to every request due
// during it) through a gateway with the default layout (`rpc.workers: 1`, console on, SQLite
// store), once alone and once beside a "console viewer" that refreshes the RPC Analytics page
// every second, as the page does, over a stack holding 24 h of usage. The same again with
// `rpc.workers: 0` (the data plane inline on the control plane's loop) shows what the worker
// buys (README "Architecture").

import { request } from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { hashPassword } from '../src/accounts/password.js';
import { LatencyHistogram } from '../src/metrics/histogram.js';
import { openStore } from '../src/store/open.js';
import type { UsageRow } from '../src/store/types.js';
import type { HttpLoadResult, LatencyMs } from '../src/tools/loadgen/http-load.js';
import { latencyMs } from '../src/tools/loadgen/http-load.js';
import { generate } from './load.js';
import { freePort, machineBusySeconds, selfCpuSeconds, startGatewayProc, startSimProc, waitForPort, type GatewayProc } from './procs.js';

/** What the workers must hold with the viewer on, over the run without it. */
export const ISOLATION_TARGET = { p99Ms: 2, maxMs: 20 } as const;
const RATE = 1000;
const EMAIL = 'viewer@bench.example';
const PASSWORD = 'bench viewer password';
/** Methods seeded per minute: a stack that calls a handful of methods all day. */
const METHODS = ['getSlot', 'getBalance', 'getAccountInfo', 'getLatestBlockhash', 'sendTransaction', 'getMultipleAccounts'];

export interface IsolationRow {
  target: string;
  workers: number;
  viewer: boolean;
  throughput: number;
  latencyMs: LatencyMs;
  /** This row's p99 and max minus the same gateway's without the viewer. */
  addedP99Ms: number | null;
  addedMaxMs: number | null;
  errors: number;
  errorKinds: Record<string, number>;
  /** Analytics refreshes answered during the row's runs, and how long they took. */
  refreshes: number;
  refreshP50Ms: number | null;
  refreshMaxMs: number | null;
  /** CPU the rest of the machine used meanwhile, in cores. */
  otherCores: number;
  histogram: string;
}

export interface IsolationResult {
  title: string;
  rate: number;
  rounds: number;
  seconds: number;
  usageRows: number;
  notes: string[];
  rows: IsolationRow[];
}

/** One seeded account: a stack with 24 h of per-minute usage, and the token the load uses. */
async function seedStore(path: string): Promise<{ token: string; stackId: string; rows: number }> {
  const store = await openStore(`sqlite://${path}`);
  try {
    const account = await store.createAccount(EMAIL, await hashPassword(PASSWORD));
    const stack = await store.createStack(account.id, 'bench', null);
    const { token, record } = await store.createToken(account.id, stack.id, 'load');
    // A few latency shapes, encoded once: the analytics page decodes one per row either way.
    const shapes = [0, 1, 2, 3].map((k) => {
      const h = new LatencyHistogram({ digits: 3 });
      for (let i = 0; i < 200; i++) h.record(200 + ((i * 37 + k * 101) % 5000));
      return h.encode();
    });
    const now = Math.floor(Date.now() / 60_000) * 60_000;
    const rows: UsageRow[] = [];
    for (let m = 0; m < 24 * 60; m++) {
      METHODS.forEach((method, i) => {
        const calls = 50 + ((m * 7 + i * 13) % 200);
        rows.push({
          tokenId: record.id,
          method,
          minute: now - m * 60_000,
          calls,
          errors: m % 17 === 0 ? 1 : 0,
          bytesIn: calls * 80,
          bytesOut: calls * 300,
          histogram: shapes[(m + i) % shapes.length]!,
        });
      });
    }
    for (let i = 0; i < rows.length; i += 1000) await store.addUsage(rows.slice(i, i + 1000));
    return { token, stackId: stack.id, rows: rows.length };
  } finally {
    await store.close();
  }
}

function http(
  base: string,
  method: string,
  path: string,
  cookie: string | null,
  body?: string,
): Promise<{ status: number; text: string; cookie: string | null }> {
  return new Promise((resolve, reject) => {
    const u = new URL(path, base);
    const headers: Record<string, string> = {};
    if (cookie !== null) headers.cookie = cookie;
    if (body !== undefined) {
      headers['content-type'] = 'application/json';
      headers['content-length'] = String(Buffer.byteLength(body));
    }
    const req = request({ host: u.hostname, port: u.port, path: u.pathname + u.search, method, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const set = [res.headers['set-cookie'] ?? []].flat()[0];
        resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8'), cookie: set === undefined ? cookie : set.split(';')[0]! });
      });
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(body);
  });
}

/**
 * A logged-in browser tab on the RPC Analytics page: every second (never two at once, as the
 * page's poll) the 24 h analytics of the stack, and its token list every 30 s.
 */
class ConsoleViewer {
  readonly durationsMs: number[] = [];
  private timer: NodeJS.Timeout | null = null;
  private inflight: Promise<void> | null = null;
  private tokensAt = 0;
  private failure: Error | null = null;

  private constructor(
    private readonly base: string,
    private readonly stackPath: string,
    private readonly cookie: string,
  ) {}

  static async login(base: string, stackId: string): Promise<ConsoleViewer> {
    const r = await http(base, 'POST', '/api/v1/login', null, JSON.stringify({ email: EMAIL, password: PASSWORD }));
    if (r.status !== 200 || r.cookie === null) throw new Error(`console login: ${r.status} ${r.text.slice(0, 200)}`);
    return new ConsoleViewer(base, `/api/v1/stacks/${stackId}`, r.cookie);
  }

  start(): void {
    this.durationsMs.length = 0;
    this.tick();
    this.timer = setInterval(() => this.tick(), 1000);
  }

  /**
   * Stops refreshing once the refresh under way is answered (a short run may hold only that
   * one); throws when a refresh failed, since the row would not mean anything.
   */
  async stop(): Promise<void> {
    if (this.timer !== null) clearInterval(this.timer);
    this.timer = null;
    await this.inflight;
    if (this.failure !== null) throw this.failure;
  }

  private tick(): void {
    if (this.inflight !== null) return;
    this.inflight = this.refresh().finally(() => (this.inflight = null));
  }

  private async refresh(): Promise<void> {
    const t0 = performance.now();
    try {
      if (Date.now() - this.tokensAt >= 30_000) {
        this.tokensAt = Date.now();
        await this.get(`${this.stackPath}/tokens`);
      }
      const a = JSON.parse(await this.get(`${this.stackPath}/analytics?window=24h`)) as { methods?: unknown[] };
      if (!Array.isArray(a.methods) || a.methods.length !== METHODS.length) throw new Error(`analytics answered ${JSON.stringify(a).slice(0, 200)}`);
      this.durationsMs.push(performance.now() - t0);
    } catch (e) {
      this.failure ??= e as Error;
    }
  }

  private async get(path: string): Promise<string> {
    const r = await http(this.base, 'GET', path, this.cookie);
    if (r.status !== 200) throw new Error(`console GET ${path}: ${r.status} ${r.text.slice(0, 200)}`);
    return r.text;
  }
}

function quantile(xs: number[], q: number): number | null {
  if (xs.length === 0) return null;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(q * s.length))]!;
}

export async function runIsolation(o: { quick: boolean; log?: (line: string) => void }): Promise<IsolationResult> {
  const log = o.log ?? (() => undefined);
  const rounds = o.quick ? 1 : 2;
  const seconds = o.quick ? 1 : 10;
  const dir = mkdtempSync(join(tmpdir(), 'jumpgate-bench-isolation-'));
  const sims = await Promise.all([startSimProc('iso-a'), startSimProc('iso-b')]);
  const rows: IsolationRow[] = [];
  let usageRows = 0;
  try {
    const nodes = sims.map((s, i) => ({ id: `node-${i}`, url: s.url }));
    for (const workers of [1, 0]) {
      // A fresh store per gateway, so the second does not find the first one's traffic.
      const db = join(dir, `w${workers}.db`);
      const seeded = await seedStore(db);
      usageRows = seeded.rows;
      const consolePort = await freePort();
      const extra = [`console: { host: 127.0.0.1, port: ${consolePort} }`, `store: { url: 'sqlite://${db}' }`].join('\n');
      const gw: GatewayProc = await startGatewayProc(nodes, 'bench-static-token-0123456789', extra, ['--workers', String(workers)]);
      try {
        // The RPC port can be served before the console listens.
        await waitForPort(gw.child, consolePort, 'console');
        const viewer = await ConsoleViewer.login(`http://127.0.0.1:${consolePort}`, seeded.stackId);
        const load = ['--url', gw.url, '--token', seeded.token, '--rate', String(RATE), '--connections', '50'];
        // One unrecorded run: the gateway's hot path compiled before round 1 (bench/README.md "Setup").
        if (!o.quick) await generate([...load, '--duration', '2s', '--warmup', '0s']);
        const runs = new Map<boolean, { results: HttpLoadResult[]; refreshMs: number[]; other: number[] }>([
          [false, { results: [], refreshMs: [], other: [] }],
          [true, { results: [], refreshMs: [], other: [] }],
        ]);
        for (let round = 1; round <= rounds; round++) {
          for (const withViewer of [false, true]) {
            const ours0 = gw.cpuSeconds() + sims.reduce((a, s) => a + s.cpuSeconds(), 0) + selfCpuSeconds();
            const busy0 = machineBusySeconds();
            const w0 = performance.now();
            if (withViewer) viewer.start();
            let r: HttpLoadResult;
            try {
              r = await generate([...load, '--duration', `${seconds}s`, '--warmup', o.quick ? '200ms' : '1s']);
            } finally {
              if (withViewer) await viewer.stop();
            }
            const ours = gw.cpuSeconds() + sims.reduce((a, s) => a + s.cpuSeconds(), 0) + selfCpuSeconds() - ours0 + r.clientCpuS;
            const run = runs.get(withViewer)!;
            run.results.push(r);
            if (withViewer) run.refreshMs.push(...viewer.durationsMs);
            run.other.push(Math.max(0, machineBusySeconds() - busy0 - ours) / ((performance.now() - w0) / 1000));
            log(
              `  isolation workers ${workers} round ${round} ${withViewer ? 'viewer' : 'alone'}: p99 ${r.latencyMs.p99.toFixed(2)} ms, max ${r.latencyMs.max.toFixed(2)} ms, errors ${r.errors}`,
            );
          }
        }
        const base: IsolationRow[] = [];
        for (const [withViewer, run] of runs) {
          const h = new LatencyHistogram({ digits: 3 });
          for (const r of run.results) h.add(LatencyHistogram.decode(r.histogram));
          const kinds: Record<string, number> = {};
          for (const r of run.results) for (const [k, v] of Object.entries(r.errorKinds)) kinds[k] = (kinds[k] ?? 0) + v;
          const l = latencyMs(
            h.summary(),
            run.results.reduce((a, r) => a + r.latencyMs.mean * 1000 * r.latencyMs.count, 0),
          );
          const alone = base[0];
          base.push({
            target: `jumpgate, rpc.workers ${workers}${workers === 0 ? ' (inline)' : ''}`,
            workers,
            viewer: withViewer,
            throughput: run.results.reduce((a, r) => a + r.throughput, 0) / run.results.length,
            latencyMs: l,
            addedP99Ms: alone === undefined ? null : l.p99 - alone.latencyMs.p99,
            addedMaxMs: alone === undefined ? null : l.max - alone.latencyMs.max,
            errors: run.results.reduce((a, r) => a + r.errors, 0),
            errorKinds: kinds,
            refreshes: run.refreshMs.length,
            refreshP50Ms: quantile(run.refreshMs, 0.5),
            refreshMaxMs: run.refreshMs.length === 0 ? null : Math.max(...run.refreshMs),
            otherCores: run.other.reduce((a, b) => a + b, 0) / run.other.length,
            histogram: h.encode(),
          });
        }
        rows.push(...base);
      } finally {
        await gw.stop();
      }
    }
  } finally {
    for (const s of sims) await s.stop();
    rmSync(dir, { recursive: true, force: true });
  }
  return {
    title: `Isolation: getSlot at ${RATE.toLocaleString('en-US')} req/s (open loop) with and without a console viewer refreshing RPC Analytics (24 h) every second`,
    rate: RATE,
    rounds,
    seconds,
    usageRows,
    notes: [
      `the viewer logs in to the console's JSON API and GETs /api/v1/stacks/:id/analytics?window=24h every second (the page's poll, never two at once; its token list every 30 s), over ${usageRows.toLocaleString('en-US')} per-minute usage rows with latency histograms (${METHODS.length} methods × 24 h), seeded through the store's addUsage before the gateway starts`,
      'latency from each request’s intended send time (coordinated omission corrected); added = this row minus the same gateway without the viewer',
      `target for the workers: added p99 ≤ ${ISOLATION_TARGET.p99Ms} ms and added max ≤ ${ISOLATION_TARGET.maxMs} ms; rpc.workers 0 runs the data plane on the control plane's loop and is the contrast`,
      'default config otherwise: SQLite store (a file), console on, two simulated nodes in their own processes, generator in a child process, all on the same cores',
    ],
    rows,
  };
}

const f2 = (v: number | null): string =>
  v === null || !Number.isFinite(v) ? '–' : v < 10 ? v.toFixed(2) : v < 100 ? v.toFixed(1) : Math.round(v).toLocaleString('en-US');
const signed = (v: number | null): string => (v === null ? '–' : (v >= 0 ? '+' : '−') + f2(Math.abs(v)));

export function isolationTable(r: IsolationResult): string {
  const out = [
    `**${r.title}** (${r.rounds} round${r.rounds > 1 ? 's' : ''} × ${r.seconds} s per row, alternating)`,
    '',
    '| gateway | console viewer | req/s | p50 ms | p99 ms | p99.9 ms | max ms | added p99 | added max | within target | errors | analytics refreshes | refresh p50 / max ms |',
    '|---|---|---:|---:|---:|---:|---:|---:|---:|---|---:|---:|---:|',
  ];
  for (const row of r.rows) {
    const l = row.latencyMs;
    const met =
      row.addedP99Ms === null || row.addedMaxMs === null
        ? '–'
        : row.addedP99Ms <= ISOLATION_TARGET.p99Ms && row.addedMaxMs <= ISOLATION_TARGET.maxMs
          ? 'yes'
          : 'no';
    const errors =
      row.errors === 0
        ? '0'
        : `${row.errors} (${Object.entries(row.errorKinds)
            .map(([k, v]) => `${k} ×${v}`)
            .join(', ')})`;
    out.push(
      `| ${row.target} | ${row.viewer ? 'every 1 s' : 'none'} | ${Math.round(row.throughput).toLocaleString('en-US')} | ${f2(l.p50)} | ${f2(l.p99)} | ${f2(l.p999)} | ${f2(l.max)} | ${signed(row.addedP99Ms)} | ${signed(row.addedMaxMs)} | ${met} | ${errors} | ${row.viewer ? row.refreshes : '–'} | ${row.viewer ? `${f2(row.refreshP50Ms)} / ${f2(row.refreshMaxMs)}` : '–'} |`,
    );
  }
  const notes = [...r.notes];
  const other = Math.max(...r.rows.map((x) => x.otherCores));
  if (other >= 0.15) notes.push(`other processes on the machine used up to ${other.toFixed(2)} cores on average during a row: figures disturbed`);
  out.push('', ...notes.map((n) => `- ${n}`));
  return out.join('\n');
}
