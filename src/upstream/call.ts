// One logical upstream call (a single request or one sub-batch) and its attempts. Retries
// follow SPEC §4: a connection that never carried the request is retried for every method;
// timeouts, 5xx, 429, resets and unusable bodies only for methods that are safe to repeat.

import type { Dispatcher } from 'undici';
import { Errors, type GatewayErrorSpec } from '../errors.js';
import { isWs } from '../rpc/scan.js';
import type { UpstreamNode } from './node.js';

let reportInternalError: (err: unknown) => void = (err) => console.error('jumpgate: internal error while finishing a call', err);

/** Where bugs surfacing in undici callbacks are reported (the server passes its logger). */
export function onInternalError(fn: (err: unknown) => void): void {
  reportInternalError = fn;
}

export interface CallOwner {
  /** The call is finished: `call.response` is set, or `call.error`. */
  onCallDone(call: UpstreamCall): void;
}

export interface Router {
  /** Next node for this call, excluding the nodes it tried; null when none is left. */
  route(call: UpstreamCall): UpstreamNode | null;
  readonly maxAttempts: number;
}

const HEADERS = { 'content-type': 'application/json' };

// Errors raised before any byte of the request could reach the node.
const CONNECT_ERRORS = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EHOSTUNREACH', 'ENETUNREACH', 'EAI_AGAIN', 'UND_ERR_CONNECT_TIMEOUT']);

const F_NONE = 0;
const F_CONNECT = 1;
const F_TIMEOUT = 2;
const F_OTHER = 3;
/** Our deadline passed while still connecting (or queued): the request was never written. */
const F_CONNECT_TIMEOUT = 4;

class TimeoutError extends Error {
  readonly code = 'JUMPGATE_TIMEOUT';
}
const TIMEOUT = new TimeoutError('node timed out');

function onAttemptTimeout(attempt: Attempt): void {
  attempt.timedOut = true;
  if (attempt.controller !== null) attempt.controller.abort(TIMEOUT);
  // undici hands over the controller only when it writes the request (after connecting).
  else attempt.finish(F_CONNECT_TIMEOUT, 'connect timeout');
}

/** A body a JSON-RPC node could have meant: object or array, possibly padded. */
export function looksLikeJson(buf: Buffer): boolean {
  let s = 0;
  let e = buf.length - 1;
  while (s <= e && isWs(buf[s]!)) s++;
  while (e >= s && isWs(buf[e]!)) e--;
  if (s > e) return false;
  const a = buf[s];
  const b = buf[e];
  return (a === 0x7b && b === 0x7d) || (a === 0x5b && b === 0x5d);
}

/** undici dispatch handler for one attempt; stale attempts (after a timeout) are ignored. */
class Attempt implements Dispatcher.DispatchHandler {
  controller: Dispatcher.DispatchController | null = null;
  status = 0;
  chunks: Buffer[] = [];
  size = 0;
  timedOut = false;
  done = false;
  timer: NodeJS.Timeout;
  readonly startedAt = performance.now();

  constructor(
    readonly call: UpstreamCall,
    readonly node: UpstreamNode,
    timeoutMs: number,
  ) {
    this.timer = setTimeout(onAttemptTimeout, timeoutMs, this);
  }

  onRequestStart(controller: Dispatcher.DispatchController): void {
    this.controller = controller;
    if (this.done) controller.abort(TIMEOUT);
  }

  onResponseStart(_c: Dispatcher.DispatchController, statusCode: number): void {
    this.status = statusCode;
  }

  onResponseData(_c: Dispatcher.DispatchController, chunk: Buffer): void {
    this.chunks.push(chunk);
    this.size += chunk.length;
  }

  onResponseEnd(): void {
    this.finish(F_NONE, '');
  }

  onResponseError(_c: Dispatcher.DispatchController, err: Error): void {
    if (this.timedOut) return this.finish(F_TIMEOUT, 'timeout');
    const code = (err as { code?: string }).code ?? '';
    this.finish(CONNECT_ERRORS.has(code) ? F_CONNECT : F_OTHER, code || err.message);
  }

  finish(failure: number, reason: string): void {
    if (this.done) return;
    this.done = true;
    clearTimeout(this.timer);
    try {
      this.call.attemptEnded(this, failure, reason);
    } catch (err) {
      // undici would swallow it and the client would wait forever: make it loud.
      reportInternalError(err);
    }
  }
}

export class UpstreamCall {
  /** Set on success: the node's body (2xx, or a 4xx other than 429, passed through). */
  response: Buffer | null = null;
  status = 0;
  error: GatewayErrorSpec | null = null;
  errorData: Record<string, unknown> | null = null;
  /** Node that produced `response`. */
  node: UpstreamNode | null = null;
  attempts = 0;
  tried = 0;
  private lastFailure = F_NONE;
  private lastReason = '';

  constructor(
    readonly owner: CallOwner,
    readonly router: Router,
    readonly body: Buffer,
    /** Method for timeouts and logs (first method of a sub-batch). */
    readonly method: string,
    /** False when a method in this call must not be repeated after it may have run. */
    readonly retrySafe: boolean,
    /** False for notifications only: the node owes no body, an empty 2xx is success. */
    readonly expectsAnswer: boolean,
    /** Affinity hash slot: the router follows the slot's node sequence; -1 = default routing. */
    readonly slot: number,
    readonly timeoutMs: number,
    /** Sub-batch range in the owner's order (unused for single requests). */
    readonly from: number,
    readonly to: number,
  ) {}

  start(): void {
    const node = this.router.route(this);
    if (node === null) return this.fail(this.attempts === 0 ? F_NONE : this.lastFailure);
    this.attempts++;
    this.tried |= node.bit;
    node.inflight++;
    node.requests++;
    const attempt = new Attempt(this, node, this.timeoutMs);
    node.pool.dispatch({ path: node.path, method: 'POST', headers: HEADERS, body: this.body }, attempt);
  }

  attemptEnded(a: Attempt, failure: number, reason: string): void {
    const node = a.node;
    node.inflight--;
    const now = performance.now();
    if (failure === F_NONE) {
      const status = a.status;
      const body = a.chunks.length === 1 ? a.chunks[0]! : Buffer.concat(a.chunks, a.size);
      if (status >= 500 || status === 429 || status < 200 || (!looksLikeJson(body) && (this.expectsAnswer || body.length > 0))) {
        failure = F_OTHER;
        reason = status >= 300 || status < 200 ? 'HTTP ' + status : 'unusable body';
      } else {
        node.recordSuccess(now - a.startedAt, now);
        this.response = body;
        this.status = status;
        this.node = node;
        this.owner.onCallDone(this);
        return;
      }
    }
    node.recordFailure(reason, Date.now());
    this.lastFailure = failure;
    this.lastReason = node.id + ': ' + reason;
    const retry = failure === F_CONNECT || failure === F_CONNECT_TIMEOUT || this.retrySafe;
    if (retry && this.attempts < this.router.maxAttempts) return this.start();
    this.fail(failure);
  }

  private fail(failure: number): void {
    if (failure === F_NONE) {
      this.error = Errors.noNode;
      this.errorData = { attempts: this.attempts };
    } else {
      this.error = failure === F_TIMEOUT || failure === F_CONNECT_TIMEOUT ? Errors.upstreamTimeout : Errors.upstreamFailed;
      this.errorData = { attempts: this.attempts, reason: this.lastReason };
    }
    this.owner.onCallDone(this);
  }
}

