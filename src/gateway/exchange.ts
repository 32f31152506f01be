// One client request, from its accepted headers (HTTP) or frame (WebSocket) to the answer, the
// same for both transports: analysis (inline or in a worker), affinity and rate limits, the
// single call or the batch's sub-batches, the merge, then the answer through a Responder.
// Fields are all set in the constructor (one V8 shape).

import { errorBody, Errors, statusLine, type GatewayErrorSpec } from '../errors.js';
import { A_BATCH, A_BATCH_TOO_LARGE, A_PARSE_ERROR, A_REPLY, KIND_REQUEST, type Analysis, type BatchPlan } from '../rpc/analyze.js';
import { buildSubBatch, forwardable, sliceSubBatch, type SubOutcome } from '../rpc/batch.js';
import { rawIdOf } from '../rpc/scan.js';
import { admit, type AdmissionRequest } from '../limits/admission.js';
import { isAdmitted, nodesRetryAfter, refusalOf, refusalScope, refusalWaitMs, slotOf } from '../limits/verdict.js';
import { MODE_DEFAULT } from '../routing/affinity-mode.js';
import { routeRuns } from '../routing/method-rules.js';
import { giveBack } from '../slabs.js';
import { UpstreamCall, type CallOwner } from '../upstream/call.js';
import { BUNDLE_METHODS, type EngineCall, type EngineOwner } from '../upstream/jito/engines.js';
import type { BodyStream, StreamSource } from '../upstream/transport.js';
import { bookCall, bookUsage, type BookedRequest } from '../usage/booking.js';
import type { AnswerStream, StreamOwner } from './answer-stream.js';
import { addNodes, listsNode } from './node-list.js';
import type { RequestState } from './request-state.js';
import type { Responder } from './responder.js';
import type { Serving } from './serving.js';
import type { Services } from './services.js';
import type { Settings } from './settings.js';
import type { TokenRecord } from './token-table.js';

const EMPTY = '';
const OK = '200 OK';

export class Exchange implements CallOwner, AdmissionRequest, BookedRequest, StreamOwner, EngineOwner {
  aborted = false;
  finished = false;
  body: Buffer | null = null;
  received = 0;
  single: UpstreamCall | null = null;
  /** The call that took the request body itself upstream (a single call, a batch sent whole), if any. */
  carrier: UpstreamCall | null = null;
  notification = false;
  plan: BatchPlan | null = null;
  /** Forwarded elements of a batch whose ids are rewritten; null when they are kept (plan.idsKept). */
  order: Int32Array | null = null;
  outcomes: SubOutcome[] | null = null;
  /** The batch's requests answered with an error (rpc/batch.ts Assembled.errors), for usage. */
  elementErrors: Uint8Array | null = null;
  /** A single call's node answer is a JSON-RPC error (1), is not (0), or the gateway answered (-1). */
  answerError = -1;
  pending = 0;
  nodeIds = '';
  /** Every node asked when more than one was (docs/interface.md "Public interface", X-…-Nodes-Tried). */
  nodesTried = '';
  readonly startedAt = performance.now();
  /** A node's answer that only this request holds: its slab is given back once it is written (../slabs.ts). */
  private ownAnswer: Buffer | null = null;
  /** The answer passing to the client as it arrives (docs/routing.md "Large answers"); null when it goes whole. */
  private stream: AnswerStream | null = null;
  /** The method of a call no UpstreamCall carried: a read the account cache answered, a block engine's call. */
  private cachedMethod: string | null = null;
  /** Affinity hash slot for this request; -1 = default routing. */
  slot = -1;
  /** Send a batch whole to one node (node/key affinity, or an auto-affinity method in it). */
  whole = false;
  private settled = false;
  /** The configuration generation this request started under (a reload swaps the serving's). */
  readonly settings: Settings;
  readonly services: Services;
  readonly state: RequestState;

