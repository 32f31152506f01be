// Multiplexed subscriptions (docs/interface.md "WebSocket"). Identical subscriptions (same method and canonical
// params) from any number of clients share one subscription on one node; every client gets
// its own id, and notifications are rewritten per client by splicing that id into the node's
// raw frame. When a node's socket drops or the node turns unusable, its subscriptions are
// placed on another node under the same client ids; slot-like streams never go backwards.

import type { Logger } from 'pino';
import { errorBody, Errors } from '../../errors.js';
import { answersProbes, type NodeView } from '../../routing/node-view.js';
import { pickNode } from '../../routing/select.js';
import type { UpstreamNode } from '../node.js';
import { canonicalJson, NotificationFrames, notificationSlot, notificationSpans, subscriptionKind, type SubscriptionKind } from './frames.js';
import { UpstreamSocket, type Reply } from './node-socket.js';

/** A client connection as the hub sees it. */
export interface Subscriber {
  /** Client-visible subscription id (raw JSON text) → subscription. */
  readonly subs: Map<string, ClientSub>;
  /** Canonical keys this connection subscribed to (duplicate check). */
  readonly keys: Set<string>;
  closed: boolean;
  /** The answer to the client's subscribe or unsubscribe call `method` (booked as its outcome). */
  answer(method: string, failed: boolean, text: string): void;
  /** A notification; `frame` is reused once this returns (uWS copies what it sends). */
  notify(frame: Buffer): void;
}

export interface HubOptions {
  chain: 'solana' | 'evm';
  maxSubscriptionsPerConnection: number;
}

/** What the hub reads of a node: what routing reads, and where its WebSocket is. */
export interface HubNode extends NodeView {
  readonly wsUrl: string;
}

export interface NodeSource<N extends HubNode> {
  readonly nodes: readonly N[];
}

/** One WebSocket to a node as the hub uses it (an UpstreamSocket; fakes in tests). */
export interface NodeSocket {
  readonly node: HubNode;
  readonly closed: boolean;
  request(method: string, paramsJson: string, reply: Reply): void;
  send(method: string, paramsJson: string): void;
  close(): void;
}

/** What a node socket tells the hub. */
export interface NodeSocketEvents {
  notification(socket: NodeSocket, frame: Buffer): void;
  /** The socket is gone (closed, failed, or never opened); no frame arrives after this. */
  closed(socket: NodeSocket, reason: string): void;
}

/** Opens a socket to a node (the seam where tests put fake sockets). */
export type OpenSocket<N extends HubNode> = (node: N, events: NodeSocketEvents) => NodeSocket;

/** Real node WebSockets, for the gateway. */
export function openUpstreamSocket(log: Logger): OpenSocket<UpstreamNode> {
  return (node, events) => new UpstreamSocket(node, node.wsUrl, events, log);
}

export class ClientSub {
  constructor(
    readonly idText: string,
    readonly conn: Subscriber,
    readonly shared: SharedSub,
    /** The subscribe request's id (raw), until it is answered. */
    public reqId: string | null,
  ) {}
}

export class SharedSub {
  socket: NodeSocket | null = null;
  upstreamId: string | null = null;
  active = false;
  retired = false;
  readonly clients = new Set<ClientSub>();
  lastSlot = -1;
  placements = 0;
  retryTimer: NodeJS.Timeout | null = null;

  constructor(
    readonly key: string,
    readonly method: string,
    readonly paramsJson: string,
    readonly kind: SubscriptionKind,
  ) {}
}

const INVALID_SUB = { code: -32602, message: 'Invalid subscription id.' };
const BACKOFF_MIN_MS = 1000;
const BACKOFF_MAX_MS = 30_000;

function rpcError(e: { code: number; message: string }, id: string): string {
  return `{"jsonrpc":"2.0","error":{"code":${e.code},"message":${JSON.stringify(e.message)}},"id":${id}}`;
}

export class SubscriptionHub<N extends HubNode = UpstreamNode> implements NodeSocketEvents {
  private readonly byKey = new Map<string, SharedSub>();
  private readonly sockets = new Map<HubNode, NodeSocket>();
  private readonly byUpstream = new Map<NodeSocket, Map<string, SharedSub>>();
  private readonly avoid = new Map<HubNode, { until: number; backoff: number }>();
  private readonly frames = new NotificationFrames();
  private nextClientId = 0;
  private stopped = false;

  constructor(
    private readonly pool: NodeSource<N>,
    private opts: HubOptions,
    private readonly log: Logger,
    private readonly openSocket: OpenSocket<N>,
  ) {}

