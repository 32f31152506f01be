// WebSockets of the Node engine, on the `ws` library, in the shape of types.ts: one WsRoute per
// `app.ws()` route takes the upgraded sockets, keeps uWS's idle timeout with automatic pings
// and its backpressure limit, and calls the route's behavior.

import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { WebSocketServer, type RawData, type WebSocket } from 'ws';
import type { UpgradeTarget } from './node-http.js';
import type { WsBehavior, WsConn } from './types.js';

const TEXT = { binary: false };
const EMPTY = Buffer.alloc(0);
const UNREAD_LIMIT = 64 * 1024;
const BINARY = { binary: true };
function ignore(): void {}

export class NodeWsConn<U> implements WsConn<U> {
  /** Something arrived since the idle check last looked. */
  active = true;
  /** Idle checks in a row that found nothing received. */
  quiet = 0;
  /** The close handler ran (uWS runs it at once on end() and close(), not when the peer answers). */
  reported = false;

  constructor(
    readonly socket: WebSocket,
    private readonly userData: U,
    private readonly route: WsRoute<U>,
  ) {}

  send(message: string | Buffer, isBinary = false): number {
    const ws = this.socket;
    if (ws.readyState !== ws.OPEN) return 0;
    // ws keeps a reference to a Buffer until the socket takes it; callers reuse theirs (as uWS allows).
    ws.send(typeof message === 'string' ? message : Buffer.from(message), isBinary ? BINARY : TEXT);
    if (this.route.closeOnBackpressureLimit && ws.bufferedAmount > this.route.maxBackpressure) this.close();
    return 1;
  }

  end(code?: number, reason?: string): void {
    this.route.closed(this, code ?? 1000, reason === undefined ? EMPTY : Buffer.from(reason));
    // A close frame queued behind this much unread data would wait for ws's 30 s close
    // timeout: a client that does not read is cut off at once.
    if (this.socket.bufferedAmount > UNREAD_LIMIT) this.socket.terminate();
    else this.socket.close(code, reason);
  }

  close(): void {
    this.route.closed(this, 1006, EMPTY);
    this.socket.terminate();
  }

  getBufferedAmount(): number {
    return this.socket.bufferedAmount;
  }

  getUserData(): U {
    return this.userData;
  }
}

export class WsRoute<U> implements UpgradeTarget {
  private readonly server: WebSocketServer;
  private readonly conns = new Set<NodeWsConn<U>>();
  private timer: NodeJS.Timeout | null = null;
  readonly prefix: string;
  readonly exact: boolean;
  readonly maxBackpressure: number;
  readonly closeOnBackpressureLimit: boolean;

  constructor(
    pattern: string,
    readonly behavior: WsBehavior<U>,
  ) {
    this.exact = !pattern.endsWith('/*');
    this.prefix = this.exact ? pattern : pattern.slice(0, -1);
    this.maxBackpressure = behavior.maxBackpressure;
    this.closeOnBackpressureLimit = behavior.closeOnBackpressureLimit;
    this.server = new WebSocketServer({ noServer: true, maxPayload: behavior.maxPayloadLength, perMessageDeflate: false, clientTracking: false });
    if (behavior.idleTimeout > 0) {
      // Checked every half timeout: quiet for one check gets a ping, for two it is closed.
      this.timer = setInterval(() => this.checkIdle(), (behavior.idleTimeout * 1000) / 2);
      this.timer.unref();
    }
  }

  matches(url: string): boolean {
    return this.exact ? url === this.prefix : url.startsWith(this.prefix);
  }

  accept(req: IncomingMessage, socket: Duplex, head: Buffer, userData: unknown): void {
    this.server.handleUpgrade(req, socket, head, (ws) => this.open(ws, userData as U));
  }

  private open(ws: WebSocket, userData: U): void {
    const conn = new NodeWsConn(ws, userData, this);
    const b = this.behavior;
    this.conns.add(conn);
    ws.on('error', ignore);
    ws.on('message', (data: RawData, isBinary: boolean) => {
      conn.active = true;
      b.message(conn, data as Buffer, isBinary);
    });
    ws.on('pong', () => (conn.active = true));
    ws.on('ping', () => (conn.active = true));
    ws.on('close', (code: number, reason: Buffer) => this.closed(conn, code, reason));
    b.open(conn);
  }

  /** Runs the close handler once per connection. */
  closed(conn: NodeWsConn<U>, code: number, reason: Buffer): void {
    if (conn.reported) return;
    conn.reported = true;
    this.conns.delete(conn);
    this.behavior.close(conn, code, new Uint8Array(reason).buffer as ArrayBuffer);
  }

  private checkIdle(): void {
    for (const c of this.conns) {
      if (c.active) {
        c.active = false;
        c.quiet = 0;
        continue;
      }
      c.quiet++;
      if (c.quiet >= 2) c.close();
      else if (this.behavior.sendPingsAutomatically) c.socket.ping();
    }
  }

  /** Ends every connection at once. */
  close(): void {
    if (this.timer !== null) clearInterval(this.timer);
    this.timer = null;
    for (const c of [...this.conns]) c.close();
  }
}
