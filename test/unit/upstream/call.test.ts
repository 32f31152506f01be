// One upstream call and its attempts (src/upstream/call.ts): the retry rules of docs/routing.md
// "Retries and node health" against fake nodes whose attempts the test ends by hand.

import t from 'tap';
import { Errors } from '../../../src/errors.js';
import { UpstreamCall, type CallOwner } from '../../../src/upstream/call.js';
import { F_CONNECT, F_OTHER } from '../../../src/upstream/transport.js';
import { eventually } from '../../helpers/eventually.js';
import { FakeRouter } from '../../helpers/fake-upstream.js';

const BODY = Buffer.from('{"jsonrpc":"2.0","id":1,"method":"getSlot"}');
const ANSWER = Buffer.from('{"jsonrpc":"2.0","id":1,"result":42}');

class Owner implements CallOwner {
  readonly done: UpstreamCall[] = [];
  onCallDone(call: UpstreamCall): void {
    this.done.push(call);
  }
}

interface Spec {
  method: string;
  retrySafe: boolean;
  expectsAnswer: boolean;
  slot: number;
  timeoutMs: number;
  from: number;
  to: number;
}

function startCall(router: FakeRouter, spec: Partial<Spec> = {}): { call: UpstreamCall; owner: Owner } {
  const owner = new Owner();
  const s: Spec = { method: 'getSlot', retrySafe: true, expectsAnswer: true, slot: -1, timeoutMs: 10_000, from: 0, to: 0, ...spec };
  const call = new UpstreamCall(owner, router, BODY, s.method, s.slot, s.timeoutMs, s.retrySafe, s.expectsAnswer, s.from, s.to, null);
  call.start();
  return { call, owner };
}

/** The one attempt still open on node `i`. */
function openAttempt(router: FakeRouter, i: number) {
  const open = router.nodes[i]!.client.open();
  if (open.length !== 1) throw new Error(`node n${i} has ${open.length} open attempts`);
  return open[0]!;
}

t.test('an answer ends the call with the node, its status and its bytes as they came', async (t) => {
  const router = new FakeRouter(2);
  const { call, owner } = startCall(router);
  const n0 = router.nodes[0]!;
  t.equal(n0.inflight, 1);
  t.equal(openAttempt(router, 0).body, BODY, 'the body goes out as given');
  openAttempt(router, 0).answered(200, ANSWER);
  t.equal(owner.done.length, 1);
  t.equal(call.response, ANSWER, 'the very buffer, never re-encoded');
  t.equal(call.status, 200);
  t.equal(call.node?.id, 'n0');
  t.equal(call.error, null);
  t.equal(call.attempts, 1);
  t.same([n0.inflight, n0.requests, n0.successes, n0.failures.length], [0, 1, 1, 0]);
  t.equal(router.nodes[1]!.requests, 0);
});

t.test('a 4xx other than 429 is the node speaking: passed through, not retried', async (t) => {
  const router = new FakeRouter(2);
  const { call, owner } = startCall(router);
  const body = Buffer.from('{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"bad"}}');
  openAttempt(router, 0).answered(400, body);
  t.equal(owner.done.length, 1);
  t.equal(call.status, 400);
  t.equal(call.response, body);
  t.equal(call.attempts, 1);
});

t.test('connect failures are retried for every method, also those not safe to repeat', async (t) => {
  const router = new FakeRouter(3);
  const { call, owner } = startCall(router, { retrySafe: false });
  openAttempt(router, 0).failed(F_CONNECT, 'ECONNREFUSED');
  t.equal(owner.done.length, 0, 'not done: tried again');
  t.same(router.nodes[0]!.failures, ['ECONNREFUSED']);
  t.equal(router.nodes[0]!.inflight, 0);
  openAttempt(router, 1).answered(200, ANSWER);
  t.equal(owner.done.length, 1);
  t.equal(call.response, ANSWER, 'the second node answered');
  t.equal(call.attempts, 2);
  t.equal(call.node?.id, 'n1');

  // A deadline that passes before the request was written is a connect failure too.
  const timed = new FakeRouter(2);
  timed.nodes[0]!.client.neverWritten = true;
  const { call: c2, owner: o2 } = startCall(timed, { retrySafe: false, timeoutMs: 20 });
  await eventually('the connect timeout to move the call on', () => timed.nodes[1]!.client.open().length === 1);
  t.same(timed.nodes[0]!.failures, ['connect timeout']);
  openAttempt(timed, 1).answered(200, ANSWER);
  t.equal(o2.done.length, 1);
  t.equal(c2.attempts, 2);
});

