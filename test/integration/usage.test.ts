// Usage hooks: per token, calls (batch elements and WebSocket frames each count), errors, and
// bytes in both directions (WebSocket notifications included), aggregated in memory.

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
    '[{"jsonrpc":"2.0","id":1,"method":"getSlot"},{"jsonrpc":"2.0","id":2,"method":"getIdentity"},{"bad":true}]',
  ]) {
    const r = await h.post(body);
    bytesIn += Buffer.byteLength(body);
    bytesOut += Buffer.byteLength(r.text);
  }
  const u = h.gw.usage.totals(id);
  t.equal(u.calls, 5, 'two singles and a batch of three');
  t.equal(u.errors, 2, 'the unknown method (node error) and the invalid element');
  t.equal(u.bytesIn, bytesIn);
  t.equal(u.bytesOut, bytesOut);
  t.equal(h.gw.usage.totals(h.gw.tokens.find(TOKEN2)!.id).calls, 0, 'other tokens untouched');
  const cells = h.gw.usage.drain();
  t.ok(cells.some((c) => c.method === 'getSlot' && c.calls === 2), 'per method');
  t.equal(h.gw.usage.totals(id).calls, 0, 'drained');
});

t.test('WebSocket: every client frame is a call; notifications count as bytes out', async (t) => {
  const h = await startHarness({ sims: [{ slotMs: 50 }] });
  t.teardown(() => h.close());
  const id = h.gw.tokens.find(TOKEN)!.id;
  const c = await openWs(`${h.url.replace('http', 'ws')}/api-token/${TOKEN}/`);
  t.teardown(() => c.close());
  const raw: string[] = [];
  c.ws.addEventListener('message', (ev) => raw.push(ev.data as string));
  const frames = ['{"jsonrpc":"2.0","id":1,"method":"slotSubscribe"}', '{"jsonrpc":"2.0","method":"ping"}', '{"jsonrpc":"2.0","id":2,"method":"getSlot"}', 'not json'];
  for (const f of frames) c.send(f);
  await c.collect((f) => f.method === 'slotNotification', 3);
  await c.next((f) => f.id === 2);
  c.close();
  await c.waitClosed();
  const u = h.gw.usage.totals(id);
  t.equal(u.calls, 4, 'four client frames');
  t.equal(u.errors, 1, 'the unparsable one');
  t.equal(u.bytesIn, frames.reduce((a, f) => a + Buffer.byteLength(f), 0));
  t.equal(u.bytesOut, raw.reduce((a, f) => a + Buffer.byteLength(f), 0), 'answers and notifications');
});
