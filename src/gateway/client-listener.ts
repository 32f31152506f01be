// The client listener: the uWS app that serves the RPC and WebSocket routes on rpc.port and
// rpc.wsPort, plain HTTP (`App`) or TLS (`SSLApp`, docs/configuration.md "TLS").
//
// A certificate swap on reload: uWS reads certificate files only when an app is built, so a
// new SSLApp with the same routes listens on the same ports, and only then are the old app's
// listen sockets closed. The old app lives on for the connections it holds (keep-alive
// requests, WebSockets) until the gateway stops; new connections get the new certificate.
// uWS's other tool, SNI server names (addServerName), was not enough: a client that dials an
// IP address sends no server name and would never leave the first certificate, and each name
// gets an empty router of its own.
//
// What it costs: both apps listen at once for a moment, which needs SO_REUSEPORT on both
// sockets, so with TLS the ports are not opened with the exclusive-port flag. A plain bind of
// host:port just before listening still fails a start when anything holds the port, as the
// flag does for plain HTTP; what it cannot stop is a later process of the same user binding
// the port with SO_REUSEPORT itself. No connection is refused during a swap, but those the
// kernel has queued on the old socket and uWS has not accepted yet when it closes are reset,
// unless Linux's net.ipv4.tcp_migrate_req=1 moves them to the new socket.

import { createServer } from 'node:net';
import * as uWS from 'uWebSockets.js';
import { ConfigError } from '../config/load.js';
import type { TlsConfig } from '../config/schema.js';

/** uWS's LIBUS_LISTEN_EXCLUSIVE_PORT (not exported by this build at runtime). */
const EXCLUSIVE_PORT = 1;
/** Without the exclusive flag uSockets sets SO_REUSEPORT. */
const SHARED_PORT = 0;

type Listen = (host: string, port: number, options: number, cb: (s: uWS.us_listen_socket | false) => void) => void;

/** uWS calls back before listen() returns. */
function listenOn(app: uWS.TemplatedApp, host: string, port: number, options: number): uWS.us_listen_socket {
  const got: { sock: uWS.us_listen_socket | false } = { sock: false };
  (app.listen as unknown as Listen).call(app, host, port, options, (s) => (got.sock = s));
  if (got.sock === false) throw new Error(`cannot listen on ${host}:${port} (address in use or not available)`);
  return got.sock;
}

/**
 * Binds host:port without SO_REUSEPORT and lets go: rejects when anything holds the port.
 * Port 0 picks a free one, and uWS then binds that number: a port the kernel picked for a bind
 * to 0 is never shared, which would make a certificate swap impossible.
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

function newApp(tls: TlsConfig | null): uWS.TemplatedApp {
  if (tls === null) return uWS.App();
  try {
    return uWS.SSLApp({ cert_file_name: tls.cert, key_file_name: tls.key, ...(tls.ca === undefined ? {} : { ca_file_name: tls.ca }) });
  } catch {
    // The files were checked when the config was read; they changed since, or uWS's TLS
    // library reads them differently from node's.
    const ca = tls.ca === undefined ? '' : ` and tls.ca (${tls.ca})`;
    throw new ConfigError([`tls: the RPC listener cannot use tls.cert (${tls.cert}) with tls.key (${tls.key})${ca}`]);
  }
}

export class ClientListener {
  /** Every app built, the current one last; older ones still serve connections opened before a certificate swap. */
  private readonly apps: uWS.TemplatedApp[] = [];
  private sockets: uWS.us_listen_socket[] = [];
  private readonly ports: number[] = [];
  private routes: ((app: uWS.TemplatedApp) => void) | null = null;

  constructor(
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
  async listen(port: number, wsPort: number, routes: (app: uWS.TemplatedApp) => void): Promise<void> {
    const app = newApp(this.tls);
    this.apps.push(app);
    this.routes = routes;
    routes(app);
    for (const wanted of wsPort === 0 ? [port] : [port, wsPort]) {
      // Exclusive: without it uWS shares the port (SO_REUSEPORT) with another process and the
      // two silently split the connections instead of the second start failing.
      const sock = this.shared
        ? listenOn(app, this.host, wanted, SHARED_PORT)
        : this.tls === null
          ? listenOn(app, this.host, wanted, EXCLUSIVE_PORT)
          : listenOn(app, this.host, await reservePort(this.host, wanted), SHARED_PORT);
      this.sockets.push(sock);
      this.ports.push(uWS.us_socket_local_port(sock));
    }
  }

  /**
   * New connections get the certificate in `tls`' files from now on; open ones keep theirs.
   * Throws, changing nothing, when uWS refuses the files or a port cannot be listened on.
   */
  replaceCertificate(tls: TlsConfig): void {
    if (this.tls === null || this.routes === null) throw new Error('the RPC listener serves plain HTTP; turning TLS on needs a restart');
    if (this.sockets.length === 0) {
      // Stopped listening (draining): nothing new will connect.
      this.tls = tls;
      return;
    }
    const app = newApp(tls);
    this.routes(app);
    const fresh: uWS.us_listen_socket[] = [];
    try {
      for (const port of this.ports) fresh.push(listenOn(app, this.host, port, SHARED_PORT));
    } catch (err) {
      for (const s of fresh) uWS.us_listen_socket_close(s);
      app.close();
      throw err;
    }
    for (const s of this.sockets) uWS.us_listen_socket_close(s);
    this.sockets = fresh;
    this.apps.push(app);
    this.tls = tls;
  }

  /** Refuses new connections; open ones go on. */
  stopListening(): void {
    for (const s of this.sockets) uWS.us_listen_socket_close(s);
    this.sockets = [];
  }

  /** Closes every connection and listen socket. */
  close(): void {
    this.sockets = [];
    for (const app of this.apps) app.close();
  }
}
