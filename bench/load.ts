// HTTP load for the scenarios: the project's own load generator (src/bench, what
// `jumpgate bench` runs) in a child process per measurement, so the runner's own event loop
// and heap never share a core with it, and each target meets an equally fresh client.
// wrk, when installed, cross-checks the closed-loop throughput of S1.

import { execFile, spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { HttpLoadResult } from '../src/tools/loadgen/http-load.js';

const run = promisify(execFile);
const GENERATOR = new URL('../src/tools/loadgen/main.js', import.meta.url).pathname;

/** Runs `jumpgate bench ARGS --json --quiet` and returns its result. */
export function generate(args: string[]): Promise<HttpLoadResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [GENERATOR, ...args, '--json', '--quiet'], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    child.once('exit', (code) => {
      // Exit 1 (nothing answered) still prints a result worth recording.
      try {
        resolve(JSON.parse(out) as HttpLoadResult);
      } catch {
        reject(new Error(`load generator exited with ${code}: ${(err || out).slice(-500)}`));
      }
    });
  });
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

/** wrk -t1 closed loop: requests per second, or null when it failed. */
export async function wrkRps(url: string, body: string, headers: Record<string, string>, connections: number, seconds: number): Promise<number | null> {
  const script = join(tmpdir(), `jumpgate-wrk-${process.pid}.lua`);
  const all = { 'Content-Type': 'application/json', ...headers };
  writeFileSync(
    script,
    `wrk.method = "POST"\nwrk.body = ${JSON.stringify(body)}\n` +
      Object.entries(all)
        .map(([k, v]) => `wrk.headers[${JSON.stringify(k)}] = ${JSON.stringify(v)}`)
        .join('\n') +
      '\n',
  );
  try {
    const { stdout } = await run('wrk', ['-t1', `-c${connections}`, `-d${seconds}s`, '-s', script, url]);
    const rps = /Requests\/sec:\s+([\d.]+)/.exec(stdout);
    return rps ? Number(rps[1]) : null;
  } catch {
    return null;
  }
}
