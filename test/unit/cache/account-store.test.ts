// The account store (src/cache/account-store.ts): exact reads at each commitment's tip, on the
// tip's fork, or a miss; then a randomized run against a model chain with forks.
import t from 'tap';
import { AccountStore, KEY_OVERHEAD_BYTES, MISS_FORK_UNKNOWN, MISS_NO_TIP, MISS_UNCOVERED, MISS_UNTRACKED } from '../../../src/cache/account-store.js';
import { stateBytes, type AccountState, type AccountValue } from '../../../src/cache/account-value.js';

const acct = (lamports: number, size = 0): AccountValue => ({
  lamports: String(lamports),
  owner: '11111111111111111111111111111111',
  executable: false,
  rentEpoch: '18446744073709551615',
  data: Buffer.alloc(size, lamports & 0xff),
});

function linear(s: AccountStore, from: number, to: number): void {
  for (let x = from; x <= to; x++) s.slotStatus(x, x - 1, 'processed');
}

/** The read as [slot or miss, state]. */
function read(s: AccountStore, key: string, c: number): [number, AccountState | undefined] {
  const r = s.read(key, c);
  return [r, r >= 0 ? s.lastState : undefined];
}

t.test('a linear chain: anchor, then writes; confirmed and finalized lag processed', async (t) => {
  const s = new AccountStore();
  const a = acct(1);
  const w102 = acct(2);
  const w104 = acct(4);
  t.equal(s.read('k', 0), MISS_UNTRACKED);
  s.track('k', 101);
  t.equal(s.read('k', 0), MISS_NO_TIP);
  linear(s, 100, 101);
  t.equal(s.read('k', 0), MISS_UNCOVERED, 'tracked, no anchor');
  t.ok(s.anchor('k', 100, a));
  s.write('k', 102, 1, w102);
  linear(s, 102, 103);
  s.write('k', 104, 2, w104);
  linear(s, 104, 105);
  t.same(read(s, 'k', 0), [105, w104]);
  t.equal(s.read('k', 1), MISS_NO_TIP);
  s.slotStatus(103, null, 'confirmed');
  t.same(read(s, 'k', 1), [103, w102]);
  t.equal(s.read('k', 2), MISS_NO_TIP);
  s.slotStatus(101, null, 'finalized');
  t.same(read(s, 'k', 2), [101, a]);
  t.equal(s.tip(0), 105);
  t.same([s.processed, s.confirmed, s.root], [105, 103, 101]);
});

t.test('a write before the anchor is not an answer until the anchor comes', async (t) => {
  const s = new AccountStore();
  s.track('k', 101);
  const w = acct(7);
  s.write('k', 101, 5, w);
  linear(s, 100, 102);
  t.equal(s.read('k', 0), MISS_UNCOVERED);
  t.ok(s.anchor('k', 100, acct(1)));
  t.same(read(s, 'k', 0), [102, w], 'the write above the anchor counts');
  const s2 = new AccountStore();
  s2.track('k', 101);
  s2.write('k', 101, 5, w);
  linear(s2, 100, 103);
  const at103 = acct(9);
  t.ok(s2.anchor('k', 103, at103));
  t.same(read(s2, 'k', 0), [103, at103]);
  s2.slotStatus(102, null, 'confirmed');
  t.equal(s2.read('k', 1), MISS_UNCOVERED, 'at 102 the state before 101 is not known');
});

t.test('an anchor below coveredFrom - 1 or below the root is refused; at the root it replaces all below', async (t) => {
  const s = new AccountStore();
  t.notOk(s.anchor('k', 100, acct(1)), 'untracked');
  s.track('k', 101);
  linear(s, 98, 101);
  t.notOk(s.anchor('k', 99, acct(1)));
  t.equal(s.read('k', 0), MISS_UNCOVERED);
  t.ok(s.anchor('k', 100, acct(2)));
  s.write('k', 101, 1, acct(3));
  linear(s, 102, 110);
  s.slotStatus(105, null, 'finalized');
  t.notOk(s.anchor('k', 104, acct(4)), 'below the root');
  const r = acct(5);
  t.ok(s.anchor('k', 105, r));
  t.same(
    s.versionsOf('k').map((v) => [v.slot, v.writeVersion]),
    [[105, null]],
  );
  t.same(read(s, 'k', 2), [105, r]);
});