  constructor(
    serving: Serving,
    readonly token: TokenRecord,
    /** The transport's side: HTTP response or WebSocket connection. */
    readonly responder: Responder,
    /** MODE_DEFAULT, MODE_KEY or MODE_NODE (headers.ts). */
    readonly mode: number,
    /** The affinity key under key mode, else ''. */
    readonly key: string,
  ) {
    this.settings = serving.settings;
    this.services = serving.services;
    this.state = serving.state;
    this.state.inflight++;
  }

  /** The single call's method once it was sent; null for batches and requests refused before. */
  get method(): string | null {
    return this.single === null ? this.cachedMethod : this.single.method;
  }

  clientIp(): string {
    return this.responder.clientIp();
  }

  /** The request's whole body has arrived. */
  start(body: Buffer): void {
    this.body = body;
    this.received = body.length;
    const off = this.services.offload;
    const maxBatch = this.settings.maxBatch;
    if (off.offloadParse(body.length)) {
      off.analyze(body, maxBatch).then(
        (a) => this.route(a),
        (err: Error) => {
          this.services.log.error({ err }, 'worker analyze failed');
          this.route(off.analyzeInline(body, maxBatch));
        },
      );
    } else this.route(off.analyzeInline(body, maxBatch));
  }

  /** The request's whole body has arrived, already analyzed by the transport (a WebSocket frame: ws-listener.ts). */
  startAnalyzed(body: Buffer, a: Analysis): void {
    this.body = body;
    this.received = body.length;
    this.route(a);
  }

  /**
   * Whether the body's bytes may be reused once the request is answered: no call took the body
   * itself upstream, or the client that carried it keeps no reference (UpstreamCall.bodyReleased).
   */
  bodyReusable(): boolean {
    const c = this.carrier;
    return c === null || c.bodyReleased;
  }

  /** The client went away: nothing is answered; the request leaves the in-flight count once its calls return. */
  abort(): void {
    this.aborted = true;
    if (this.stream !== null) return this.stream.clientGone();
    this.settle();
  }

  /** The body outgrew limits.maxBodyBytes while streaming in, after `received` bytes: 413, connection closed. */
  bodyTooLarge(received: number): void {
    this.received = received;
    this.fail(Errors.bodyTooLarge, null, { maxBodyBytes: this.settings.maxBodyBytes }, true);
  }

