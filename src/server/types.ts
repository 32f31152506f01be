// The one interface every client-facing server is written against (the gateway's RPC and
// WebSocket routes, the simulated node): the part of uWebSockets.js's API we use. Two engines
// implement it: uWebSockets.js itself (uws-engine.ts, its objects satisfy these types as they
// are, at no cost), and Node's own `http` with the `ws` library (node-engine.ts) where no
// uWebSockets.js binary loads (docs/runtimes.md). Request handlers never ask which engine runs.

/** The request, valid only during the synchronous handler (as in uWS). */
export interface HttpReq {
  /** A header's value by lower-case name (a Buffer spares uWS a string conversion); '' when absent. */
  getHeader(lowerCaseName: string | Buffer): string;
  /** The path, without the query string. */
  getUrl(): string;
  /** The method in lower case. */
  getMethod(): string;
  forEach(cb: (key: string, value: string) => void): void;
}

/** A body chunk: uWS hands an ArrayBuffer reused after the callback, Node a Uint8Array. */
export type BodyChunk = ArrayBuffer | Uint8Array;

/** The response; never touched after onAborted ran. */
export interface HttpRes {
  onAborted(handler: () => void): this;
  /** Every body chunk; the last has isLast (an empty body: one empty last chunk). */
  onData(handler: (chunk: BodyChunk, isLast: boolean) => void): this;
  cork(cb: () => void): this;
  /** "200 OK". */
  writeStatus(status: string | Buffer): this;
  /** A value may carry further `\r\n`-joined header lines (gateway/response-heads.ts). */
  writeHeader(key: string | Buffer, value: string | Buffer): this;
  end(body?: string | Buffer, closeConnection?: boolean): this;
  /**
   * Body bytes of an answer of unknown length (sent chunked), after status and headers: what
   * the socket does not take now is kept (copied). False: the client is behind; onWritable
   * says when it caught up.
   */
  write(chunk: Uint8Array): boolean;
  /**
   * The next body bytes of an answer of `totalSize` bytes (sent with Content-Length): what the
   * socket does not take is not kept, getWriteOffset() tells how far it got. [ok, done]: ok
   * false when the client is behind, done once totalSize bytes went.
   */
  tryEnd(chunk: Uint8Array, totalSize: number): [boolean, boolean];
  /** Body bytes taken so far. */
  getWriteOffset(): number;
  /** Called with getWriteOffset() when a client that was behind can take more; return true once it needs no more calls. */
  onWritable(handler: (offset: number) => boolean): this;
  /** HEAD answers: status and headers only. */
  endWithoutBody(): this;
  /** Ends the connection at once, nothing written. */
  close(): this;
  getRemoteAddressAsText(): ArrayBuffer;
  upgrade<U>(userData: U, secWebSocketKey: string, secWebSocketProtocol: string, secWebSocketExtensions: string, context: UpgradeContext): void;
}

/** Opaque: handed to upgrade() as the upgrade handler got it. */
export type UpgradeContext = unknown;

export interface WsConn<U> {
  /** Text unless isBinary; returns uWS's send status (unused). */
  send(message: string | Buffer, isBinary?: boolean): unknown;
  /** A close frame with code and reason. */
  end(code?: number, reason?: string): void;
  /** Ends the connection at once. */
  close(): void;
  getBufferedAmount(): number;
  getUserData(): U;
}

export interface WsBehavior<U> {
  compression?: number;
  maxPayloadLength: number;
  /** Seconds without anything received before the connection is closed (0: never). */
  idleTimeout: number;
  sendPingsAutomatically: boolean;
  maxBackpressure: number;
  closeOnBackpressureLimit: boolean;
  upgrade(res: HttpRes, req: HttpReq, context: UpgradeContext): void;
  open(ws: WsConn<U>): void;
  /** `message` is valid only during the call (copy to keep). */
  message(ws: WsConn<U>, message: BodyChunk, isBinary: boolean): void;
  close(ws: WsConn<U>, code: number, message: ArrayBuffer): void;
}

export type HttpHandler = (res: HttpRes, req: HttpReq) => void;

/** Routes: a path, or a prefix ending in `/*`; the first match in attach order serves. */
export interface HttpApp {
  get(pattern: string, handler: HttpHandler): HttpApp;
  post(pattern: string, handler: HttpHandler): HttpApp;
  any(pattern: string, handler: HttpHandler): HttpApp;
  ws<U>(pattern: string, behavior: WsBehavior<U>): HttpApp;
  /** Closes every listen socket and connection of this app. */
  close(): void;
}

/** A listening socket, as the engine keeps it. */
export type ListenSocket = object;

/** TLS files (paths), read when an app is built. */
export interface TlsFiles {
  cert: string;
  key: string;
  ca?: string | undefined;
}

/**
 * A server implementation. `exclusive` listens fail when anything holds the port; shared
 * ones let other listeners of this process's data-plane threads (or a certificate swap) bind
 * it too (SO_REUSEPORT).
 */
export interface ServerEngine {
  /** 'uws' or 'node'. */
  readonly name: ServerName;
  /** Why this engine serves: which binary loaded, or why none did. */
  readonly reason: string;
  /**
   * Throws when the TLS files cannot be used. `refusal` is the body of the engine's own
   * answers to requests no handler sees (malformed HTTP 400, a request that did not arrive in
   * time 408, a request line and headers over MAX_HEAD_BYTES 431), for engines that let it be chosen (Node's; uWS writes its own page).
   */
  app(tls: TlsFiles | null, refusal?: RefusalBody): HttpApp;
  /** Resolves null when the port cannot be bound. */
  listen(app: HttpApp, host: string, port: number, exclusive: boolean): Promise<ListenSocket | null>;
  /** listen() done before returning; only engines that can (uWS), for a certificate swap's new app. */
  listenNow?(app: HttpApp, host: string, port: number, exclusive: boolean): ListenSocket | null;
  localPort(socket: ListenSocket): number;
  closeListen(socket: ListenSocket): void;
  /** Several listeners of this process can share a port (SO_REUSEPORT): data-plane threads. */
  readonly sharesPorts: boolean;
  /**
   * The engine swaps an app's certificate in place (swapCertificate). uWS cannot: it reads
   * certificates only when an app is built, so the caller builds a new app and listens on the
   * same ports with listenNow (its TLS ports are opened shared for that).
   */
  readonly swapsCertificates: boolean;
  /** New connections of `app` get the certificate in `tls` from now on; throws on unusable files. */
  swapCertificate(app: HttpApp, tls: TlsFiles): void;
}

export type ServerName = 'uws' | 'node';

/** The JSON body of an engine's own refusal with HTTP `status` (400, 408 or 431). */
export type RefusalBody = (status: number) => string;

/**
 * The largest request line plus headers either engine reads (uWS's UWS_HTTP_MAX_HEADERS_SIZE,
 * Node's maxHeaderSize); beyond it the engine refuses with 431 (docs/http-compatibility.md).
 */
export const MAX_HEAD_BYTES = 16 * 1024;
