// What the client HTTP listener on uWebSockets.js (uws-pack 20.0.8) does with each framing
// case of docs/http-compatibility.md "HTTP compatibility", over raw sockets. These tests pin today's behaviour,
// good and bad, so that a uWS upgrade that changes any of it is noticed here first. Where Node's
// listener serves (docs/runtimes.md), http-compat-node.test.ts pins its column instead.
//
// The connections that get no answer are opened when the file starts and checked by the
// last test: uWS closes them with its idle timer (~10 s, counted in 4 s ticks) like a
// connection that never sent a byte, and waiting once for all of them keeps the file short.

import t from 'tap';
import { serverEngine, uwsLoad } from '../../src/server/engine.js';
import { eventually } from '../helpers/eventually.js';
import { startHarness, TOKEN } from '../helpers/gateway.js';
import { afterARead, chunk, healthAnswer, LAST_CHUNK, RawConnection, rawChunkedHead, rawPost, rpcBody, type RawResponse } from '../helpers/raw-http.js';

const ENGINE = serverEngine('auto');
const LOADED = uwsLoad();
/**
 * uWS v20.57 (the Node 24 build, docs/runtimes.md) parses request lines split across reads and
 * answers malformed header lines with 400; uws-pack 20.0.8's answers are pinned below.
 */