  private route(a: Analysis): void {
    if (this.aborted) return this.settle();
    if (a.type === A_REPLY || a.type === A_PARSE_ERROR) return this.respond(OK, a.reply, '');
    const settings = this.settings;
    const services = this.services;
    if (a.type === A_BATCH_TOO_LARGE) return this.fail(Errors.batchTooLarge, null, { maxBatch: settings.maxBatch }, false);
    const admission = admit(services, settings.autoAffinity, a, this);
    if (!isAdmitted(admission)) return this.refuse(refusalScope(refusalOf(admission)), refusalWaitMs(refusalOf(admission)));
    const slot = slotOf(admission);
    this.slot = slot;
    // Default routing spreads a batch over nodes unless it got automatic IP affinity.
    this.whole = this.mode !== MODE_DEFAULT || slot >= 0;
    if (a.type === A_BATCH) return this.startBatch(a.plan!);
    this.notification = a.notification;
    const method = a.method;
    const body = this.body!;
    // Bundle methods go only to block engines when any is configured (docs/jito.md "Routing").
    if (services.engines.size > 0 && BUNDLE_METHODS.has(method)) {
      this.cachedMethod = method;
      const wait = services.engines.call(this, method, body, settings.timeoutFor(method));
      return wait > 0 ? this.refuse('engine', wait) : undefined;
    }
    // Answered from memory (account cache, fee estimates): booked and counted as a call of its method, answered by no node.
    const local = a.notification ? null : services.answerLocally(body, method, slot >= 0 || this.mode !== MODE_DEFAULT, a.paramsStart, a.paramsEnd);
    if (local !== null) {
      this.cachedMethod = method;
      this.answerError = services.localError ? 1 : 0;
      return this.respond(services.localStatus, local, services.localNode);
    }
    const retrySafe = !settings.noRetry.has(method);
    const timeoutMs = settings.timeoutFor(method);
    const defaultMode = this.mode === MODE_DEFAULT;
    const calls = services.calls;
    // How the call reaches nodes: broadcast, hedge (default routing only) or a shared (coalesced) call (docs/routing.md "Broadcast sends", …).
    const shared =
      defaultMode && !a.notification && calls.coalesce.has(method) ? services.coalescer.enter(this, method, slot, timeoutMs, retrySafe, calls) : null;
    const call =
      shared ?? new UpstreamCall(this, services.router, body, method, slot, timeoutMs, retrySafe, !a.notification, 0, 0, defaultMode ? calls : calls.affine);
    if (shared === null) {
      // Fresh routing reads the params where the request scan found them.
      call.paramsStart = a.paramsStart;
      call.paramsEnd = a.paramsEnd;
    }
    // What a node's answer may cost in memory: a call only this request waits for, one node at
    // a time, streams its answer once it is large (docs/routing.md "Large answers").
    if (call.attempts === 0) {
      call.maxBuffered = settings.maxBuffered;
      if (shared === null && call.fanout === 1 && call.hedge === null && this.responder.streams) call.streamOver = settings.streamOver;
    }
    this.single = call;
    // A caller that joined another's call sent no bytes of its own.
    this.carrier = call.body === body ? call : null;
    if (call.attempts === 0 && !call.finished) call.start();
    if (method === 'sendTransaction' && services.engines.copiesSends) services.engines.copySend(body, a.paramsStart, a.paramsEnd, this.token.id);
  }

  private refuse(scope: string, waitMs: number): void {
    this.services.metrics.rateLimited(scope);
    const id = rawIdOf(this.body!);
    this.respond(
      statusLine(Errors.rateLimited.http),
      errorBody(Errors.rateLimited, id, { scope, retryAfterMs: waitMs }),
      '',
      false,
      String(Math.ceil(waitMs / 1000)),
    );
  }

  private startBatch(plan: BatchPlan): void {
    const settings = this.settings;
    const router = this.services.router;
    const body = this.body!;
    // Ids kept: the client's bytes go upstream as they are (rpc/batch.ts); else positions.
    let order = plan.idsKept ? null : forwardable(plan);
    let n = order === null ? plan.count : order.length;
    // Label routing (docs/routing.md "Label routing"): a routed method's calls get sub-batches of their own.
    const runs =
      this.whole || settings.routedMethods.size === 0 || n === 0
        ? null
        : routeRuns(plan, order ?? forwardable(plan), settings.upstreamBatch, settings.routedMethods);
    if (runs !== null) {
      order = runs.order;
      n = order.length;
    }
    this.plan = plan;
    this.order = order;
    this.outcomes = [];
    if (n === 0) return this.finishBatch();
    // Default routing spreads sub-batches over nodes; key and node affinity keep the body whole.
    const size = this.whole ? n : settings.upstreamBatch;
    this.pending = runs === null ? Math.ceil(n / size) : runs.ends.length;
    const calls: UpstreamCall[] | null = this.pending > 1 ? [] : null;
    for (let from = 0, run = 0; from < n; from = runs === null ? from + size : runs.ends[run++]!) {
      const to = runs === null ? Math.min(from + size, n) : runs.ends[run]!;
      let timeout = 0;
      let safe = true;
      let answered = false;
      let last = '';
      for (let k = from; k < to; k++) {
        const i = order === null ? k : order[k]!;
        const m = plan.methods[i]!;
        // Batches mostly repeat one method: look each up once per run.
        if (m !== last) {
          last = m;
          timeout = Math.max(timeout, settings.timeoutFor(m));
          if (settings.noRetry.has(m)) safe = false;
        }
        if (plan.kinds[i] === KIND_REQUEST) answered = true;
      }
      const sub = order !== null ? buildSubBatch(body, plan, order, from, to) : to - from === n ? body : sliceSubBatch(body, plan, from, to);
      // A sub-batch goes to one node, never hedged nor broadcast.
      const call = new UpstreamCall(this, router, sub, plan.methods[order === null ? from : order[from]!]!, this.slot, timeout, safe, answered, from, to, null);
      call.maxBuffered = settings.maxBuffered;
      if (sub === body) this.carrier = call;
      if (calls === null) return call.start();
      calls.push(call);
    }
    for (let i = 0; i < calls!.length; i++) calls![i]!.start();
  }

