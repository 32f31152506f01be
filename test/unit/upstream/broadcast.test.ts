// Broadcast sends in the call layer (src/upstream/call.ts): all nodes at once, the first result
// wins, else the best-ranked node error, else 7502 with every reason; never retried.

import t from 'tap';
import { Errors } from '../../../src/errors.js';
import { UpstreamCall, type CallOwner } from '../../../src/upstream/call.js';
import { F_CONNECT, F_OTHER, type AttemptSink } from '../../../src/upstream/transport.js';
import { FakeRouter } from '../../helpers/fake-upstream.js';

const BODY = Buffer.from('{"jsonrpc":"2.0","id":1,"method":"sendTransaction","params":["AQID"]}');
const result = (n: string) => Buffer.from(`{"jsonrpc":"2.0","id":1,"result":"${n}"}`);
const error = (n: string) => Buffer.from(`{"jsonrpc":"2.0","id":1,"error":{"code":-32002,"message":"${n}"}}`);

class Owner implements CallOwner {
  readonly done: UpstreamCall[] = [];
  onCallDone(call: UpstreamCall): void {
    this.done.push(call);
  }
}

function broadcast(router: FakeRouter, fanout = 3) {
  const owner = new Owner();
  const reach = { fanoutFor: () => fanout, hedgeFor: () => null, events: { callEvent: () => {} } };
  const call = new UpstreamCall(owner, router, BODY, 'sendTransaction', -1, 10_000, true, true, 0, 0, reach);
  call.start();
  const at = (i: number): AttemptSink => router.nodes[i]!.client.attempts.at(-1)!;
  return { call, owner, at };
}

t.test('every node at once; the first result wins; later answers are only recorded', async (t) => {
  const router = new FakeRouter(3);
  const { call, owner, at } = broadcast(router);
  t.same(
    router.nodes.map((n) => n.client.attempts.length),
    [1, 1, 1],
  );
  t.equal(call.nodesTried, 'n0,n1,n2');
  at(1).answered(200, error('n1'));
  t.equal(owner.done.length, 0, 'an error answer waits for the others');
  at(2).answered(200, result('n2'));
  t.equal(owner.done.length, 1);
  t.equal(call.node?.id, 'n2');
  t.same(call.response, result('n2'));
  at(0).answered(200, result('n0'));
  t.equal(owner.done.length, 1, 'told once');
  t.equal(router.nodes[0]!.successes, 1);
  t.same(
    router.nodes.map((n) => n.inflight),
    [0, 0, 0],
  );
});

t.test('no result: the best-ranked node error answer, whatever the order they came in', async (t) => {
  const router = new FakeRouter(3);
  const { call, owner, at } = broadcast(router);
  at(1).answered(200, error('n1'));
  at(2).failed(F_OTHER, 'reset');
  t.equal(owner.done.length, 0);
  at(0).answered(200, error('n0'));
  t.equal(owner.done.length, 1);
  t.same(call.response, error('n0'), "the first node's, unchanged");
  t.equal(call.node?.id, 'n0');
});

t.test('nobody answers: 7502 with every reason; no retry, not even for a connect failure', async (t) => {
  const router = new FakeRouter(4);
  const { call, owner, at } = broadcast(router);
  at(0).failed(F_CONNECT, 'ECONNREFUSED');
  at(1).answered(500, Buffer.from('oops'));
  at(2).failed(F_OTHER, 'reset');
  t.equal(owner.done.length, 1);
  t.equal(call.error, Errors.upstreamFailed);
  t.same(call.errorData, { attempts: 3, reason: 'n0: ECONNREFUSED', reasons: ['n0: ECONNREFUSED', 'n1: HTTP 500', 'n2: reset'] });
  t.equal(router.nodes[3]!.client.attempts.length, 0, 'the fourth node never got it');
});

t.test('a client that fails an attempt inside send does not end the broadcast early', async (t) => {
  const router = new FakeRouter(3);
  const c0 = router.nodes[0]!.client;
  c0.send = (a) => {
    c0.attempts.push(a);
    a.failed(F_CONNECT, 'node is closing');
  };
  const { call, owner, at } = broadcast(router);
  t.same(
    router.nodes.map((n) => n.client.attempts.length),
    [1, 1, 1],
    'the others were still sent',
  );
  t.equal(owner.done.length, 0);
  at(1).answered(200, result('n1'));
  t.equal(call.node?.id, 'n1');
  at(2).answered(200, result('n2'));

  const all = new FakeRouter(2);
  for (const n of all.nodes) {
    n.client.send = (a) => {
      n.client.attempts.push(a);
      a.failed(F_CONNECT, 'node is closing');
    };
  }
  const b = broadcast(all, 2);
  t.equal(b.owner.done.length, 1, 'every node failed at once: ended once, after sending');
  t.same(b.call.errorData?.reasons, ['n0: node is closing', 'n1: node is closing']);
});

t.test('only usable nodes are added; fanout 1 is a plain call', async (t) => {
  const router = new FakeRouter(3);
  router.nodes[1]!.state = 'unhealthy';
  const { call } = broadcast(router);
  t.same(
    router.nodes.map((n) => n.client.attempts.length),
    [1, 0, 0],
    'the router offered n1 (unhealthy): no more nodes',
  );
  t.equal(call.nodesTried, '');
  router.nodes[0]!.client.attempts[0]!.answered(200, result('n0'));
  const plain = new FakeRouter(2);
  const p = broadcast(plain, 1);
  p.at(0).failed(F_OTHER, 'reset');
  t.equal(plain.nodes[1]!.client.attempts.length, 1, 'fanout 1: retried as usual');
  p.at(1).answered(200, result('n1'));
});
