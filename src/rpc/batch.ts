// Batch split and merge on raw bytes. Upstream, each forwarded element's id is replaced by
// its position in the client's batch; on the way back that position finds the element's
// slot and the client's original id bytes are spliced in. Duplicate, null and 20-digit ids
// therefore survive, results are never re-encoded, and order follows the request.

import { errorBody, Errors, RpcErrors, rpcErrorBody, type GatewayErrorSpec } from '../errors.js';
import { KIND_INVALID, KIND_NOTIFICATION, KIND_REQUEST, rawId, type BatchPlan } from './analyze.js';
import { arrayElements, ID_KEY, memberSpan, parseSmallUint, trimmedSpan } from './scan.js';

const OPEN = Buffer.from('[');
const CLOSE = Buffer.from(']');
const COMMA = Buffer.from(',');

// Upstream ids are batch positions: their text, made once per position.
const POSITION_IDS: Buffer[] = [];
function positionId(i: number): Buffer {
  return (POSITION_IDS[i] ??= Buffer.from(String(i)));
}

/** Indices of elements that go upstream (requests and notifications), in order. */
export function forwardable(plan: BatchPlan): Int32Array {
  let n = 0;
  for (let i = 0; i < plan.count; i++) if (plan.kinds[i] !== KIND_INVALID) n++;
  const out = new Int32Array(n);
  for (let i = 0, j = 0; i < plan.count; i++) if (plan.kinds[i] !== KIND_INVALID) out[j++] = i;
  return out;
}

/** Upstream body for elements order[from..to), ids replaced by element positions. */
export function buildSubBatch(body: Buffer, plan: BatchPlan, order: Int32Array, from: number, to: number): Buffer {
  const parts: Buffer[] = [OPEN];
  for (let k = from; k < to; k++) {
    const i = order[k]!;
    if (k > from) parts.push(COMMA);
    const s = plan.spans[2 * i]!;
    const e = plan.spans[2 * i + 1]!;
    const idS = plan.idSpans[2 * i]!;
    if (plan.kinds[i] === KIND_REQUEST && idS >= 0) {
      parts.push(body.subarray(s, idS), positionId(i), body.subarray(plan.idSpans[2 * i + 1]!, e));
    } else {
      parts.push(body.subarray(s, e));
    }
  }
  parts.push(CLOSE);
  return Buffer.concat(parts);
}

const scratch = new Int32Array(2);

/** Per-element answers collected from sub-batch responses. */
export class BatchResults {
  readonly bufs: (Buffer | null)[];
  /** 4 per element: start, end, id start, id end within bufs[i]. */
  readonly spans: Int32Array;
  readonly errors: (string | null)[];

  constructor(count: number) {
    this.bufs = new Array<Buffer | null>(count).fill(null);
    this.spans = new Int32Array(count * 4);
    this.errors = new Array<string | null>(count).fill(null);
  }

  private take(i: number, buf: Buffer, s: number, e: number, idS: number, idE: number): void {
    this.bufs[i] = buf;
    this.spans[4 * i] = s;
    this.spans[4 * i + 1] = e;
    this.spans[4 * i + 2] = idS;
    this.spans[4 * i + 3] = idE;
  }

  /**
   * Records a node's answer to elements order[from..to). A single error object with an
   * unknown id (a node that rejected the whole batch) answers every element. Returns how
   * many requests of that range are still unanswered.
   */
  accept(resp: Buffer, plan: BatchPlan, order: Int32Array, from: number, to: number): number {
    const [s, e] = trimmedSpan(resp);
    if (resp[s] === 0x5b) {
      const spans: number[] = [];
      const n = arrayElements(resp, s, e, spans);
      for (let k = 0; k < n; k++) this.acceptElement(resp, spans[2 * k]!, spans[2 * k + 1]!, plan);
    } else if (resp[s] === 0x7b) {
      if (!this.acceptElement(resp, s, e, plan) && scratch[0]! >= 0) {
        for (let k = from; k < to; k++) {
          const i = order[k]!;
          if (plan.kinds[i] === KIND_REQUEST && this.bufs[i] === null) this.take(i, resp, s, e, scratch[0]!, scratch[1]!);
        }
      }
    }
    let missing = 0;
    for (let k = from; k < to; k++) {
      const i = order[k]!;
      if (plan.kinds[i] === KIND_REQUEST && this.bufs[i] === null && this.errors[i] === null) missing++;
    }
    return missing;
  }

