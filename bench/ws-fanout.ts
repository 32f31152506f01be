// WebSocket fan-out: N clients subscribe to slotSubscribe through jumpgate. Reports the
// upstream subscriptions the gateway holds per node (admin API), the gateway's RSS per idle
// subscribed connection, and notification delay against a client subscribed to the nodes
// directly (the node's own delay is the floor). Idle RSS is also taken with the console on
// and a SQLite file store, as an operator runs the gateway (the other gateways here have the
// console off and the store in memory). With `redundancy` 2 every subscription is held on both
// nodes (`ws.redundancy`, docs/reliability.md "Redundant WebSocket subscriptions"): the delay
// is then over the first of the two nodes, and a client seeing a slot twice or backwards counts.

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { WebSocket } from 'undici';
import { freePort, startGatewayProc, startSimProc } from './procs.js';

const TOKEN = 'bench-token-0123456789abcdef';
const ADMIN = 'bench-admin-token-0123456789';

function percentile(sorted: number[], p: number): number {
  return sorted.length === 0 ? NaN : sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))]!;
}

function subscribe(url: string, onSlot: (slot: number, at: number) => void): Promise<WebSocket> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url);
    ws.addEventListener('open', () => {
      ws.send('{"jsonrpc":"2.0","id":1,"method":"slotSubscribe"}');
      resolve(ws);
    });
    ws.addEventListener('error', () => reject(new Error('websocket failed: ' + url)));
    ws.addEventListener('message', (ev) => {
      const at = performance.now();
      const text = ev.data as string;
      const i = text.indexOf('"slot":');
      if (i > 0 && text.includes('slotNotification')) onSlot(Number.parseInt(text.slice(i + 7), 10), at);
    });
  });
}

export interface WsFanoutResult {
  clients: number;
  /** `ws.redundancy` of the gateway. */
  redundancy: number;
  upstreamSubscriptions: Record<string, number>;
  rssIdleMb: number;
  /** Idle RSS of a gateway with the console on and a SQLite file store (same nodes, same wait). */
  rssIdleConsoleMb: number;
  rssConnectedMb: number;
  kbPerConnection: number;
  notifications: number;
  /** Notifications a client got for a slot not above its last one (0 expected). */
  repeated: number;
  delayP50Ms: number;
  delayP99Ms: number;
  delayMaxMs: number;
}

/** RSS one second after start (as `rssIdleMb`) of a gateway with the console and a SQLite file store. */
async function rssIdleWithConsole(nodes: { id: string; url: string }[]): Promise<number> {
  const dir = mkdtempSync(join(tmpdir(), 'jumpgate-bench-store-'));
  try {
    const gw = await startGatewayProc(
      nodes,
      TOKEN,
      `console: { host: 127.0.0.1, port: ${await freePort()} }\nstore: { url: 'sqlite://${join(dir, 'jumpgate.db')}' }`,
    );
    try {
      await new Promise((r) => setTimeout(r, 1000));
      return gw.rssBytes();
    } finally {
      await gw.stop();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

export async function runWsFanout(clients: number, seconds: number, redundancy = 1): Promise<WsFanoutResult> {
  const sims = await Promise.all([startSimProc('ws-a', ['--slot-ms', '100']), startSimProc('ws-b', ['--slot-ms', '100'])]);
  const rssIdleConsole = await rssIdleWithConsole(sims.map((s, i) => ({ id: `ws-${i}`, url: s.url }))).catch(async (err: unknown) => {
    await Promise.all(sims.map((s) => s.stop()));
    throw err;
  });
  const adminPort = await freePort();
  const gw = await startGatewayProc(
    sims.map((s, i) => ({ id: `ws-${i}`, url: s.url })),
    TOKEN,
    `admin: { host: 127.0.0.1, port: ${adminPort}, token: ${ADMIN} }\nws: { maxConnectionsPerToken: ${clients + 10}, redundancy: ${redundancy} }`,
  );
  const sockets: WebSocket[] = [];
  try {
    await new Promise((r) => setTimeout(r, 1000));
    const rssIdle = gw.rssBytes();
    // Reference: the nodes' own notifications, straight from each node.
    const firstSeen = new Map<number, number>();
    const ref = (slot: number, at: number): void => {
      const prev = firstSeen.get(slot);
      if (prev === undefined || at < prev) firstSeen.set(slot, at);
    };
    for (const s of sims) sockets.push(await subscribe(s.url.replace('http', 'ws'), ref));
    const arrivals: [number, number][] = [];
    let repeated = 0;
    let measuring = false;
    const wsUrl = gw.url.replace('http', 'ws') + `/api-token/${TOKEN}/`;
    for (let i = 0; i < clients; i += 100) {
      const part = await Promise.all(
        Array.from({ length: Math.min(100, clients - i) }, () => {
          let last = -1;
          return subscribe(wsUrl, (slot, at) => {
            if (slot <= last) repeated++;
            last = slot;
            if (measuring) arrivals.push([slot, at]);
          });
        }),
      );
      sockets.push(...part);
    }
    await new Promise((r) => setTimeout(r, 1000));
    const rssConnected = gw.rssBytes();
    measuring = true;
    await new Promise((r) => setTimeout(r, seconds * 1000));
    measuring = false;
    const stats = (await (await fetch(`http://127.0.0.1:${adminPort}/admin/ws`, { headers: { authorization: `Bearer ${ADMIN}` } })).json()) as {
      upstreamSubscriptions: Record<string, number>;
    };
    const delays = arrivals
      .map(([slot, at]) => at - (firstSeen.get(slot) ?? NaN))
      .filter((d) => Number.isFinite(d))
      .sort((a, b) => a - b);
    return {
      clients,
      redundancy,
      upstreamSubscriptions: stats.upstreamSubscriptions,
      rssIdleMb: rssIdle / 2 ** 20,
      rssIdleConsoleMb: rssIdleConsole / 2 ** 20,
      rssConnectedMb: rssConnected / 2 ** 20,
      kbPerConnection: (rssConnected - rssIdle) / 1024 / clients,
      notifications: arrivals.length,
      repeated,
      delayP50Ms: percentile(delays, 0.5),
      delayP99Ms: percentile(delays, 0.99),
      delayMaxMs: delays.length > 0 ? delays[delays.length - 1]! : NaN,
    };
  } finally {
    for (const s of sockets) s.close();
    await gw.stop();
    await Promise.all(sims.map((s) => s.stop()));
  }
}

export function wsFanoutTable(rows: WsFanoutResult[]): string {
  return [
    '| clients | ws.redundancy | upstream slot subscriptions | gateway RSS idle MB | idle with console + SQLite store MB | RSS with clients MB | KB per subscribed connection | notifications | repeated | delay over the first node p50 / p99 / max ms |',
    '|---:|---:|---|---:|---:|---:|---:|---:|---:|---|',
    ...rows.map(
      (r) =>
        `| ${r.clients} | ${r.redundancy} | ${JSON.stringify(r.upstreamSubscriptions)} | ${r.rssIdleMb.toFixed(0)} | ${r.rssIdleConsoleMb.toFixed(0)} | ${r.rssConnectedMb.toFixed(0)} | ${r.kbPerConnection.toFixed(1)} | ${r.notifications} | ${r.repeated} | ${r.delayP50Ms.toFixed(2)} / ${r.delayP99Ms.toFixed(2)} / ${r.delayMaxMs.toFixed(2)} |`,
    ),
  ].join('\n');
}
