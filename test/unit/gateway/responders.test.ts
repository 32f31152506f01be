// The two transports' sides of a request: HttpResponder (body streamed in from uWS, the answer
// written under cork) and WsResponder (answers on the client's socket).

import t from 'tap';
import { Exchange } from '../../../src/gateway/exchange.js';
import { MODE_DEFAULT, MODE_KEY } from '../../../src/gateway/headers.js';
import { HttpResponder } from '../../../src/gateway/http-responder.js';
import type { Responder } from '../../../src/gateway/responder.js';
import type { Serving } from '../../../src/gateway/serving.js';
import { WsResponder } from '../../../src/gateway/ws-responder.js';
import { eventually } from '../../helpers/eventually.js';
import { testServing, TOKEN } from '../../helpers/fake-gateway.js';
import { echoAnswer, FakeRouter } from '../../helpers/fake-upstream.js';
import { FakeResponse } from '../../helpers/fake-uws.js';

const CALL = '{"jsonrpc":"2.0","id":1,"method":"getSlot"}';
const ANSWER = '{"jsonrpc":"2.0","id":1,"result":"getSlot"}';

function runtime(config: Record<string, unknown> = {}, manual = false): { rt: Serving; router: FakeRouter } {
  const router = new FakeRouter(1);
  if (!manual) router.nodes[0]!.client.auto = echoAnswer;
  return { rt: testServing(router, config), router };
}

/** What the HTTP listener does once the headers passed (by default with the origin it gives when CORS allows any: '*'). */
function receive(rt: Serving, res: FakeResponse, opts: { cors?: string; expected?: number; xff?: string; mode?: number } = {}): HttpResponder {
  const http = new HttpResponder(res.asUws(), rt, opts.cors ?? (rt.settings.corsAny ? '*' : ''), opts.expected ?? -1, opts.xff ?? '');
  http.receive(new Exchange(rt, TOKEN, http, opts.mode ?? MODE_DEFAULT, ''));
  return http;
}

async function ended(res: FakeResponse): Promise<{ body: string; close: boolean }> {
  await eventually('the answer', () => res.ended !== null);
  return res.ended!;
}

t.test('a body in chunks, sized by Content-Length or chunked, reaches the core whole', async (t) => {
  for (const expected of [Buffer.byteLength(CALL), -1]) {
    const { rt, router } = runtime();
    const res = new FakeResponse();
    receive(rt, res, { expected });
    res.stream(CALL, 7);
    t.same((await ended(res)).body, ANSWER, `expected ${expected}`);
    t.equal(router.attempts()[0]!.body.toString(), CALL);
  }
  const { rt } = runtime();
  const res = new FakeResponse();
  receive(rt, res, { expected: 100 });
  res.stream(CALL, 100);
  t.same((await ended(res)).body, ANSWER, 'shorter than announced: what came');
});

t.test('the common answer: status as bytes, every header line in one prebuilt value, under one cork', async (t) => {
  const { rt } = runtime();
  const res = new FakeResponse();
  receive(rt, res);
  res.stream(CALL, 1000);
  const end = await ended(res);
  t.equal(res.status, '200 OK');
  t.same(res.headers, [['content-type', rt.settings.heads.get('n0').toString()]]);
  t.match(res.headers[0]![1], /^application\/json\r\naccess-control-allow-origin: \*\r\n.*\r\nX-Service-Node: n0$/);
  t.same(end, { body: ANSWER, close: false });
  t.equal(res.corks, 1);
  t.equal(res.writesOutsideCork, 0);
  t.equal(rt.state.inflight, 0);
});

