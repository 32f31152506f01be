// `console` scenario: the console's stack pages on a store with a full history. A file-backed
// SQLite store is seeded through the store's own API (createAccount, createStack, createToken,
// addUsage, compactUsage), the way the usage flush fills it: 10 tokens × 50 methods, each with
// 24 h of minutes and 30 days of hours before them (hours are written as one row at the start
// of the hour, then compaction keeps them as hours). Then each page's query is timed: the
// overview and the analytics windows (1 h, 24 h, 7 d, and 24 h for one token), on the store and
// through the console's HTTP API, logged in; and what a flush-sized write costs. Run: npm run
// bench -- console

import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { hashPassword } from '../src/accounts/password.js';
import { startConsole } from '../src/console/listener.js';
import { silentLogger } from '../src/log.js';
import { LatencyHistogram } from '../src/metrics/histogram.js';
import { openStore } from '../src/store/open.js';
import type { AnalyticsWindow, FullStore, UsageRow } from '../src/store/types.js';
import { rng } from '../src/tools/rng.js';
import { median } from './stats.js';

const MINUTE_MS = 60_000;
const HOUR_MS = 3_600_000;
const DAY_MS = 86_400_000;
const PASSWORD = 'bench password 1';

export interface ConsolePageTiming {
  page: string;
  /** Milliseconds per call, over `runs` calls. */
  store: { medianMs: number; maxMs: number; runs: number };
  http: { medianMs: number; maxMs: number; runs: number } | null;
  /** Why the HTTP calls failed, when they did. */
  httpError?: string;
}

export interface ConsoleBenchResult {
  tokens: number;
  methods: number;
  minuteHours: number;
  hourDays: number;
  /** UsageRows written through addUsage, and how long seeding took (compaction included). */
  rowsWritten: number;
  seedSeconds: number;
  dbMb: number;
  /**
   * What writing costs: addUsage calls of one row per token and method into the current minute
   * (rows that exist, as every 5 s flush after a minute's first), CPU and wall ms per call.
   * Absent from results written before it was measured.
   */
  flush?: { rows: number; calls: number; cpuMs: number; wallMs: number };
  /** A page stops being timed once its calls have taken this long (a slow store still finishes). */
  capSeconds: number;
  pages: ConsolePageTiming[];
}

export interface ConsoleBenchOptions {
  quick?: boolean;
  log?: (line: string) => void;
}

/** A few dozen latency histograms (2 significant digits, as the usage meter records) to reuse. */
function histogramPool(next: () => number): string[] {
  const out: string[] = [];
  for (let i = 0; i < 64; i++) {
    const h = new LatencyHistogram({ digits: 2, highestUs: 600_000_000 });
    // Log-normal around 2–20 ms, a few slow calls.
    for (let k = 0; k < 30; k++) h.record(Math.exp(7.5 + next() * 2.5 + (next() < 0.05 ? 2 : 0)), 1 + Math.floor(next() * 5));
    out.push(h.encode());
  }
  return out;
}

function usageRow(tokenId: string, method: string, minute: number, scale: number, next: () => number, pool: string[]): UsageRow {
  const calls = Math.max(1, Math.round(scale * (0.5 + next())));
  return {
    tokenId,
    method,
    minute,
    calls,
    errors: next() < 0.1 ? 1 + Math.floor(next() * 3) : 0,
    bytesIn: calls * 120,
    bytesOut: calls * 800,
    histogram: pool[Math.floor(next() * pool.length)]!,
  };
}

