// ws.redundancy: the delivery window's rules read from the node's bytes (slot, account state,
// program account, logs, signature, slotsUpdates), its memory bound, and the hub placing a
// subscription on several nodes, delivering each notification once and re-placing a lost one.

import t from 'tap';
import { silentLogger } from '../../../../src/log.js';
import { DELIVER, DeliveryWindow, DUPLICATE, FINAL, LATE, SEEN_MAX, STREAMS_MAX } from '../../../../src/upstream/ws/dedup.js';
import type { NodeSocket, NodeSocketEvents } from '../../../../src/upstream/ws/hub.js';
import { SubscriptionHub } from '../../../../src/upstream/ws/hub.js';
import type { Reply } from '../../../../src/upstream/ws/node-socket.js';
import { eventually } from '../../../helpers/eventually.js';
import { FakeSubscriber } from '../../../helpers/fake-subscriber.js';
import { fakeNodes, type FakeNode } from '../../../helpers/fake-node.js';

const frame = (method: string, result: string, sub = '7'): Buffer =>
  Buffer.from(`{"jsonrpc":"2.0","method":"${method}","params":{"result":${result},"subscription":${sub}}}`);
const slot = (n: number, sub?: string): Buffer => frame('slotNotification', `{"parent":${n - 1},"root":${n - 32},"slot":${n}}`, sub);
const account = (n: number, lamports: number, sub?: string): Buffer =>
  frame(
    'accountNotification',
    `{"context":{"slot":${n}},"value":{"lamports":${lamports},"data":["","base64"],"owner":"11111111111111111111111111111111"}}`,
    sub,
  );

t.test('slot streams: each slot once, never an older one', async (t) => {
  const w = new DeliveryWindow('slot');
  t.equal(w.admit(slot(10)), DELIVER);
  t.equal(w.admit(slot(10)), DUPLICATE, 'the second node sends slot 10 too');
  t.equal(w.admit(slot(12)), DELIVER);
  t.equal(w.admit(slot(11)), LATE, 'the slower node is still at 11');
  t.equal(w.admit(frame('rootNotification', '40')), DELIVER, 'a root is its result');
  t.equal(w.admit(frame('rootNotification', '40')), DUPLICATE);
  const block = new DeliveryWindow('slot');
  const b = (n: number): Buffer => frame('blockNotification', `{"context":{"slot":${n}},"value":{"slot":${n},"block":null,"err":null}}`);
  t.equal(block.admit(b(5)), DELIVER);
  t.equal(block.admit(b(5)), DUPLICATE, 'blocks by context slot');
  t.equal(block.admit(b(4)), LATE);
  t.equal(w.admit(Buffer.from('{"jsonrpc":"2.0","method":"slotNotification","params":{"subscription":7}}')), DELIVER, 'an unknown shape is not dropped');
});

t.test('slotsUpdates: each (slot, type) once, in order per type', async (t) => {
  const w = new DeliveryWindow('slotsUpdates');
  const u = (n: number, type: string): Buffer => frame('slotsUpdatesNotification', `{"slot":${n},"timestamp":1,"type":"${type}"}`);
  t.equal(w.admit(u(9, 'firstShredReceived')), DELIVER);
  t.equal(w.admit(u(8, 'completed')), DELIVER, 'another type has its own order');
  t.equal(w.admit(u(9, 'firstShredReceived')), DUPLICATE);
  t.equal(w.admit(u(9, 'completed')), DELIVER);
  t.equal(w.admit(u(8, 'completed')), LATE);
});

t.test('accounts: one state per (slot, bytes), in slot order', async (t) => {
  const w = new DeliveryWindow('account');
  t.equal(w.admit(account(100, 1)), DELIVER);
  t.equal(w.admit(account(100, 1)), DUPLICATE, 'the same state at the same slot from the other node');
  t.equal(w.admit(account(100, 2)), DELIVER, 'a second change within the slot');
  t.equal(w.admit(account(100, 2)), DUPLICATE);
  t.equal(w.admit(account(101, 1)), DELIVER, 'back to an older value at a new slot');
  t.equal(w.admit(account(100, 3)), LATE, 'an older slot after a newer one');

  const p = new DeliveryWindow('program');
  const prog = (key: string, n: number, lamports: number): Buffer =>
    frame('programNotification', `{"context":{"slot":${n}},"value":{"pubkey":"${key}","account":{"lamports":${lamports}}}}`);
  t.equal(p.admit(prog('A', 50, 1)), DELIVER);
  t.equal(p.admit(prog('B', 49, 1)), DELIVER, 'slot order is per account');
  t.equal(p.admit(prog('A', 50, 1)), DUPLICATE);
  t.equal(p.admit(prog('B', 48, 1)), LATE);
});

