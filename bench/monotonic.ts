// Monotonic reads across failover (docs/routing.md "Monotonic reads"): 10,000 affinity keys call
// getSlot and getBalance (an RpcResponse: context.slot) in a closed loop while their nodes fail
// in turn: 20 failovers, each kill (a TCP proxy in front of the node refuses and resets),
// stall (the node accepts and never answers) or drain (admin), of n0, n1, n2 in rotation; the
// nodes sit at different slots (n0 at the tip, n1 10 slots behind, n2 40), so a key moving to
// a node behind, or back to one, can be given a lower slot. A regression is an
// answer whose slot is lower than one the same key already got. Run once with
// affinity.monotonic false (the behaviour before it existed) and once true.
// Run: npm run bench -- monotonic

import { DEFAULTS } from '../src/config/defaults.js';
import { resolveConfig } from '../src/config/load.js';
import { startGateway, type Gateway } from '../src/lifecycle/start-gateway.js';
import { silentLogger } from '../src/log.js';
import { startSim, type SimNode } from '../src/tools/sim/node.js';
import { startTcpProxy, type TcpProxy } from '../test/helpers/tcp-proxy.js';

const TOKEN = 'bench-token-monotonic-0123456789';
const KEYS = 10_000;
const FAILOVERS = 20;
const CLIENTS = 32;
const KINDS = ['kill', 'stall', 'drain'] as const;
const LAGS = [0, 10, 40];

export interface MonotonicRow {
  /** affinity.monotonic; null when this build has no such setting (the behaviour before it). */
  monotonic: boolean | null;
  requests: number;
  /** Answers whose slot was lower than one the same key had already been given. */
  regressions: number;
  keysRegressed: number;
  /** The largest step back, in slots. */
  worstSlots: number;
  refused7505: number;
  otherErrors: number;
  /** Error answers by code ('fetch' for a failed request). */
  errorCodes: Record<string, number>;
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
  /** The same over answers with a result (what a served key waited). */
  okP50Ms: number;
  okP99Ms: number;
}

export interface MonotonicResult {
  keys: number;
  failovers: number;
  seconds: number;
  rows: MonotonicRow[];
}

function pct(sorted: Float64Array, p: number): number {
  return sorted.length === 0 ? 0 : sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

/** The slot an answer carries: getSlot's result, or an RpcResponse's context.slot; -1 for none. */
function slotOf(json: { result?: unknown }): number {
  const r = json.result;
  if (typeof r === 'number') return r;
  if (typeof r === 'object' && r !== null) {
    const c = (r as { context?: { slot?: unknown } }).context;
    if (c !== undefined && typeof c.slot === 'number') return c.slot;
  }
  return -1;
}

async function runOnce(monotonic: boolean | null, phaseMs: { down: number; up: number }, log: (s: string) => void): Promise<MonotonicRow> {
  const sims: SimNode[] = await Promise.all(LAGS.map((lag, i) => startSim({ id: `n${i}`, port: 0, lag })));
  const proxies: TcpProxy[] = await Promise.all(sims.map((s) => startTcpProxy(s.port)));
  const affinity: Record<string, unknown> = { keyRate: 1_000_000, keyBurst: 1_000_000 };
  if (monotonic !== null) affinity.monotonic = monotonic;
  const config = resolveConfig({
    rpc: { host: '127.0.0.1', port: 0, wsPort: 0, workers: 0 },
    console: { port: 0 },
    admin: { port: 0 },
    store: { url: 'sqlite://:memory:' },
    nodes: proxies.map((p, i) => ({ id: `n${i}`, url: p.url, weight: 1 })),
    tokens: [{ token: TOKEN, stack: 'bench' }],
    limits: { upstreamTimeoutMs: 400 },
    health: { intervalMs: 200, timeoutMs: 300 },
    affinity,
    offload: { threads: 0 },
    log: { level: 'silent' },
  });
  const gw: Gateway = await startGateway(config, { log: silentLogger() });
  const url = `${gw.url}/api-token/${TOKEN}`;
  const seen = new Float64Array(KEYS).fill(-1);
  const regressedKeys = new Uint8Array(KEYS);
  const latencies: number[] = [];
  const okLatencies: number[] = [];
  const row: MonotonicRow = {
    monotonic,
    requests: 0,
    regressions: 0,
    keysRegressed: 0,
    worstSlots: 0,
    refused7505: 0,
    otherErrors: 0,
    errorCodes: {},
    p50Ms: 0,
    p99Ms: 0,
    maxMs: 0,
    okP50Ms: 0,
    okP99Ms: 0,
  };
  let running = true;
  const client = async (c: number): Promise<void> => {
    let n = c;
    while (running) {
      // Random keys: each is asked again and again, at random times around the failovers.
      const k = Math.floor(Math.random() * KEYS);
      const method = n++ % 2 === 0 ? 'getSlot' : 'getBalance';
      const body =
        method === 'getSlot'
          ? '{"jsonrpc":"2.0","id":1,"method":"getSlot"}'
          : '{"jsonrpc":"2.0","id":1,"method":"getBalance","params":["11111111111111111111111111111111"]}';
      const t0 = performance.now();
      try {
        const res = await fetch(url, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'x-service-affinity': 'key', 'x-service-affinity-key': 'key-' + k },
          body,
        });
        const json = (await res.json()) as { result?: unknown; error?: { code?: number } };
        latencies.push(performance.now() - t0);
        row.requests++;
        if (json.error !== undefined) {
          const code = String(json.error.code);
          row.errorCodes[code] = (row.errorCodes[code] ?? 0) + 1;
          if (json.error.code === 7505) row.refused7505++;
          else row.otherErrors++;
          continue;
        }
        okLatencies.push(latencies[latencies.length - 1]!);
        const slot = slotOf(json);
        if (slot < 0) continue;
        if (slot < seen[k]!) {
          row.regressions++;
          row.worstSlots = Math.max(row.worstSlots, seen[k]! - slot);
          if (regressedKeys[k] === 0) {
            regressedKeys[k] = 1;
            row.keysRegressed++;
          }
        } else seen[k] = slot;
      } catch {
        row.otherErrors++;
        row.errorCodes.fetch = (row.errorCodes.fetch ?? 0) + 1;
      }
    }
  };
  const clients = Array.from({ length: CLIENTS }, (_, c) => client(c));
  try {
    for (let i = 0; i < FAILOVERS; i++) {
      const target = i % 3;
      const kind = KINDS[Math.floor(i / 3) % 3]!;
      await new Promise((r) => setTimeout(r, phaseMs.up));
      if (kind === 'kill') await proxies[target]!.stop();
      else if (kind === 'stall') sims[target]!.set({ stallRate: 1 });
      else gw.pool.setDrained(`n${target}`, true);
      await new Promise((r) => setTimeout(r, phaseMs.down));
      if (kind === 'kill') await proxies[target]!.start();
      else if (kind === 'stall') sims[target]!.set({ stallRate: 0 });
      else gw.pool.setDrained(`n${target}`, false);
      log(
        `[monotonic ${String(monotonic)}] failover ${i + 1}/${FAILOVERS} (${kind} n${target}): ${row.requests} requests, ${row.regressions} regressions, ${row.refused7505} × 7505`,
      );
    }
  } finally {
    running = false;
    await Promise.all(clients);
    await gw.close();
    await Promise.all(proxies.map((p) => p.close()));
    await Promise.all(sims.map((s) => s.close()));
  }
  const sorted = Float64Array.from(latencies).sort();
  row.p50Ms = pct(sorted, 50);
  row.p99Ms = pct(sorted, 99);
  row.maxMs = sorted.length === 0 ? 0 : sorted[sorted.length - 1]!;
  const ok = Float64Array.from(okLatencies).sort();
  row.okP50Ms = pct(ok, 50);
  row.okP99Ms = pct(ok, 99);
  return row;
}