t.test('at the same slot the anchor is above every write, whatever the arrival order', async (t) => {
  const s = new AccountStore();
  s.track('k', 101);
  linear(s, 100, 101);
  const anchor = acct(10);
  t.ok(s.anchor('k', 102, anchor));
  s.write('k', 102, 7, acct(11));
  s.write('k', 102, 8, acct(12));
  s.slotStatus(102, 101, 'processed');
  t.same(read(s, 'k', 0), [102, anchor]);
  const w = acct(13);
  s.write('k', 103, 1, w);
  s.slotStatus(103, 102, 'processed');
  t.same(read(s, 'k', 0), [103, w]);
  const later = acct(14);
  s.write('k', 104, 9, later);
  s.write('k', 104, 3, acct(15));
  s.slotStatus(104, 103, 'processed');
  t.same(read(s, 'k', 0), [104, later], 'the highest write version of a slot wins, not the last arrival');
});

t.test('duplicate writes are kept once; untracked keys keep nothing', async (t) => {
  const s = new AccountStore();
  s.track('k', 101);
  s.anchor('k', 100, acct(1, 10));
  const bytes = s.bytes;
  s.write('k', 101, 4, acct(2, 50));
  const after = s.bytes;
  t.equal(after - bytes, stateBytes(acct(2, 50)));
  s.write('k', 101, 4, acct(2, 50));
  t.equal(s.bytes, after);
  t.equal(s.versionsOf('k').length, 2);
  s.write('other', 101, 1, acct(3));
  t.equal(s.keys, 1);
  t.equal(s.keyBytes('other'), 0);
  t.equal(s.keyBytes('k'), s.bytes);
  t.equal(s.bytes, KEY_OVERHEAD_BYTES + 2 + stateBytes(acct(1, 10)) + stateBytes(acct(2, 50)));
  s.untrack('k');
  t.same([s.bytes, s.keys, s.read('k', 0)], [0, 0, MISS_UNTRACKED]);
});

t.test('unhold drops everything; anchors wait for a new track', async (t) => {
  const s = new AccountStore();
  s.track('k', 101);
  s.anchor('k', 100, acct(1));
  linear(s, 100, 102);
  t.equal(s.read('k', 0), 102);
  s.unhold('k');
  t.equal(s.read('k', 0), MISS_UNCOVERED);
  t.equal(s.keyBytes('k'), KEY_OVERHEAD_BYTES + 2);
  t.notOk(s.anchor('k', 102, acct(2)), 'no coverage until a new track');
  s.write('k', 103, 1, acct(3));
  t.same(s.versionsOf('k'), []);
  s.track('k', 105);
  t.notOk(s.anchor('k', 103, acct(2)), 'below the new coveredFrom - 1');
  const a = acct(4);
  t.ok(s.anchor('k', 104, a));
  linear(s, 103, 104);
  t.same(read(s, 'k', 0), [104, a]);
  s.track('k', 200);
  s.write('k', 105, 1, acct(5));
  s.slotStatus(105, 104, 'processed');
  t.same(read(s, 'k', 0), [105, acct(5)], 'a track of a held key keeps its coverage');
  s.unholdAll();
  t.equal(s.read('k', 0), MISS_UNCOVERED);
  t.equal(s.bytes, KEY_OVERHEAD_BYTES + 2);
});

t.test('a dead slot drops its writes and processed goes back', async (t) => {
  const s = new AccountStore();
  s.track('k', 101);
  const a = acct(1);
  s.anchor('k', 100, a);
  linear(s, 100, 105);
  s.slotStatus(104, null, 'confirmed');
  s.write('k', 106, 1, acct(6, 100));
  s.slotStatus(106, 105, 'processed');
  s.write('k', 107, 1, acct(7, 100));
  s.slotStatus(107, 106, 'processed');
  t.same(read(s, 'k', 0), [107, acct(7, 100)]);
  const before = s.bytes;
  s.slotStatus(106, null, 'dead');
  t.equal(s.processed, 105);
  t.same(read(s, 'k', 0), [105, a]);
  t.equal(before - s.bytes, 2 * stateBytes(acct(6, 100)));
  s.write('k', 107, 2, acct(8));
  t.equal(s.versionsOf('k').length, 1, 'a write at a dead slot is dropped');
  t.notOk(s.anchor('k', 106, acct(9)));
});

