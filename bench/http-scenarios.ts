// S1-S5: HTTP scenarios, side by side in one run: direct to the nodes (the limit), jumpgate,
// nginx and HAProxy (when installed), the same two simulated nodes behind each, measured in
// turn and repeated (A/B/C/D, A/B/C/D) so drift on the shared cores spreads over every target.
// Every measurement is one run of the project's load generator in its own process.
//
//   S1  getSlot, closed loop, 50 connections
//   S2  getSlot, open loop at a rate every target sustains: latency added over direct
//   S3  getSlot with key affinity over 10,000 keys (peers hash the key header consistently)
//   S4  a batch of 100 getBalance calls: jumpgate's default (whole), node mode, and split in two
//   S5  getMultipleAccounts answered with ~100 KB

import { createHash } from 'node:crypto';
import type { HttpLoadResult, LatencyMs } from '../src/tools/loadgen/http-load.js';
import { latencyMs } from '../src/tools/loadgen/http-load.js';
import { LatencyHistogram } from '../src/metrics/histogram.js';
import { encodeBase58 } from '../src/solana/base58.js';
import { accountOf } from '../src/tools/sim/chain.js';
import { uwsLoad } from '../src/server/engine.js';
import { generate, hasWrk, wrkRps } from './load.js';
import { peerMissing, startPeer, type Peer, type PeerName } from './peers.js';
import { bothNodes, machineBusySeconds, selfCpuSeconds, startGatewayProc, startPumpProc, startSimProc, type GatewayProc, type Proc } from './procs.js';

export const TOKEN = 'bench-token-0123456789abcdef';
/** The gateway's settings for S1–S5: everything on the main thread, as the peers run one worker/thread. */
const GATEWAY_EXTRA = 'offload: { threads: 0 }';
const PEERS: PeerName[] = ['nginx', 'haproxy'];

export type HttpScenarioId = 's1' | 's2' | 's3' | 's4' | 's5';

export interface RoundRow {
  round: number;
  throughput: number;
  answered: number;
  errors: number;
  p50: number;
  p99: number;
  p999: number;
  /** CPU seconds of the target's processes during the run, warm-up included. */
  cpuS: number;
  /** Requests the target answered during the run, warm-up included. */
  allAnswered: number;
  clientCpuS: number;
  /** CPU the rest of the machine used meanwhile (not the target, nodes, generator or runner), in cores. */
  otherCores: number;
}

export interface TargetRow {
  target: string;
  /** Why the target did not run, or null. */
  skipped: string | null;
  /** Changes to its configuration for this scenario. */
  notes: string[];
  /** Whose CPU and memory the row shows: the node itself (direct) or the proxy. */
  process: 'node' | 'proxy' | null;
  rounds: RoundRow[];
  /** Mean over rounds, answered requests per second. */
  throughput: number;
  /** (max − min) / mean of the rounds' throughput, %. */
  spreadPct: number;
  /** All rounds' latencies merged. */
  latencyMs: LatencyMs | null;
  /** Latency over direct-to-node, same percentiles (S2). */
  addedMs: { p50: number; p99: number; p999: number } | null;
  errors: number;
  errorKinds: Record<string, number>;
  /** CPU seconds per 1,000 HTTP requests. */
  cpuPer1k: number | null;
  peakRssMb: number | null;
  mbPerSec: number | null;
  /** wrk -t1 closed loop, same connections (S1, full runs, when installed). */
  wrkRps: number | null;
  histogram: string | null;
}

export interface HttpScenarioResult {
  id: HttpScenarioId;
  title: string;
  /** What every target got: generator flags, rounds, seconds. */
  load: string;
  rounds: number;
  seconds: number;
  /** Calls per HTTP request (S4: 100). */
  callsPerRequest: number;
  /** Bytes of one answer, measured direct (S5). */
  responseBytes: number | null;
  notes: string[];
  /** Mean CPU used by other processes on the machine while measuring, in cores. */
  otherCores: number;
  targets: TargetRow[];
}

export interface HttpRunOptions {
  quick: boolean;
  /**
   * Another build's gateway entry point (`--baseline DIR`): its rows ("baseline", "baseline,
   * node mode", …) are measured beside this build's, alternating, in the same run.
   */
  baselineCli?: string;
  /** S2's rate; default 10,000 req/s (quick: 2,000). */
  s2Rate?: number;
  log?: (line: string) => void;
}

