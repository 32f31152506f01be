// The tracker's bounds and its one status call (docs/landing.md "Tracking"), without nodes:
// memory stays bounded whatever is sent, and a poll's batch carries every signature in
// chunks of 256 with one HTTP request.

import t from 'tap';
import { resolveConfig } from '../../../src/config/load.js';
import { slotPercentile, landedPct, emptyCounts, SLOT_BUCKETS } from '../../../src/landing/counts.js';
import { pollBody, readPollAnswer, STATUSES_PER_CALL, UNKNOWN } from '../../../src/landing/status-poll.js';
import { LandingTracker, signatureOf } from '../../../src/landing/tracker.js';
import { silentLogger } from '../../../src/log.js';
import type { UpstreamCall } from '../../../src/upstream/call.js';
import type { UpstreamNode } from '../../../src/upstream/node.js';
import { MethodLatency } from '../../../src/upstream/router.js';

function config(landing: Record<string, unknown>) {
  return resolveConfig({ chain: 'solana', nodes: [{ id: 'a', url: 'http://127.0.0.1:1' }], routing: { landing } });
}

const nodes = [
  { id: 'a', bit: 1, chain: { slot: () => 0 } },
  { id: 'b', bit: 2, chain: { slot: () => 0 } },
] as unknown as UpstreamNode[];

/** What the tracker reads of an accepted call: the answer, the request body, the nodes tried. */
function accepted(i: number, tried = 1): UpstreamCall {
  const sig = 's' + String(i).padStart(63, '0');
  return {
    response: Buffer.from(`{"jsonrpc":"2.0","result":"${sig}","id":1}`),
    body: Buffer.from('{"jsonrpc":"2.0","id":1,"method":"sendTransaction","params":["not-a-transaction"]}'),
    tried,
  } as unknown as UpstreamCall;
}

t.test('200,000 sends: at most maxTracked held, the rest counted as untracked', async (t) => {
  const tracker = new LandingTracker(config({ maxTracked: 1000 }), { nodes: () => nodes, methodLatency: new MethodLatency(1000), log: silentLogger() });
  t.teardown(() => tracker.stop());
  const heapBefore = process.memoryUsage().heapUsed;
  for (let i = 0; i < 200_000; i++) tracker.accepted(accepted(i, i % 2 === 0 ? 1 : 3), 'tok');
  t.equal(tracker.size, 1000, 'bounded by maxTracked');
  const d = tracker.tally.drain()!;
  t.equal(d.tokens['tok']!.sent, 200_000, 'every accepted send counted once for its token');
  t.equal(d.tokens['tok']!.untracked, 199_000, 'the oldest dropped, counted as untracked');
  t.equal(d.nodes['a']!.sent, 200_000, 'node a took every send');
  t.equal(d.nodes['b']!.sent, 100_000, 'node b took the broadcast copies');
  t.equal(d.tokenNodes!['tok']!['a']!.sent, 200_000, "per token and node: the token's sends to a");
  t.equal(d.tokenNodes!['tok']!['b']!.untracked, 99_500, "per token and node: the token's untracked on b");
  t.ok(process.memoryUsage().heapUsed - heapBefore < 64 * 1024 * 1024, 'heap growth bounded');
  t.equal(tracker.tally.drain(), null, 'drained: nothing until something happens');
});

t.test('maxTracked 0 tracks nothing; the same signature sent again is one transaction', async (t) => {
  const off = new LandingTracker(config({ maxTracked: 0 }), { nodes: () => nodes, methodLatency: new MethodLatency(1000), log: silentLogger() });
  off.accepted(accepted(1), 'tok');
  t.equal(off.size, 0);
  t.equal(off.tally.drain(), null);
  const on = new LandingTracker(config({}), { nodes: () => nodes, methodLatency: new MethodLatency(1000), log: silentLogger() });
  t.teardown(() => on.stop());
  on.accepted(accepted(7, 1), 'tok');
  on.accepted(accepted(7, 2), 'tok');
  t.equal(on.size, 1);
  t.same(on.peek('s' + String(7).padStart(63, '0'))!.nodes, ['a', 'b'], 'the second send credits its node too');
  const d = on.tally.drain()!;
  t.equal(d.tokens['tok']!.sent, 1);
  t.equal(d.nodes['a']!.sent + d.nodes['b']!.sent, 2);
  t.same(Object.keys(d.tokenNodes!['tok']!).sort(), ['a', 'b'], "the token's transaction on each node it went to");
});

