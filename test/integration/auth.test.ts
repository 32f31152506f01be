// Token auth and CORS (docs/interface.md "Public interface"): where a token may come from, conflicts, missing,
// unknown and inactive tokens, the configurable header brand, and preflights without auth.

import t from 'tap';
import { INACTIVE, startHarness, TOKEN, TOKEN2, type Harness } from '../helpers/gateway.js';

type Test = Parameters<Parameters<typeof t.test>[0]>[0];

const BODY = '{"jsonrpc":"2.0","id":1,"method":"getHealth"}';
const OK = '{"jsonrpc":"2.0","result":"ok","id":1}';

async function harness(t: Test, config: Record<string, unknown> = {}): Promise<Harness> {
  const h = await startHarness({ config: { health: { intervalMs: 60_000 }, ...config } });
  t.teardown(() => h.close());
  return h;
}

interface Answer {
  status: number;
  headers: Headers;
  text: string;
}

async function post(h: Harness, path: string, headers: Record<string, string> = {}, body = BODY): Promise<Answer> {
  const r = await fetch(h.url + path, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body });
  return { status: r.status, headers: r.headers, text: await r.text() };
}

/** Asserts a gateway error answer: status, body shape and code. */
function isError(t: Test, r: Answer, http: number, code: number, what: string): any {
  t.equal(r.status, http, `${what}: HTTP ${http}`);
  t.equal(r.headers.get('content-type'), 'application/json', `${what}: JSON body`);
  const body = JSON.parse(r.text);
  t.equal(body.jsonrpc, '2.0', what);
  t.equal(body.error.code, code, `${what}: code ${code}`);
  t.type(body.error.message, 'string', what);
  t.equal(body.id, null, what);
  t.same(Object.keys(body), ['jsonrpc', 'error', 'id'], `${what}: body shape`);
  return body;
}

t.test('the token is accepted from the path, both path prefixes, and both headers', async (t) => {
  const h = await harness(t);
  const ways: [string, Record<string, string>][] = [
    [`/api-token/${TOKEN}`, {}],
    [`/api-token/${TOKEN}/`, {}],
    [`/api-key/${TOKEN}`, {}],
    [`/api-key/${TOKEN}/`, {}],
    ['/', { 'X-Service-Api-Token': TOKEN }],
    ['/', { 'X-Service-Api-Key': TOKEN }],
    ['/', { 'x-service-api-token': TOKEN2 }],
  ];
  for (const [path, headers] of ways) {
    const r = await post(h, path, headers);
    t.equal(r.status, 200, `${path} ${JSON.stringify(headers)}`);
    t.equal(r.text, OK);
    t.equal(r.headers.get('x-service-node'), 'n0');
  }
});

t.test('the same token in several places is fine; two different tokens are 400 (7700)', async (t) => {
  const h = await harness(t);
  const same: [string, Record<string, string>][] = [
    [`/api-token/${TOKEN}`, { 'X-Service-Api-Token': TOKEN }],
    [`/api-key/${TOKEN}/`, { 'X-Service-Api-Key': TOKEN }],
    ['/', { 'X-Service-Api-Token': TOKEN, 'X-Service-Api-Key': TOKEN }],
    [`/api-token/${TOKEN}`, { 'X-Service-Api-Token': TOKEN, 'X-Service-Api-Key': TOKEN }],
  ];
  for (const [path, headers] of same) t.equal((await post(h, path, headers)).status, 200, `${path} ${JSON.stringify(headers)}`);

  const conflicting: [string, Record<string, string>][] = [
    [`/api-token/${TOKEN}`, { 'X-Service-Api-Token': TOKEN2 }],
    [`/api-key/${TOKEN}`, { 'X-Service-Api-Key': TOKEN2 }],
    ['/', { 'X-Service-Api-Token': TOKEN, 'X-Service-Api-Key': TOKEN2 }],
    [`/api-token/${TOKEN}`, { 'X-Service-Api-Token': TOKEN, 'X-Service-Api-Key': TOKEN2 }],
    [`/api-token/${TOKEN}`, { 'X-Service-Api-Key': 'some-unknown-token-value' }],
    [`/api-token/${TOKEN}`, { 'X-Service-Api-Key': INACTIVE }],
  ];
  for (const [path, headers] of conflicting) {
    const r = await post(h, path, headers);
    const body = isError(t, r, 400, 7700, `${path} ${JSON.stringify(headers)}`);
    for (const tok of [TOKEN, TOKEN2]) t.notOk(r.text.includes(tok), 'no token in the body');
    t.equal(typeof body.error?.data?.reason, 'string');
  }
});

