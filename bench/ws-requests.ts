// WebSocket requests: calls that are not subscriptions (getSlot, getBalance) sent over client
// WebSockets at a fixed rate, answered on the socket (docs/internals-json.md "The WebSocket
// frame path"). N clients share the rate, open loop (a slow answer does not slow the next
// send). Reported per target: the gateway's CPU per 1,000 answered requests (the process and
// its threads, from /proc, over the measured window only), answer delay p50/p99, errors. The
// same calls over HTTP keep-alive through the same gateway are the reference for what the
// request core costs without the WebSocket around it. The simulated node answers only
// subscriptions on its own WebSocket, so the floor row is the node over HTTP: its own CPU
// and delay for the same calls. `--baseline DIR` adds another build's gateway, measured in
// the same run, so a change to the frame path is compared under the same load.

import { Pool } from 'undici';
import { connectWs, type RawWebSocket } from '../src/tools/loadgen/ws-client.js';
import { TOKEN } from './http-scenarios.js';
import { startGatewayProc, startSimProc, type Proc } from './procs.js';

const BALANCE_OF = '"4Nd1mBQtrMJVYVfKf2PJy9NZUZdTAsp7D4xWLs4gDB4T"';

export interface WsRequestsRow {
  target: string;
  transport: 'ws' | 'http';
  /** Whose CPU the row shows. */
  process: 'proxy' | 'node';
  sent: number;
  answered: number;
  /** Answers that were JSON-RPC errors, plus calls never answered. */
  errors: number;
  /** CPU milliseconds per 1,000 answered requests. */
  cpuMsPer1k: number;
  p50Ms: number;
  p99Ms: number;
}

export interface WsRequestsResult {
  id: 'wsreq';
  clients: number;
  rate: number;
  seconds: number;
  targets: WsRequestsRow[];
}

function percentile(sorted: number[], p: number): number {
  return sorted.length === 0 ? NaN : sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))]!;
}

function call(id: number): string {
  return id % 2 === 0 ? `{"jsonrpc":"2.0","id":${id},"method":"getSlot"}` : `{"jsonrpc":"2.0","id":${id},"method":"getBalance","params":[${BALANCE_OF}]}`;
}

/** The numeric id of an answer (the last `"id":` member: answers end with it or carry it once). */
function answerId(frame: Buffer): number {
  const at = frame.lastIndexOf('"id":');
  if (at < 0) return -1;
  let v = 0;
  let i = at + 5;
  while (frame[i] === 0x20) i++;
  const s = i;
  for (; i < frame.length; i++) {
    const d = frame[i]! - 0x30;
    if (d < 0 || d > 9) break;
    v = v * 10 + d;
  }
  return i === s ? -1 : v;
}

interface Tally {
  sentAt: Float64Array;
  delays: number[];
  answered: number;
  errors: number;
}

function tally(max: number): Tally {
  return { sentAt: new Float64Array(max), delays: [], answered: 0, errors: 0 };
}

function onAnswer(t: Tally, body: Buffer, at: number): void {
  const id = answerId(body);
  if (id < 0 || id >= t.sentAt.length || t.sentAt[id] === 0) return;
  t.delays.push(at - t.sentAt[id]!);
  t.sentAt[id] = 0;
  t.answered++;
  if (body.includes('"error":')) t.errors++;
}

/** Sends `rate` calls per second for `seconds` through `send`, in 10 ms ticks; resolves once all are answered or 2 s after the last. */
async function drive(t: Tally, rate: number, seconds: number, send: (id: number) => void): Promise<number> {
  const total = Math.floor(rate * seconds);
  const t0 = performance.now();
  let sent = 0;
  await new Promise<void>((resolve) => {
    const tick = setInterval(() => {
      const due = Math.min(total, Math.floor(((performance.now() - t0) / 1000) * rate));
      while (sent < due) {
        const id = ++sent;
        t.sentAt[id] = performance.now();
        send(id);
      }
      if (sent >= total) {
        clearInterval(tick);
        resolve();
      }
    }, 10);
  });
  for (let waited = 0; waited < 2000 && t.answered < sent; waited += 10) await new Promise((r) => setTimeout(r, 10));
  return sent;
}

function row(target: string, transport: 'ws' | 'http', process: 'proxy' | 'node', t: Tally, sent: number, cpuS: number): WsRequestsRow {
  const d = t.delays.sort((a, b) => a - b);
  return {
    target,
    transport,
    process,
    sent,
    answered: t.answered,
    errors: t.errors + (sent - t.answered),
    cpuMsPer1k: t.answered === 0 ? NaN : (cpuS * 1e6) / t.answered,
    p50Ms: percentile(d, 0.5),
    p99Ms: percentile(d, 0.99),
  };
}