  onCallDone(call: UpstreamCall): void {
    if (this.plan === null) return this.finishSingle(call);
    this.outcomes!.push({ from: call.from, to: call.to, response: call.response, error: call.error, errorData: this.errorData(call) });
    if (call.node !== null && !listsNode(this.nodeIds, call.node.id)) this.nodeIds = this.nodeIds === '' ? call.node.id : this.nodeIds + ',' + call.node.id;
    this.nodesTried = addNodes(this.nodesTried, call.asked);
    if (--this.pending === 0) this.finishBatch();
  }

  /** A block engine answered (passed on unchanged), or none could: an accepted bundle is tracked (docs/landing.md). */
  engineDone(call: EngineCall): void {
    if (this.aborted) return this.settle();
    const r = call.response;
    if (r === null) return this.fail(call.error!, rawIdOf(this.body!), { attempts: call.attempts }, false);
    this.answerError = r.indexOf('"result":') < 0 ? 1 : 0;
    if (call.method === 'sendBundle' && call.status === 200 && this.answerError === 0)
      this.services.landing?.acceptedBundle(this.body!, call.engine!.id, this.token.id);
    this.respond(statusLine(call.status), r, call.engine!.id);
  }

  /** A coalesced call ended (gateway/coalesce.ts): `response` carries this request's own id. */
  sharedDone(call: UpstreamCall, response: Buffer | null): void {
    this.finishSingle(call, response);
  }

  private finishSingle(call: UpstreamCall, response: Buffer | null = call.response): void {
    if (this.aborted) return this.settle();
    this.nodesTried = call.nodesTried;
    if (response !== null) {
      // This request's own call (a coalesced one is owned by its SharedCall, and its answer
      // may be every caller's).
      if (call.owner === this) this.ownAnswer = response;
      this.answerError = call.rpcError ? 1 : 0;
      // An accepted transaction is followed until it lands (docs/landing.md "Tracking").
      const landing = this.services.landing;
      if (landing !== null && !call.rpcError && call.method === 'sendTransaction') landing.accepted(call, this.token.id);
      return this.respond(statusLine(call.status), this.notification ? EMPTY : response, call.node!.id);
    }
    this.fail(call.error!, rawIdOf(this.body!), this.errorData(call) ?? undefined, false);
  }

  /** The single call's answer outgrew limits.streamAnswersOverBytes: it goes to the client as it arrives. */
  streamAnswer(call: UpstreamCall, status: number, length: number, source: StreamSource): BodyStream | null {
    if (this.aborted || this.finished || this.notification) return null;
    this.finished = true;
    this.nodesTried = call.nodesTried;
    this.answerError = 0;
    const stream = this.responder.stream(statusLine(status), call.node!.id, this.nodesTried, length, source, this);
    this.stream = stream;
    this.services.metrics.request(call.method, false, statusLine(status), call.node!.id, performance.now() - this.startedAt);
    return stream;
  }