/** Ways an attempt can end that are retried only for methods safe to repeat, with the reason logged. */
const UNSAFE_FAILURES: { name: string; reason: string; timeout?: boolean; end?: (a: ReturnType<typeof openAttempt>) => void }[] = [
  { name: 'timeout', reason: 'timeout', timeout: true },
  { name: 'HTTP 5xx', reason: 'HTTP 503', end: (a) => a.answered(503, ANSWER) },
  { name: 'a 1xx status', reason: 'HTTP 101', end: (a) => a.answered(101, ANSWER) },
  { name: 'reset', reason: 'socket hang up', end: (a) => a.failed(F_OTHER, 'socket hang up') },
  { name: 'unusable body', reason: 'unusable body', end: (a) => a.answered(200, Buffer.from('<html>busy</html>')) },
  { name: 'empty body for a call', reason: 'unusable body', end: (a) => a.answered(200, Buffer.alloc(0)) },
];

for (const f of UNSAFE_FAILURES) {
  t.test(`${f.name}: retried when retry-safe, else the call fails after one attempt`, async (t) => {
    const timeoutMs = f.timeout === true ? 20 : 10_000;
    const safe = new FakeRouter(2);
    const { call: a, owner: oa } = startCall(safe, { retrySafe: true, timeoutMs });
    if (f.end !== undefined) f.end(openAttempt(safe, 0));
    await eventually('the retry on n1', () => safe.nodes[1]!.client.open().length === 1);
    t.same(safe.nodes[0]!.failures, [f.reason]);
    openAttempt(safe, 1).answered(200, ANSWER);
    t.equal(oa.done.length, 1);
    t.equal(a.response, ANSWER);
    t.equal(a.attempts, 2);

    const unsafe = new FakeRouter(2);
    const { call: b, owner: ob } = startCall(unsafe, { retrySafe: false, timeoutMs });
    if (f.end !== undefined) f.end(openAttempt(unsafe, 0));
    await eventually('the call to fail', () => ob.done.length === 1);
    t.equal(unsafe.nodes[1]!.requests, 0, 'no second node');
    t.equal(b.error, f.timeout === true ? Errors.upstreamTimeout : Errors.upstreamFailed);
    t.same(b.errorData, { attempts: 1, reason: `n0: ${f.reason}` });
    t.equal(b.response, null);
  });
}

t.test('HTTP 429: retried for every method (the node ran nothing), no failure counted, the node cools down', async (t) => {
  const router = new FakeRouter(2);
  const { call, owner } = startCall(router, { retrySafe: false });
  const first = openAttempt(router, 0);
  first.retryAfterMs = 2000;
  first.answered(429, ANSWER);
  await eventually('the retry on n1', () => router.nodes[1]!.client.open().length === 1);
  t.same(router.nodes[0]!.failures, [], 'not a failure');
  t.equal(router.nodes[0]!.budget.limited, 1);
  t.ok(router.nodes[0]!.budget.coolUntil - performance.now() > 1500, 'cooling for its Retry-After');
  openAttempt(router, 1).answered(200, ANSWER);
  t.equal(owner.done.length, 1);
  t.equal(call.response, ANSWER);
});

t.test('a notification owes no body: an empty 2xx is success; a non-JSON body is still unusable', async (t) => {
  const router = new FakeRouter(2);
  const { call, owner } = startCall(router, { expectsAnswer: false, retrySafe: false });
  openAttempt(router, 0).answered(200, Buffer.alloc(0));
  t.equal(owner.done.length, 1);
  t.equal(call.response?.length, 0);
  t.equal(call.error, null);

  const bad = new FakeRouter(2);
  const { call: c2 } = startCall(bad, { expectsAnswer: false, retrySafe: false });
  openAttempt(bad, 0).answered(200, Buffer.from('nope'));
  t.same(c2.errorData, { attempts: 1, reason: 'n0: unusable body' });
});

