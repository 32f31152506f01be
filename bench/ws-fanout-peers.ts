// S6: WebSocket fan-out. N clients subscribe to slotSubscribe straight to the two simulated
// nodes (400 ms slots, as on Solana), then through jumpgate, nginx and HAProxy in front of
// them. Direct is the floor: the nodes' own fan-out and the clients' own time to read N
// frames, which every proxy's figures include too. It is measured twice: over the two nodes
// (two processes, half the clients each) and over one node serving every client (one process
// sending N frames, as a proxy's one thread does: the S6 target's "node's own" delay, since
// the kernel's per-socket send is most of a frame's cost). For each: notification delay (arrival −
// the earliest arrival of the same slot at any client or at a reference client subscribed
// straight to each node), the upstream subscriptions the proxy holds, its memory idle / with
// the clients / at peak, and its CPU while the notifications flow. The clients are spread
// over child processes so parsing thousands of frames does not queue behind one event loop.

import { readFileSync } from 'node:fs';
import type { LatencyMs } from '../src/tools/loadgen/http-load.js';
import { parseBenchArgs } from '../src/tools/loadgen/options.js';
import { runWsLoad, type WsLoadResult } from '../src/tools/loadgen/ws-load.js';
import { uwsLoad } from '../src/server/engine.js';
import { NODE_LISTENER, TOKEN } from './http-scenarios.js';
import { peerMissing, startPeer, type PeerName } from './peers.js';
import { bothNodes, freePort, machineBusySeconds, startGatewayProc, startSimProc, treeCpuSeconds, type Proc } from './procs.js';

const ADMIN = 'bench-admin-token-0123456789';
const DIRECT = 'direct to nodes';
export const ONE_NODE = 'direct to one node';
export const REDUNDANT = 'jumpgate, ws.redundancy 2';

export interface WsTargetRow {
  target: string;
  skipped: string | null;
  /** Whose CPU and memory the row shows: the two nodes (direct) or the proxy. */
  process: 'node' | 'proxy';
  notes: string[];
  clients: number;
  subscribed: number;
  failed: number;
  failKinds: Record<string, number>;
  closed: number;
  connectS: number;
  notifications: number;
  missing: number;
  delayMs: LatencyMs | null;
  overReferenceMs: LatencyMs | null;
  /** Delay p99 minus direct's (two nodes, half the clients each); null for the direct rows. */
  p99OverDirectMs: number | null;
  /**
   * Delay p99 minus one node's serving all the clients itself: what the proxy adds to a
   * node's own fan-out of the same clients, one thread each (the S6 target); null for direct rows.
   */
  p99OverOneNodeMs: number | null;
  /** Upstream subscriptions the proxy holds (jumpgate: admin API; peers: one per client connection). */
  upstreamSubscriptions: number | null;
  upstreamByNode: Record<string, number> | null;
  /** ESTABLISHED TCP connections from the proxy to the nodes, references excluded. */
  upstreamConnections: number | null;
  rssIdleMb: number | null;
  rssConnectedMb: number | null;
  peakRssMb: number | null;
  /** Share of one core the proxy used while notifications flowed. */
  cpuPct: number | null;
  /** Cores used meanwhile by processes other than the runner and what it started. */
  otherCores: number | null;
  histogram: string | null;
}

export interface WsScenarioResult {
  id: 's6';
  title: string;
  clients: number;
  procs: number;
  seconds: number;
  slotMs: number;
  /** Mean of the measured targets' otherCores. */
  otherCores: number;
  notes: string[];
  targets: WsTargetRow[];
}

/** ESTABLISHED client-side TCP connections to any of `ports` (from /proc/net/tcp{,6}). */
export function connectionsTo(ports: number[]): number {
  const want = new Set(ports.map((p) => p.toString(16).toUpperCase().padStart(4, '0')));
  let n = 0;
  for (const f of ['/proc/net/tcp', '/proc/net/tcp6']) {
    let text = '';
    try {
      text = readFileSync(f, 'utf8');
    } catch {
      continue;
    }
    for (const line of text.split('\n').slice(1)) {
      const cols = line.trim().split(/\s+/);
      if (cols.length < 4 || cols[3] !== '01') continue;
      const remotePort = cols[2]!.split(':')[1]!;
      if (want.has(remotePort)) n++;
    }
  }
  return n;
}

function skipped(target: string, reason: string, clients: number): WsTargetRow {
  return {
    target,
    skipped: reason,
    process: 'proxy',
    notes: [],
    clients,
    subscribed: 0,
    failed: 0,
    failKinds: {},
    closed: 0,
    connectS: 0,
    notifications: 0,
    missing: 0,
    delayMs: null,
    overReferenceMs: null,
    p99OverDirectMs: null,
    p99OverOneNodeMs: null,
    upstreamSubscriptions: null,
    upstreamByNode: null,
    upstreamConnections: null,
    rssIdleMb: null,
    rssConnectedMb: null,
    peakRssMb: null,
    cpuPct: null,
    otherCores: null,
    histogram: null,
  };
}

