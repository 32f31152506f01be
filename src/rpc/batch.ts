// Batch split and merge on raw bytes, two ways (docs/interface.md "Batches").
//
// Ids kept (plan.idsKept: every element a request with a distinct id that nodes echo as it
// is, ids.ts): a sub-batch is the client's own bytes for a range of elements (the whole body
// when there is one sub-batch), and an answer that lists the range's ids in order
// (answer.ts) is used as the node wrote it; sub-batch answers are joined into one array.
//
// Otherwise, and for kept batches whose answers came back out of order or short: upstream,
// each forwarded element's id is replaced by its position in the client's batch; on the way
// back that position (or, ids kept, the id itself) finds the element's slot and the client's
// original id bytes are spliced in. Duplicate, null and 20-digit ids therefore survive,
// results are never re-encoded, and order follows the request.

import { errorBody, Errors, RpcErrors, rpcErrorBody, type GatewayErrorSpec } from '../errors.js';
import { KIND_INVALID, KIND_NOTIFICATION, KIND_REQUEST, rawId, type BatchPlan } from './analyze.js';
import { answerInOrder } from './answer.js';
import { IdTable } from './ids.js';
import { skipWs, trimEnd, uintOf } from './json-bytes.js';
import { answerElements, ID_KEY, isErrorSpan, memberSpan, trimmedSpan } from './scan.js';

// Outputs are written into one buffer sized up front, never concatenated from views. Pieces
// under 32 bytes (ids, separators) are copied byte by byte: cheaper than a native call.
const SHORT_COPY = 32;

function copyInto(src: Buffer, s: number, e: number, dst: Buffer, o: number): number {
  if (e - s < SHORT_COPY) {
    for (let k = s; k < e; k++) dst[o++] = src[k]!;
    return o;
  }
  return o + src.copy(dst, o, s, e);
}

function digits(n: number): number {
  let d = 1;
  while (n >= 10) {
    n = (n / 10) | 0;
    d++;
  }
  return d;
}

/** Writes n's decimal digits at o; returns the index after them. */
function writeUint(dst: Uint8Array, o: number, n: number): number {
  const end = o + digits(n);
  let k = end;
  do {
    dst[--k] = 0x30 + (n % 10);
    n = (n / 10) | 0;
  } while (n > 0);
  return end;
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
  const sp = plan.spans;
  const ids = plan.idSpans;
  let size = 2 + Math.max(0, to - from - 1);
  for (let k = from; k < to; k++) {
    const i = order[k]!;
    size += sp[2 * i + 1]! - sp[2 * i]!;
    if (plan.kinds[i] === KIND_REQUEST && ids[2 * i]! >= 0) size += digits(i) - (ids[2 * i + 1]! - ids[2 * i]!);
  }
  const out = Buffer.allocUnsafe(size);
  let o = 0;
  out[o++] = 0x5b;
  for (let k = from; k < to; k++) {
    const i = order[k]!;
    if (k > from) out[o++] = 0x2c;
    const idS = ids[2 * i]!;
    if (plan.kinds[i] === KIND_REQUEST && idS >= 0) {
      o = copyInto(body, sp[2 * i]!, idS, out, o);
      o = writeUint(out, o, i);
      o = copyInto(body, ids[2 * i + 1]!, sp[2 * i + 1]!, out, o);
    } else o = copyInto(body, sp[2 * i]!, sp[2 * i + 1]!, out, o);
  }
  out[o++] = 0x5d;
  return out;
}

/** Upstream body for elements [from, to) of a batch with its ids kept: the client's bytes of that range. */
export function sliceSubBatch(body: Buffer, plan: BatchPlan, from: number, to: number): Buffer {
  const s = plan.spans[2 * from]!;
  const e = plan.spans[2 * (to - 1) + 1]!;
  const out = Buffer.allocUnsafe(e - s + 2);
  out[0] = 0x5b;
  body.copy(out, 1, s, e);
  out[e - s + 1] = 0x5d;
  return out;
}

const scratch = new Int32Array(2);
/** Element spans and ids found in one answer (accept() is synchronous: one list serves all). */
const found: number[] = [];
const NO_ANSWER = { reason: 'node returned no answer for this call' };

/** Per-element answers collected from sub-batch responses. */
export class BatchResults {
  readonly bufs: (Buffer | null)[];
  /** 4 per element: start, end, id start, id end within bufs[i]. */
  readonly spans: Int32Array;
  readonly errors: (string | null)[];

