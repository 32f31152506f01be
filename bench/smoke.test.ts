// Smoke test of the scenario runner: `npm run bench -- s1 … s6 --quick`, then `isolation s7`, the call scenarios, `freshness --quick` and `grpc --quick` (a second or so per
// target) writing to a temporary results file. No assertion on speed: only that every
// scenario produced its rows, skipped peers say why in the printed tables, and the JSON was
// written.

import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { PLAIN_ROW } from './freshness.js';
import { NODE_LISTENER } from './http-scenarios.js';
import type { GrpcBenchResult } from './grpc.js';
import { REDUNDANT } from './ws-fanout-peers.js';

const RUNNER = new URL('./run.js', import.meta.url).pathname;

// Both runs together take longer than the suite's per-file timeout on 2 shared cores.
t.setTimeout(600_000);

type Test = Parameters<Parameters<typeof t.test>[0]>[0];

/**
 * Runs `npm run bench -- <scenarios> --quick` into a temporary results file: asserts it
 * exited 0, shows its tables in the test output, and returns them and the JSON it wrote.
 */
async function runQuick<R>(t: Test, scenarios: string[]): Promise<{ out: string; results: R }> {
  const dir = mkdtempSync(join(tmpdir(), 'jumpgate-bench-smoke-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const file = join(dir, 'results.json');
  const child = spawn(process.execPath, [RUNNER, ...scenarios, '--quick', '--results', file], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (err += d.toString()));
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  // The tables (skipped peers included, with the reason) show in the test output.
  t.comment(out);
  if (code !== 0) t.comment(err.slice(-4000));
  t.equal(code, 0, 'runner exited 0');
  return { out, results: JSON.parse(readFileSync(file, 'utf8')) as R };
}

interface Row {
  target: string;
  skipped: string | null;
  latencyMs?: { count: number } | null;
  delayMs?: { count: number; p99: number } | null;
  subscribed?: number;
  missing?: number;
  upstreamSubscriptions?: number | null;
  throughput?: number;
  p99OverDirectMs?: number | null;
  p99OverOneNodeMs?: number | null;
}

t.test('npm run bench -- s1..s6 floor --quick: a row per target in every scenario, JSON written', { timeout: 240_000 }, async (t) => {
  const { out, results } = await runQuick<Record<string, { targets?: Row[]; error?: string }>>(t, ['s1', 's2', 's3', 's4', 's5', 's6', 'floor']);

  t.ok(results.setup, 'setup recorded');
  for (const id of ['s1', 's2', 's3', 's4', 's5']) {
    const s = results[id];
    t.notOk(s?.error, `${id} did not fail`);
    const rows = s?.targets ?? [];
    const names = rows.map((r) => r.target);
    t.ok(names.includes('direct to nodes') && names.includes('jumpgate'), `${id}: direct and jumpgate rows (${names.join(', ')})`);
    t.ok(names.includes('nginx') && names.includes('haproxy'), `${id}: a row for each peer, run or skipped`);
    for (const r of rows) {
      if (r.skipped !== null) {
        t.match(out, new RegExp(`\\| ${r.target} \\| skipped: `), `${id}: skipped ${r.target} is noted in the printed table (${r.skipped})`);
        continue;
      }
      t.ok(r.latencyMs !== null && r.latencyMs!.count > 0 && r.throughput! > 0, `${id} ${r.target}: measured`);
    }
  }
  // Node's listener beside uWS's, in every HTTP scenario (docs/runtimes.md "Speed").
  for (const id of ['s1', 's2']) {
    t.ok(
      results[id]!.targets!.some((r) => r.target === NODE_LISTENER && r.skipped === null && r.throughput! > 0),
      `${id} has the node listener row, measured`,
    );
  }
  t.ok(
    results.s4!.targets!.some((r) => r.target === 'jumpgate, node mode' && r.skipped === null),
    's4 has the node-mode row',
  );
  // The runner checks the gateway's reload log names routing.upstreamBatch, or fails s4.
  t.ok(
    results.s4!.targets!.some((r) => r.target === 'jumpgate, upstreamBatch 50' && r.skipped === null && r.throughput! > 0),
    's4 has the split row',
  );
  const floor = results.floor as unknown as { rows?: { target: string; skipped: string | null; cpuUsPerRequest: number | null }[]; error?: string };
  t.notOk(floor?.error, 'floor did not fail');
  const floorRows = floor?.rows ?? [];
  t.same(
    floorRows.map((r) => r.target),
    [
      'uWS.js, bare handler',
      'uWS.js, with jumpgate’s request reads',
      'nginx, return 200',
      'uWS.js, bare handler, 2 threads on one port',
      'nginx, return 200, worker_processes 2',
    ],
    'floor: both uWS.js servers and nginx (run or skipped), then both on two workers',
  );
  for (const r of floorRows) {
    if (r.skipped !== null) t.match(out, new RegExp(`\\| ${r.target} \\| skipped: `), `floor: skipped ${r.target} is noted`);
    else t.ok(r.cpuUsPerRequest !== null && r.cpuUsPerRequest > 0, `floor ${r.target}: CPU per request measured`);
  }
  t.match(out, /Floor: a fixed answer, no work/, 'floor table printed');
  const ws = results.s6?.targets ?? [];
  t.notOk(results.s6?.error, 's6 did not fail');
  const gw = ws.find((r) => r.target === 'jumpgate');
  const nodeListener = ws.find((r) => r.target === NODE_LISTENER);
  t.ok(nodeListener !== undefined && nodeListener.subscribed! > 0 && nodeListener.delayMs!.count > 0, 's6: the node listener row, measured');
  t.ok(gw !== undefined && gw.subscribed! > 0 && gw.delayMs!.count > 0, 's6: jumpgate clients subscribed and notifications measured');
  const direct = ws[0];
  t.ok(direct?.target === 'direct to nodes' && direct.subscribed! > 0 && direct.delayMs!.count > 0, 's6: the direct row first, measured');
  t.equal(gw?.p99OverDirectMs, gw!.delayMs!.p99 - direct!.delayMs!.p99, 's6: jumpgate p99 over direct');
  const one = ws[1];
  t.ok(
    one?.target === 'direct to one node' && one.subscribed === direct!.subscribed && one.delayMs!.count > 0,
    's6: the one-node direct row second, every client on one node',
  );
  t.equal(gw?.p99OverOneNodeMs, gw!.delayMs!.p99 - one!.delayMs!.p99, 's6: jumpgate p99 over one node');
  t.match(out, /\| direct to one node \(the limit\) \|/, 's6: the one-node row printed');
  const redundant = ws.find((r) => r.target === REDUNDANT);
  t.ok(redundant !== undefined && redundant.subscribed! > 0 && redundant.delayMs!.count > 0, 's6: the ws.redundancy 2 row measured');
  t.equal(redundant?.upstreamSubscriptions, 2, 's6: with ws.redundancy 2 the one shared subscription is held on both nodes');
  t.equal(redundant?.missing, 0, 's6: nothing missing with ws.redundancy 2');
  t.ok(
    ws.some((r) => r.target === 'nginx'),
    's6: an nginx row, run or skipped',
  );
  t.match(out, /\*\*S1: single getSlot/, 'S1 table printed');
  t.match(out, /\*\*S6: /, 'S6 table printed');
  t.match(out, /results written to /);
});

t.test('npm run bench -- isolation s7 --quick: every row measured or skipped with a reason', { timeout: 180_000 }, async (t) => {
  const { out, results } = await runQuick<Record<string, { rows?: Record<string, unknown>[]; error?: string }>>(t, ['isolation', 's7']);

  t.notOk(results.isolation?.error, 'isolation did not fail');
  const iso = (results.isolation?.rows ?? []) as {
    workers: number;
    viewer: boolean;
    latencyMs: { count: number };
    refreshes: number;
    addedP99Ms: number | null;
  }[];
  t.same(
    iso.map((r) => [r.workers, r.viewer]),
    [
      [1, false],
      [1, true],
      [0, false],
      [0, true],
    ],
    'isolation: rpc.workers 1 and 0, each without and with the viewer',
  );
  for (const r of iso) {
    t.ok(r.latencyMs.count > 0, `isolation workers ${r.workers} viewer ${r.viewer}: measured`);
    if (r.viewer) {
      t.ok(r.refreshes > 0, `isolation workers ${r.workers}: the viewer's analytics refreshes answered`);
      t.type(r.addedP99Ms, 'number', 'added p99 over the run without the viewer');
    }
  }
  t.match(out, /\*\*Isolation: /, 'isolation table printed');

  t.notOk(results.s7?.error, 's7 did not fail');
  const s7 = (results.s7?.rows ?? []) as { target: string; skipped: string | null; throughput: number; cpuPer1k: number | null }[];
  t.same(
    s7.map((r) => r.target),
    ['jumpgate, rpc.workers 1', 'jumpgate, rpc.workers 2', 'nginx, worker_processes 1', 'nginx, worker_processes 2'],
    's7: both gateways and both nginx rows (run or skipped)',
  );
  for (const r of s7) {
    if (r.skipped !== null) t.match(out, new RegExp(`\\| ${r.target} \\| skipped: `), `s7: skipped ${r.target} is noted (${r.skipped})`);
    else t.ok(r.throughput > 0 && r.cpuPer1k !== null && r.cpuPer1k > 0, `s7 ${r.target}: req/s and CPU measured`);
  }
  t.ok(
    s7.slice(0, 2).every((r) => r.skipped === null),
    's7: the jumpgate rows always run',
  );
  t.match(out, /\*\*S7: /, 'S7 table printed');
});

t.test('npm run bench -- hedge coalesce broadcast --quick: each table measured', { timeout: 180_000 }, async (t) => {
  const { out, results } = await runQuick<Record<string, { rows?: { clientCalls?: number; upstreamCalls?: number }[]; error?: string }>>(t, [
    'hedge',
    'coalesce',
    'broadcast',
  ]);
  for (const [name, rows] of [
    ['hedge', 5],
    ['coalesce', 3],
    ['broadcast', 5],
  ] as const) {
    t.notOk(results[name]?.error, `${name} did not fail`);
    t.equal(results[name]?.rows?.length, rows, `${name}: every row`);
  }
  const coalesce = results.coalesce!.rows!;
  t.ok(coalesce[1]!.upstreamCalls! < coalesce[0]!.upstreamCalls!, 'coalescing sends fewer upstream calls');
  t.match(out, /\*\*Hedged reads: /);
  t.match(out, /\*\*Coalescing: /);
  t.match(out, /\*\*Broadcast: /);
});

t.test('npm run bench -- landing --quick: every path measured or skipped with a reason', { timeout: 180_000 }, async (t) => {
  const { out, results } = await runQuick<{
    landing?: { paths?: { path: string; sent: number; landedPct: number; skipped: string | null }[]; error?: string };
  }>(t, ['landing']);
  t.notOk(results.landing?.error, 'landing did not fail');
  const paths = results.landing?.paths ?? [];
  t.equal(paths.length, 4, 'jumpgate three ways and nginx');
  for (const p of paths) t.ok(p.skipped !== null || (p.sent > 0 && p.landedPct > 0), `${p.path}: measured (${p.landedPct}% landed) or skipped`);
  t.match(out, /Transactions that land/);
});

t.test('npm run bench -- freshness --quick: no -32016 or BlockhashNotFound through jumpgate, both direct', { timeout: 120_000 }, async (t) => {
  const { out, results } = await runQuick<Record<string, { rows?: Record<string, unknown>[]; error?: string }>>(t, ['freshness']);
  t.notOk(results.freshness?.error, 'freshness did not fail');
  const rows = (results.freshness?.rows ?? []) as {
    target: string;
    skipped: string | null;
    calls: number;
    sends: number;
    minContextPer10k: number;
    blockhashNotFoundPer10k: number;
    cpuUsPerCall: number | null;
  }[];
  t.same(
    rows.map((r) => r.target),
    ['direct to a random node', 'jumpgate, default routing', PLAIN_ROW, 'jumpgate, key affinity', 'nginx round-robin'],
    'every path, nginx run or skipped',
  );
  for (const r of rows) {
    if (r.skipped !== null) {
      t.match(out, new RegExp(`\\| ${r.target} \\| skipped: `), `skipped ${r.target} is noted (${r.skipped})`);
      continue;
    }
    t.ok(r.calls > 0 && r.sends > 0, `${r.target}: reads and sends measured`);
    if (r.target === PLAIN_ROW) t.ok(r.cpuUsPerCall !== null && r.cpuUsPerCall > 0, `${r.target}: CPU per call`);
    else if (r.target.startsWith('jumpgate')) {
      t.equal(r.minContextPer10k, 0, `${r.target}: no -32016`);
      t.equal(r.blockhashNotFoundPer10k, 0, `${r.target}: no BlockhashNotFound`);
      t.ok(r.cpuUsPerCall !== null && r.cpuUsPerCall > 0, `${r.target}: CPU per call`);
    }
  }
  const direct = rows[0]!;
  t.ok(direct.minContextPer10k > 0 && direct.blockhashNotFoundPer10k > 0, 'direct to a random node meets both (the nodes behind)');
  t.match(out, /\*\*Freshness: /, 'freshness table printed');
});

t.test('npm run bench -- grpc --quick: every path measured, nothing missing or twice, the floor measured', { timeout: 90_000 }, async (t) => {
  const { out, results } = await runQuick<{ grpc?: GrpcBenchResult & { error?: string } }>(t, ['grpc']);
  const g = results.grpc;
  t.notOk(g?.error, 'grpc did not fail');
  t.equal(g?.paths.length, 4, 'both sources, the earlier of the two and the probe through jumpgate');
  for (const p of g?.paths ?? []) t.ok(p.updates > 0 && p.delayP50Ms > 0, `${p.path}: measured`);
  t.same([g?.missing, g?.duplicated], [0, 0], 'nothing missing or twice');
  t.equal(g?.floor.streams, g?.subscribers, 'the floor writes to as many streams as there were subscribers');
  t.ok(g !== undefined && g.floor.cpuUsPerWrite > 0 && g.floor.passMs > 0 && g.floor.bytes > 0, 'the floor: CPU per write and time per pass');
  t.match(out, /The floor: a bare node:http2 server writing a \d+-byte message to each of 20 streams/, 'the floor printed');
});
