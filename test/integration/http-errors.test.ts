// Gateway errors on the HTTP listener (docs/errors.md "Gateway errors"): each code with its HTTP status and the
// body `{"jsonrpc":"2.0","error":{"code":C,"message":…},"id":…}`, exact bytes sent over raw
// sockets where fetch cannot (bad Content-Length, chunked bodies, missing Content-Type,
// non-UTF-8 header bytes), and a flood of bad requests after which good ones still work.
// 7502/7503/7504 are covered in upstream-failures.test.ts.

import { request } from 'node:http';
import { connect } from 'node:net';
import t from 'tap';
import { INACTIVE, startHarness, TOKEN, type Harness } from '../helpers/gateway.js';

type Test = Parameters<Parameters<typeof t.test>[0]>[0];

const BODY = '{"jsonrpc":"2.0","id":1,"method":"getHealth"}';
const OK = '{"jsonrpc":"2.0","result":"ok","id":1}';
const MAX_BODY = 4096;

async function harness(t: Test, config: Record<string, unknown> = {}): Promise<Harness> {
  const h = await startHarness({ config: { health: { intervalMs: 60_000 }, limits: { maxBodyBytes: MAX_BODY, maxBatch: 5 }, ...config } });
  t.teardown(() => h.close());
  return h;
}

interface Answer {
  status: number;
  headers: Record<string, string>;
  text: string;
  /** The server closed the connection after answering. */
  closed: boolean;
}

async function post(h: Harness, headers: Record<string, string> = {}, body = BODY, path = `/api-token/${TOKEN}`): Promise<Answer> {
  const r = await fetch(h.url + path, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body });
  return { status: r.status, headers: Object.fromEntries(r.headers), text: await r.text(), closed: false };
}

/** node:http request with exactly the given headers (no Content-Type unless given). */
function httpRequest(h: Harness, method: string, path: string, headers: Record<string, string>, body?: string): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request(h.url + path, { method, headers, agent: false }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => (text += d));
      res.on('end', () =>
        resolve({ status: res.statusCode!, headers: res.headers as Record<string, string>, text, closed: res.headers.connection === 'close' }),
      );
    });
    req.on('error', reject);
    req.end(body);
  });
}

/**
 * Raw HTTP/1.1 over a socket: writes `head`, then each of `parts` `gapMs` apart (while the
 * socket is open), and resolves with the first complete response.
 */
function raw(h: Harness, head: string | Buffer, parts: (string | Buffer)[] = [], gapMs = 20): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const sock = connect(h.gw.port, '127.0.0.1');
    let buf = Buffer.alloc(0);
    let answer: Answer | null = null;
    let closed = false;
    const timer = setTimeout(() => {
      sock.destroy();
      reject(new Error('no complete response within 1500 ms; got: ' + buf.toString('latin1').slice(0, 300)));
    }, 1500);
    const done = (): void => {
      clearTimeout(timer);
      sock.destroy();
      resolve({ ...answer!, closed });
    };
    sock.on('data', (d: Buffer) => {
      buf = Buffer.concat([buf, d]);
      if (answer !== null) return;
      const end = buf.indexOf('\r\n\r\n');
      if (end < 0) return;
      const lines = buf.toString('latin1', 0, end).split('\r\n');
      const headers: Record<string, string> = {};
      for (const l of lines.slice(1)) {
        const c = l.indexOf(':');
        headers[l.slice(0, c).trim().toLowerCase()] = l.slice(c + 1).trim();
      }
      const len = Number(headers['content-length'] ?? 0);
      if (buf.length < end + 4 + len) return;
      answer = { status: Number(lines[0]!.split(' ')[1]), headers, text: buf.toString('utf8', end + 4, end + 4 + len), closed: false };
      // A server that closes the connection does so right after the answer.
      if (headers['connection']?.toLowerCase() === 'close') setTimeout(done, 300);
      else done();
    });
    sock.on('error', () => {}); // a reset after the answer is expected when the server closes
    sock.on('close', () => {
      closed = true;
      if (answer !== null) done();
      else {
        clearTimeout(timer);
        reject(new Error('connection closed without a response; got: ' + buf.toString('latin1').slice(0, 300)));
      }
    });
    sock.on('connect', async () => {
      sock.write(head);
      for (const p of parts) {
        await new Promise((r) => setTimeout(r, gapMs));
        if (answer !== null || closed || sock.destroyed) return;
        sock.write(p);
      }
    });
  });
}

function rawHead(headers: string[], path = `/api-token/${TOKEN}`): string {
  return [`POST ${path} HTTP/1.1`, 'Host: 127.0.0.1', ...headers, '', ''].join('\r\n');
}

