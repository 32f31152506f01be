// The Yellowstone gRPC listener (docs/grpc.md) with the official client through the gateway:
// slot, account and transaction subscriptions, filters replaced mid-stream, tokens refused and
// revoked, the unary calls, the documented limits.

import http2 from 'node:http2';
import t from 'tap';
import { encodeAs, geyserType } from '../../src/grpc/proto.js';
import { poolAccount, poolOwner } from '../../src/tools/sim-grpc/feed.js';
import { encodeBase58 } from '../../src/solana/base58.js';
import { GRPC_UPDATES } from '../../src/grpc/client-stream.js';
import { eventually } from '../helpers/eventually.js';
import { Client, startGrpcHarness, statusText, subscribe, TOKEN, TOKEN2, type GrpcHarness } from '../helpers/grpc.js';

const SEED = 1; // the simulated feed's default content seed
const b58 = (b: Uint8Array): string => encodeBase58(b);

let h: GrpcHarness;
t.before(async () => {
  h = await startGrpcHarness({ limits: { maxStreamsPerToken: 3, maxAccountsPerFilter: 4 } });
});
t.teardown(() => h.close());

t.test('slot updates: every status, in slot order per status, filtered by commitment on request', async (t) => {
  const all = await subscribe(h.url, TOKEN, { slots: { s: {} } });
  const confirmedOnly = await subscribe(h.url, TOKEN, { slots: { c: { filterByCommitment: true } }, commitment: 1 });
  t.teardown(() => {
    all.close();
    confirmedOnly.close();
  });
  await eventually('30 slot updates', () => all.updates.length >= 30 && confirmedOnly.updates.length >= 5, 10_000);
  t.same(new Set(all.updates.map((u) => u.slot!.status)), new Set([0, 1, 2]), 'processed, confirmed and finalized');
  t.ok(
    all.updates.every((u) => u.filters.length === 1 && u.filters[0] === 's'),
    'filters names the client filter',
  );
  t.ok(
    confirmedOnly.updates.every((u) => u.slot!.status === 1 && u.filters[0] === 'c'),
    'filter_by_commitment keeps the stream commitment',
  );
  const processed = all.updates.filter((u) => u.slot!.status === 0).map((u) => Number(u.slot!.slot));
  t.same(
    processed,
    [...processed].sort((a, b) => a - b),
    'processed slots ascend',
  );
  t.equal(new Set(processed).size, processed.length, 'no slot twice');
});

t.test('account subscription by key and by owner with memcmp; transactions with vote/failed/include', async (t) => {
  const key = poolAccount(SEED, 5);
  const owner = poolOwner(SEED, 2);
  const disc = Buffer.alloc(4);
  disc.writeUInt32LE(2, 0);
  const byKey = await subscribe(h.url, TOKEN, { accounts: { k: { account: [b58(key)], owner: [], filters: [] } } });
  const byOwner = await subscribe(h.url, TOKEN, { accounts: { o: { account: [], owner: [b58(owner)], filters: [{ memcmp: { offset: '0', bytes: disc } }] } } });
  const txs = await subscribe(h.url, TOKEN, {
    transactions: { nv: { vote: false, failed: false, accountInclude: [], accountExclude: [], accountRequired: [] } },
  });
  t.teardown(() => {
    byKey.close();
    byOwner.close();
    txs.close();
  });
  await eventually('account and transaction updates', () => byKey.updates.length >= 2 && byOwner.updates.length >= 10 && txs.updates.length >= 10, 20_000);
  t.ok(
    byKey.updates.every((u) => Buffer.from(u.account!.account!.pubkey).equals(key)),
    'only the subscribed key',
  );
  t.ok(
    byOwner.updates.every((u) => Buffer.from(u.account!.account!.owner).equals(owner) && Buffer.from(u.account!.account!.data).readUInt32LE(0) === 2),
    'only that owner, memcmp holds',
  );
  t.ok(
    txs.updates.every((u) => u.transaction!.transaction!.isVote === false && u.transaction!.transaction!.meta!.err === undefined),
    'no votes, no failures',
  );
  const slots = byKey.updates.map((u) => Number(u.account!.slot));
  t.same(
    slots,
    [...slots].sort((a, b) => a - b),
    'account updates in slot order',
  );
});

t.test('filters replaced mid-stream: the old ones stop, the new ones start, on the same stream', async (t) => {
  const sub = await subscribe(h.url, TOKEN, { slots: { first: {} } });
  t.teardown(() => sub.close());
  await eventually('slot updates', () => sub.updates.length >= 3);
  await sub.write({ blocksMeta: { second: {} } });
  await eventually('block metas', () => sub.updates.filter((u) => u.blockMeta !== undefined).length >= 3, 10_000);
  const firstMeta = sub.updates.findIndex((u) => u.blockMeta !== undefined);
  const after = sub.updates.slice(firstMeta);
  t.ok(
    after.every((u) => u.blockMeta !== undefined && u.filters[0] === 'second'),
    'only the new filter after the switch',
  );
  t.equal(sub.error, null, 'the stream stayed open');
  // A ping request answers a pong and keeps the filters.
  await sub.write({ ping: { id: 42 } });
  await eventually('pong', () => sub.updates.some((u) => u.pong?.id === 42));
  const n = sub.updates.length;
  await eventually('more block metas after the ping', () => sub.updates.length > n + 2 && sub.updates.slice(n).some((u) => u.blockMeta !== undefined), 10_000);
});

