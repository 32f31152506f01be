// The request core (src/gateway/exchange.ts) driven without a listener: a fake responder
// records the answer, fake nodes answer (or not) the calls it makes.

import t from 'tap';
import { Exchange } from '../../../src/gateway/exchange.js';
import { MODE_DEFAULT, MODE_KEY, MODE_NODE } from '../../../src/gateway/headers.js';
import type { Serving } from '../../../src/gateway/serving.js';
import { F_CONNECT } from '../../../src/upstream/transport.js';
import { eventually } from '../../helpers/eventually.js';
import { FakeResponder, testServing, TOKEN, type Answer } from '../../helpers/fake-gateway.js';
import { echoAnswer, FakeRouter } from '../../helpers/fake-upstream.js';

interface Setup {
  rt: Serving;
  router: FakeRouter;
  idle: { count: number };
}

/** Nodes answer every call with echoAnswer unless `manual`. */
function setup(config: Record<string, unknown> = {}, nodes = 2, manual = false): Setup {
  const router = new FakeRouter(nodes);
  if (!manual) for (const n of router.nodes) n.client.auto = echoAnswer;
  const rt = testServing(router, config);
  const idle = { count: 0 };
  rt.state.onIdle = () => idle.count++;
  return { rt, router, idle };
}

function send(s: Setup, body: string, mode = MODE_DEFAULT, key = '', responder = new FakeResponder()): { ex: Exchange; responder: FakeResponder } {
  const ex = new Exchange(s.rt, TOKEN, responder, mode, key);
  ex.start(Buffer.from(body));
  return { ex, responder };
}

async function answerOf(responder: FakeResponder): Promise<Answer> {
  await eventually('the answer', () => responder.answers.length > 0);
  return responder.answers[0]!;
}

function batch(methods: string[], ids: unknown[] = methods.map((_, i) => `c${i}`)): string {
  return JSON.stringify(methods.map((method, i) => (ids[i] === undefined ? { jsonrpc: '2.0', method } : { jsonrpc: '2.0', id: ids[i], method })));
}

t.test('single call: the node bytes answered as they came, the node named, out of flight once answered', async (t) => {
  const s = setup();
  const { responder } = send(s, '{"jsonrpc":"2.0","id":"x-1","method":"getSlot"}');
  t.equal(s.rt.state.inflight, 1, 'in flight while the node works');
  const a = await answerOf(responder);
  t.same(a, { status: '200 OK', body: '{"jsonrpc":"2.0","id":"x-1","result":"getSlot"}', nodeIds: 'n0', close: false, retryAfter: '' });
  t.equal(s.rt.state.inflight, 0);
  t.equal(s.idle.count, 1);
  t.same(s.router.slots, [-1], 'default routing');
  t.equal(responder.ipReads, 0, 'the client IP is not needed');
  t.same(s.rt.services.usage.totals(TOKEN.id), { calls: 1, errors: 0, bytesIn: 47, bytesOut: 47 });
});

t.test('a notification gets an empty answer', async (t) => {
  const s = setup();
  const { responder } = send(s, '{"jsonrpc":"2.0","method":"getSlot"}');
  const a = await answerOf(responder);
  t.equal(a.status, '200 OK');
  t.equal(a.body, '');
  t.equal(s.router.attempts().length, 1, 'still forwarded');
});

t.test('unreadable bodies are answered by the gateway without a call', async (t) => {
  const s = setup();
  const { responder } = send(s, '{"jsonrpc":"2.0","id":1,');
  const a = await answerOf(responder);
  t.equal(a.status, '200 OK');
  t.match(JSON.parse(a.body), { error: { code: -32700 }, id: null });
  t.equal(s.router.attempts().length, 0);
  t.equal(s.rt.state.inflight, 0);
});

