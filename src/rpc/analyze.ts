// Validates a request body (docs/interface.md "Public interface") and, for batches, records where each element and its
// id sit in the raw bytes so that sub-batches and the merged answer are built by splicing.
// One pass over the bytes (validate.ts), no JSON.parse: runs inline for small bodies and in
// offload-tasks/ for large ones. The plan also carries what the rest of the request needs per
// call (kind and method: limits, timeouts, usage) and whether the batch can go to the nodes
// with the client's own ids (ids.ts).

import { errorBody, RpcErrors, rpcErrorBody } from '../errors.js';
import { Byte } from './bytes.js';
import { echoedId, IdTable } from './ids.js';
import { syntaxErrorOffset } from './syntax-offset.js';
import { CallFlag, Member, RequestLayout, scanRequest } from './validate.js';

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
  /**
   * The method of every element when all are valid calls of one method (the usual batch);
   * '' when methods differ or an element is invalid. Admission and usage then book the batch
   * in one step instead of walking its elements.
   */
  method: string;
  /**
   * Every element is a request whose id a node echoes byte for byte, no two ids alike, no
   * member repeated: the batch is forwarded with the client's ids (ids.ts).
   */
  idsKept: boolean;
}

export const A_SINGLE = 0;
export const A_BATCH = 1;
/** Answered by the gateway with HTTP 200 and `reply` (parse error, invalid request). */
export const A_REPLY = 2;
export const A_BATCH_TOO_LARGE = 3;
/** The body is not JSON: answered like A_REPLY, and a WebSocket refuses the frame (ws-listener.ts). */
export const A_PARSE_ERROR = 4;

export interface Analysis {
  type: number;
  /** Single request: its method. */
  method: string;
  /** Single request without an id. */
  notification: boolean;
  plan: BatchPlan | null;
  reply: string;
  /** Single request: its id's bytes in the body span [idStart, idEnd); -1, -1 when it has none. */
  idStart: number;
  idEnd: number;
  /** Single request: its params' bytes span [paramsStart, paramsEnd); -1, -1 when it has none. */
  paramsStart: number;
  paramsEnd: number;
}

/**
 * The answer to a body that is not JSON: JSON-RPC's parse error, with where the body stops
 * being JSON in `data.offset` (docs/errors.md); the body's end when it ends early.
 */
export function parseErrorReply(body: Uint8Array): string {
  const at = syntaxErrorOffset(body);
  return at < 0 ? rpcErrorBody(RpcErrors.parse, null) : errorBody(RpcErrors.parse, null, { offset: at });
}

function analysis(type: number, method: string, notification: boolean, plan: BatchPlan | null, reply: string): Analysis {
  return { type, method, notification, plan, reply, idStart: -1, idEnd: -1, paramsStart: -1, paramsEnd: -1 };
}

/** A single call's analysis, with where its id and params sit (what a WebSocket subscription needs). */
function singleCall(method: string): Analysis {
  const m = layout.members;
  return {
    type: A_SINGLE,
    method,
    notification: m[2 * Member.ID]! < 0,
    plan: null,
    reply: '',
    idStart: m[2 * Member.ID]!,
    idEnd: m[2 * Member.ID + 1]!,
    paramsStart: m[2 * Member.PARAMS]!,
    paramsEnd: m[2 * Member.PARAMS + 1]!,
  };
}

const layout = new RequestLayout();

/** callChecks: call c is a valid JSON-RPC 2.0 call (docs/interface.md "Public interface"). */
const VALID_CALL = 1;
/** callChecks: call c is an object whose id member is a string, number or null. */
const VALID_ID = 2;

/** VALID_CALL and VALID_ID as they hold for call c of the scanned body; each call is checked once. */
function callChecks(body: Buffer, c: number): number {
  if (body[layout.spans[2 * c]!] !== Byte.LBRACE) return 0;
  const m = layout.members;
  const at = 8 * c;
  const idS = m[at + 2 * Member.ID]!;
  let checks = 0;
  if (idS >= 0) {
    const b = body[idS]!;
    if (b !== Byte.QUOTE && b !== 0x6e && b !== 0x2d && (b < 0x30 || b > 0x39)) return 0;
    checks = VALID_ID;
  }
  const ms = m[at + 2 * Member.METHOD]!;
  const ps = m[at + 2 * Member.PARAMS]!;
  if (
    isV2(body, m[at + 2 * Member.JSONRPC]!, m[at + 2 * Member.JSONRPC + 1]!) &&
    ms >= 0 &&
    body[ms] === Byte.QUOTE &&
    (ps < 0 || body[ps] === Byte.LBRACE || body[ps] === Byte.LBRACKET)
  )
    checks |= VALID_CALL;
  return checks;
}

/** The jsonrpc member's value is the string "2.0" (raw bytes; escapes decoded when present). */
function isV2(body: Buffer, s: number, e: number): boolean {
  if (s < 0 || body[s] !== Byte.QUOTE) return false;
  if (e - s === 5 && body[s + 1] === 0x32 && body[s + 2] === 0x2e && body[s + 3] === 0x30) return true;
  // Only an escaped spelling ("2\u002e0") can still be "2.0"; indexOf is -1 when no backslash follows at all.
  const bs = body.indexOf(Byte.BACKSLASH, s);
  return bs >= 0 && bs < e && JSON.parse(body.toString('utf8', s, e)) === '2.0';
}