t.test('processed on fork A, then confirmed moves onto fork B: A is invisible, then pruned', async (t) => {
  const s = new AccountStore();
  s.track('k', 101);
  const a = acct(1);
  s.anchor('k', 100, a);
  linear(s, 100, 101);
  s.slotStatus(101, null, 'confirmed');
  const b102 = acct(2);
  s.write('k', 102, 1, b102);
  s.slotStatus(102, 101, 'processed'); // B
  s.write('k', 103, 1, acct(3, 64));
  s.slotStatus(103, 101, 'processed'); // A
  s.write('k', 105, 1, acct(5, 64));
  s.slotStatus(105, 103, 'processed'); // A
  s.slotStatus(104, 102, 'processed'); // B, no write
  t.same(read(s, 'k', 0), [105, acct(5, 64)]);
  t.same(read(s, 'k', 1), [101, a]);
  s.slotStatus(104, null, 'confirmed');
  t.same(read(s, 'k', 0), [104, b102], 'processed switched to B');
  t.same(read(s, 'k', 1), [104, b102]);
  const before = s.bytes;
  s.slotStatus(102, null, 'finalized');
  t.equal(before - s.bytes, 2 * stateBytes(acct(3, 64)) + stateBytes(a), 'A pruned, the anchor collapsed');
  t.same(
    s.versionsOf('k').map((v) => [v.slot, v.writeVersion]),
    [[102, null]],
  );
  t.same(read(s, 'k', 2), [102, b102]);
});

t.test('a root advance collapses each key into one anchor and memory goes back', async (t) => {
  const s = new AccountStore();
  s.track('k', 101);
  s.track('j', 101);
  s.anchor('k', 100, acct(1));
  linear(s, 99, 100);
  const base = s.bytes;
  let last = acct(0);
  for (let x = 101; x <= 140; x++) {
    last = acct(x, 1000);
    s.write('k', x, 1, acct(x + 1000, 1000));
    s.write('k', x, 2, last);
    s.write('j', x, 1, acct(x, 1000)); // never anchored
    s.slotStatus(x, x - 1, 'processed');
  }
  t.ok(s.bytes > base + 80 * 1000);
  s.slotStatus(140, null, 'confirmed');
  s.slotStatus(140, null, 'finalized');
  t.same(read(s, 'k', 2), [140, last]);
  t.same(
    s.versionsOf('k').map((v) => [v.slot, v.writeVersion]),
    [[140, null]],
  );
  t.same(s.versionsOf('j'), [], 'uncovered writes at or below the root go: only an anchor at or above it can cover the key now');
  t.equal(s.bytes, base - stateBytes(acct(1)) + stateBytes(last));
  t.equal(s.slotCount, 1);
  t.equal(s.read('j', 0), MISS_UNCOVERED);
  t.ok(s.anchor('j', 140, acct(3)));
  t.equal(s.read('j', 0), 140);
});

t.test('an account deleted (null) and created again', async (t) => {
  const s = new AccountStore();
  s.track('k', 101);
  s.anchor('k', 100, null);
  linear(s, 100, 101);
  t.same(read(s, 'k', 0), [101, null], 'a missing account is a hit with null');
  const made = acct(5);
  s.write('k', 102, 1, made);
  s.slotStatus(102, 101, 'processed');
  s.write('k', 103, 1, null);
  s.slotStatus(103, 102, 'processed');
  t.same(read(s, 'k', 0), [103, null]);
  const again = acct(6);
  s.write('k', 104, 1, again);
  s.slotStatus(104, 103, 'processed');
  s.slotStatus(103, null, 'confirmed');
  s.slotStatus(102, null, 'finalized');
  t.same(
    [read(s, 'k', 0), read(s, 'k', 1), read(s, 'k', 2)],
    [
      [104, again],
      [103, null],
      [102, made],
    ],
  );
});

t.test('a version the links cannot place is a miss, not a guess', async (t) => {
  const s = new AccountStore();
  s.track('k', 50);
  t.ok(s.anchor('k', 60, acct(1)));
  s.slotStatus(100, 99, 'processed');
  t.equal(s.read('k', 0), MISS_FORK_UNKNOWN, '60 may or may not be below 99');
  s.slotStatus(100, null, 'finalized');
  t.same(s.versionsOf('k'), [], 'nor kept at the root');
  t.equal(s.read('k', 0), MISS_UNCOVERED);
});