const PUMP = 'byte pump (floor)';
/** The gateway on Node's http listener, beside the uWS one (docs/runtimes.md "Speed"). */
export const NODE_LISTENER = 'jumpgate, node listener';
const PUMP_NOTE = `${PUMP}: bench/pump-server.ts passes each body unchanged to a node through jumpgate's upstream client and answers with the node's bytes (no validation, ids, routing or usage): the floor of a proxy written in JavaScript on uWS.js`;

interface Target {
  name: string;
  /** A jumpgate process (warmed up before round 1). */
  gateway: boolean;
  url: string;
  args: string[];
  proc: Proc;
  process: 'node' | 'proxy';
  notes: string[];
  /** Config changes reloaded into the gateway for this row only. */
  reload: { on(): Promise<void>; off(): Promise<void> } | null;
}

/** 100 pubkeys whose accounts make a getMultipleAccounts answer of about 100 KB. */
export function largeAccounts(): string[] {
  const keys: string[] = [];
  for (let i = 0; keys.length < 100; i++) {
    const pk = encodeBase58(createHash('sha256').update(`bench-account-${i}`).digest());
    const space = accountOf(pk).data.length;
    if (space >= 560 && space < 700) keys.push(pk);
  }
  return keys;
}

interface Def {
  id: HttpScenarioId;
  title: string;
  args: string[];
  calls: number;
  peerAffinity: boolean;
  /**
   * Extra jumpgate rows with their own generator flags (S4 node mode) and, with `config`,
   * these YAML lines reloaded into the gateway for the row's measurements (S4 without the
   * split); the same process, so warm-up and memory layout are the same as its other rows.
   */
  variants: { name: string; args: string[]; config?: string }[];
  /** Also measure the byte pump (pump-server.ts): the floor of a JavaScript proxy on uWS.js. */
  pump: boolean;
  /** Extra byte pump rows spinning this many µs per request: what CPU per request costs in throughput. */
  pumpWorkUs?: number[];
  notes: string[];
}

function defs(o: HttpRunOptions): Record<HttpScenarioId, Def> {
  const rate = o.s2Rate ?? (o.quick ? 2000 : 10_000);
  const pk = largeAccounts();
  return {
    s1: {
      id: 's1',
      title: 'S1: single getSlot, closed loop, 50 connections',
      args: ['--closed', '--connections', '50'],
      calls: 1,
      peerAffinity: false,
      variants: [],
      pump: true,
      notes: [PUMP_NOTE],
    },
    s2: {
      id: 's2',
      title: `S2: single getSlot, open loop at ${rate.toLocaleString('en-US')} req/s, 50 connections: latency added over direct`,
      args: ['--rate', String(rate), '--connections', '50'],
      calls: 1,
      peerAffinity: false,
      variants: [],
      pump: false,
      notes: ['latency from each request’s intended send time (coordinated omission corrected)'],
    },
    s3: {
      id: 's3',
      title: 'S3: getSlot with key affinity over 10,000 keys, closed loop, 50 connections',
      args: ['--closed', '--connections', '50', '--affinity', 'key', '--keys', '10000'],
      calls: 1,
      peerAffinity: true,
      variants: [],
      pump: false,
      notes: ['X-Service-Affinity: key with X-Service-Affinity-Key cycling over 10,000 keys; nginx and HAProxy hash that header consistently'],
    },
    s4: {
      id: 's4',
      title: 'S4: batch of 100 getBalance calls, closed loop, 50 connections',
      args: ['--closed', '--connections', '50', '--batch', '100', '--method', 'getBalance', '--params', JSON.stringify([pk[0]])],
      calls: 100,
      peerAffinity: false,
      variants: [
        { name: 'jumpgate, node mode', args: ['--affinity', 'node'] },
        { name: 'jumpgate, upstreamBatch 50', args: [], config: 'routing: { upstreamBatch: 50 }' },
      ],
      pump: true,
      pumpWorkUs: [10, 25],
      notes: [
        "jumpgate sends a batch of up to routing.upstreamBatch (100) calls whole to one node, with the client's ids when they allow it; node mode (X-Service-Affinity: node) always sends it whole; the peers always pass it whole",
        'jumpgate, upstreamBatch 50: default mode with routing.upstreamBatch reloaded to 50 for the row, so the batch is split in two sub-batches spread over the nodes: what the split costs',
        PUMP_NOTE,
        `${PUMP} + N µs: the same pump spinning N µs of CPU per batch before passing it on, as JSON-RPC work would; its batches/s against the plain pump's is what each µs per batch costs on this machine (bench/README.md, "What a µs per batch costs")`,
      ],
    },
    s5: {
      id: 's5',
      title: 'S5: getMultipleAccounts of 100 accounts (~100 KB answers), closed loop, 50 connections',
      args: ['--closed', '--connections', '50', '--method', 'getMultipleAccounts', '--params', JSON.stringify([pk, { encoding: 'base64' }])],
      calls: 1,
      peerAffinity: false,
      variants: [],
      pump: false,
      notes: [],
    },
  };
}

