// The account cache side by side (docs/account-cache.md; docs/benchmarks.md "Account cache"):
// a bot's read mix over 50 accounts written every slot and 1,000 written about once every 50
// slots, at a fixed rate, on one simulated cluster (./account-cache-cluster.ts, a child
// process: one node, two cluster-fed gRPC sources, the writer, the ledger). Rows: direct to
// the node, jumpgate without the cache, jumpgate with it (after a warm-up that holds every key),
// nginx in front of the node; alternating rounds. Per row: latency p50/p99 from each read's
// intended send time, CPU per 1,000 reads of the answering process, the node's account reads
// per 1,000 client reads (/sim/stats), and for the cache row the hit share, misses by reason
// and the update-to-visible delay (its Prometheus histogram). Every 10th answer is checked
// against the ledger at its context slot, after the row so the check costs no row CPU.
// Run: npm run bench -- cache [--quick]

import { fork, type ChildProcess } from 'node:child_process';
import { Agent } from 'node:http';
import type { Checked, ClusterReady, Sample } from './account-cache-cluster.js';
import { drive, HOT_SHARE, mix, percentile, post } from './account-cache-load.js';
import { peerMissing, startNginx } from './peers.js';
import { freePort, machineBusySeconds, proc, startGatewayProc, treeCpuSeconds, type GatewayProc, type Proc } from './procs.js';

const TOKEN = 'bench-token-cache-0123456789abcdef';
const ADMIN_TOKEN = 'bench-admin-cache-0123456789abcdef';
const SLOT_MS = 400;
const HOT = 50;
const COLD = 1000;
/** Each cold key is written once every this many slots. */
const COLD_EVERY = 50;
const READ_METHODS = ['getAccountInfo', 'getMultipleAccounts', 'getBalance'];
const CACHE_ROW = 'jumpgate, cache on';
/** As S1–S5: the gateway's work on its own threads (data plane and control plane), no offload pool. */
const GATEWAY_EXTRA = 'offload: { threads: 0 }';

export interface CacheRow {
  target: string;
  skipped: string | null;
  reads: number;
  errors: number;
  p50Ms: number;
  p99Ms: number;
  /** CPU ms per 1,000 reads: the proxy's, or the node's net of its idle-time background (direct). */
  cpuMsPer1k: number | null;
  /** The node's getAccountInfo/getMultipleAccounts/getBalance calls per 1,000 client reads. */
  upstreamPer1k: number | null;
  hitSharePct: number | null;
  misses: Record<string, number> | null;
  visibleP50Ms: number | null;
  visibleP99Ms: number | null;
  /** The cache row: writes applied by the data plane within each bucket's bound (cumulative; seconds, null = +Inf). */
  visibleBuckets: [number | null, number][] | null;
  checked: number;
  stale: number;
  /** The answering process's CPU with no reads, in cores (direct: the node's, subtracted from its CPU per read). */
  idleCores: number | null;
  /** Cores busy with other work on the machine meanwhile (not this run's processes). */
  otherCores: number;
}

export interface CacheBenchResult {
  slotMs: number;
  hot: number;
  cold: number;
  coldEverySlots: number;
  rate: number;
  seconds: number;
  rounds: number;
  /** The node process's CPU with no reads (slots, writer, gRPC streams), in cores. */
  nodeBackgroundCores: number;
  rows: CacheRow[];
  ratios: { p50CacheOverDirect: number; p99CacheMinusDirectMs: number; hitSharePct: number; upstreamFewerPct: number; visibleP99Ms: number | null };
}

async function startCluster(hot: number, cold: number): Promise<{ child: ChildProcess; proc: Proc; ready: ClusterReady }> {
  const child = fork(new URL('./account-cache-cluster.js', import.meta.url).pathname, [String(hot), String(cold), String(SLOT_MS), String(COLD_EVERY)], {
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const ready = await new Promise<ClusterReady>((resolve, reject) => {
    child.once('message', (m) => resolve(m as ClusterReady));
    child.once('exit', (code) => reject(new Error(`cache bench cluster exited with ${code}`)));
  });
  return { child, proc: proc(child), ready };
}

function checkSamples(child: ChildProcess, samples: Sample[]): Promise<Checked> {
  // Bounded: a cluster that died mid-run fails the scenario instead of hanging it.
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('cache bench cluster did not answer a check within 30 s')), 30_000);
    child.once('message', (m) => {
      clearTimeout(timer);
      resolve(m as Checked);
    });
    child.send({ type: 'check', samples });
  });
}

