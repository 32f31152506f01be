// The uWebSockets.js engine: its apps are the interface of types.ts as they are (no wrapper on
// the request path); only listening goes through the native module's functions.

import type { HttpApp, ListenSocket, ServerEngine, TlsFiles } from './types.js';
import type { UwsNative } from './uws-binary.js';

/** uSockets' LIBUS_LISTEN_EXCLUSIVE_PORT; without it uSockets sets SO_REUSEPORT. */
const EXCLUSIVE_PORT = 1;
const SHARED_PORT = 0;

type Listen = (host: string, port: number, options: number, cb: (s: ListenSocket | false) => void) => void;

export class UwsEngine implements ServerEngine {
  readonly name = 'uws';
  readonly sharesPorts = true;
  readonly swapsCertificates = false;

  constructor(
    private readonly uws: UwsNative,
    readonly reason: string,
  ) {}

  /** uWS writes its own refusals (an HTML page): the body cannot be chosen. */
  app(tls: TlsFiles | null): HttpApp {
    if (tls === null) return this.uws.App() as HttpApp;
    return this.uws.SSLApp({ cert_file_name: tls.cert, key_file_name: tls.key, ...(tls.ca === undefined ? {} : { ca_file_name: tls.ca }) }) as HttpApp;
  }

  listen(app: HttpApp, host: string, port: number, exclusive: boolean): Promise<ListenSocket | null> {
    return Promise.resolve(this.listenNow(app, host, port, exclusive));
  }

  /** uWS calls back before listen() returns. */
  listenNow(app: HttpApp, host: string, port: number, exclusive: boolean): ListenSocket | null {
    const got: { sock: ListenSocket | false } = { sock: false };
    const listen = (app as unknown as { listen: Listen }).listen;
    listen.call(app, host, port, exclusive ? EXCLUSIVE_PORT : SHARED_PORT, (s) => (got.sock = s));
    return got.sock === false ? null : got.sock;
  }

  localPort(socket: ListenSocket): number {
    return this.uws.us_socket_local_port(socket);
  }

  closeListen(socket: ListenSocket): void {
    this.uws.us_listen_socket_close(socket);
  }

  swapCertificate(): void {
    throw new Error('uWS reads certificates only when an app is built');
  }
}