t.test('unknown token: UNAUTHENTICATED; usage booked for a known one', async (t) => {
  const bad = await subscribe(h.url, 'no-such-token-0123456789', { slots: { s: {} } });
  await eventually('refused', () => bad.ended);
  t.match(statusText(bad.error), /unauthenticated|valid API token/i);
  const none = await subscribe(h.url, undefined, { slots: { s: {} } });
  await eventually('refused without a token', () => none.ended);
  t.match(statusText(none.error), /unauthenticated|valid API token/i);
  const c = new Client(h.url, 'no-such-token-0123456789', undefined);
  await c.connect();
  await t.rejects(c.getSlot(), 'unary calls too');
});

t.test('a revoked token: its streams end within a second, other tokens keep theirs', async (t) => {
  const a = await subscribe(h.url, TOKEN2, { slots: { s: {} } });
  const b = await subscribe(h.url, TOKEN, { slots: { s: {} } });
  t.teardown(() => {
    a.close();
    b.close();
  });
  await eventually('both streaming', () => a.updates.length > 0 && b.updates.length > 0);
  const record = h.gw.tokens.find(TOKEN2)!;
  const at = Date.now();
  h.gw.tokens.setActive(record, false);
  t.teardown(() => h.gw.tokens.setActive(record, true));
  await eventually('the revoked stream ended', () => a.ended, 1000);
  t.ok(Date.now() - at <= 1000, 'within 1 s');
  t.match(statusText(a.error), /revoked|unauthenticated/i);
  const n = b.updates.length;
  await eventually('the other token keeps streaming', () => b.updates.length > n + 3);
  t.notOk(b.ended);
});

t.test('limits: INVALID_ARGUMENT naming the limit; streams per token', async (t) => {
  const keys = [0, 1, 2, 3, 4].map((i) => b58(poolAccount(SEED, i)));
  const tooMany = await subscribe(h.url, TOKEN, { accounts: { k: { account: keys, owner: [], filters: [] } } });
  await eventually('refused', () => tooMany.ended);
  t.match(statusText(tooMany.error), /maxAccountsPerFilter/);
  const notBase58 = await subscribe(h.url, TOKEN, { accounts: { k: { account: ['0OIl'], owner: [], filters: [] } } });
  await eventually('refused', () => notBase58.ended);
  t.match(statusText(notBase58.error), /base58/);
  const open = await Promise.all([1, 2, 3].map(() => subscribe(h.url, TOKEN2, { slots: { s: {} } })));
  t.teardown(() => open.forEach((s) => s.close()));
  await eventually('three streaming', () => open.every((s) => s.updates.length > 0));
  const fourth = await subscribe(h.url, TOKEN2, { slots: { s: {} } });
  await eventually('the fourth refused', () => fourth.ended);
  t.match(statusText(fourth.error), /maxStreamsPerToken/);
});

t.test('unary calls: answered from the sources or locally', async (t) => {
  const c = new Client(h.url, TOKEN, undefined);
  await c.connect();
  const slot = Number((await c.getSlot()).slot);
  t.ok(slot > 300_000_000, 'a slot');
  const bh = await c.getLatestBlockhash();
  t.ok(Number(bh.lastValidBlockHeight) > 0 && bh.blockhash.length >= 32);
  t.equal((await c.isBlockhashValid(bh.blockhash)).valid, true);
  t.ok(Number((await c.getBlockHeight()).blockHeight) > 0);
  t.equal((await c.ping(7)).count, 7);
  t.match(JSON.parse((await c.getVersion()).version), { version: { package: 'jumpgate' } });
});

t.test('usage: messages and bytes of delivered updates are booked for the token', async (t) => {
  const usage = h.gw.grpc!.usage!;
  const id = h.gw.tokens.find(TOKEN)!.id;
  usage.drain();
  const sub = await subscribe(h.url, TOKEN, { slots: { s: {} } });
  t.teardown(() => sub.close());
  await eventually('updates', () => sub.updates.length > 5);
  const cells = usage.drain().filter((c) => c.tokenId === id);
  const updates = cells.find((c) => c.method === GRPC_UPDATES);
  t.ok(updates !== undefined && updates.calls >= 5 && updates.bytesOut > 5 * 10, 'messages and bytes out');
  t.ok(
    cells.some((c) => c.method === 'grpc.Subscribe' && c.calls >= 1 && c.bytesIn > 0),
    'the request, bytes in',
    { cells },
  );
});

t.test('clients that vanish mid-stream are forgotten; the listener keeps serving', async (t) => {
  // The earlier tests' streams are closed first: this harness allows 3 per token.
  await eventually('earlier streams closed', () => h.gw.grpc!.hub.streams === 0, 5000);
  // Raw HTTP/2 sessions, destroyed under their streams: the TCP connection just goes.
  const body = encodeAs(geyserType('SubscribeRequest'), { slots: { s: {} }, accounts: { a: {} } });
  const frame = Buffer.concat([Buffer.from([0, 0, 0, 0, 0]), body]);
  frame.writeUInt32BE(body.length, 1);
  const gone = Array.from({ length: 3 }, () => {
    const session = http2.connect(h.url);
    session.on('error', () => {});
    const req = session.request({
      ':method': 'POST',
      ':path': '/geyser.Geyser/Subscribe',
      'content-type': 'application/grpc',
      te: 'trailers',
      'x-token': TOKEN,
    });
    let n = 0;
    req.on('data', () => n++);
    req.on('error', () => {});
    req.write(frame);
    return { session, count: () => n };
  });
  await eventually('all streaming', () => gone.every((g) => g.count() > 3), 10_000);
  for (const g of gone) g.session.destroy();
  await eventually('forgotten', () => h.gw.grpc!.hub.streams === 0, 5000);
  const sub = await subscribe(h.url, TOKEN, { slots: { s: {} } });
  t.teardown(() => sub.close());
  await eventually('a new client is served', () => sub.updates.length > 3);
  t.pass('the listener stayed up');
});
