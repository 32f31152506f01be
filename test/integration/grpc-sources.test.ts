// Several sources behind the gRPC listener (docs/grpc.md "Several sources: dedup"): with two jittery sources
// every update reaches a client exactly once and each account's updates in slot order; a source
// killed mid-stream costs nothing while the other delivers, and comes back with from_slot; a
// client that stops reading is closed while ten others keep up.

import * as grpc from '@grpc/grpc-js';
import t from 'tap';
import { encodeAs, geyserType } from '../../src/grpc/proto.js';
import { GeneratedFeed, type GeneratedFeedOptions } from '../../src/tools/sim-grpc/feed.js';
import { eventually } from '../helpers/eventually.js';
import { startGrpcHarness, subscribe, TOKEN, TOKEN2, type GrpcHarness, type Sub } from '../helpers/grpc.js';
import type { SubscribeUpdate } from '@triton-one/yellowstone-grpc';

type Test = Parameters<Parameters<typeof t.test>[0]>[0];

const latin1 = (b: Uint8Array): string => Buffer.from(b).toString('latin1');

/** The dedup key of a client-decoded update, in the gateway's own format (src/grpc/update.ts). */
function keyOf(u: SubscribeUpdate): [number, string] | null {
  if (u.slot !== undefined) return [Number(u.slot.slot), 's' + u.slot.status];
  if (u.account !== undefined) return [Number(u.account.slot), 'a' + latin1(u.account.account!.pubkey) + u.account.account!.writeVersion];
  if (u.transaction !== undefined) return [Number(u.transaction.slot), 't' + latin1(u.transaction.transaction!.signature)];
  if (u.blockMeta !== undefined) return [Number(u.blockMeta.slot), 'b'];
  return null;
}

const EVERYTHING = {
  slots: { s: {} },
  accounts: { a: { account: [], owner: [], filters: [] } },
  transactions: { t: { accountInclude: [], accountExclude: [], accountRequired: [] } },
  blocksMeta: { m: {} },
};

/** What a processed-commitment client of everything must have received for tips in [from, to]. */
function expected(feed: GeneratedFeed, from: number, to: number, minSlot = 0): Map<string, number> {
  const want = new Map<string, number>();
  for (let tip = from; tip <= to; tip++) {
    for (const u of [...feed.slotUpdates(tip), ...feed.blockUpdates(tip)]) if (u.slot >= minSlot) want.set(`${u.slot}:${u.dedupKey()}`, 0);
  }
  return want;
}

/** Checks each expected update arrived exactly once; returns [missing, duplicated]. */
function tally(sub: Sub, want: Map<string, number>): [number, number] {
  for (const u of sub.updates) {
    const k = keyOf(u);
    if (k === null) continue;
    const id = `${k[0]}:${k[1]}`;
    const n = want.get(id);
    if (n !== undefined) want.set(id, n + 1);
  }
  let missing = 0;
  let dup = 0;
  for (const n of want.values()) {
    if (n === 0) missing++;
    if (n > 1) dup++;
  }
  return [missing, dup];
}

function processedTips(sub: Sub): number[] {
  return sub.updates.filter((u) => u.slot?.status === 0).map((u) => Number(u.slot!.slot));
}

/** Every account's updates ascend by slot. */
function accountsInOrder(sub: Sub): boolean {
  const last = new Map<string, number>();
  for (const u of sub.updates) {
    if (u.account === undefined) continue;
    const k = latin1(u.account.account!.pubkey);
    const slot = Number(u.account.slot);
    if ((last.get(k) ?? 0) > slot) return false;
    last.set(k, slot);
  }
  return true;
}

async function harness(t: Test, feed?: Partial<GeneratedFeedOptions>, limits?: Record<string, unknown>, dropRate = 0): Promise<GrpcHarness> {
  const options = feed === undefined ? {} : { feed: new GeneratedFeed({ seed: 1, accountsPerSlot: 8, transactionsPerSlot: 4, accountPool: 64, ...feed }) };
  const h = await startGrpcHarness({
    sources: [
      { knobs: { jitterMs: 20, dropRate }, ...options },
      { knobs: { jitterMs: 20 }, ...options },
    ],
    grpc: { sourceStallMs: 500 },
    limits,
  });
  t.teardown(() => h.close());
  return h;
}

