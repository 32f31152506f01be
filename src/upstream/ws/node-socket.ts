// One WebSocket to one node, shared by every subscription the gateway holds there. Requests
// (subscribe / unsubscribe) carry the gateway's own ids; notifications go to the hub.

import type { Logger } from 'pino';
import type { WebSocket } from 'undici';
import type { UpstreamNode } from '../node.js';
import { frameId } from './frames.js';

export type Reply = (frame: Buffer | null, error: string | null) => void;

export interface UpstreamSocketEvents {
  notification(conn: UpstreamSocket, frame: Buffer): void;
  /** The socket is gone (closed, failed, or never opened); no frame arrives after this. */
  closed(conn: UpstreamSocket, reason: string): void;
}

const CONNECT_TIMEOUT_MS = 5000;

let webSocketClass: Promise<typeof WebSocket> | null = null;

/** undici is imported by the first node WebSocket, not at start: a gateway nobody subscribes
 * through never loads it (idle RSS). */
function loadWebSocket(): Promise<typeof WebSocket> {
  return (webSocketClass ??= import('undici').then((m) => m.WebSocket));
}

export class UpstreamSocket {
  private ws: WebSocket | null;
  open = false;
  closed = false;
  private readonly queue: string[] = [];
  private readonly pending = new Map<number, Reply>();
  private nextId = 1;
  private readonly connectTimer: NodeJS.Timeout;

  constructor(
    readonly node: UpstreamNode,
    readonly url: string,
    private readonly events: UpstreamSocketEvents,
    private readonly log: Logger,
  ) {
    this.ws = null;
    // Requests made before the socket opens wait in `queue`; the timer covers loading undici too.
    this.connectTimer = setTimeout(() => this.shut('connect timeout'), CONNECT_TIMEOUT_MS);
    this.connectTimer.unref();
    // A throw here would otherwise be an unhandled rejection (it used to reach the caller).
    loadWebSocket()
      .then((ctor) => this.connect(ctor))
      .catch((err: Error) => this.shut('cannot open the WebSocket: ' + err.message));
  }

  private connect(ctor: typeof WebSocket): void {
    if (this.closed) return;
    const ws = new ctor(this.url);
    this.ws = ws;
    ws.binaryType = 'arraybuffer';
    ws.addEventListener('open', () => {
      clearTimeout(this.connectTimer);
      this.open = true;
      for (const f of this.queue.splice(0)) ws.send(f);
    });
    ws.addEventListener('message', (ev) => this.onFrame(ev.data as string | ArrayBuffer));
    ws.addEventListener('close', (ev) => this.shut(`closed (${ev.code}${ev.reason ? ' ' + ev.reason : ''})`));
    ws.addEventListener('error', () => this.shut('error'));
  }

  get pendingCount(): number {
    return this.pending.size;
  }

  /** Sends `{"method":…,"params":…}` with a fresh id; `reply` gets the response frame. */
  request(method: string, paramsJson: string, reply: Reply): void {
    if (this.closed) return reply(null, 'node socket closed');
    const id = this.nextId++;
    this.pending.set(id, reply);
    const frame = `{"jsonrpc":"2.0","id":${id},"method":${JSON.stringify(method)},"params":${paramsJson}}`;
    if (this.open) this.ws!.send(frame);
    else this.queue.push(frame);
  }

  /** Fire-and-forget request (an unsubscribe whose answer nobody waits for). */
  send(method: string, paramsJson: string): void {
    this.request(method, paramsJson, () => undefined);
  }

  private onFrame(data: string | ArrayBuffer): void {
    const frame = typeof data === 'string' ? Buffer.from(data) : Buffer.from(data);
    const id = frameId(frame);
    if (id !== null && id !== 'null') {
      const n = Number(id);
      const reply = this.pending.get(n);
      if (reply !== undefined) {
        this.pending.delete(n);
        reply(frame, null);
      }
      return;
    }
    this.events.notification(this, frame);
  }

  /** `expected`: the gateway closed it (no subscription left, a stop): no warning. */
  private shut(reason: string, expected = false): void {
    if (this.closed) return;
    this.closed = true;
    this.open = false;
    clearTimeout(this.connectTimer);
    try {
      this.ws?.close();
    } catch {
      // already closing
    }
    this.ws = null;
    this.log[expected ? 'debug' : 'warn']({ node: this.node.id, reason }, 'node websocket closed');
    // The hub learns first (it marks the node to avoid), then unanswered requests fail.
    this.events.closed(this, reason);
    const replies = [...this.pending.values()];
    this.pending.clear();
    for (const reply of replies) reply(null, reason);
  }

  close(): void {
    this.shut('closed by gateway', true);
  }
}
