// Multiplexed subscriptions (docs/interface.md "WebSocket"). Identical subscriptions (same method and canonical
// params) from any number of clients share one subscription on one node; every client gets
// its own id, and notifications are rewritten per client by splicing that id into the node's
// raw frame. When a node's socket drops or the node turns unusable, its subscriptions are
// placed on another node under the same client ids; slot-like streams never go backwards.
// With `ws.redundancy` N each one is held on N nodes at once and the first copy of a
// notification wins (dedup.ts; docs/reliability.md "Redundant WebSocket subscriptions").

import type { Logger } from 'pino';
import { errorBody, Errors } from '../../errors.js';
import { answersProbes } from '../../routing/node-view.js';
import { pickNode } from '../../routing/select.js';
import type { UpstreamNode } from '../node.js';
import { DELIVER, DeliveryWindow, DUPLICATE, FINAL, LATE, type Verdict } from './dedup.js';
import { canonicalJson, NotificationFrames, notificationSlot, notificationSpans, subscriptionKind } from './frames.js';
import { UpstreamSocket } from './node-socket.js';
import {
  ClientSub,
  Placement,
  SharedSub,
  type HubNode,
  type HubOptions,
  type NodeSocket,
  type NodeSocketEvents,
  type NodeSource,
  type OpenSocket,
  type RedundancyCounts,
  type Subscriber,
} from './subscriptions.js';

export type { HubNode, HubOptions, NodeSocket, NodeSocketEvents, NodeSource, OpenSocket, RedundancyCounts, Subscriber } from './subscriptions.js';
export { ClientSub, Placement, SharedSub } from './subscriptions.js';