t.test('two sources with 0-20 ms jitter: every update exactly once, accounts in slot order', async (t) => {
  const h = await harness(t);
  const sub = await subscribe(h.url, TOKEN, EVERYTHING);
  t.teardown(() => sub.close());
  await eventually('30 slots', () => new Set(processedTips(sub)).size >= 30, 20_000);
  const tips = processedTips(sub);
  // Whole slots only: from the second tip seen to the one two before the last.
  const [from, to] = [tips[1]!, tips[tips.length - 1]! - 2];
  const [missing, dup] = tally(sub, expected(new GeneratedFeed(), from, to));
  t.equal(missing, 0, 'nothing missing');
  t.equal(dup, 0, 'nothing twice');
  t.ok(accountsInOrder(sub), 'each account in slot order');
  const text = await h.gw.metrics.registry.metrics();
  for (const id of ['src0', 'src1']) t.match(text, new RegExp(`jumpgate_grpc_source_first_total\\{source="${id}"\\} [1-9]`), `${id} was first sometimes`);
  t.match(text, /jumpgate_grpc_source_lag_seconds_count\{source="src0"\} [1-9]/, 'lag behind the first is measured');
  t.match(text, /jumpgate_grpc_upstream_streams\{source="src0"\} 1/, 'one upstream stream per source');
});

t.test('a source that drops half its updates: the other fills every gap', async (t) => {
  const h = await harness(t, undefined, undefined, 0.5);
  const sub = await subscribe(h.url, TOKEN, EVERYTHING);
  t.teardown(() => sub.close());
  await eventually('20 slots', () => new Set(processedTips(sub)).size >= 20, 20_000);
  const tips = processedTips(sub);
  const [missing, dup] = tally(sub, expected(new GeneratedFeed(), tips[1]!, tips[tips.length - 1]! - 2));
  t.same([missing, dup], [0, 0], 'nothing missing or twice');
  t.ok(accountsInOrder(sub), 'each account in slot order');
});

t.test('a source killed mid-stream: no update missing; it resubscribes with from_slot', async (t) => {
  const h = await harness(t);
  const sub = await subscribe(h.url, TOKEN, EVERYTHING);
  t.teardown(() => sub.close());
  await eventually('10 slots', () => new Set(processedTips(sub)).size >= 10, 20_000);
  await h.sources[0]!.kill();
  const killedAt = Math.max(...processedTips(sub));
  await eventually('10 slots after the kill', () => Math.max(...processedTips(sub)) >= killedAt + 10, 20_000);
  await h.sources[0]!.restart();
  await eventually('the source resubscribed from the slot it had reached', () => (h.sources[0]!.lastFromSlot ?? 0) >= killedAt - 5, 10_000);
  await eventually(
    'the source reconnected',
    async () => /jumpgate_grpc_source_reconnects_total\{source="src0"\} [1-9]/.test(await h.gw.metrics.registry.metrics()),
    10_000,
  );
  await eventually('the restarted source is first again sometimes', () => h.sources[0]!.streams() === 1, 10_000);
  await h.sources[1]!.kill();
  const secondKill = Math.max(...processedTips(sub));
  await eventually('10 slots from the restarted source alone', () => Math.max(...processedTips(sub)) >= secondKill + 10, 20_000);
  const tips = processedTips(sub);
  const [missing, dup] = tally(sub, expected(new GeneratedFeed(), tips[1]!, tips[tips.length - 1]! - 2));
  t.equal(missing, 0, 'nothing missing through both kills');
  t.equal(dup, 0, 'nothing twice');
  t.ok(accountsInOrder(sub), 'each account in slot order');
  t.equal(sub.error, null, 'the client stream never broke');
});

t.test('a source that stalls (streams open, nothing sent): nothing missing; it is resubscribed', async (t) => {
  const h = await harness(t);
  const sub = await subscribe(h.url, TOKEN, EVERYTHING);
  t.teardown(() => sub.close());
  await eventually('5 slots', () => new Set(processedTips(sub)).size >= 5, 20_000);
  h.sources[1]!.knobs.hang = true;
  await eventually(
    'the stalled source was resubscribed',
    async () => /jumpgate_grpc_source_reconnects_total\{source="src1"\} [1-9]/.test(await h.gw.metrics.registry.metrics()),
    10_000,
  );
  const at = Math.max(...processedTips(sub));
  await eventually('5 slots more from the other source', () => Math.max(...processedTips(sub)) >= at + 5, 10_000);
  h.sources[1]!.knobs.hang = false;
  await eventually('5 slots more', () => Math.max(...processedTips(sub)) >= at + 10, 10_000);
  const tips = processedTips(sub);
  const [missing, dup] = tally(sub, expected(new GeneratedFeed(), tips[1]!, tips[tips.length - 1]! - 2));
  t.same([missing, dup, sub.error], [0, 0, null], 'nothing missing or twice, the client stream intact');
});