t.test('a listed CORS origin, a Retry-After or a draining gateway: the header lines one by one', async (t) => {
  const { rt } = runtime({ cors: { origins: ['https://app.example'] } });
  const res = new FakeResponse();
  receive(rt, res, { cors: 'https://app.example' });
  res.stream(CALL, 1000);
  await ended(res);
  t.same(res.headers, [
    ['content-type', 'application/json'],
    ['access-control-allow-origin', 'https://app.example'],
    ['access-control-expose-headers', 'X-Service-Node, X-Service-Nodes-Tried'],
    ['vary', 'Origin'],
    ['X-Service-Node', 'n0'],
  ]);

  const limited = runtime({ rateLimits: { token: { rate: 1, burst: 1 } } });
  const first = new FakeResponse();
  const second = new FakeResponse();
  receive(limited.rt, first);
  receive(limited.rt, second);
  first.stream(CALL, 1000);
  second.stream(CALL, 1000);
  await ended(second);
  t.equal(second.status, '429 Too Many Requests');
  t.same(second.headers, [
    ['content-type', 'application/json'],
    ['access-control-allow-origin', '*'],
    ['access-control-expose-headers', 'X-Service-Node, X-Service-Nodes-Tried'],
    ['retry-after', '1'],
  ]);
  await ended(first);

  rt.state.draining = true;
  const late = new FakeResponse();
  receive(rt, late);
  late.stream(CALL, 1000);
  t.equal((await ended(late)).close, true, 'Connection: close while draining');
});

t.test('a body outgrowing its Content-Length or limits.maxBodyBytes: 413, closed, the rest ignored', async (t) => {
  const { rt, router } = runtime({ limits: { maxBodyBytes: 1024 } });
  const res = new FakeResponse();
  receive(rt, res, { expected: 10 });
  res.stream(CALL, 8);
  t.equal(res.status, '413 Payload Too Large');
  t.equal(res.ended!.close, true);
  t.match(JSON.parse(res.ended!.body), { error: { code: 7413, data: { maxBodyBytes: 1024 } } });
  t.equal(router.attempts().length, 0);
  t.equal(rt.state.inflight, 0);

  const chunked = new FakeResponse();
  receive(rt, chunked);
  chunked.stream('[' + ' '.repeat(2000) + ']', 512);
  t.equal(chunked.status, '413 Payload Too Large');
  t.same(rt.services.usage.totals(TOKEN.id).bytesIn, 8 + 1024, 'the bytes accepted before each refusal');
});

t.test('aborted: nothing is written, the request leaves flight when its call returns', async (t) => {
  const { rt, router } = runtime({}, true);
  const res = new FakeResponse();
  receive(rt, res);
  res.stream(CALL, 1000);
  res.aborted!();
  t.equal(rt.state.inflight, 1);
  router.nodes[0]!.client.open()[0]!.answered(200, Buffer.from(ANSWER));
  t.equal(rt.state.inflight, 0);
  t.equal(res.corks, 0);
  t.equal(res.ended, null);
});

t.test('the client IP: the socket peer, or the X-Forwarded-For hop behind a trusted proxy', async (t) => {
  const { rt, router } = runtime({ trustedProxies: ['192.0.2.0/24'] });
  const direct = new HttpResponder(new FakeResponse('198.51.100.1').asUws(), rt, '', -1, '');
  t.equal(direct.clientIp(), '198.51.100.1');
  const proxied = new HttpResponder(new FakeResponse('192.0.2.10').asUws(), rt, '', -1, '203.0.113.9, 192.0.2.11');
  t.equal(proxied.clientIp(), '203.0.113.9');
  // Key affinity without a key routes on it.
  const res = new FakeResponse('198.51.100.1');
  receive(rt, res, { mode: MODE_KEY });
  res.stream(CALL, 1000);
  await ended(res);
  t.same(router.slots, ['198.51.100.1'.length]);
});

t.test('WebSocket: the body goes back on the socket, nothing for a notification; the IP is the connection’s', async (t) => {
  const delivered: (string | Buffer)[] = [];
  const ws: Responder = new WsResponder({ ip: '203.0.113.5', deliver: (b) => delivered.push(b) });
  ws.answer('502 Bad Gateway', '{"error":1}', 'n0', false, '', '');
  ws.answer('200 OK', '', 'n0', false, '', '');
  ws.answer('200 OK', Buffer.from('[1]'), 'n0,n1', false, '', '');
  t.same(
    delivered.map((b) => b.toString()),
    ['{"error":1}', '[1]'],
  );
  t.equal(ws.clientIp(), '203.0.113.5');

  const { rt } = runtime();
  const frames: string[] = [];
  const conn = new WsResponder({ ip: '203.0.113.5', deliver: (b) => frames.push(b.toString()) });
  new Exchange(rt, TOKEN, conn, MODE_DEFAULT, '').start(Buffer.from(CALL));
  await eventually('the answer on the socket', () => frames.length === 1);
  t.same(frames, [ANSWER]);
  t.equal(rt.state.inflight, 0);
});