export async function runMonotonic(opts: { quick: boolean; log: (s: string) => void }): Promise<MonotonicResult> {
  const phase = opts.quick ? { down: 300, up: 100 } : { down: 1000, up: 500 };
  const t0 = performance.now();
  const known = 'monotonic' in DEFAULTS.affinity;
  const rows = [await runOnce(known ? false : null, phase, opts.log)];
  if (known) rows.push(await runOnce(true, phase, opts.log));
  return { keys: KEYS, failovers: FAILOVERS, seconds: (performance.now() - t0) / 1000, rows };
}

/** Errors other than 7505, by code: `0` or e.g. `83 (7503: 80, 7504: 3)`. */
function otherErrors(x: MonotonicRow): string {
  const codes = Object.entries(x.errorCodes ?? {}).filter(([c]) => c !== '7505');
  return codes.length === 0 ? String(x.otherErrors) : `${x.otherErrors.toLocaleString('en-US')} (${codes.map(([c, n]) => `${c}: ${n}`).join(', ')})`;
}

export function monotonicTable(r: MonotonicResult): string {
  const f = (x: number): string => x.toFixed(x < 10 ? 2 : 1);
  return [
    `${r.keys.toLocaleString('en-US')} affinity keys, ${r.failovers} failovers (kill / stall / drain of n0, n1, n2 in turn; n0 at the tip, n1 10 slots behind, n2 40), ${CLIENTS} clients in a closed loop`,
    '',
    '| affinity.monotonic | requests | regressions | keys regressed | worst step back (slots) | 7505 | other errors | p50 ms | p99 ms | max ms | answered: p50 ms | answered: p99 ms |',
    '|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
    ...r.rows.map(
      (x) =>
        `| ${x.monotonic === null ? 'before (no setting)' : String(x.monotonic)} | ${x.requests.toLocaleString('en-US')} | ${x.regressions.toLocaleString('en-US')} | ${x.keysRegressed.toLocaleString('en-US')} | ${x.worstSlots} | ${x.refused7505.toLocaleString('en-US')} | ${otherErrors(x)} | ${f(x.p50Ms)} | ${f(x.p99Ms)} | ${f(x.maxMs)} | ${f(x.okP50Ms)} | ${f(x.okP99Ms)} |`,
    ),
  ].join('\n');
}
