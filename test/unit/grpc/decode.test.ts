// The gRPC request and update decoders against random and mutated bytes (a bounded fuzz): a
// documented error or a value, never a crash; plus the `filters` field cut and re-prefixed
// without touching the other fields, and the filter limits named in their errors.

import t from 'tap';
import { compileFilters, FilterError, type GrpcLimits } from '../../../src/grpc/filters.js';
import { decodeAs, encodeAs, geyserType, type SubscribeRequestObject } from '../../../src/grpc/proto.js';
import { KIND_ACCOUNT, readUpdate, WireError } from '../../../src/grpc/update.js';
import { encodeFilterNames } from '../../../src/grpc/wire.js';
import { rng } from '../../../src/tools/rng.js';
import { GeneratedFeed, poolAccount } from '../../../src/tools/sim-grpc/feed.js';
import { encodeBase58 } from '../../../src/solana/base58.js';

const LIMITS: GrpcLimits = {
  maxStreamsPerToken: 10,
  maxFiltersPerStream: 4,
  maxAccountsPerFilter: 3,
  maxOwnersPerFilter: 2,
  maxDataFiltersPerFilter: 2,
  maxQueuedMessages: 100,
  maxRequestBytes: 1 << 20,
};
const ROUNDS = 3000;

/** What the listener does with request bytes: decode, then compile; anything else thrown is a bug. */
function handleRequest(bytes: Buffer): 'ok' | 'malformed' | 'refused' {
  let req: SubscribeRequestObject;
  try {
    req = decodeAs<SubscribeRequestObject>(geyserType('SubscribeRequest'), bytes);
  } catch {
    return 'malformed';
  }
  try {
    compileFilters(req, LIMITS);
    return 'ok';
  } catch (e) {
    if (e instanceof FilterError) return 'refused';
    throw e;
  }
}

const validRequest = encodeAs(geyserType('SubscribeRequest'), {
  accounts: { a: { account: [encodeBase58(poolAccount(1, 0))], filters: [{ memcmp: { offset: 0, base58: '2' } }, { datasize: 40 }] } },
  slots: { s: { filterByCommitment: true } },
  transactions: { t: { vote: false, accountInclude: [encodeBase58(poolAccount(1, 1))] } },
  commitment: 1,
  fromSlot: 12,
});

t.test('random and mutated SubscribeRequest bytes: malformed, refused or ok, never a crash', async (t) => {
  const random = rng(28);
  const outcomes = { ok: 0, malformed: 0, refused: 0 };
  t.equal(handleRequest(validRequest), 'ok', 'the valid request compiles');
  for (let i = 0; i < ROUNDS; i++) {
    let bytes: Buffer;
    if (i % 2 === 0) {
      bytes = Buffer.alloc(Math.floor(random() * 200));
      for (let j = 0; j < bytes.length; j++) bytes[j] = Math.floor(random() * 256);
    } else {
      bytes = Buffer.from(validRequest);
      const flips = 1 + Math.floor(random() * 4);
      for (let j = 0; j < flips; j++) bytes[Math.floor(random() * bytes.length)] = Math.floor(random() * 256);
      if (random() < 0.3) bytes = bytes.subarray(0, Math.floor(random() * bytes.length));
    }
    outcomes[handleRequest(bytes)]++;
  }
  t.equal(outcomes.ok + outcomes.malformed + outcomes.refused, ROUNDS, `every input answered: ${JSON.stringify(outcomes)}`);
  t.ok(outcomes.malformed > 0 && outcomes.refused > 0, 'both error paths taken');
});

t.test('random and mutated update bytes: WireError or an update, never a crash', async (t) => {
  const random = rng(29);
  const samples = new GeneratedFeed().blockUpdates(300_000_100).map((u) => u.raw);
  let read = 0;
  let refused = 0;
  for (let i = 0; i < ROUNDS; i++) {
    const bytes = Buffer.from(samples[i % samples.length]!);
    for (let j = 0; j < 3; j++) bytes[Math.floor(random() * bytes.length)] = Math.floor(random() * 256);
    try {
      readUpdate(bytes);
      read++;
    } catch (e) {
      if (!(e instanceof WireError)) throw e;
      refused++;
    }
  }
  t.equal(read + refused, ROUNDS, `every input answered (${read} read, ${refused} refused)`);
});

t.test('the filters field is cut out once and each client gets its own names before the rest', async (t) => {
  const type = geyserType('SubscribeUpdate');
  const account = { slot: 5, account: { pubkey: poolAccount(1, 3), lamports: 9, owner: poolAccount(1, 4), data: Buffer.from([1, 2, 3]), writeVersion: 77 } };
  const upstream = encodeAs(type, { filters: ['upstream-a', 'upstream-b'], account });
  const u = readUpdate(upstream);
  t.equal(u.kind, KIND_ACCOUNT);
  t.same([u.slot, u.writeVersion, u.lamports, u.dataEnd - u.dataStart], [5, 77, 9, 3]);
  const mine = Buffer.concat([encodeFilterNames(['mine']), u.body]);
  const back = decodeAs<{ filters: string[]; account: { slot: number } }>(type, mine);
  t.same(back.filters, ['mine'], 'only the client filter names');
  t.equal(back.account.slot, 5, 'the rest unchanged');
  // Field 1 after the others (allowed by protobuf) is cut out as well.
  const late = Buffer.concat([encodeAs(type, { account }), encodeFilterNames(['x'])]);
  t.same(decodeAs<{ filters?: string[] }>(type, Buffer.concat([encodeFilterNames(['y']), readUpdate(late).body])).filters, ['y']);
});

t.test('limits are named in the refusal', async (t) => {
  const keys = [0, 1, 2, 3].map((i) => encodeBase58(poolAccount(1, i)));
  const cases: [SubscribeRequestObject, RegExp][] = [
    [{ accounts: { a: { account: keys } } }, /maxAccountsPerFilter \(3\)/],
    [{ accounts: { a: { owner: keys.slice(0, 3) } } }, /maxOwnersPerFilter \(2\)/],
    [{ accounts: { a: { filters: [{ datasize: 1 }, { datasize: 2 }, { datasize: 3 }] } } }, /maxDataFiltersPerFilter \(2\)/],
    [{ slots: { a: {}, b: {}, c: {}, d: {}, e: {} } }, /maxFiltersPerStream \(4\)/],
    [{ blocks: { b: {} } }, /blocks subscriptions are not served/],
    [{ accountsDataSlice: [{}] }, /accounts_data_slice/],
    [{ commitment: 7 }, /commitment 7/],
    [{ transactions: { t: { signature: 'abc' } } }, /signature/],
  ];
  for (const [req, re] of cases) t.throws(() => compileFilters(req, LIMITS), re);
});