export async function runWsFanoutPeers(o: {
  quick: boolean;
  clients?: number;
  procs?: number;
  seconds?: number;
  log?: (line: string) => void;
  /** `--baseline DIR`'s CLI: another build's gateway measured after this one's. */
  baselineCli?: string | undefined;
}): Promise<WsScenarioResult> {
  const clients = o.clients ?? (o.quick ? 200 : 5000);
  const procs = o.procs ?? (o.quick ? 1 : 2);
  const seconds = o.seconds ?? (o.quick ? 0.5 : 10);
  const slotMs = 400;
  const log = o.log ?? (() => undefined);
  const sims = await Promise.all([startSimProc('s6-a', ['--slot-ms', String(slotMs)]), startSimProc('s6-b', ['--slot-ms', String(slotMs)])]);
  const simPorts = sims.map((s) => Number(new URL(s.url).port));
  const refs = sims.map((s) => s.url.replace(/^http/, 'ws'));
  const rows: WsTargetRow[] = [];
  try {
    type Subs = () => Promise<{ total: number; byNode: Record<string, number> | null }>;
    /** `subs` null: the clients are the nodes' own (direct), there is no proxy to count for. */
    const measure = async (target: string, proc: Proc, urls: string[], args: string[], notes: string[], subs: Subs | null): Promise<WsTargetRow> => {
      await new Promise((r) => setTimeout(r, 500));
      const rssIdle = proc.rssBytes();
      const p = parseBenchArgs([
        ...urls.flatMap((u) => ['--url', u]),
        '--ws-subscribers',
        String(clients),
        '--ws-procs',
        String(procs),
        '--duration',
        `${seconds}s`,
        '--timeout',
        '20s',
        ...refs.flatMap((r) => ['--ws-reference', r]),
        ...args,
      ]);
      if (p.kind !== 'ws') throw new Error('expected WebSocket options');
      if (o.quick) p.ws.graceMs = 300;
      let cpu0 = 0;
      let t0 = 0;
      let sampled: Promise<{ total: number | null; byNode: Record<string, number> | null; conns: number | null; rss: number }> | null = null;
      let cpuPct = 0;
      let busy0 = 0;
      let ours0 = 0;
      let otherCores = 0;
      const r: WsLoadResult = await runWsLoad(p.ws, {
        onMeasuring: () => {
          cpu0 = proc.cpuSeconds();
          busy0 = machineBusySeconds();
          ours0 = treeCpuSeconds();
          t0 = performance.now();
          sampled = new Promise((resolve) => setTimeout(resolve, 500)).then(async () => {
            if (subs === null) return { total: null, byNode: null, conns: null, rss: proc.rssBytes() };
            const s = await subs();
            return { ...s, conns: connectionsTo(simPorts) - refs.length, rss: proc.rssBytes() };
          });
        },
        beforeClose: () => {
          const wall = (performance.now() - t0) / 1000;
          cpuPct = ((proc.cpuSeconds() - cpu0) / wall) * 100;
          otherCores = Math.max(0, machineBusySeconds() - busy0 - (treeCpuSeconds() - ours0)) / wall;
        },
      });
      const s =
        sampled === null
          ? null
          : await (sampled as Promise<{ total: number | null; byNode: Record<string, number> | null; conns: number | null; rss: number }>);
      log(`  s6 ${target}: ${r.subscribed}/${clients} subscribed, delay p99 ${r.delayMs.p99.toFixed(1)} ms, upstream subscriptions ${s?.total ?? '-'}`);
      return {
        target,
        skipped: null,
        process: subs === null ? 'node' : 'proxy',
        notes,
        clients,
        subscribed: r.subscribed,
        failed: r.failed,
        failKinds: r.failKinds,
        closed: r.closed,
        connectS: r.connectS,
        notifications: r.notifications,
        missing: r.missing,
        delayMs: r.delayMs,
        overReferenceMs: r.overReferenceMs,
        p99OverDirectMs: null,
        p99OverOneNodeMs: null,
        upstreamSubscriptions: s?.total ?? null,
        upstreamByNode: s?.byNode ?? null,
        upstreamConnections: s?.conns ?? null,
        rssIdleMb: rssIdle / 2 ** 20,
        rssConnectedMb: s === null ? null : s.rss / 2 ** 20,
        peakRssMb: proc.peakRssBytes() / 2 ** 20,
        cpuPct,
        otherCores,
        histogram: r.histogram,
      };
    };

    rows.push(
      await measure(
        DIRECT,
        bothNodes(sims),
        sims.map((s) => s.url),
        [],
        [],
        null,
      ),
    );
    // One node process fanning out to every client: the same one thread jumpgate has.
    rows.push(await measure(ONE_NODE, sims[0]!, [sims[0]!.url], [], [], null));
    // Then each subscription held on both nodes, every notification delivered once from the
    // first to send it (docs/reliability.md "Redundant WebSocket subscriptions").
    const gateways: [string, string | undefined, number, 'node' | undefined][] = [
      ['jumpgate', undefined, 1, undefined],
      [REDUNDANT, undefined, 2, undefined],
    ];
    // Where uWS serves, Node's listener beside it (docs/runtimes.md "Speed").
    if (uwsLoad().ok) gateways.push([NODE_LISTENER, undefined, 1, 'node']);
    if (o.baselineCli !== undefined) gateways.push(['baseline', o.baselineCli, 1, undefined]);
    for (const [name, cli, redundancy, server] of gateways) {
      const adminPort = await freePort();
      const gw = await startGatewayProc(
        sims.map((s, i) => ({ id: `node-${i}`, url: s.url })),
        TOKEN,
        `admin: { host: 127.0.0.1, port: ${adminPort}, token: ${ADMIN} }\nws: { maxConnectionsPerToken: ${clients + 100}, redundancy: ${redundancy} }\noffload: { threads: 0 }`,
        [],
        cli,
        server,
      );
      const notes = ['offload.threads 0', `ws.maxConnectionsPerToken ${clients + 100}`, `listener ${server ?? (uwsLoad().ok ? 'uws' : 'node')}`];
      if (redundancy > 1) notes.push(`ws.redundancy ${redundancy}`);
      try {
        rows.push(
          await measure(name, gw, [gw.url], ['--token', TOKEN], notes, async () => {
            const res = await fetch(`http://127.0.0.1:${adminPort}/admin/ws`, { headers: { authorization: `Bearer ${ADMIN}` } });
            const j = (await res.json()) as { upstreamSubscriptions: Record<string, number> };
            return { total: Object.values(j.upstreamSubscriptions).reduce((a, b) => a + b, 0), byNode: j.upstreamSubscriptions };
          }),
        );
      } finally {
        await gw.stop();
      }
    }
    for (const name of ['nginx', 'haproxy'] as PeerName[]) {
      const missing = await peerMissing(name);
      if (missing !== null) {
        rows.push(skipped(name, missing, clients));
        continue;
      }
      let peer;
      try {
        peer = await startPeer(
          name,
          sims.map((s) => s.url),
          { wsClients: clients },
        );
      } catch (e) {
        rows.push(skipped(name, `failed to start: ${(e as Error).message.split('\n')[0]}`, clients));
        continue;
      }
      try {
        // A generic proxy opens one upstream WebSocket per client: its subscriptions are its connections.
        rows.push(
          await measure(name, peer, [peer.url], [], [name === 'nginx' ? '1 worker' : '1 thread', ...peer.notes], async () => ({
            total: connectionsTo(simPorts) - refs.length,
            byNode: null,
          })),
        );
      } finally {
        await peer.stop();
      }
    }
  } finally {
    await Promise.all(sims.map((s) => s.stop()));
  }
  const direct = rows[0]!.delayMs;
  const oneNode = rows[1]!.delayMs;
  for (const r of rows.slice(2)) {
    if (r.delayMs === null) continue;
    if (direct !== null) r.p99OverDirectMs = r.delayMs.p99 - direct.p99;
    if (oneNode !== null) r.p99OverOneNodeMs = r.delayMs.p99 - oneNode.p99;
  }
  const measured = rows.filter((r) => r.otherCores !== null);
  return {
    id: 's6',
    title: `S6: ${clients.toLocaleString('en-US')} WebSocket clients, one slotSubscribe each, ${slotMs} ms slots, ${seconds} s`,
    clients,
    procs,
    seconds,
    slotMs,
    otherCores: measured.reduce((a, r) => a + r.otherCores!, 0) / Math.max(1, measured.length),
    notes: [
      `clients spread over ${procs} load-generator process${procs > 1 ? 'es' : ''}; one reference client subscribed straight to each node`,
      'delay: arrival − earliest arrival of the same slot at any client or reference',
      `${DIRECT}: the same clients subscribed straight to the two nodes, alternately (two processes, half the clients each); its CPU and memory are the nodes'. "p99 over direct": a target's delay p99 minus that row's`,
      `${ONE_NODE}: every client subscribed straight to one node, one process fanning out to all of them as jumpgate's one thread does; "p99 over one node" (the S6 target, ≤ 10 ms): a target's delay p99 minus that row's`,
    ],
    targets: rows,
  };
}
