// One logical upstream call (a single request or one sub-batch) and its attempts. Retries follow docs/routing.md
// "Retries and node health": a connection that never carried the request is retried for every method; timeouts,
// 5xx, 429, resets and unusable bodies only for methods that are safe to repeat. A call may also have several
// attempts at once: a broadcast goes to `fanout` nodes together (docs/routing.md "Broadcast sends"), a hedged read
// to a second node when the first is slow ("Hedged reads"); the first usable answer wins, the others are ignored.

import { Errors, type GatewayErrorSpec } from '../errors.js';
import { isErrorAnswer } from '../rpc/scan.js';
import { usable } from '../routing/node-view.js';
import type { FreshCall } from '../solana/fresh-routing.js';
import type { CallEvents, CallReach } from './call-policy.js';
import { Attempt, looksLikeJson, opensJson } from './attempt.js';
import type { HedgePlan } from './hedge.js';
import type { UpstreamNode } from './node.js';
import type { RouteRequest, Router } from './router.js';
import { F_CONNECT, F_CONNECT_TIMEOUT, F_NONE, F_OTHER, F_PIPELINE_DROPPED, F_TIMEOUT, F_TOO_LARGE, type BodyStream, type StreamSource } from './transport.js';
export { onInternalError } from './transport.js';

export interface CallOwner {
  /** The call is finished: `call.response` is set, or `call.error`. */
  onCallDone(call: UpstreamCall): void;
  /**
   * The call's answer streams (it outgrew `call.maxBuffered` and `call.streamable`): where
   * its body goes, or null when it cannot go anywhere now. Called instead of onCallDone.
   */
  streamAnswer?(call: UpstreamCall, status: number, length: number, source: StreamSource): BodyStream | null;
}

/** What a call collects of a node's answer when its owner did not say (limits.maxBufferedAnswerBytes' default). */
export const DEFAULT_MAX_BUFFERED = 32 * 1024 * 1024;

function onHedgeTimer(call: UpstreamCall): void {
  call.hedgeTimer = null;
  call.hedgeNow();
}

export class UpstreamCall implements RouteRequest, FreshCall {
  /** Set on success: the node's body (2xx, or a 4xx other than 429, passed through). */
  response: Buffer | null = null;
  status = 0;
  error: GatewayErrorSpec | null = null;
  errorData: Record<string, unknown> | null = null;
  /** Node that produced `response`. */
  node: UpstreamNode | null = null;
  attempts = 0;
  tried = 0;
  /** Its first pick explored a node for the send ranking (pool.ts sets it). */
  explored = false;
  /** Every node asked, comma-separated in order, once more than one was; '' while one was. */
  nodesTried = '';
  /** The owner was told (answer or error): later attempts' ends are only recorded. */
  finished = false;
  /** Attempts in flight. */
  live = 0;
  /** performance.now() when the first attempt was handed to a client. */
  sentAt = 0;
  hedgeTimer: NodeJS.Timeout | null = null;
  /** A broadcast is still sending: a client that fails an attempt at once must not end it early. */
  private launching = false;
  /** Hedges sent. */
  hedged = 0;
  private lastFailure = F_NONE;
  private lastReason = '';
  /** The attempt last sent (what a coalescing joiner asks about). */
  private current: Attempt | null = null;
  /** Attempts of a broadcast or hedged call, in the order sent; null for plain calls. */
  private open: Attempt[] | null = null;
  /** Broadcast: the best node error answer so far (lowest rank) and why the others failed. */
  private errorAnswer: Attempt | null = null;
  private errorAnswerBody: Buffer | null = null;
  private errorStatus = 0;
  private reasons: string[] | null = null;
  readonly body: Buffer;
  readonly method: string;
  readonly retrySafe: boolean;
  readonly expectsAnswer: boolean;
  /** Affinity slot (-1: default routing); a broadcast clears it while it picks the extra nodes. */
  slot: number;
  readonly timeoutMs: number;
  readonly from: number;
  readonly to: number;
  readonly fanout: number;
  readonly hedge: HedgePlan | null;
  readonly events: CallEvents | null;
  rpcError = false; // the last answer is a JSON-RPC error object (set with the answer)
  /** Body bytes an attempt collects at most; beyond them the call fails (7506) unless the answer streams. */
  maxBuffered = DEFAULT_MAX_BUFFERED;
  /**
   * Answers over this many bytes stream to the owner (a single HTTP call, one node at a time,
   * over a client that streams); Infinity: never.
   */
  streamOver = Infinity;
  /** The answer went to the owner as a stream (streamAnswer) instead of `response`. */
  streamed = false;
  // Fresh-state routing (solana/fresh-routing.ts): the params span as scanned, then what is read on the first pick.
  paramsStart = -1;
  paramsEnd = -1;
  freshRead = 0;
  needSlot = -1;
  needCommitment = 0;
  needByLevel: Float64Array | null = null;
  hashSlot = -1;
  hashCommitment = 0;
  hash: Uint8Array | null = null;
  freshExpired = false;
  freshRetried = false;
  archiveOnly = false;
  /**
   * One call: its body and first method (timeouts, logs), the affinity slot (-1 = default
   * routing), whether it may be repeated after it may have run (`retrySafe`) and whether the
   * node owes a body (false for notifications only), its sub-batch range in the owner's order
   * (0, 0 for a single request), and the call policy that decides broadcast and hedging (null:
   * one node, never hedged). Positional, so a call costs no spec object.
   */
  constructor(
    /** Told when the call is finished. */
    readonly owner: CallOwner,
    readonly router: Router,
    body: Buffer,
    method: string,
    slot: number,
    timeoutMs: number,
    retrySafe: boolean,
    expectsAnswer: boolean,
    from: number,
    to: number,
    policy: CallReach | null,
  ) {
    this.body = body;
    this.method = method;
    this.retrySafe = retrySafe;
    this.expectsAnswer = expectsAnswer;
    this.slot = slot;
    this.timeoutMs = timeoutMs;
    this.from = from;
    this.to = to;
    this.fanout = policy === null ? 1 : policy.fanoutFor(method);
    // Hedging is for default routing only: under affinity the call must stay on its node
    // sequence (docs/routing.md "Hedged reads").
    this.hedge = policy === null || slot >= 0 ? null : policy.hedgeFor(method);
    this.events = policy === null ? null : policy.events;
  }