t.test('signatureOf reads the result string, nothing else', async (t) => {
  t.equal(signatureOf(Buffer.from('{"jsonrpc":"2.0","result":"abc","id":1}')), 'abc');
  t.equal(signatureOf(Buffer.from('{"jsonrpc":"2.0","error":{"code":-32002},"id":1}')), null);
  t.equal(signatureOf(Buffer.from('{"result":"' + 'x'.repeat(100) + '"}')), null, 'no signature is that long');
});

t.test('one batch for every signature: 256 per getSignatureStatuses, then the blockhashes', async (t) => {
  const sigs = Array.from({ length: 600 }, (_, i) => 's' + i);
  const body = JSON.parse(pollBody(sigs, ['h1', 'h2'])) as { id: number; method: string; params: unknown[] }[];
  t.same(
    body.map((e) => e.method),
    ['getSlot', 'getSignatureStatuses', 'getSignatureStatuses', 'getSignatureStatuses', 'isBlockhashValid', 'isBlockhashValid'],
  );
  t.equal((body[1]!.params[0] as string[]).length, STATUSES_PER_CALL);
  t.equal((body[3]!.params[0] as string[]).length, 600 - 2 * STATUSES_PER_CALL);
  const status = { slot: 9, confirmations: 0, err: null, status: { Ok: null }, confirmationStatus: 'confirmed' };
  const answer = JSON.stringify([
    { jsonrpc: '2.0', id: 0, result: 12 },
    { jsonrpc: '2.0', id: 1, result: { context: { slot: 12 }, value: [status, null, ...new Array(254).fill(null)] } },
    { jsonrpc: '2.0', id: 2, error: { code: -32005, message: 'Node is unhealthy' } },
    { jsonrpc: '2.0', id: 3, result: { context: { slot: 12 }, value: new Array(88).fill({ ...status, err: { InstructionError: [0, 'Custom'] } }) } },
    { jsonrpc: '2.0', id: 4, result: { context: { slot: 12 }, value: false } },
    { jsonrpc: '2.0', id: 5, result: { context: { slot: 12 }, value: true } },
  ]);
  const r = readPollAnswer(answer, sigs, ['h1', 'h2'])!;
  t.equal(r.slot, 12);
  t.same(r.statuses[0], { slot: 9, level: 1, failed: false });
  t.equal(r.statuses[1], null, 'no status');
  t.equal(r.statuses[256], UNKNOWN, 'a failed chunk is unknown, never "no status"');
  t.same(r.statuses[599], { slot: 9, level: 1, failed: true });
  t.same(
    [...r.valid],
    [
      ['h1', false],
      ['h2', true],
    ],
  );
  t.equal(readPollAnswer('not json', sigs, []), null);
  t.equal(readPollAnswer('{"jsonrpc":"2.0","id":1,"result":1}', sigs, []), null, 'not a batch answer');
});

t.test('slots-to-land percentiles and landed share', async (t) => {
  const c = emptyCounts();
  t.equal(slotPercentile(c.slots, 50), null);
  t.equal(landedPct(c), null);
  c.slots[1] = 5;
  c.slots[3] = 4;
  c.slots[SLOT_BUCKETS - 1] = 1;
  t.equal(slotPercentile(c.slots, 50), 1);
  t.equal(slotPercentile(c.slots, 90), 3);
  t.equal(slotPercentile(c.slots, 100), SLOT_BUCKETS - 1);
  c.landed = 7;
  c.failed = 1;
  c.expired = 2;
  t.equal(landedPct(c), 70);
});
