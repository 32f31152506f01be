// What one answered request books (src/usage/booking.ts): calls and errors per method, batch
// runs, the '(batch)' bytes, and the error rules.

import t from 'tap';
import { analyze, type BatchPlan } from '../../../src/rpc/analyze.js';
import { BATCH, bookUsage, INVALID, type BookedRequest } from '../../../src/usage/booking.js';
import { UsageMeter } from '../../../src/usage/meter.js';

const TOKEN = { id: 'tok' };

function planOf(body: string): BatchPlan {
  return analyze(Buffer.from(body), 100).plan!;
}

function cells(m: UsageMeter): [string, number, number, number, number][] {
  return m.drain().map((c) => [c.method, c.calls, c.errors, c.bytesIn, c.bytesOut]);
}

function single(method: string | null, received = 30): BookedRequest {
  return { token: TOKEN, method, plan: null, elementErrors: null, answerError: -1, received };
}

t.test('a single call: one call under its method, bytes both ways, latency', async (t) => {
  const m = new UsageMeter();
  bookUsage(m, single('getSlot'), '200 OK', Buffer.from('{"jsonrpc":"2.0","id":1,"result":5}'), 1500);
  const [c] = m.drain();
  t.same([c!.method, c!.calls, c!.errors, c!.bytesIn, c!.bytesOut], ['getSlot', 1, 0, 30, 35]);
  t.not(c!.histogram, null, 'latency recorded');
});

t.test('a single call is an error when refused or failed (not 2xx), or when the node answered a JSON-RPC error', async (t) => {
  const m = new UsageMeter();
  const answers: [string, string | Buffer][] = [
    ['502 Bad Gateway', '{"jsonrpc":"2.0","error":{"code":7502,"message":"x"},"id":1}'],
    ['200 OK', Buffer.from('{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"nope"}}')],
    ['200 OK', Buffer.from('{"jsonrpc":"2.0","id":1,"result":{"error":1}}')],
    ['200 OK', ''],
  ];
  for (const [status, body] of answers) bookUsage(m, single('getSlot'), status, body, 10);
  const out = answers.reduce((n, [, b]) => n + Buffer.byteLength(b), 0);
  t.same(cells(m), [['getSlot', 4, 2, 120, out]], 'a nested "error" and an empty notification answer are not errors');
});

t.test('no call made (unreadable, invalid or refused before routing): booked as (invalid), strings measured in bytes', async (t) => {
  const m = new UsageMeter();
  const parseError = '{"jsonrpc":"2.0","error":{"code":-32700,"message":"Parse error"},"id":null}';
  bookUsage(m, single(null, 12), '200 OK', parseError, 10);
  bookUsage(m, single(null, 3), '429 Too Many Requests', 'é', 10);
  t.same(cells(m), [[INVALID, 2, 2, 15, parseError.length + 2]], 'a JSON-RPC error answer counts; é is two bytes');
});

t.test('a batch: one call per element, runs of one method booked together, bytes under (batch)', async (t) => {
  const m = new UsageMeter();
  const body =
    '[{"jsonrpc":"2.0","id":1,"method":"getSlot"},{"jsonrpc":"2.0","id":2,"method":"getSlot"},{"bad":1},{"jsonrpc":"2.0","id":3,"method":"getBalance"},{"jsonrpc":"2.0","id":4,"method":"getSlot"}]';
  const plan = planOf(body);
  bookUsage(m, { token: TOKEN, method: null, plan, elementErrors: null, answerError: -1, received: body.length }, '200 OK', Buffer.alloc(90), 5000);
  const drained = m.drain();
  t.same(
    drained.map((c) => [c.method, c.calls, c.errors, c.bytesIn, c.bytesOut]),
    [
      ['getSlot', 3, 0, 0, 0],
      [INVALID, 1, 1, 0, 0],
      ['getBalance', 1, 0, 0, 0],
      [BATCH, 0, 0, body.length, 90],
    ],
  );
  t.not(drained[0]!.histogram, null, 'elements get the batch latency');
  t.equal(drained[3]!.histogram, null, 'the (batch) record has none');
});