async function nodeReads(node: string): Promise<number> {
  const s = (await (await fetch(`${node}/sim/stats`)).json()) as { byMethod: Record<string, number> };
  return READ_METHODS.reduce((a, m) => a + (s.byMethod[m] ?? 0), 0);
}

async function admin(adminUrl: string, path: string): Promise<Response> {
  return fetch(`${adminUrl}${path}`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
}

interface CacheCounts {
  hits: number;
  misses: Record<string, number>;
  keys: number;
  /** Cumulative update-to-visible bucket counts by upper bound (seconds; Infinity last). */
  buckets: [number, number][];
}

async function cacheCounts(adminUrl: string): Promise<CacheCounts> {
  const view = (await (await admin(adminUrl, '/admin/cache')).json()) as { hits: number; misses: Record<string, number>; keys: number };
  const text = await (await admin(adminUrl, '/metrics')).text();
  const buckets: [number, number][] = [];
  for (const m of text.matchAll(/^jumpgate_cache_update_visible_seconds_bucket\{[^}]*le="([^"]+)"[^}]*\} (\d+)/gm)) {
    buckets.push([m[1] === '+Inf' ? Infinity : Number(m[1]), Number(m[2])]);
  }
  return { hits: view.hits, misses: view.misses, keys: view.keys, buckets };
}

/** A quantile of the histogram's growth between two scrapes, interpolated within its bucket as Prometheus' histogram_quantile does (ms). */
function quantileMs(a: CacheCounts, b: CacheCounts, q: number): number | null {
  const grown = b.buckets.map(([le, n], i) => [le, n - (a.buckets[i]?.[1] ?? 0)] as const);
  const total = grown[grown.length - 1]?.[1] ?? 0;
  if (total === 0) return null;
  let lower = 0;
  let below = 0;
  for (const [le, n] of grown) {
    if (n >= q * total) {
      // Above the last finite bound: only "more than it" is known.
      if (le === Infinity) return Infinity;
      return (lower + ((le - lower) * (q * total - below)) / Math.max(1, n - below)) * 1000;
    }
    lower = le;
    below = n;
  }
  return null;
}

interface Target {
  name: string;
  url: string;
  proc: Proc;
  admin: string | null;
}

