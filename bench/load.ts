// Closed-loop HTTP load for the benchmark scenarios: wrk when installed (a C client costs the
// two shared cores least), else an undici client in a child process.

import { execFile, spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

export interface LoadResult {
  tool: string;
  requests: number;
  errors: number;
  rps: number;
  p50Ms: number;
  p99Ms: number;
}

export interface LoadSpec {
  url: string;
  body: string;
  headers?: Record<string, string>;
  connections: number;
  seconds: number;
}

export async function hasWrk(): Promise<boolean> {
  try {
    await run('wrk', ['--version']).catch((e: { stdout?: string }) => {
      if (!e.stdout?.includes('wrk')) throw e;
    });
    return true;
  } catch {
    return false;
  }
}

function ms(text: string | undefined): number {
  if (text === undefined) return NaN;
  const m = /([\d.]+)(us|ms|s)/.exec(text);
  if (!m) return NaN;
  const v = Number(m[1]);
  return m[2] === 'us' ? v / 1000 : m[2] === 's' ? v * 1000 : v;
}

async function wrk(spec: LoadSpec): Promise<LoadResult> {
  const script = join(tmpdir(), `jumpgate-wrk-${process.pid}.lua`);
  const headers = { 'Content-Type': 'application/json', ...(spec.headers ?? {}) };
  writeFileSync(
    script,
    `wrk.method = "POST"\nwrk.body = ${JSON.stringify(spec.body)}\n` + Object.entries(headers).map(([k, v]) => `wrk.headers[${JSON.stringify(k)}] = ${JSON.stringify(v)}`).join('\n') + '\n',
  );
  const { stdout } = await run('wrk', ['-t1', `-c${spec.connections}`, `-d${spec.seconds}s`, '--latency', '-s', script, spec.url]);
  const total = /(\d+) requests in/.exec(stdout);
  const non2xx = /Non-2xx or 3xx responses: (\d+)/.exec(stdout);
  const sockErr = /Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/.exec(stdout);
  const requests = total ? Number(total[1]) : 0;
  const errors = (non2xx ? Number(non2xx[1]) : 0) + (sockErr ? Number(sockErr[1]) + Number(sockErr[2]) + Number(sockErr[3]) + Number(sockErr[4]) : 0);
  return {
    tool: 'wrk',
    requests,
    errors,
    rps: Number(/Requests\/sec:\s+([\d.]+)/.exec(stdout)?.[1] ?? 0),
    p50Ms: ms(/ 50%\s+(\S+)/.exec(stdout)?.[1]),
    p99Ms: ms(/ 99%\s+(\S+)/.exec(stdout)?.[1]),
  };
}

const UNDICI_LOADER = `
import { Pool } from 'undici';
const spec = JSON.parse(process.argv[1]);
const u = new URL(spec.url);
const pool = new Pool(u.origin, { connections: spec.connections, pipelining: 1 });
const headers = { 'content-type': 'application/json', ...(spec.headers || {}) };
const lat = [];
let requests = 0, errors = 0;
const end = Date.now() + spec.seconds * 1000;
async function worker() {
  while (Date.now() < end) {
    const t = performance.now();
    try {
      const r = await pool.request({ path: u.pathname + u.search, method: 'POST', headers, body: spec.body });
      await r.body.arrayBuffer();
      if (r.statusCode !== 200) errors++;
    } catch { errors++; }
    requests++;
    if (lat.length < 200000) lat.push(performance.now() - t);
  }
}
const t0 = Date.now();
await Promise.all(Array.from({ length: spec.connections }, worker));
const secs = (Date.now() - t0) / 1000;
lat.sort((a, b) => a - b);
console.log(JSON.stringify({ tool: 'undici', requests, errors, rps: requests / secs, p50Ms: lat[Math.floor(lat.length * 0.5)], p99Ms: lat[Math.floor(lat.length * 0.99)] }));
await pool.close();
`;

async function undiciLoad(spec: LoadSpec): Promise<LoadResult> {
  const child = spawn(process.execPath, ['--input-type=module', '-e', UNDICI_LOADER, JSON.stringify(spec)], { stdio: ['ignore', 'pipe', 'inherit'], cwd: new URL('../../', import.meta.url).pathname });
  let out = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  await new Promise((r) => child.once('exit', r));
  return JSON.parse(out) as LoadResult;
}

export async function closedLoop(spec: LoadSpec): Promise<LoadResult> {
  return (await hasWrk()) ? wrk(spec) : undiciLoad(spec);
}