t.test('missing and unknown tokens are 401 (7401) and never echoed', async (t) => {
  const h = await harness(t);
  isError(t, await post(h, '/'), 401, 7401, 'no token');
  isError(t, await post(h, '/', { 'X-Service-Api-Token': '' }), 401, 7401, 'empty header');
  const unknown = 'unknown-token-7f3a9c2b1d4e5f60';
  for (const [path, headers] of [
    [`/api-token/${unknown}`, {}],
    [`/api-key/${unknown}/`, {}],
    ['/', { 'X-Service-Api-Token': unknown }],
    ['/', { 'X-Service-Api-Key': unknown }],
    [`/api-token/${TOKEN.slice(0, -1)}`, {}],
    [`/api-token/${TOKEN}x`, {}],
    [`/api-token/${TOKEN.toUpperCase()}`, {}],
  ] as [string, Record<string, string>][]) {
    const r = await post(h, path, headers);
    isError(t, r, 401, 7401, `${path} ${JSON.stringify(headers)}`);
    const presented = path === '/' ? Object.values(headers)[0]! : path.split('/')[2]!;
    t.notOk(r.text.includes(presented), 'the presented token is not in the body');
    t.notOk(r.text.includes(presented.slice(0, 12)), 'nor a long prefix of it');
  }
});

t.test('an inactive token is 403 (7403)', async (t) => {
  const h = await harness(t);
  for (const [path, headers] of [
    [`/api-token/${INACTIVE}`, {}],
    [`/api-key/${INACTIVE}/`, {}],
    ['/', { 'X-Service-Api-Token': INACTIVE }],
    ['/', { 'X-Service-Api-Key': INACTIVE }],
  ] as [string, Record<string, string>][]) {
    const r = await post(h, path, headers);
    isError(t, r, 403, 7403, `${path} ${JSON.stringify(headers)}`);
    t.notOk(r.text.includes(INACTIVE), 'the full token is not in the body');
  }
});

t.test('headers.brand renames the headers', async (t) => {
  const h = await harness(t, { headers: { brand: 'Acme' } });
  const ok = await post(h, '/', { 'X-Acme-Api-Token': TOKEN });
  t.equal(ok.status, 200);
  t.equal(ok.text, OK);
  t.equal(ok.headers.get('x-acme-node'), 'n0', 'the node header carries the brand too');
  t.equal(ok.headers.get('x-service-node'), null);
  t.equal((await post(h, '/', { 'X-Acme-Api-Key': TOKEN })).status, 200);
  isError(t, await post(h, '/', { 'X-Service-Api-Token': TOKEN }), 401, 7401, 'the default brand is not read');
  isError(t, await post(h, '/', { 'X-Service-Api-Key': TOKEN }), 401, 7401, 'the default brand is not read');
  isError(t, await post(h, `/api-token/${TOKEN}`, { 'X-Acme-Affinity': 'sticky' }), 400, 7700, 'affinity under the brand');
  t.equal((await post(h, `/api-token/${TOKEN}`, { 'X-Service-Affinity': 'sticky' })).status, 200, 'unbranded affinity is ignored');
  t.equal((await post(h, `/api-token/${TOKEN}`, { 'X-Acme-Affinity': 'key', 'X-Acme-Affinity-Key': 'k1' })).status, 200);
  isError(t, await post(h, `/api-token/${TOKEN}`, { 'Acme-Affinity-Key': 'k'.repeat(41) }), 400, 7700, 'unprefixed key header under the brand');

  const pre = await fetch(h.url + '/', { method: 'OPTIONS', headers: { origin: 'https://x.example', 'access-control-request-method': 'POST' } });
  t.equal(pre.status, 204);
  t.match(pre.headers.get('access-control-allow-headers'), /X-Acme-Api-Token/);
});

