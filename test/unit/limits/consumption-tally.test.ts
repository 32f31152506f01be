// ConsumptionTally (src/limits/consumption-tally.ts) and the limiter's side of shared limits
// (src/limits/limiter.ts): passing takes are tallied per bucket, refused ones are not; the
// tally is bounded; debits take even below zero, in BucketTable, SharedBucketTable and through
// RateLimiter in both modes, and the debt refills at the rate.

import t from 'tap';
import { PASS, refusalWaitMs } from '../../../src/limits/verdict.js';

let last = PASS;
import { resolveConfig } from '../../../src/config/load.js';
import type { Config } from '../../../src/config/schema.js';
import { createLimitBuffers, RateLimiter } from '../../../src/limits/limiter.js';
import { BucketTable } from '../../../src/limits/bucket-table.js';
import { SharedBucketTable } from '../../../src/limits/shared-bucket-table.js';
import { ConsumptionTally, type Consumed } from '../../../src/limits/consumption-tally.js';

function config(): Config {
  return resolveConfig({
    nodes: [{ id: 'n0', url: 'http://127.0.0.1:1' }],
    affinity: { keyRate: 10, keyBurst: 20 },
    rateLimits: { token: { rate: 10, burst: 20 }, methods: { getSlot: { rate: 10, burst: 20 } } },
  });
}

const sorted = (c: Consumed): Consumed => [...c].sort((a, b) => (a[0] + a[1] < b[0] + b[1] ? -1 : 1));

t.test('a tally counts per table and key, drains to zero, and merges', async (t) => {
  const tally = new ConsumptionTally(100);
  tally.key(false, 'alpha', 2);
  tally.key(false, 'alpha', 3);
  tally.key(true, 'alpha', 1);
  tally.token('tok', 4);
  tally.method('getSlot', 'tok', 1);
  tally.method('getSlot', 'tok', 1);
  t.equal(tally.entries, 4);
  const out = tally.drain();
  t.same(sorted(out), [
    ['i', 'alpha', 1],
    ['k', 'alpha', 5],
    ['m:getSlot', 'tok', 2],
    ['t', 'tok', 4],
  ]);
  t.equal(tally.entries, 0);
  t.same(tally.drain(), []);
  const other = new ConsumptionTally(100);
  other.merge(out);
  other.merge(out);
  t.same(sorted(other.drain()), [
    ['i', 'alpha', 2],
    ['k', 'alpha', 10],
    ['m:getSlot', 'tok', 4],
    ['t', 'tok', 8],
  ]);
});

t.test('a full tally counts further keys as dropped, and known keys still add up', async (t) => {
  const tally = new ConsumptionTally(3);
  for (let i = 0; i < 10; i++) tally.key(false, `k${i}`, 1);
  tally.key(false, 'k0', 5);
  t.equal(tally.entries, 3);
  t.equal(tally.dropped, 7);
  t.same(sorted(tally.drain()), [
    ['k', 'k0', 6],
    ['k', 'k1', 1],
    ['k', 'k2', 1],
  ]);
  tally.key(false, 'k9', 1);
  t.equal(tally.entries, 1, 'room again after a drain');
});

t.test('BucketTable and SharedBucketTable debits go below zero and refill at the rate', async (t) => {
  for (const b of [new BucketTable(100, 10, 20), SharedBucketTable.create(100, 10, 20)]) {
    const name = b.constructor.name;
    b.debit('k', 30, 1000);
    t.equal(b.take('k', 1, 1000), 1100, `${name}: 10 tokens of debt and one to take: 1.1 s at 10/s`);
    t.equal(b.take('k', 1, 2000), 100, `${name}: still 0 tokens after 1 s`);
    t.equal(b.take('k', 1, 2100), 0, `${name}: one after 1.1 s`);
    b.debit('fresh', 5, 1000);
    let n = 0;
    while (b.take('fresh', 1, 1000) === 0) n++;
    t.equal(n, 15, `${name}: an untracked key starts from a full bucket minus the debit`);
  }
});

t.test('RateLimiter tallies passing takes only, and debits every table, inline and shared', async (t) => {
  const c = config();
  for (const limiter of [new RateLimiter(c), RateLimiter.shared(c, createLimitBuffers(c))]) {
    const mode = limiter.keys instanceof SharedBucketTable ? 'shared' : 'inline';
    const tally = new ConsumptionTally(100);
    limiter.tally = tally;
    const now = 5000;
    t.equal(limiter.takeKey('key1', false, 15, now), PASS);
    t.not((last = limiter.takeKey('key1', false, 10, now)), PASS, `${mode}: over the burst`);
    t.equal(limiter.takeKey('1.2.3.4', true, 2, now), PASS);
    t.equal(limiter.takeToken('tok', 3, now), PASS);
    t.equal(limiter.takeMethods('tok', ['getSlot', 'getSlot', 'getBalance'], now), PASS);
    t.same(
      sorted(tally.drain()),
      [
        ['i', '1.2.3.4', 2],
        ['k', 'key1', 15],
        ['m:getSlot', 'tok', 2],
        ['t', 'tok', 3],
      ],
      `${mode}: what passed, per bucket`,
    );

    limiter.debit('k', 'key1', 10, now);
    t.not((last = limiter.takeKey('key1', false, 1, now)), PASS, `${mode}: key debited below zero`);
    t.equal(refusalWaitMs(last), 600, `${mode}: 5 tokens of debt + 1 at 10/s`);
    limiter.debit('i', '1.2.3.4', 18, now);
    t.not((last = limiter.takeKey('1.2.3.4', true, 1, now)), PASS, `${mode}: IP debited`);
    t.equal(limiter.takeKey('1.2.3.4', false, 20, now), PASS, `${mode}: the same string as an explicit key is another bucket`);
    limiter.debit('t', 'tok', 17, now);
    t.not((last = limiter.takeToken('tok', 1, now)), PASS, `${mode}: token debited`);
    limiter.debit('m:getSlot', 'tok', 18, now);
    t.not((last = limiter.takeMethods('tok', 'getSlot', now)), PASS, `${mode}: method debited`);
    limiter.debit('m:getBalance', 'tok', 100, now);
    limiter.debit('?', 'tok', 100, now);
    t.equal(limiter.takeMethods('tok', 'getBalance', now), PASS, `${mode}: a table the config lacks is skipped`);
    const shape = limiter.shapeOf('m:getSlot');
    t.same([shape?.rate, shape?.burst], [10, 20], `${mode}: a table's rate and burst`);
    t.equal(limiter.shapeOf('m:getBalance'), null);
  }
});
