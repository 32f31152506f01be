// A node's answer to a batch sent with the client's own ids (ids.ts), read in one walk: is it
// an array of exactly the sub-batch's elements, each an object whose top-level id has the
// bytes of the request's id, in request order? Then the answer is the client's answer as
// the node wrote it, with nothing to rebuild. Anything else (elements out of order or
// missing, an error object for the whole batch, something unreadable) returns false and
// batch.ts matches the elements by id instead.
//
// The walk only finds where values end (json-bytes.ts): a node's answer passed looksLikeJson
// and comes from a JSON encoder, and whatever it holds the loops stop at `end`.

import { answerInOrderFast } from './answer-scan.js';
import { Byte } from './bytes.js';
import { skipString, skipValue, skipWs, trimEnd } from './json-bytes.js';

/**
 * True when `resp` is an array whose elements are, in order, the answers to elements
 * [from, to) of `body`: each an object with one top-level id, of exactly the bytes
 * body[idSpans[2i], idSpans[2i+1]). Read 16 bytes at a time where it can be (answer-scan.ts).
 * When given, `errs[k]` is set to 1 for each element k with a top-level `error` member (the
 * same walk finds it; on false, `errs` may hold marks of the elements read so far).
 */
export function answerInOrder(resp: Uint8Array, body: Uint8Array, idSpans: Int32Array, from: number, to: number, errs: Uint8Array | null = null): boolean {
  return answerInOrderFast(resp, body, idSpans, from, to, errs) ?? answerInOrderByBytes(resp, body, idSpans, from, to, errs);
}

/** `"error"`: a member name the walk marks. */
function isErrorKey(buf: Uint8Array, i: number, e: number): boolean {
  return e - i === 7 && buf[i + 1] === 0x65 && buf[i + 2] === 0x72 && buf[i + 3] === 0x72 && buf[i + 4] === 0x6f && buf[i + 5] === 0x72;
}

/** answerInOrder, one byte at a time: for answers the 16-byte walk leaves (and to test it against). */
export function answerInOrderByBytes(
  resp: Uint8Array,
  body: Uint8Array,
  idSpans: Int32Array,
  from: number,
  to: number,
  errs: Uint8Array | null = null,
): boolean {
  let i = skipWs(resp, 0, resp.length);
  const end = trimEnd(resp, i, resp.length);
  if (resp[i] !== Byte.LBRACKET || from >= to) return false;
  i++;
  for (let k = from; k < to; k++) {
    i = skipWs(resp, i, end);
    if (resp[i] !== Byte.LBRACE) return false;
    i = skipWs(resp, i + 1, end);
    let found = false;
    for (;;) {
      if (resp[i] !== Byte.QUOTE) return false;
      if (resp[i + 1] === 0x69 && resp[i + 2] === 0x64 && resp[i + 3] === Byte.QUOTE) {
        // "id": its value must be the request's id, byte for byte, and come once.
        i = skipWs(resp, i + 4, end);
        if (resp[i] !== Byte.COLON || found) return false;
        i = skipWs(resp, i + 1, end);
        const s = idSpans[2 * k]!;
        const n = idSpans[2 * k + 1]! - s;
        if (i + n > end) return false;
        for (let j = 0; j < n; j++) if (resp[i + j] !== body[s + j]) return false;
        i += n;
        found = true;
      } else {
        const keyAt = i;
        i = skipString(resp, i, end);
        if (i < 0) return false;
        if (errs !== null && isErrorKey(resp, keyAt, i)) errs[k] = 1;
        i = skipWs(resp, i, end);
        if (resp[i] !== Byte.COLON) return false;
        i = skipValue(resp, skipWs(resp, i + 1, end), end);
        if (i < 0) return false;
      }
      // After a value: the next member, or the object's end (an id like 12 read as 1 fails here).
      i = skipWs(resp, i, end);
      const c = resp[i];
      if (c === Byte.COMMA) {
        i = skipWs(resp, i + 1, end);
        continue;
      }
      if (c !== Byte.RBRACE) return false;
      i++;
      break;
    }
    if (!found) return false;
    i = skipWs(resp, i, end);
    if (resp[i] !== (k === to - 1 ? Byte.RBRACKET : Byte.COMMA)) return false;
    i++;
  }
  return i === end;
}
