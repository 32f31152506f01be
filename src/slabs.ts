// Reused buffers for the bodies a request carries in and out: client request bodies
// (gateway/http-responder.ts, 4-16 KB) and node answers (upstream/http1/parser.ts, 4 KB to
// 128 KB). Below 4 KB Buffer.allocUnsafe cuts them from Node's shared pool; above, every
// body was an ArrayBuffer of its own, memory outside the V8 heap that only a collection
// frees. At batch rates (a 100-call batch is ~11 KB each way) that churn kept V8 in
// back-to-back full collections started by "external memory pressure"; at 100 KB answers
// the allocator also handed the pages back on each free and faulted them in again on the
// next answer (bench/README.md, "Batches" and "Large answers").
//
// Two sizes: 16 KB slabs and 128 KB ones. A slab goes back only where nothing else can
// still read it (the caller's promise); one that is never given back is simply collected.

/** Bytes of a slab; also what the pipelined client copies when it writes (upstream/http1/connection.ts COPY_LIMIT), so a request body's slab is free once written. */
export const SLAB = 16 * 1024;
/** Bytes of a large slab, for node answers above SLAB. */
export const LARGE_SLAB = 128 * 1024;
/** Bodies above this and up to LARGE_SLAB are cut from slabs. */
export const SLAB_FROM = Buffer.poolSize >>> 1;
/** Spare slabs kept, at most (8 MB of each size). */
const SPARE_MAX = 512;
const LARGE_SPARE_MAX = 64;
const spare: ArrayBuffer[] = [];
const spareLarge: ArrayBuffer[] = [];

/** Whether a body of `n` bytes is cut from a slab. */
export function slabSized(n: number): boolean {
  return n > SLAB_FROM && n <= LARGE_SLAB;
}

/** `n` bytes (slabSized) of a spare slab of the right size or a new one. */
export function takeSlab(n: number): Buffer {
  if (n <= SLAB) return Buffer.from(spare.pop() ?? Buffer.allocUnsafeSlow(SLAB).buffer, 0, n);
  return Buffer.from(spareLarge.pop() ?? Buffer.allocUnsafeSlow(LARGE_SLAB).buffer, 0, n);
}

/** Gives back the slab `b` was cut from (a buffer that is not a slab is left to the GC). Once per slab. */
export function giveBack(b: Buffer): void {
  if (b.byteOffset !== 0) return;
  const size = b.buffer.byteLength;
  if (size === SLAB) {
    if (spare.length < SPARE_MAX) spare.push(b.buffer as ArrayBuffer);
  } else if (size === LARGE_SLAB && spareLarge.length < LARGE_SPARE_MAX) spareLarge.push(b.buffer as ArrayBuffer);
}

/** Spare slabs now, of either size (tests). */
export function spareSlabs(): number {
  return spare.length + spareLarge.length;
}
