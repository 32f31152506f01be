// One pass over a request body that both validates it as JSON (accepting exactly what
// JSON.parse accepts) and records the layout analyze() needs: where each call sits, where
// its jsonrpc, method, id and params members are. It replaces JSON.parse plus a second span
// scan: nothing is decoded except method names, so a 100-call batch costs one walk over its
// bytes and no garbage. Iterative (explicit stack), so deep nesting cannot overflow.
//
// A call object is read by its own loop (scanCall): its member names "jsonrpc", "method",
// "id" and "params", a "2.0" version and a method name equal to the previous call's are
// recognised by comparing bytes instead of scanning them as strings; any other value goes
// through the generic validator (scanValue). In a typical batch that leaves the params as
// most of what is scanned byte by byte.
//
// The same scanner also exists as WebAssembly (request-scan.wat), which reads strings 16
// bytes at a time and runs first; this one reads what it leaves and is what it is tested
// against.

import { Byte } from './bytes.js';
import { scanString, scanValue, type ScanState } from './grammar.js';
import { skipWs, trimEnd } from './json-bytes.js';
import { scanRequestFast } from './request-scan.js';

/**
 * Member slots recorded per call (start and end of the value's bytes; -1 when absent). Const
 * enums, like Byte: the hot loops read literals, not module bindings.
 */
export const enum Member {
  JSONRPC = 0,
  METHOD = 1,
  ID = 2,
  PARAMS = 3,
}
export const M_JSONRPC = Member.JSONRPC;
export const M_METHOD = Member.METHOD;
export const M_ID = Member.ID;
export const M_PARAMS = Member.PARAMS;

/** Per-call flags. */
export const enum CallFlag {
  /** The method string holds an escape: decode it with JSON.parse. */
  METHOD_ESCAPED = 1,
  /** The method's bytes are the previous call's (its name needs no decoding or lookup). */
  SAME_METHOD = 2,
  /** A recorded member appears twice in the call (the last one counts, as in JSON.parse). */
  REPEATED = 4,
}

/** Layout of the calls found by scanRequest; arrays are reused between scans (copy what you keep). */
export class RequestLayout implements ScanState {
  /** Top level is an array (a batch). */
  batch = false;
  /** Calls in the body: 1 for a single value, the array's length for a batch. */
  count = 0;
  /** Calls recorded (at most `limit`); the rest were validated and counted only. */
  recorded = 0;
  /** Call i spans [spans[2i], spans[2i+1]). */
  spans = new Int32Array(64 * 2);
  /** Call i's member m value spans [members[8i+2m], members[8i+2m+1]); -1 when absent. */
  members = new Int32Array(64 * 8);
  /** Call i's F_* flags. */
  flags = new Uint8Array(64);
  // Scan state lives on the instance: module-level `let`s cost a TDZ check on every access
  // (measured: 24 -> 17 µs for a 100-call batch).
  /** Open containers, innermost last (their opening byte). */
  stack = new Uint8Array(256);
  /** Set by scanString: whether the string held a backslash escape. */
  sawEscape = false;

  reserve(n: number): void {
    if (n <= this.flags.length) return;
    const size = Math.max(n, this.flags.length * 2);
    const spans = new Int32Array(size * 2);
    spans.set(this.spans);
    this.spans = spans;
    const members = new Int32Array(size * 8);
    members.set(this.members);
    this.members = members;
    const flags = new Uint8Array(size);
    flags.set(this.flags);
    this.flags = flags;
  }
}

/** Which member slot a key (quotes included, no escapes) names; -1 for any other key. */
function memberSlot(buf: Uint8Array, s: number, e: number): number {
  const n = e - s;
  if (n === 4) return buf[s + 1] === 0x69 && buf[s + 2] === 0x64 ? Member.ID : -1; // "id"
  if (n === 8) {
    const c = buf[s + 1];
    // "method" / "params"
    if (c === 0x6d) return buf[s + 2] === 0x65 && buf[s + 3] === 0x74 && buf[s + 4] === 0x68 && buf[s + 5] === 0x6f && buf[s + 6] === 0x64 ? Member.METHOD : -1;
    if (c === 0x70) return buf[s + 2] === 0x61 && buf[s + 3] === 0x72 && buf[s + 4] === 0x61 && buf[s + 5] === 0x6d && buf[s + 6] === 0x73 ? Member.PARAMS : -1;
    return -1;
  }
  if (n === 9) {
    // "jsonrpc"
    return buf[s + 1] === 0x6a &&
      buf[s + 2] === 0x73 &&
      buf[s + 3] === 0x6f &&
      buf[s + 4] === 0x6e &&
      buf[s + 5] === 0x72 &&
      buf[s + 6] === 0x70 &&
      buf[s + 7] === 0x63
      ? Member.JSONRPC
      : -1;
  }
  return -1;
}