t.test('default routing splits a batch into sub-batches of routing.upstreamBatch, answered in request order', async (t) => {
  const s = setup({ routing: { upstreamBatch: 2 } });
  const methods = ['getSlot', 'getBalance', 'getSlot', 'getHealth', 'getEpochInfo'];
  const { responder } = send(s, batch(methods, ['a', 2, undefined, null, 'e']));
  const a = await answerOf(responder);
  const bodies = s.router.attempts().map((x) => JSON.parse(x.body.toString()) as { id?: number; method: string }[]);
  t.same(
    bodies.map((b) => b.map((c) => c.method)),
    [['getSlot', 'getBalance'], ['getSlot', 'getHealth'], ['getEpochInfo']],
    'three sub-batches',
  );
  t.same(
    bodies[0]!.map((c) => c.id),
    [0, 1],
    'upstream ids are element positions',
  );
  t.equal(a.status, '200 OK');
  t.same(
    JSON.parse(a.body),
    [
      { jsonrpc: '2.0', id: 'a', result: 'getSlot' },
      { jsonrpc: '2.0', id: 2, result: 'getBalance' },
      { jsonrpc: '2.0', id: null, result: 'getHealth' },
      { jsonrpc: '2.0', id: 'e', result: 'getEpochInfo' },
    ],
    "the client's ids, the notification left out",
  );
  t.equal(a.nodeIds, 'n0', 'each node named once');
  t.same(s.router.slots, [-1, -1, -1]);
  t.equal(s.rt.state.inflight, 0);
  const cells = s.rt.services.usage.drain();
  t.equal(cells.find((c) => c.method === 'getSlot')?.calls, 2, 'each element is a call');
});

t.test('node affinity keeps the batch whole', async (t) => {
  const s = setup({ routing: { upstreamBatch: 2 } });
  const { responder } = send(s, batch(['getSlot', 'getBalance', 'getSlot', 'getHealth', 'getEpochInfo']), MODE_NODE);
  const a = await answerOf(responder);
  t.equal(s.router.attempts().length, 1, 'one call');
  t.equal((JSON.parse(s.router.attempts()[0]!.body.toString()) as unknown[]).length, 5);
  t.same(s.router.slots, [-1], 'no slot: the router picks the node');
  t.equal((JSON.parse(a.body) as unknown[]).length, 5);
});

t.test('key affinity: whole batches on the key slot; without a key the client IP is the key', async (t) => {
  const s = setup({ routing: { upstreamBatch: 2 } });
  const keyed = send(s, batch(['getSlot', 'getBalance', 'getHealth']), MODE_KEY, 'wallet-7');
  await answerOf(keyed.responder);
  t.same(s.router.slots, ['wallet-7'.length], 'the key slot (the fake hasher: key length)');
  t.equal(keyed.responder.ipReads, 0);
  const byIp = send(s, '{"jsonrpc":"2.0","id":1,"method":"getSlot"}', MODE_KEY, '', new FakeResponder('203.0.113.250'));
  await answerOf(byIp.responder);
  t.equal(s.router.slots[1], '203.0.113.250'.length, 'the IP slot');
  t.equal(byIp.responder.ipReads, 1);
});

t.test('automatic IP affinity: a default-mode batch with such a method goes whole to the IP slot', async (t) => {
  const s = setup({ routing: { upstreamBatch: 1 } });
  const auto = send(s, batch(['getSlot', 'simulateTransaction']));
  await answerOf(auto.responder);
  t.same(s.router.slots, ['198.51.100.7'.length]);
  t.equal(s.router.attempts().length, 1, 'whole');
  t.equal(auto.responder.ipReads, 1);
  const plain = send(s, batch(['getSlot', 'getBalance']));
  await answerOf(plain.responder);
  t.same(s.router.slots.slice(1), [-1, -1], 'split, default routing');
  t.equal(plain.responder.ipReads, 0);
  // Methods are looked up once per run of equal names: the one after a run still counts.
  const late = send(s, batch(['getSlot', 'getSlot', 'getSlot', 'simulateTransaction']));
  await answerOf(late.responder);
  t.same(s.router.slots.slice(3), ['198.51.100.7'.length], 'after a run of another method: whole, to the IP slot');
  t.equal(late.responder.ipReads, 1);
});