  /**
   * Whether the body's bytes may be reused now that the call ended: the client that carried it
   * keeps no reference (transport.ts keepsBody) and no attempt still waits to write it.
   */
  get bodyReleased(): boolean {
    return this.node !== null && !this.node.client.keepsBody(this.body.length) && !this.bodyInUse;
  }

  /** Every node asked, comma-separated in order ('' before the first attempt). */
  get asked(): string {
    return this.nodesTried !== '' ? this.nodesTried : this.current === null ? '' : this.current.node.id;
  }

  /** Whether the request went out to a node already (a coalescing joiner then needs the window). */
  get written(): boolean {
    return this.current !== null && this.current.written;
  }

  /** An attempt of this call still waits to be written (a broadcast's): its body must stay as it is. */
  get bodyInUse(): boolean {
    const open = this.open;
    if (open === null) return false;
    for (let i = 0; i < open.length; i++) if (!open[i]!.done && !open[i]!.written) return true;
    return false;
  }

  start(): void {
    const node = this.router.route(this);
    if (node === null) {
      if (this.router.onNoNode?.(this) === true) return;
      return this.fail(this.attempts === 0 ? F_NONE : this.lastFailure);
    }
    if (this.fanout > 1) return this.broadcast(node);
    if (this.hedge !== null) this.open ??= [];
    this.launch(node);
    if (this.hedge !== null && this.hedged < this.hedge.maxExtra && this.hedgeTimer === null) {
      this.hedgeTimer = setTimeout(onHedgeTimer, this.hedge.delayFor(node.bit), this);
    }
  }

  /** The chosen node and up to fanout − 1 other usable ones, all at once; never retried. */
  private broadcast(first: UpstreamNode): void {
    this.open = [];
    this.reasons = [];
    this.launching = true;
    this.launch(first);
    // The other nodes are picked as in default routing: a copy of the call is not the key
    // leaving its node, so monotonic reads' catch-up rule does not apply to them.
    const slot = this.slot;
    this.slot = -1;
    for (let k = 1; k < this.fanout; k++) {
      const n = this.router.route(this);
      if (n === null || !usable(n)) break;
      this.launch(n);
    }
    this.slot = slot;
    this.launching = false;
    if (this.attempts > 1 && this.events !== null) this.events.callEvent('broadcast');
    if (this.live === 0 && !this.finished) this.endBroadcast();
  }