  /** Leaves the element's id span in `scratch` ([-1,-1] when it has none). */
  private acceptElement(resp: Buffer, s: number, e: number, plan: BatchPlan): boolean {
    if (!memberSpan(resp, s, e, ID_KEY, scratch)) return false;
    const i = parseSmallUint(resp, scratch[0]!, scratch[1]!);
    if (i < 0 || i >= plan.count || plan.kinds[i] !== KIND_REQUEST || this.bufs[i] !== null) return false;
    this.take(i, resp, s, e, scratch[0]!, scratch[1]!);
    return true;
  }

  /** Answers the still-unanswered requests of order[from..to) with a gateway error. */
  fail(body: Buffer, plan: BatchPlan, order: Int32Array, from: number, to: number, err: GatewayErrorSpec, data?: Record<string, unknown>): void {
    for (let k = from; k < to; k++) {
      const i = order[k]!;
      if (plan.kinds[i] === KIND_REQUEST && this.bufs[i] === null && this.errors[i] === null) {
        this.errors[i] = errorBody(err, rawId(body, plan, i), data);
      }
    }
  }

  /** True when at least one element got a node's answer. */
  anyAnswered(): boolean {
    for (let i = 0; i < this.bufs.length; i++) if (this.bufs[i] !== null) return true;
    return false;
  }
}

/** The client's answer in request order; null when nothing is to be answered (all notifications). */
export function mergeBatch(body: Buffer, plan: BatchPlan, results: BatchResults): Buffer | null {
  const parts: Buffer[] = [OPEN];
  let entries = 0;
  for (let i = 0; i < plan.count; i++) {
    const kind = plan.kinds[i];
    if (kind === KIND_NOTIFICATION) continue;
    if (entries++ > 0) parts.push(COMMA);
    if (kind === KIND_INVALID) {
      parts.push(Buffer.from(rpcErrorBody(RpcErrors.invalidRequest, plan.idSpans[2 * i]! < 0 ? null : rawId(body, plan, i))));
      continue;
    }
    const buf = results.bufs[i];
    if (buf) {
      const sp = results.spans;
      parts.push(
        buf.subarray(sp[4 * i]!, sp[4 * i + 2]!),
        body.subarray(plan.idSpans[2 * i]!, plan.idSpans[2 * i + 1]!),
        buf.subarray(sp[4 * i + 3]!, sp[4 * i + 1]!),
      );
    } else {
      parts.push(Buffer.from(results.errors[i] ?? errorBody(Errors.upstreamFailed, rawId(body, plan, i), { reason: 'node returned no answer for this call' })));
    }
  }
  if (entries === 0) return null;
  parts.push(CLOSE);
  return Buffer.concat(parts);
}

/** How one sub-batch ended: the node's body, or the gateway error for all its requests. */
export interface SubOutcome {
  from: number;
  to: number;
  response: Buffer | null;
  error: GatewayErrorSpec | null;
  errorData: Record<string, unknown> | null;
}

const NO_ANSWER = { reason: 'node returned no answer for this call' };

/** Merges every sub-batch outcome into the client's answer (see mergeBatch). */
export function assembleBatch(body: Buffer, plan: BatchPlan, order: Int32Array, outcomes: readonly SubOutcome[]): { merged: Buffer | null; answered: boolean } {
  const results = new BatchResults(plan.count);
  for (const o of outcomes) {
    if (o.response !== null) {
      if (results.accept(o.response, plan, order, o.from, o.to) > 0) results.fail(body, plan, order, o.from, o.to, Errors.upstreamFailed, NO_ANSWER);
    } else {
      results.fail(body, plan, order, o.from, o.to, o.error ?? Errors.upstreamFailed, o.errorData ?? undefined);
    }
  }
  return { merged: mergeBatch(body, plan, results), answered: results.anyAnswered() };
}