/** Headers + body with a raw header line given as bytes (for non-ASCII header values). */
function withHeaderBytes(name: string, value: Buffer, body = BODY, extra: string[] = []): Buffer {
  return Buffer.concat([
    Buffer.from(
      `POST /api-token/${TOKEN} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n${extra.map((l) => l + '\r\n').join('')}${name}: `,
      'latin1',
    ),
    value,
    Buffer.from(`\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`, 'utf8'),
  ]);
}

const chunk = (s: string): string => Buffer.byteLength(s).toString(16) + '\r\n' + s + '\r\n';

/** Asserts the gateway error shape; returns the parsed body. */
function isError(t: Test, r: Answer, http: number, code: number, what: string, id: unknown = null): any {
  t.equal(r.status, http, `${what}: HTTP ${http}`);
  t.equal(r.headers['content-type'], 'application/json', `${what}: JSON`);
  let body: any;
  try {
    body = JSON.parse(r.text);
  } catch {
    t.fail(`${what}: body is not JSON: ${r.text}`);
    return {};
  }
  t.same(Object.keys(body), ['jsonrpc', 'error', 'id'], `${what}: body shape`);
  t.equal(body.jsonrpc, '2.0');
  t.equal(body.error?.code, code, `${what}: code ${code}`);
  t.type(body.error?.message, 'string');
  t.ok(body.error?.message?.length > 0);
  t.ok(
    Object.keys(body.error ?? {}).every((k) => ['code', 'message', 'data'].includes(k)),
    `${what}: error members`,
  );
  if (body.error !== undefined && 'data' in body.error) t.type(body.error.data, 'object');
  t.equal(body.id, id, `${what}: id`);
  return body;
}

t.test('7401 and 7403', async (t) => {
  const h = await harness(t);
  isError(t, await post(h, {}, BODY, '/'), 401, 7401, 'no token');
  isError(t, await post(h, {}, BODY, '/api-token/not-a-known-token-123456'), 401, 7401, 'unknown token');
  isError(t, await post(h, {}, BODY, `/api-token/${INACTIVE}`), 403, 7403, 'inactive token');
});

t.test('7404 unknown paths, 7405 wrong methods', async (t) => {
  const h = await harness(t);
  for (const path of ['/foo', '/api-token', '/api-token/', '/api-key/', `/api-token/${TOKEN}/extra`, `/api-tokens/${TOKEN}`, '/api/v1', '//']) {
    isError(t, await post(h, {}, BODY, path), 404, 7404, `POST ${path}`);
  }
  isError(t, await httpRequest(h, 'GET', '/favicon.ico', {}), 404, 7404, 'GET unknown path');

  for (const [method, path] of [
    ['GET', '/'],
    ['GET', `/api-token/${TOKEN}`],
    ['PUT', `/api-token/${TOKEN}/`],
    ['DELETE', '/'],
    ['PATCH', `/api-key/${TOKEN}`],
  ] as const) {
    const r = await httpRequest(h, method, path, { 'content-type': 'application/json' }, method === 'GET' || method === 'DELETE' ? undefined : BODY);
    isError(t, r, 405, 7405, `${method} ${path}`);
    t.match(r.headers['allow'] ?? '', /POST/, 'Allow names POST');
  }
  // HEAD answers carry no body; a body would be read as the next response on the connection.
  for (const [path, status] of [
    ['/', 405],
    ['/nowhere', 404],
  ] as const) {
    const head = await raw(h, `HEAD ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n`);
    t.equal(head.status, status, `HEAD ${path}`);
    t.equal(head.text, '', 'no body');
    t.equal(await httpRequest(h, 'HEAD', path, {}).then((r) => r.status), status, 'node:http parses it');
  }
  t.equal((await post(h)).text, OK, 'the connection pool still works');
});

t.test('7413: Content-Length over the limit is answered before the body is sent', async (t) => {
  const h = await harness(t);
  const r = await raw(h, rawHead(['Content-Type: application/json', 'Content-Length: 2000000']));
  const body = isError(t, r, 413, 7413, 'declared 2 MB');
  t.equal(body.error?.data?.maxBodyBytes, MAX_BODY);
  t.ok(r.closed, 'the connection is closed (the body is never read)');

  const justOver = await raw(h, rawHead(['Content-Type: application/json', `Content-Length: ${MAX_BODY + 1}`]));
  isError(t, justOver, 413, 7413, 'one byte over');

  const atLimit = BODY.padEnd(MAX_BODY, ' ');
  const ok = await post(h, {}, atLimit);
  t.equal(ok.status, 200, 'a body of exactly maxBodyBytes is accepted');
  t.equal(ok.text, OK);
});

