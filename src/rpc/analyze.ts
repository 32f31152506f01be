// Validates a request body (SPEC §3.3) and, for batches, records where each element and its
// id sit in the raw bytes so that sub-batches and the merged answer are built by splicing.
// Pure and allocation-light: runs inline for small bodies and in workers/ for large ones.

import { RpcErrors, rpcErrorBody } from '../errors.js';
import { arrayElements, ID_KEY, memberSpan, trimmedSpan } from './scan.js';

export const KIND_REQUEST = 0;
export const KIND_NOTIFICATION = 1;
export const KIND_INVALID = 2;

/** Batch layout, plain data so it can cross a worker boundary. */
export interface BatchPlan {
  count: number;
  kinds: Uint8Array;
  /** Element i spans [spans[2i], spans[2i+1]) of the body. */
  spans: Int32Array;
  /** Id of element i spans [idSpans[2i], idSpans[2i+1]); -1 when absent or unreadable. */
  idSpans: Int32Array;
  methods: string[];
}

export const A_SINGLE = 0;
export const A_BATCH = 1;
/** Answered by the gateway with HTTP 200 and `reply` (parse error, invalid request). */
export const A_REPLY = 2;
export const A_BATCH_TOO_LARGE = 3;

export interface Analysis {
  type: number;
  /** Single request: its method. */
  method: string;
  /** Single request without an id. */
  notification: boolean;
  plan: BatchPlan | null;
  reply: string;
}

function analysis(type: number, method: string, notification: boolean, plan: BatchPlan | null, reply: string): Analysis {
  return { type, method, notification, plan, reply };
}

function isValidId(id: unknown): boolean {
  return id === null || typeof id === 'string' || typeof id === 'number';
}

/** Null when the element is a valid call, else why not (for logs/tests). */
function elementProblem(el: unknown): string | null {
  if (typeof el !== 'object' || el === null || Array.isArray(el)) return 'not an object';
  const o = el as Record<string, unknown>;
  if (o.jsonrpc !== '2.0') return 'jsonrpc is not "2.0"';
  if (typeof o.method !== 'string') return 'method is not a string';
  if ('id' in o && !isValidId(o.id)) return 'id is not a string, number or null';
  if ('params' in o && (typeof o.params !== 'object' || o.params === null)) return 'params is not an array or object';
  return null;
}

const idSpanScratch = new Int32Array(2);

export function analyze(body: Buffer, maxBatch: number): Analysis {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body.toString('utf8'));
  } catch {
    return analysis(A_REPLY, '', false, null, rpcErrorBody(RpcErrors.parse, null));
  }
  if (Array.isArray(parsed)) return analyzeBatch(body, parsed, maxBatch);
  const problem = elementProblem(parsed);
  if (problem !== null) {
    let id: string | null = null;
    if (typeof parsed === 'object' && parsed !== null && isValidId((parsed as { id?: unknown }).id)) {
      const [s, e] = trimmedSpan(body);
      if (memberSpan(body, s, e, ID_KEY, idSpanScratch)) id = body.toString('utf8', idSpanScratch[0], idSpanScratch[1]);
    }
    return analysis(A_REPLY, '', false, null, rpcErrorBody(RpcErrors.invalidRequest, id));
  }
  const o = parsed as { method: string; id?: unknown };
  return analysis(A_SINGLE, o.method, !('id' in o), null, '');
}

function analyzeBatch(body: Buffer, items: unknown[], maxBatch: number): Analysis {
  const count = items.length;
  if (count === 0) return analysis(A_REPLY, '', false, null, rpcErrorBody(RpcErrors.invalidRequest, null));
  if (count > maxBatch) return analysis(A_BATCH_TOO_LARGE, '', false, null, '');
  const [s, e] = trimmedSpan(body);
  const flat: number[] = [];
  arrayElements(body, s, e, flat);
  const plan: BatchPlan = {
    count,
    kinds: new Uint8Array(count),
    spans: Int32Array.from(flat),
    idSpans: new Int32Array(count * 2).fill(-1),
    methods: new Array<string>(count),
  };
  for (let i = 0; i < count; i++) {
    const el = items[i];
    const isObject = typeof el === 'object' && el !== null && !Array.isArray(el);
    const hasId = isObject && 'id' in el;
    if (hasId && isValidId((el as { id: unknown }).id) && memberSpan(body, plan.spans[2 * i]!, plan.spans[2 * i + 1]!, ID_KEY, idSpanScratch)) {
      plan.idSpans[2 * i] = idSpanScratch[0]!;
      plan.idSpans[2 * i + 1] = idSpanScratch[1]!;
    }
    if (elementProblem(el) !== null) {
      plan.kinds[i] = KIND_INVALID;
      plan.methods[i] = '';
    } else {
      plan.kinds[i] = hasId ? KIND_REQUEST : KIND_NOTIFICATION;
      plan.methods[i] = (el as { method: string }).method;
    }
  }
  return analysis(A_BATCH, '', false, plan, '');
}

/** Raw text of element i's id, or 'null'. */
export function rawId(body: Buffer, plan: BatchPlan, i: number): string {
  const s = plan.idSpans[2 * i]!;
  return s < 0 ? 'null' : body.toString('utf8', s, plan.idSpans[2 * i + 1]);
}
