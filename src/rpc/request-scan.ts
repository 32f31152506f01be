// The request validator's fast path (validate.ts): the body is copied into a WebAssembly
// module's memory and validated and laid out there (request-scan.wat, the same grammar and
// layout as the JavaScript scanner, strings read 16 bytes at a time), then the layout is
// copied back. One call per request; the JavaScript scanner stays for what the module
// leaves to it (member names written with escapes, nesting deeper than STACK) and for bodies
// below MIN_BYTES or above 4 MB.

import { WASM_BASE64 } from './request-scan-wasm.js';
import type { RequestLayout } from './validate.js';
import { WasmModule } from './wasm-module.js';

/**
 * Bodies below this are read by the JavaScript scanner: the call and the copies cost more
 * than they save (a 44-byte getSlot: 110 against 90 ns; a 104-byte getBalance: 114 against
 * 151; 100 of them: 6.9 against 15.5 µs).
 */
const MIN_BYTES = 80;
/** Open containers the module keeps; deeper goes to the JavaScript scanner. */
const STACK = 1024;

/** Bodies above ~4 MB are not copied into the module's memory. */
const mod = new WasmModule(WASM_BASE64, 4 << 20);
const request = mod.exports.request as (n: number, limit: number, sb: number, scap: number, rs: number, rm: number, rf: number, hd: number) => number;

/** scanRequest's verdict with `out` filled as it fills it, or null when the JavaScript scanner must read `buf`. */
export function scanRequestFast(buf: Uint8Array, limit: number, out: RequestLayout): boolean | null {
  const n = buf.length;
  if (n < MIN_BYTES) return null;
  const cap = Math.min(limit, (n >> 1) + 1);
  // After the body: the header (3 i32), the container stack, spans, members, flags.
  const hd = mod.load(buf, 16 + STACK + 41 * cap);
  if (hd < 0) return null;
  const sb = hd + 16;
  const rs = sb + STACK;
  const rm = rs + 8 * cap;
  const rf = rm + 32 * cap;
  const bytes = mod.bytes;
  const words = mod.words;
  const r = request(n, cap, sb, STACK, rs, rm, rf, hd);
  if (r === 2) return null;
  const h = hd >> 2;
  out.count = words[h]!;
  const rec = words[h + 1]!;
  out.recorded = rec;
  out.batch = words[h + 2] === 1;
  if (r === 0) return false;
  out.reserve(rec);
  if (rec > 8) {
    out.spans.set(words.subarray(rs >> 2, (rs >> 2) + 2 * rec));
    out.members.set(words.subarray(rm >> 2, (rm >> 2) + 8 * rec));
    out.flags.set(bytes.subarray(rf, rf + rec));
  } else {
    // A few calls: element by element costs less than three views and copies.
    const spans = out.spans;
    const members = out.members;
    const flags = out.flags;
    for (let k = 0, w = rs >> 2; k < 2 * rec; k++) spans[k] = words[w + k]!;
    for (let k = 0, w = rm >> 2; k < 8 * rec; k++) members[k] = words[w + k]!;
    for (let k = 0; k < rec; k++) flags[k] = bytes[rf + k]!;
  }
  return true;
}
