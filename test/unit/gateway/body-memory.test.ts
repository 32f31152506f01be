// Where a request body lives (src/gateway/body-memory.ts): slabs from 4 KB up to 16 KB, shared
// memory for bodies the offload workers parse, plain memory otherwise; and whether a body may
// be reused once its call ended (the upstream client says if it keeps one).

import t from 'tap';
import { BodyMemory, MEM_PLAIN, MEM_SHARED, MEM_SLAB } from '../../../src/gateway/body-memory.js';
import { Http1Pool } from '../../../src/upstream/http1/pool.js';
import { SLAB, SLAB_FROM } from '../../../src/slabs.js';

t.test('without offload workers: slabs for 4-16 KB, plain memory for the rest', async (t) => {
  const m = new BodyMemory(Infinity);
  t.equal(m.kindFor(100), MEM_PLAIN);
  t.equal(m.kindFor(SLAB_FROM), MEM_PLAIN, 'the pool’s half: Node cuts it from its own pool');
  // Node 26's pool is 64 KB (8 KB before): bodies up to 32 KB come from it, none from slabs.
  t.equal(m.kindFor(SLAB_FROM + 1), SLAB_FROM < SLAB ? MEM_SLAB : MEM_PLAIN);
  t.equal(m.kindFor(SLAB), SLAB_FROM < SLAB ? MEM_SLAB : MEM_PLAIN);
  t.equal(m.kindFor(SLAB + 1), MEM_PLAIN);
  t.equal(m.kindFor(10 << 20), MEM_PLAIN);
  t.notOk(m.alloc(MEM_PLAIN, 10).buffer instanceof SharedArrayBuffer);
  t.equal(m.join([Buffer.from('ab'), Buffer.from('c')], 3).toString(), 'abc');
});

t.test('with offload workers: bodies they will parse go to shared memory, slabs stay below the threshold', async (t) => {
  const m = new BodyMemory(8192);
  const below = SLAB_FROM < 6000 ? MEM_SLAB : MEM_PLAIN;
  t.equal(m.kindFor(6000), below);
  t.equal(m.kindFor(8192), MEM_SHARED, 'at the threshold: the workers parse it (Offload.offloadParse), so shared memory');
  t.equal(m.kindFor(8191), below);
  t.equal(m.kindFor(9000), MEM_SHARED);
  const shared = m.alloc(MEM_SHARED, 9000);
  t.ok(shared.buffer instanceof SharedArrayBuffer);
  t.equal(shared.length, 9000);
  const joined = m.join([Buffer.alloc(5000, 1), Buffer.alloc(5000, 2)], 10_000);
  t.ok(joined.buffer instanceof SharedArrayBuffer, 'a chunked body the workers will parse is joined into shared memory');
  t.equal(joined[4999], 1);
  t.equal(joined[5000], 2);
});

t.test('the pipelined client keeps no body it copied into its write; larger ones it may', async (t) => {
  const pool = new Http1Pool('http://127.0.0.1:1', { connections: 1, pipelining: 1, stallMs: 1000, connectTimeoutMs: 1000, idleMs: 1000 }, { ewmaMs: 0 });
  t.teardown(() => pool.destroy());
  t.notOk(pool.keepsBody(SLAB), 'up to a slab: copied');
  t.ok(pool.keepsBody(SLAB + 1), 'larger: written by reference');
});
