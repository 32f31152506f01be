// The account cache on a data plane: answers from its store only when every key is held at
// the commitment's slot and the feed is not behind the nodes; every other read is a miss with
// its reason, and every read is counted for the control plane.

import t from 'tap';
import {
  AccountCache,
  M_AFFINITY,
  M_BEHIND,
  M_COMMITMENT,
  M_MIN_CONTEXT,
  M_NOT_HELD,
  M_UNSUPPORTED,
  type CacheCounts,
} from '../../../src/cache/account-cache.js';
import type { AccountValue } from '../../../src/cache/account-value.js';
import { EV_ANCHOR, EV_SLOT, EV_TRACK, EV_WRITE, type CacheEvent } from '../../../src/cache/cache-events.js';

const KEY = '4Nd1mBQtrMJVYVfKf2PJy9NZUZdTAsp7D4xWLs4gDB4T';
const OTHER = '9xQeWvG816bUx9EPjHmaT23yvVM2ZWbrrpZb9PusVFin';
const SYSTEM = '11111111111111111111111111111111';
const acct = (lamports: number, data = Buffer.alloc(0)): AccountValue => ({
  lamports: String(lamports),
  owner: SYSTEM,
  executable: false,
  rentEpoch: '18446744073709551615',
  data,
});
const body = (method: string, params: unknown[]): Buffer => Buffer.from(JSON.stringify({ jsonrpc: '2.0', id: 7, method, params }));

function setup(opts: { commitments?: number; monotonic?: boolean } = {}) {
  const reports: CacheCounts[] = [];
  let freshest = 0;
  const cache = new AccountCache(
    { commitments: opts.commitments ?? 7, maxLagSlots: 2, monotonic: opts.monotonic ?? false },
    () => freshest,
    (c) => reports.push(c),
  );
  t.teardown(() => cache.close());
  const slot = (s: number, status: 'processed' | 'confirmed' | 'finalized'): CacheEvent => ({
    t: EV_SLOT,
    slot: s,
    parent: s - 1,
    status,
    at: performance.timeOrigin + performance.now(),
  });
  // Slots 100..105 processed, confirmed up to 104, finalized 100; KEY anchored at 101 and written at 103.
  const events: CacheEvent[] = [slot(100, 'processed'), slot(100, 'confirmed'), slot(100, 'finalized'), { t: EV_TRACK, key: KEY, from: 101 }];
  events.push({ t: EV_ANCHOR, key: KEY, slot: 101, state: acct(1000), apiVersion: '2.1.0' });
  for (let s = 101; s <= 105; s++) {
    if (s === 103) events.push({ t: EV_WRITE, key: KEY, slot: 103, wv: 1, state: acct(2000, Buffer.from([1, 2, 3])) });
    events.push(slot(s, 'processed'));
    if (s <= 104) events.push(slot(s, 'confirmed'));
  }
  cache.apply(events);
  return { cache, reports, setFreshest: (s: number) => (freshest = s) };
}

t.test('a held key answers at the commitment slot, the state on that slot', async (t) => {
  const { cache, setFreshest } = setup();
  setFreshest(105);
  const p = cache.answer(body('getAccountInfo', [KEY, { commitment: 'processed', encoding: 'base64' }]), 'getAccountInfo', false);
  t.equal(
    p?.toString(),
    '{"jsonrpc":"2.0","result":{"context":{"apiVersion":"2.1.0","slot":105},"value":{"data":["AQID","base64"],"executable":false,"lamports":2000,"owner":"11111111111111111111111111111111","rentEpoch":18446744073709551615,"space":3}},"id":7}',
  );
  const f = cache.answer(body('getBalance', [KEY, { commitment: 'finalized' }]), 'getBalance', false);
  t.equal(f, null, 'finalized at 100: before the anchor, not held there');
  const c = cache.answer(body('getBalance', [KEY, { commitment: 'confirmed' }]), 'getBalance', false);
  t.equal(c?.toString(), '{"jsonrpc":"2.0","result":{"context":{"apiVersion":"2.1.0","slot":104},"value":2000},"id":7}');
  t.equal(cache.answeredError, false);
});

t.test('misses, each with its reason; every read counted', async (t) => {
  const { cache, reports, setFreshest } = setup({ commitments: 1 /* processed only */, monotonic: true });
  setFreshest(105);
  const ask = (m: string, params: unknown[], affine = false) => cache.answer(body(m, params), m, affine);
  t.equal(ask('getAccountInfo', [KEY, { encoding: 'jsonParsed', commitment: 'processed' }]), null);
  t.equal(ask('getAccountInfo', [KEY, { commitment: 'confirmed' }]), null);
  t.equal(ask('getMultipleAccounts', [[KEY, OTHER], { commitment: 'processed' }]), null, 'one key not held: the whole call to a node');
  t.equal(ask('getAccountInfo', [KEY, { commitment: 'processed', minContextSlot: 106 }]), null);
  t.equal(ask('getAccountInfo', [KEY, { commitment: 'processed' }], true), null, 'affinity with monotonic reads');
  setFreshest(108);
  t.equal(ask('getAccountInfo', [KEY, { commitment: 'processed' }]), null, 'the feed 3 slots behind the freshest node');
  setFreshest(107);
  t.not(ask('getAccountInfo', [KEY, { commitment: 'processed' }]), null, '2 behind: still answered');
  (cache as unknown as { flush(): void }).flush();
  const r = reports.at(-1)!;
  const misses = [];
  misses[M_UNSUPPORTED] = 1;
  misses[M_COMMITMENT] = 1;
  misses[M_NOT_HELD] = 1;
  misses[M_BEHIND] = 1;
  misses[M_MIN_CONTEXT] = 1;
  misses[M_AFFINITY] = 1;
  t.same(r.misses, misses);
  t.equal(r.hits, 1);
  t.equal(r.reads.get(KEY), 6, 'every parsed read of the key counted, hits and misses');
  t.equal(r.reads.get(OTHER), 1);
  t.equal(r.visibleUs.length, 1, 'the slot that wrote a held account: its update-to-visible delay');
});

t.test("base58 over 128 bytes: Agave's error, answered as an error", async (t) => {
  const { cache, setFreshest } = setup();
  setFreshest(105);
  const big = acct(5000, Buffer.alloc(200, 7));
  cache.apply([
    { t: EV_WRITE, key: KEY, slot: 106, wv: 1, state: big },
    { t: EV_SLOT, slot: 106, parent: 105, status: 'processed', at: 0 },
  ]);
  const out = cache.answer(body('getAccountInfo', [KEY, { commitment: 'processed', encoding: 'base58' }]), 'getAccountInfo', false);
  t.match(out?.toString(), /^\{"jsonrpc":"2\.0","error":\{"code":-32600,"message":"Encoded binary \(base 58\) data should be less than 128 bytes/);
  t.equal(cache.answeredError, true);
  const sliced = cache.answer(
    body('getAccountInfo', [KEY, { commitment: 'processed', encoding: 'base58', dataSlice: { offset: 0, length: 4 } }]),
    'getAccountInfo',
    false,
  );
  t.match(sliced?.toString(), /"data":\["\w+","base58"\]/, 'a slice under the limit is answered');
  t.equal(cache.answeredError, false);
});
