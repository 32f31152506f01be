// One client's Subscribe stream on the listener: its token, filters and feed, the writes to
// it and how it ends. A client that does not read backs up grpc-js's write buffer; past
// `maxQueuedMessages` its stream ends with RESOURCE_EXHAUSTED and it leaves its feed at once,
// so it holds no more than that. A status travels behind the data already queued, which a
// client that never reads never takes: its HTTP/2 stream is reset a second later instead.

import { constants as http2, type ServerHttp2Stream } from 'node:http2';
import * as grpc from '@grpc/grpc-js';
import type { TokenRecord } from '../gateway/token-table.js';
import type { UsageMeter } from '../usage/meter.js';
import type { ClientFilters } from './filters.js';
import type { GrpcMetrics } from './metrics.js';

/** Usage method label for updates the gateway delivered on gRPC streams (bytes out). */
export const GRPC_UPDATES = '(grpc updates)';
const RESET_AFTER_MS = 1000;
const EMPTY = Buffer.alloc(0);
const ignore = (): void => {};

export type SubscribeCall = grpc.ServerDuplexStream<Buffer, Buffer>;

export interface StreamOwner {
  /** Called once when the stream ends, whichever way. */
  detach(s: ClientStream): void;
}

/** The HTTP/2 stream under a grpc-js server call (grpc-js internals: `call.call` is the
 * intercepting call, the base one holds `stream`); null when the shape is not found. */
function http2StreamOf(call: SubscribeCall): ServerHttp2Stream | null {
  const inner = (call as unknown as { call?: { stream?: unknown; nextCall?: { stream?: unknown } } }).call;
  const stream = (inner?.stream ?? inner?.nextCall?.stream) as Partial<ServerHttp2Stream> | undefined;
  return stream !== undefined && typeof stream.write === 'function' && typeof stream.close === 'function' && 'headersSent' in stream
    ? (stream as ServerHttp2Stream)
    : null;
}

export class ClientStream {
  filters: ClientFilters | null = null;
  /** The commitment of the feed it is in, -1 while in none. */
  commitment = -1;
  closed = false;
  sent = 0;
  /**
   * Updates of this event-loop turn, written as one buffer of gRPC frames on the next turn:
   * a source's burst costs one write per client instead of one per update (each HTTP/2 write
   * has a fixed cost that dominates fan-out). Written straight to the HTTP/2 stream, under
   * grpc-js, which still sends the headers and the status.
   */
  private readonly h2: ServerHttp2Stream | null;
  private pending: Buffer[] = [];
  private pendingBytes = 0;
  private pendingCount = 0;
  /** Messages written to the HTTP/2 stream whose write has not completed (the client is not reading them). */
  private inflight = 0;
  private scheduled = false;
  private readonly flushBound = (): void => this.flush();

  constructor(
    readonly call: SubscribeCall,
    readonly token: TokenRecord,
    private readonly maxQueued: number,
    private readonly usage: UsageMeter | null,
    private readonly metrics: GrpcMetrics,
    private readonly owner: StreamOwner,
  ) {
    this.h2 = http2StreamOf(call);
    // grpc-js listens for one error on the stream; writing to it directly, so do we, for every
    // one (a peer's reset is also seen as the call's cancellation, which ends this client).
    this.h2?.on('error', ignore);
  }

  /** Writes `prefix` + `body` as one SubscribeUpdate. */
  send(prefix: Buffer, body: Buffer): void {
    if (this.closed) return;
    const queued = this.h2 === null ? this.call.writableLength : this.inflight + this.pendingCount;
    if (queued >= this.maxQueued) {
      this.end(grpc.status.RESOURCE_EXHAUSTED, `the client read too slowly: more than grpc.limits.maxQueuedMessages (${this.maxQueued}) updates queued`);
      return;
    }
    const n = prefix.length + body.length;
    this.sent++;
    this.usage?.record(this.token.id, GRPC_UPDATES, 1, 0, 0, n);
    if (this.h2 === null || !this.h2.headersSent) {
      this.call.write(prefix.length === 0 ? body : Buffer.concat([prefix, body], n));
      return;
    }
    if (prefix.length > 0) this.pending.push(prefix);
    this.pending.push(body);
    this.pendingBytes += 5 + n;
    this.pendingCount++;
    // Frame headers are filled in at flush; the lengths are recomputed there from the parts.
    this.pending.push(EMPTY);
    if (!this.scheduled) {
      this.scheduled = true;
      setImmediate(this.flushBound);
    }
  }

  private flush(): void {
    this.scheduled = false;
    const parts = this.pending;
    const count = this.pendingCount;
    const size = this.pendingBytes;
    this.pending = [];
    this.pendingCount = 0;
    this.pendingBytes = 0;
    if (this.closed || count === 0 || this.h2 === null || this.h2.destroyed) return;
    // parts: [prefix?, body, EMPTY] per message; each becomes [0, length(4), prefix, body].
    const out = Buffer.allocUnsafe(size);
    let at = 0;
    let start = 0;
    for (let i = 0; i < parts.length; i++) {
      if (parts[i] !== EMPTY) continue;
      let len = 0;
      for (let j = start; j < i; j++) len += parts[j]!.length;
      out[at] = 0;
      out.writeUInt32BE(len, at + 1);
      at += 5;
      for (let j = start; j < i; j++) at += parts[j]!.copy(out, at);
      start = i + 1;
    }
    this.inflight += count;
    this.h2.write(out, () => {
      this.inflight -= count;
    });
  }

  /** Writes a message built for this client alone (pong). */
  sendOwn(bytes: Buffer): void {
    this.send(EMPTY, bytes);
  }

  /** Ends the stream with `code` (OK for a clean end); no-op when already ended. */
  end(code: grpc.status, details: string): void {
    if (this.closed) return;
    // What this turn queued goes out before the status.
    if (this.pendingCount > 0) this.flush();
    this.closed = true;
    this.owner.detach(this);
    this.metrics.closed.labels(grpc.status[code] ?? String(code)).inc();
    if (code === grpc.status.OK) this.call.end();
    else this.call.emit('error', { code, details });
    const timer = setTimeout(() => this.reset(), RESET_AFTER_MS);
    timer.unref();
    this.call.once('finish', () => clearTimeout(timer));
  }

  /** The peer went away (cancelled, connection lost). */
  gone(): void {
    if (this.closed) return;
    this.closed = true;
    this.owner.detach(this);
  }

  /** Resets the HTTP/2 stream under a call whose status could not get out. */
  private reset(): void {
    const h2 = this.h2 ?? http2StreamOf(this.call);
    if (h2 !== null && !h2.closed) h2.close(http2.NGHTTP2_CANCEL);
  }
}