t.test('logs by (signature, slot); a signature notification once, then nothing', async (t) => {
  const w = new DeliveryWindow('logs');
  const l = (sig: string, n: number): Buffer => frame('logsNotification', `{"context":{"slot":${n}},"value":{"signature":"${sig}","err":null,"logs":[]}}`);
  t.equal(w.admit(l('s1', 5)), DELIVER);
  t.equal(w.admit(l('s2', 5)), DELIVER);
  t.equal(w.admit(l('s1', 5)), DUPLICATE);
  t.equal(w.admit(l('s1', 4)), DELIVER, 'no order between transactions');

  const s = new DeliveryWindow('signature');
  t.equal(s.admit(frame('signatureNotification', '{"context":{"slot":9},"value":"receivedSignature"}')), DELIVER);
  t.equal(s.admit(frame('signatureNotification', '{"context":{"slot":9},"value":"receivedSignature"}')), DUPLICATE);
  t.equal(s.admit(frame('signatureNotification', '{"context":{"slot":9},"value":{"err":null}}')), FINAL);
  t.equal(s.admit(frame('signatureNotification', '{"context":{"slot":10},"value":{"err":null}}')), DUPLICATE, 'the other node is too late');
});

t.test('the window stays bounded whatever the nodes send', async (t) => {
  const a = new DeliveryWindow('account');
  for (let i = 0; i < SEEN_MAX * 3; i++) a.admit(account(1000, i));
  t.ok(a.size <= SEEN_MAX + 1, `account window: ${a.size} entries`);
  const p = new DeliveryWindow('program');
  for (let i = 0; i < STREAMS_MAX * 3; i++) p.admit(frame('programNotification', `{"context":{"slot":${i}},"value":{"pubkey":"K${i}","account":{}}}`));
  t.ok(p.size <= SEEN_MAX + STREAMS_MAX, `program window: ${p.size} entries`);
});

/** A node socket that answers every subscribe with an id at once and lets the test send frames. */
class FakeSocket implements NodeSocket {
  closed = false;
  readonly log: string[] = [];
  private nextId = 1;

  constructor(
    readonly node: FakeNode,
    private readonly events: NodeSocketEvents,
    private readonly refuse: boolean,
  ) {}

  request(method: string, paramsJson: string, reply: Reply): void {
    if (this.closed) return reply(null, 'node socket closed');
    this.log.push(`${method} ${paramsJson}`);
    const id = this.nextId++;
    const body = this.refuse ? `"error":{"code":-32601,"message":"Method not found"}` : `"result":${id + 40}`;
    queueMicrotask(() => reply(Buffer.from(`{"jsonrpc":"2.0",${body},"id":${id}}`), null));
  }

  send(method: string, paramsJson: string): void {
    this.request(method, paramsJson, () => undefined);
  }

  emit(f: Buffer): void {
    this.events.notification(this, f);
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.events.closed(this, 'closed by gateway');
  }
}

function setup(count: number, redundancy: number, refusing: string[] = []) {
  const nodes = fakeNodes(Array.from({ length: count }, () => ({})));
  const sockets = new Map<string, FakeSocket>();
  const hub = new SubscriptionHub<FakeNode>({ nodes }, { chain: 'solana', maxSubscriptionsPerConnection: 10, redundancy }, silentLogger(), (node, events) => {
    const s = new FakeSocket(node, events, refusing.includes(node.id));
    sockets.set(node.id, s);
    return s;
  });
  return { hub, nodes, sockets };
}

const settle = (): Promise<void> => new Promise((r) => setImmediate(r));
const slotsOf = (c: FakeSubscriber): number[] => c.notes.map((n) => (JSON.parse(n) as { params: { result: { slot: number } } }).params.result.slot);

