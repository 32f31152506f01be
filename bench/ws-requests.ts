// WebSocket requests: calls that are not subscriptions (getSlot, getBalance) sent over client
// WebSockets at a fixed rate, answered on the socket (docs/internals-json.md "The WebSocket
// frame path"). N clients share the rate, open loop (a slow answer does not slow the next
// send). Reported per target: the gateway's CPU per 1,000 answered requests (the process and
// its threads, from /proc, over the measured rounds only), answer delay p50/p99, errors. The
// same calls over HTTP keep-alive through the same gateway are the reference for what the
// request core costs without the WebSocket around it. The simulated node answers only
// subscriptions on its own WebSocket, so the floor row is the node over HTTP: its own CPU
// and delay for the same calls. `--baseline DIR` adds another build's gateway, measured in
// turns with this one (short rounds, order flipped each round), so a change to the frame
// path is compared under the same load.

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

/** One target being measured: how it is sent to, and what it got so far. */
interface Target {
  name: string;
  transport: 'ws' | 'http';
  process: 'proxy' | 'node';
  proc: Proc;
  send: (id: number) => void;
  close: () => Promise<void>;
  /** Send time per id (0 once answered); ids rise across rounds. */
  sentAt: Float64Array;
  nextId: number;
  delays: number[];
  answered: number;
  errors: number;
  /** Counted only while measuring (not during the warm-up). */
  measuring: boolean;
  sent: number;
  cpuSeconds: number;
}

function onAnswer(t: Target, body: Buffer, at: number): void {
  const id = answerId(body);
  if (id < 0 || id >= t.sentAt.length || t.sentAt[id] === 0) return;
  const d = at - t.sentAt[id]!;
  t.sentAt[id] = 0;
  if (!t.measuring) return;
  t.delays.push(d);
  t.answered++;
  if (body.includes('"error":')) t.errors++;
}

/** Sends `rate` calls per second for `seconds` in 10 ms ticks; resolves once all are answered or 2 s after the last. */
async function drive(t: Target, rate: number, seconds: number): Promise<void> {
  const total = Math.floor(rate * seconds);
  const first = t.nextId;
  const t0 = performance.now();
  let sent = 0;
  await new Promise<void>((resolve) => {
    const tick = setInterval(() => {
      const due = Math.min(total, Math.floor(((performance.now() - t0) / 1000) * rate));
      while (sent < due) {
        const id = t.nextId++;
        sent++;
        t.sentAt[id] = performance.now();
        t.send(id);
      }
      if (sent >= total) {
        clearInterval(tick);
        resolve();
      }
    }, 10);
  });
  const open = (): boolean => {
    for (let id = first; id < t.nextId; id++) if (t.sentAt[id] !== 0) return true;
    return false;
  };
  for (let waited = 0; waited < 2000 && open(); waited += 10) await new Promise((r) => setTimeout(r, 10));
  if (t.measuring) t.sent += sent;
}

/** One round at the rate on `t`, its CPU added to the target's. */
async function round(t: Target, rate: number, seconds: number): Promise<void> {
  const cpu0 = t.proc.cpuSeconds();
  await drive(t, rate, seconds);
  t.cpuSeconds += t.proc.cpuSeconds() - cpu0;
}

function target(name: string, transport: 'ws' | 'http', process: 'proxy' | 'node', proc: Proc, ids: number): Target {
  return {
    name,
    transport,
    process,
    proc,
    send: () => undefined,
    close: async () => undefined,
    sentAt: new Float64Array(ids),
    nextId: 1,
    delays: [],
    answered: 0,
    errors: 0,
    measuring: false,
    sent: 0,
    cpuSeconds: 0,
  };
}

async function overWs(t: Target, url: string, clients: number): Promise<Target> {
  const u = new URL(url.replace(/^http/, 'ws'));
  u.pathname = `/api-token/${TOKEN}/`;
  const sockets: RawWebSocket[] = [];
  for (let i = 0; i < clients; i++) sockets.push(await connectWs(u, [], { message: (body, at) => onAnswer(t, body, at), close: () => undefined }, 5000));
  t.send = (id) => sockets[id % clients]!.send(call(id));
  t.close = async () => sockets.forEach((s) => s.destroy());
  return t;
}