t.test('7429 from a rate limit: Retry-After, the scope and the request id; nothing forwarded', async (t) => {
  const s = setup({ rateLimits: { token: { rate: 1, burst: 2 } } });
  // Sent back to back (admission is synchronous), so the bucket cannot refill in between.
  const passed = [send(s, '{"jsonrpc":"2.0","id":1,"method":"getSlot"}'), send(s, '{"jsonrpc":"2.0","id":2,"method":"getSlot"}')];
  const third = send(s, '{"jsonrpc":"2.0","id":"r3","method":"getSlot"}');
  for (const p of passed) t.equal((await answerOf(p.responder)).status, '200 OK');
  const a = await answerOf(third.responder);
  t.equal(a.status, '429 Too Many Requests');
  t.equal(a.retryAfter, '1', 'whole seconds, rounded up');
  const body = JSON.parse(a.body);
  t.match(body, { error: { code: 7429, data: { scope: 'token' } }, id: 'r3' });
  t.ok(body.error.data.retryAfterMs > 0 && body.error.data.retryAfterMs <= 1000);
  t.equal(s.router.attempts().length, 2);
  t.equal(s.rt.state.inflight, 0);

  const hot = setup({ affinity: { keyRate: 4, keyBurst: 1 } });
  const first = send(hot, batch(['getSlot']), MODE_KEY, 'k');
  const second = send(hot, batch(['getSlot', 'getSlot']), MODE_KEY, 'k');
  t.equal((await answerOf(first.responder)).status, '200 OK');
  const refused = await answerOf(second.responder);
  const refusal = JSON.parse(refused.body) as { error: { data: { retryAfterMs: number } } };
  t.match(refusal, { error: { code: 7429, data: { scope: 'affinity-key' } } });
  // Two tokens short at 4/s: 500 ms, less what the clock moved between the two sends.
  const wait = refusal.error.data.retryAfterMs;
  t.ok(wait > 400 && wait <= 500, `a batch takes one token per call (${wait} ms to wait)`);
  t.equal(refused.retryAfter, '1', 'rounded up to whole seconds');
});

t.test('7701: a batch over limits.maxBatch is refused whole', async (t) => {
  const s = setup({ limits: { maxBatch: 2 } });
  const a = await answerOf(send(s, batch(['getSlot', 'getSlot', 'getSlot'])).responder);
  t.equal(a.status, '413 Payload Too Large');
  t.match(JSON.parse(a.body), { error: { code: 7701, data: { maxBatch: 2 } }, id: null });
  t.equal(s.router.attempts().length, 0);
  t.equal(s.rt.state.inflight, 0);
});

t.test('a failed call: its gateway error with the request id; node names hidden when exposeNode is off', async (t) => {
  const s = setup({}, 1, true);
  const { responder } = send(s, '{"jsonrpc":"2.0","id":9,"method":"getSlot"}');
  s.router.nodes[0]!.client.open()[0]!.answered(500, Buffer.from('{}'));
  const a = await answerOf(responder);
  t.equal(a.status, '502 Bad Gateway');
  t.same(JSON.parse(a.body).error.data, { attempts: 1, reason: 'n0: HTTP 500' });
  t.match(JSON.parse(a.body), { id: 9 });
  t.same(s.rt.services.usage.totals(TOKEN.id).errors, 1);

  const hidden = setup({ exposeNode: false }, 1, true);
  const h = send(hidden, '{"jsonrpc":"2.0","id":9,"method":"getSlot"}');
  hidden.router.nodes[0]!.client.open()[0]!.answered(500, Buffer.from('{}'));
  t.same(JSON.parse((await answerOf(h.responder)).body).error.data, { attempts: 1 });

  const none = setup({}, 0);
  const n = await answerOf(send(none, '{"jsonrpc":"2.0","id":1,"method":"getSlot"}').responder);
  t.equal(n.status, '503 Service Unavailable');
  t.same(JSON.parse(n.body).error.data, { attempts: 0 });
});

