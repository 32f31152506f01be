// The Node engine: Node's own `http`/`https` servers and the `ws` library behind the interface
// of types.ts, for runtimes where no uWebSockets.js binary loads (docs/runtimes.md). An app is
// its routes; each listen() is a server of its own with the app's handlers (uWS listens one
// app on several ports). Where Node's HTTP parser differs from uWS's:
// docs/http-compatibility.md.

import { readFileSync } from 'node:fs';
import { createServer as createHttp, type IncomingMessage, type Server, type ServerOptions } from 'node:http';
import { createServer as createHttps, type Server as HttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import type { TLSSocket } from 'node:tls';
import type { Duplex } from 'node:stream';
import { NodeRequest, NodeResponse, OwnedRequest, OwnedResponse, UpgradeResponse } from './node-http.js';
import { WsRoute } from './node-ws.js';
import {
  MAX_HEAD_BYTES,
  type HttpApp,
  type HttpHandler,
  type ListenSocket,
  type RefusalBody,
  type ServerEngine,
  type TlsFiles,
  type WsBehavior,
} from './types.js';

/** uWS closes a keep-alive connection idle this long. */
const IDLE_MS = 10_000;
/** A request's headers and body must arrive within this (slow clients hold no socket forever). */
const REQUEST_MS = 60_000;

/** SO_REUSEPORT through listen({ reusePort }) came in Node 22.12 and 23.1. */
export function reusePortSupported(version = process.versions.node): boolean {
  const [major = 0, minor = 0] = version.split('.').map(Number);
  return major > 22 || (major === 22 && minor >= 12);
}

interface Route {
  /** 'get', 'post' or '*'. */
  method: string;
  prefix: string;
  exact: boolean;
  handler: HttpHandler;
}

interface TlsContext {
  cert: Buffer;
  key: Buffer;
  ca?: Buffer;
}

function readTls(tls: TlsFiles): TlsContext {
  return { cert: readFileSync(tls.cert), key: readFileSync(tls.key), ...(tls.ca === undefined ? {} : { ca: readFileSync(tls.ca) }) };
}

const NOT_FOUND = 'HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\nconnection: close\r\n\r\n';

const REFUSAL_STATUS: Record<number, string> = { 400: '400 Bad Request', 408: '408 Request Timeout', 431: '431 Request Header Fields Too Large' };

type NodeServer = Server<typeof OwnedRequest, typeof OwnedResponse> | HttpsServer<typeof OwnedRequest, typeof OwnedResponse>;

function refuseUnverified(socket: TLSSocket): void {
  if (!socket.authorized && Object.keys(socket.getPeerCertificate()).length > 0) socket.destroy();
}

function destroyQuietly(this: Duplex): void {
  this.destroy();
}

export class NodeApp implements HttpApp {
  private readonly routes: Route[] = [];
  private readonly wsRoutes: WsRoute<unknown>[] = [];
  readonly servers = new Set<NodeServer>();
  /** The request of the handler running now (as uWS, valid only during it). */
  private readonly req = new NodeRequest();

  constructor(
    private tls: TlsContext | null,
    private readonly refusal: RefusalBody | null,
  ) {
    // Checked now, as uWS checks its files when an app is built.
    if (tls !== null) createHttps(tls).close();
  }

  private route(method: string, pattern: string, handler: HttpHandler): this {
    const exact = !pattern.endsWith('/*');
    this.routes.push({ method, prefix: exact ? pattern : pattern.slice(0, -1), exact, handler });
    return this;
  }

  get(pattern: string, handler: HttpHandler): this {
    return this.route('get', pattern, handler);
  }

  post(pattern: string, handler: HttpHandler): this {
    return this.route('post', pattern, handler);
  }

  any(pattern: string, handler: HttpHandler): this {
    return this.route('*', pattern, handler);
  }

  ws<U>(pattern: string, behavior: WsBehavior<U>): this {
    this.wsRoutes.push(new WsRoute(pattern, behavior) as WsRoute<unknown>);
    return this;
  }

  private readonly onRequest = (raw: OwnedRequest, res: OwnedResponse): void => {
    const req = this.req;
    req.set(raw);
    const url = req.getUrl();
    const method = req.getMethod();
    const response = new NodeResponse(raw, res);
    for (const r of this.routes) {
      if ((r.method === '*' || r.method === method) && (r.exact ? url === r.prefix : url.startsWith(r.prefix))) {
        r.handler(response, req);
        req.raw = null;
        return;
      }
    }
    req.raw = null;
    response.writeStatus('404 Not Found').end('');
  };

  private readonly onUpgrade = (raw: IncomingMessage, socket: Duplex, head: Buffer): void => {
    socket.on('error', destroyQuietly);
    const req = this.req;
    req.set(raw);
    const url = req.getUrl();
    const route = this.wsRoutes.find((r) => r.matches(url));
    if (route === undefined) {
      req.raw = null;
      socket.end(NOT_FOUND);
      return;
    }
    route.behavior.upgrade(new UpgradeResponse(raw, socket, head, route), req, null);
    req.raw = null;
  };

  /**
   * A request Node's parser refused before any handler saw it: answered with the app's JSON
   * refusal where the socket can still take one (Node's own answer has no body).
   */
  private readonly onClientError = (err: Error & { code?: string }, socket: Duplex): void => {
    const code = err.code ?? '';
    // Resets: nobody is waiting for an answer. A response already begun cannot take another.
    const begun = (socket as Duplex & { _httpMessage?: { headersSent?: boolean } })._httpMessage?.headersSent === true;
    if (!socket.writable || begun || code === 'ECONNRESET') {
      socket.destroy();
      return;
    }
    const status = code === 'HPE_HEADER_OVERFLOW' ? 431 : code === 'ERR_HTTP_REQUEST_TIMEOUT' || code === 'HPE_HEADERS_TIMEOUT' ? 408 : 400;
    const body = this.refusal!(status);
    socket.end(
      `HTTP/1.1 ${REFUSAL_STATUS[status]}\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`,
    );
  };

  /** A server with this app's handlers and the current certificate. */
  newServer(): NodeServer {
    const options: ServerOptions<typeof OwnedRequest, typeof OwnedResponse> = {
      IncomingMessage: OwnedRequest,
      ServerResponse: OwnedResponse,
      // uWS answers requests without a Host header; so does this engine.
      requireHostHeader: false,
      keepAliveTimeout: IDLE_MS,
      requestTimeout: REQUEST_MS,
      headersTimeout: IDLE_MS,
      // How often those two are checked (Node's default, 30 s, would hold a silent socket 40 s).
      connectionsCheckingInterval: 1000,
      noDelay: true,
      maxHeaderSize: MAX_HEAD_BYTES,
    };
    let server: NodeServer;
    if (this.tls === null) server = createHttp(options, this.onRequest);
    else {
      // With tls.ca, as uWS: a client certificate is asked for; one that does not verify
      // against the CA ends the connection, and a client without one is served.
      const withCa = this.tls.ca !== undefined;
      server = createHttps({ ...options, ...this.tls, requestCert: withCa, rejectUnauthorized: false }, this.onRequest);
      if (withCa) server.on('secureConnection', refuseUnverified);
    }
    server.on('upgrade', this.onUpgrade);
    if (this.refusal !== null) server.on('clientError', this.onClientError);
    this.servers.add(server);
    return server;
  }

  swapCertificate(tls: TlsFiles): void {
    const next = readTls(tls);
    // Throws on files that do not make a context, before any server changes.
    createHttps(next).close();
    for (const s of this.servers) (s as HttpsServer<typeof OwnedRequest, typeof OwnedResponse>).setSecureContext(next);
    this.tls = next;
  }

  close(): void {
    for (const s of this.servers) {
      s.close();
      s.closeAllConnections();
    }
    this.servers.clear();
    for (const r of this.wsRoutes) r.close();
  }
}

export class NodeEngine implements ServerEngine {
  readonly name = 'node';
  readonly sharesPorts = reusePortSupported();
  readonly swapsCertificates = true;

  constructor(readonly reason: string) {}

  app(tls: TlsFiles | null, refusal?: RefusalBody): HttpApp {
    return new NodeApp(tls === null ? null : readTls(tls), refusal ?? null);
  }

  listen(app: HttpApp, host: string, port: number, exclusive: boolean): Promise<ListenSocket | null> {
    const server = (app as NodeApp).newServer();
    return new Promise((resolve) => {
      server.once('error', () => {
        (app as NodeApp).servers.delete(server);
        resolve(null);
      });
      // Without reusePort Node never sets SO_REUSEPORT: a port anything holds fails the listen.
      const shared = !exclusive && this.sharesPorts;
      server.listen({ host, port, ...(shared ? { reusePort: true } : {}) }, () => resolve(server));
    });
  }

  localPort(socket: ListenSocket): number {
    return ((socket as Server).address() as AddressInfo).port;
  }

  closeListen(socket: ListenSocket): void {
    (socket as Server).close();
  }

  swapCertificate(app: HttpApp, tls: TlsFiles): void {
    (app as NodeApp).swapCertificate(tls);
  }
}
