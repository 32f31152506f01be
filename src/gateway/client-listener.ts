// The client listener: the app that serves the RPC and WebSocket routes on rpc.port and
// rpc.wsPort, plain HTTP or TLS (docs/configuration.md "TLS"), on the server engine that
// `rpc.server` chose (src/server/engine.ts: uWebSockets.js, or Node's http and ws).
//
// A certificate swap on reload: the Node engine swaps the context of its servers in place. uWS
// reads certificate files only when an app is built, so there a new SSLApp with the same routes
// listens on the same ports, and only then are the old app's listen sockets closed. The old app
// lives on for the connections it holds (keep-alive requests, WebSockets) until the gateway
// stops; new connections get the new certificate. uWS's other tool, SNI server names
// (addServerName), was not enough: a client that dials an IP address sends no server name and
// would never leave the first certificate, and each name gets an empty router of its own.
//
// What it costs on uWS: both apps listen at once for a moment, which needs SO_REUSEPORT on both
// sockets, so with TLS the ports are not opened with the exclusive-port flag. A plain bind of
// host:port just before listening still fails a start when anything holds the port, as the
// flag does for plain HTTP; what it cannot stop is a later process of the same user binding
// the port with SO_REUSEPORT itself. No connection is refused during a swap, but those the
// kernel has queued on the old socket and uWS has not accepted yet when it closes are reset,
// unless Linux's net.ipv4.tcp_migrate_req=1 moves them to the new socket.

import { createServer } from 'node:net';
import { ConfigError } from '../config/load.js';
import type { TlsConfig } from '../config/schema.js';
import { errorBody, Errors } from '../errors.js';
import { MAX_HEAD_BYTES, type HttpApp, type ListenSocket, type ServerEngine } from '../server/types.js';

async function listenOn(engine: ServerEngine, app: HttpApp, host: string, port: number, exclusive: boolean): Promise<ListenSocket> {
  const sock = await engine.listen(app, host, port, exclusive);
  if (sock === null) throw new Error(`cannot listen on ${host}:${port} (address in use or not available)`);
  return sock;
}

/**
 * Binds host:port without SO_REUSEPORT and lets go: rejects when anything holds the port.
 * Port 0 picks a free one, and the engine then binds that number: a port the kernel picked for
 * a bind to 0 is never shared, which would make a certificate swap impossible.
 */
export function reservePort(host: string, port: number): Promise<number> {
  const probe = createServer();
  return new Promise((resolve, reject) => {
    probe.once('error', () => reject(new Error(`cannot listen on ${host}:${port} (address in use or not available)`)));
    probe.listen({ host, port }, () => {
      const bound = (probe.address() as { port: number }).port;
      probe.close(() => resolve(bound));
    });
  });
}

function tlsError(tls: TlsConfig): ConfigError {
  // The files were checked when the config was read; they changed since, or the engine's TLS
  // library reads them differently from node's.
  const ca = tls.ca === undefined ? '' : ` and tls.ca (${tls.ca})`;
  return new ConfigError([`tls: the RPC listener cannot use tls.cert (${tls.cert}) with tls.key (${tls.key})${ca}`]);
}

/** The RPC port's answer to what the engine refuses itself (docs/errors.md 7400, 7408, 7431). */
function refusalBody(status: number): string {
  if (status === 431) return errorBody(Errors.headTooLarge, null, { maxHeadBytes: MAX_HEAD_BYTES });
  return errorBody(status === 408 ? Errors.requestTimeout : Errors.badHttp, null);
}

function newApp(engine: ServerEngine, tls: TlsConfig | null): HttpApp {
  try {
    return engine.app(tls, refusalBody);
  } catch {
    throw tlsError(tls!);
  }
}

export class ClientListener {
  /** Every app built, the current one last; older ones still serve connections opened before a certificate swap. */
  private readonly apps: HttpApp[] = [];
  private sockets: ListenSocket[] = [];
  private readonly ports: number[] = [];
  private routes: ((app: HttpApp) => void) | null = null;

  constructor(
    readonly engine: ServerEngine,
    readonly host: string,
    private tls: TlsConfig | null,
    /**
     * A data-plane worker: the port is shared with the other workers (SO_REUSEPORT), and the
     * control plane holds the address's lock and picked the port.
     */
    private readonly shared = false,
  ) {}

  get scheme(): 'https' | 'http' {
    return this.tls === null ? 'http' : 'https';
  }

  /** The RPC port as bound. */
  get port(): number {
    return this.ports[0] ?? 0;
  }

  /** The extra WebSocket port as bound, 0 when none. */
  get wsPort(): number {
    return this.ports[1] ?? 0;
  }

  /** Builds the app, lets `routes` attach its handlers (again on each certificate swap), listens. */
  async listen(port: number, wsPort: number, routes: (app: HttpApp) => void): Promise<void> {
    const engine = this.engine;
    const app = newApp(engine, this.tls);
    this.apps.push(app);
    this.routes = routes;
    routes(app);
    for (const wanted of wsPort === 0 ? [port] : [port, wsPort]) {
      // Exclusive: otherwise the port is shared (SO_REUSEPORT) with another process and the
      // two silently split the connections instead of the second start failing.
      const sock = this.shared
        ? await listenOn(engine, app, this.host, wanted, false)
        : this.tls === null || engine.swapsCertificates
          ? await listenOn(engine, app, this.host, wanted, true)
          : await listenOn(engine, app, this.host, await reservePort(this.host, wanted), false);
      this.sockets.push(sock);
      this.ports.push(engine.localPort(sock));
    }
  }

  /**
   * New connections get the certificate in `tls`' files from now on; open ones keep theirs.
   * Throws, changing nothing, when the engine refuses the files or a port cannot be listened on.
   */
  replaceCertificate(tls: TlsConfig): void {
    if (this.tls === null || this.routes === null) throw new Error('the RPC listener serves plain HTTP; turning TLS on needs a restart');
    const engine = this.engine;
    if (engine.swapsCertificates) {
      try {
        engine.swapCertificate(this.apps[this.apps.length - 1]!, tls);
      } catch {
        throw tlsError(tls);
      }
    }
    if (engine.swapsCertificates || this.sockets.length === 0) {
      // Swapped in place, or stopped listening (draining): nothing new will connect.
      this.tls = tls;
      return;
    }
    const app = newApp(engine, tls);
    this.routes(app);
    const fresh: ListenSocket[] = [];
    for (const port of this.ports) {
      const sock = engine.listenNow!(app, this.host, port, false);
      if (sock === null) {
        for (const s of fresh) engine.closeListen(s);
        app.close();
        throw new Error(`cannot listen on ${this.host}:${port} (address in use or not available)`);
      }
      fresh.push(sock);
    }
    for (const s of this.sockets) engine.closeListen(s);
    this.sockets = fresh;
    this.apps.push(app);
    this.tls = tls;
  }

  /** Refuses new connections; open ones go on. */
  stopListening(): void {
    for (const s of this.sockets) this.engine.closeListen(s);
    this.sockets = [];
  }

  /** Closes every connection and listen socket. */
  close(): void {
    this.sockets = [];
    for (const app of this.apps) app.close();
  }
}
