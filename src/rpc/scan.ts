// Span finding over raw JSON bytes. Callers validate the text first (the request grammar or
// a node's own output); these functions only locate values so that ids and results can be
// spliced byte-for-byte, never decoded and re-encoded (u64 values and 20-digit ids survive).
// Built on the primitives of json-bytes.ts: a value that does not end before `end` ends the
// walk (nothing is recorded for it).

import { Byte, ERROR_KEY, RESULT_KEY } from './bytes.js';
import { bytesAt, skipString, skipValue, skipWs, trimEnd } from './json-bytes.js';

/** Start and end of the outermost value, trimmed of whitespace; [0,0] when empty. */
export function trimmedSpan(buf: Buffer): [number, number] {
  const s = skipWs(buf, 0, buf.length);
  return [s, trimEnd(buf, s, buf.length)];
}

/**
 * Pushes [start, end) pairs of each element of the array spanning [start, end) (the
 * brackets included) into `out`; returns the number of elements.
 */
export function arrayElements(buf: Buffer, start: number, end: number, out: number[]): number {
  let i = skipWs(buf, start + 1, end);
  let n = 0;
  if (buf[i] === Byte.RBRACKET) return 0;
  while (i < end) {
    const e = skipValue(buf, i, end);
    if (e < 0) break;
    out.push(i, e);
    n++;
    i = skipWs(buf, e, end);
    if (buf[i] !== Byte.COMMA) break;
    i = skipWs(buf, i + 1, end);
  }
  return n;
}

/**
 * Span of the value of top-level member `key` (given as the raw bytes of its quoted name,
 * e.g. Buffer.from('"id"')) of the object spanning [start, end); -1 start when absent.
 * Writes into out[0], out[1] to avoid allocating.
 */
export function memberSpan(buf: Buffer, start: number, end: number, key: Buffer, out: Int32Array): boolean {
  let i = skipWs(buf, start + 1, end);
  while (i < end && buf[i] === Byte.QUOTE) {
    const keyEnd = skipString(buf, i, end);
    if (keyEnd < 0) break;
    const isKey = keyEnd - i === key.length && bytesAt(buf, i, keyEnd, key);
    i = skipWs(buf, keyEnd, end);
    if (buf[i] !== Byte.COLON) break;
    i = skipWs(buf, i + 1, end);
    const ve = skipValue(buf, i, end);
    if (ve < 0) break;
    if (isKey) {
      out[0] = i;
      out[1] = ve;
      return true;
    }
    i = skipWs(buf, ve, end);
    if (buf[i] !== Byte.COMMA) break;
    i = skipWs(buf, i + 1, end);
  }
  out[0] = -1;
  out[1] = -1;
  return false;
}

export const ID_KEY = Buffer.from('"id"');

/**
 * One walk over a node's batch answer, the array spanning [start, end): pushes each
 * element's start, end and top-level `id` value start and end (-1, -1 when it has none)
 * into `out`; returns the number of elements. Equivalent to arrayElements plus memberSpan
 * per element, without walking every element twice.
 */
export function answerElements(buf: Buffer, start: number, end: number, out: number[]): number {
  let i = skipWs(buf, start + 1, end);
  let n = 0;
  if (buf[i] === Byte.RBRACKET) return 0;
  while (i < end) {
    const s = i;
    let idS = -1;
    let idE = -1;
    if (buf[i] === Byte.LBRACE) {
      i = skipWs(buf, i + 1, end);
      while (i < end && buf[i] === Byte.QUOTE) {
        const keyEnd = skipString(buf, i, end);
        if (keyEnd < 0) break;
        const isId = keyEnd - i === 4 && buf[i + 1] === 0x69 && buf[i + 2] === 0x64; // "id"
        i = skipWs(buf, keyEnd, end);
        if (buf[i] !== Byte.COLON) break;
        i = skipWs(buf, i + 1, end);
        const ve = skipValue(buf, i, end);
        if (ve < 0) break;
        if (isId) {
          idS = i;
          idE = ve;
        }
        i = skipWs(buf, ve, end);
        if (buf[i] !== Byte.COMMA) break;
        i = skipWs(buf, i + 1, end);
      }
      if (buf[i] === Byte.RBRACE) i++;
      else i = skipValue(buf, s, end); // not an object we could read member by member
    } else i = skipValue(buf, i, end);
    if (i < 0) break;
    out.push(s, i, idS, idE);
    n++;
    i = skipWs(buf, i, end);
    if (buf[i] !== Byte.COMMA) break;
    i = skipWs(buf, i + 1, end);
  }
  return n;
}

/** Raw bytes of a single request's `id` (as text), or null when absent. */
export function rawIdOf(body: Buffer): string | null {
  const [s, e] = trimmedSpan(body);
  if (body[s] !== Byte.LBRACE) return null;
  const span = new Int32Array(2);
  if (!memberSpan(body, s, e, ID_KEY, span)) return null;
  return body.toString('utf8', span[0], span[1]);
}

/**
 * Whether a JSON-RPC answer object is an error. It has `result` or `error`, never both, so
 * the walk stops at whichever comes first and never scans a (possibly huge) result value.
 */
export function isErrorAnswer(buf: Buffer): boolean {
  const [start, end] = trimmedSpan(buf);
  return isErrorSpan(buf, start, end);
}

/** isErrorAnswer for the answer object spanning [start, end) of `buf` (a batch answer's element). */
export function isErrorSpan(buf: Buffer, start: number, end: number): boolean {
  if (buf[start] !== Byte.LBRACE) return false;
  let i = skipWs(buf, start + 1, end);
  while (i < end && buf[i] === Byte.QUOTE) {
    const keyEnd = skipString(buf, i, end);
    if (keyEnd < 0) return false;
    const len = keyEnd - i;
    if (len === RESULT_KEY.length && bytesAt(buf, i, keyEnd, RESULT_KEY)) return false;
    if (len === ERROR_KEY.length && bytesAt(buf, i, keyEnd, ERROR_KEY)) return true;
    i = skipWs(buf, keyEnd, end);
    if (buf[i] !== Byte.COLON) return false;
    const ve = skipValue(buf, skipWs(buf, i + 1, end), end);
    if (ve < 0) return false;
    i = skipWs(buf, ve, end);
    if (buf[i] !== Byte.COMMA) return false;
    i = skipWs(buf, i + 1, end);
  }
  return false;
}