t.test('a client that does not read is closed with RESOURCE_EXHAUSTED while ten others keep up', async (t) => {
  // Ten slots' worth: a client that reads may still have one slot's burst of 64 in flight.
  const h = await harness(t, { accountsPerSlot: 64, accountPool: 64 }, { maxQueuedMessages: 640, maxStreamsPerToken: 20 });
  const others = await Promise.all(Array.from({ length: 10 }, () => subscribe(h.url, TOKEN, EVERYTHING)));
  t.teardown(() => others.forEach((s) => s.close()));
  // The stalled one: a plain grpc-js client whose stream is paused, so HTTP/2 flow control
  // stops the bytes and the gateway's queue for it grows.
  const client = new grpc.Client(h.url.replace('http://', ''), grpc.credentials.createInsecure());
  t.teardown(() => client.close());
  const md = new grpc.Metadata();
  md.set('x-token', TOKEN2);
  const id = (b: Buffer): Buffer => b;
  const call = client.makeBidiStreamRequest('/geyser.Geyser/Subscribe', id, id, md);
  let status: grpc.status | null = null;
  call.on('error', (e: grpc.ServiceError) => (status = e.code));
  call.on('data', () => {});
  call.write(encodeAs(geyserType('SubscribeRequest'), { accounts: { a: {} }, slots: { s: {} } }));
  call.pause();
  const exhausted = (): Promise<boolean> =>
    h.gw.metrics.registry.metrics().then((m) => /jumpgate_grpc_streams_closed_total\{code="RESOURCE_EXHAUSTED"\} 1/.test(m));
  await eventually('the stalled stream closed', exhausted, 20_000);
  t.equal(h.gw.grpc!.hub.streams, 10, 'the ten others still open');
  const counts = others.map((s) => s.updates.length);
  await eventually('the others keep receiving', () => others.every((s, i) => s.updates.length > counts[i]! + 100), 10_000);
  call.resume();
  await eventually('the stalled client hears why (or is reset)', () => status !== null, 5000);
  t.ok(status === grpc.status.RESOURCE_EXHAUSTED || status === grpc.status.CANCELLED || status === grpc.status.INTERNAL, `status ${status}`);
  for (const s of others) {
    const tips = processedTips(s);
    const [missing, dup] = tally(
      s,
      expected(new GeneratedFeed({ seed: 1, accountsPerSlot: 64, transactionsPerSlot: 4, accountPool: 64 }), tips[1]!, tips[tips.length - 1]! - 2),
    );
    t.same([missing, dup, s.error], [0, 0, null], 'each other client: nothing missing or twice, still open');
  }
});

t.test('from_slot from the first client of a new gateway: the sources are asked for it', async (t) => {
  const h = await harness(t);
  const from = (await eventuallyTip(h)) - 20;
  const sub = await subscribe(h.url, TOKEN, { ...EVERYTHING, fromSlot: String(from) });
  t.teardown(() => sub.close());
  await eventually('caught up past from_slot + 25', () => processedTips(sub).some((tip) => tip >= from + 25), 20_000);
  const tips = processedTips(sub);
  t.equal(tips[0], from, 'starts at from_slot');
  const [missing, dup] = tally(sub, expected(new GeneratedFeed(), from, tips[tips.length - 1]! - 2, from));
  t.same([missing, dup], [0, 0], 'nothing missing or twice');
  t.ok(
    h.sources.every((s) => s.lastFromSlot === from),
    'both sources were asked for it',
  );
});

/** The sources' current tip (what a client would resume from). */
async function eventuallyTip(h: GrpcHarness): Promise<number> {
  const probe = await subscribe(h.sources[0]!.url, undefined, { slots: { s: {} } });
  await eventually('a slot from the source', () => processedTips(probe).length > 0);
  probe.close();
  return processedTips(probe)[0]!;
}

t.test('from_slot: a client resumes from a recent slot with the window kept for it', async (t) => {
  const h = await harness(t);
  const first = await subscribe(h.url, TOKEN, EVERYTHING);
  t.teardown(() => first.close());
  await eventually('10 slots', () => new Set(processedTips(first)).size >= 10, 20_000);
  const tips = processedTips(first);
  const from = tips[3]!;
  const target = Math.max(...tips) + 3;
  const resumed = await subscribe(h.url, TOKEN, { ...EVERYTHING, fromSlot: String(from) });
  t.teardown(() => resumed.close());
  await eventually(
    () => `the resumed client caught up (${resumed.updates.length} updates, ${String(resumed.error)})`,
    () => Math.max(...processedTips(resumed)) >= target,
    20_000,
  );
  const seen = processedTips(resumed);
  t.equal(seen[0], from, 'starts at from_slot');
  // Replayed: updates of slots >= from_slot (a finalized status names a slot 32 back: not replayed).
  const [missing, dup] = tally(resumed, expected(new GeneratedFeed(), from, seen[seen.length - 1]! - 2, from));
  t.same([missing, dup], [0, 0], 'replay then live: nothing missing or twice');
  const tooOld = await subscribe(h.url, TOKEN, { ...EVERYTHING, fromSlot: String(from - 10_000) });
  await eventually('refused', () => tooOld.ended);
  t.match(`${tooOld.error?.message} ${String((tooOld.error as { cause?: unknown } | null)?.cause)}`, /from_slot .* not available/);
});
