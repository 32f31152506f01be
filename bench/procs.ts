// Child processes for benchmarks: simulated nodes and gateways each in their own process, so
// the load generator, the proxy and the nodes do not share an event loop.

import { spawn, type ChildProcess } from 'node:child_process';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '../test/helpers/ports.js';

const CLI = new URL('../src/cli/main.js', import.meta.url).pathname;

// The tests' helper: one way to pick a port for a process started next.
export { freePort };

export interface Proc {
  child: ChildProcess;
  /** User+system CPU seconds so far (from /proc), the process and its live children. */
  cpuSeconds(): number;
  /** Resident set size in bytes now (the process and its live children). */
  rssBytes(): number;
  /** Peak resident set size in bytes (VmHWM, summed over the process and its live children). */
  peakRssBytes(): number;
  stop(): Promise<void>;
}

function pidsOf(pid: number): number[] {
  // Direct children only (nginx's workers); threads are not children.
  try {
    const kids = readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim();
    return [pid, ...(kids === '' ? [] : kids.split(/\s+/).map(Number))];
  } catch {
    return [pid];
  }
}

function statusKb(pid: number, field: string): number {
  try {
    const m = new RegExp(`${field}:\\s+(\\d+) kB`).exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) : 0;
  } catch {
    return 0;
  }
}

function cpuOf(pid: number): number {
  try {
    const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    return Number(f[11]) + Number(f[12]);
  } catch {
    return 0;
  }
}

