// The subscription hub with fake node sockets and fake clients: identical subscriptions share
// one upstream subscription, the last client leaving cancels it, and a node turning unusable
// moves its subscriptions to another node under the same client ids.

import t from 'tap';
import { silentLogger } from '../../../../src/log.js';
import type { NodeSocket, NodeSocketEvents } from '../../../../src/upstream/ws/hub.js';
import { SubscriptionHub } from '../../../../src/upstream/ws/hub.js';
import type { Reply } from '../../../../src/upstream/ws/node-socket.js';
import { FakeSubscriber } from '../../../helpers/fake-subscriber.js';
import { fakeNodes, type FakeNode, type FakeNodeSpec } from '../../../helpers/fake-node.js';

/** A node socket that records what the hub asks and answers when the test says so. */
class FakeSocket implements NodeSocket {
  closed = false;
  /** Every request and fire-and-forget send, in order: "method params". */
  readonly log: string[] = [];
  private readonly pending = new Map<number, Reply>();
  private nextId = 1;

  constructor(
    readonly node: FakeNode,
    private readonly events: NodeSocketEvents,
  ) {}

  request(method: string, paramsJson: string, reply: Reply): void {
    if (this.closed) return reply(null, 'node socket closed');
    this.log.push(`${method} ${paramsJson}`);
    this.pending.set(this.nextId++, reply);
  }

  send(method: string, paramsJson: string): void {
    this.request(method, paramsJson, () => undefined);
  }

  /** Answers the request with id `id` (1 = the first request on this socket). */
  answer(id: number, resultJson: string): void {
    const reply = this.pending.get(id)!;
    this.pending.delete(id);
    reply(Buffer.from(`{"jsonrpc":"2.0","result":${resultJson},"id":${id}}`), null);
  }

  /** Refuses the request with id `id` with a JSON-RPC error. */
  refuse(id: number, code: number, message: string): void {
    const reply = this.pending.get(id)!;
    this.pending.delete(id);
    reply(Buffer.from(`{"jsonrpc":"2.0","error":{"code":${code},"message":${JSON.stringify(message)}},"id":${id}}`), null);
  }

  notify(upstreamId: string, slot: number): void {
    this.events.notification(
      this,
      Buffer.from(
        `{"jsonrpc":"2.0","method":"slotNotification","params":{"result":{"parent":${slot - 1},"root":${slot - 32},"slot":${slot}},"subscription":${upstreamId}}}`,
      ),
    );
  }