// Method names are interned: a known name comes back as the same string object without
// decoding, so the per-method Map lookups downstream (limits, metrics, usage, retry rules)
// find its hash already computed. The table is small and bounded; names past it are decoded.
const INTERN_MAX = 64;
const internedBytes: Buffer[] = [];
const internedNames: string[] = [];

function methodOf(body: Buffer, c: number): string {
  const s = layout.members[8 * c + 2 * Member.METHOD]! + 1;
  const e = layout.members[8 * c + 2 * Member.METHOD + 1]! - 1;
  if ((layout.flags[c]! & CallFlag.METHOD_ESCAPED) !== 0) return JSON.parse(body.toString('utf8', s - 1, e + 1)) as string;
  const n = e - s;
  for (let k = 0; k < internedBytes.length; k++) {
    const known = internedBytes[k]!;
    if (known.length !== n) continue;
    let j = 0;
    while (j < n && known[j] === body[s + j]) j++;
    if (j === n) return internedNames[k]!;
  }
  const name = body.toString('utf8', s, e);
  if (internedBytes.length < INTERN_MAX) {
    internedBytes.push(Buffer.from(body.subarray(s, e)));
    internedNames.push(name);
  }
  return name;
}

export function analyze(body: Buffer, maxBatch: number): Analysis {
  if (!scanRequest(body, maxBatch, layout)) return analysis(A_PARSE_ERROR, '', false, null, parseErrorReply(body));
  if (layout.batch) return analyzeBatch(body, maxBatch);
  const checks = callChecks(body, 0);
  if ((checks & VALID_CALL) === 0) {
    const id = (checks & VALID_ID) !== 0 ? idText(body, 0) : null;
    return analysis(A_REPLY, '', false, null, rpcErrorBody(RpcErrors.invalidRequest, id));
  }
  return singleCall(methodOf(body, 0));
}

function idText(body: Buffer, c: number): string {
  return body.toString('utf8', layout.members[8 * c + 2 * Member.ID]!, layout.members[8 * c + 2 * Member.ID + 1]!);
}

const ids = new IdTable();

function analyzeBatch(body: Buffer, maxBatch: number): Analysis {
  const count = layout.count;
  if (count === 0) return analysis(A_REPLY, '', false, null, rpcErrorBody(RpcErrors.invalidRequest, null));
  if (count > maxBatch) return analysis(A_BATCH_TOO_LARGE, '', false, null, '');
  // The plan's three arrays share one ArrayBuffer: memory outside the V8 heap costs an
  // allocation and a sweep per buffer (bench/README.md, "Where a batch's CPU goes now").
  const mem = new ArrayBuffer(17 * count);
  const spans = new Int32Array(mem, 0, 2 * count);
  const idSpans = new Int32Array(mem, 8 * count, 2 * count);
  const kinds = new Uint8Array(mem, 16 * count, count);
  const methods = new Array<string>(count);
  const m = layout.members;
  const flags = layout.flags;
  const found = layout.spans;
  // Ids kept upstream need all ids echoed as they are and distinct; rising integers (the
  // usual 1..n) are distinct without the table.
  let kept = true;
  let rising = true;
  let last = -Infinity;
  let named = -1; // the call whose method name `name` is
  let name = '';
  let one = true; // every element so far a valid call of methods[0]
  for (let i = 0; i < count; i++) {
    const idS = m[8 * i + 2 * Member.ID]!;
    const idE = m[8 * i + 2 * Member.ID + 1]!;
    spans[2 * i] = found[2 * i]!;
    spans[2 * i + 1] = found[2 * i + 1]!;
    const checks = callChecks(body, i);
    if ((checks & VALID_ID) !== 0) {
      idSpans[2 * i] = idS;
      idSpans[2 * i + 1] = idE;
    } else idSpans[2 * i] = idSpans[2 * i + 1] = -1;
    const valid = (checks & VALID_CALL) !== 0;
    if (!valid) {
      kinds[i] = KIND_INVALID;
      methods[i] = '';
      kept = false;
      one = false;
      continue;
    }
    kinds[i] = idS >= 0 ? KIND_REQUEST : KIND_NOTIFICATION;
    // A method written like the previous call's is the same name: no decoding, no lookup.
    if ((flags[i]! & CallFlag.SAME_METHOD) === 0 || named !== i - 1) name = methodOf(body, i);
    named = i;
    methods[i] = name;
    if (one && i > 0 && name !== methods[0]) one = false;
    if (!kept) continue;
    const v = idS < 0 || (flags[i]! & CallFlag.REPEATED) !== 0 ? NaN : echoedId(body, idS, idE);
    if (v !== v) kept = false;
    else if (rising && v > last) last = v;
    else rising = false;
  }
  if (kept && !rising) kept = distinct(body, idSpans, count);
  return analysis(A_BATCH, '', false, { count, kinds, spans, idSpans, methods, method: one ? methods[0]! : '', idsKept: kept }, '');
}

/** No two elements' ids have the same bytes. */
function distinct(body: Buffer, idSpans: Int32Array, count: number): boolean {
  ids.reset(body, idSpans, count);
  let all = true;
  for (let i = 0; i < count && all; i++) all = ids.add(i);
  ids.forget();
  return all;
}

/** Raw text of element i's id, or 'null'. */
export function rawId(body: Buffer, plan: BatchPlan, i: number): string {
  const s = plan.idSpans[2 * i]!;
  return s < 0 ? 'null' : body.toString('utf8', s, plan.idSpans[2 * i + 1]);
}
