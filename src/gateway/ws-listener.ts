// The client WebSocket endpoint (docs/interface.md "WebSocket"): `/api-token/<T>/` (also without the trailing
// slash, `/api-key/`, or `/` with a token header) on the RPC port and on rpc.wsPort. The
// token is checked before upgrading (401/403/429 as plain HTTP, socket closed). A frame is
// analyzed in one pass as HTTP bodies are (docs/internals-json.md "The WebSocket frame path"):
// subscriptions go to the hub; every other call is forwarded like an HTTP call and answered
// on the socket with the node's bytes.

import { errorBody, Errors, statusLine, type GatewayErrorSpec } from '../errors.js';
import { A_PARSE_ERROR, A_SINGLE, type Analysis } from '../rpc/analyze.js';
import { Exchange } from './exchange.js';
import { MODE_DEFAULT } from './headers.js';
import { pathToken } from './http-listener.js';
import type { Serving } from './serving.js';
import type { TokenRecord } from './token-table.js';
import { WsResponder, type WsPeer } from './ws-responder.js';
import { bookBytes, bookCall, WS_KEEPALIVE, WS_NOTIFICATIONS, WS_OTHER } from '../usage/booking.js';
import type { UsageMeter } from '../usage/meter.js';
import { isUnsubscribe, subscriptionKind } from '../upstream/ws/frames.js';
import type { ClientSub, Subscriber, SubscriptionHub } from '../upstream/ws/hub.js';
import { copyOf } from '../server/chunk.js';
import type { HttpApp, HttpReq as HttpRequest, HttpRes as HttpResponse, UpgradeContext, WsConn } from '../server/types.js';

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
  socket: WsConn<Holder> | null = null;
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

  /** Answers to subscribe and unsubscribe calls: each booked as its call's outcome (docs/usage.md). */
  answer(method: string, failed: boolean, text: string): void {
    if (this.closed || this.socket === null) return;
    bookCall(this.usage, this.token.id, method, failed, 0, Buffer.byteLength(text));
    this.write(text);
  }

  /** An unreadable frame's error answer: a call of WS_OTHER that failed. */
  refuse(text: string, bytesIn: number): void {
    bookCall(this.usage, this.token.id, WS_OTHER, true, bytesIn, Buffer.byteLength(text));
    this.write(text);
  }

  /** Notifications (booked as WS usage); `frame` is reused once this returns. */
  notify(frame: Buffer): void {
    if (this.closed || this.socket === null) return;
    bookBytes(this.usage, this.token.id, WS_NOTIFICATIONS, 0, frame.length);
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

  /** Answers of forwarded calls (the Exchange books their usage): a node's bytes go out as they came, in a text frame. */
  deliver(body: string | Buffer): void {
    this.write(body);
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

export function attachWebSocket(app: HttpApp, serving: Serving, hub: SubscriptionHub, limits: WsLimits, stats: WsStats): void {
  /** Open sockets by token id, for revocation. */
  const open = new Map<string, Set<WsClient>>();
  serving.services.tokens.onRevoked((id) => closeRevoked(open, id));
  const upgrade = (res: HttpResponse, req: HttpRequest, context: UpgradeContext): void => {
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
      const frame = copyOf(message);
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

/**
 * A text frame: analyzed once, like an HTTP body (rpc/analyze.ts, no JSON.parse); the analysis
 * decides whether it is a ping, a subscription for the hub, or a call for the Exchange.
 */
function onFrame(c: WsClient, frame: Buffer, serving: Serving, hub: SubscriptionHub): void {
  const off = serving.services.offload;
  const maxBatch = serving.settings.maxBatch;
  if (!off.offloadParse(frame.length)) return dispatch(c, frame, serving, hub, off.analyzeInline(frame, maxBatch));
  off.analyze(frame, maxBatch).then(
    (a) => dispatch(c, frame, serving, hub, a),
    (err: Error) => {
      serving.services.log.error({ err }, 'worker analyze failed');
      dispatch(c, frame, serving, hub, off.analyzeInline(frame, maxBatch));
    },
  );
}

function dispatch(c: WsClient, frame: Buffer, serving: Serving, hub: SubscriptionHub, a: Analysis): void {
  if (a.type === A_SINGLE) {
    const method = a.method;
    // web3.js and kit keep the socket alive with `ping` notifications: never forwarded, not calls.
    if (a.notification && method === 'ping') return bookBytes(c.usage, c.token.id, WS_KEEPALIVE, frame.length, 0);
    const kind = subscriptionKind(method);
    if (kind !== null || isUnsubscribe(method)) {
      // A frame analyzed in a worker may come back after the client left (and the hub dropped it).
      if (c.closed) return;
      // The call is booked when the hub answers it (WsClient.answer), with its outcome.
      bookBytes(c.usage, c.token.id, method, frame.length, 0);
      const id = a.idStart < 0 ? 'null' : frame.toString('utf8', a.idStart, a.idEnd);
      // Only subscription frames decode their params: the hub keys shared subscriptions by
      // their canonical JSON (upstream/ws/frames.ts).
      const params = a.paramsStart < 0 ? undefined : (JSON.parse(frame.toString('utf8', a.paramsStart, a.paramsEnd)) as unknown);
      if (kind !== null) hub.subscribe(c, method, params, id);
      else hub.unsubscribe(c, method, params, id);
      return;
    }
  } else if (a.type === A_PARSE_ERROR) {
    return c.refuse(a.reply, frame.length);
  }
  // Any other call, batch or invalid request: the request core HTTP calls use routes and
  // answers it, here on the socket.
  new Exchange(serving, c.token, c.responder, MODE_DEFAULT, '').startAnalyzed(frame, a);
}