t.test('CORS preflight: OPTIONS on any path is 204 without auth', async (t) => {
  const h = await harness(t);
  for (const path of ['/', `/api-token/${TOKEN}`, '/api-token/not-a-real-token-000000', '/anything/else', '/api-key/']) {
    const r = await fetch(h.url + path, {
      method: 'OPTIONS',
      headers: {
        origin: 'https://dapp.example',
        'access-control-request-method': 'POST',
        'access-control-request-headers': 'content-type, x-service-api-token',
      },
    });
    t.equal(r.status, 204, path);
    t.equal(r.headers.get('access-control-allow-origin'), '*', path);
    t.match(r.headers.get('access-control-allow-methods'), /POST/, path);
    t.match((r.headers.get('access-control-allow-headers') ?? '').toLowerCase(), /x-service-api-token/, path);
    t.equal(await r.text(), '', 'no body');
  }
  const bare = await fetch(h.url + '/', { method: 'OPTIONS', headers: { origin: 'https://dapp.example' } });
  t.equal(bare.status, 204);
  const allowed = (bare.headers.get('access-control-allow-headers') ?? '').toLowerCase();
  for (const name of ['content-type', 'x-service-api-token', 'x-service-api-key', 'x-service-affinity', 'x-service-affinity-key'])
    t.ok(allowed.includes(name), `default allow list has ${name}`);

  const answer = await post(h, `/api-token/${TOKEN}`, { origin: 'https://dapp.example' });
  t.equal(answer.headers.get('access-control-allow-origin'), '*', 'answers carry the CORS header too');
  t.match(answer.headers.get('access-control-expose-headers') ?? '', /X-Service-Node/i, 'the node header is readable by browsers');
  const refused = await post(h, '/', { origin: 'https://dapp.example' });
  t.equal(refused.status, 401);
  t.equal(refused.headers.get('access-control-allow-origin'), '*', 'errors carry the CORS header so browsers can read them');
});

t.test('CORS with an origin list echoes allowed origins only', async (t) => {
  const h = await harness(t, { cors: { origins: ['https://a.example'] } });
  const pre = (origin: string): Promise<Response> => fetch(h.url + '/', { method: 'OPTIONS', headers: { origin, 'access-control-request-method': 'POST' } });
  const a = await pre('https://a.example');
  t.equal(a.status, 204);
  t.equal(a.headers.get('access-control-allow-origin'), 'https://a.example');
  t.match(a.headers.get('access-control-allow-methods'), /POST/);
  t.match(a.headers.get('vary') ?? '', /Origin/i, 'Vary: Origin when the answer depends on it');
  for (const other of ['https://b.example', 'https://a.example.evil', 'http://a.example']) {
    const r = await pre(other);
    t.equal(r.status, 204, other);
    t.equal(r.headers.get('access-control-allow-origin'), null, `${other} gets no allow-origin`);
  }
  const ok = await post(h, `/api-token/${TOKEN}`, { origin: 'https://a.example' });
  t.equal(ok.status, 200);
  t.equal(ok.headers.get('access-control-allow-origin'), 'https://a.example');
  const other = await post(h, `/api-token/${TOKEN}`, { origin: 'https://b.example' });
  t.equal(other.status, 200, 'CORS does not block non-browser clients');
  t.equal(other.headers.get('access-control-allow-origin'), null);
  const none = await post(h, `/api-token/${TOKEN}`);
  t.equal(none.headers.get('access-control-allow-origin'), null, 'no Origin, no allow-origin');
});
