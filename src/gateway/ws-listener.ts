// The client WebSocket endpoint (README "WebSocket"): `/api-token/<T>/` (also without the trailing
// slash, `/api-key/`, or `/` with a token header) on the RPC port and on rpc.wsPort. The
// token is checked before upgrading (401/403/429 as plain HTTP, socket closed). Subscriptions
// go to the hub; every other call is forwarded like an HTTP call and answered on the socket.

import type { HttpRequest, HttpResponse, TemplatedApp, us_socket_context_t, WebSocket } from 'uWebSockets.js';
import { errorBody, Errors, RpcErrors, rpcErrorBody, statusLine, type GatewayErrorSpec } from '../errors.js';
import { Exchange } from './exchange.js';
import { MODE_DEFAULT } from './headers.js';
import { pathToken } from './http-listener.js';
import type { Serving } from './serving.js';
import type { TokenRecord } from './token-table.js';
import { WsResponder, type WsPeer } from './ws-responder.js';
import { rawIdOf } from '../rpc/scan.js';
import { UsageMeter, WS_NOTIFICATIONS, WS_OTHER } from '../usage/meter.js';
import { isUnsubscribe, subscriptionKind } from '../upstream/ws/frames.js';
import type { ClientSub, Subscriber, SubscriptionHub } from '../upstream/ws/hub.js';

export interface WsLimits {
  maxConnectionsPerToken: number;
  maxMessageBytes: number;
  maxBufferedBytes: number;
  idleTimeoutSec: number;
}

interface Holder {
  client: WsClient;
}

/** Per-connection state. */
export class WsClient implements Subscriber, WsPeer {
  readonly subs = new Map<string, ClientSub>();
  readonly keys = new Set<string>();
  closed = false;
  socket: WebSocket<Holder> | null = null;
  messagesIn = 0;
  bytesIn = 0;
  bytesOut = 0;
  /** Answers the calls forwarded from this connection. */
  readonly responder: WsResponder;

  constructor(
    readonly token: TokenRecord,
    readonly ip: string,
    private readonly maxBuffered: number,
    readonly usage: UsageMeter,
  ) {
    this.responder = new WsResponder(this);
  }

  /** Subscription answers (booked as WS usage). */
  send(text: string): void {
    if (this.closed || this.socket === null) return;
    this.usage.record(this.token.id, WS_NOTIFICATIONS, 0, 0, 0, Buffer.byteLength(text));
    this.write(text);
  }

  /** Notifications (booked as WS usage); `frame` is reused once this returns. */
  notify(frame: Buffer): void {
    if (this.closed || this.socket === null) return;
    this.usage.record(this.token.id, WS_NOTIFICATIONS, 0, 0, 0, frame.length);
    this.write(frame);
  }

  private write(data: string | Buffer): void {
    const ws = this.socket;
    if (this.closed || ws === null) return;
    ws.send(data, false);
    this.bytesOut += data.length;
    // A client that does not read must not hold memory or slow anyone else down.
    if (ws.getBufferedAmount() > this.maxBuffered) {
      this.closed = true;
      ws.end(1013, 'send buffer full: client too slow');
    }
  }

  /** Answers of forwarded calls (the Exchange books their usage). */
  deliver(body: string | Buffer): void {
    this.write(typeof body === 'string' ? body : body.toString());
  }
}

export interface WsStats {
  connections: number;
  /** Per token id. */
  byToken: Map<string, number>;
}

function refuse(res: HttpResponse, e: GatewayErrorSpec, data?: Record<string, unknown>): void {
  res.cork(() => {
    res.writeStatus(statusLine(e.http));
    res.writeHeader('content-type', 'application/json');
    res.end(errorBody(e, null, data), true);
  });
}

/** Ends a revoked token's open sockets; the client gets 1008 whether or not it sends anything. */
function closeRevoked(open: Map<string, Set<WsClient>>, tokenId: string): void {
  const clients = open.get(tokenId);
  if (clients === undefined) return;
  // Copied: ending a socket runs its close handler, which leaves the set.
  for (const c of [...clients]) {
    if (c.closed || c.socket === null) continue;
    c.closed = true;
    c.socket.end(1008, 'API token is inactive');
  }
}