t.test('7413: a chunked body that grows over the limit is rejected while streaming', async (t) => {
  const h = await harness(t);
  const head = rawHead(['Content-Type: application/json', 'Transfer-Encoding: chunked']);
  const piece = ' '.repeat(1500);
  // 6 KB would follow if the gateway kept reading; it must answer after ~4 KB, before the end.
  const parts = ['[' + piece, piece, piece, piece, piece, '0\r\n\r\n'].map((p, i, all) => (i === all.length - 1 ? p : chunk(p)));
  const r = await raw(h, head, parts.slice(1), 30);
  isError(t, r, 413, 7413, 'chunked over the limit');
  t.ok(r.closed, 'connection closed');

  const okChunked = await raw(h, head + chunk(BODY.slice(0, 10)), [chunk(BODY.slice(10, 30)), chunk(BODY.slice(30)) + '0\r\n\r\n'], 10);
  t.equal(okChunked.status, 200, 'a chunked body under the limit is served');
  t.equal(okChunked.text, OK);
});

t.test('7415: Content-Type must be application/json (charset utf-8 optional, any case)', async (t) => {
  const h = await harness(t);
  for (const type of [
    'text/plain',
    'application/json; charset=latin1',
    'application/json;charset=iso-8859-1',
    'application/jsonx',
    'application/x-www-form-urlencoded',
    'json',
    'multipart/form-data; boundary=x',
  ]) {
    isError(t, await post(h, { 'content-type': type }), 415, 7415, type);
  }
  const missing = await httpRequest(h, 'POST', `/api-token/${TOKEN}`, { 'content-length': String(BODY.length) }, BODY);
  isError(t, missing, 415, 7415, 'no Content-Type');
  for (const type of [
    'application/json',
    'Application/JSON; charset=UTF-8',
    'application/json;charset=utf-8',
    'APPLICATION/JSON',
    'application/json; charset="utf-8"',
  ]) {
    const r = await post(h, { 'content-type': type });
    t.equal(r.status, 200, type);
    t.equal(r.text, OK, type);
  }
});

t.test('7700: affinity values', async (t) => {
  const h = await harness(t);
  for (const v of ['sticky', 'keys', 'node,key', 'random', '"sticky"']) {
    const body = isError(t, await post(h, { 'x-service-affinity': v }), 400, 7700, `affinity ${v}`);
    t.type(body.error?.data?.reason, 'string');
  }
  for (const v of ['default', 'Default', 'key', '"key"', "'key'", 'KEY', 'node', 'NODE', '"Node"', ' node ']) {
    const r = await post(h, { 'x-service-affinity': v });
    t.equal(r.status, 200, `affinity ${v} accepted`);
    t.equal(r.text, OK);
  }
});

t.test('7700: affinity keys are 1..40 bytes of UTF-8', async (t) => {
  const h = await harness(t);
  const key = (k: string, mode = 'key'): Promise<Answer> => post(h, { 'x-service-affinity': mode, 'x-service-affinity-key': k });
  t.equal((await key('k'.repeat(40))).status, 200, '40 bytes accepted');
  t.equal((await key('k')).status, 200, '1 byte accepted');
  isError(t, await key('k'.repeat(41)), 400, 7700, '41 bytes');
  isError(t, await key('k'.repeat(50)), 400, 7700, '50 bytes');
  isError(t, await key('k'.repeat(41), 'default'), 400, 7700, 'a bad key is rejected under any affinity');

  // without the X- prefix
  t.equal((await post(h, { 'x-service-affinity': 'key', 'service-affinity-key': 'bare-key' })).status, 200, 'bare key header accepted');
  isError(t, await post(h, { 'x-service-affinity': 'key', 'service-affinity-key': 'k'.repeat(41) }), 400, 7700, 'bare key header is checked');

  // multi-byte UTF-8, sent as raw bytes
  const send = (value: Buffer, mode = 'key'): Promise<Answer> =>
    raw(h, withHeaderBytes('X-Service-Affinity-Key', value, BODY, [`X-Service-Affinity: ${mode}`]));
  const euro = Buffer.from('€'.repeat(14));
  t.equal(euro.length, 42);
  isError(t, await send(euro), 400, 7700, '14 three-byte characters (42 bytes)');
  isError(t, await send(Buffer.from('a' + '€'.repeat(13) + 'b')), 400, 7700, '41 bytes with multi-byte characters');
  const fits = await send(Buffer.from('a' + '€'.repeat(12) + 'b'));
  t.equal(fits.status, 200, '38 bytes with 3-byte characters accepted (bytes, not latin1 chars, are counted)');
  t.equal(fits.text, OK);
  t.equal((await send(Buffer.from('a' + 'é'.repeat(19) + 'b'))).status, 200, '40 bytes with 2-byte characters accepted');
  t.equal((await send(Buffer.from('bot-😀-1'))).status, 200, 'emoji inside a key accepted');
  const unprefixed = await raw(h, withHeaderBytes('Service-Affinity-Key', Buffer.from('€'.repeat(14)), BODY, ['X-Service-Affinity: key']));
  isError(t, unprefixed, 400, 7700, 'bare key header with 42 bytes');
});

