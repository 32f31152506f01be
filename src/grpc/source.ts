// One upstream Yellowstone endpoint (`grpc.sources[]`) for one commitment: a Subscribe stream
// kept open, resubscribed on failure with `from_slot` (its last slot seen, so the window it
// missed comes again and the dedup keeps what nobody delivered), restarted when it stalls
// while another source delivers. Updates are read once (./update.ts) and handed to the feed.
// The source's x-token goes only into the call's metadata: never into logs or errors.

import * as grpc from '@grpc/grpc-js';
import type { Logger } from '../log.js';
import { encodeAs, geyserType, type SubscribeRequestObject } from './proto.js';
import { readUpdate, type Update } from './update.js';

export interface SourceConfig {
  id: string;
  url: string;
  /** Absent or '' = none. */
  xToken?: string | undefined;
}

export const SUBSCRIBE_PATH = '/geyser.Geyser/Subscribe';
const identity = (b: Buffer): Buffer => b;
const BACKOFF_MIN_MS = 50;
const BACKOFF_MAX_MS = 5000;

/** A grpc-js client for a source URL (http:// plain, https:// TLS), kept alive with HTTP/2 pings. */
export function sourceClient(url: string): grpc.Client {
  const u = new URL(url);
  const secure = u.protocol === 'https:';
  const target = `${u.hostname.includes(':') ? `[${u.hostname}]` : u.hostname}:${u.port || (secure ? '443' : '80')}`;
  return new grpc.Client(target, secure ? grpc.credentials.createSsl() : grpc.credentials.createInsecure(), {
    'grpc.keepalive_time_ms': 10_000,
    'grpc.keepalive_timeout_ms': 5_000,
    'grpc.max_receive_message_length': 64 * 1024 * 1024,
    'grpc.initial_reconnect_backoff_ms': BACKOFF_MIN_MS,
    'grpc.max_reconnect_backoff_ms': BACKOFF_MAX_MS,
  });
}

export function sourceMetadata(xToken: string | undefined): grpc.Metadata {
  const md = new grpc.Metadata();
  if (xToken !== undefined && xToken !== '') md.set('x-token', xToken);
  return md;
}

export interface SourceEvents {
  update(link: SourceLink, u: Update): void;
  /** The stream (re)opened after a failure or stall; `resumed`: it asked for `from_slot` = the last slot it had (nothing of this source is missing once the source accepts it). */
  reconnected(link: SourceLink, resumed: boolean): void;
}

export class SourceLink {
  private call: grpc.ClientDuplexStream<Buffer, Buffer> | null = null;
  private request: SubscribeRequestObject | null = null;
  private timer: NodeJS.Timeout | null = null;
  private backoffMs = BACKOFF_MIN_MS;
  private closed = false;
  /** False after the source refused `from_slot`: the next attempt goes without it. */
  private fromSlotOk = true;
  private askedFromSlot = false;
  lastSlot = 0;
  /** When another source first delivered something this one has not followed with any message (0: not behind). */
  behindSince = 0;
  reconnects = 0;
  malformed = 0;

  constructor(
    readonly config: SourceConfig,
    readonly index: number,
    private readonly client: grpc.Client,
    private readonly events: SourceEvents,
    private readonly log: Logger,
  ) {}

  get id(): string {
    return this.config.id;
  }

  get connected(): boolean {
    return this.call !== null;
  }

  /** Sends a new request on the open stream (Yellowstone replaces its filters), or opens one. */
  /** `firstFrom`: the from_slot of the stream's first request (a resuming first client), when it opens now. */
  subscribe(req: SubscribeRequestObject, firstFrom?: number): void {
    this.request = req;
    if (this.closed) return;
    if (this.call === null) {
      if (this.timer === null) this.open(false, firstFrom);
      return;
    }
    this.call.write(encodeAs(geyserType('SubscribeRequest'), req as Record<string, unknown>));
  }

  /** Asks for a pong on the open stream: it comes back behind every update sent before the request was read. False when no stream is open. */
  ping(id: number): boolean {
    if (this.call === null) return false;
    this.call.write(encodeAs(geyserType('SubscribeRequest'), { ping: { id } }));
    return true;
  }

  private open(resume: boolean, firstFrom?: number): void {
    if (this.closed || this.request === null) return;
    const req: SubscribeRequestObject = { ...this.request };
    this.askedFromSlot = resume && this.fromSlotOk && this.lastSlot > 0;
    if (this.askedFromSlot) req.fromSlot = this.lastSlot;
    else if (firstFrom !== undefined) req.fromSlot = firstFrom;
    const call = this.client.makeBidiStreamRequest(SUBSCRIBE_PATH, identity, identity, sourceMetadata(this.config.xToken));
    this.call = call;
    let delivered = false;
    this.behindSince = 0;
    call.on('data', (buf: Buffer) => {
      this.behindSince = 0;
      let u: Update;
      try {
        u = readUpdate(buf);
      } catch {
        this.malformed++;
        return;
      }
      if (!delivered) {
        delivered = true;
        this.backoffMs = BACKOFF_MIN_MS;
        this.fromSlotOk = true;
      }
      if (u.slot > this.lastSlot) this.lastSlot = u.slot;
      this.events.update(this, u);
    });
    call.on('error', (err: grpc.ServiceError) => this.failed(call, err.code, delivered));
    call.on('end', () => this.failed(call, grpc.status.UNAVAILABLE, delivered));
    call.write(encodeAs(geyserType('SubscribeRequest'), req as Record<string, unknown>));
    if (resume) this.events.reconnected(this, this.askedFromSlot);
  }

  private failed(call: grpc.ClientDuplexStream<Buffer, Buffer>, code: number, delivered: boolean): void {
    if (this.call !== call) return;
    this.call = null;
    if (this.closed) return;
    // A source without a replay store refuses `from_slot`: resume without it next time.
    if (this.askedFromSlot && !delivered && (code === grpc.status.INVALID_ARGUMENT || code === grpc.status.OUT_OF_RANGE)) this.fromSlotOk = false;
    this.log.warn({ source: this.config.id, code: grpc.status[code] ?? code, retryMs: this.backoffMs }, 'grpc source stream ended; resubscribing');
    this.retry();
  }

  private retry(): void {
    if (this.timer !== null || this.closed) return;
    this.timer = setTimeout(() => {
      this.timer = null;
      this.reconnects++;
      this.open(true);
    }, this.backoffMs);
    this.timer.unref();
    this.backoffMs = Math.min(BACKOFF_MAX_MS, this.backoffMs * 2);
  }

  /** Ends a stream that sent nothing for too long while others delivered, and resubscribes. */
  restartStalled(): void {
    const call = this.call;
    if (call === null) return;
    this.call = null;
    this.log.warn({ source: this.config.id }, 'grpc source stalled; resubscribing');
    call.cancel();
    this.retry();
  }

  close(): void {
    this.closed = true;
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
    const call = this.call;
    this.call = null;
    call?.cancel();
  }
}
