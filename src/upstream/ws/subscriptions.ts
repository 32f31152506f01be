// The hub's data: a client connection as the hub sees it, a node socket as it uses it, and a
// shared subscription with its client ids and its placements on nodes (docs/reliability.md
// "Redundant WebSocket subscriptions").

import type { NodeView } from '../../routing/node-view.js';
import type { DeliveryWindow } from './dedup.js';
import type { SubscriptionKind } from './frames.js';
import type { Reply } from './node-socket.js';

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
  /** Nodes each shared subscription is placed on (`ws.redundancy`; 1 when absent). */
  redundancy?: number;
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

export class ClientSub {
  constructor(
    readonly idText: string,
    readonly conn: Subscriber,
    readonly shared: SharedSub,
    /** The subscribe request's id (raw), until it is answered. */
    public reqId: string | null,
  ) {}
}

/** A shared subscription held (or being subscribed) on one node. */
export class Placement {
  /** The node's subscription id, once it answered. */
  upstreamId: string | null = null;

  constructor(
    readonly shared: SharedSub,
    readonly socket: NodeSocket,
  ) {}
}

export class SharedSub {
  /** On distinct nodes; at most `want`. */
  readonly placements: Placement[] = [];
  /** Some placement is subscribed: clients are confirmed at once. */
  active = false;
  retired = false;
  /** A one-shot subscription (signatureSubscribe) delivered its notification: held nowhere any more. */
  done = false;
  readonly clients = new Set<ClientSub>();
  /** Without redundancy: the last slot of a slot-like stream, kept across failovers. */
  lastSlot = -1;
  /** Nodes that refused it (bits): not asked again for an extra placement. */
  refused = 0;

  constructor(
    readonly key: string,
    readonly method: string,
    readonly paramsJson: string,
    readonly kind: SubscriptionKind,
    /** Placements wanted (`ws.redundancy` when it was made; 1 for streams not deduplicated). */
    readonly want: number,
    /** First-copy-wins delivery, with redundancy only. */
    readonly window: DeliveryWindow | null,
  ) {}
}

/** Per node: notifications it delivered first, and its copies dropped as duplicates or late. */
export interface RedundancyCounts {
  first: number;
  dropped: number;
}
