// The dedup window (src/grpc/dedup.ts) and the upstream union (src/grpc/union.ts): first
// arrival wins, memory stays within the window, account updates never go back, and the union
// is a superset of every client's filters in one filter per kind and axis.

import t from 'tap';
import { ACCEPTED, DedupWindow, DUPLICATE, LATE, SUPERSEDED } from '../../../src/grpc/dedup.js';
import { compileFilters, type GrpcLimits } from '../../../src/grpc/filters.js';
import { encodeAs, geyserType } from '../../../src/grpc/proto.js';
import { unionRequest } from '../../../src/grpc/union.js';
import { readUpdate, type Update } from '../../../src/grpc/update.js';
import { poolAccount } from '../../../src/tools/sim-grpc/feed.js';
import { encodeBase58 } from '../../../src/solana/base58.js';

const LIMITS: GrpcLimits = {
  maxStreamsPerToken: 10,
  maxFiltersPerStream: 16,
  maxAccountsPerFilter: 100,
  maxOwnersPerFilter: 100,
  maxDataFiltersPerFilter: 4,
  maxQueuedMessages: 100,
  maxRequestBytes: 1 << 20,
};
const type = geyserType('SubscribeUpdate');

const slotUpdate = (slot: number, status = 0): Update => readUpdate(encodeAs(type, { slot: { slot, status } }));
const accountUpdate = (key: number, slot: number, writeVersion: number): Update =>
  readUpdate(encodeAs(type, { account: { slot, account: { pubkey: poolAccount(1, key), owner: poolAccount(1, 99), data: Buffer.alloc(8), writeVersion } } }));

t.test('first arrival wins; the same event again is a duplicate with its lag', async (t) => {
  const w = new DedupWindow(10, 1 << 20);
  t.equal(w.accept(slotUpdate(100), 0), ACCEPTED);
  t.equal(w.accept(slotUpdate(100), 7), DUPLICATE);
  t.equal(w.lagMs, 7);
  t.equal(w.accept(slotUpdate(100, 1), 8), ACCEPTED, 'another status of the slot is another event');
  t.equal(w.accept(accountUpdate(1, 100, 5), 9), ACCEPTED);
  t.equal(w.accept(accountUpdate(1, 100, 5), 9), DUPLICATE);
});

t.test('an account update older than one delivered is superseded; beyond the window is late', async (t) => {
  const w = new DedupWindow(10, 1 << 20);
  t.equal(w.accept(accountUpdate(1, 105, 50), 0), ACCEPTED);
  t.equal(w.accept(accountUpdate(1, 104, 40), 0), SUPERSEDED);
  t.equal(w.accept(accountUpdate(1, 105, 49), 0), SUPERSEDED, 'same slot, older write version');
  t.equal(w.accept(accountUpdate(2, 104, 41), 0), ACCEPTED, 'another account is independent');
  t.equal(w.accept(slotUpdate(120), 0), ACCEPTED);
  t.equal(w.accept(slotUpdate(105, 2), 0), LATE, 'slot 105 fell out of a 10-slot window');
  t.equal(w.oldestSlot, 120);
});

t.test('memory stays within the window: slots and bytes', async (t) => {
  const w = new DedupWindow(50, 64 * 1024);
  for (let slot = 1000; slot < 11_000; slot++) for (let k = 0; k < 5; k++) w.accept(accountUpdate(k, slot, slot * 10 + k), 0);
  const kept = [...w.since(0)];
  t.ok(kept.length <= 50 * 5, `${kept.length} updates kept`);
  t.ok(kept.reduce((a, u) => a + u.body.length, 0) <= 64 * 1024, 'within windowBytes');
  t.equal(w.highestSlot, 10_999);
});

t.test('the union: one filter per kind and axis, a superset of every client', async (t) => {
  const [a, b, c] = [1, 2, 3].map((i) => encodeBase58(poolAccount(1, i)));
  const clients = [
    compileFilters({ accounts: { x: { account: [a!] } }, transactions: { t: { vote: false, accountInclude: [a!] } } }, LIMITS),
    compileFilters(
      { accounts: { y: { owner: [b!] }, z: { account: [c!], owner: [b!] } }, transactions: { t: { vote: false, accountInclude: [c!] } }, slots: { s: {} } },
      LIMITS,
    ),
  ];
  const req = unionRequest(clients, 1);
  t.same(req, {
    commitment: 1,
    slots: { slots: { filterByCommitment: false } },
    accounts: { by_account: { account: [a, c].sort() }, by_owner: { owner: [b] } },
    transactions: { transactions: { vote: false, accountInclude: [a, c].sort() } },
  });
  const any = unionRequest([...clients, compileFilters({ accounts: { all: {} }, transactions: { t: { vote: true } } }, LIMITS)], 0);
  t.same(any.accounts, { accounts: {} }, 'an unkeyed accounts filter: all accounts');
  t.same(any.transactions, { transactions: {} }, 'disagreeing vote, an unkeyed filter: all transactions');
});