t.test('at most routing.maxAttempts attempts in all', async (t) => {
  const router = new FakeRouter(5, 3);
  const { call, owner } = startCall(router);
  for (let i = 0; i < 3; i++) openAttempt(router, i).answered(500, ANSWER);
  t.equal(owner.done.length, 1);
  t.equal(call.attempts, 3);
  t.equal(call.error, Errors.upstreamFailed);
  t.same(call.errorData, { attempts: 3, reason: 'n2: HTTP 500' }, 'the last failure is reported');
  t.same(
    router.nodes.map((n) => n.requests),
    [1, 1, 1, 0, 0],
  );
});

t.test('7503 with attempts 0 when no node is available; nodes running out later keep the last failure', async (t) => {
  const none = new FakeRouter(2);
  for (const n of none.nodes) n.usable = false;
  const { call, owner } = startCall(none);
  t.equal(owner.done.length, 1, 'answered at once');
  t.equal(call.error, Errors.noNode);
  t.same(call.errorData, { attempts: 0 });

  const two = new FakeRouter(2, 3);
  const { call: c2 } = startCall(two);
  openAttempt(two, 0).answered(500, ANSWER);
  openAttempt(two, 1).failed(F_OTHER, 'ECONNRESET');
  t.equal(c2.error, Errors.upstreamFailed, 'not 7503: nodes were tried');
  t.same(c2.errorData, { attempts: 2, reason: 'n1: ECONNRESET' });
});

t.test('7504 when the last attempt timed out, 7502 when it failed otherwise', async (t) => {
  const router = new FakeRouter(2, 2);
  const { call, owner } = startCall(router, { timeoutMs: 20 });
  openAttempt(router, 0).answered(502, ANSWER);
  await eventually('the second attempt to time out', () => owner.done.length === 1);
  t.equal(call.error, Errors.upstreamTimeout);
  t.same(call.errorData, { attempts: 2, reason: 'n1: timeout' });

  const connect = new FakeRouter(1, 3);
  connect.nodes[0]!.client.neverWritten = true;
  const { call: c2, owner: o2 } = startCall(connect, { timeoutMs: 20 });
  await eventually('the connect timeout', () => o2.done.length === 1);
  t.equal(c2.error, Errors.upstreamTimeout);
  t.same(c2.errorData, { attempts: 1, reason: 'n0: connect timeout' });

  const other = new FakeRouter(2, 2);
  const { call: c3 } = startCall(other, { timeoutMs: 20 });
  await eventually('the first attempt to time out', () => other.nodes[1]!.client.open().length === 1);
  openAttempt(other, 1).failed(F_OTHER, 'closed');
  t.equal(c3.error, Errors.upstreamFailed);
  t.same(c3.errorData, { attempts: 2, reason: 'n1: closed' });
});

t.test('an attempt that timed out ignores what its client says later', async (t) => {
  const router = new FakeRouter(1, 1);
  const { call, owner } = startCall(router, { timeoutMs: 20 });
  const a = openAttempt(router, 0);
  await eventually('the timeout', () => owner.done.length === 1);
  a.answered(200, ANSWER);
  a.failed(F_OTHER, 'late');
  t.equal(owner.done.length, 1, 'told once');
  t.equal(call.response, null);
  t.equal(router.nodes[0]!.inflight, 0, 'counted out once');
  t.same(router.nodes[0]!.failures, ['timeout']);
});

t.test('calls that must not be repeated, and slow methods, get a connection to themselves', async (t) => {
  const router = new FakeRouter(1);
  startCall(router, { retrySafe: false });
  t.equal(openAttempt(router, 0).exclusive, true, 'not retry-safe');
  openAttempt(router, 0).answered(200, ANSWER);
  startCall(router, { method: 'getProgramAccounts' });
  t.equal(openAttempt(router, 0).exclusive, false, 'an ordinary call shares');
  openAttempt(router, 0).answered(200, ANSWER);
  router.methodLatency.slowMs = 50;
  for (let i = 0; i < 20; i++) router.methodLatency.record('getProgramAccounts', 400);
  startCall(router, { method: 'getProgramAccounts' });
  t.equal(openAttempt(router, 0).exclusive, true, 'usually slow');
  openAttempt(router, 0).answered(200, ANSWER);
});

t.test('the call carries its affinity slot and range for the router and its owner', async (t) => {
  const router = new FakeRouter(1);
  const { call } = startCall(router, { slot: 77, from: 4, to: 6 });
  t.same(router.slots, [77]);
  t.same([call.from, call.to], [4, 6]);
  openAttempt(router, 0).answered(200, ANSWER);
});
