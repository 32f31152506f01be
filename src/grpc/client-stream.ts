// One client's Subscribe stream on the listener: its token, filters and feed, the writes to
// it and how it ends. A client that does not read backs up grpc-js's write buffer; past
// `maxQueuedMessages` its stream ends with RESOURCE_EXHAUSTED and it leaves its feed at once,
// so it holds no more than that. A status travels behind the data already queued, which a
// client that never reads never takes: its HTTP/2 stream is reset a second later instead.

import { constants as http2 } from 'node:http2';
import * as grpc from '@grpc/grpc-js';
import type { TokenRecord } from '../gateway/token-table.js';
import type { UsageMeter } from '../usage/meter.js';
import type { ClientFilters } from './filters.js';
import type { GrpcMetrics } from './metrics.js';

/** Usage method label for updates the gateway delivered on gRPC streams (bytes out). */
export const GRPC_UPDATES = '(grpc updates)';
const RESET_AFTER_MS = 1000;

export type SubscribeCall = grpc.ServerDuplexStream<Buffer, Buffer>;

export interface StreamOwner {
  /** Called once when the stream ends, whichever way. */
  detach(s: ClientStream): void;
}

export class ClientStream {
  filters: ClientFilters | null = null;
  /** The commitment of the feed it is in, -1 while in none. */
  commitment = -1;
  closed = false;
  sent = 0;

  constructor(
    readonly call: SubscribeCall,
    readonly token: TokenRecord,
    private readonly maxQueued: number,
    private readonly usage: UsageMeter | null,
    private readonly metrics: GrpcMetrics,
    private readonly owner: StreamOwner,
  ) {}

  /** Writes `prefix` + `body` as one SubscribeUpdate. */
  send(prefix: Buffer, body: Buffer): void {
    if (this.closed) return;
    if (this.call.writableLength >= this.maxQueued) {
      this.end(grpc.status.RESOURCE_EXHAUSTED, `the client read too slowly: more than grpc.limits.maxQueuedMessages (${this.maxQueued}) updates queued`);
      return;
    }
    const n = prefix.length + body.length;
    this.call.write(prefix.length === 0 ? body : Buffer.concat([prefix, body], n));
    this.sent++;
    this.usage?.record(this.token.id, GRPC_UPDATES, 1, 0, 0, n);
  }

  /** Writes a message built for this client alone (pong). */
  sendOwn(bytes: Buffer): void {
    if (this.closed) return;
    this.call.write(bytes);
    this.usage?.record(this.token.id, GRPC_UPDATES, 1, 0, 0, bytes.length);
  }

  /** Ends the stream with `code` (OK for a clean end); no-op when already ended. */
  end(code: grpc.status, details: string): void {
    if (this.closed) return;
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

  /** Resets the HTTP/2 stream under a call whose status could not get out (reached through grpc-js internals). */
  private reset(): void {
    const inner = (this.call as unknown as { call?: { nextCall?: { stream?: { close?: (code: number) => void; closed?: boolean } } } }).call?.nextCall?.stream;
    if (inner !== undefined && inner.closed !== true && typeof inner.close === 'function') inner.close(http2.NGHTTP2_CANCEL);
  }
}
