// gRPC (Yellowstone) through jumpgate against each source direct (docs/grpc.md "Measured"):
// two simulated sources (`jumpgate sim-grpc`, each adding 0-20 ms of random delay per update,
// streams in order), a gateway with both as `grpc.sources`, N subscribers of everything
// (slots, accounts, transactions, block metas) through the gateway and one subscriber on each
// source. Delivery delay is arrival time minus the start of the slot the update was emitted
// in (the sims' shared slot clock). Reports delay p50/p99/max per path, missing and duplicated
// updates per gateway subscriber against the generated feed, the gateway's upstream streams per
// source, its CPU per 1,000 delivered updates and RSS.

import * as grpc from '@grpc/grpc-js';
import { spawn } from 'node:child_process';
import os from 'node:os';
import { encodeAs, geyserType } from '../src/grpc/proto.js';
import { KIND_SLOT, readUpdate } from '../src/grpc/update.js';
import { COMMITMENT_DEPTH, GeneratedFeed } from '../src/tools/sim-grpc/feed.js';
import { trueSlot } from '../src/tools/sim/chain.js';
import { runHttp2Floor, type Http2FloorResult } from './http2-floor.js';
import { freePort, proc, startGatewayProc, startSimProc, waitFor, waitForPort, type Proc } from './procs.js';

const TOKEN = 'bench-token-0123456789abcdef';
const ADMIN = 'bench-admin-token-0123456789';
const SLOT_MS = 100;
const CLI = new URL('../src/cli/main.js', import.meta.url).pathname;

export interface GrpcPath {
  path: string;
  updates: number;
  delayP50Ms: number;
  delayP99Ms: number;
  delayMaxMs: number;
}

export interface GrpcBenchResult {
  subscribers: number;
  seconds: number;
  paths: GrpcPath[];
  /** Per update: the probe's arrival minus the earlier direct arrival (the gateway's own time). */
  gatewayAdded: GrpcPath;
  upstreamStreams: Record<string, number>;
  missing: number;
  duplicated: number;
  delivered: number;
  cpuMsPer1000: number;
  rssMb: number;
  /** A bare node:http2 server writing to as many streams, after the gateway stopped (./http2-floor.ts). */
  floor: Http2FloorResult;
}

function percentile(sorted: number[], p: number): number {
  return sorted.length === 0 ? NaN : sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))]!;
}

/** Wall-clock ms at which `slot` began on the sims' clock (slot boundaries are multiples of SLOT_MS). */
function slotStart(slot: number): number {
  const now = Date.now();
  return now - (now % SLOT_MS) + (slot - trueSlot(SLOT_MS, now)) * SLOT_MS;
}