t.test('7700: affinity keys that are not UTF-8 are rejected', async (t) => {
  const h = await harness(t);
  const cases: [string, number[]][] = [
    ['latin1 é then 0xFF', [0x61, 0xe9, 0xff, 0x62]],
    ['lone continuation byte', [0x61, 0x80, 0x62]],
    ['overlong slash', [0x61, 0xc0, 0xaf, 0x62]],
    ['truncated 3-byte sequence', [0x61, 0xe2, 0x82, 0x62]],
    ['UTF-16 surrogate encoded in UTF-8', [0x61, 0xed, 0xa0, 0x80, 0x62]],
  ];
  for (const [what, bytes] of cases) {
    for (const mode of ['key', 'default']) {
      const r = await raw(h, withHeaderBytes('X-Service-Affinity-Key', Buffer.from(bytes), BODY, [`X-Service-Affinity: ${mode}`]));
      const body = isError(t, r, 400, 7700, `${what} (${mode})`);
      t.match(body.error?.data?.reason ?? '', /UTF-8/, 'reason names UTF-8');
    }
  }
  const good = await raw(h, withHeaderBytes('X-Service-Affinity-Key', Buffer.from('a-é-b'), BODY, ['X-Service-Affinity: key']));
  t.equal(good.status, 200, 'valid UTF-8 over the same path is accepted');
});

t.test('7701: batch over limits.maxBatch', async (t) => {
  const h = await harness(t);
  const batch = (n: number): string => '[' + Array.from({ length: n }, (_, i) => `{"jsonrpc":"2.0","id":${i},"method":"getHealth"}`).join(',') + ']';
  const body = isError(t, await post(h, {}, batch(6)), 413, 7701, '6 calls, limit 5');
  t.equal(body.error?.data?.maxBatch, 5);
  isError(t, await post(h, {}, '[' + Array(6).fill('1').join(',') + ']'), 413, 7701, 'invalid elements count');
  t.equal((await post(h, {}, batch(5))).status, 200, 'at the limit');
});

t.test('after a flood of bad requests the gateway still answers', async (t) => {
  const h = await harness(t);
  const malformed = Array.from({ length: 200 }, (_, i) => post(h, {}, i % 2 === 0 ? '{"jsonrpc":' + i : '[' + '{'.repeat(i)));
  const oversize = Array.from({ length: 50 }, () => raw(h, rawHead(['Content-Type: application/json', `Content-Length: ${MAX_BODY * 100}`])));
  const chunkedOver = Array.from({ length: 10 }, () =>
    raw(h, rawHead(['Content-Type: application/json', 'Transfer-Encoding: chunked']) + chunk(' '.repeat(3000)), [chunk(' '.repeat(3000))], 5),
  );
  const wrongType = Array.from({ length: 20 }, () => post(h, { 'content-type': 'text/plain' }));
  const noAuth = Array.from({ length: 20 }, () => post(h, {}, BODY, '/'));
  const [m, o, c, w, n] = await Promise.all([
    Promise.all(malformed),
    Promise.all(oversize),
    Promise.all(chunkedOver),
    Promise.all(wrongType),
    Promise.all(noAuth),
  ]);
  t.ok(
    m.every((r) => r.status === 200 && JSON.parse(r.text).error.code === -32700),
    '200 malformed bodies: parse errors',
  );
  t.ok(
    o.every((r) => r.status === 413),
    '50 oversize bodies: 413',
  );
  t.ok(
    c.every((r) => r.status === 413),
    '10 chunked oversize bodies: 413',
  );
  t.ok(
    w.every((r) => r.status === 415),
    'wrong content types: 415',
  );
  t.ok(
    n.every((r) => r.status === 401),
    'no token: 401',
  );
  t.equal(h.gw.inflight(), 0, 'nothing left in flight');
  const good = await post(h);
  t.equal(good.status, 200);
  t.equal(good.text, OK);
  const fresh = await httpRequest(h, 'POST', `/api-token/${TOKEN}`, { 'content-type': 'application/json' }, BODY);
  t.equal(fresh.text, OK, 'a new connection is served too');
});
