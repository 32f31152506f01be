// One attempt of a call on one node (call.ts): its timer, and what the client it went out on
// reports back (an answer, a failure, an answer large enough to stream).

import { skipWs, trimEnd } from '../rpc/json-bytes.js';
import type { UpstreamCall } from './call.js';
import type { UpstreamNode } from './node.js';
import { F_CONNECT_TIMEOUT, F_NONE, F_TIMEOUT, reportInternalError, type AttemptSink, type BodyStream, type StreamSource } from './transport.js';

function onAttemptTimeout(attempt: Attempt): void {
  // Done first: whatever the client does while letting go of it must not end it twice.
  attempt.done = true;
  const neverWritten = attempt.node.client.abandon(attempt);
  attempt.settle(neverWritten ? F_CONNECT_TIMEOUT : F_TIMEOUT, neverWritten ? 'connect timeout' : 'timeout', 0, null);
}

/** A body a JSON-RPC node could have meant: object or array, possibly padded. */
export function looksLikeJson(buf: Buffer): boolean {
  const s = skipWs(buf, 0, buf.length);
  const e = trimEnd(buf, s, buf.length);
  if (s === e) return false;
  const a = buf[s];
  const b = buf[e - 1];
  return (a === 0x7b && b === 0x7d) || (a === 0x5b && b === 0x5d);
}

/** The first bytes of a body a JSON-RPC node could have meant: an object or array opens it. */
export function opensJson(buf: Buffer): boolean {
  const s = skipWs(buf, 0, buf.length);
  return s === buf.length || buf[s] === 0x7b || buf[s] === 0x5b;
}

/** One attempt of a call on one node; events after it ended (a timeout) are ignored. */
export class Attempt implements AttemptSink {
  done = false;
  written = false;
  clientRef: unknown = null;
  /** A 429's Retry-After in ms, -1 when it gave none (set by the client before answered()). */
  retryAfterMs = -1;
  timer: NodeJS.Timeout;
  readonly startedAt = performance.now();
  readonly body: Buffer;
  readonly exclusive: boolean;

  constructor(
    readonly call: UpstreamCall,
    readonly node: UpstreamNode,
    timeoutMs: number,
    /** 0 for the call's first node, then 1, 2… in the order nodes were asked. */
    readonly rank: number,
  ) {
    this.body = call.body;
    // A broadcast's copies are never retried: none may ride a pipelined connection that a
    // node could drop under it (docs/routing.md "Upstream connections and pipelining").
    this.exclusive = !call.retrySafe || call.fanout > 1 || call.router.methodLatency.isSlow(call.method);
    this.timer = setTimeout(onAttemptTimeout, timeoutMs, this);
  }

  get maxBuffered(): number {
    const c = this.call;
    return c.streamOver < c.maxBuffered && this.node.client.streams ? c.streamOver : c.maxBuffered;
  }

  answered(status: number, body: Buffer): void {
    this.finish(F_NONE, '', status, body);
  }

  overLimit(status: number, length: number, first: Buffer, source: StreamSource): BodyStream | null {
    if (this.done) return null;
    return this.call.attemptStreams(this, status, length, first, source);
  }

  failed(kind: number, reason: string): void {
    this.finish(kind, reason, 0, null);
  }

  finish(failure: number, reason: string, status: number, body: Buffer | null): void {
    if (this.done) return;
    this.done = true;
    this.settle(failure, reason, status, body);
  }

  settle(failure: number, reason: string, status: number, body: Buffer | null): void {
    clearTimeout(this.timer);
    try {
      this.call.attemptEnded(this, failure, reason, status, body);
    } catch (err) {
      // The client would swallow it and the caller would wait forever: make it loud.
      reportInternalError(err);
    }
  }
}
