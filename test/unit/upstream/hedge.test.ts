// Hedged reads in the call layer (src/upstream/hedge.ts, call.ts): the per node × method
// percentile, the clamped delay, the hedge attempt, and what happens to the attempt that lost.

import t from 'tap';
import { UpstreamCall, type CallOwner } from '../../../src/upstream/call.js';
import { HedgePlan, LatencyBuckets } from '../../../src/upstream/hedge.js';
import { eventually } from '../../helpers/eventually.js';
import { FakeRouter } from '../../helpers/fake-upstream.js';
import type { CallEvent } from '../../../src/metrics/recorder.js';

const BODY = Buffer.from('{"jsonrpc":"2.0","id":1,"method":"getBalance","params":["A"]}');
const answer = (node: string) => Buffer.from(`{"jsonrpc":"2.0","id":1,"result":"${node}"}`);

class Owner implements CallOwner {
  readonly done: UpstreamCall[] = [];
  onCallDone(call: UpstreamCall): void {
    this.done.push(call);
  }
}

class Events {
  readonly seen: CallEvent[] = [];
  callEvent(kind: CallEvent): void {
    this.seen.push(kind);
  }
}

function hedgedCall(router: FakeRouter, plan: HedgePlan, slot = -1) {
  const owner = new Owner();
  const events = new Events();
  const call = new UpstreamCall(owner, router, BODY, 'getBalance', slot, 10_000, true, true, 0, 0, { fanoutFor: () => 1, hedgeFor: () => plan, events });
  call.start();
  return { call, owner, events };
}

t.test('percentile: untrusted below 20 answers, then the bucket bound of the p-th answer', async (t) => {
  const b = new LatencyBuckets();
  for (let i = 0; i < 19; i++) b.record(1);
  t.equal(b.percentile(0.9), -1);
  for (let i = 0; i < 81; i++) b.record(1);
  for (let i = 0; i < 10; i++) b.record(200);
  const p90 = b.percentile(0.9);
  t.ok(p90 >= 1 && p90 < 1.5, `p90 ${p90}`);
  t.ok(b.percentile(0.99) >= 200, `p99 ${b.percentile(0.99)}`);
  for (let i = 0; i < 5000; i++) b.record(50);
  t.ok(b.total < 2048, 'counts decay: the histogram follows recent answers');
  const recent = b.percentile(0.5);
  t.ok(recent >= 50 && recent < 80, `p50 follows recent answers: ${recent}`);
});

t.test('delay: maxDelayMs without samples, the percentile clamped to [minDelayMs, maxDelayMs]', async (t) => {
  const plan = new HedgePlan('getBalance', { percentile: 90, minDelayMs: 5, maxDelayMs: 80, maxExtra: 1 });
  t.equal(plan.delayFor(1), 80);
  for (let i = 0; i < 50; i++) plan.record(1, 0.5);
  t.equal(plan.delayFor(1), 5, 'fast node: minDelayMs');
  for (let i = 0; i < 50; i++) plan.record(2, 30);
  const d = plan.delayFor(2);
  t.ok(d >= 30 && d < 45, `in range: the node's p90 (${d})`);
  for (let i = 0; i < 50; i++) plan.record(4, 500);
  t.equal(plan.delayFor(4), 80, 'slow node: maxDelayMs');
});

t.test("delay: a node with too few answers of its own waits the method's percentile over all nodes", async (t) => {
  const plan = new HedgePlan('getBalance', { percentile: 90, minDelayMs: 2, maxDelayMs: 100, maxExtra: 1 });
  for (let i = 0; i < 200; i++) plan.record(1, 0.4);
  for (let i = 0; i < 5; i++) plan.record(2, 0.4);
  t.equal(plan.delayFor(2), 2, 'five answers: the pooled p90 (fast), clamped to minDelayMs, not maxDelayMs');
  t.equal(plan.delayFor(8), 2, 'a node never answered yet: the pooled p90');
  for (let i = 0; i < 50; i++) plan.record(2, 30);
  const own = plan.delayFor(2);
  t.ok(own >= 30 && own < 45, `enough answers: the node's own p90 (${own})`);
});

