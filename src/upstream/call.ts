// One logical upstream call (a single request or one sub-batch) and its attempts. Retries
// follow README "Retries and node health": a connection that never carried the request is retried for every method;
// timeouts, 5xx, 429, resets and unusable bodies only for methods that are safe to repeat.

import { Errors, type GatewayErrorSpec } from '../errors.js';
import { isWs } from '../rpc/scan.js';
import type { UpstreamNode } from './node.js';
import { F_CONNECT, F_CONNECT_TIMEOUT, F_NONE, F_OTHER, F_TIMEOUT, reportInternalError, type AttemptSink } from './transport.js';

export { onInternalError } from './transport.js';

export interface CallOwner {
  /** The call is finished: `call.response` is set, or `call.error`. */
  onCallDone(call: UpstreamCall): void;
}

export interface Router {
  /** Next node for this call, excluding the nodes it tried; null when none is left. */
  route(call: UpstreamCall): UpstreamNode | null;
  /** route() gave null: true when the router took the call over (parked it, or refused it itself). */
  onNoNode?(call: UpstreamCall): boolean;
  /** A node answered the call (before its owner hears of it). */
  answered?(call: UpstreamCall): void;
  readonly maxAttempts: number;
  readonly methodLatency: MethodLatency;
}

/**
 * Smoothed answer time per method over all nodes (a sub-batch counts under its first
 * method): calls of usually slow methods get an upstream connection to themselves.
 */
export class MethodLatency {
  private readonly ms = new Map<string, number>();
  /** Methods tracked at most (the names come from clients). */
  private static readonly MAX = 4096;

  constructor(public slowMs: number) {}

  record(method: string, ms: number): void {
    const m = this.ms;
    const prev = m.get(method);
    if (prev !== undefined) m.set(method, prev + 0.2 * (ms - prev));
    else if (m.size < MethodLatency.MAX) m.set(method, ms);
  }

  isSlow(method: string): boolean {
    const v = this.ms.get(method);
    return v !== undefined && v >= this.slowMs;
  }
}

function onAttemptTimeout(attempt: Attempt): void {
  // Done first: whatever the client does while letting go of it must not end it twice.
  attempt.done = true;
  const neverWritten = attempt.node.client.abandon(attempt);
  attempt.settle(neverWritten ? F_CONNECT_TIMEOUT : F_TIMEOUT, neverWritten ? 'connect timeout' : 'timeout', 0, null);
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

/** One attempt of a call on one node; events after it ended (a timeout) are ignored. */
class Attempt implements AttemptSink {
  done = false;
  clientRef: unknown = null;
  timer: NodeJS.Timeout;
  readonly startedAt = performance.now();
  readonly body: Buffer;
  readonly exclusive: boolean;

  constructor(
    readonly call: UpstreamCall,
    readonly node: UpstreamNode,
    timeoutMs: number,
  ) {
    this.body = call.body;
    this.exclusive = !call.retrySafe || call.router.methodLatency.isSlow(call.method);
    this.timer = setTimeout(onAttemptTimeout, timeoutMs, this);
  }

  answered(status: number, body: Buffer): void {
    this.finish(F_NONE, '', status, body);
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

/**
 * What a call sends and how it may be retried. The constructor copies it, so a caller can
 * refill one spec for every call it makes: no object per call beyond the call itself.
 */
export interface CallSpec {
  body: Buffer;
  /** Method for timeouts and logs (first method of a sub-batch). */
  method: string;
  /** False when a method in this call must not be repeated after it may have run. */
  retrySafe: boolean;
  /** False for notifications only: the node owes no body, an empty 2xx is success. */
  expectsAnswer: boolean;
  /** Affinity hash slot: the router follows the slot's node sequence; -1 = default routing. */
  slot: number;
  timeoutMs: number;
  /** Sub-batch range in the owner's order (unused for single requests). */
  from: number;
  to: number;
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
  readonly body: Buffer;
  readonly method: string;
  readonly retrySafe: boolean;
  readonly expectsAnswer: boolean;
  readonly slot: number;
  readonly timeoutMs: number;
  readonly from: number;
  readonly to: number;

  constructor(
    /** Told when the call is finished. */
    readonly owner: CallOwner,
    readonly router: Router,
    spec: CallSpec,
  ) {
    this.body = spec.body;
    this.method = spec.method;
    this.retrySafe = spec.retrySafe;
    this.expectsAnswer = spec.expectsAnswer;
    this.slot = spec.slot;
    this.timeoutMs = spec.timeoutMs;
    this.from = spec.from;
    this.to = spec.to;
  }

  start(): void {
    const node = this.router.route(this);
    if (node === null) {
      if (this.router.onNoNode?.(this) === true) return;
      return this.fail(this.attempts === 0 ? F_NONE : this.lastFailure);
    }
    this.attempts++;
    this.tried |= node.bit;
    node.inflight++;
    node.requests++;
    node.client.send(new Attempt(this, node, this.timeoutMs));
  }

  attemptEnded(a: Attempt, failure: number, reason: string, status: number, answer: Buffer | null): void {
    const node = a.node;
    node.inflight--;
    const now = performance.now();
    if (failure === F_NONE) {
      const body = answer!;
      if (status >= 500 || status === 429 || status < 200 || (!looksLikeJson(body) && (this.expectsAnswer || body.length > 0))) {
        failure = F_OTHER;
        reason = status >= 300 || status < 200 ? 'HTTP ' + status : 'unusable body';
      } else {
        node.recordSuccess(now - a.startedAt, now);
        this.router.methodLatency.record(this.method, now - a.startedAt);
        this.response = body;
        this.status = status;
        this.node = node;
        this.router.answered?.(this);
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

  /** Ends the call with the router's own error (monotonic reads 7505, label routing 7503). */
  refuse(error: GatewayErrorSpec, data: Record<string, unknown>): void {
    this.error = error;
    this.errorData = data;
    this.owner.onCallDone(this);
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

