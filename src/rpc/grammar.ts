// Validating scanners for JSON values, accepting exactly what JSON.parse accepts: strings
// (escapes checked, control characters refused), numbers, literals, and any value, whose
// containers are walked with an explicit stack so that deep nesting cannot overflow.
// validate.ts reads a request's calls with these. They return -1 where the text is not JSON,
// as the stepping primitives of json-bytes.ts (which they build on) do where it ends early.

import { Byte } from './bytes.js';
import { digitsEnd, skipWs } from './json-bytes.js';

/** What the scanners keep between calls: their stack and what the last string held. */
export interface ScanState {
  /** Open containers, innermost last (their opening byte); grown when full. */
  stack: Uint8Array;
  /** Set by scanString: whether the string held a backslash escape. */
  sawEscape: boolean;
}

function isHex(c: number): boolean {
  return (c >= 0x30 && c <= 0x39) || ((c | 0x20) >= 0x61 && (c | 0x20) <= 0x66);
}

/** End of the valid string starting at the quote at `i`, or -1. Sets out.sawEscape. */
export function scanString(buf: Uint8Array, i: number, end: number, out: ScanState): number {
  out.sawEscape = false;
  i++;
  while (i < end) {
    const c = buf[i]!;
    // Plain bytes first, in as few compares as possible: everything above the backslash
    // (lower-case letters, UTF-8 continuation and lead bytes), then '#'..'[' (digits, upper case).
    if (c > Byte.BACKSLASH || (c > Byte.QUOTE && c < Byte.BACKSLASH)) {
      i++;
      continue;
    }
    if (c === Byte.QUOTE) return i + 1;
    if (c === Byte.BACKSLASH) {
      out.sawEscape = true;
      const d = buf[i + 1];
      if (d === 0x75) {
        if (i + 5 >= end || !isHex(buf[i + 2]!) || !isHex(buf[i + 3]!) || !isHex(buf[i + 4]!) || !isHex(buf[i + 5]!)) return -1;
        i += 6;
        continue;
      }
      if (d === Byte.QUOTE || d === Byte.BACKSLASH || d === 0x2f || d === 0x62 || d === 0x66 || d === 0x6e || d === 0x72 || d === 0x74) {
        i += 2;
        continue;
      }
      return -1;
    }
    if (c < 0x20) return -1; // a control character
    i++; // space or '!'
  }
  return -1;
}

/** End of the valid number starting at `i`, or -1. */
function scanNumber(buf: Uint8Array, i: number, end: number): number {
  if (buf[i] === Byte.MINUS) i++;
  const c = buf[i];
  if (c === 0x30) i++;
  else if (c !== undefined && c >= 0x31 && c <= 0x39) i = digitsEnd(buf, i + 1, end);
  else return -1;
  if (i < end && buf[i] === 0x2e) {
    const j = digitsEnd(buf, i + 1, end);
    if (j === i + 1) return -1;
    i = j;
  }
  if (i < end && (buf[i]! | 0x20) === 0x65) {
    i++;
    if (buf[i] === 0x2b || buf[i] === Byte.MINUS) i++;
    const j = digitsEnd(buf, i, end);
    if (j === i) return -1;
    i = j;
  }
  return i;
}

function literalEnd(buf: Uint8Array, i: number, end: number): number {
  const c = buf[i];
  if (c === 0x74) return i + 3 < end && buf[i + 1] === 0x72 && buf[i + 2] === 0x75 && buf[i + 3] === 0x65 ? i + 4 : -1; // true
  if (c === 0x66) return i + 4 < end && buf[i + 1] === 0x61 && buf[i + 2] === 0x6c && buf[i + 3] === 0x73 && buf[i + 4] === 0x65 ? i + 5 : -1; // false
  if (c === 0x6e) return i + 3 < end && buf[i + 1] === 0x75 && buf[i + 2] === 0x6c && buf[i + 3] === 0x6c ? i + 4 : -1; // null
  return -1;
}

/** End of the scalar (string, number, literal) at `i`, or -1. */
function scanScalar(buf: Uint8Array, i: number, end: number, out: ScanState): number {
  const c = buf[i]!;
  if (c === Byte.QUOTE) return scanString(buf, i, end, out);
  if (c === Byte.MINUS || (c >= 0x30 && c <= 0x39)) return scanNumber(buf, i, end);
  return literalEnd(buf, i, end);
}

/**
 * End of the valid JSON value starting at `i` (no leading whitespace), or -1. Containers are
 * walked with an explicit stack (out.stack): no recursion, however deep.
 */
export function scanValue(buf: Uint8Array, i: number, end: number, out: ScanState): number {
  let c = buf[i]!;
  if (c !== Byte.LBRACE && c !== Byte.LBRACKET) return scanScalar(buf, i, end, out);
  let stack = out.stack;
  let depth = 0;
  for (;;) {
    // A value starts at i (c = buf[i]).
    if (c === Byte.LBRACE || c === Byte.LBRACKET) {
      if (depth === stack.length) {
        const grown = new Uint8Array(stack.length * 2);
        grown.set(stack);
        out.stack = stack = grown;
      }
      stack[depth++] = c;
      i = skipWs(buf, i + 1, end);
      const d = buf[i];
      if (d === (c === Byte.LBRACE ? Byte.RBRACE : Byte.RBRACKET)) {
        depth--;
        i++;
      } else {
        if (c === Byte.LBRACE) {
          if (d !== Byte.QUOTE) return -1;
          i = scanString(buf, i, end, out);
          if (i < 0) return -1;
          i = skipWs(buf, i, end);
          if (buf[i] !== Byte.COLON) return -1;
          i = skipWs(buf, i + 1, end);
        }
        if (i >= end) return -1;
        c = buf[i]!;
        continue;
      }
    } else {
      i = scanScalar(buf, i, end, out);
      if (i < 0) return -1;
    }
    // A value ended at i: close containers until the next value starts.
    for (;;) {
      if (depth === 0) return i;
      i = skipWs(buf, i, end);
      const d = buf[i];
      const top = stack[depth - 1];
      if (d === Byte.COMMA) {
        i = skipWs(buf, i + 1, end);
        if (top === Byte.LBRACE) {
          if (buf[i] !== Byte.QUOTE) return -1;
          i = scanString(buf, i, end, out);
          if (i < 0) return -1;
          i = skipWs(buf, i, end);
          if (buf[i] !== Byte.COLON) return -1;
          i = skipWs(buf, i + 1, end);
        }
        break;
      }
      if ((d === Byte.RBRACE && top === Byte.LBRACE) || (d === Byte.RBRACKET && top === Byte.LBRACKET)) {
        depth--;
        i++;
        continue;
      }
      return -1;
    }
    if (i >= end) return -1;
    c = buf[i]!;
  }
}