const SLOT_BY_NAME: Record<string, number> = { jsonrpc: Member.JSONRPC, method: Member.METHOD, id: Member.ID, params: Member.PARAMS };

function escapedMemberSlot(buf: Buffer, s: number, e: number): number {
  return SLOT_BY_NAME[JSON.parse(buf.toString('utf8', s, e)) as string] ?? -1;
}

/**
 * The member name at `i` (a quote) when it is exactly "jsonrpc", "method", "id" or "params"
 * without escapes: its slot in the low byte, its length (quotes included) above; 0 for any
 * other name (the caller scans it).
 */
function knownName(buf: Uint8Array, i: number, end: number): number {
  const c = buf[i + 1];
  if (c === 0x69) {
    // "id"
    if (i + 3 < end && buf[i + 2] === 0x64 && buf[i + 3] === Byte.QUOTE) return (4 << 8) | Member.ID;
  } else if (c === 0x6d) {
    // "method"
    if (
      i + 7 < end &&
      buf[i + 2] === 0x65 &&
      buf[i + 3] === 0x74 &&
      buf[i + 4] === 0x68 &&
      buf[i + 5] === 0x6f &&
      buf[i + 6] === 0x64 &&
      buf[i + 7] === Byte.QUOTE
    ) {
      return (8 << 8) | Member.METHOD;
    }
  } else if (c === 0x70) {
    // "params"
    if (
      i + 7 < end &&
      buf[i + 2] === 0x61 &&
      buf[i + 3] === 0x72 &&
      buf[i + 4] === 0x61 &&
      buf[i + 5] === 0x6d &&
      buf[i + 6] === 0x73 &&
      buf[i + 7] === Byte.QUOTE
    ) {
      return (8 << 8) | Member.PARAMS;
    }
  } else if (c === 0x6a) {
    // "jsonrpc"
    if (
      i + 8 < end &&
      buf[i + 2] === 0x73 &&
      buf[i + 3] === 0x6f &&
      buf[i + 4] === 0x6e &&
      buf[i + 5] === 0x72 &&
      buf[i + 6] === 0x70 &&
      buf[i + 7] === 0x63 &&
      buf[i + 8] === Byte.QUOTE
    ) {
      return (9 << 8) | Member.JSONRPC;
    }
  }
  return 0;
}

/** Length of the method string at `i` when its bytes are call `prev`'s method string's; else 0. */
function sameMethodLength(buf: Uint8Array, i: number, end: number, members: Int32Array, prev: number): number {
  const ps = members[8 * prev + 2 * Member.METHOD]!;
  if (ps < 0 || buf[ps] !== Byte.QUOTE) return 0;
  const n = members[8 * prev + 2 * Member.METHOD + 1]! - ps;
  if (i + n > end) return 0;
  for (let k = 1; k < n; k++) if (buf[i + k] !== buf[ps + k]) return 0;
  return n;
}

/**
 * End of the call object at `i` (a brace), or -1; records call `call`'s members and flags.
 * Same grammar as scanValue, with the call's own members read by comparison where possible.
 */