function merged(results: HttpLoadResult[]): LatencyHistogram {
  const h = new LatencyHistogram({ digits: 3 });
  for (const r of results) h.add(LatencyHistogram.decode(r.histogram));
  return h;
}

function skippedRow(target: string, reason: string): TargetRow {
  return {
    target,
    skipped: reason,
    notes: [],
    process: null,
    rounds: [],
    throughput: 0,
    spreadPct: 0,
    latencyMs: null,
    addedMs: null,
    errors: 0,
    errorKinds: {},
    cpuPer1k: null,
    peakRssMb: null,
    mbPerSec: null,
    wrkRps: null,
    histogram: null,
  };
}

export async function runHttpScenario(id: HttpScenarioId, o: HttpRunOptions): Promise<HttpScenarioResult> {
  const def = defs(o)[id];
  const log = o.log ?? (() => undefined);
  const rounds = o.quick ? 1 : 2;
  const seconds = o.quick ? 0.5 : 5;
  const warmup = o.quick ? '200ms' : '1s';
  const sims = await Promise.all([startSimProc(`${id}-a`), startSimProc(`${id}-b`)]);
  const stops: (() => Promise<void>)[] = sims.map((s) => () => s.stop());
  const rows = new Map<string, TargetRow>();
  const targets: Target[] = [];
  try {
    // The gateway and the peers start side by side; a peer that cannot run becomes a row saying why.
    const nodes = sims.map((s, i) => ({ id: `node-${i}`, url: s.url }));
    const builds: { prefix: string; cli: string | undefined }[] = [{ prefix: 'jumpgate', cli: undefined }];
    if (o.baselineCli !== undefined) builds.push({ prefix: 'baseline', cli: o.baselineCli });
    // Where uWS serves, Node's listener is measured beside it (docs/runtimes.md "Speed").
    const nodeListener = uwsLoad().ok;
    if (nodeListener) builds.push({ prefix: NODE_LISTENER, cli: undefined });
    const [gwSettled, baseSettled, nodeSettled, ...peerSettled] = await Promise.allSettled([
      startGatewayProc(nodes, TOKEN, GATEWAY_EXTRA),
      o.baselineCli === undefined ? Promise.resolve(null) : startGatewayProc(nodes, TOKEN, GATEWAY_EXTRA, [], o.baselineCli),
      nodeListener ? startGatewayProc(nodes, TOKEN, GATEWAY_EXTRA, [], undefined, 'node') : Promise.resolve(null),
      ...PEERS.map(async (name): Promise<Peer | string> => {
        const missing = await peerMissing(name);
        if (missing !== null) return missing;
        try {
          return await startPeer(
            name,
            sims.map((s) => s.url),
            { affinity: def.peerAffinity },
          );
        } catch (e) {
          return `failed to start: ${(e as Error).message.split('\n')[0]}`;
        }
      }),
    ]);
    for (const p of peerSettled) if (p.status === 'fulfilled' && typeof p.value !== 'string') stops.unshift((p.value as Peer).stop);
    for (const g of [gwSettled, baseSettled, nodeSettled]) if (g.status === 'fulfilled' && g.value !== null) stops.unshift(g.value.stop);
    if (gwSettled.status === 'rejected') throw gwSettled.reason;
    if (baseSettled.status === 'rejected') throw baseSettled.reason;
    if (nodeSettled.status === 'rejected') throw nodeSettled.reason;
    const gws = [gwSettled.value, baseSettled.value, nodeSettled.value].filter((g): g is GatewayProc => g !== null);
    // The generator itself spreads requests round-robin over both nodes, as the proxies do.
    targets.push({
      name: 'direct to nodes',
      gateway: false,
      url: sims[0]!.url,
      args: ['--url', sims[1]!.url],
      proc: bothNodes(sims),
      process: 'node',
      notes: [],
      reload: null,
    });
    builds.forEach(({ prefix }, b) => {
      const gw = gws[b]!;
      targets.push({
        name: prefix,
        gateway: true,
        url: gw.url,
        args: ['--token', TOKEN],
        proc: gw,
        process: 'proxy',
        notes: ['offload.threads 0', `listener ${prefix === NODE_LISTENER || !uwsLoad().ok ? 'node' : 'uws'}`],
        reload: null,
      });
      // The variants measure settings, not listeners: once per build.
      if (prefix === NODE_LISTENER) return;
      for (const v of def.variants) {
        const config = v.config;
        const name = v.name.replace(/^jumpgate/, prefix);
        const reload =
          config === undefined
            ? null
            : {
                on: async () => {
                  const line = await gw.reconfigure(`${GATEWAY_EXTRA}\n${config}`);
                  // The row means nothing unless the setting took effect: the reload names what changed.
                  // A baseline build may already have the row's setting as its default.
                  const path = config.slice(0, config.indexOf(':')).trim();
                  const unchanged = prefix !== 'jumpgate' && line.includes('nothing changed');
                  if (!line.includes(`"${path}.`) && !unchanged) throw new Error(`reload for "${name}" did not change ${path}: ${line}`);
                },
                off: async () => {
                  await gw.reconfigure(GATEWAY_EXTRA);
                },
              };
        targets.push({
          name,
          gateway: true,
          url: gw.url,
          args: ['--token', TOKEN, ...v.args],
          proc: gw,
          process: 'proxy',
          notes: ['offload.threads 0'],
          reload,
        });
      }
    });
    if (def.pump) {
      // The plain pump, then one spinning each of pumpWorkUs per request.
      for (const us of [0, ...(def.pumpWorkUs ?? [])]) {
        const pump = await startPumpProc(
          sims.map((s) => s.url),
          us,
        );
        stops.unshift(pump.stop);
        targets.push({
          name: us === 0 ? PUMP : `${PUMP} + ${us} µs`,
          gateway: true,
          url: pump.url,
          args: [],
          proc: pump,
          process: 'proxy',
          notes: [],
          reload: null,
        });
      }
    }
    PEERS.forEach((name, i) => {
      const p = peerSettled[i]!;
      const peer = p.status === 'fulfilled' ? p.value : `failed to start: ${String(p.reason)}`;
      if (typeof peer === 'string') rows.set(name, skippedRow(name, peer));
      else
        targets.push({
          name,
          gateway: false,
          url: peer.url,
          args: [],
          proc: peer,
          process: 'proxy',
          notes: [name === 'nginx' ? '1 worker' : '1 thread', ...peer.notes],
          reload: null,
        });
    });
    const order = [...targets.map((t) => t.name).filter((n) => !(PEERS as string[]).includes(n)), ...PEERS];
    const results = new Map<string, HttpLoadResult[]>(targets.map((t) => [t.name, []]));
    const roundRows = new Map<string, RoundRow[]>(targets.map((t) => [t.name, []]));
    // A gateway's first seconds include V8 compiling its hot path and growing its young
    // generation; nginx and HAProxy have nothing to warm. Each gateway process gets one
    // unrecorded run under its own load first, so round 1 does not measure its start.
    if (!o.quick) {
      const warmed = new Set<Proc>();
      for (const t of targets) {
        if (!t.gateway || warmed.has(t.proc)) continue;
        warmed.add(t.proc);
        await generate(['--url', t.url, ...def.args, ...t.args, '--duration', '2s', '--warmup', '0s']);
      }
    }
    for (let round = 1; round <= rounds; round++) {
      // Every other round in reverse: no target always follows the same one (the direct round
      // leaves the nodes collecting garbage from 60,000 req/s for whoever comes next).
      for (const t of round % 2 === 1 ? targets : [...targets].reverse()) {
        // Ours: the target, both nodes (direct's target is them), the runner, the generator.
        const ours = t.process === 'node' ? [t.proc] : [t.proc, ...sims];
        const ours0 = ours.reduce((a, p) => a + p.cpuSeconds(), 0) + selfCpuSeconds();
        const busy0 = machineBusySeconds();
        const w0 = performance.now();
        if (t.reload !== null) await t.reload.on();
        const cpu0 = t.proc.cpuSeconds();
        const r = await generate(['--url', t.url, ...def.args, ...t.args, '--duration', `${seconds}s`, '--warmup', warmup]);
        const cpuS = t.proc.cpuSeconds() - cpu0;
        if (t.reload !== null) await t.reload.off();
        const oursS = ours.reduce((a, p) => a + p.cpuSeconds(), 0) + selfCpuSeconds() - ours0 + r.clientCpuS;
        const otherCores = Math.max(0, machineBusySeconds() - busy0 - oursS) / ((performance.now() - w0) / 1000);
        results.get(t.name)!.push(r);
        roundRows.get(t.name)!.push({
          round,
          throughput: r.throughput,
          answered: r.answered,
          errors: r.errors,
          p50: r.latencyMs.p50,
          p99: r.latencyMs.p99,
          p999: r.latencyMs.p999,
          cpuS,
          allAnswered: r.allAnswered,
          clientCpuS: r.clientCpuS,
          otherCores,
        });
        log(
          `  ${id} round ${round} ${t.name}: ${Math.round(r.throughput).toLocaleString('en-US')} req/s, p99 ${r.latencyMs.p99.toFixed(2)} ms, errors ${r.errors}`,
        );
      }
    }
    const wrk = id === 's1' && !o.quick && (await hasWrk());
    for (const t of targets) {
      const rs = results.get(t.name)!;
      const rr = roundRows.get(t.name)!;
      const tp = rs.map((r) => r.throughput);
      const mean = tp.reduce((a, b) => a + b, 0) / tp.length;
      const h = merged(rs);
      const kinds: Record<string, number> = {};
      for (const r of rs) for (const [k, v] of Object.entries(r.errorKinds)) kinds[k] = (kinds[k] ?? 0) + v;
      const all = rr.reduce((a, r) => a + r.allAnswered, 0);
      const cpu = rr.reduce((a, r) => a + r.cpuS, 0);
      const secs = rs.reduce((a, r) => a + r.elapsedS, 0);
      let wrkResult: number | null = null;
      if (wrk) {
        const u = new URL(t.url);
        if (t.args.includes('--token')) u.pathname = `/api-token/${TOKEN}`;
        wrkResult = await wrkRps(u.href, '{"jsonrpc":"2.0","id":1,"method":"getSlot"}', {}, 50, 3);
      }
      rows.set(t.name, {
        target: t.name,
        skipped: null,
        notes: t.notes,
        process: t.process,
        rounds: rr,
        throughput: mean,
        spreadPct: tp.length > 1 ? ((Math.max(...tp) - Math.min(...tp)) / mean) * 100 : 0,
        latencyMs: latencyMs(
          h.summary(),
          rs.reduce((a, r) => a + r.latencyMs.mean * 1000 * r.latencyMs.count, 0),
        ),
        addedMs: null,
        errors: rs.reduce((a, r) => a + r.errors, 0),
        errorKinds: kinds,
        cpuPer1k: all > 0 ? (cpu / all) * 1000 : null,
        peakRssMb: t.proc.peakRssBytes() / 2 ** 20,
        mbPerSec: rs.reduce((a, r) => a + r.bytesIn, 0) / secs / 1e6,
        wrkRps: wrkResult,
        histogram: h.encode(),
      });
    }
    const direct = rows.get('direct to nodes')!;
    if (id === 's2' && direct.latencyMs !== null) {
      for (const row of rows.values()) {
        if (row.latencyMs === null || row === direct) continue;
        row.addedMs = {
          p50: row.latencyMs.p50 - direct.latencyMs.p50,
          p99: row.latencyMs.p99 - direct.latencyMs.p99,
          p999: row.latencyMs.p999 - direct.latencyMs.p999,
        };
      }
    }
    const first = results.get('direct to nodes')![0]!;
    const allRounds = [...roundRows.values()].flat();
    const otherCores = allRounds.reduce((a, r) => a + r.otherCores, 0) / Math.max(1, allRounds.length);
    const notes = [...def.notes];
    if (wrk) notes.push('wrk req/s: wrk -t1 -c50, 3 s, after the rounds, a C client as a cross-check of the generator’s ceiling (direct: to one node)');
    return {
      id,
      title: def.title,
      load: def.args.join(' '),
      rounds,
      seconds,
      callsPerRequest: def.calls,
      responseBytes: first.answered > 0 ? Math.round(first.bytesIn / first.answered) : null,
      notes,
      otherCores,
      targets: order.map((n) => rows.get(n)!),
    };
  } finally {
    for (const stop of stops) await stop();
  }
}
