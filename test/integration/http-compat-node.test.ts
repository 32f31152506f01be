// What Node's listener (src/server/node-engine.ts, where no uWebSockets.js binary loads, or
// rpc.server: node) does with each framing case of docs/http-compatibility.md "HTTP
// compatibility", over raw sockets: its column of the table. http-compat.test.ts pins uWS's.

import t from 'tap';
import { serverEngine } from '../../src/server/engine.js';
import { eventually } from '../helpers/eventually.js';
import { startHarness, TOKEN } from '../helpers/gateway.js';
import { afterARead, chunk, healthAnswer, LAST_CHUNK, RawConnection, rawChunkedHead, rawPost, rpcBody, type RawResponse } from '../helpers/raw-http.js';

const ENGINE = serverEngine('auto');
if (ENGINE.name !== 'node') t.plan(0, `pins Node's listener; this run serves with uWebSockets.js (JUMPGATE_SERVER=node runs it)`);
else {
  type Test = Parameters<Parameters<typeof t.test>[0]>[0];

  const PATH = `/api-token/${TOKEN}`;
  const body = rpcBody;
  const ok = healthAnswer;
  const BODY = body(1);
  /** Node's refusals with the gateway's JSON-RPC bodies (docs/errors.md 7400, 7408). */
  const refusal = (status: string, code: number, message: string): string => {
    const json = `{"jsonrpc":"2.0","error":{"code":${code},"message":"${message}"},"id":null}`;
    return `HTTP/1.1 ${status}\r\ncontent-type: application/json\r\ncontent-length: ${json.length}\r\nconnection: close\r\n\r\n${json}`;
  };
  const BAD_REQUEST = refusal('400 Bad Request', 7400, 'Malformed HTTP request');

  const h = await startHarness({ config: { health: { intervalMs: 60_000 } } });
  t.teardown(() => h.close());

  const open = async (t: Test): Promise<RawConnection> => {
    const c = await RawConnection.open(h.gw.port);
    t.teardown(() => c.close());
    return c;
  };

  const isOk = (t: Test, r: RawResponse, id: number, what: string): void => {
    t.equal(r.status, 200, `${what}: 200`);
    t.equal(r.body, ok(id), `${what}: the answer to id ${id}`);
  };

  /** Node's parser refuses the request: 400 with error 7400, connection closed. */
  const refused = async (t: Test, c: RawConnection, what: string): Promise<void> => {
    await c.waitClosed();
    t.equal(c.received.toString('latin1'), BAD_REQUEST, `${what}: 400, closed`);
  };

  t.test('keep-alive and chunked bodies, on one connection', async (t) => {
    const c = await open(t);
    for (let i = 1; i <= 2; i++) {
      c.write(rawPost(PATH, body(i)));
      isOk(t, await c.response(i - 1), i, `request ${i}`);
    }
    c.write(rawChunkedHead(PATH) + chunk(BODY.slice(0, 10)) + chunk(BODY.slice(10)) + LAST_CHUNK);
    const r = await c.response(2);
    t.equal(r.status, 200, 'chunked: 200');
    t.notOk(c.closed, 'the connection stays open');
  });

  t.test('pipelining behind a pending call: answered in order (unlike uWS)', async (t) => {
    const c = await open(t);
    c.write(rawPost(PATH, body(1, 'getBlockHeight')) + rawPost(PATH, body(2)));
    const first = await c.response(0);
    t.equal(first.status, 200);
    t.match(first.body, /"id":1/, 'the pending call answered first');
    isOk(t, await c.response(1), 2, 'the request behind it');
  });

  t.test('two different Content-Length headers: 400, closed', async (t) => {
    const len = Buffer.byteLength(BODY);
    const c = await open(t);
    c.write(
      [`POST ${PATH} HTTP/1.1`, 'Host: 127.0.0.1', 'Content-Type: application/json', `Content-Length: ${len + 5}`, `Content-Length: ${len}`, '', BODY].join(
        '\r\n',
      ),
    );
    await refused(t, c, 'two Content-Length');
  });

  t.test('chunk data not followed by CRLF: 400, closed', async (t) => {
    const c = await open(t);
    c.write(rawChunkedHead(PATH) + Buffer.byteLength(BODY).toString(16) + '\r\n' + BODY + 'XX' + LAST_CHUNK);
    await refused(t, c, '"XX" where CRLF belongs');
  });

  t.test('HTTP/1.0: served, the connection closed after the answer', async (t) => {
    const c = await open(t);
    c.write(rawPost(PATH, BODY, [], 'HTTP/1.0'));
    isOk(t, await c.response(0), 1, 'HTTP/1.0');
    await c.waitClosed();
    t.ok(c.closed, 'closed');
  });

  t.test('a request line split across reads: served wherever it is cut', async (t) => {
    const req = rawPost(PATH, BODY);
    const target = req.indexOf(' ') + 1;
    const lineEnd = req.indexOf('\r\n');
    for (const at of [2, target, target + 5, lineEnd, lineEnd + 1, lineEnd + 6]) {
      const c = await open(t);
      c.write(req.slice(0, at));
      await afterARead();
      c.write(req.slice(at));
      isOk(t, await c.response(0), 1, `cut at ${JSON.stringify(req.slice(Math.max(0, at - 6), at))}|…`);
    }
  });

  t.test('malformed header lines: 400, closed at once', async (t) => {
    const cases: Record<string, string> = {
      'a header line without a colon': rawPost(PATH, BODY, ['X-No-Colon']),
      'a NUL byte in a header value': rawPost(PATH, BODY, ['X-Nul: a\0b']),
      'an obs-fold continuation line (space)': rawPost(PATH, BODY, ['X-Folded: a', ' continued']),
      'an obs-fold continuation line (tab)': rawPost(PATH, BODY, ['X-Folded: a', '\tcontinued']),
    };
    for (const [what, req] of Object.entries(cases)) {
      const c = await open(t);
      c.write(req);
      await refused(t, c, what);
    }
  });

  t.test('a connection that sends nothing is closed after about 10 s (headers timeout)', async (t) => {
    const c = await open(t);
    await eventually('the server to close the silent connection', () => c.closed, 15_000);
    t.equal(c.received.toString('latin1'), refusal('408 Request Timeout', 7408, 'Request not received in time'), '408 with error 7408, closed');
    t.ok(c.closedAfterMs! >= 9000 && c.closedAfterMs! <= 13_000, `closed after ${c.closedAfterMs} ms`);
  });
}