async function seed(store: FullStore, o: { tokens: number; methods: number; minuteHours: number; hourDays: number; now: number }, log: (l: string) => void) {
  const next = rng(7);
  const pool = histogramPool(next);
  const account = await store.createAccount('bench@example.com', await hashPassword(PASSWORD));
  const stack = await store.createStack(account.id, 'bench', null);
  const tokenIds: string[] = [];
  for (let i = 0; i < o.tokens; i++) tokenIds.push((await store.createToken(account.id, stack.id, `t${i}`)).record.id);
  const methods = Array.from({ length: o.methods }, (_, i) => `method_${String(i).padStart(2, '0')}`);
  const cutoff = Math.floor((o.now - o.minuteHours * HOUR_MS) / HOUR_MS) * HOUR_MS;
  let written = 0;
  const t0 = performance.now();
  // Hours first, oldest first: one row per token, method and hour, six hours per call.
  const firstHour = Math.floor((o.now - o.hourDays * DAY_MS) / HOUR_MS) * HOUR_MS;
  for (let h = firstHour; h < cutoff; h += 6 * HOUR_MS) {
    const rows: UsageRow[] = [];
    for (let x = h; x < Math.min(h + 6 * HOUR_MS, cutoff); x += HOUR_MS) {
      for (const t of tokenIds) for (const m of methods) rows.push(usageRow(t, m, x, 60, next, pool));
    }
    await store.addUsage(rows);
    written += rows.length;
  }
  log(`  hours written: ${written} rows in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
  // Then minutes up to now, an hour per call (what 720 five-second flushes would add).
  const lastMinute = Math.floor(o.now / MINUTE_MS) * MINUTE_MS;
  for (let h = cutoff; h <= lastMinute; h += HOUR_MS) {
    const rows: UsageRow[] = [];
    for (let x = h; x < h + HOUR_MS && x <= lastMinute; x += MINUTE_MS) {
      for (const t of tokenIds) for (const m of methods) rows.push(usageRow(t, m, x, 1, next, pool));
    }
    await store.addUsage(rows);
    written += rows.length;
    log(
      `  minutes to ${new Date(Math.min(h + HOUR_MS, lastMinute)).toISOString().slice(11, 16)}: ${written} rows, ${((performance.now() - t0) / 1000).toFixed(0)} s`,
    );
  }
  await store.compactUsage(o.now, 30);
  return { account, stack, tokenIds, methods, pool, written, seconds: (performance.now() - t0) / 1000 };
}

/** Times `calls` flush-sized addUsage calls into the current minute. */
async function timeFlushes(
  store: FullStore,
  tokenIds: string[],
  methods: string[],
  pool: string[],
  calls: number,
): Promise<NonNullable<ConsoleBenchResult['flush']>> {
  const next = rng(11);
  const minute = Math.floor(Date.now() / MINUTE_MS) * MINUTE_MS;
  const batches = Array.from({ length: calls }, () => tokenIds.flatMap((t) => methods.map((m) => usageRow(t, m, minute, 5, next, pool))));
  const c0 = process.cpuUsage();
  const t0 = performance.now();
  for (const b of batches) await store.addUsage(b);
  const cpu = process.cpuUsage(c0);
  return { rows: batches[0]!.length, calls, cpuMs: (cpu.user + cpu.system) / 1000 / calls, wallMs: (performance.now() - t0) / calls };
}

/** Times `fn` up to `runs` times, stopping once the calls have taken `capMs` together. */
async function time(fn: () => Promise<unknown>, runs: number, capMs: number): Promise<{ medianMs: number; maxMs: number; runs: number }> {
  const ms: number[] = [];
  let spent = 0;
  while (ms.length < runs && (ms.length === 0 || spent < capMs)) {
    const t0 = performance.now();
    await fn();
    const d = performance.now() - t0;
    ms.push(d);
    spent += d;
  }
  return { medianMs: median(ms), maxMs: Math.max(...ms), runs: ms.length };
}

/**
 * One HTTP exchange on a connection of its own: a page that blocks the process for seconds
 * (the store is synchronous SQLite) must not meet a kept-alive socket the server is closing.
 */
function exchange(
  url: string,
  method: string,
  headers: Record<string, string>,
  body?: string,
): Promise<{ status: number; cookie: string | null; text: string }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method, headers, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () =>
        resolve({ status: res.statusCode ?? 0, cookie: res.headers['set-cookie']?.[0]?.split(';')[0] ?? null, text: Buffer.concat(chunks).toString('utf8') }),
      );
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(body);
  });
}

async function login(base: string, email: string): Promise<string> {
  const body = JSON.stringify({ email, password: PASSWORD });
  const r = await exchange(`${base}/api/v1/login`, 'POST', { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)) }, body);
  if (r.status !== 200) throw new Error(`console login: ${r.status} ${r.text}`);
  if (r.cookie === null) throw new Error('console login: no session cookie');
  return r.cookie;
}

async function getJson(url: string, cookie: string): Promise<void> {
  const r = await exchange(url, 'GET', { cookie });
  if (r.status !== 200) throw new Error(`GET ${url}: ${r.status} ${r.text.slice(0, 200)}`);
  JSON.parse(r.text);
}

export async function runConsoleBench(opts: ConsoleBenchOptions = {}): Promise<ConsoleBenchResult> {
  const log = opts.log ?? (() => {});
  const quick = opts.quick === true;
  const shape = quick ? { tokens: 2, methods: 5, minuteHours: 24, hourDays: 3 } : { tokens: 10, methods: 50, minuteHours: 24, hourDays: 30 };
  const runs = quick ? 2 : 7;
  const capMs = quick ? 2_000 : 60_000;
  const dir = mkdtempSync(join(tmpdir(), 'jumpgate-bench-console-'));
  const file = join(dir, 'jg.db');
  const store = await openStore(`sqlite://${file}`);
  try {
    const now = Date.now();
    log(`seeding ${shape.tokens} tokens × ${shape.methods} methods: ${shape.minuteHours} h of minutes, ${shape.hourDays} days of hours`);
    const s = await seed(store, { ...shape, now }, log);
    const flush = await timeFlushes(store, s.tokenIds, s.methods, s.pool, quick ? 3 : 24);
    log(`  a flush of ${flush.rows} rows: ${flush.cpuMs.toFixed(1)} ms of CPU, ${flush.wallMs.toFixed(1)} ms`);
    let dbBytes = 0;
    for (const f of ['jg.db', 'jg.db-wal']) dbBytes += statSync(join(dir, f), { throwIfNoEntry: false })?.size ?? 0;
    const server = await startConsole({
      store,
      host: '127.0.0.1',
      port: 0,
      registration: 'closed',
      endpoints: { http: 'http://127.0.0.1:8899', ws: 'ws://127.0.0.1:8900' },
      log: silentLogger(),
    });
    try {
      const cookie = await login(server.url, 'bench@example.com');
      const api = `${server.url}/api/v1/stacks/${encodeURIComponent(s.stack.id)}`;
      const token = s.tokenIds[0]!;
      const pages: { page: string; store: () => Promise<unknown>; path: string }[] = [
        { page: 'overview', store: () => store.overview(s.account.id, s.stack.id, Date.now()), path: '/overview' },
        ...(['1h', '24h', '7d'] as AnalyticsWindow[]).map((w) => ({
          page: `analytics ${w}`,
          store: () => store.analytics(s.account.id, s.stack.id, w, Date.now()),
          path: `/analytics?window=${w}`,
        })),
        {
          page: 'analytics 24h, one token',
          store: () => store.analytics(s.account.id, s.stack.id, '24h', Date.now(), token),
          path: `/analytics?window=24h&token=${encodeURIComponent(token)}`,
        },
      ];
      const out: ConsolePageTiming[] = [];
      for (const p of pages) {
        const st = await time(p.store, runs, capMs);
        log(`  ${p.page}: store median ${st.medianMs.toFixed(1)} ms, max ${st.maxMs.toFixed(1)} ms (${st.runs} runs)`);
        try {
          const http = await time(() => getJson(api + p.path, cookie), runs, capMs);
          log(`  ${p.page}: HTTP median ${http.medianMs.toFixed(1)} ms, max ${http.maxMs.toFixed(1)} ms (${http.runs} runs)`);
          out.push({ page: p.page, store: st, http });
        } catch (e) {
          // A page slow enough to outlast a timeout somewhere on the way still has its store figures.
          const cause = (e as Error).cause;
          const why = `${(e as Error).message}${cause instanceof Error ? `: ${cause.message}` : ''}`;
          log(`  ${p.page}: HTTP failed: ${why}`);
          out.push({ page: p.page, store: st, http: null, httpError: why });
        }
      }
      return { ...shape, rowsWritten: s.written, seedSeconds: s.seconds, dbMb: dbBytes / 2 ** 20, flush, capSeconds: capMs / 1000, pages: out };
    } finally {
      await server.close();
    }
  } finally {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  }
}
