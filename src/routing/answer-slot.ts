// The slot a node's answer carries (docs/routing.md "Monotonic reads"), read from the raw bytes without
// parsing the answer: getSlot's numeric `result`, or the `"context":{…"slot":N` an RpcResponse
// result opens with. A few bytes are looked at after `"result":`, so a multi-megabyte
// getProgramAccounts answer costs what a getBalance one does.

import { bytesAt, digitsEnd, skipWs, uintOf } from '../rpc/json-bytes.js';

const RESULT = Buffer.from('"result":');
const CONTEXT = Buffer.from('"context"');
const SLOT = Buffer.from('"slot"');
/** How far into a context object `"slot"` is looked for (Solana puts apiVersion first). */
const CONTEXT_WINDOW = 96;

/** How far a JS loop looks for `"result":` before asking Buffer.indexOf (a native call costs ~100 ns). */
const NEAR = 128;

/** Where `"result":` starts at or after `from`; -1 when nowhere. */
function findResult(buf: Buffer, from: number): number {
  const near = Math.min(buf.length - RESULT.length, from + NEAR);
  for (let i = from; i <= near; i++) if (buf[i] === 0x22 && buf[i + 1] === 0x72 && bytesAt(buf, i, buf.length, RESULT)) return i;
  return near >= buf.length - RESULT.length ? -1 : buf.indexOf(RESULT, near + 1);
}

/** The unsigned integer at `at`; -1 when there is none (or it is not a safe integer). */
function uintAt(buf: Buffer, at: number): number {
  return uintOf(buf, at, digitsEnd(buf, at, buf.length));
}

/** The slot of the result whose value starts at `at`; -1 when it carries none. */
function resultSlot(buf: Buffer, at: number, numeric: boolean): number {
  at = skipWs(buf, at, buf.length);
  const c = buf[at];
  if (numeric && c !== undefined && c >= 0x30 && c <= 0x39) return uintAt(buf, at);
  if (c !== 0x7b) return -1;
  at = skipWs(buf, at + 1, buf.length);
  if (!bytesAt(buf, at, buf.length, CONTEXT)) return -1;
  at = skipWs(buf, at + CONTEXT.length, buf.length);
  if (buf[at] !== 0x3a) return -1;
  at = skipWs(buf, at + 1, buf.length);
  if (buf[at] !== 0x7b) return -1;
  const end = Math.min(buf.length, at + CONTEXT_WINDOW);
  for (let i = at + 1; i < end; i++) {
    const b = buf[i];
    if (b === 0x7d) return -1;
    if (b === 0x22 && bytesAt(buf, i, buf.length, SLOT)) {
      let j = skipWs(buf, i + SLOT.length, buf.length);
      if (buf[j] !== 0x3a) return -1;
      j = skipWs(buf, j + 1, buf.length);
      return uintAt(buf, j);
    }
  }
  return -1;
}

/**
 * Highest slot in a node's answer (a single answer or a batch's); -1 when none. `numeric`:
 * a bare number result is a slot (the call is getSlot).
 */
export function answerSlot(buf: Buffer, numeric: boolean): number {
  let best = -1;
  let from = 0;
  const batch = buf[skipWs(buf, 0, buf.length)] === 0x5b;
  // A single answer has one top-level "result"; a batch one per element. A string value
  // cannot hold the pattern (its quotes would be escaped).
  for (;;) {
    const at = findResult(buf, from);
    if (at < 0) return best;
    const s = resultSlot(buf, at + RESULT.length, numeric);
    if (s > best) best = s;
    if (!batch) return best;
    from = at + RESULT.length;
  }
}