t.test('the hedge fires after the delay; the first answer wins; a queued loser is taken back', async (t) => {
  const router = new FakeRouter(2);
  const plan = new HedgePlan('getBalance', { percentile: 90, minDelayMs: 1, maxDelayMs: 20, maxExtra: 1 });
  router.nodes[0]!.client.queued = true;
  const { call, owner, events } = hedgedCall(router, plan);
  t.equal(router.nodes[1]!.client.attempts.length, 0);
  await eventually('hedge sent', () => router.nodes[1]!.client.attempts.length === 1, 2000, 2);
  t.same(events.seen, ['hedge_fired']);
  router.nodes[1]!.client.attempts[0]!.answered(200, answer('n1'));
  t.equal(owner.done.length, 1);
  t.equal(call.node?.id, 'n1');
  t.equal(call.nodesTried, 'n0,n1');
  t.same(events.seen, ['hedge_fired', 'hedge_won']);
  t.equal(router.nodes[0]!.client.withdrawn.length, 1, 'the unsent first attempt was withdrawn');
  t.equal(router.nodes[0]!.inflight, 0, 'and no longer in flight');
  t.equal(call.live, 0);
});

t.test('a written loser stays: its late answer is recorded for latency and ignored', async (t) => {
  const router = new FakeRouter(2);
  const plan = new HedgePlan('getBalance', { percentile: 90, minDelayMs: 1, maxDelayMs: 10, maxExtra: 1 });
  const { call, owner } = hedgedCall(router, plan);
  await eventually('hedge sent', () => router.nodes[1]!.client.attempts.length === 1, 2000, 2);
  router.nodes[1]!.client.attempts[0]!.answered(200, answer('n1'));
  t.equal(router.nodes[0]!.inflight, 1, 'the first node still has it');
  router.nodes[0]!.client.attempts[0]!.answered(200, answer('n0'));
  t.equal(owner.done.length, 1, 'told once');
  t.equal(call.node?.id, 'n1');
  t.equal(router.nodes[0]!.inflight, 0);
  t.equal(router.nodes[0]!.successes, 1, 'the late answer counts for the node');
});

t.test('the first answers in time: no hedge; a failure waits for the hedge still running', async (t) => {
  const router = new FakeRouter(3);
  const plan = new HedgePlan('getBalance', { percentile: 90, minDelayMs: 1, maxDelayMs: 30, maxExtra: 1 });
  const a = hedgedCall(router, plan);
  router.nodes[0]!.client.attempts[0]!.answered(200, answer('n0'));
  // The answer cleared the hedge timer: nothing is left that could send a hedge later.
  t.equal(a.call.hedgeTimer, null, 'the hedge timer is gone with the answer');
  t.equal(router.nodes[1]!.client.attempts.length, 0, 'no hedge after an answer');

  const b = hedgedCall(router, plan);
  const first = router.nodes[0]!.client.attempts[1]!;
  await eventually('hedge sent', () => router.nodes[1]!.client.attempts.length === 1, 2000, 2);
  first.failed(3, 'reset');
  t.equal(b.owner.done.length, 0, 'the hedge may still answer');
  t.equal(router.nodes[2]!.client.attempts.length, 0, 'no retry while the hedge runs');
  router.nodes[1]!.client.attempts[0]!.answered(200, answer('n1'));
  t.equal(b.call.node?.id, 'n1');
});

t.test('under affinity (a slot) a call is never hedged', async (t) => {
  const router = new FakeRouter(2);
  const plan = new HedgePlan('getBalance', { percentile: 90, minDelayMs: 1, maxDelayMs: 5, maxExtra: 1 });
  const { call } = hedgedCall(router, plan, 42);
  // No plan and no timer: nothing could send a hedge later.
  t.equal(call.hedge, null);
  t.equal(call.hedgeTimer, null, 'no hedge timer was set');
  t.equal(router.nodes[1]!.client.attempts.length, 0);
  router.nodes[0]!.client.attempts[0]!.answered(200, answer('n0'));
});
