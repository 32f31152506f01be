// One gateway per RPC address. Data-plane workers share their listening port with SO_REUSEPORT
// (each worker accepts on its own event loop), which would also let a second gateway started
// on the same address silently take half the connections. The control plane therefore holds a
// lock named after the address before any worker listens: an abstract Unix socket on Linux (the
// kernel drops it with the process, so a crash leaves nothing stale), a socket file elsewhere.

import { rmSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface PortLock {
  release(): Promise<void>;
}

function lockPath(host: string, port: number): string {
  const name = `jumpgate-${host.replace(/[^A-Za-z0-9.]/g, '_')}-${port}`;
  return process.platform === 'linux' ? '\0' + name : join(tmpdir(), name + '.lock');
}

function listenOn(path: string): Promise<net.Server> {
  return new Promise((resolve, reject) => {
    const server = net.createServer((s) => s.destroy());
    server.once('error', reject);
    server.listen(path, () => {
      server.off('error', reject);
      server.unref();
      resolve(server);
    });
  });
}

/** A lock file whose owner is gone answers no connection: then it may be taken over. */
function ownerAlive(path: string): Promise<boolean> {
  return new Promise((resolve) => {
    const s = net.connect(path);
    s.once('connect', () => {
      s.destroy();
      resolve(true);
    });
    s.once('error', () => resolve(false));
  });
}

/** Rejects when another gateway holds `host:port`. */
export async function lockRpcPort(host: string, port: number): Promise<PortLock> {
  const path = lockPath(host, port);
  let server: net.Server;
  try {
    server = await listenOn(path);
  } catch (err) {
    const stale = (err as NodeJS.ErrnoException).code === 'EADDRINUSE' && !path.startsWith('\0') && !(await ownerAlive(path));
    if (!stale) throw new Error(`cannot listen on ${host}:${port} (address in use by another jumpgate)`);
    rmSync(path, { force: true });
    server = await listenOn(path);
  }
  return {
    release: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