t.test('an aborted request leaves the in-flight count exactly once, when its calls have returned', async (t) => {
  const s = setup({ routing: { upstreamBatch: 1 } }, 2, true);
  const single = send(s, '{"jsonrpc":"2.0","id":1,"method":"getSlot"}');
  single.ex.abort();
  t.equal(s.rt.state.inflight, 1, 'the call still runs');
  single.ex.abort();
  t.equal(s.rt.state.inflight, 1);
  s.router.attempts()[0]!.answered(200, Buffer.from('{"jsonrpc":"2.0","id":1,"result":1}'));
  t.equal(s.rt.state.inflight, 0);
  t.equal(s.idle.count, 1);
  single.ex.abort();
  t.equal(s.rt.state.inflight, 0, 'not counted out twice');
  t.same(single.responder.answers, [], 'nothing answered to a client that left');

  const b = send(s, batch(['getSlot', 'getBalance', 'getHealth']));
  const open = s.router.attempts().filter((a) => !a.done);
  t.equal(open.length, 3);
  b.ex.abort();
  open[0]!.answered(200, Buffer.from('[{"jsonrpc":"2.0","id":0,"result":1}]'));
  open[1]!.answered(200, Buffer.from('[{"jsonrpc":"2.0","id":1,"result":1}]'));
  t.equal(s.rt.state.inflight, 1, 'one sub-batch still out');
  open[2]!.failed(F_CONNECT, 'ECONNREFUSED');
  t.equal(s.rt.state.inflight, 1, 'retried on another node: still out');
  s.router
    .attempts()
    .find((a) => !a.done)!
    .answered(200, Buffer.from('[{"jsonrpc":"2.0","id":2,"result":1}]'));
  await eventually('the last sub-batch', () => s.rt.state.inflight === 0);
  t.equal(s.idle.count, 2);
  t.same(b.responder.answers, []);

  // The client may leave before its body is complete (the HTTP side then never calls start()).
  const early = new Exchange(s.rt, TOKEN, new FakeResponder(), MODE_DEFAULT, '');
  t.equal(s.rt.state.inflight, 1);
  early.abort();
  early.abort();
  t.equal(s.rt.state.inflight, 0);
  t.equal(s.idle.count, 3);
});

t.test('a body that outgrew limits.maxBodyBytes while streaming: 413 and the connection closed', async (t) => {
  const s = setup();
  const responder = new FakeResponder();
  const ex = new Exchange(s.rt, TOKEN, responder, MODE_DEFAULT, '');
  ex.bodyTooLarge(4096);
  t.same(responder.answers[0], { status: '413 Payload Too Large', body: responder.answers[0]!.body, nodeIds: '', close: true, retryAfter: '' });
  t.match(JSON.parse(responder.answers[0]!.body), { error: { code: 7413, data: { maxBodyBytes: s.rt.settings.maxBodyBytes } } });
  t.equal(s.rt.state.inflight, 0);
  t.same(s.rt.services.usage.totals(TOKEN.id).bytesIn, 4096, 'the bytes received are booked');
});

/** Keeps the answer's body as it was handed over (a Buffer stays the same object). */
class RawResponder extends FakeResponder {
  raw: string | Buffer | null = null;

  override answer(status: string, body: string | Buffer, nodeIds: string, close: boolean, retryAfter: string): void {
    this.raw = body;
    super.answer(status, body, nodeIds, close, retryAfter);
  }
}

t.test('ids kept: the client body goes upstream as it is and the node answer comes back as it is', async (t) => {
  const s = setup({}, 1, true);
  const text = '[{"jsonrpc":"2.0","id":1,"method":"getBalance","params":["a"]} , {"jsonrpc":"2.0","id":"two","method":"getSlot"}]';
  const responder = new RawResponder();
  const ex = new Exchange(s.rt, TOKEN, responder, MODE_NODE, '');
  const body = Buffer.from(text);
  ex.start(body);
  const attempt = s.router.attempts()[0]!;
  t.equal(attempt.body, body, 'the same bytes, not a copy');
  const reply = Buffer.from('[{"jsonrpc":"2.0","result":{"value":18446744073709551615},"id":1},{"jsonrpc":"2.0","result":7,"id":"two"}]');
  attempt.answered(200, reply);
  await answerOf(responder);
  t.equal(responder.raw, reply, "the node's answer object itself");
  t.equal(responder.answers[0]!.nodeIds, 'n0');
  const cells = s.rt.services.usage.drain();
  t.equal(cells.find((c) => c.method === 'getBalance')?.calls, 1, 'usage per method');
  t.equal(cells.find((c) => c.method === 'getSlot')?.calls, 1);
});

