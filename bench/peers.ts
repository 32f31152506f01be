// Generic reverse proxies beside jumpgate: nginx and HAProxy, rendered from the templates in
// bench/peer-templates/, one worker / one thread, in
// the foreground on 127.0.0.1, stopped by PID. When a binary or the templates are missing,
// the peer is skipped and the reason goes in the results table.

import { execFile, spawn } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { freePort, proc, waitForPort, type Proc } from './procs.js';

const run = promisify(execFile);

/** The peers' config templates: bench/peer-templates/ (this file runs from dist/bench/). */
export const TEMPLATES = new URL('../../bench/peer-templates/', import.meta.url).pathname;

export type PeerName = 'nginx' | 'haproxy';

export interface PeerOptions {
  /** Hash the X-Service-Affinity-Key header consistently (the templates' affinity variant). */
  affinity?: boolean;
  /** WebSocket scenario: room for this many client connections (each also holds one upstream). */
  wsClients?: number;
  /** nginx's worker_processes (default 1). */
  workers?: number;
}

export interface Peer extends Proc {
  url: string;
  /** Changes made to the template for this run, for the results table. */
  notes: string[];
}

async function which(cmd: string): Promise<boolean> {
  try {
    await run('sh', ['-c', `command -v ${cmd}`]);
    return true;
  } catch {
    return false;
  }
}

export async function peerVersion(name: PeerName): Promise<string | null> {
  try {
    if (name === 'nginx') {
      const { stderr } = await run('nginx', ['-v']);
      return /nginx\/(\S+)/.exec(stderr)?.[1] ?? 'unknown';
    }
    const { stdout } = await run('haproxy', ['-v']);
    return /version (\S+)/.exec(stdout)?.[1] ?? 'unknown';
  } catch {
    return null;
  }
}

/** Null when the peer can run here, else why it is skipped. */
export async function peerMissing(name: PeerName): Promise<string | null> {
  if (process.env.JUMPGATE_BENCH_SKIP_PEERS === '1') return 'JUMPGATE_BENCH_SKIP_PEERS=1';
  if (!(await which(name))) return `${name} not installed (apt-get install -y ${name})`;
  if (!existsSync(join(TEMPLATES, `${name === 'nginx' ? 'nginx.conf' : 'haproxy.cfg'}.template`))) return `template not found in ${TEMPLATES}`;
  return null;
}

/** Fills {{PLACEHOLDERS}} outside comment lines (the templates' comments name them too). */
function fill(template: string, values: Record<string, string>): string {
  return template
    .split('\n')
    .map((line) => (line.trimStart().startsWith('#') ? line : line.replace(/\{\{(\w+)\}\}/g, (m, k: string) => values[k] ?? m)))
    .join('\n');
}

/** A variant edit that found nothing to change means the template moved on: say so. */
function changed(before: string, after: string, what: string): string {
  if (after === before) throw new Error(`peer template has no ${what} to adapt`);
  return after;
}

export async function startNginx(nodes: string[], o: PeerOptions = {}): Promise<Peer> {
  const port = await freePort();
  const prefix = mkdtempSync(join(tmpdir(), 'jumpgate-bench-nginx-'));
  mkdirSync(join(prefix, 'logs'));
  const notes: string[] = [];
  let conf = fill(readFileSync(join(TEMPLATES, 'nginx.conf.template'), 'utf8'), {
    PREFIX: prefix,
    LISTEN: `127.0.0.1:${port}`,
    UPSTREAM_SERVERS: nodes.map((n) => `server ${new URL(n).host};`).join('\n    '),
    WORKERS: String(o.workers ?? 1),
  });
  if (o.affinity) {
    conf = changed(
      conf,
      conf.replace(/^(\s*)upstream rpc_pool \{\n/m, (m, indent: string) => `${m}${indent}  hash $http_x_service_affinity_key consistent;\n`),
      'an "upstream rpc_pool {" line',
    );
    notes.push('hash $http_x_service_affinity_key consistent');
  }
  if (o.wsClients !== undefined) {
    const need = 2 * o.wsClients + 1000;
    const have = Number(/^[^#\n]*worker_connections (\d+)/m.exec(conf)?.[1] ?? 0);
    if (need > have) {
      conf = changed(conf, conf.replace(/^([^#\n]*worker_connections )\d+/m, `$1${need}`), 'a worker_connections line');
      notes.push(`worker_connections ${have} → ${need} (each client also holds an upstream connection)`);
    }
  }
  writeFileSync(join(prefix, 'nginx.conf'), conf);
  // A root master runs its worker as nobody, which must reach the temp folders in here.
  chmodSync(prefix, 0o755);
  return runPeer('nginx', ['-p', prefix, '-c', join(prefix, 'nginx.conf')], port, prefix, 'SIGQUIT', notes);
}

/** Starts a peer process, waits for its port; stopping it also removes its folder. */
async function runPeer(cmd: string, args: string[], port: number, dir: string, signal: NodeJS.Signals, notes: string[]): Promise<Peer> {
  const child = spawn(cmd, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  await waitForPort(child, port, cmd);
  const p = proc(child, signal);
  return {
    ...p,
    url: `http://127.0.0.1:${port}`,
    notes,
    stop: async () => {
      await p.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

export async function startHaproxy(nodes: string[], o: PeerOptions = {}): Promise<Peer> {
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), 'jumpgate-bench-haproxy-'));
  const notes: string[] = [];
  // The template's per-server maxconn (512) would queue WebSocket tunnels beyond 1,024.
  const maxconn = o.wsClients !== undefined ? Math.max(512, o.wsClients) : 512;
  if (maxconn !== 512) notes.push(`server maxconn 512 → ${maxconn} (a WebSocket holds its server connection)`);
  let cfg = fill(readFileSync(join(TEMPLATES, 'haproxy.cfg.template'), 'utf8'), {
    LISTEN: `127.0.0.1:${port}`,
    UPSTREAM_SERVERS: nodes.map((n, i) => `server n${i + 1} ${new URL(n).host} maxconn ${maxconn}`).join('\n  '),
    THREADS: '1',
  });
  if (o.affinity) {
    cfg = changed(
      cfg,
      cfg.replace(/^(\s*)balance roundrobin$/m, '$1balance hdr(X-Service-Affinity-Key)\n$1hash-type consistent'),
      'a "balance roundrobin" line',
    );
    notes.push('balance hdr(X-Service-Affinity-Key), hash-type consistent');
  }
  const file = join(dir, 'haproxy.cfg');
  writeFileSync(file, cfg);
  return runPeer('haproxy', ['-db', '-f', file], port, dir, 'SIGTERM', notes);
}

export function startPeer(name: PeerName, nodes: string[], o: PeerOptions = {}): Promise<Peer> {
  return name === 'nginx' ? startNginx(nodes, o) : startHaproxy(nodes, o);
}