export function proc(child: ChildProcess, stopSignal: NodeJS.Signals = 'SIGTERM'): Proc {
  const pid = child.pid!;
  const ticks = 100; // USER_HZ on Linux
  return {
    child,
    cpuSeconds() {
      return pidsOf(pid).reduce((a, p) => a + cpuOf(p), 0) / ticks;
    },
    rssBytes() {
      return pidsOf(pid).reduce((a, p) => a + statusKb(p, 'VmRSS'), 0) * 1024;
    },
    peakRssBytes() {
      return pidsOf(pid).reduce((a, p) => a + statusKb(p, 'VmHWM'), 0) * 1024;
    },
    stop() {
      return new Promise((resolve) => {
        if (child.exitCode !== null || child.signalCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill(stopSignal);
        setTimeout(() => child.kill('SIGKILL'), 5000).unref();
      });
    },
  };
}

/** Resolves once the process printed `ready` on stdout or stderr. */
export function waitFor(child: ChildProcess, ready: RegExp, what: string): Promise<void> {
  return new Promise((resolve, reject) => {
    let out = '';
    const on = (d: Buffer): void => {
      out += d.toString();
      if (ready.test(out)) resolve();
    };
    child.stdout?.on('data', on);
    child.stderr?.on('data', on);
    child.once('exit', (code) => reject(new Error(`${what} exited with ${code}: ${out.slice(-500)}`)));
  });
}

/** Polls until something accepts connections on the port (or the process exits). */
export async function waitForPort(child: ChildProcess, port: number, what: string): Promise<void> {
  let err = '';
  child.stderr?.on('data', (d: Buffer) => (err += d.toString()));
  for (let i = 0; i < 200; i++) {
    if (child.exitCode !== null) throw new Error(`${what} exited with ${child.exitCode}: ${err.slice(-500)}`);
    const ok = await new Promise<boolean>((resolve) => {
      const s = connect(port, '127.0.0.1', () => {
        s.destroy();
        resolve(true);
      });
      s.on('error', () => resolve(false));
    });
    if (ok) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`${what} did not listen on ${port}`);
}

/** Both nodes as one target ("direct to nodes"): their CPU and memory added up; stop() leaves them running. */
export function bothNodes(sims: Proc[]): Proc {
  return {
    child: sims[0]!.child,
    cpuSeconds: () => sims.reduce((a, s) => a + s.cpuSeconds(), 0),
    rssBytes: () => sims.reduce((a, s) => a + s.rssBytes(), 0),
    peakRssBytes: () => sims.reduce((a, s) => a + s.peakRssBytes(), 0),
    stop: async () => undefined,
  };
}

export async function startSimProc(id: string, args: string[] = []): Promise<Proc & { url: string }> {
  const port = await freePort();
  // Synthetic mode: the benchmarks read deterministic accounts of any key (docs/simulator.md).
  const child = spawn(process.execPath, [CLI, 'sim', '--port', String(port), '--id', id, '--synthetic', ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  await waitFor(child, /listening/, `sim ${id}`);
  return { ...proc(child), url: `http://127.0.0.1:${port}` };
}

/** The byte pump (pump-server.ts) in front of `urls`; `workUs` > 0 makes it spin that long per request. */
export async function startPumpProc(urls: string[], workUs = 0): Promise<Proc & { url: string }> {
  const port = await freePort();
  const work = workUs > 0 ? ['--work-us', String(workUs)] : [];
  const child = spawn(process.execPath, [new URL('./pump-server.js', import.meta.url).pathname, String(port), ...work, ...urls], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  await waitFor(child, /listening/, 'pump server');
  return { ...proc(child), url: `http://127.0.0.1:${port}` };
}

function gatewayYaml(port: number, nodes: { id: string; url: string }[], token: string, extra: string): string {
  return (
    [
      `rpc: { host: 127.0.0.1, port: ${port}, wsPort: 0 }`,
      'console: { port: 0 }',
      'admin: { port: 0 }',
      "store: { url: 'sqlite://:memory:' }",
      // info: the reload's "config reloaded" line (nothing is logged per request at info).
      'log: { level: info }',
      'nodes:',
      ...nodes.map((n) => `  - { id: ${n.id}, url: "${n.url}" }`),
      'tokens:',
      `  - { token: ${token}, stack: bench }`,
      extra,
    ]
      // A top-level key given in `extra` replaces the default line for it.
      .filter((line, i, all) => i === all.length - 1 || !extra.split('\n').some((e) => e.includes(':') && line.startsWith(e.slice(0, e.indexOf(':') + 1))))
      .join('\n')
  );
}

export interface GatewayProc extends Proc {
  url: string;
  /**
   * Rewrites the config file with `extra` in place of the start's extra lines, reloads it
   * (SIGHUP) and resolves with the gateway's "config reloaded" log line.
   */
  reconfigure(extra: string): Promise<string>;
}

/** `args`: extra CLI flags (e.g. `--workers 2`); `cli`: the gateway's entry point, another build's (`--baseline`) to measure two builds side by side. */
/** Node flags for every gateway a scenario starts (JUMPGATE_BENCH_GATEWAY_FLAGS, e.g. `--cpu-prof --cpu-prof-dir=/tmp/p`: a profile of the gateway under the scenario's load). */
const GATEWAY_NODE_FLAGS = (process.env.JUMPGATE_BENCH_GATEWAY_FLAGS ?? '').split(' ').filter((f) => f !== '');

/** `server`: the listener (JUMPGATE_SERVER, docs/runtimes.md); undefined = the runtime's default. */
export async function startGatewayProc(
  nodes: { id: string; url: string }[],
  token: string,
  extra = '',
  args: string[] = [],
  cli = CLI,
  server?: 'uws' | 'node',
): Promise<GatewayProc> {
  const port = await freePort();
  const file = join(tmpdir(), `jumpgate-bench-${process.pid}-${port}.yaml`);
  writeFileSync(file, gatewayYaml(port, nodes, token, extra));
  const env = server === undefined ? process.env : { ...process.env, JUMPGATE_SERVER: server };
  const child = spawn(process.execPath, [...GATEWAY_NODE_FLAGS, cli, 'start', '--config', file, ...args], { stdio: ['ignore', 'pipe', 'pipe'], env });
  // Log lines are read as they come (a full pipe would stall the gateway).
  let lines = '';
  const onLog = (d: Buffer): void => {
    lines = (lines + d.toString()).slice(-8192);
  };
  child.stdout!.on('data', onLog);
  child.stderr!.on('data', onLog);
  await waitForPort(child, port, 'gateway');
  return {
    ...proc(child),
    url: `http://127.0.0.1:${port}`,
    async reconfigure(next: string) {
      writeFileSync(file, gatewayYaml(port, nodes, token, next));
      lines = '';
      child.kill('SIGHUP');
      for (let waited = 0; waited < 5000; waited += 20) {
        const line = lines.split('\n').find((l) => l.includes('config reload'));
        if (line !== undefined) {
          if (!line.includes('"config reloaded')) throw new Error(`gateway refused the reload: ${line}`);
          return line;
        }
        await new Promise((r) => setTimeout(r, 20));
      }
      throw new Error(`gateway did not report the reload within 5 s: ${lines.slice(-500)}`);
    },
  };
}

/** CPU seconds spent busy (not idle or waiting on I/O) by the whole machine, all cores, since boot. */
export function machineBusySeconds(): number {
  const f = readFileSync('/proc/stat', 'utf8').split('\n', 1)[0]!.trim().split(/\s+/).slice(1).map(Number);
  const total = f.slice(0, 8).reduce((a, b) => a + b, 0);
  return (total - f[3]! - f[4]!) / 100;
}

/** CPU seconds of `pid` and all its live descendants (the runner and everything it started). */
export function treeCpuSeconds(pid = process.pid): number {
  let kids: number[] = [];
  try {
    for (const task of readdirSync(`/proc/${pid}/task`)) {
      const text = readFileSync(`/proc/${pid}/task/${task}/children`, 'utf8').trim();
      if (text !== '') kids = kids.concat(text.split(/\s+/).map(Number));
    }
  } catch {
    // gone meanwhile
  }
  return cpuOf(pid) / 100 + kids.reduce((a, k) => a + treeCpuSeconds(k), 0);
}

/** This process's own CPU seconds (the runner). */
export function selfCpuSeconds(): number {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1e6;
}