  private launch(node: UpstreamNode): void {
    const a = new Attempt(this, node, this.timeoutMs, this.attempts);
    if (this.attempts === 0) this.sentAt = a.startedAt;
    else this.nodesTried = (this.nodesTried === '' ? this.current!.node.id : this.nodesTried) + ',' + node.id;
    this.attempts++;
    this.live++;
    this.tried |= node.bit;
    node.inflight++;
    node.requests++;
    node.budget.spendCall(this.method, this.to - this.from, a.startedAt);
    this.current = a;
    if (this.open !== null) this.open.push(a);
    node.client.send(a);
  }

  /** The hedge timer fired: the call goes to the next best node too, unless it is over. */
  hedgeNow(): void {
    const h = this.hedge!;
    if (this.finished || this.live === 0 || this.hedged >= h.maxExtra) return;
    const node = this.router.route(this);
    if (node === null || !usable(node)) return;
    this.hedged++;
    if (this.events !== null) this.events.callEvent('hedge_fired');
    this.launch(node);
    if (this.hedged < h.maxExtra) this.hedgeTimer = setTimeout(onHedgeTimer, h.delayFor(node.bit), this);
  }

  attemptEnded(a: Attempt, failure: number, reason: string, status: number, answer: Buffer | null): void {
    const node = a.node;
    node.inflight--;
    this.live--;
    const now = performance.now();
    if (failure === F_NONE) {
      const body = answer!;
      if (status >= 500 || status === 429 || status < 200 || (!looksLikeJson(body) && (this.expectsAnswer || body.length > 0))) {
        // A provider's 429: the node ran nothing, so any method goes on to another node (docs/routing.md "Provider budgets").
        failure = status === 429 ? F_CONNECT : F_OTHER;
        reason = status >= 300 || status < 200 ? 'HTTP ' + status : 'unusable body';
      } else {
        const ms = now - a.startedAt;
        node.recordSuccess(ms, now);
        this.router.methodLatency.record(this.method, ms);
        // Late answers too: a slow node's slow answers are what its percentile must see.
        if (this.hedge !== null) this.hedge.record(node.bit, ms);
        if (this.finished) return;
        // Read once here: the broadcast, the answer retries and usage ask it.
        this.rpcError = this.expectsAnswer && isErrorAnswer(body);
        // A broadcast waits for an answer with a result; node errors are kept, best rank first.
        if (this.fanout > 1 && this.rpcError) return this.keepErrorAnswer(a, status, body);
        if (a.rank > 0 && this.hedge !== null && this.events !== null) this.events.callEvent('hedge_won');
        // A node error another node may not give (docs/solana-routing.md "Agave error classes").
        if (this.rpcError && this.live === 0 && this.router.retryAnswer?.(this, node, body) === true) return this.start();
        this.response = body;
        this.status = status;
        this.node = node;
        this.router.answered?.(this);
        return this.done();
      }
    }
    if (failure === F_PIPELINE_DROPPED) {
      // The node is fine and now gets no pipelined requests: a retry may go to it again.
      failure = F_OTHER;
      this.tried &= ~node.bit;
    } else if (status === 429) node.budget.limitedBy(a.retryAfterMs, now, Date.now());
    else if (failure !== F_TOO_LARGE) node.recordFailure(reason, Date.now());
    if (this.finished) return;
    if (this.reasons !== null) {
      this.reasons.push(node.id + ': ' + reason);
      if (this.live === 0 && !this.launching) this.endBroadcast();
      return;
    }
    this.lastFailure = failure;
    this.lastReason = node.id + ': ' + reason;
    // Another node still has the call (a hedge): its answer may yet come.
    if (this.live > 0) return;
    const retry = failure === F_CONNECT || failure === F_CONNECT_TIMEOUT || (this.retrySafe && failure !== F_TOO_LARGE);
    if (retry && this.attempts < this.router.maxAttempts) return this.start();
    if (status === 429) return this.refuse(Errors.rateLimited, { scope: 'nodes', retryAfterMs: Math.max(1, Math.ceil(node.budget.coolUntil - now)) });
    this.fail(failure);
  }