async function overWs(target: string, url: string, proc: Proc, clients: number, rate: number, seconds: number): Promise<WsRequestsRow> {
  const u = new URL(url.replace(/^http/, 'ws'));
  u.pathname = `/api-token/${TOKEN}/`;
  const t = tally(Math.floor(rate * (seconds + 1)) + 2);
  const sockets: RawWebSocket[] = [];
  try {
    for (let i = 0; i < clients; i++) {
      sockets.push(await connectWs(u, [], { message: (body, at) => onAnswer(t, body, at), close: () => undefined }, 5000));
    }
    // Warm-up: a second at the rate, not counted.
    await drive(t, rate, 1, (id) => sockets[id % clients]!.send(call(id)));
    const warm = tally(t.sentAt.length);
    Object.assign(t, { delays: warm.delays, answered: 0, errors: 0, sentAt: warm.sentAt });
    const cpu0 = proc.cpuSeconds();
    const sent = await drive(t, rate, seconds, (id) => sockets[id % clients]!.send(call(id)));
    return row(target, 'ws', 'proxy', t, sent, proc.cpuSeconds() - cpu0);
  } finally {
    for (const s of sockets) s.destroy();
  }
}

async function overHttp(target: string, url: string, path: string, process: 'proxy' | 'node', proc: Proc, clients: number, rate: number, seconds: number): Promise<WsRequestsRow> {
  const pool = new Pool(url, { connections: clients, pipelining: 1 });
  const t = tally(Math.floor(rate * (seconds + 1)) + 2);
  const send = (id: number): void => {
    pool
      .request({ method: 'POST', path, headers: { 'content-type': 'application/json' }, body: call(id) })
      .then(async (r) => onAnswer(t, Buffer.from(await r.body.arrayBuffer()), performance.now()))
      .catch(() => undefined);
  };
  try {
    await drive(t, rate, 1, send);
    const warm = tally(t.sentAt.length);
    Object.assign(t, { delays: warm.delays, answered: 0, errors: 0, sentAt: warm.sentAt });
    const cpu0 = proc.cpuSeconds();
    const sent = await drive(t, rate, seconds, send);
    return row(target, 'http', process, t, sent, proc.cpuSeconds() - cpu0);
  } finally {
    await pool.close();
  }
}

export async function runWsRequests(o: { quick: boolean; clients?: number; rate?: number; seconds?: number; baselineCli?: string; log?: (line: string) => void }): Promise<WsRequestsResult> {
  const clients = o.clients ?? (o.quick ? 10 : 50);
  const rate = o.rate ?? (o.quick ? 500 : 2000);
  const seconds = o.seconds ?? (o.quick ? 2 : 10);
  const log = o.log ?? (() => undefined);
  const sim = await startSimProc('wsreq');
  const nodes = [{ id: 'wsreq', url: sim.url }];
  const extra = `workers: { threads: 0 }\nws: { maxConnectionsPerToken: ${clients + 10} }`;
  const gateways: { name: string; proc: Proc & { url: string } }[] = [];
  const targets: WsRequestsRow[] = [];
  try {
    gateways.push({ name: 'jumpgate', proc: await startGatewayProc(nodes, TOKEN, extra) });
    if (o.baselineCli !== undefined) gateways.push({ name: 'baseline', proc: await startGatewayProc(nodes, TOKEN, extra, [], o.baselineCli) });
    for (const g of gateways) {
      log(`  ${g.name} over WebSocket: ${clients} clients, ${rate}/s, ${seconds} s`);
      targets.push(await overWs(`${g.name}, WebSocket`, g.proc.url, g.proc, clients, rate, seconds));
    }
    for (const g of gateways) {
      log(`  ${g.name} over HTTP`);
      targets.push(await overHttp(`${g.name}, HTTP`, g.proc.url, `/api-token/${TOKEN}`, 'proxy', g.proc, clients, rate, seconds));
    }
    log('  direct to the node over HTTP');
    targets.push(await overHttp('direct to the node, HTTP', sim.url, '/', 'node', sim, clients, rate, seconds));
  } finally {
    await Promise.all([...gateways.map((g) => g.proc.stop()), sim.stop()]);
  }
  return { id: 'wsreq', clients, rate, seconds, targets };
}

export function wsRequestsTable(r: WsRequestsResult): string {
  const f = (n: number, d = 2): string => (Number.isFinite(n) ? n.toFixed(d) : '–');
  const lines = [
    `WebSocket requests: getSlot and getBalance at ${r.rate}/s over ${r.clients} connections, ${r.seconds} s`,
    '',
    '| target | CPU of | answered | errors | CPU ms / 1k requests | p50 ms | p99 ms |',
    '|---|---|---:|---:|---:|---:|---:|',
  ];
  for (const t of r.targets) lines.push(`| ${t.target} | ${t.process} | ${t.answered} | ${t.errors} | ${f(t.cpuMsPer1k, 1)} | ${f(t.p50Ms)} | ${f(t.p99Ms)} |`);
  return lines.join('\n');
}