  /** As UpstreamSocket does: the hub hears first, then unanswered requests fail. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.events.closed(this, 'closed by gateway');
    const replies = [...this.pending.values()];
    this.pending.clear();
    for (const r of replies) r(null, 'closed by gateway');
  }
}

function setup(specs: FakeNodeSpec[] = [{}, {}]): { hub: SubscriptionHub<FakeNode>; nodes: FakeNode[]; sockets: FakeSocket[] } {
  const nodes = fakeNodes(specs);
  const sockets: FakeSocket[] = [];
  const hub = new SubscriptionHub<FakeNode>({ nodes }, { chain: 'solana', maxSubscriptionsPerConnection: 10 }, silentLogger(), (node, events) => {
    const s = new FakeSocket(node, events);
    sockets.push(s);
    return s;
  });
  return { hub, nodes, sockets };
}

const slotOf = (note: string): number => (JSON.parse(note) as { params: { result: { slot: number } } }).params.result.slot;
const subOf = (note: string): unknown => (JSON.parse(note) as { params: { subscription: unknown } }).params.subscription;

t.test('identical subscriptions share one upstream subscription; each client gets its own id', async (t) => {
  const { hub, sockets } = setup();
  const a = new FakeSubscriber();
  const b = new FakeSubscriber();
  hub.subscribe(a, 'slotSubscribe', undefined, '1');
  hub.subscribe(b, 'slotSubscribe', [], '"x"');
  t.equal(sockets.length, 1, 'one node socket');
  t.same(sockets[0]!.log, ['slotSubscribe []'], 'one upstream subscribe');
  t.same(a.sent, [], 'clients wait for the node');

  sockets[0]!.answer(1, '777');
  t.same(a.sent, ['{"jsonrpc":"2.0","result":0,"id":1}']);
  t.same(b.sent, ['{"jsonrpc":"2.0","result":1,"id":"x"}']);
  t.same(hub.upstreamSubscriptions(), { [sockets[0]!.node.id]: 1 });
  t.equal(hub.sharedCount, 1);

  const c = new FakeSubscriber();
  hub.subscribe(c, 'slotSubscribe', [], '5');
  t.same(c.sent, ['{"jsonrpc":"2.0","result":2,"id":5}'], 'a later client is confirmed at once');
  t.equal(sockets[0]!.log.length, 1, 'still one upstream subscribe');

  sockets[0]!.notify('777', 100);
  t.same(
    [a, b, c].map((x) => x.notes.map(subOf)),
    [[0], [1], [2]],
    'one notification, rewritten per client id',
  );
  t.same(
    [a, b, c].map((x) => x.notes.map(slotOf)),
    [[100], [100], [100]],
  );

  hub.subscribe(a, 'slotSubscribe', [], '2');
  t.match(a.sent.at(-1), /"id":2/, 'the same client subscribing twice gets an error');
  t.match(a.sent.at(-1), /"error"/);
  t.equal(a.outcomes.at(-1), 'slotSubscribe failed', 'booked as a failed call');
  t.equal(sockets[0]!.log.length, 1);
});

t.test('a subscription the node refuses is answered to each waiting client as a failed call', async (t) => {
  const { hub, sockets } = setup();
  const a = new FakeSubscriber();
  const b = new FakeSubscriber();
  hub.subscribe(a, 'signatureSubscribe', ['bad'], '1');
  hub.subscribe(b, 'signatureSubscribe', ['bad'], '2');
  sockets[0]!.refuse(1, -32602, 'Invalid params');
  t.match(a.sent, [/"error":\{"code":-32602/]);
  t.same([a.outcomes, b.outcomes], [['signatureSubscribe failed'], ['signatureSubscribe failed']]);
  t.equal(hub.sharedCount, 0, 'nothing left waiting for it');
});

t.test('different params are different upstream subscriptions', async (t) => {
  const { hub, sockets } = setup();
  const a = new FakeSubscriber();
  hub.subscribe(a, 'accountSubscribe', ['Acc1', { commitment: 'confirmed', encoding: 'base64' }], '1');
  hub.subscribe(a, 'accountSubscribe', ['Acc1', { encoding: 'base64', commitment: 'confirmed' }], '2');
  hub.subscribe(a, 'accountSubscribe', ['Acc2'], '3');
  t.equal(hub.sharedCount, 2, 'key order in params does not matter, the account does');
  t.same(sockets.flatMap((s) => s.log).sort(), ['accountSubscribe ["Acc1",{"commitment":"confirmed","encoding":"base64"}]', 'accountSubscribe ["Acc2"]']);
});

t.test('the last client leaving cancels the upstream subscription', async (t) => {
  const { hub, sockets } = setup();
  const a = new FakeSubscriber();
  const b = new FakeSubscriber();
  hub.subscribe(a, 'slotSubscribe', [], '1');
  hub.subscribe(b, 'slotSubscribe', [], '1');
  sockets[0]!.answer(1, '42');
  const socket = sockets[0]!;

  hub.unsubscribe(a, 'slotUnsubscribe', [0], '2');
  t.same(a.sent.at(-1), '{"jsonrpc":"2.0","result":true,"id":2}');
  t.same(socket.log, ['slotSubscribe []'], 'b still listens: nothing sent upstream');
  socket.notify('42', 7);
  t.same([a.notes.length, b.notes.length], [0, 1], 'only b is notified');

  hub.unsubscribe(a, 'slotUnsubscribe', [0], '3');
  t.match(a.sent.at(-1), /Invalid subscription id/, 'an id already released is refused');
  t.same(a.outcomes, ['slotSubscribe ok', 'slotUnsubscribe ok', 'slotUnsubscribe failed'], 'each answer names its call and outcome');

  hub.dropClient(b);
  t.same(socket.log, ['slotSubscribe []', 'slotUnsubscribe [42]'], 'the last client gone: cancelled upstream');
  t.equal(hub.sharedCount, 0);
  t.same(hub.upstreamSubscriptions(), { [socket.node.id]: 0 }, 'the socket stays open, holding none');
});

t.test('a client leaving before the node answered: the late subscription is cancelled', async (t) => {
  const { hub, sockets } = setup();
  const a = new FakeSubscriber();
  hub.subscribe(a, 'slotSubscribe', [], '1');
  hub.dropClient(a);
  sockets[0]!.answer(1, '9');
  t.same(sockets[0]!.log, ['slotSubscribe []', 'slotUnsubscribe [9]']);
  t.same(a.sent, [], 'nothing sent to the client that left');
});

t.test('subscriptions go to nodes answering probes; elsewhere only when none is left', async (t) => {
  const { hub, nodes, sockets } = setup([{ state: 'unhealthy', ewmaMs: 0.01 }, { state: 'lagging', ewmaMs: 50 }, { state: 'ejected' }]);
  const a = new FakeSubscriber();
  hub.subscribe(a, 'slotSubscribe', [], '1');
  t.equal(sockets[0]!.node, nodes[1], 'the lagging node, not the faster unhealthy one');
  nodes[1]!.drained = true;
  hub.subscribe(a, 'rootSubscribe', [], '2');
  t.equal(sockets[1]!.node, nodes[0], 'no node answering probes takes traffic: the unhealthy one');
});

t.test('nodeUnusable moves subscriptions to another node under the same client ids', async (t) => {
  const { hub, nodes, sockets } = setup([{}, {}]);
  const a = new FakeSubscriber();
  const b = new FakeSubscriber();
  hub.subscribe(a, 'slotSubscribe', [], '1');
  hub.subscribe(b, 'slotSubscribe', [], '1');
  const first = sockets[0]!;
  first.answer(1, '5');
  const ids = [a.lastId(), b.lastId()];
  first.notify('5', 100);

  first.node.state = 'unhealthy';
  hub.nodeUnusable(first.node);
  t.equal(first.closed, true, 'the node socket is closed');
  t.equal(sockets.length, 2, 'a socket to the other node');
  const second = sockets[1]!;
  t.not(second.node, first.node);
  t.ok(nodes.includes(second.node));
  t.same(second.log, ['slotSubscribe []'], 'subscribed again there');
  t.same(hub.upstreamSubscriptions(), {}, 'nothing active while the new node has not answered');

  second.answer(1, '8');
  t.same([a.sent.length, b.sent.length], [1, 1], 'no second confirmation: the clients keep their ids');
  t.same(hub.upstreamSubscriptions(), { [second.node.id]: 1 });
  second.notify('8', 100); // the new node repeats a slot already sent
  second.notify('8', 99); // or lags
  second.notify('8', 101);
  t.same(a.notes.map(slotOf), [100, 101], 'slots never repeat or go backwards across the move');
  t.same(a.notes.map(subOf).map(String), [ids[0], ids[0]], "a's id is unchanged");
  t.same(b.notes.map(subOf).map(String), [ids[1], ids[1]], "b's id is unchanged");

  hub.nodeUnusable(first.node);
  t.equal(sockets.length, 2, 'a node without a socket: nothing to move');
});

t.test('a node socket dropping moves its subscriptions too', async (t) => {
  const { hub, sockets } = setup([{}, {}]);
  const a = new FakeSubscriber();
  hub.subscribe(a, 'slotSubscribe', [], '1');
  sockets[0]!.answer(1, '3');
  sockets[0]!.close();
  t.equal(sockets.length, 2);
  t.not(sockets[1]!.node, sockets[0]!.node, 'the node whose socket dropped is avoided for a while');
  t.same(sockets[1]!.log, ['slotSubscribe []']);
});

t.test('an unhealthy node is taken only when nothing answering probes is left, avoided or not', async (t) => {
  const { hub, nodes, sockets } = setup([{}, { state: 'unhealthy' }]);
  const a = new FakeSubscriber();
  hub.subscribe(a, 'slotSubscribe', [], '1');
  t.equal(sockets[0]!.node, nodes[0]);
  sockets[0]!.answer(1, '3');
  sockets[0]!.close();
  t.equal(sockets[1]!.node, nodes[0], 'back to the healthy node whose socket just dropped, not to the unhealthy one');
});

t.test('after close, dropped sockets place nothing', async (t) => {
  const { hub, sockets } = setup([{}, {}]);
  const a = new FakeSubscriber();
  hub.subscribe(a, 'slotSubscribe', [], '1');
  sockets[0]!.answer(1, '3');
  hub.close();
  t.equal(sockets[0]!.closed, true);
  t.equal(sockets.length, 1, 'no new socket');
});
