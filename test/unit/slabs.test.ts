// The slab pool (src/slabs.ts): which sizes it serves, that a given-back slab is served
// again, and that buffers it did not cut (Node's pool, larger ones, views) are never taken in.

import t from 'tap';
import { giveBack, LARGE_SLAB, SLAB, SLAB_FROM, slabSized, spareSlabs, takeSlab } from '../../src/slabs.js';

t.test('sizes: above half of Buffer.poolSize, up to a large slab', async (t) => {
  t.notOk(slabSized(SLAB_FROM), "Node's own pool serves these");
  t.ok(slabSized(SLAB_FROM + 1));
  // Node 26's pool is 64 KB (8 KB before): there bodies up to 32 KB come from it, not slabs.
  t.equal(slabSized(SLAB), SLAB > SLAB_FROM, `16 KB: ${SLAB > SLAB_FROM ? 'a slab' : "Node's pool"}`);
  t.equal(slabSized(SLAB + 1), SLAB + 1 > SLAB_FROM);
  t.equal(takeSlab(SLAB).buffer.byteLength, SLAB, 'up to 16 KB: a slab');
  t.equal(takeSlab(SLAB + 1).buffer.byteLength, LARGE_SLAB, 'above: a large slab');
  t.ok(slabSized(LARGE_SLAB));
  t.notOk(slabSized(LARGE_SLAB + 1), 'larger bodies get memory of their own');
});

t.test('a large slab given back is served again, to large bodies only', async (t) => {
  const a = takeSlab(100_000);
  const before = spareSlabs();
  giveBack(a);
  t.equal(spareSlabs(), before + 1);
  t.not(takeSlab(5000).buffer, a.buffer, 'a small body does not take it');
  const b = takeSlab(LARGE_SLAB);
  t.equal(b.buffer, a.buffer, 'the same memory, reused');
  giveBack(Buffer.allocUnsafe(LARGE_SLAB * 2));
  t.equal(spareSlabs(), before, 'a buffer of another size is not taken in');
});

t.test('a slab given back is served again; other buffers are left to the GC', async (t) => {
  const a = takeSlab(5000);
  t.equal(a.length, 5000);
  t.equal(a.buffer.byteLength, SLAB);
  const before = spareSlabs();
  giveBack(a);
  t.equal(spareSlabs(), before + 1);
  const b = takeSlab(9000);
  t.equal(b.buffer, a.buffer, 'the same memory, reused');
  t.equal(b.length, 9000);
  const n = spareSlabs();
  giveBack(Buffer.allocUnsafe(100)); // a slice of Node's shared pool
  giveBack(Buffer.allocUnsafe(SLAB * 2));
  giveBack(b.subarray(1)); // a view that does not start the slab
  t.equal(spareSlabs(), n, 'none of them taken in');
});
