// Fee estimates' pieces (docs/priority-fees.md): the nearest-rank percentile, request parsing
// with its -32602 messages, a transaction's write-locked keys and price, and the data plane's
// book: levels per lookback and per account (highest over accounts), and the answer's shape.

import t from 'tap';
import { createHash } from 'node:crypto';
import { FeeBook, percentileOfRuns } from '../../../src/fees/fee-book.js';
import { rng } from '../../../src/tools/rng.js';
import { levelsOf, percentile } from '../../../src/fees/levels.js';
import { readFeeQuery } from '../../../src/fees/request.js';
import { readTxFees } from '../../../src/fees/tx-fees.js';
import { decodeBase58, encodeBase58 } from '../../../src/solana/base58.js';

const key = (s: string): string => encodeBase58(createHash('sha256').update(s).digest());
const A = key('a');
const B = key('b');

t.test('nearest-rank percentile', async (t) => {
  const s = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10];
  t.equal(percentile(s, 0), 1);
  t.equal(percentile(s, 25), 3, 'ceil(2.5) - 1 = index 2');
  t.equal(percentile(s, 50), 5);
  t.equal(percentile(s, 95), 10);
  t.equal(percentile(s, 100), 10);
  t.equal(percentile([], 50), 0, 'no samples: 0');
  t.same(levelsOf([7]), [7, 7, 7, 7, 7, 7]);
});

t.test('the percentile of sorted runs equals the percentile of their sorted union', async (t) => {
  const r = rng(42);
  for (let round = 0; round < 200; round++) {
    const runs = Array.from({ length: 1 + Math.floor(r() * 8) }, () =>
      Float64Array.from({ length: Math.floor(r() * 20) }, () => Math.floor(r() * (round % 2 === 0 ? 10 : 1e9))).sort(),
    );
    const union = runs.flatMap((x) => [...x]).sort((a, b) => a - b);
    for (const p of [0, 25, 50, 75, 95, 100]) if (percentileOfRuns(runs, p) !== percentile(union, p)) t.fail(`round ${round}, p ${p}`);
  }
  t.pass('200 random sets of runs, every level');
});

t.test('request parsing', async (t) => {
  t.same(readFeeQuery([{}]), { accounts: [], level: 2, allLevels: false, lookbackSlots: null, recommended: false }, 'defaults: Medium, the window');
  const q = readFeeQuery([{ accountKeys: [A, B, A], options: { priorityLevel: 'VeryHigh', includeAllPriorityFeeLevels: true, lookbackSlots: 150 } }]);
  t.same(q, { accounts: [A, B], level: 4, allLevels: true, lookbackSlots: 150, recommended: false });
  for (const [what, params, msg] of [
    ['no params', undefined, /params must be/],
    ['two objects', [{}, {}], /params must be/],
    ['a level', [{ options: { priorityLevel: 'medium' } }], /priorityLevel must be one of Min, Low/],
    ['lookback 151', [{ options: { lookbackSlots: 151 } }], /lookbackSlots must be an integer from 1 to 150/],
    ['a boolean', [{ options: { recommended: 'yes' } }], /recommended must be true or false/],
    ['a key', [{ accountKeys: ['x'] }], /not a base58 pubkey/],
    ['129 keys', [{ accountKeys: Array(129).fill(A) }], /at most 128/],
    ['an encoding', [{ transaction: 'x', options: { transactionEncoding: 'base64' } }], /Base58 or Base64/],
    ['both', [{ transaction: 'x', accountKeys: [A] }], /not both/],
  ] as const) {
    const r = readFeeQuery(params);
    t.match(r, msg, what);
  }
});