  constructor(
    count: number,
    /** Ids kept upstream: answers are matched by their id's bytes; null: ids are positions. */
    private readonly byId: IdTable | null,
  ) {
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
  accept(resp: Buffer, plan: BatchPlan, order: Int32Array | null, from: number, to: number): number {
    const [s, e] = trimmedSpan(resp);
    if (resp[s] === 0x5b) {
      found.length = 0;
      const n = answerElements(resp, s, e, found);
      for (let k = 0; k < n; k++) this.acceptAnswer(resp, found[4 * k]!, found[4 * k + 1]!, found[4 * k + 2]!, found[4 * k + 3]!, plan);
    } else if (resp[s] === 0x7b) {
      if (!this.acceptElement(resp, s, e, plan) && scratch[0]! >= 0) {
        for (let k = from; k < to; k++) {
          const i = order === null ? k : order[k]!;
          if (plan.kinds[i] === KIND_REQUEST && this.bufs[i] === null) this.take(i, resp, s, e, scratch[0]!, scratch[1]!);
        }
      }
    }
    let missing = 0;
    for (let k = from; k < to; k++) {
      const i = order === null ? k : order[k]!;
      if (plan.kinds[i] === KIND_REQUEST && this.bufs[i] === null && this.errors[i] === null) missing++;
    }
    return missing;
  }

  /** Leaves the element's id span in `scratch` ([-1,-1] when it has none). */
  private acceptElement(resp: Buffer, s: number, e: number, plan: BatchPlan): boolean {
    memberSpan(resp, s, e, ID_KEY, scratch);
    return this.acceptAnswer(resp, s, e, scratch[0]!, scratch[1]!, plan);
  }

  /** Takes the answer spanning [s, e) whose id spans [idS, idE) when that id names an element still open. */
  private acceptAnswer(resp: Buffer, s: number, e: number, idS: number, idE: number, plan: BatchPlan): boolean {
    if (idS < 0) return false;
    const i = this.byId === null ? uintOf(resp, idS, idE) : this.byId.find(resp, idS, idE);
    if (i < 0 || i >= plan.count || plan.kinds[i] !== KIND_REQUEST || this.bufs[i] !== null) return false;
    this.take(i, resp, s, e, idS, idE);
    return true;
  }

  /** Answers the still-unanswered requests of order[from..to) with a gateway error. */
  fail(body: Buffer, plan: BatchPlan, order: Int32Array | null, from: number, to: number, err: GatewayErrorSpec, data?: Record<string, unknown>): void {
    for (let k = from; k < to; k++) {
      const i = order === null ? k : order[k]!;
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

  /**
   * Marks in `errs` each request answered with an error: by a node (its answer's top-level
   * members up to `result` or `error`, never the result's bytes) or by the gateway. Returns
   * how many it marked.
   */
  markErrors(plan: BatchPlan, errs: Uint8Array): number {
    let n = 0;
    const sp = this.spans;
    for (let i = 0; i < plan.count; i++) {
      if (plan.kinds[i] !== KIND_REQUEST) continue;
      const buf = this.bufs[i];
      if (buf === null || isErrorSpan(buf, sp[4 * i]!, sp[4 * i + 1]!)) {
        errs[i] = 1;
        n++;
      }
    }
    return n;
  }
}

/** The client's answer in request order; null when nothing is to be answered (all notifications). */
export function mergeBatch(body: Buffer, plan: BatchPlan, results: BatchResults): Buffer | null {
  const sp = results.spans;
  const ids = plan.idSpans;
  // Gateway-made entries (invalid calls, failures) are rare: encode them first, then size.
  let made: (Buffer | null)[] | null = null;
  let entries = 0;
  let size = 2;
  for (let i = 0; i < plan.count; i++) {
    const kind = plan.kinds[i];
    if (kind === KIND_NOTIFICATION) continue;
    if (entries++ > 0) size++;
    if (kind !== KIND_INVALID && results.bufs[i] !== null) {
      size += sp[4 * i + 1]! - sp[4 * i]! - (sp[4 * i + 3]! - sp[4 * i + 2]!) + (ids[2 * i + 1]! - ids[2 * i]!);
      continue;
    }
    made ??= new Array<Buffer | null>(plan.count).fill(null);
    const text =
      kind === KIND_INVALID
        ? rpcErrorBody(RpcErrors.invalidRequest, ids[2 * i]! < 0 ? null : rawId(body, plan, i))
        : (results.errors[i] ?? errorBody(Errors.upstreamFailed, rawId(body, plan, i), NO_ANSWER));
    made[i] = Buffer.from(text);
    size += made[i]!.length;
  }
  if (entries === 0) return null;
  const out = Buffer.allocUnsafe(size);
  let o = 0;
  out[o++] = 0x5b;
  let first = true;
  for (let i = 0; i < plan.count; i++) {
    if (plan.kinds[i] === KIND_NOTIFICATION) continue;
    if (!first) out[o++] = 0x2c;
    first = false;
    const own = made === null ? null : made[i]!;
    if (own !== null) {
      o = copyInto(own, 0, own.length, out, o);
      continue;
    }
    const buf = results.bufs[i]!;
    o = copyInto(buf, sp[4 * i]!, sp[4 * i + 2]!, out, o);
    o = copyInto(body, ids[2 * i]!, ids[2 * i + 1]!, out, o);
    o = copyInto(buf, sp[4 * i + 3]!, sp[4 * i + 1]!, out, o);
  }
  out[o++] = 0x5d;
  return out;
}

/** How one sub-batch ended: the node's body, or the gateway error for all its requests. */
export interface SubOutcome {
  from: number;
  to: number;
  response: Buffer | null;
  error: GatewayErrorSpec | null;
  errorData: Record<string, unknown> | null;
}

export interface Assembled {
  /** The client's answer; null when there is nothing to answer (notifications only). */
  merged: Buffer | null;
  /** At least one element got a node's answer. */
  answered: boolean;
  /**
   * 1 at each request of the batch answered with a JSON-RPC error (by a node or the gateway),
   * found by the walks that place the answers; null when none was (usage, docs/usage.md).
   */
  errors: Uint8Array | null;
}

const keptIds = new IdTable();

/**
 * Merges every sub-batch outcome into the client's answer (see mergeBatch). `order` lists
 * the forwarded elements; null when the batch went with its ids kept (every element, in
 * order).
 */
export function assembleBatch(body: Buffer, plan: BatchPlan, order: Int32Array | null, outcomes: readonly SubOutcome[]): Assembled {
  const errs = new Uint8Array(plan.count);
  if (order === null) {
    const joined = joinInOrder(body, plan, outcomes, errs);
    if (joined !== null) return { merged: joined, answered: true, errors: errs.indexOf(1) < 0 ? null : errs };
    errs.fill(0);
    keptIds.reset(body, plan.idSpans, plan.count);
    for (let i = 0; i < plan.count; i++) keptIds.add(i);
  }
  const results = new BatchResults(plan.count, order === null ? keptIds : null);
  for (const o of outcomes) {
    if (o.response !== null) {
      if (results.accept(o.response, plan, order, o.from, o.to) > 0) results.fail(body, plan, order, o.from, o.to, Errors.upstreamFailed, NO_ANSWER);
    } else {
      results.fail(body, plan, order, o.from, o.to, o.error ?? Errors.upstreamFailed, o.errorData ?? undefined);
    }
  }
  if (order === null) keptIds.forget();
  const merged = mergeBatch(body, plan, results);
  return { merged, answered: results.anyAnswered(), errors: results.markErrors(plan, errs) === 0 ? null : errs };
}

/**
 * The client's answer when every sub-batch of a batch with kept ids was answered in order:
 * a lone answer as the node wrote it, several joined into one array; null otherwise.
 */
function joinInOrder(body: Buffer, plan: BatchPlan, outcomes: readonly SubOutcome[], errs: Uint8Array): Buffer | null {
  if (outcomes.length === 0) return null;
  let size = 1;
  for (const o of outcomes) {
    if (o.response === null || !answerInOrder(o.response, body, plan.idSpans, o.from, o.to, errs)) return null;
    size += innerEnd(o.response) - innerStart(o.response) + 1;
  }
  if (outcomes.length === 1) return outcomes[0]!.response;
  const out = Buffer.allocUnsafe(size);
  out[0] = 0x5b;
  let o = 1;
  // Outcomes arrive as sub-batches finish; the answer follows the request.
  for (let from = 0; from < plan.count;) {
    let next: SubOutcome | null = null;
    for (const x of outcomes) if (x.from === from) next = x;
    if (next === null) return null; // the outcomes do not cover the batch: not ours to join
    const r = next.response!;
    if (o > 1) out[o++] = 0x2c;
    o += r.copy(out, o, innerStart(r), innerEnd(r));
    from = next.to;
  }
  out[o++] = 0x5d;
  return out.subarray(0, o);
}

/** First byte of an answer array's elements (after `[` and whitespace). */
function innerStart(resp: Buffer): number {
  return skipWs(resp, skipWs(resp, 0, resp.length) + 1, resp.length);
}

/** Index after the last byte of an answer array's elements (before whitespace and `]`). */
function innerEnd(resp: Buffer): number {
  return trimEnd(resp, 0, trimEnd(resp, 0, resp.length) - 1);
}