async function startSimGrpcProc(args: string[]): Promise<Proc & { url: string }> {
  const port = await freePort();
  const child = spawn(process.execPath, [CLI, 'sim-grpc', '--port', String(port), '--slot-ms', String(SLOT_MS), ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  await waitFor(child, /listening/, 'sim-grpc');
  return { ...proc(child), url: `http://127.0.0.1:${port}` };
}

/** A raw subscriber: each update's dedup key and delay, counted while `window()` says so. */
class Subscriber {
  readonly delays: number[] = [];
  readonly counts = new Map<string, number>();
  /** Each update's first arrival (epoch ms), by key. */
  readonly arrivals = new Map<string, number>();
  /** Bytes of the window's updates. */
  bytes = 0;
  private readonly client: grpc.Client;
  private readonly call: grpc.ClientDuplexStream<Buffer, Buffer>;
  constructor(target: string, token: string | null, window: () => [number, number]) {
    this.client = new grpc.Client(target, grpc.credentials.createInsecure());
    const md = new grpc.Metadata();
    if (token !== null) md.set('x-token', token);
    const id = (b: Buffer): Buffer => b;
    this.call = this.client.makeBidiStreamRequest('/geyser.Geyser/Subscribe', id, id, md);
    this.call.on('error', () => {});
    this.call.on('data', (b: Buffer) => {
      const at = performance.timeOrigin + performance.now();
      const w = window();
      const u = readUpdate(b);
      const tip = u.kind === KIND_SLOT ? u.slot + COMMITMENT_DEPTH[Math.min(u.status, 2) as 0 | 1 | 2] : u.slot;
      if (tip < w[0] || tip > w[1]) return;
      const delay = at - slotStart(tip);
      this.delays.push(delay);
      this.bytes += b.length;
      const key = `${u.slot}:${u.dedupKey()}`;
      this.counts.set(key, (this.counts.get(key) ?? 0) + 1);
      if (!this.arrivals.has(key)) this.arrivals.set(key, delay);
    });
    this.call.write(encodeAs(geyserType('SubscribeRequest'), { slots: { s: {} }, accounts: { a: {} }, transactions: { t: {} }, blocksMeta: { m: {} } }));
  }
  close(): void {
    this.call.cancel();
    this.client.close();
  }
}

async function metric(adminPort: number): Promise<string> {
  return (await fetch(`http://127.0.0.1:${adminPort}/metrics`, { headers: { authorization: `Bearer ${ADMIN}` } })).text();
}

export async function runGrpcBench(opts: { subscribers: number; seconds: number; log: (line: string) => void }): Promise<GrpcBenchResult> {
  const sims: (Proc & { url: string })[] = await Promise.all([
    // The same content (--seed), independent delays (--delay-seed): with one delay seed both
    // sources would delay every update alike and the first arrival could gain nothing.
    startSimGrpcProc(['--jitter-ms', '20', '--seed', '1', '--delay-seed', '1']),
    startSimGrpcProc(['--jitter-ms', '20', '--seed', '1', '--delay-seed', '2']),
  ]);
  // `jumpgate start` wants one JSON-RPC node; it serves no traffic here.
  const node = await startSimProc('grpc-bench-node', ['--slot-ms', String(SLOT_MS)]);
  sims.push(node);
  const grpcPort = await freePort();
  const adminPort = await freePort();
  const sources = sims
    .slice(0, 2)
    .map((s, i) => `{ id: src${i}, url: "${s.url}" }`)
    .join(', ');
  const gw = await startGatewayProc(
    [{ id: 'n0', url: node.url }],
    TOKEN,
    `admin: { host: 127.0.0.1, port: ${adminPort}, token: ${ADMIN} }\ngrpc: { host: 127.0.0.1, port: ${grpcPort}, sources: [${sources}], limits: { maxStreamsPerToken: ${opts.subscribers + 10} } }`,
  );
  let load: ReturnType<typeof spawn> | null = null;
  try {
    await waitForPort(gw.child, grpcPort, 'gateway gRPC');
    // The window starts once every subscriber had time to open its stream and the upstream
    // union settled; the N-1 load subscribers run in a child process, off this event loop,
    // so the delays measured here (one probe through the gateway, one client on each source)
    // are not this process's queueing.
    const from = trueSlot(SLOT_MS) + Math.round((3000 + opts.subscribers * 4) / SLOT_MS);
    const to = from + Math.round((opts.seconds * 1000) / SLOT_MS);
    const window = (): [number, number] => [from, to];
    const direct = sims.slice(0, 2).map((s) => new Subscriber(s.url.replace('http://', ''), null, window));
    const probe = new Subscriber(`127.0.0.1:${grpcPort}`, TOKEN, window);
    const child = spawn(
      process.execPath,
      [
        new URL('./grpc-load.js', import.meta.url).pathname,
        `127.0.0.1:${grpcPort}`,
        TOKEN,
        String(opts.subscribers - 1),
        String(from),
        String(to),
        String(SLOT_MS),
      ],
      { stdio: ['ignore', 'pipe', 'inherit'] },
    );
    load = child;
    // Subscribers on other machines cost the gateway's machine nothing: on this one, the load
    // process yields the cores to the gateway and the measuring process (niced).
    if (child.pid !== undefined) os.setPriority(child.pid, 10);
    let out = '';
    child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
    type Loaded = { delivered: number; missing: number; duplicated: number; silent: number; drainMs: number; errors: Record<string, number> };
    const loadDone = new Promise<Loaded>((resolve, reject) =>
      child.on('exit', (code) => {
        const line = out.trim().split('\n').pop() ?? '';
        if (code === 0 && line.startsWith('{')) resolve(JSON.parse(line) as Loaded);
        else reject(new Error(`grpc load process exited with ${code}: ${out.slice(-300)}`));
      }),
    );
    await new Promise((r) => setTimeout(r, Math.max(0, (from - trueSlot(SLOT_MS)) * SLOT_MS)));
    const cpu0 = gw.cpuSeconds();
    await new Promise((r) => setTimeout(r, (to - trueSlot(SLOT_MS)) * SLOT_MS + 1500));
    const cpu = gw.cpuSeconds() - cpu0;
    const rssMb = gw.rssBytes() / 2 ** 20;
    const text = await metric(adminPort);
    const upstreamStreams: Record<string, number> = {};
    for (const m of text.matchAll(/jumpgate_grpc_upstream_streams\{source="([^"]+)"\} (\d+)/g)) upstreamStreams[m[1]!] = Number(m[2]);
    const loaded = await loadDone;
    const feed = new GeneratedFeed();
    let missing = loaded.missing;
    let duplicated = loaded.duplicated;
    for (let tip = from; tip <= to; tip++) {
      for (const u of [...feed.slotUpdates(tip), ...feed.blockUpdates(tip)]) {
        const n = probe.counts.get(`${u.slot}:${u.dedupKey()}`) ?? 0;
        if (n === 0) missing++;
        if (n > 1) duplicated += n - 1;
      }
    }
    const delivered = loaded.delivered + probe.delays.length;
    const row = (path: string, delays: number[]): GrpcPath => {
      const sorted = [...delays].sort((a, b) => a - b);
      return {
        path,
        updates: sorted.length,
        delayP50Ms: percentile(sorted, 0.5),
        delayP99Ms: percentile(sorted, 0.99),
        delayMaxMs: sorted[sorted.length - 1] ?? NaN,
      };
    };
    opts.log(
      `[grpc] ${opts.subscribers} subscribers, slots ${from}..${to}: ${delivered} delivered, ${missing} missing, ${duplicated} duplicated; ` +
        `${loaded.silent} load subscribers received nothing, the load process read the window ${loaded.drainMs} ms after its end; stream errors ${JSON.stringify(loaded.errors)}`,
    );
    // Each source delays an update alike on every stream (docs/grpc.md "Simulated sources"),
    // so the earlier of the two direct arrivals is when the gateway's first copy arrived, and
    // the probe's arrival minus it is the gateway's own time for that update.
    const firstOfTwo: number[] = [];
    const added: number[] = [];
    for (const [key, d0] of direct[0]!.arrivals) {
      const d1 = direct[1]!.arrivals.get(key);
      if (d1 === undefined) continue;
      const first = Math.min(d0, d1);
      firstOfTwo.push(first);
      const via = probe.arrivals.get(key);
      if (via !== undefined) added.push(via - first);
    }
    direct.forEach((d) => d.close());
    probe.close();
    // The floor runs alone (the gateway, its load and the sources stopped).
    load?.kill();
    await gw.stop();
    await Promise.all(sims.map((s) => s.stop()));
    // Messages the size of the stream's average update.
    const bytes = Math.round(probe.bytes / Math.max(1, probe.delays.length));
    const floor = await runHttp2Floor({ streams: opts.subscribers, passes: opts.seconds * 5, bytes });
    return {
      subscribers: opts.subscribers,
      seconds: opts.seconds,
      paths: [
        row('source src0 direct', direct[0]!.delays),
        row('source src1 direct', direct[1]!.delays),
        row('earlier of the two sources, per update', firstOfTwo),
        row(`jumpgate (one of ${opts.subscribers} subscribers)`, probe.delays),
      ],
      gatewayAdded: row('jumpgate minus the earlier source, per update', added),
      upstreamStreams,
      missing,
      duplicated,
      delivered,
      cpuMsPer1000: delivered === 0 ? NaN : (cpu * 1000) / (delivered / 1000),
      rssMb,
      floor,
    };
  } finally {
    load?.kill();
    await gw.stop();
    await Promise.all(sims.map((s) => s.stop()));
  }
}

export function grpcTable(r: GrpcBenchResult): string {
  return [
    `Yellowstone gRPC: two sources with 0-20 ms random delay each, ${r.subscribers} subscribers of everything through jumpgate, ${r.seconds} s`,
    '',
    '| path | updates | delay p50 / p99 / max ms |',
    '|---|---:|---|',
    ...[...r.paths, r.gatewayAdded].map(
      (p) => `| ${p.path} | ${p.updates} | ${p.delayP50Ms.toFixed(1)} / ${p.delayP99Ms.toFixed(1)} / ${p.delayMaxMs.toFixed(1)} |`,
    ),
    '',
    '| upstream streams per source | missing | duplicated | gateway CPU ms per 1,000 delivered | gateway RSS MB |',
    '|---|---:|---:|---:|---:|',
    `| ${JSON.stringify(r.upstreamStreams)} | ${r.missing} | ${r.duplicated} | ${r.cpuMsPer1000.toFixed(1)} | ${r.rssMb.toFixed(0)} |`,
    '',
    `The floor: a bare node:http2 server writing a ${r.floor.bytes}-byte message to each of ${r.floor.streams} streams (a connection each), ` +
      `${r.floor.passes} passes: ${r.floor.cpuUsPerWrite.toFixed(1)} µs of CPU per write, ${r.floor.passMs.toFixed(1)} ms per pass (median).`,
  ].join('\n');
}
