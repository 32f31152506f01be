// nginx and HAProxy started from the configuration files users copy (deploy/nginx/jumpgate.conf,
// deploy/haproxy/jumpgate.cfg), with only the public port and jumpgate's address replaced,
// in the foreground on 127.0.0.1, each in a temp folder removed when it stops. A wiretap
// between the front and jumpgate keeps the bytes the front sent, so a test can show that a
// refused request never reached jumpgate.

import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { connect, createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { eventually } from './eventually.js';
import { freePort } from './ports.js';

const run = promisify(execFile);

export type FrontName = 'nginx' | 'haproxy';

const DEPLOY = new URL('../../../deploy/', import.meta.url).pathname;
export const FRONT_FILES: Record<FrontName, string> = {
  nginx: join(DEPLOY, 'nginx/jumpgate.conf'),
  haproxy: join(DEPLOY, 'haproxy/jumpgate.cfg'),
};
/** jumpgate's address as written in both files. */
const JUMPGATE_IN_FILES = '127.0.0.1:8899';

/** Null when the front can run here, else why its tests are skipped. */
export async function frontMissing(name: FrontName): Promise<string | null> {
  try {
    await run('sh', ['-c', `command -v ${name}`]);
    return null;
  } catch {
    return `${name} not installed (apt-get install -y ${name})`;
  }
}

/** Replaces `from` (a literal) everywhere; a file that no longer contains it fails the test. */
function replaceAll(text: string, from: string, to: string, file: string): string {
  if (!text.includes(from)) throw new Error(`${file} has no "${from}" to replace`);
  return text.split(from).join(to);
}

/** The file's text with the public port and jumpgate's address replaced; nothing else. */
export function frontConfig(name: FrontName, listenPort: number, jumpgatePort: number): string {
  const file = FRONT_FILES[name];
  let text = readFileSync(file, 'utf8');
  text = replaceAll(text, JUMPGATE_IN_FILES, `127.0.0.1:${jumpgatePort}`, file);
  // The directive itself, not the comments that name it.
  text =
    name === 'nginx'
      ? replaceAll(text, '\n    listen 80;', `\n    listen 127.0.0.1:${listenPort};`, file)
      : replaceAll(text, '\n    bind :80\n', `\n    bind 127.0.0.1:${listenPort}\n`, file);
  return text;
}

export interface Front {
  readonly name: FrontName;
  readonly port: number;
  readonly url: string;
  /** What the process wrote to stderr so far (errors, warnings). */
  stderr(): string;
  stop(): Promise<void>;
}

function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = connect(port, '127.0.0.1');
    s.once('connect', () => {
      s.destroy();
      resolve(true);
    });
    s.once('error', () => resolve(false));
  });
}

/** nginx's main file around the copied one: foreground, one worker, everything under `dir`. */
function nginxMain(dir: string): string {
  return `daemon off;
worker_processes 1;
pid ${dir}/nginx.pid;
error_log stderr warn;
events { worker_connections 1024; }
http {
    access_log off;
    client_body_temp_path ${dir}/client_body;
    proxy_temp_path ${dir}/proxy;
    fastcgi_temp_path ${dir}/fastcgi;
    uwsgi_temp_path ${dir}/uwsgi;
    scgi_temp_path ${dir}/scgi;
    include ${dir}/jumpgate.conf;
}
`;
}

/** Starts nginx or HAProxy in front of jumpgate's port; resolves once it accepts connections. */
export async function startFront(name: FrontName, jumpgatePort: number): Promise<Front> {
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), `jumpgate-front-${name}-`));
  let child: ChildProcess;
  if (name === 'nginx') {
    writeFileSync(join(dir, 'jumpgate.conf'), frontConfig(name, port, jumpgatePort));
    writeFileSync(join(dir, 'nginx.conf'), nginxMain(dir));
    // A root master runs its worker as nobody, which must reach the temp folders in here.
    chmodSync(dir, 0o755);
    child = spawn('nginx', ['-e', 'stderr', '-p', dir, '-c', join(dir, 'nginx.conf')], { stdio: ['ignore', 'ignore', 'pipe'] });
  } else {
    writeFileSync(join(dir, 'haproxy.cfg'), frontConfig(name, port, jumpgatePort));
    child = spawn('haproxy', ['-db', '-f', join(dir, 'haproxy.cfg')], { stdio: ['ignore', 'ignore', 'pipe'] });
  }
  let stderr = '';
  child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
  let exited = false;
  const exit = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  void exit.then(() => (exited = true));
  // A test process that dies skips teardowns; the front must not outlive it.
  const killOnExit = (): void => {
    child.kill('SIGTERM');
  };
  process.once('exit', killOnExit);
  const stop = async (): Promise<void> => {
    process.off('exit', killOnExit);
    // nginx and HAProxy both stop at once on SIGTERM (nginx's workers with their master).
    if (!exited) child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
    await exit;
    clearTimeout(timer);
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    await eventually(
      () => `${name} to accept connections on ${port}${exited ? ` (it exited: ${stderr.trim()})` : ''}`,
      async () => {
        if (exited) throw new Error(`${name} exited at start: ${stderr.trim()}`);
        return accepts(port);
      },
      10_000,
      50,
    );
  } catch (err) {
    await stop();
    throw err;
  }
  return { name, port, url: `http://127.0.0.1:${port}`, stderr: () => stderr, stop };
}

export interface Wiretap {
  readonly port: number;
  /** Connections opened through the tap. */
  readonly connections: number;
  /** Everything sent toward the target so far, as latin1 text. */
  sent(): string;
  close(): Promise<void>;
}

/** A TCP pass-through to `targetPort` on 127.0.0.1 that keeps a copy of the bytes sent to it. */
export function startWiretap(targetPort: number): Promise<Wiretap> {
  const chunks: Buffer[] = [];
  const sockets = new Set<Socket>();
  let connections = 0;
  const server: Server = createServer((client) => {
    connections++;
    const target = connect(targetPort, '127.0.0.1');
    sockets.add(client).add(target);
    const drop = (): void => {
      client.destroy();
      target.destroy();
      sockets.delete(client);
      sockets.delete(target);
    };
    client.on('error', drop).on('close', drop);
    target.on('error', drop).on('close', drop);
    client.on('data', (d: Buffer) => chunks.push(d));
    client.pipe(target).pipe(client);
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      resolve({
        port: (server.address() as { port: number }).port,
        get connections() {
          return connections;
        },
        sent: () => Buffer.concat(chunks).toString('latin1'),
        close: () =>
          new Promise<void>((r) => {
            for (const s of sockets) s.destroy();
            server.close(() => r());
          }),
      });
    });
  });
}