  /**
   * An attempt's answer outgrew maxBuffered. A single call one node at a time hands it to its
   * owner as a stream: the call is answered from here on (no retry can follow). Anything else
   * fails the attempt (F_TOO_LARGE), and with it the call.
   */
  attemptStreams(a: Attempt, status: number, length: number, first: Buffer, source: StreamSource): BodyStream | null {
    if (this.streamOver === Infinity || this.finished || this.live > 1 || status < 200 || status >= 300 || (first.length > 0 && !opensJson(first))) return null;
    const node = a.node;
    this.status = status;
    this.node = node;
    const stream = this.owner.streamAnswer?.(this, status, length, source) ?? null;
    if (stream === null) {
      this.node = null;
      return null;
    }
    a.done = true;
    clearTimeout(a.timer);
    node.inflight--;
    this.live--;
    const now = performance.now();
    node.recordSuccess(now - a.startedAt, now);
    this.streamed = true;
    this.finished = true;
    if (this.hedgeTimer !== null) {
      clearTimeout(this.hedgeTimer);
      this.hedgeTimer = null;
    }
    // The slot an answer carries is at its start (routing/answer-slot.ts): what came so far tells it.
    if (first.length > 0) {
      this.response = first;
      this.router.answered?.(this);
      this.response = null;
    }
    if (first.length > 0 && !stream.data(first)) source.pause();
    return stream;
  }

  private keepErrorAnswer(a: Attempt, status: number, body: Buffer): void {
    if (this.errorAnswer === null || a.rank < this.errorAnswer.rank) {
      this.errorAnswer = a;
      this.errorAnswerBody = body;
      this.errorStatus = status;
    }
    if (this.live === 0 && !this.launching) this.endBroadcast();
  }

  /** Every broadcast attempt ended without a result: the first node's error answer, else 7502 with every reason. */
  private endBroadcast(): void {
    const e = this.errorAnswer;
    if (e !== null) {
      this.rpcError = true;
      this.response = this.errorAnswerBody;
      this.status = this.errorStatus;
      this.node = e.node;
      return this.done();
    }
    // No node answered at all: 7502 whatever the kinds of failure, every reason in `data`.
    this.lastReason = this.reasons![0] ?? '';
    this.fail(F_OTHER);
  }

  /** Tells the owner; a hedge still queued is taken back, one already sent is left to be read and ignored. */
  private done(): void {
    this.finished = true;
    if (this.hedgeTimer !== null) {
      clearTimeout(this.hedgeTimer);
      this.hedgeTimer = null;
    }
    const open = this.open;
    if (open !== null && this.reasons === null) {
      for (let i = 0; i < open.length; i++) {
        const a = open[i]!;
        if (a.done || !a.node.client.withdraw(a)) continue;
        a.done = true;
        clearTimeout(a.timer);
        a.node.inflight--;
        this.live--;
      }
    }
    this.owner.onCallDone(this);
  }

  /** Ends the call with the router's own error (monotonic reads 7505, label routing 7503). */
  refuse(error: GatewayErrorSpec, data: Record<string, unknown> | null): void {
    this.error = error;
    this.errorData = data;
    this.finished = true;
    this.owner.onCallDone(this);
  }

  private fail(failure: number): void {
    if (failure === F_NONE) {
      this.error = Errors.noNode;
      this.errorData = { attempts: this.attempts };
    } else {
      this.error =
        failure === F_TIMEOUT || failure === F_CONNECT_TIMEOUT
          ? Errors.upstreamTimeout
          : failure === F_TOO_LARGE
            ? Errors.answerTooLarge
            : Errors.upstreamFailed;
      this.errorData =
        this.reasons !== null
          ? { attempts: this.attempts, reason: this.lastReason, reasons: this.reasons }
          : { attempts: this.attempts, reason: this.lastReason };
    }
    this.finished = true;
    if (this.hedgeTimer !== null) {
      clearTimeout(this.hedgeTimer);
      this.hedgeTimer = null;
    }
    this.owner.onCallDone(this);
  }
}
