// The answer check's fast path (answer.ts): the node's answer to a batch is read by a
// WebAssembly walk (answer-scan.wat) that looks at 16 bytes at a time and stops only at
// brackets and commas outside strings, about a tenth of the bytes of a 100-call answer; the
// byte-by-byte JavaScript walk costs ~1.1 ns per byte, this one ~0.5 with the copy into its
// memory (bench/README.md, "Batches"). Answers with a backslash in them (an escaped quote
// would end a string early in the block walk) and answers above 4 MB are left to the
// JavaScript walk.

import { WASM_BASE64 } from './answer-scan-wasm.js';
import { WasmModule } from './wasm-module.js';

/** Answers above ~4 MB are not copied into the walk's memory. */
const mod = new WasmModule(WASM_BASE64, 4 << 20);
const ids = mod.exports.ids as (p: number, end: number, out: number, max: number) => number;

/**
 * True or false as answer.ts's answerInOrder, or null when this walk cannot read `resp`
 * (a backslash in it, or too large) and the byte walk must. On true, `errs[k]` is set to 1
 * for each element k in [from, to) that has a top-level `error` member (when `errs` is given).
 */
export function answerInOrderFast(
  resp: Uint8Array,
  body: Uint8Array,
  idSpans: Int32Array,
  from: number,
  to: number,
  errs: Uint8Array | null = null,
): boolean | null {
  const count = to - from;
  if (count <= 0) return false;
  const out = mod.load(resp, 12 * count);
  if (out < 0) return null;
  const words = mod.words;
  const found = ids(0, resp.length, out, count);
  if (found === -2) return null;
  if (found !== count) return false;
  for (let k = from, w = out >> 2; k < to; k++, w += 3) {
    const s = words[w]!;
    const len = words[w + 1]! - s;
    const bs = idSpans[2 * k]!;
    if (idSpans[2 * k + 1]! - bs !== len) return false;
    for (let j = 0; j < len; j++) if (resp[s + j] !== body[bs + j]) return false;
  }
  if (errs !== null) for (let k = from, w = out >> 2; k < to; k++, w += 3) if (words[w + 2] === 1) errs[k] = 1;
  return true;
}
