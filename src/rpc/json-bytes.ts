// JSON byte primitives: the one place where whitespace, strings, values and unsigned integers
// are stepped over in raw bytes. Every scanner builds on these (docs/internals-json.md): the
// validating grammar (grammar.ts), the span finders (scan.ts), the batch answer check
// (answer.ts), the slot reader (../routing/answer-slot.ts). The WebAssembly scanners
// (*.wat) hold their own copies, which the differential tests compare with these.
//
// Contract, for every function here:
// - `i` and the result are byte indices into `buf`; only buf[i, end) is read, never past it.
// - A function that steps over something returns the index just past it. One that finds no
//   end before `end` (an unterminated string or container) returns -1, never `end`: a caller
//   cannot mistake a truncated value for one that ends at the buffer's end.
// - Nothing is validated: skipString and skipValue find where a value ends in bytes already
//   known to be JSON (a request the grammar accepted, a node's answer from a JSON encoder).
//   grammar.ts is the validating counterpart.

import { Byte } from './bytes.js';

/** Index of the first byte of buf[i, end) that is not JSON whitespace (space, LF, CR, tab), or `end`. */
export function skipWs(buf: Uint8Array, i: number, end: number): number {
  while (i < end) {
    const c = buf[i]!;
    // Anything above space ends the run at once: the common case costs one compare.
    if (c > 0x20 || (c !== 0x20 && c !== 0x0a && c !== 0x0d && c !== 0x09)) return i;
    i++;
  }
  return i;
}

/** Index after the last byte of buf[start, end) that is not whitespace, or `start`. */
export function trimEnd(buf: Uint8Array, start: number, end: number): number {
  while (end > start) {
    const c = buf[end - 1]!;
    if (c !== 0x20 && c !== 0x0a && c !== 0x0d && c !== 0x09) break;
    end--;
  }
  return end;
}

/** How far a string is walked byte by byte before Buffer.indexOf (memchr) takes over. */
const SHORT_STRING = 48;

/** Index just past the closing quote of the string whose opening quote is at `i`, or -1. */
export function skipString(buf: Uint8Array, i: number, end: number): number {
  // Most strings in JSON-RPC are short (keys, methods, addresses): a plain loop beats a
  // native call. Long ones (base64 account data) go on with indexOf. Kept small so that
  // the compiler inlines it into the walks.
  let j = i + 1;
  const short = j + SHORT_STRING < end ? j + SHORT_STRING : end;
  while (j < short) {
    const c = buf[j++]!;
    if (c === Byte.QUOTE) return j;
    if (c === Byte.BACKSLASH) j++;
  }
  return j < end ? longStringEnd(buf, i, j, end) : -1;
}

/** skipString past its first SHORT_STRING bytes: the string opened at `i` goes on at `j`. */
function longStringEnd(buf: Uint8Array, i: number, j: number, end: number): number {
  for (;;) {
    const q = buf.indexOf(Byte.QUOTE, j);
    if (q < 0 || q >= end) return -1;
    // An escaped quote has an odd run of backslashes before it.
    let b = q - 1;
    while (b > i && buf[b] === Byte.BACKSLASH) b--;
    if ((q - 1 - b) % 2 === 0) return q + 1;
    j = q + 1;
  }
}

/**
 * Index just past the value that starts at `i` (no leading whitespace), or -1 when a string
 * or container in it is not closed before `end`. A number or literal ends at the first
 * comma, bracket, brace, whitespace or control byte, or at `end`.
 */
export function skipValue(buf: Uint8Array, i: number, end: number): number {
  let c = buf[i]!;
  if (c === Byte.QUOTE) return skipString(buf, i, end);
  // `c | 0x20` folds '[' onto '{' and ']' onto '}': one compare for either bracket.
  if ((c | 0x20) === Byte.LBRACE) {
    let depth = 1;
    i++;
    while (i < end) {
      c = buf[i++]!;
      if (c === Byte.QUOTE) {
        i = skipString(buf, i - 1, end);
        if (i < 0) return -1;
      } else if ((c | 0x20) === Byte.LBRACE) depth++;
      else if ((c | 0x20) === Byte.RBRACE && --depth === 0) return i;
    }
    return -1;
  }
  while (i < end) {
    c = buf[i]!;
    if (c === Byte.COMMA || (c | 0x20) === Byte.RBRACE || c <= 0x20) return i;
    i++;
  }
  return i;
}

/** Index of the first byte of buf[i, end) that is not a decimal digit, or `end`. */
export function digitsEnd(buf: Uint8Array, i: number, end: number): number {
  while (i < end) {
    const c = buf[i]!;
    if (c < 0x30 || c > 0x39) break;
    i++;
  }
  return i;
}

/** Digits an unsigned integer may have and still be exact in a double. */
export const MAX_UINT_DIGITS = 15;

/** The unsigned decimal integer buf[s, e) (digits only, at most MAX_UINT_DIGITS); -1 when it is not one. */
export function uintOf(buf: Uint8Array, s: number, e: number): number {
  if (s >= e || e - s > MAX_UINT_DIGITS) return -1;
  let v = 0;
  for (let i = s; i < e; i++) {
    const d = buf[i]! - 0x30;
    if (d < 0 || d > 9) return -1;
    v = v * 10 + d;
  }
  return v;
}

/** Whether buf holds the bytes of `what` at `at` (within buf[0, end)). */
export function bytesAt(buf: Uint8Array, at: number, end: number, what: Uint8Array): boolean {
  if (at < 0 || at + what.length > end) return false;
  for (let k = 0; k < what.length; k++) if (buf[at + k] !== what[k]) return false;
  return true;
}
