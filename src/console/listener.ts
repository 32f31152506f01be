// The console's listener. It listens at start, but fastify, its plugins and the routes
// (app.ts) are imported and built on the first request: a gateway whose console nobody opens
// keeps ~5 MB less heap, and its start allocates less. The first page load waits for the
// build (a few hundred ms); later requests go straight to fastify.
//
// With TLS (docs/configuration.md "TLS") it is an HTTPS server with the gateway's certificate, the session
// cookie is Secure, and a reload swaps the certificate for new connections.

import { lookup } from 'node:dns/promises';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer, type Server as HttpsServer } from 'node:https';
import type { TLSSocket } from 'node:tls';
import type { TlsMaterial } from '../config/tls.js';
import type { ConsoleOptions } from './context.js';

export type { ConsoleOptions } from './context.js';

export interface ConsoleServer {
  readonly port: number;
  /** http://host:port, or https:// with TLS */
  readonly url: string;
  /** New connections get this certificate; open ones keep theirs. Only for a console started with TLS. */
  replaceCertificate(material: TlsMaterial): void;
  close(): Promise<void>;
}

type Handler = (req: IncomingMessage, res: ServerResponse) => void;

/** node's secure-context options for `material`. */
function secureContextOptions(material: TlsMaterial): { cert: Buffer; key: Buffer; ca?: Buffer } {
  return material.ca === null ? { cert: material.cert, key: material.key } : { cert: material.cert, key: material.key, ca: material.ca };
}

/**
 * tls.ca as the RPC ports (uWS) apply it: clients are asked for a certificate, those without
 * one get in, one that does not verify is refused. node's server options can only refuse
 * clients without one too, or let every one in; so every one is let in and this ends the
 * connections whose certificate did not verify.
 */
function refuseUnverified(socket: TLSSocket): void {
  if (!socket.authorized && Object.keys(socket.getPeerCertificate()).length > 0) socket.destroy();
}

/** The HTTP server settings fastify gives its own servers (its defaults), so nothing changes. */
function newServer(onRequest: Handler, tls: TlsMaterial | null): Server | HttpsServer {
  let server: Server | HttpsServer;
  if (tls === null) server = createServer(onRequest);
  else {
    const verify = tls.ca !== null;
    server = createHttpsServer({ ...secureContextOptions(tls), requestCert: verify, rejectUnauthorized: false }, onRequest);
    if (verify) server.on('secureConnection', refuseUnverified);
  }
  server.keepAliveTimeout = 72_000;
  server.requestTimeout = 0;
  server.setTimeout(0);
  return server;
}

function listen(server: Server | HttpsServer, host: string, port: number): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen({ host, port }, () => {
      server.off('error', reject);
      resolve();
    });
  });
}

/** `tls`: serve HTTPS with these files (null: plain HTTP). */
export async function startConsole(options: ConsoleOptions, tls: TlsMaterial | null = null): Promise<ConsoleServer> {
  // A cookie sent over HTTPS only: the session id never travels in clear text.
  const opts = tls === null ? options : { ...options, secureCookies: true };
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
  const servers = [newServer(onRequest, tls)];
  await listen(servers[0]!, opts.host, opts.port);
  const address = servers[0]!.address();
  const port = typeof address === 'object' && address ? address.port : opts.port;
  // As fastify's listen did: "localhost" also binds its other addresses (127.0.0.1 and ::1).
  if (opts.host === 'localhost') {
    const all = await lookup(opts.host, { all: true }).catch(() => []);
    for (const a of all) {
      if (a.address === (address as { address: string }).address) continue;
      const extra = newServer(onRequest, tls);
      if (
        await listen(extra, a.address, port).then(
          () => true,
          () => false,
        )
      )
        servers.push(extra);
    }
  }
  const host = opts.host.includes(':') ? `[${opts.host}]` : opts.host;
  const url = `${tls === null ? 'http' : 'https'}://${host}:${port}`;
  log.info({ url }, 'console listening');
  return {
    port,
    url,
    replaceCertificate(material) {
      if (tls === null) throw new Error('the console serves plain HTTP; turning TLS on needs a restart');
      for (const s of servers) (s as HttpsServer).setSecureContext(secureContextOptions(material));
    },
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