t.test('a transaction: write-locked static keys and the compute-unit price', async (t) => {
  const budget = Buffer.from(decodeBase58('ComputeBudget111111111111111111111111111111')!);
  const keys = [A, B, key('ro')].map((k) => Buffer.from(decodeBase58(k)!));
  const price = Buffer.alloc(9);
  price[0] = 3;
  price.writeBigUInt64LE(123_456n, 1);
  // 1 signer, 0 read-only signed, 2 read-only unsigned (ro and the program).
  const tx = Buffer.concat([
    Buffer.from([1]),
    Buffer.alloc(64),
    Buffer.from([1, 0, 2, 4]),
    ...keys,
    budget,
    Buffer.alloc(32),
    Buffer.from([1, 3, 0, 9]),
    price,
  ]);
  t.same(readTxFees(tx), { price: 123_456, writes: [A, B], vote: false });
  t.same(readFeeQuery([{ transaction: tx.toString('base64'), options: { transactionEncoding: 'Base64' } }]), {
    accounts: [A, B],
    level: 2,
    allLevels: false,
    lookbackSlots: null,
    recommended: false,
  });
  t.equal(readTxFees(tx.subarray(0, 100)), null, 'cut short: none');
});

t.test('the book: window, lookback, accounts, answers', async (t) => {
  const book = new FeeBook(3);
  const id = (body: string): Buffer => Buffer.from(body);
  const body = id('{"jsonrpc":"2.0","id":7,"method":"getPriorityFeeEstimate","params":[{}]}');
  const params = (b: Buffer): [number, number] => [b.indexOf('[{'), b.lastIndexOf('}')];
  t.match(book.answer(body, ...params(body)), /"code":7507/, 'nothing held: 7507');
  t.equal(book.answeredHttp, 503);
  book.apply([
    { slot: 10, prices: [100, 200], writes: [[A], [B]] },
    { slot: 11, prices: [300], writes: [[A, B]] },
  ]);
  book.apply([
    { slot: 12, prices: [400, 500], writes: [[A], []] },
    { slot: 13, prices: [600], writes: [[B]] },
  ]);
  t.equal(book.top, 13);
  t.equal(book.slots, 3, 'the window keeps 3 slots');
  t.same(
    book.levels({ accounts: [], level: 2, allLevels: true, lookbackSlots: null, recommended: false }),
    [300, 300, 400, 500, 600, 600],
    'every transaction of 11..13',
  );
  t.same(book.levels({ accounts: [A], level: 2, allLevels: false, lookbackSlots: 2, recommended: false }), [400, 400, 400, 400, 400, 400], 'A in 12..13');
  t.same(
    book.levels({ accounts: [A, B], level: 2, allLevels: false, lookbackSlots: null, recommended: false }),
    [300, 300, 300, 600, 600, 600],
    'the highest of A (300, 400) and B (300, 600)',
  );
  t.equal(book.answer(body, ...params(body)), '{"jsonrpc":"2.0","result":{"priorityFeeEstimate":400},"id":7}');
  const all = id(
    `{"jsonrpc":"2.0","id":"x","method":"getPriorityFeeEstimate","params":[{"accountKeys":["${A}"],"options":{"includeAllPriorityFeeLevels":true}}]}`,
  );
  t.equal(
    book.answer(all, ...params(all)),
    '{"jsonrpc":"2.0","result":{"priorityFeeLevels":{"min":300,"low":300,"medium":300,"high":400,"veryHigh":400,"unsafeMax":400}},"id":"x"}',
  );
  const rec = id('{"jsonrpc":"2.0","id":1,"method":"getPriorityFeeEstimate","params":[{"options":{"recommended":true}}]}');
  t.match(book.answer(rec, ...params(rec)), /"priorityFeeEstimate":10000/, 'recommended: at least the floor');
  const bad = id('{"jsonrpc":"2.0","id":1,"method":"getPriorityFeeEstimate","params":[{"options":{"lookbackSlots":0}}]}');
  t.match(book.answer(bad, ...params(bad)), /"code":-32602,"message":"Invalid params: options.lookbackSlots/);
  t.equal(book.answeredError, true);
});