  /** A reload: new subscriptions follow `next`; those held keep their upstream subscription. */
  reconfigure(next: HubOptions): void {
    this.opts = next;
  }

  /** Upstream subscriptions held now, per node id (the figure the issue asks to measure). */
  upstreamSubscriptions(): Record<string, number> {
    const out: Record<string, number> = {};
    for (const [sock, subs] of this.byUpstream) out[sock.node.id] = (out[sock.node.id] ?? 0) + subs.size;
    return out;
  }

  get sharedCount(): number {
    return this.byKey.size;
  }

  private newClientId(): string {
    const n = this.nextClientId++;
    return this.opts.chain === 'evm' ? `"0x${n.toString(16)}"` : String(n);
  }

  subscribe(conn: Subscriber, method: string, params: unknown, reqId: string): void {
    const kind = subscriptionKind(method)!;
    const paramsJson = params === undefined ? '[]' : canonicalJson(params);
    const key = method + paramsJson;
    if (conn.keys.has(key)) return conn.answer(method, true, errorBody(Errors.duplicateSubscription, reqId, { method }));
    if (conn.subs.size >= this.opts.maxSubscriptionsPerConnection) {
      return conn.answer(method, true, errorBody(Errors.subscriptionLimit, reqId, { max: this.opts.maxSubscriptionsPerConnection }));
    }
    let shared = this.byKey.get(key);
    if (shared === undefined) {
      shared = new SharedSub(key, method, paramsJson, kind);
      this.byKey.set(key, shared);
      this.place(shared);
    }
    const cs = new ClientSub(this.newClientId(), conn, shared, reqId);
    conn.subs.set(cs.idText, cs);
    conn.keys.add(key);
    shared.clients.add(cs);
    if (shared.active) this.confirm(cs);
  }

  unsubscribe(conn: Subscriber, method: string, params: unknown, reqId: string): void {
    const first = Array.isArray(params) ? (params[0] as unknown) : undefined;
    const idText = typeof first === 'number' ? String(first) : typeof first === 'string' ? JSON.stringify(first) : null;
    const cs = idText === null ? undefined : conn.subs.get(idText);
    if (cs === undefined || cs.reqId !== null) return conn.answer(method, true, rpcError(INVALID_SUB, reqId));
    this.release(cs);
    conn.answer(method, false, `{"jsonrpc":"2.0","result":true,"id":${reqId}}`);
  }

  /** A client went away: release all its subscriptions. */
  dropClient(conn: Subscriber): void {
    for (const cs of [...conn.subs.values()]) this.release(cs);
  }

  private confirm(cs: ClientSub): void {
    if (cs.reqId === null) return;
    cs.conn.answer(cs.shared.method, false, `{"jsonrpc":"2.0","result":${cs.idText},"id":${cs.reqId}}`);
    cs.reqId = null;
  }

  private release(cs: ClientSub): void {
    cs.conn.subs.delete(cs.idText);
    cs.conn.keys.delete(cs.shared.key);
    const shared = cs.shared;
    shared.clients.delete(cs);
    if (shared.clients.size === 0) this.retire(shared);
  }

  /** The last client left: cancel upstream (the node's answer is not awaited). */
  private retire(shared: SharedSub): void {
    shared.retired = true;
    this.byKey.delete(shared.key);
    if (shared.retryTimer !== null) clearTimeout(shared.retryTimer);
    if (shared.active && shared.socket !== null && shared.upstreamId !== null) {
      this.byUpstream.get(shared.socket)?.delete(shared.upstreamId);
      shared.socket.send(shared.kind.unsubscribe, `[${shared.upstreamId}]`);
    }
    shared.active = false;
  }

  /** Not avoided after its socket dropped or it refused a subscription (backoff per node). */
  private notAvoided(node: HubNode, now: number): boolean {
    const a = this.avoid.get(node);
    return a === undefined || now >= a.until;
  }

  /** Places (or re-places) a shared subscription on a node and subscribes there. */
  private place(shared: SharedSub): void {
    if (shared.retired || this.stopped) return;
    const now = Date.now();
    let exclude = 0;
    // A subscription lives long: only nodes answering probes, unless no other is left.
    for (const n of this.pool.nodes) if (!this.notAvoided(n, now) || !answersProbes(n)) exclude |= n.bit;
    const node = pickNode(this.pool.nodes, exclude) ?? pickNode(this.pool.nodes, 0);
    if (node === null) return this.retryLater(shared);
    const socket = this.socketFor(node);
    shared.socket = socket;
    shared.placements++;
    socket.request(shared.method, shared.paramsJson, (frame, err) => this.placed(shared, socket, frame, err));
  }