t.test('ids kept, default routing: sub-batches are ranges of the client bytes; answers out of order are put in order', async (t) => {
  const s = setup({ routing: { upstreamBatch: 2 } }, 2, true);
  const ids = ['7', '"b"', '12', '"d"', '-5'];
  const { responder } = send(
    s,
    batch(
      ['getSlot', 'getBalance', 'getSlot', 'getHealth', 'getSlot'],
      ids.map((id) => JSON.parse(id) as unknown),
    ),
  );
  const attempts = s.router.attempts();
  t.same(
    attempts.map((a) => (JSON.parse(a.body.toString()) as { id: unknown }[]).map((c) => JSON.stringify(c.id))),
    [['7', '"b"'], ['12', '"d"'], ['-5']],
    "the client's ids, not positions",
  );
  const el = (id: string): string => `{"jsonrpc":"2.0","result":${id === '-5' ? '18446744073709551615' : '1'},"id":${id}}`;
  attempts[2]!.answered(200, Buffer.from('[' + el('-5') + ']'));
  attempts[0]!.answered(200, Buffer.from('[' + el('"b"') + ',' + el('7') + ']')); // out of order
  attempts[1]!.answered(200, Buffer.from('[' + el('12') + ',' + el('"d"') + ']'));
  const a = await answerOf(responder);
  t.equal(a.body, '[' + ids.map(el).join(',') + ']', 'request order, bytes exact');
  t.equal(s.rt.state.inflight, 0);
});

t.test('duplicate ids, notifications and invalid elements keep the position path', async (t) => {
  for (const text of [
    '[{"jsonrpc":"2.0","id":1,"method":"getSlot"},{"jsonrpc":"2.0","id":1,"method":"getSlot"}]',
    '[{"jsonrpc":"2.0","id":1,"method":"getSlot"},{"jsonrpc":"2.0","method":"getSlot"}]',
    '[{"jsonrpc":"2.0","id":1,"method":"getSlot"},{"jsonrpc":"1.0","id":2,"method":"getSlot"}]',
  ]) {
    const s = setup({}, 1);
    const { responder } = send(s, text, MODE_NODE);
    await answerOf(responder);
    const sent = JSON.parse(s.router.attempts()[0]!.body.toString()) as { id?: unknown }[];
    t.equal(sent[0]!.id, 0, `positions upstream for ${text}`);
  }
});

t.test('bodyReusable: only when no call took the body itself, or the pipelined client (which copies it) did', async (t) => {
  const s = setup({ routing: { upstreamBatch: 2 } });
  const single = send(s, '{"jsonrpc":"2.0","id":1,"method":"getSlot"}');
  await answerOf(single.responder);
  t.equal(single.ex.bodyReusable(), false, 'a single call carried the body over a client that may keep it (not the pipelined one)');
  const whole = send(s, batch(['getSlot', 'getBalance']), MODE_NODE);
  await answerOf(whole.responder);
  t.equal(whole.ex.bodyReusable(), false, 'a batch sent whole carried it too');
  const split = send(s, batch(['getSlot', 'getBalance', 'getHealth']));
  await answerOf(split.responder);
  t.equal(split.ex.bodyReusable(), true, 'sub-batches are copies of ranges of it');
  const positions = send(s, '[{"jsonrpc":"2.0","id":1,"method":"getSlot"},{"jsonrpc":"2.0","id":1,"method":"getSlot"}]', MODE_NODE);
  await answerOf(positions.responder);
  t.equal(positions.ex.bodyReusable(), true, 'a batch rebuilt with positions');
  const unreadable = send(s, '{"jsonrpc"');
  await answerOf(unreadable.responder);
  t.equal(unreadable.ex.bodyReusable(), true, 'no call made');
});
