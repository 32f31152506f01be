// `floor`: what a request costs a server that does no work at all, to read S1's CPU column
// against. Three servers answer every POST with a fixed body: uWebSockets.js with only the
// calls any handler needs (floor-server.ts `bare`), the same plus the request reads jumpgate
// makes on every request (`reads`), and nginx (one worker) with `return 200`. Measured as
// S1 is (the project's generator, closed loop, 50 connections, alternating rounds); CPU per
// request from each server's own CPU time. What jumpgate spends over the uWS.js floor is its
// proxy work; what nginx spends over its own static answer is nginx's. The same bare server on
// two threads sharing the port and nginx with two workers are the floor under S7's two
// workers: what two event loops on these two shared cores cost before any work.

import { spawn } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { generate } from './load.js';
import { peerMissing } from './peers.js';
import { freePort, proc, waitFor, waitForPort, type Proc } from './procs.js';

const SERVER = new URL('./floor-server.js', import.meta.url).pathname;

const FLOOR_2_UWS = 'uWS.js, bare handler, 2 threads on one port';
const FLOOR_2_NGINX = 'nginx, return 200, worker_processes 2';

export interface FloorRow {
  target: string;
  /** Server threads or worker processes. */
  workers: number;
  /** Why it did not run, or null. */
  skipped: string | null;
  throughput: number;
  /** CPU microseconds of the server per answered request, all rounds. */
  cpuUsPerRequest: number | null;
}

export interface FloorResult {
  rounds: number;
  seconds: number;
  rows: FloorRow[];
}

interface Server extends Proc {
  url: string;
}

async function startUws(mode: 'bare' | 'reads', threads = 1): Promise<Server> {
  const port = await freePort();
  const child = spawn(process.execPath, [SERVER, String(port), mode, String(threads)], { stdio: ['ignore', 'pipe', 'pipe'] });
  if (threads > 1) await waitFor(child, /listening/, `floor server ${mode} ×${threads}`);
  else await waitForPort(child, port, `floor server ${mode}`);
  return { ...proc(child), url: `http://127.0.0.1:${port}/` };
}

async function startNginxStatic(workers = 1): Promise<Server> {
  const port = await freePort();
  const prefix = mkdtempSync(join(tmpdir(), 'jumpgate-floor-nginx-'));
  mkdirSync(join(prefix, 'logs'));
  // The bench-peers template's global settings, with a fixed answer instead of proxy_pass.
  const conf = [
    'daemon off;',
    `worker_processes ${workers};`,
    'pid nginx.pid;',
    'error_log logs/error.log warn;',
    'events { worker_connections 8192; }',
    'http {',
    '  access_log off;',
    '  client_body_temp_path tmp_body; proxy_temp_path tmp_proxy;',
    '  fastcgi_temp_path tmp_fcgi; uwsgi_temp_path tmp_uwsgi; scgi_temp_path tmp_scgi;',
    `  server { listen 127.0.0.1:${port}; location / { default_type application/json; return 200 '{"jsonrpc":"2.0","result":123456789,"id":1}'; } }`,
    '}',
  ].join('\n');
  writeFileSync(join(prefix, 'nginx.conf'), conf);
  chmodSync(prefix, 0o755);
  const child = spawn('nginx', ['-p', prefix, '-c', join(prefix, 'nginx.conf')], { stdio: ['ignore', 'pipe', 'pipe'] });
  await waitForPort(child, port, 'nginx');
  const p = proc(child, 'SIGQUIT');
  return {
    ...p,
    url: `http://127.0.0.1:${port}/`,
    stop: async () => {
      await p.stop();
      rmSync(prefix, { recursive: true, force: true });
    },
  };
}

export async function runFloor(o: { quick: boolean; log?: (line: string) => void }): Promise<FloorResult> {
  const rounds = o.quick ? 1 : 2;
  const seconds = o.quick ? 0.5 : 5;
  const warmup = o.quick ? '200ms' : '1s';
  const named: [string, number, () => Promise<Server>][] = [
    ['uWS.js, bare handler', 1, () => startUws('bare')],
    ['uWS.js, with jumpgate’s request reads', 1, () => startUws('reads')],
  ];
  const rows: FloorRow[] = [];
  const nginxMissing = await peerMissing('nginx');
  if (nginxMissing === null) named.push(['nginx, return 200', 1, () => startNginxStatic()]);
  named.push([FLOOR_2_UWS, 2, () => startUws('bare', 2)]);
  if (nginxMissing === null) named.push([FLOOR_2_NGINX, 2, () => startNginxStatic(2)]);
  const servers: { name: string; workers: number; server: Server; cpu: number; answered: number; tp: number[] }[] = [];
  try {
    for (const [name, workers, start] of named) servers.push({ name, workers, server: await start(), cpu: 0, answered: 0, tp: [] });
    for (let round = 1; round <= rounds; round++) {
      for (const s of servers) {
        const cpu0 = s.server.cpuSeconds();
        const r = await generate(['--url', s.server.url, '--closed', '--connections', '50', '--duration', `${seconds}s`, '--warmup', warmup]);
        s.cpu += s.server.cpuSeconds() - cpu0;
        s.answered += r.allAnswered;
        s.tp.push(r.throughput);
        o.log?.(`  floor round ${round} ${s.name}: ${Math.round(r.throughput).toLocaleString('en-US')} req/s`);
      }
    }
  } finally {
    await Promise.all(servers.map((s) => s.server.stop()));
  }
  for (const s of servers) {
    rows.push({
      target: s.name,
      workers: s.workers,
      skipped: null,
      throughput: s.tp.reduce((a, b) => a + b, 0) / s.tp.length,
      cpuUsPerRequest: s.answered > 0 ? (s.cpu / s.answered) * 1e6 : null,
    });
  }
  if (nginxMissing !== null) {
    rows.push({ target: 'nginx, return 200', workers: 1, skipped: nginxMissing, throughput: 0, cpuUsPerRequest: null });
    rows.push({ target: FLOOR_2_NGINX, workers: 2, skipped: nginxMissing, throughput: 0, cpuUsPerRequest: null });
  }
  return { rounds, seconds, rows };
}

export function floorTable(r: FloorResult): string {
  // Each server against nginx with as many workers (results from before the 2-worker rows have no `workers`: 1).
  const nginxCpu = (workers: number): number | null =>
    r.rows.find((x) => x.target.startsWith('nginx') && (x.workers ?? 1) === workers && x.cpuUsPerRequest !== null)?.cpuUsPerRequest ?? null;
  const lines = [
    `**Floor: a fixed answer, no work** (${r.rounds} rounds × ${r.seconds} s per server, alternating; closed loop, 50 connections)`,
    '',
    '| server | req/s | CPU µs / request | × nginx |',
    '|---|---:|---:|---:|',
  ];
  for (const x of r.rows) {
    if (x.skipped !== null) {
      lines.push(`| ${x.target} | skipped: ${x.skipped} | | |`);
      continue;
    }
    const cpu = x.cpuUsPerRequest;
    const nginx = nginxCpu(x.workers ?? 1);
    lines.push(
      `| ${x.target} | ${Math.round(x.throughput).toLocaleString('en-US')} | ${cpu === null ? '-' : cpu.toFixed(2)} | ${cpu === null || nginx === null ? '-' : (cpu / nginx).toFixed(2) + '×'} |`,
    );
  }
  lines.push(
    '',
    '- × nginx: CPU per request over nginx’s with as many workers (1 or 2) in the same run; the 2-worker rows share two cores with the load generator, as S7 does',
  );
  return lines.join('\n');
}