function overHttp(t: Target, url: string, path: string, clients: number): Target {
  const pool = new Pool(url, { connections: clients, pipelining: 1 });
  t.send = (id) => {
    pool
      .request({ method: 'POST', path, headers: { 'content-type': 'application/json' }, body: call(id) })
      .then(async (r) => onAnswer(t, Buffer.from(await r.body.arrayBuffer()), performance.now()))
      .catch(() => undefined);
  };
  t.close = () => pool.close();
  return t;
}

function row(t: Target): WsRequestsRow {
  const d = t.delays.sort((a, b) => a - b);
  return {
    target: t.name,
    transport: t.transport,
    process: t.process,
    sent: t.sent,
    answered: t.answered,
    errors: t.errors + (t.sent - t.answered),
    cpuMsPer1k: t.answered === 0 ? NaN : (t.cpuSeconds * 1e6) / t.answered,
    p50Ms: percentile(d, 0.5),
    p99Ms: percentile(d, 0.99),
  };
}

/**
 * Measures targets that are compared with each other (one build against another) in turns:
 * a warm-up second each, then `rounds` rounds of seconds/rounds each, the order flipped every
 * round, so that load from elsewhere on the machine falls on all of them alike.
 */
async function inTurns(group: Target[], rate: number, seconds: number, rounds: number): Promise<WsRequestsRow[]> {
  try {
    for (const t of group) await drive(t, rate, 1);
    for (const t of group) t.measuring = true;
    for (let r = 0; r < rounds; r++) {
      const order = r % 2 === 0 ? group : [...group].reverse();
      for (const t of order) await round(t, rate, seconds / rounds);
    }
    return group.map(row);
  } finally {
    for (const t of group) await t.close();
  }
}

export async function runWsRequests(o: {
  quick: boolean;
  clients?: number;
  rate?: number;
  seconds?: number;
  rounds?: number;
  baselineCli?: string;
  log?: (line: string) => void;
}): Promise<WsRequestsResult> {
  const clients = o.clients ?? (o.quick ? 10 : 50);
  const rate = o.rate ?? (o.quick ? 500 : 2000);
  const seconds = o.seconds ?? (o.quick ? 2 : 20);
  const rounds = o.rounds ?? (o.quick ? 2 : 10);
  const log = o.log ?? (() => undefined);
  const ids = Math.ceil(rate * (seconds + 1)) + rounds + 2;
  const sim = await startSimProc('wsreq');
  const nodes = [{ id: 'wsreq', url: sim.url }];
  const extra = `offload: { threads: 0 }\nws: { maxConnectionsPerToken: ${clients + 10} }`;
  const gateways: { name: string; proc: Proc & { url: string } }[] = [];
  const targets: WsRequestsRow[] = [];
  try {
    gateways.push({ name: 'jumpgate', proc: await startGatewayProc(nodes, TOKEN, extra) });
    if (o.baselineCli !== undefined) gateways.push({ name: 'baseline', proc: await startGatewayProc(nodes, TOKEN, extra, [], o.baselineCli) });
    log(`  over WebSocket: ${gateways.map((g) => g.name).join(', ')} in turns; ${clients} clients, ${rate}/s, ${seconds} s each`);
    const ws = await Promise.all(gateways.map((g) => overWs(target(`${g.name}, WebSocket`, 'ws', 'proxy', g.proc, ids), g.proc.url, clients)));
    targets.push(...(await inTurns(ws, rate, seconds, rounds)));
    log('  over HTTP');
    const http = gateways.map((g) => overHttp(target(`${g.name}, HTTP`, 'http', 'proxy', g.proc, ids), g.proc.url, `/api-token/${TOKEN}`, clients));
    targets.push(...(await inTurns(http, rate, seconds, rounds)));
    log('  direct to the node over HTTP');
    targets.push(...(await inTurns([overHttp(target('direct to the node, HTTP', 'http', 'node', sim, ids), sim.url, '/', clients)], rate, seconds, rounds)));
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
