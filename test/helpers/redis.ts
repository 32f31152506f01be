// A real redis-server for tests, on a free port of 127.0.0.1, nothing saved to disk. Tests
// skip with a visible reason when the binary is missing (`apt-get install redis-server`).

import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import { freePort } from './ports.js';

const CANDIDATES = ['/usr/bin/redis-server', '/usr/local/bin/redis-server', '/usr/sbin/redis-server'];

/** The redis-server binary, or null. */
export function findRedisServer(): string | null {
  for (const dir of (process.env.PATH ?? '').split(delimiter)) {
    if (dir !== '' && existsSync(join(dir, 'redis-server'))) return join(dir, 'redis-server');
  }
  return CANDIDATES.find((p) => existsSync(p)) ?? null;
}

/** tap's skip option: a reason when redis-server is missing, else false. */
export function skipWithoutRedis(): string | false {
  return findRedisServer() === null ? 'redis-server not installed (apt-get install redis-server)' : false;
}

export class RedisServer {
  private child: ChildProcess | null = null;

  private constructor(
    readonly bin: string,
    readonly port: number,
  ) {}

  get url(): string {
    return `redis://127.0.0.1:${this.port}/0`;
  }

  /** Starts one on a free port; resolves once it accepts connections. */
  static async start(): Promise<RedisServer> {
    const bin = findRedisServer();
    if (bin === null) throw new Error('redis-server not installed');
    const r = new RedisServer(bin, await freePort());
    await r.restart();
    return r;
  }

  get running(): boolean {
    return this.child !== null;
  }

  /** (Re)starts it on the same port, empty. */
  async restart(): Promise<void> {
    if (this.child !== null) return;
    const child = spawn(this.bin, ['--port', String(this.port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    this.child = child;
    let out = '';
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`redis-server did not start on port ${this.port} within 10 s: ${out}`)), 10_000);
      child.stdout!.on('data', (d: Buffer) => {
        out += d.toString();
        if (out.includes('Ready to accept connections')) {
          clearTimeout(timer);
          resolve();
        }
      });
      child.on('exit', (code) => {
        clearTimeout(timer);
        if (this.child === child) this.child = null;
        reject(new Error(`redis-server exited with ${code}: ${out}`));
      });
    });
    child.stdout!.resume();
    child.stderr!.resume();
  }

  /** Subscribers of `channel` (PUBSUB NUMSUB), through redis-cli-free RESP over a socket. */
  async numSub(channel: string): Promise<number> {
    const { Redis } = await import('ioredis');
    const c = new Redis(this.url, { lazyConnect: true, maxRetriesPerRequest: 0 });
    try {
      await c.connect();
      const r = (await c.pubsub('NUMSUB', channel)) as [string, number];
      return Number(r[1]);
    } finally {
      c.disconnect();
    }
  }

  /** Kills it (SIGKILL: no goodbye to its clients) and waits for the exit. */
  async kill(): Promise<void> {
    const child = this.child;
    if (child === null) return;
    this.child = null;
    if (child.exitCode !== null || child.signalCode !== null) return;
    await new Promise<void>((resolve) => {
      child.once('exit', () => resolve());
      child.kill('SIGKILL');
    });
  }
}

export { freePort };
