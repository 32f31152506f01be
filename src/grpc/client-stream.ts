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
/** A gRPC message frame: compressed flag (0) and length (4 bytes, big-endian) before the message. */
const FRAME_HEADER = 5;
const ignore = (): void => {};

/** `prefix` + `body` as one gRPC message frame (one SubscribeUpdate: fields in any order). */
export function frame(prefix: Buffer, body: Buffer): Buffer {
  const n = prefix.length + body.length;
  const out = Buffer.allocUnsafe(FRAME_HEADER + n);
  out[0] = 0;
  out.writeUInt32BE(n, 1);
  prefix.copy(out, FRAME_HEADER);
  body.copy(out, FRAME_HEADER + prefix.length);
  return out;
}

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

/** Streams flushed per event-loop turn; measured with 500 subscribers (docs/grpc.md "Measured"). */
const FLUSH_CHUNK = 32;

/**
 * The streams with updates queued, flushed FLUSH_CHUNK per turn in the order their first
 * update came. Node hands an HTTP/2 write to the socket on a later turn than the write call:
 * flushing 500 streams in one turn sends nothing before all 500 are written, so the first
 * client waits as long as the last. In chunks, each chunk leaves while the next is written
 * (and a stream's later updates join its pending write instead of a write of their own).
 */
class FlushQueue {
  private due: ClientStream[] = [];
  private head = 0;
  private armed = false;
  private readonly runBound = (): void => this.run();

  add(c: ClientStream): void {
    this.due.push(c);
    if (!this.armed) {
      this.armed = true;
      setImmediate(this.runBound);
    }
  }

  private run(): void {
    this.armed = false;
    const end = Math.min(this.due.length, this.head + FLUSH_CHUNK);
    for (; this.head < end; this.head++) this.due[this.head]!.flush();
    if (this.head < this.due.length) {
      this.armed = true;
      setImmediate(this.runBound);
      return;
    }
    this.due = [];
    this.head = 0;
  }
}

const flushes = new FlushQueue();

export class ClientStream {
  filters: ClientFilters | null = null;
  /** The commitment of the feed it is in, -1 while in none. */
  commitment = -1;
  closed = false;
  sent = 0;
  /**
   * Updates of this event-loop turn, written as one buffer of gRPC frames on a next turn (FlushQueue):
   * a source's burst costs one write per client instead of one per update (each HTTP/2 write
   * has a fixed cost that dominates fan-out). A turn with one update writes that update's
   * frame as is: clients with the same filter names share it (./feed.ts frames each update
   * once per distinct prefix), so nothing is copied per client. Written straight to the
   * HTTP/2 stream, under grpc-js, which still sends the headers and the status.
   */
  private readonly h2: ServerHttp2Stream | null;
  private pending: Buffer[] = [];
  private pendingBytes = 0;
  /** Messages written to the HTTP/2 stream whose write has not completed (the client is not reading them). */
  private inflight = 0;
  private scheduled = false;

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

  /** Writes one SubscribeUpdate given as a gRPC frame (`frame()`); the frame is never changed. */
  send(framed: Buffer): void {
    if (this.closed) return;
    const queued = this.h2 === null ? this.call.writableLength : this.inflight + this.pending.length;
    if (queued >= this.maxQueued) {
      this.end(grpc.status.RESOURCE_EXHAUSTED, `the client read too slowly: more than grpc.limits.maxQueuedMessages (${this.maxQueued}) updates queued`);
      return;
    }
    this.sent++;
    this.usage?.record(this.token.id, GRPC_UPDATES, 1, 0, 0, framed.length - FRAME_HEADER);
    if (this.h2 === null || !this.h2.headersSent) {
      // grpc-js frames what it writes.
      this.call.write(framed.subarray(FRAME_HEADER));
      return;
    }
    this.pending.push(framed);
    this.pendingBytes += framed.length;
    if (!this.scheduled) {
      this.scheduled = true;
      flushes.add(this);
    }
  }

  /** Writes what this turn queued (FlushQueue calls it). */
  flush(): void {
    this.scheduled = false;
    const parts = this.pending;
    const size = this.pendingBytes;
    this.pending = [];
    this.pendingBytes = 0;
    if (this.closed || parts.length === 0 || this.h2 === null || this.h2.destroyed) return;
    const count = parts.length;
    this.inflight += count;
    this.h2.write(count === 1 ? parts[0]! : Buffer.concat(parts, size), () => {
      this.inflight -= count;
    });
  }

  /** Writes a message built for this client alone (pong). */
  sendOwn(bytes: Buffer): void {
    this.send(frame(EMPTY, bytes));
  }

  /** Ends the stream with `code` (OK for a clean end); no-op when already ended. */
  end(code: grpc.status, details: string): void {
    if (this.closed) return;
    // What this turn queued goes out before the status.
    if (this.pending.length > 0) this.flush();
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