export function attachWebSocket(app: TemplatedApp, serving: Serving, hub: SubscriptionHub, limits: WsLimits, stats: WsStats): void {
  /** Open sockets by token id, for revocation. */
  const open = new Map<string, Set<WsClient>>();
  serving.services.tokens.onRevoked((id) => closeRevoked(open, id));
  const upgrade = (res: HttpResponse, req: HttpRequest, context: us_socket_context_t): void => {
    const rt = serving.settings;
    const fromPath = pathToken(req.getUrl());
    if (fromPath === null) return refuse(res, Errors.notFound);
    let token = fromPath;
    for (const t of [req.getHeader(rt.names.token), req.getHeader(rt.names.apiKey)]) {
      if (t === '') continue;
      if (token !== '' && t !== token) return refuse(res, Errors.badHeaders, { reason: 'different API tokens in path and headers' });
      token = t;
    }
    if (token === '') return refuse(res, Errors.unauthorized, { reason: 'no API token' });
    const record = serving.services.tokens.find(token);
    if (record === null) return refuse(res, Errors.unauthorized, { reason: 'unknown API token' });
    if (!record.active) return refuse(res, Errors.forbidden, { token: record.prefix });
    if ((stats.byToken.get(record.id) ?? 0) >= limits.maxConnectionsPerToken) {
      return refuse(res, Errors.rateLimited, { scope: 'token', reason: 'too many WebSocket connections for this token', max: limits.maxConnectionsPerToken });
    }
    const xff = rt.clientIp.enabled ? req.getHeader('x-forwarded-for') : '';
    const ip = rt.clientIp.resolve(Buffer.from(res.getRemoteAddressAsText()).toString(), xff);
    // uWS copies the user-data object's own fields: keep the client behind a reference.
    res.upgrade<Holder>(
      { client: new WsClient(record, ip, limits.maxBufferedBytes, serving.services.usage) },
      req.getHeader('sec-websocket-key'),
      req.getHeader('sec-websocket-protocol'),
      req.getHeader('sec-websocket-extensions'),
      context,
    );
  };

  app.ws<Holder>('/*', {
    maxPayloadLength: limits.maxMessageBytes,
    // uWS's own limit is a backstop; WsClient.send closes slow clients with 1013 first.
    maxBackpressure: limits.maxBufferedBytes * 2,
    closeOnBackpressureLimit: true,
    idleTimeout: limits.idleTimeoutSec,
    sendPingsAutomatically: true,
    upgrade,
    open(ws) {
      const c = ws.getUserData().client;
      c.socket = ws;
      stats.connections++;
      stats.byToken.set(c.token.id, (stats.byToken.get(c.token.id) ?? 0) + 1);
      let clients = open.get(c.token.id);
      if (clients === undefined) open.set(c.token.id, (clients = new Set()));
      clients.add(c);
      // Revoked between the upgrade and now: the notification found no socket to close.
      if (!c.token.active) {
        c.closed = true;
        ws.end(1008, 'API token is inactive');
      }
    },
    message(ws, message, isBinary) {
      const c = ws.getUserData().client;
      if (isBinary) {
        c.closed = true;
        ws.end(1003, 'binary frames are not supported: send JSON-RPC as text');
        return;
      }
      // A token deactivated while the socket is open stops working too (the sync flips
      // `active` on the very record this connection holds).
      if (!c.token.active) {
        c.closed = true;
        ws.end(1008, 'API token is inactive');
        return;
      }
      // uWS reuses the message memory after this callback: copy.
      const frame = Buffer.from(new Uint8Array(message));
      c.messagesIn++;
      c.bytesIn += frame.length;
      onFrame(c, frame, serving, hub);
    },
    close(ws) {
      const c = ws.getUserData().client;
      c.closed = true;
      c.socket = null;
      stats.connections--;
      const n = (stats.byToken.get(c.token.id) ?? 1) - 1;
      if (n <= 0) stats.byToken.delete(c.token.id);
      else stats.byToken.set(c.token.id, n);
      const clients = open.get(c.token.id);
      if (clients !== undefined && clients.delete(c) && clients.size === 0) open.delete(c.token.id);
      hub.dropClient(c);
    },
  });
}

function onFrame(c: WsClient, frame: Buffer, serving: Serving, hub: SubscriptionHub): void {
  let msg: unknown;
  try {
    msg = JSON.parse(frame.toString());
  } catch {
    c.usage.record(c.token.id, WS_OTHER, 1, 1, frame.length, 0);
    return c.send(rpcErrorBody(RpcErrors.parse, null));
  }
  if (typeof msg === 'object' && msg !== null && !Array.isArray(msg)) {
    const o = msg as { jsonrpc?: unknown; method?: unknown; id?: unknown; params?: unknown };
    if (typeof o.method === 'string' && o.jsonrpc === '2.0') {
      // web3.js and kit keep the socket alive with `ping` notifications: never forwarded.
      if (o.method === 'ping' && !('id' in o)) return c.usage.record(c.token.id, 'ping', 1, 0, frame.length, 0);
      const kind = subscriptionKind(o.method);
      if (kind !== null || isUnsubscribe(o.method)) {
        c.usage.record(c.token.id, o.method, 1, 0, frame.length, 0);
        const id = rawIdOf(frame) ?? 'null';
        if (kind !== null) hub.subscribe(c, o.method, o.params, id);
        else hub.unsubscribe(c, o.params, id);
        return;
      }
    }
  }
  // Any other call, batch or malformed request: the request core HTTP calls use validates,
  // routes and answers it, here on the socket.
  new Exchange(serving, c.token, c.responder, MODE_DEFAULT, '').start(frame);
}
