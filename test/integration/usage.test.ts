// Usage hooks: per token, calls (batch elements and WebSocket calls each count, keep-alive
// pings do not), errors (JSON-RPC errors inside batches and refused subscribes included), and
// bytes in both directions (WebSocket notifications included), aggregated in memory
// (docs/usage.md).

import t from 'tap';
import { startHarness, TOKEN, TOKEN2 } from '../helpers/gateway.js';
import { openWs } from '../helpers/ws-client.js';

t.test('HTTP: calls, batch elements, errors and bytes per token', async (t) => {
  const h = await startHarness({ sims: [{}] });
  t.teardown(() => h.close());
  const id = h.gw.tokens.find(TOKEN)!.id;
  let bytesIn = 0;
  let bytesOut = 0;
  for (const body of [
    '{"jsonrpc":"2.0","id":1,"method":"getSlot"}',
    '{"jsonrpc":"2.0","id":2,"method":"nope"}',
    '[{"jsonrpc":"2.0","id":1,"method":"getSlot"},{"jsonrpc":"2.0","id":2,"method":"getIdentity"},{"bad":true},{"jsonrpc":"2.0","id":3,"method":"nope"}]',
  ]) {
    const r = await h.post(body);
    bytesIn += Buffer.byteLength(body);
    bytesOut += Buffer.byteLength(r.text);
  }
  const u = h.gw.usage.totals(id);
  t.equal(u.calls, 6, 'two singles and a batch of four');
  t.equal(u.errors, 3, 'the unknown method (node error), alone and in the batch, and the invalid element');
  t.equal(u.bytesIn, bytesIn);
  t.equal(u.bytesOut, bytesOut);
  t.equal(h.gw.usage.totals(h.gw.tokens.find(TOKEN2)!.id).calls, 0, 'other tokens untouched');
  const cells = h.gw.usage.drain();
  t.ok(
    cells.some((c) => c.method === 'getSlot' && c.calls === 2),
    'per method',
  );
  t.ok(
    cells.some((c) => c.method === 'nope' && c.calls === 2 && c.errors === 2),
    "the batch element's node error is its method's",
  );
  t.equal(h.gw.usage.totals(id).calls, 0, 'drained');
});

t.test('WebSocket: every client call is a call, pings are not; notifications count as bytes out', async (t) => {
  const h = await startHarness({ sims: [{ slotMs: 50 }] });
  t.teardown(() => h.close());
  const id = h.gw.tokens.find(TOKEN)!.id;
  const c = await openWs(`${h.url.replace('http', 'ws')}/api-token/${TOKEN}/`);
  t.teardown(() => c.close());
  const raw: string[] = [];
  c.ws.addEventListener('message', (ev) => raw.push(ev.data as string));
  const frames = [
    '{"jsonrpc":"2.0","id":1,"method":"slotSubscribe"}',
    '{"jsonrpc":"2.0","method":"ping"}',
    '{"jsonrpc":"2.0","id":2,"method":"getSlot"}',
    'not json',
  ];
  for (const f of frames) c.send(f);
  await c.collect((f) => f.method === 'slotNotification', 3);
  await c.next((f) => f.id === 2);
  c.close();
  await c.waitClosed();
  const u = h.gw.usage.totals(id);
  t.equal(u.calls, 3, 'three client calls (the ping is no call)');
  t.equal(u.errors, 1, 'the unparsable one');
  t.equal(
    u.bytesIn,
    frames.reduce((a, f) => a + Buffer.byteLength(f), 0),
  );
  t.equal(
    u.bytesOut,
    raw.reduce((a, f) => a + Buffer.byteLength(f), 0),
    'answers and notifications',
  );
});

t.test('WebSocket: refused subscribes and unsubscribes, and a batch with a node error, are errors of their methods', async (t) => {
  const h = await startHarness({ sims: [{ slotMs: 50 }] });
  t.teardown(() => h.close());
  const id = h.gw.tokens.find(TOKEN)!.id;
  const c = await openWs(`${h.url.replace('http', 'ws')}/api-token/${TOKEN}/`);
  t.teardown(() => c.close());
  c.send('{"jsonrpc":"2.0","id":1,"method":"slotSubscribe"}');
  await c.next((f) => f.id === 1 && f.result !== undefined);
  c.send('{"jsonrpc":"2.0","id":2,"method":"slotSubscribe"}'); // the same subscription again: refused
  await c.next((f) => f.id === 2 && f.error !== undefined);
  c.send('{"jsonrpc":"2.0","id":3,"method":"slotUnsubscribe","params":[999]}');
  await c.next((f) => f.id === 3 && f.error !== undefined);
  c.send('[{"jsonrpc":"2.0","id":4,"method":"getSlot"},{"jsonrpc":"2.0","id":5,"method":"nope"}]');
  await c.next((f) => Array.isArray(f));
  const byMethod = new Map(h.gw.usage.drain().map((u) => [u.method, u]));
  t.match(byMethod.get('slotSubscribe'), { tokenId: id, calls: 2, errors: 1 });
  t.match(byMethod.get('slotUnsubscribe'), { calls: 1, errors: 1 });
  t.match(byMethod.get('getSlot'), { calls: 1, errors: 0 });
  t.match(byMethod.get('nope'), { calls: 1, errors: 1 });
});
