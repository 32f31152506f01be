// The console's listener. It listens at start, but fastify, its plugins and the routes
// (app.ts) are imported and built on the first request: a gateway whose console nobody opens
// keeps ~5 MB less heap, and its start allocates less. The first page load waits for the
// build (a few hundred ms); later requests go straight to fastify.

import { lookup } from 'node:dns/promises';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { ConsoleOptions } from './context.js';

export type { ConsoleOptions } from './context.js';

export interface ConsoleServer {
  readonly port: number;
  /** http://host:port */
  readonly url: string;
  close(): Promise<void>;
}

type Handler = (req: IncomingMessage, res: ServerResponse) => void;

/** The HTTP server settings fastify gives its own servers (its defaults), so nothing changes. */
function newServer(onRequest: Handler): Server {
  const server = createServer(onRequest);
  server.keepAliveTimeout = 72_000;
  server.requestTimeout = 0;
  server.setTimeout(0);
  return server;
}

function listen(server: Server, host: string, port: number): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen({ host, port }, () => {
      server.off('error', reject);
      resolve();
    });
  });
}

export async function startConsole(opts: ConsoleOptions): Promise<ConsoleServer> {
  const log = opts.log.child({ component: 'console' });
  let app: Promise<{ handle: Handler; close(): Promise<void> }> | null = null;
  const build = async (): Promise<{ handle: Handler; close(): Promise<void> }> => {
    const { buildConsole } = await import('./app.js');
    let handle: Handler | null = null;
    const fastify = await buildConsole(opts, log, (h) => {
      handle = h;
      return servers[0]!;
    });
    await fastify.ready();
    return { handle: handle!, close: () => fastify.close() };
  };
  const onRequest: Handler = (req, res) => {
    (app ??= build()).then(
      (a) => a.handle(req, res),
      (err: unknown) => {
        app = null; // the next request tries again
        log.error({ err }, 'console could not start');
        res.writeHead(500, { 'content-type': 'text/plain' }).end('console could not start\n');
      },
    );
  };
  const servers = [newServer(onRequest)];
  await listen(servers[0]!, opts.host, opts.port);
  const address = servers[0]!.address();
  const port = typeof address === 'object' && address ? address.port : opts.port;
  // As fastify's listen did: "localhost" also binds its other addresses (127.0.0.1 and ::1).
  if (opts.host === 'localhost') {
    const all = await lookup(opts.host, { all: true }).catch(() => []);
    for (const a of all) {
      if (a.address === (address as { address: string }).address) continue;
      const extra = newServer(onRequest);
      if (await listen(extra, a.address, port).then(() => true, () => false)) servers.push(extra);
    }
  }
  const host = opts.host.includes(':') ? `[${opts.host}]` : opts.host;
  const url = `http://${host}:${port}`;
  log.info({ url }, 'console listening');
  return {
    port,
    url,
    async close() {
      const built = app === null ? null : await app.catch(() => null);
      await built?.close();
      await Promise.all(
        servers.map(
          (s) =>
            new Promise<void>((resolve) => {
              s.close(() => resolve());
              s.closeAllConnections();
            }),
        ),
      );
    },
  };
}