function scanCall(buf: Buffer, i: number, end: number, out: RequestLayout, call: number): number {
  i = skipWs(buf, i + 1, end);
  if (buf[i] === Byte.RBRACE) return i + 1;
  const members = out.members;
  let flags = 0;
  for (;;) {
    if (buf[i] !== Byte.QUOTE) return -1;
    let slot = -1;
    const known = knownName(buf, i, end);
    if (known !== 0) {
      slot = known & 0xff;
      i += known >> 8;
    } else {
      const ks = i;
      i = scanString(buf, i, end, out);
      if (i < 0) return -1;
      slot = out.sawEscape ? escapedMemberSlot(buf, ks, i) : memberSlot(buf, ks, i);
    }
    i = skipWs(buf, i, end);
    if (buf[i] !== Byte.COLON) return -1;
    i = skipWs(buf, i + 1, end);
    if (i >= end) return -1;
    const vs = i;
    const c = buf[i]!;
    let same = false;
    if (c === Byte.QUOTE) {
      let n = 0;
      if (slot === Member.JSONRPC) {
        // "2.0"
        if (i + 4 < end && buf[i + 1] === 0x32 && buf[i + 2] === 0x2e && buf[i + 3] === 0x30 && buf[i + 4] === Byte.QUOTE) n = 5;
      } else if (slot === Member.METHOD && call > 0) n = sameMethodLength(buf, i, end, members, call - 1);
      if (n > 0) {
        // Already known to be a valid string: its escapes, if any, are the previous call's.
        same = slot === Member.METHOD;
        out.sawEscape = same && (out.flags[call - 1]! & CallFlag.METHOD_ESCAPED) !== 0;
        i += n;
      } else i = scanString(buf, i, end, out);
    } else i = scanValue(buf, i, end, out);
    if (i < 0) return -1;
    if (slot >= 0) {
      const at = 8 * call + 2 * slot;
      if (members[at]! >= 0) flags |= CallFlag.REPEATED;
      members[at] = vs;
      members[at + 1] = i;
      if (slot === Member.METHOD) {
        flags &= CallFlag.REPEATED;
        if (c === Byte.QUOTE && out.sawEscape) flags |= CallFlag.METHOD_ESCAPED;
        if (same) flags |= CallFlag.SAME_METHOD;
      }
    }
    i = skipWs(buf, i, end);
    const d = buf[i];
    if (d === Byte.RBRACE) {
      out.flags[call] = flags;
      return i + 1;
    }
    if (d !== Byte.COMMA) return -1;
    i = skipWs(buf, i + 1, end);
  }
}

/** Starts recording call `call` at `i`. */
function openCall(out: RequestLayout, call: number, i: number): void {
  out.reserve(call + 1);
  out.spans[2 * call] = i;
  const m = out.members;
  const b = 8 * call;
  m[b] = m[b + 1] = m[b + 2] = m[b + 3] = m[b + 4] = m[b + 5] = m[b + 6] = m[b + 7] = -1;
  out.flags[call] = 0;
  out.recorded++;
}

/** End of the element (a call, or any value) at `i`, or -1; recorded when `call` >= 0. */
function scanElement(buf: Buffer, i: number, end: number, out: RequestLayout, call: number): number {
  if (call < 0) return scanValue(buf, i, end, out);
  openCall(out, call, i);
  const e = buf[i] === Byte.LBRACE ? scanCall(buf, i, end, out, call) : scanValue(buf, i, end, out);
  out.spans[2 * call + 1] = e;
  return e;
}

/**
 * Validates `buf` and fills `out`. Returns false on a JSON syntax error (the caller answers
 * -32700). At most `limit` calls of a batch are recorded; `out.count` counts them all. Runs
 * as WebAssembly where it can (request-scan.ts).
 */
export function scanRequest(buf: Buffer, limit: number, out: RequestLayout): boolean {
  return scanRequestFast(buf, limit, out) ?? scanRequestByBytes(buf, limit, out);
}

/** scanRequest in JavaScript: for what the WebAssembly scanner leaves (and to test it against). */
export function scanRequestByBytes(buf: Buffer, limit: number, out: RequestLayout): boolean {
  let i = skipWs(buf, 0, buf.length);
  const end = trimEnd(buf, i, buf.length);
  if (i === end) return false;
  out.count = 0;
  out.recorded = 0;
  out.batch = buf[i] === Byte.LBRACKET;
  if (!out.batch) {
    out.count = 1;
    return scanElement(buf, i, end, out, limit > 0 ? 0 : -1) === end;
  }
  i = skipWs(buf, i + 1, end);
  if (buf[i] === Byte.RBRACKET) return i + 1 === end;
  for (;;) {
    if (i >= end) return false;
    const call = out.count < limit ? out.count : -1;
    out.count++;
    i = scanElement(buf, i, end, out, call);
    if (i < 0) return false;
    i = skipWs(buf, i, end);
    const d = buf[i];
    if (d === Byte.RBRACKET) return i + 1 === end;
    if (d !== Byte.COMMA) return false;
    i = skipWs(buf, i + 1, end);
  }
}