export async function runCacheBench(o: { quick: boolean; log: (line: string) => void }): Promise<CacheBenchResult> {
  const rate = o.quick ? 500 : 2000;
  const seconds = o.quick ? 3 : 12;
  const rounds = o.quick ? 1 : 2;
  const warmS = o.quick ? 0.5 : 1;
  const cluster = await startCluster(HOT, COLD);
  const stops: (() => Promise<void>)[] = [
    async () => {
      cluster.child.send({ type: 'stop' });
      await cluster.proc.stop();
    },
  ];
  try {
    const { ready } = cluster;
    const nodes = [{ id: 'n0', url: ready.node }];
    const sources = ready.sources.map((url, i) => `{ id: src${i}, url: "${url}" }`).join(', ');
    const gateway = async (cache: boolean): Promise<{ gw: GatewayProc; admin: string }> => {
      const adminPort = await freePort();
      const extra = [
        GATEWAY_EXTRA,
        `admin: { host: 127.0.0.1, port: ${adminPort}, token: ${ADMIN_TOKEN} }`,
        `grpc: { sources: [${sources}] }`,
        `cache: { accounts: { enabled: ${cache} } }`,
      ].join('\n');
      const gw = await startGatewayProc(nodes, TOKEN, extra);
      stops.unshift(gw.stop);
      const url = `http://127.0.0.1:${adminPort}`;
      // The admin API listens a moment after the RPC port.
      for (
        let i = 0;
        i < 100 &&
        !(await admin(url, '/admin/cache').then(
          (r) => r.ok,
          () => false,
        ));
        i++
      )
        await new Promise((r) => setTimeout(r, 100));
      return { gw, admin: url };
    };
    const [plain, cached] = await Promise.all([gateway(false), gateway(true)]);
    const nginxMissing = await peerMissing('nginx');
    let nginxSkipped = nginxMissing;
    const nginx =
      nginxMissing === null
        ? await startNginx([ready.node]).catch((e: Error) => ((nginxSkipped = `failed to start: ${e.message.split('\n')[0]}`), null))
        : null;
    if (nginx !== null) stops.unshift(nginx.stop);
    const targets: Target[] = [
      { name: 'direct to the node', url: ready.node, proc: cluster.proc, admin: null },
      { name: 'jumpgate, cache off', url: `${plain.gw.url}/api-token/${TOKEN}`, proc: plain.gw, admin: null },
      { name: CACHE_ROW, url: `${cached.gw.url}/api-token/${TOKEN}`, proc: cached.gw, admin: cached.admin },
    ];
    if (nginx !== null) targets.push({ name: 'nginx (1 worker, keep-alive upstream)', url: nginx.url, proc: nginx, admin: null });

    // Warm-up: every key read (hotAfterReads is 2) until the cache holds them all, then load at the rate.
    const all = [...ready.hot, ...ready.cold];
    const agent = new Agent({ keepAlive: true, maxSockets: 16 });
    const warmUrl = new URL(targets[2]!.url);
    const deadline = Date.now() + 30_000;
    let held = 0;
    while ((held = (await cacheCounts(cached.admin)).keys) < all.length && Date.now() < deadline) {
      for (let i = 0; i < all.length; i += 16) {
        await Promise.all(
          all
            .slice(i, i + 16)
            .map((k) => post(agent, warmUrl, JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'getBalance', params: [k, { commitment: 'processed' }] }))),
        );
      }
      await new Promise((r) => setTimeout(r, 500));
    }
    agent.destroy();
    o.log(`  cache: ${held} of ${all.length} keys held after the warm-up`);
    await drive(targets[2]!.url, mix(ready.hot, ready.cold, 99), rate, o.quick ? 1 : 5);

    // The node's own work with no reads (slots, the writer, both gRPC streams): subtracted from the direct row.
    // Every target's too, shown beside its rows: the gateways' probes and, with the cache, its feed.
    const bg0 = targets.map((t) => t.proc.cpuSeconds());
    const bgT = performance.now();
    await new Promise((r) => setTimeout(r, o.quick ? 1000 : 3000));
    const idle = targets.map((t, i) => (t.proc.cpuSeconds() - bg0[i]!) / ((performance.now() - bgT) / 1000));
    const nodeBackgroundCores = idle[0]!;

    const acc = new Map<string, { lat: number[]; reads: number; errors: number; cpu: number; up: number; checked: number; stale: number; other: number[] }>(
      targets.map((t) => [t.name, { lat: [], reads: 0, errors: 0, cpu: 0, up: 0, checked: 0, stale: 0, other: [] }]),
    );
    let cache0: CacheCounts | null = null;
    const cacheDelta = { hits: 0, misses: {} as Record<string, number>, buckets0: [] as CacheCounts[], buckets1: [] as CacheCounts[] };
    let seed = 1;
    for (let round = 1; round <= rounds; round++) {
      // Every other round in reverse: no row always follows the same one.
      for (const t of round % 2 === 1 ? targets : [...targets].reverse()) {
        const next = mix(ready.hot, ready.cold, seed++);
        await drive(t.url, next, rate, warmS);
        if (t.admin !== null) cache0 = await cacheCounts(t.admin);
        const up0 = await nodeReads(ready.node);
        const cpu0 = t.proc.cpuSeconds();
        const tree0 = treeCpuSeconds();
        const busy0 = machineBusySeconds();
        const w0 = performance.now();
        const r = await drive(t.url, next, rate, seconds);
        const wall = (performance.now() - w0) / 1000;
        const cpu = t.proc.cpuSeconds() - cpu0 - (t.proc === cluster.proc ? nodeBackgroundCores * wall : 0);
        const other = Math.max(0, machineBusySeconds() - busy0 - (treeCpuSeconds() - tree0)) / wall;
        const up = (await nodeReads(ready.node)) - up0;
        if (t.admin !== null) {
          // The data planes report their counts every 50 ms.
          await new Promise((res) => setTimeout(res, 200));
          const cache1 = await cacheCounts(t.admin);
          cacheDelta.hits += cache1.hits - cache0!.hits;
          for (const [k, v] of Object.entries(cache1.misses)) cacheDelta.misses[k] = (cacheDelta.misses[k] ?? 0) + v - (cache0!.misses[k] ?? 0);
          cacheDelta.buckets0.push(cache0!);
          cacheDelta.buckets1.push(cache1);
        }
        const checked = await checkSamples(cluster.child, r.samples);
        for (const e of checked.examples) o.log(`  STALE ${t.name}: ${e}`);
        const a = acc.get(t.name)!;
        a.lat.push(...r.latencies);
        a.reads += r.latencies.length;
        a.errors += r.errors;
        a.cpu += cpu;
        a.up += up;
        a.checked += checked.checked;
        a.stale += checked.stale;
        a.other.push(other);
        const sorted = [...r.latencies].sort((x, y) => x - y);
        o.log(
          `  cache round ${round} ${t.name}: p50 ${percentile(sorted, 0.5).toFixed(2)} ms, p99 ${percentile(sorted, 0.99).toFixed(2)} ms, errors ${r.errors}, upstream ${up}, stale ${checked.stale}/${checked.checked}`,
        );
      }
    }
    const rows: CacheRow[] = targets.map((t, ti) => {
      const a = acc.get(t.name)!;
      const sorted = a.lat.sort((x, y) => x - y);
      const isCache = t.name === CACHE_ROW;
      const lookups = cacheDelta.hits + Object.values(cacheDelta.misses).reduce((x, y) => x + y, 0);
      // The histogram's growth over every measured window of the cache row, merged.
      const merged = (side: CacheCounts[]): CacheCounts => ({
        hits: 0,
        misses: {},
        keys: 0,
        buckets: side[0]!.buckets.map(([le], i) => [le, side.reduce((s, c) => s + c.buckets[i]![1], 0)]),
      });
      return {
        target: t.name,
        skipped: null,
        reads: a.reads,
        errors: a.errors,
        p50Ms: percentile(sorted, 0.5),
        p99Ms: percentile(sorted, 0.99),
        cpuMsPer1k: a.reads > 0 ? (a.cpu * 1e6) / a.reads : null,
        upstreamPer1k: a.reads > 0 ? (a.up * 1000) / a.reads : null,
        hitSharePct: isCache && lookups > 0 ? (100 * cacheDelta.hits) / lookups : null,
        misses: isCache ? cacheDelta.misses : null,
        visibleP50Ms: isCache ? quantileMs(merged(cacheDelta.buckets0), merged(cacheDelta.buckets1), 0.5) : null,
        visibleP99Ms: isCache ? quantileMs(merged(cacheDelta.buckets0), merged(cacheDelta.buckets1), 0.99) : null,
        visibleBuckets: isCache
          ? merged(cacheDelta.buckets1).buckets.map(([le, n], i) => [le === Infinity ? null : le, n - merged(cacheDelta.buckets0).buckets[i]![1]])
          : null,
        checked: a.checked,
        stale: a.stale,
        idleCores: idle[ti]!,
        otherCores: a.other.reduce((x, y) => x + y, 0) / Math.max(1, a.other.length),
      };
    });
    if (nginx === null) rows.push({ ...emptyRow('nginx (1 worker, keep-alive upstream)'), skipped: nginxSkipped });
    const direct = rows[0]!;
    const off = rows[1]!;
    const on = rows[2]!;
    return {
      slotMs: SLOT_MS,
      hot: HOT,
      cold: COLD,
      coldEverySlots: COLD_EVERY,
      rate,
      seconds,
      rounds,
      nodeBackgroundCores,
      rows,
      ratios: {
        p50CacheOverDirect: on.p50Ms / direct.p50Ms,
        p99CacheMinusDirectMs: on.p99Ms - direct.p99Ms,
        hitSharePct: on.hitSharePct ?? 0,
        upstreamFewerPct: 100 * (1 - (on.upstreamPer1k ?? 0) / (off.upstreamPer1k ?? 1)),
        visibleP99Ms: on.visibleP99Ms,
      },
    };
  } finally {
    for (const stop of stops) await stop();
  }
}

