// The slot a node's answer carries (docs/routing.md "Monotonic reads"), read from the raw bytes without
// parsing the answer: getSlot's numeric `result`, or the `"context":{…"slot":N` an RpcResponse
// result opens with. A few bytes are looked at after `"result":`, so a multi-megabyte
// getProgramAccounts answer costs what a getBalance one does.

import { isWs } from '../rpc/scan.js';

const RESULT = Buffer.from('"result":');
const CONTEXT = Buffer.from('"context"');
const SLOT = Buffer.from('"slot"');
/** How far into a context object `"slot"` is looked for (Solana puts apiVersion first). */
const CONTEXT_WINDOW = 96;

function skipWs(buf: Buffer, at: number): number {
  while (at < buf.length && isWs(buf[at]!)) at++;
  return at;
}

function startsWith(buf: Buffer, at: number, what: Buffer): boolean {
  if (at + what.length > buf.length) return false;
  for (let i = 0; i < what.length; i++) if (buf[at + i] !== what[i]) return false;
  return true;
}

/** How far a JS loop looks for `"result":` before asking Buffer.indexOf (a native call costs ~100 ns). */
const NEAR = 128;

/** Where `"result":` starts at or after `from`; -1 when nowhere. */
function findResult(buf: Buffer, from: number): number {
  const near = Math.min(buf.length - RESULT.length, from + NEAR);
  for (let i = from; i <= near; i++) if (buf[i] === 0x22 && buf[i + 1] === 0x72 && startsWith(buf, i, RESULT)) return i;
  return near >= buf.length - RESULT.length ? -1 : buf.indexOf(RESULT, near + 1);
}

/** The unsigned integer at `at`; -1 when there is none (or it is not a safe integer). */
function uintAt(buf: Buffer, at: number): number {
  let v = 0;
  let digits = 0;
  for (; at < buf.length; at++) {
    const c = buf[at]! - 0x30;
    if (c < 0 || c > 9) break;
    v = v * 10 + c;
    digits++;
  }
  return digits === 0 || digits > 15 ? -1 : v;
}

/** The slot of the result whose value starts at `at`; -1 when it carries none. */
function resultSlot(buf: Buffer, at: number, numeric: boolean): number {
  at = skipWs(buf, at);
  const c = buf[at];
  if (numeric && c !== undefined && c >= 0x30 && c <= 0x39) return uintAt(buf, at);
  if (c !== 0x7b) return -1;
  at = skipWs(buf, at + 1);
  if (!startsWith(buf, at, CONTEXT)) return -1;
  at = skipWs(buf, at + CONTEXT.length);
  if (buf[at] !== 0x3a) return -1;
  at = skipWs(buf, at + 1);
  if (buf[at] !== 0x7b) return -1;
  const end = Math.min(buf.length, at + CONTEXT_WINDOW);
  for (let i = at + 1; i < end; i++) {
    const b = buf[i];
    if (b === 0x7d) return -1;
    if (b === 0x22 && startsWith(buf, i, SLOT)) {
      let j = skipWs(buf, i + SLOT.length);
      if (buf[j] !== 0x3a) return -1;
      j = skipWs(buf, j + 1);
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
  const batch = buf[skipWs(buf, 0)] === 0x5b;
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
