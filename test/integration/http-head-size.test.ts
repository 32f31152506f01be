// Request heads (request line plus headers) up to 16 KiB are read on either listener; beyond
// that the listener refuses with 431, and Node's listener with the gateway's JSON-RPC error
// 7431 (docs/errors.md, docs/http-compatibility.md). uWS's own default would refuse at 4 KB.

import t from 'tap';
import { serverEngine } from '../../src/server/engine.js';
import { MAX_HEAD_BYTES } from '../../src/server/types.js';
import { startHarness, TOKEN } from '../helpers/gateway.js';
import { healthAnswer, RawConnection, rawPost, rpcBody } from '../helpers/raw-http.js';

const ENGINE = serverEngine('auto');
const PATH = `/api-token/${TOKEN}`;

const h = await startHarness({ config: { health: { intervalMs: 60_000 } } });
t.teardown(() => h.close());

t.test('a 10 KB query string and a 10 KB header are served', async (t) => {
  const c = await RawConnection.open(h.gw.port);
  t.teardown(() => c.close());
  c.write(rawPost(`${PATH}?pad=${'q'.repeat(10_000)}`, rpcBody(1)));
  const a = await c.response(0);
  t.equal(a.status, 200, 'long query string: 200');
  t.equal(a.body, healthAnswer(1));
  c.write(rawPost(PATH, rpcBody(2), [`X-Pad: ${'h'.repeat(10_000)}`]));
  const b = await c.response(1);
  t.equal(b.status, 200, 'long header: 200');
  t.equal(b.body, healthAnswer(2));
});

t.test(`a head over ${MAX_HEAD_BYTES} bytes: 431, closed`, async (t) => {
  for (const [what, req] of [
    ['a long header', rawPost(PATH, rpcBody(1), [`X-Pad: ${'h'.repeat(MAX_HEAD_BYTES + 100)}`])],
    ['a long URL', rawPost(`${PATH}?pad=${'q'.repeat(MAX_HEAD_BYTES + 100)}`, rpcBody(1))],
  ] as const) {
    const c = await RawConnection.open(h.gw.port);
    t.teardown(() => c.close());
    c.write(req);
    await c.waitClosed();
    const text = c.received.toString('latin1');
    t.match(text, /^HTTP\/1\.1 431 /, `${what}: 431`);
    if (ENGINE.name === 'node') {
      const body = text.slice(text.indexOf('\r\n\r\n') + 4);
      t.same(
        JSON.parse(body),
        { jsonrpc: '2.0', error: { code: 7431, message: 'Request line and headers too large', data: { maxHeadBytes: MAX_HEAD_BYTES } }, id: null },
        `${what}: the JSON-RPC error on Node's listener`,
      );
      t.match(text, /\r\ncontent-type: application\/json\r\n/i);
    }
  }
});
