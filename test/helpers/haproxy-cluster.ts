// HAProxy started from deploy/haproxy/jumpgate-cluster.cfg, the file operators copy, with only
// the public ports and the `server` lines replaced (one per test instance, its RPC or WS port
// and `check port` its admin port), in the foreground on 127.0.0.1, in a temp folder.

import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { eventually } from './eventually.js';
import { freePort, refuses } from './instances.js';

export const CLUSTER_FILE = new URL('../../../deploy/haproxy/jumpgate-cluster.cfg', import.meta.url).pathname;

export interface ClusterMember {
  port: number;
  wsPort: number;
  adminPort: number;
}

/** Matches the file's server lines: `server jumpgateN ADDR:8899 check port 9464` (8900 in the WS backend). */
const SERVER_LINE = /^([ \t]*)server jumpgate\d+ [0-9.]+:(8899|8900) (check port )9464[ \t]*$/gm;

/** The file's text for these members; throws when it no longer has the lines this replaces. */
export function clusterConfig(members: readonly ClusterMember[], port: number, wsPort: number): string {
  let text = readFileSync(CLUSTER_FILE, 'utf8');
  for (const [from, to] of [
    ['\n    bind :8899\n', `\n    bind 127.0.0.1:${port}\n`],
    ['\n    bind :8900\n', `\n    bind 127.0.0.1:${wsPort}\n`],
  ] as const) {
    if (!text.includes(from)) throw new Error(`${CLUSTER_FILE} has no "${from.trim()}" to replace`);
    text = text.replace(from, to);
  }
  // Each backend's block of server lines becomes one line per member.
  const blocks = new Map<string, boolean>();
  text = text.replace(SERVER_LINE, (_line, indent: string, kind: string, check: string) => {
    if (blocks.get(kind) === true) return '\u0000';
    blocks.set(kind, true);
    return members.map((m, i) => `${indent}server jumpgate${i + 1} 127.0.0.1:${kind === '8899' ? m.port : m.wsPort} ${check}${m.adminPort}`).join('\n');
  });
  if (blocks.size !== 2) throw new Error(`${CLUSTER_FILE}: expected server lines in the RPC and WS backends`);
  return text.replace(/\u0000\n/g, '');
}

export interface HaproxyCluster {
  readonly port: number;
  readonly wsPort: number;
  stderr(): string;
  stop(): Promise<void>;
}

export async function startHaproxyCluster(members: readonly ClusterMember[]): Promise<HaproxyCluster> {
  const port = await freePort();
  const wsPort = await freePort();
  const dir = mkdtempSync(join(tmpdir(), 'jumpgate-haproxy-cluster-'));
  const file = join(dir, 'haproxy.cfg');
  writeFileSync(file, clusterConfig(members, port, wsPort));
  const child = spawn('haproxy', ['-db', '-f', file], { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const stop = async (): Promise<void> => {
    if (child.exitCode === null) child.kill('SIGTERM');
    await exited;
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    await eventually(
      () => `HAProxy to listen on ${port} (${stderr})`,
      async () => child.exitCode === null && !(await refuses(port)),
      10_000,
    );
  } catch (err) {
    await stop();
    throw err;
  }
  return { port, wsPort, stderr: () => stderr, stop };
}
