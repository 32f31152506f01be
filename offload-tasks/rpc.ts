// piscina tasks: the same pure functions the main thread runs inline, for large bodies.
// Buffers arrive as plain Uint8Array views (SharedArrayBuffer-backed bodies are not copied).

import { Piscina } from 'piscina';
import { analyze, type Analysis, type BatchPlan } from '../src/rpc/analyze.js';
import { assembleBatch, type SubOutcome } from '../src/rpc/batch.js';

function asBuffer(u: Uint8Array): Buffer {
  return Buffer.from(u.buffer, u.byteOffset, u.byteLength);
}

export function analyzeTask(task: { body: Uint8Array; maxBatch: number }): Analysis {
  return analyze(asBuffer(task.body), task.maxBatch);
}

export function assembleTask(task: { body: Uint8Array; plan: BatchPlan; order: Int32Array | null; outcomes: SubOutcome[] }): unknown {
  const outcomes = task.outcomes.map((o) => ({ ...o, response: o.response === null ? null : asBuffer(o.response) }));
  const r = assembleBatch(asBuffer(task.body), task.plan, task.order, outcomes);
  if (r.merged === null || !r.answered) return r;
  // A node's answer used as it came (ids kept, in order): the main thread has those bytes.
  const own = outcomes.findIndex((o) => o.response === r.merged);
  if (own >= 0) return { asAnswered: own, errors: r.errors };
  // Answers with errors in them are rare: their bytes are copied back with the marks.
  if (r.errors !== null) return r;
  // The common case returns the bytes alone, moved (not copied) back to the main thread.
  const out = new Uint8Array(r.merged.length);
  out.set(r.merged);
  return Piscina.move(out);
}