const V20_57 = LOADED.ok && LOADED.build.version === '20.57.0';
if (ENGINE.name !== 'uws') t.plan(0, `pins uWebSockets.js; this run serves with Node's listener (http-compat-node.test.ts pins that)`);
else {
  type Test = Parameters<Parameters<typeof t.test>[0]>[0];

  const PATH = `/api-token/${TOKEN}`;
  const body = rpcBody;
  const ok = healthAnswer;
  const BODY = body(1);
  const delay = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

  const h = await startHarness({ config: { health: { intervalMs: 60_000 } } });
  t.teardown(() => h.close());

  async function open(t: Test): Promise<RawConnection> {
    const c = await RawConnection.open(h.gw.port);
    t.teardown(() => c.close());
    return c;
  }

  function isOk(t: Test, r: RawResponse, id: number, what: string): void {
    t.equal(r.status, 200, `${what}: 200`);
    t.equal(r.body, ok(id), `${what}: the answer to id ${id}`);
  }

  // Opened now, judged by the last test (see the header comment).
  const silent = {
    'a header line without a colon': rawPost(PATH, BODY, ['X-No-Colon']),
    'a NUL byte in a header value': rawPost(PATH, BODY, ['X-Nul: a\0b']),
    'an obs-fold continuation line (space)': rawPost(PATH, BODY, ['X-Folded: a', ' continued']),
    'an obs-fold continuation line (tab)': rawPost(PATH, BODY, ['X-Folded: a', '\tcontinued']),
  };
  const idleControl = await RawConnection.open(h.gw.port);
  const silentConns = await Promise.all(
    Object.values(silent).map(async (req) => {
      const c = await RawConnection.open(h.gw.port);
      c.write(req);
      return c;
    }),
  );
  const silentSentAt = Date.now();
  t.teardown(() => [idleControl, ...silentConns].forEach((c) => c.close()));

  t.test('keep-alive: several requests one after another on one connection', async (t) => {
    const c = await open(t);
    for (let i = 1; i <= 3; i++) {
      c.write(rawPost(PATH, body(i)));
      isOk(t, await c.response(i - 1), i, `request ${i}`);
    }
    t.notOk(c.closed, 'the connection stays open');
  });

  t.test('chunked request bodies, in one write and spread over writes', async (t) => {
    const c = await open(t);
    c.write(rawChunkedHead(PATH) + chunk(BODY.slice(0, 10)) + chunk(BODY.slice(10)) + LAST_CHUNK);
    isOk(t, await c.response(0), 1, 'two chunks in one write');
    const two = body(2);
    c.write(rawChunkedHead(PATH) + chunk(two.slice(0, 5)));
    await afterARead();
    c.write(chunk(two.slice(5, 20)));
    await afterARead();
    c.write(chunk(two.slice(20)) + LAST_CHUNK);
    isOk(t, await c.response(1), 2, 'chunks in three writes');
    t.notOk(c.closed, 'the connection stays open');
  });

  t.test('pipelining: requests answered within the handler are all answered, in order', async (t) => {
    // 401 (no token) and the CORS preflight are answered synchronously by the listener.
    const c = await open(t);
    c.write(rawPost('/', body(1)) + 'OPTIONS / HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n' + rawPost('/', body(3)) + rawPost(PATH, body(4)));
    const statuses: number[] = [];
    for (let i = 0; i < 4; i++) statuses.push((await c.response(i)).status);
    t.same(statuses, [401, 204, 401, 200], 'four answers in request order');
    isOk(t, c.responses()[3]!, 4, 'a call behind them (the last in the read)');
  });

  t.test('pipelining behind a pending call: no answer, the connection is closed', async (t) => {
    // uWS closes a connection on which a request arrives while an answer is still pending
    // (every JSON-RPC call waits for a node). The pending call is aborted after it reached the
    // node, so its effect happens and its answer is lost; the request behind it is never read.
    const c = await open(t);
    const reached = (m: string): number => h.sims[0]!.stats.byMethod.get(m) ?? 0;
    const before = reached('getBlockHeight');
    c.write(rawPost(PATH, body(1, 'getBlockHeight')) + rawPost(PATH, body(2, 'getEpochInfo')));
    await c.waitClosed();
    t.equal(c.received.length, 0, 'not a byte of answer');
    await eventually('the first call to reach the node', () => reached('getBlockHeight') === before + 1);
    t.equal(reached('getEpochInfo'), 0, 'the second call never reached the node');

    // The same when the second request comes in a later read, while the first waits for a slow node.
    h.sims[0]!.set({ latencyMs: [300, 300] });
    t.teardown(() => h.sims[0]!.set({ latencyMs: [0, 0] }));
    const later = await open(t);
    later.write(rawPost(PATH, body(3)));
    await eventually('the first request to be pending', () => h.gw.inflight() === 1);
    later.write(rawPost(PATH, body(4)));
    await later.waitClosed();
    t.equal(later.received.length, 0, 'second request in a later read: not a byte of answer either');
  });

  t.test('two different Content-Length headers: the first one frames the body', async (t) => {
    const len = Buffer.byteLength(BODY);
    const withLengths = (lengths: number[], payload: string): string =>
      [`POST ${PATH} HTTP/1.1`, 'Host: 127.0.0.1', 'Content-Type: application/json', ...lengths.map((n) => `Content-Length: ${n}`), '', payload].join('\r\n');
    // First longer than the body: 5 more bytes (spaces) are read as body. Were the second
    // used, the spaces would start the next request and break it.
    const longFirst = await open(t);
    longFirst.write(withLengths([len + 5, len], BODY + '     '));
    isOk(t, await longFirst.response(0), 1, 'Content-Length: len+5, then len');
    longFirst.write(rawPost(PATH, body(2)));
    isOk(t, await longFirst.response(1), 2, 'the next request on the connection');

    // First exact: answered at once. Were the second used, the next request's first 5 bytes
    // would complete this body instead.
    const exactFirst = await open(t);
    exactFirst.write(withLengths([len, len + 5], BODY));
    isOk(t, await exactFirst.response(0), 1, 'Content-Length: len, then len+5');
    exactFirst.write(rawPost(PATH, body(2)));
    isOk(t, await exactFirst.response(1), 2, 'the next request on the connection');
  });

  t.test('chunk data not followed by CRLF: served, the two bytes are skipped', async (t) => {
    const c = await open(t);
    c.write(rawChunkedHead(PATH) + Buffer.byteLength(BODY).toString(16) + '\r\n' + BODY + 'XX' + LAST_CHUNK);
    isOk(t, await c.response(0), 1, '"XX" where CRLF belongs');
    c.write(rawPost(PATH, body(2)));
    isOk(t, await c.response(1), 2, 'the next request on the connection');
  });

  t.test('HTTP/1.0: 505 from uWS, connection closed', async (t) => {
    const c = await open(t);
    c.write(rawPost(PATH, BODY, [], 'HTTP/1.0'));
    const r = await c.response(0);
    t.equal(r.status, 505);
    t.equal(r.headers['connection'], 'close');
    t.match(r.body, /does not support HTTP\/1\.0/, "uWS's own page");
    t.ok(c.closed, 'closed');
  });

  t.test('a request line split across reads: 505 when cut after a space, else served', async (t) => {
    const req = rawPost(PATH, BODY);
    const lineEnd = req.indexOf('\r\n');
    const target = req.indexOf(' ') + 1;
    const version = req.indexOf(' HTTP/1.1') + 1;
    const cuts: [string, number, number][] = [
      ['inside the method', 2, 200],
      ['right after the method', target - 1, 200],
      ['after "POST "', target, 505],
      ['inside the target', target + 5, 200],
      ["after the target's space", version, 505],
      ['inside the version', version + 4, 505],
      ['before the CR', lineEnd, 505],
      ['before the LF', lineEnd + 1, 505],
      ['after the request line', lineEnd + 2, 200],
      ['inside a header', lineEnd + 6, 200],
    ];
    for (const [where, at, cutStatus] of cuts) {
      const status = V20_57 ? 200 : cutStatus;
      const c = await open(t);
      c.write(req.slice(0, at));
      await afterARead();
      c.write(req.slice(at));
      const r = await c.response(0);
      t.equal(r.status, status, `cut ${where} (${JSON.stringify(req.slice(Math.max(0, at - 6), at))}|…): ${status}`);
      if (status === 505) {
        await c.waitClosed();
        t.ok(c.closed, 'closed');
      } else t.equal(r.body, ok(1));
    }
  });

  t.test('a malformed header line: no answer; closed by the idle timer like a silent connection', async (t) => {
    // Reaches 1 s after the requests were sent before judging "no answer".
    await delay(Math.max(0, 1000 - (Date.now() - silentSentAt)));
    const names = Object.keys(silent);
    if (V20_57) {
      for (const [i, c] of silentConns.entries()) {
        await c.waitClosed();
        t.match(c.received.toString('latin1'), /^HTTP\/1\.1 400 Bad Request\r\n/, `${names[i]}: 400 (uWS v20.57), closed`);
      }
    } else {
      silentConns.forEach((c, i) => {
        t.equal(c.received.length, 0, `${names[i]}: no byte within ${Date.now() - silentSentAt} ms`);
        t.notOk(c.closed, `${names[i]}: still open`);
      });
    }
    // uWS's HTTP idle timeout is 10 s in 4 s ticks: every one closes 8 to ~14 s after it opened.
    const all = V20_57 ? [idleControl] : [idleControl, ...silentConns];
    // v20.57 waits about 32 s for a first request.
    const [from, to] = V20_57 ? [28_000, 37_000] : [8000, 15_000];
    await eventually('the idle timer to close the connections', () => all.every((c) => c.closed), to - (Date.now() - silentSentAt));
    t.equal(idleControl.received.length, 0);
    t.ok(idleControl.closedAfterMs! >= from && idleControl.closedAfterMs! <= to, `a connection that sent nothing closes after ${idleControl.closedAfterMs} ms`);
    if (!V20_57)
      silentConns.forEach((c, i) => {
        t.equal(c.received.length, 0, `${names[i]}: closed without a byte`);
        t.ok(
          Math.abs(c.closedAfterMs! - idleControl.closedAfterMs!) < 4500,
          `${names[i]}: closed after ${c.closedAfterMs} ms, with the one that sent nothing (same timer)`,
        );
      });
  });
}