t.test('redundancy 2: two nodes hold it, each slot reaches the client once, a lost node is replaced', async (t) => {
  const { hub, sockets } = setup(3, 2);
  const c = new FakeSubscriber();
  hub.subscribe(c, 'slotSubscribe', undefined, '1');
  await settle();
  t.same(c.sent, ['{"jsonrpc":"2.0","result":0,"id":1}'], 'confirmed once');
  const held = [...sockets.values()];
  t.equal(held.length, 2, 'placed on two distinct nodes');
  t.same(Object.values(hub.upstreamSubscriptions()), [1, 1], 'each placement counts');
  const [a, b] = held as [FakeSocket, FakeSocket];
  a.emit(slot(1, '41'));
  b.emit(slot(1, '41'));
  b.emit(slot(2, '41'));
  a.emit(slot(2, '41'));
  a.emit(slot(3, '41'));
  t.same(slotsOf(c), [1, 2, 3]);
  const counts = hub.redundancyCounts();
  t.same(counts[a.node.id], { first: 2, dropped: 1 });
  t.same(counts[b.node.id], { first: 1, dropped: 1 });

  a.close();
  b.emit(slot(4, '41'));
  t.same(slotsOf(c), [1, 2, 3, 4], 'the other placement goes on delivering');
  await settle();
  t.equal(sockets.size, 3, 'the lost placement went to the third node');
  const third = [...sockets.values()].find((s) => s !== a && s !== b)!;
  t.same(third.log, ['slotSubscribe []']);
  third.emit(slot(3, '41'));
  third.emit(slot(5, '41'));
  b.emit(slot(5, '41'));
  t.same(slotsOf(c), [1, 2, 3, 4, 5], 'the new node lagging by one is not repeated');

  hub.dropClient(c);
  t.same(b.log.at(-1), 'slotUnsubscribe [41]', 'the last client leaving cancels every placement');
  t.same(third.log.at(-1), 'slotUnsubscribe [41]');
  hub.close();
});

t.test('redundancy 2 with one usable node: one placement, a second once a node comes back', async (t) => {
  const { hub, nodes, sockets } = setup(2, 2);
  nodes[1]!.state = 'unhealthy';
  const c = new FakeSubscriber();
  hub.subscribe(c, 'accountSubscribe', ['Acc', { commitment: 'confirmed' }], '1');
  await settle();
  t.equal(sockets.size, 1, 'only the usable node');
  nodes[1]!.state = 'healthy';
  await eventually('the second placement', () => sockets.size === 2, 3000);
  t.same(Object.values(hub.upstreamSubscriptions()), [1, 1], 'topped up once the node is usable');
  hub.close();
});

t.test('a node refusing a subscription: the other placement serves it', async (t) => {
  const { hub, sockets, nodes } = setup(2, 2, ['n1']);
  const c = new FakeSubscriber();
  hub.subscribe(c, 'blockSubscribe', ['all'], '1');
  await settle();
  t.equal(sockets.size, 2);
  t.same(c.sent, ['{"jsonrpc":"2.0","result":0,"id":1}'], 'confirmed by the node that took it');
  t.same(hub.upstreamSubscriptions(), { [nodes[0]!.id]: 1 });
  hub.close();
});

t.test('signatureSubscribe: the first notification ends it on every node', async (t) => {
  const { hub, sockets } = setup(2, 2);
  const c = new FakeSubscriber();
  hub.subscribe(c, 'signatureSubscribe', ['sig', { commitment: 'confirmed' }], '1');
  await settle();
  const [a, b] = [...sockets.values()] as [FakeSocket, FakeSocket];
  a.emit(frame('signatureNotification', '{"context":{"slot":9},"value":{"err":null}}', '41'));
  t.equal(c.notes.length, 1);
  t.same(b.log.at(-1), 'signatureUnsubscribe [41]', 'the other node is unsubscribed');
  t.equal(a.log.length, 1, 'the node that sent it ended it itself');
  b.emit(frame('signatureNotification', '{"context":{"slot":9},"value":{"err":null}}', '41'));
  t.equal(c.notes.length, 1, 'never twice');
  t.same(hub.upstreamSubscriptions(), { [a.node.id]: 0, [b.node.id]: 0 });
  t.equal(hub.sharedCount, 0, 'a new subscriber gets a new subscription');
  hub.close();
});

t.test('streams without a dedup rule stay on one node', async (t) => {
  const { hub, sockets } = setup(3, 3);
  hub.subscribe(new FakeSubscriber(), 'voteSubscribe', undefined, '1');
  await settle();
  t.equal(sockets.size, 1);
  hub.close();
});