t.test('a batch: each element answered with an error (node or gateway) is an error of its method; a failed batch makes every element one', async (t) => {
  const body = '[{"jsonrpc":"2.0","id":1,"method":"getSlot"},{"jsonrpc":"2.0","id":2,"method":"nope"},{"jsonrpc":"2.0","id":3,"method":"getSlot"}]';
  const plan = planOf(body);
  const partly = new UsageMeter();
  bookUsage(partly, { token: TOKEN, method: null, plan, elementErrors: Uint8Array.of(0, 1, 1), answerError: -1, received: 10 }, '200 OK', Buffer.alloc(5), 10);
  t.same(cells(partly), [
    ['getSlot', 2, 1, 0, 0],
    ['nope', 1, 1, 0, 0],
    [BATCH, 0, 0, 10, 5],
  ]);
  const whole = new UsageMeter();
  bookUsage(whole, { token: TOKEN, method: null, plan, elementErrors: null, answerError: -1, received: 10 }, '504 Gateway Timeout', Buffer.alloc(5), 10);
  t.same(cells(whole), [
    ['getSlot', 2, 2, 0, 0],
    ['nope', 1, 1, 0, 0],
    [BATCH, 0, 0, 10, 5],
  ]);
  const oneMethod = planOf('[{"jsonrpc":"2.0","id":1,"method":"getSlot"},{"jsonrpc":"2.0","id":2,"method":"getSlot"}]');
  const m = new UsageMeter();
  bookUsage(
    m,
    { token: TOKEN, method: null, plan: oneMethod, elementErrors: Uint8Array.of(0, 1), answerError: -1, received: 10 },
    '200 OK',
    Buffer.alloc(5),
    10,
  );
  t.same(
    cells(m),
    [
      ['getSlot', 2, 1, 0, 0],
      [BATCH, 0, 0, 10, 5],
    ],
    'a batch of one method counts its marked elements',
  );
});

t.test('a batch of one method is booked in one step, as its elements one by one would be', async (t) => {
  const call = (id: number | null, method = 'getBalance'): string =>
    id === null ? `{"jsonrpc":"2.0","method":"${method}"}` : `{"jsonrpc":"2.0","id":${id},"method":"${method}"}`;
  t.equal(planOf(`[${call(1)},${call(2)},${call(null)}]`).method, 'getBalance', 'requests and a notification of one method');
  t.equal(planOf(`[${call(1)},${call(2, 'getSlot')}]`).method, '', 'two methods');
  t.equal(planOf(`[${call(1)},{"bad":1}]`).method, '', 'an invalid element');
  t.equal(planOf(`[{"jsonrpc":"2.0","id":1,"method":"get\\u0053lot"},${call(2, 'getSlot')}]`).method, 'getSlot', 'an escaped spelling of the same name');
  const body = `[${call(1)},${call(2)},${call(null)}]`;
  const plan = planOf(body);
  for (const status of ['200 OK', '504 Gateway Timeout']) {
    const oneStep = new UsageMeter();
    const byElement = new UsageMeter();
    bookUsage(oneStep, { token: TOKEN, method: null, plan, elementErrors: null, answerError: -1, received: 10 }, status, Buffer.alloc(5), 10);
    bookUsage(
      byElement,
      { token: TOKEN, method: null, plan: { ...plan, method: '' }, elementErrors: null, answerError: -1, received: 10 },
      status,
      Buffer.alloc(5),
      10,
    );
    t.same(cells(oneStep), cells(byElement), `${status}: the same records`);
  }
});

t.test("a node's answer is booked by what the call read of it, not read again", async (t) => {
  const m = new UsageMeter();
  const ok = Buffer.from('{"jsonrpc":"2.0","id":1,"result":5}');
  bookUsage(m, { ...single('getSlot'), answerError: 1 }, '200 OK', ok, 10);
  bookUsage(m, { ...single('getSlot'), answerError: 0 }, '200 OK', Buffer.from('{"jsonrpc":"2.0","id":1,"error":{"code":-1}}'), 10);
  t.match(m.drain(), [{ method: 'getSlot', calls: 2, errors: 1 }]);
});