/** Real node WebSockets, for the gateway. */
export function openUpstreamSocket(log: Logger): OpenSocket<UpstreamNode> {
  return (node, events) => new UpstreamSocket(node, node.wsUrl, events, log);
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
  private readonly byUpstream = new Map<NodeSocket, Map<string, Placement>>();
  private readonly avoid = new Map<HubNode, { until: number; backoff: number }>();
  /** Subscriptions with fewer placements than wanted, tried again every BACKOFF_MIN_MS. */
  private readonly short = new Set<SharedSub>();
  private shortTimer: NodeJS.Timeout | null = null;
  private readonly counts = new Map<string, RedundancyCounts>();
  private readonly frames = new NotificationFrames();
  private nextClientId = 0;
  private stopped = false;

  constructor(
    private readonly pool: NodeSource<N>,
    private opts: HubOptions,
    private readonly log: Logger,
    private readonly openSocket: OpenSocket<N>,
  ) {}

  /** A reload: new subscriptions follow `next`; those held keep their upstream subscriptions. */
  reconfigure(next: HubOptions): void {
    this.opts = next;
  }

  /** Upstream subscriptions held now, per node id: each placement counts. */
  upstreamSubscriptions(): Record<string, number> {
    const out: Record<string, number> = {};
    for (const [sock, subs] of this.byUpstream) out[sock.node.id] = (out[sock.node.id] ?? 0) + subs.size;
    return out;
  }

  /** Per node id, since start: notifications it delivered first and copies dropped (redundant subscriptions only). */
  redundancyCounts(): Record<string, RedundancyCounts> {
    const out: Record<string, RedundancyCounts> = {};
    for (const [node, c] of this.counts) out[node] = { ...c };
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
      const want = kind.dedup === 'none' ? 1 : Math.max(1, this.opts.redundancy ?? 1);
      shared = new SharedSub(key, method, paramsJson, kind, want, want > 1 ? new DeliveryWindow(kind.dedup) : null);
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

  /** No longer shared under its key (a new subscriber gets a new one); those placed are cancelled. */
  private forget(shared: SharedSub): void {
    if (this.byKey.get(shared.key) === shared) this.byKey.delete(shared.key);
    this.short.delete(shared);
    for (const p of shared.placements) this.cancel(p);
    shared.placements.length = 0;
  }

  /** The last client left: cancel upstream (the node's answer is not awaited). */
  private retire(shared: SharedSub): void {
    shared.retired = true;
    this.forget(shared);
    shared.active = false;
  }

  /** Unsubscribes a subscribed placement (one still waiting is cancelled when answered). */
  private cancel(p: Placement): void {
    if (p.upstreamId === null) return;
    this.byUpstream.get(p.socket)?.delete(p.upstreamId);
    if (!p.socket.closed) p.socket.send(p.shared.kind.unsubscribe, `[${p.upstreamId}]`);
    p.upstreamId = null;
  }

  /** A placement is gone (its node refused, dropped or never answered). */
  private unplace(p: Placement): void {
    const shared = p.shared;
    const i = shared.placements.indexOf(p);
    if (i >= 0) shared.placements.splice(i, 1);
    if (p.upstreamId !== null) this.byUpstream.get(p.socket)?.delete(p.upstreamId);
    p.upstreamId = null;
    shared.active = shared.placements.some((q) => q.upstreamId !== null);
  }

  /** Not avoided after its socket dropped or it refused a subscription (backoff per node). */
  private notAvoided(node: HubNode, now: number): boolean {
    const a = this.avoid.get(node);
    return a === undefined || now >= a.until;
  }

  /** Tops a shared subscription up to its wanted placements, each on a node it is not on yet. */
  private place(shared: SharedSub): void {
    if (shared.retired || shared.done || this.stopped) return;
    const now = Date.now();
    let exclude = shared.refused;
    for (const p of shared.placements) exclude |= p.socket.node.bit;
    // A subscription lives long: only nodes answering probes, unless no other is left.
    for (const n of this.pool.nodes) if (!this.notAvoided(n, now) || !answersProbes(n)) exclude |= n.bit;
    // Never more than the pool has nodes: a one-node pool does not keep every subscription short.
    const want = Math.max(1, Math.min(shared.want, this.pool.nodes.length));
    while (shared.placements.length < want) {
      // The first placement may take any node (as without redundancy); extra ones only a usable, distinct one.
      const node = pickNode(this.pool.nodes, exclude) ?? (shared.placements.length === 0 ? pickNode(this.pool.nodes, 0) : null);
      if (node === null) break;
      exclude |= node.bit;
      const p = new Placement(shared, this.socketFor(node));
      shared.placements.push(p);
      p.socket.request(shared.method, shared.paramsJson, (frame, err) => this.placed(p, frame, err));
      if (shared.retired || shared.done) return;
    }
    if (shared.placements.length < want) this.later(shared);
    else this.short.delete(shared);
  }

  /** Placed again when the short timer next runs (a node may have come back). */
  private later(shared: SharedSub): void {
    if (shared.retired || shared.done || this.stopped) return;
    this.short.add(shared);
    if (this.shortTimer !== null) return;
    this.shortTimer = setTimeout(() => {
      this.shortTimer = null;
      const due = [...this.short];
      this.short.clear();
      for (const shared of due) this.place(shared);
    }, BACKOFF_MIN_MS);
    this.shortTimer.unref();
  }

  private placed(p: Placement, frame: Buffer | null, err: string | null): void {
    const shared = p.shared;
    const socket = p.socket;
    if (frame === null) {
      // The socket died before answering: closed() avoids the node; try elsewhere.
      this.log.debug({ node: socket.node.id, err }, 'subscribe not answered');
      this.unplace(p);
      this.place(shared);
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
      this.unplace(p);
      if (shared.retired || shared.done) return;
      shared.refused |= socket.node.bit;
      // Another placement may still take it: the clients wait for that one.
      if (shared.placements.length > 0) return this.later(shared);
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
        // With every node refused, each may be asked again.
        shared.refused = 0;
        this.later(shared);
      }
      return;
    }
    const upstreamId = canonicalJson(answer.result);
    if (shared.retired || shared.done || socket.closed) {
      if (!socket.closed) socket.send(shared.kind.unsubscribe, `[${upstreamId}]`);
      this.unplace(p);
      this.place(shared);
      return;
    }
    p.upstreamId = upstreamId;
    shared.active = true;
    let map = this.byUpstream.get(socket);
    if (map === undefined) this.byUpstream.set(socket, (map = new Map()));
    map.set(upstreamId, p);
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

  private countsOf(node: HubNode): RedundancyCounts {
    let c = this.counts.get(node.id);
    if (c === undefined) this.counts.set(node.id, (c = { first: 0, dropped: 0 }));
    return c;
  }

  notification(socket: NodeSocket, frame: Buffer): void {
    const spans = notificationSpans(frame);
    if (spans === null) return;
    const p = this.byUpstream.get(socket)?.get(spans.upstreamId);
    if (p === undefined) return;
    const shared = p.shared;
    let verdict: Verdict = DELIVER;
    if (shared.window !== null) {
      verdict = shared.window.admit(frame);
      if (verdict === DUPLICATE || verdict === LATE) {
        this.countsOf(socket.node).dropped++;
        return;
      }
      this.countsOf(socket.node).first++;
    } else if (shared.kind.slotLike) {
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
    if (verdict === FINAL) this.finish(p);
  }

  /** A one-shot subscription fired: the node that sent it ended it there; the others are cancelled. */
  private finish(first: Placement): void {
    const shared = first.shared;
    shared.done = true;
    this.byUpstream.get(first.socket)?.delete(first.upstreamId!);
    first.upstreamId = null;
    this.forget(shared);
  }

  closed(socket: NodeSocket): void {
    if (this.sockets.get(socket.node) === socket) this.sockets.delete(socket.node);
    const subs = this.byUpstream.get(socket);
    this.byUpstream.delete(socket);
    if (this.stopped) return;
    this.avoidNode(socket.node);
    if (subs === undefined) return;
    for (const p of subs.values()) {
      this.unplace(p);
      this.place(p.shared);
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
    if (this.shortTimer !== null) clearTimeout(this.shortTimer);
    this.short.clear();
  }
}