  /** A streamed answer ended: booked with the bytes that went (an error when it was cut short). */
  streamEnded(bytes: number, broken: string): void {
    const us = (performance.now() - this.startedAt) * 1000;
    bookCall(this.services.usage, this.token.id, this.single!.method, broken !== '', this.received, bytes, us);
    if (broken !== '' && broken !== 'client went away')
      this.services.log.warn({ method: this.single!.method, node: this.single!.node?.id, bytes, reason: broken }, 'streamed answer cut short');
    this.stream = null;
    this.settle();
  }

  /** Failure detail for the client; node ids stay hidden when the operator hides them. */
  private errorData(call: UpstreamCall): Record<string, unknown> | null {
    const d = call.errorData;
    // Only `reason` names nodes (7505 and label 7503 data do not).
    return d === null || this.settings.exposeNode || d.reason === undefined ? d : { attempts: d.attempts };
  }

  private finishBatch(): void {
    if (this.aborted) return this.settle();
    const off = this.services.offload;
    const outcomes = this.outcomes!;
    let bytes = 0;
    for (const o of outcomes) if (o.response !== null) bytes += o.response.length;
    if (off.offloadMerge(bytes)) {
      off.assemble(this.body!, this.plan!, this.order, outcomes).then(
        (r) => this.sendBatch(r.merged, r.answered, r.errors),
        (err: Error) => {
          this.services.log.error({ err }, 'worker merge failed');
          const r = off.assembleInline(this.body!, this.plan!, this.order, outcomes);
          this.sendBatch(r.merged, r.answered, r.errors);
        },
      );
    } else {
      const r = off.assembleInline(this.body!, this.plan!, this.order, outcomes);
      // A lone sub-batch's answer that is the client's answer as the node wrote it.
      if (r.merged !== null && outcomes.length === 1 && r.merged === outcomes[0]!.response) this.ownAnswer = r.merged;
      this.sendBatch(r.merged, r.answered, r.errors);
    }
  }

  private sendBatch(merged: Buffer | null, answered: boolean, errors: Uint8Array | null): void {
    if (this.aborted) return this.settle();
    this.elementErrors = errors;
    let failed: GatewayErrorSpec | null = null;
    for (const o of this.outcomes!) if (o.error !== null) failed ??= o.error;
    // A batch fails as a whole (HTTP error status) only when no node answered any part of it.
    const status = failed !== null && !answered ? failed.http : 200;
    // The list is for requests that asked more than one node.
    if (this.nodesTried.indexOf(',') < 0) this.nodesTried = '';
    this.respond(statusLine(status), merged ?? EMPTY, this.nodeIds);
  }

  /** Gateway error answer; `close` drops the connection (body left unread). */
  private fail(e: GatewayErrorSpec, id: string | null, data: Record<string, unknown> | undefined, close: boolean): void {
    this.respond(statusLine(e.http), errorBody(e, id, data), '', close, nodesRetryAfter(e.code, data, this.services.metrics));
  }

  private respond(status: string, body: string | Buffer, nodeIds: string, close = false, retryAfter = ''): void {
    if (this.finished || this.aborted) return this.settle();
    this.finished = true;
    const ms = performance.now() - this.startedAt;
    this.services.metrics.request(this.method ?? '', this.plan !== null, status, nodeIds, ms);
    bookUsage(this.services.usage, this, status, body, ms * 1000);
    this.responder.answer(status, body, nodeIds, close, retryAfter, this.nodesTried);
    // Written (uWS copies what the socket does not take at once) and read by nothing else.
    if (this.ownAnswer !== null) {
      if (body === this.ownAnswer) giveBack(this.ownAnswer);
      this.ownAnswer = null;
    }
    this.settle();
  }

  /** Counts the request out of the in-flight set exactly once. */
  private settle(): void {
    if (this.settled || this.stream !== null) return;
    if (!this.finished && !this.aborted) return;
    // A batch or single call still running keeps the request in flight until it returns.
    if (this.aborted && (this.pending > 0 || (this.single !== null && this.single.response === null && this.single.error === null && !this.single.streamed)))
      return;
    this.settled = true;
    this.state.left();
  }
}