  private retryLater(shared: SharedSub): void {
    if (shared.retryTimer !== null || shared.retired) return;
    shared.retryTimer = setTimeout(() => {
      shared.retryTimer = null;
      this.place(shared);
    }, BACKOFF_MIN_MS);
    shared.retryTimer.unref();
  }

  private placed(shared: SharedSub, socket: NodeSocket, frame: Buffer | null, err: string | null): void {
    if (frame === null) {
      // The socket died before answering: closed() avoids the node; try elsewhere.
      this.log.debug({ node: socket.node.id, err }, 'subscribe not answered');
      if (!shared.retired) this.place(shared);
      return;
    }
    const text = frame.toString();
    let answer: { result?: unknown; error?: { code: number; message: string } };
    try {
      answer = JSON.parse(text) as typeof answer;
    } catch {
      answer = { error: { code: -32603, message: 'node answered with invalid JSON' } };
    }
    if (answer.error !== undefined || answer.result === undefined) {
      // The node refused the subscription itself (e.g. invalid params): tell the waiting
      // clients; those already confirmed (a failover) are retried on another node.
      const e = answer.error ?? { code: -32603, message: 'node answered without a result' };
      let confirmed = 0;
      for (const cs of [...shared.clients]) {
        if (cs.reqId === null) {
          confirmed++;
          continue;
        }
        cs.conn.answer(shared.method, true, rpcError(e, cs.reqId));
        cs.reqId = null;
        this.release(cs);
      }
      if (confirmed > 0 && !shared.retired) {
        this.avoidNode(socket.node);
        this.retryLater(shared);
      }
      return;
    }
    const upstreamId = canonicalJson(answer.result);
    if (shared.retired || socket.closed) {
      if (!socket.closed) socket.send(shared.kind.unsubscribe, `[${upstreamId}]`);
      if (!shared.retired) this.place(shared);
      return;
    }
    shared.upstreamId = upstreamId;
    shared.active = true;
    let map = this.byUpstream.get(socket);
    if (map === undefined) this.byUpstream.set(socket, (map = new Map()));
    map.set(upstreamId, shared);
    this.avoid.delete(socket.node);
    for (const cs of shared.clients) this.confirm(cs);
  }

  private socketFor(node: N): NodeSocket {
    const existing = this.sockets.get(node);
    if (existing !== undefined && !existing.closed) return existing;
    const socket = this.openSocket(node, this);
    this.sockets.set(node, socket);
    return socket;
  }

  private avoidNode(node: HubNode): void {
    const prev = this.avoid.get(node);
    const backoff = prev === undefined ? BACKOFF_MIN_MS : Math.min(prev.backoff * 2, BACKOFF_MAX_MS);
    this.avoid.set(node, { until: Date.now() + backoff, backoff });
  }

  notification(socket: NodeSocket, frame: Buffer): void {
    const spans = notificationSpans(frame);
    if (spans === null) return;
    const shared = this.byUpstream.get(socket)?.get(spans.upstreamId);
    if (shared === undefined) return;
    if (shared.kind.slotLike) {
      const slot = notificationSlot(frame);
      // After a failover the new node may repeat or lag: never send a slot twice or backwards.
      if (slot >= 0) {
        if (slot <= shared.lastSlot) return;
        shared.lastSlot = slot;
      }
    }
    const frames = this.frames;
    frames.begin(frame, spans.idStart, spans.idEnd);
    for (const cs of shared.clients) if (cs.reqId === null) cs.conn.notify(frames.for(cs.idText));
    frames.end();
  }

  closed(socket: NodeSocket): void {
    if (this.sockets.get(socket.node) === socket) this.sockets.delete(socket.node);
    const subs = this.byUpstream.get(socket);
    this.byUpstream.delete(socket);
    if (this.stopped) return;
    this.avoidNode(socket.node);
    if (subs === undefined) return;
    for (const shared of subs.values()) {
      shared.active = false;
      shared.upstreamId = null;
      this.place(shared);
    }
    if (subs.size > 0) this.log.info({ node: socket.node.id, moved: subs.size }, 'subscriptions moved to another node');
  }

  /** The node is unhealthy, ejected or drained: move its subscriptions now. */
  nodeUnusable(node: N): void {
    this.sockets.get(node)?.close();
  }

  close(): void {
    this.stopped = true;
    for (const s of this.sockets.values()) s.close();
    for (const shared of this.byKey.values()) if (shared.retryTimer !== null) clearTimeout(shared.retryTimer);
  }
}
