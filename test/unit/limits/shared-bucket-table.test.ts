// SharedBucketTable (src/limits/shared-bucket-table.ts): in one thread it answers as
// BucketTable does; memory is fixed at creation; idle buckets are replaced first, then the
// oldest. The multi-thread behaviour is in shared-bucket-table-threads.test.ts.

import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import t from 'tap';
import { BucketTable } from '../../../src/limits/bucket-table.js';
import { SharedBucketTable } from '../../../src/limits/shared-bucket-table.js';

t.test('a bucket allows its burst, then refills at its rate', async (t) => {
  const b = SharedBucketTable.create(100, 10, 20);
  let now = 1000;
  for (let i = 0; i < 20; i++) t.equal(b.take('k', 1, now), 0);
  t.equal(b.take('k', 1, now), 100, '100 ms until one token at 10/s');
  now += 50;
  t.equal(b.take('k', 1, now), 50, 'half a token is not enough');
  now += 50;
  t.equal(b.take('k', 1, now), 0, 'refilled one');
  t.ok(b.take('k', 1, now) > 0);
  t.equal(b.take('other', 1, now), 0, 'keys are independent');
  now += 10_000;
  t.equal(b.take('k', 20, now), 0, 'refill is capped at the burst');
  t.ok(b.take('k', 1, now) > 0);
  t.equal(b.take('big', 21, now), 100, 'more than the burst never fits');
  t.equal(b.take('', 20, now), 0, 'the empty key is a key');
  t.ok(b.take('', 1, now) > 0);
});

t.test('the same answers as BucketTable for a random sequence of takes', async (t) => {
  const rate = 37;
  const burst = 11;
  const one = new BucketTable(10_000, rate, burst);
  const shared = SharedBucketTable.create(10_000, rate, burst);
  let seed = 12345;
  const random = (): number => {
    seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
    return seed / 2 ** 32;
  };
  let now = 0;
  let differ = 0;
  let refused = 0;
  for (let i = 0; i < 50_000; i++) {
    if (random() < 0.3) now += random() * 2;
    const key = 'key-' + Math.floor(random() * 200);
    const n = 1 + Math.floor(random() * 4);
    const a = one.take(key, n, now);
    const b = shared.take(key, n, now);
    if (a !== 0) refused++;
    if (a !== b && differ++ < 5) t.fail(`take ${i} (${key}, ${n}, ${now}): BucketTable ${a}, shared ${b}`);
  }
  t.equal(differ, 0, 'every answer equal');
  t.ok(refused > 5000 && refused < 45_000, `the sequence exercised refusals and passes (${refused} refused)`);
});

t.test('takeTagged(tag, key) is take(tag unit + key) without building the string', async (t) => {
  const b = SharedBucketTable.create(100, 1, 3);
  t.equal(b.takeTagged(0x69, '10.0.0.1', 3, 0), 0);
  t.ok(b.take('i10.0.0.1', 1, 0) > 0, 'the same bucket');
  t.equal(b.take('10.0.0.1', 3, 0), 0, 'the untagged key is another bucket');
  t.equal(b.takeTagged(0x6b, '10.0.0.1', 3, 0), 0, 'and so is another tag');
  t.equal(b.level('i10.0.0.1', 0), 0);
});

t.test('rate and burst changed in place apply to the existing buckets', async (t) => {
  const b = SharedBucketTable.create(100, 1, 1);
  t.equal(b.take('k', 1, 0), 0);
  b.rate = 1000;
  t.equal(b.take('k', 1, 0), 1, 'still empty, refilling at the new rate');
  b.burst = 5;
  t.equal(b.take('k', 5, 5), 0, 'the new burst');
});

t.test('attach: a second table over the same buffer shares every bucket', async (t) => {
  const a = SharedBucketTable.create(100, 10, 2);
  const b = SharedBucketTable.attach(a.buffer, 10, 2);
  t.equal(a.take('k', 2, 0), 0);
  t.equal(b.take('k', 1, 0), 100, 'drained through the other table');
  t.equal(b.take('k', 1, 100), 0);
  t.equal(a.take('k', 1, 100), 100);
  t.throws(() => SharedBucketTable.attach(new SharedArrayBuffer(4096), 1, 1), /not made by SharedBucketTable/);
});

t.test('a million random keys: memory fixed, a busy key keeps its bucket, the oldest go', async (t) => {
  setFlagsFromString('--expose-gc');
  const gc = runInNewContext('gc') as () => void;
  // Nothing refills within the run, so every replacement takes the oldest slot of its window.
  const b = SharedBucketTable.create(1000, 0.001, 10);
  const bytes = b.buffer.byteLength;
  t.equal(b.take('hot', 10, 0), 0, 'hot drained');
  gc();
  const heap = process.memoryUsage().heapUsed;
  let now = 0;
  let hotLost = 0;
  for (let i = 0; i < 1_000_000; i++) {
    now += 0.001;
    b.take('random-' + i, 1, now);
    if (i % 10 === 0 && b.take('hot', 0, now) === 0 && b.level('hot', now) >= 1) hotLost++;
  }
  gc();
  const grown = (process.memoryUsage().heapUsed - heap) / 2 ** 20;
  t.equal(b.buffer.byteLength, bytes, 'the buffer is the size it was made');
  t.ok(grown < 8, `heap grew ${grown.toFixed(1)} MB (a Map of a million keys would be ~100 MB)`);
  t.ok(b.countKeys() <= b.slots, `${b.countKeys()} keys in ${b.slots} slots`);
  t.equal(hotLost, 0, 'the busy key was never replaced');
  t.ok(b.take('hot', 1, now) > 0, 'and is still drained');
  t.equal(b.take('random-0', 1, now), 0, 'an old key was replaced: it starts again full');
});

t.test('buckets that have refilled are replaced before older ones that have not', async (t) => {
  // 2048 slots; keys refill 1 token in 10 ms and arrive 10 per ms, so ~100 slots are busy
  // at any moment and every window has idle ones. 'hot' is the oldest key and would be the
  // first to go if idle slots were not preferred.
  const b = SharedBucketTable.create(1024, 100, 200);
  t.equal(b.take('hot', 200, 0), 0);
  let now = 0;
  for (let i = 0; i < 15_000; i++) {
    if (i % 10 === 0) now += 1;
    b.take('flood-' + i, 1, now);
  }
  t.ok(b.countKeys() === b.slots, 'the table is full');
  t.equal(b.level('hot', now), 150, 'hot is still tracked: half refilled after 1.5 s, not a fresh full bucket');
});

t.test('a slot left locked (its thread terminated mid-update) is taken over, not waited on forever', async (t) => {
  const b = SharedBucketTable.create(100, 10, 2);
  t.equal(b.take('k', 1, 0), 0);
  // The one slot in use, as a thread stopped between locking and unlocking it would leave it.
  const words = new Int32Array(b.buffer);
  const slot = words.findIndex((w, i) => i >= 8 && i % 8 === 0 && w === 2);
  t.ok(slot > 0, 'found the slot');
  Atomics.store(words, slot, 1);
  const started = performance.now();
  t.equal(b.take('k', 1, 0), 0, 'the bucket as it was: one token left');
  t.ok(performance.now() - started >= 1000, 'after waiting out the holder (1 s)');
  t.equal(Atomics.load(words, slot), 2, 'and released');
  t.equal(b.take('k', 1, 0), 100, 'then as usual');
});
