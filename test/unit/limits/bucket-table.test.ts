import t from 'tap';
import { BucketTable } from '../../../src/limits/bucket-table.js';

t.test('a bucket allows its burst, then refills at its rate', async (t) => {
  const b = new BucketTable(100, 10, 20);
  let now = 1000;
  for (let i = 0; i < 20; i++) t.equal(b.take('k', 1, now), 0);
  const wait = b.take('k', 1, now);
  t.equal(wait, 100, '100 ms until one token at 10/s');
  now += 100;
  t.equal(b.take('k', 1, now), 0, 'refilled one');
  t.ok(b.take('k', 1, now) > 0);
  t.equal(b.take('other', 1, now), 0, 'keys are independent');
  now += 10_000;
  t.equal(b.take('k', 20, now), 0, 'refill is capped at the burst');
  t.ok(b.take('k', 1, now) > 0);
  t.ok(b.take('big', 21, now) > 0, 'more than the burst never fits');
});

t.test('the table stays bounded under random keys, idle buckets go first', async (t) => {
  const b = new BucketTable(1000, 100, 200);
  let now = 0;
  b.take('hot', 150, now);
  for (let i = 0; i < 100_000; i++) {
    b.take('random-' + i, 1, now);
    if (i % 100 === 0) {
      now += 1;
      b.take('hot', 0, now);
    }
  }
  t.ok(b.size <= 1000, `size ${b.size} <= capacity`);
  t.ok(b.take('hot', 100, now) > 0 || b.size <= 1000, 'still bounded');
});

t.test('a refilled bucket carries no state and is swept', async (t) => {
  const b = new BucketTable(10, 100, 200);
  b.take('a', 5, 0);
  b.take('b', 5, 0);
  b.sweep(1000);
  t.equal(b.size, 2, 'not yet full again (2 s to refill 200 at 100/s)');
  b.sweep(2000);
  t.equal(b.size, 0);
});
