// Where a client request body lives, decided in one place: a reused slab (../slabs.ts) for
// bodies from 4 KB up to SLAB, SharedArrayBuffer memory for bodies the offload workers will
// parse (they read it without a copy), plain memory otherwise. A slab goes back once the
// request is answered, when the upstream client that carried the body says it keeps no
// reference to it (upstream/transport.ts keepsBody).

import { giveBack, SLAB, SLAB_FROM, takeSlab } from '../slabs.js';

export const MEM_PLAIN = 0;
export const MEM_SLAB = 1;
export const MEM_SHARED = 2;

function sharedBuffer(n: number): Buffer {
  return Buffer.from(new SharedArrayBuffer(n), 0, n);
}

export class BodyMemory {
  /** Bodies of at least this many bytes are parsed by the offload workers: Infinity without them. */
  readonly sharedFrom: number;

  constructor(offloadParseFrom: number) {
    this.sharedFrom = offloadParseFrom;
  }

  /** MEM_SLAB, MEM_SHARED or MEM_PLAIN for a body of `n` bytes (its Content-Length). */
  kindFor(n: number): number {
    if (n > SLAB_FROM && n <= SLAB && n < this.sharedFrom) return MEM_SLAB;
    return n >= this.sharedFrom ? MEM_SHARED : MEM_PLAIN;
  }

  alloc(kind: number, n: number): Buffer {
    if (kind === MEM_SLAB) return takeSlab(n);
    return kind === MEM_SHARED ? sharedBuffer(n) : Buffer.allocUnsafe(n);
  }

  /** A chunked body's parts as one buffer, in shared memory when the workers will parse it. */
  join(parts: Buffer[], total: number): Buffer {
    if (total < this.sharedFrom) return Buffer.concat(parts, total);
    const out = sharedBuffer(total);
    let o = 0;
    for (const p of parts) {
      out.set(p, o);
      o += p.length;
    }
    return out;
  }

  /** The request that owned `slab` was answered: it goes back unless an upstream client may still read it. */
  release(slab: Buffer, reusable: boolean): void {
    if (reusable) giveBack(slab);
  }
}