function emptyRow(target: string): CacheRow {
  return {
    target,
    skipped: null,
    reads: 0,
    errors: 0,
    p50Ms: NaN,
    p99Ms: NaN,
    cpuMsPer1k: null,
    upstreamPer1k: null,
    hitSharePct: null,
    misses: null,
    visibleP50Ms: null,
    visibleP99Ms: null,
    visibleBuckets: null,
    checked: 0,
    stale: 0,
    idleCores: null,
    otherCores: 0,
  };
}

const f = (x: number | null, d = 2): string => (x === null || Number.isNaN(x) ? '–' : x === Infinity ? '> 50' : x.toFixed(d));

export function cacheTable(r: CacheBenchResult): string {
  const lines = [
    `**Account cache: ${HOT} accounts written every slot, ${r.cold.toLocaleString('en-US')} each once every ${r.coldEverySlots} slots (${r.slotMs} ms slots); ` +
      `getAccountInfo base64 / getBalance / getMultipleAccounts of 10 at processed and confirmed, ${Math.round(HOT_SHARE * 100)}% on the hot keys, ` +
      `open loop at ${r.rate.toLocaleString('en-US')} reads/s** (${r.rounds} round${r.rounds > 1 ? 's' : ''} × ${r.seconds} s per row, alternating)`,
    '',
    '| target | reads | errors | p50 / p99 ms | CPU ms per 1,000 reads | node reads per 1,000 | hits | update→visible p50 / p99 ms | stale / checked | idle cores | other cores |',
    '|---|---:|---:|---|---:|---:|---:|---|---|---:|---:|',
  ];
  for (const row of r.rows) {
    if (row.skipped !== null) {
      lines.push(`| ${row.target} | skipped: ${row.skipped} ||||||||||`);
      continue;
    }
    const hits = row.hitSharePct === null ? '–' : `${row.hitSharePct.toFixed(1)}%`;
    const visible = row.visibleP50Ms === null ? '–' : `${f(row.visibleP50Ms, 3)} / ${f(row.visibleP99Ms, 3)}`;
    lines.push(
      `| ${row.target} | ${row.reads.toLocaleString('en-US')} | ${row.errors} | ${f(row.p50Ms)} / ${f(row.p99Ms)} | ${f(row.cpuMsPer1k, 1)} | ${f(row.upstreamPer1k, 0)} | ${hits} | ${visible} | ${row.stale} / ${row.checked} | ${f(row.idleCores, 2)} | ${f(row.otherCores, 2)} |`,
    );
  }
  const q = r.ratios;
  const misses = r.rows.find((x) => x.target === CACHE_ROW)?.misses ?? {};
  lines.push(
    '',
    `cache p50 ÷ direct p50: ${f(q.p50CacheOverDirect)} (goal ≤ 0.33); cache p99 − direct p99: ${f(q.p99CacheMinusDirectMs)} ms (goal < 0); ` +
      `hits ${f(q.hitSharePct, 1)}% (goal ≥ 95%); node reads ${f(q.upstreamFewerPct, 1)}% fewer than cache off (goal ≥ 90%); ` +
      `update→visible p99 ${f(q.visibleP99Ms, 3)} ms (goal ≤ 2 ms).`,
    `Cache misses by reason: ${JSON.stringify(misses)}. Direct row's CPU: the node process net of its ${f(r.nodeBackgroundCores, 2)} cores with no reads (slots, writer, gRPC streams).`,
  );
  return lines.join('\n');
}
