// The account console on a real socket: every /api/v1 route, sessions and CSRF, validation,
// login throttling per client IP and per email (clients bind distinct 127.0.0.x addresses),
// cross-account isolation, the token shown once, the OpenAPI document, the pages and assets.
// The suite runs against the SQL store (sqlite in memory) and against the in-memory fake.

import { request } from 'node:http';
import t from 'tap';
import { hashPassword } from '../../src/accounts/password.js';
import { startConsole, type ConsoleOptions, type ConsoleServer } from '../../src/console/listener.js';
import { silentLogger } from '../../src/log.js';
import { openStore } from '../../src/store/open.js';
import type { Store, UsageRow } from '../../src/store/types.js';
import { MemoryStore } from '../helpers/memory-store.js';

type Test = Parameters<Parameters<typeof t.test>[0]>[0];

const HTTP = 'http://127.0.0.1:8899';
const WS = 'ws://127.0.0.1:8900';
const PASSWORD = 'correct horse battery';

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
  json: any;
}

/** A browser-like client: keeps the session cookie and the CSRF token; can bind a source IP. */
class Client {
  cookie: string | null = null;
  csrf: string | null = null;

  constructor(
    readonly base: string,
    readonly ip = '127.0.0.1',
  ) {}

  send(
    method: string,
    path: string,
    opts: { body?: unknown; raw?: string; type?: string; csrf?: string | null; headers?: Record<string, string> } = {},
  ): Promise<Answer> {
    const url = new URL(path, this.base);
    const headers: Record<string, string> = { ...opts.headers };
    let payload: string | undefined;
    if (opts.raw !== undefined) payload = opts.raw;
    else if (opts.body !== undefined) payload = JSON.stringify(opts.body);
    if (payload !== undefined) {
      headers['content-type'] = opts.type ?? 'application/json';
      headers['content-length'] = String(Buffer.byteLength(payload));
    }
    if (this.cookie) headers.cookie = this.cookie;
    const csrf = opts.csrf === undefined ? this.csrf : opts.csrf;
    if (csrf !== null && method !== 'GET') headers['x-csrf-token'] = csrf;
    return new Promise((resolve, reject) => {
      const req = request({ host: url.hostname, port: url.port, path: url.pathname + url.search, method, headers, localAddress: this.ip }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          for (const c of [res.headers['set-cookie'] ?? []].flat()) {
            const [pair] = c.split(';');
            this.cookie = /Max-Age=0|Expires=Thu, 01 Jan 1970/i.test(c) ? null : pair!;
          }
          let json: unknown = null;
          try {
            json = JSON.parse(text);
          } catch {
            // HTML or empty
          }
          resolve({ status: res.statusCode!, headers: res.headers, text, json });
        });
        res.on('error', reject);
      });
      req.on('error', reject);
      req.end(payload);
    });
  }

  get(path: string): Promise<Answer> {
    return this.send('GET', path);
  }

  async register(email: string, password = PASSWORD): Promise<Answer> {
    const r = await this.send('POST', '/api/v1/register', { body: { email, password } });
    if (r.status === 201) this.csrf = r.json.csrfToken;
    return r;
  }

  async login(email: string, password = PASSWORD): Promise<Answer> {
    const r = await this.send('POST', '/api/v1/login', { body: { email, password } });
    if (r.status === 200) this.csrf = r.json.csrfToken;
    return r;
  }
}

interface Fixture {
  store: Store;
  console: ConsoleServer;
  changes: { n: number };
  client(ip?: string): Client;
}

async function fixture(t: Test, store: Store, opts: Partial<ConsoleOptions> = {}): Promise<Fixture> {
  const changes = { n: 0 };
  const server = await startConsole({
    store,
    host: '127.0.0.1',
    port: 0,
    registration: 'open',
    endpoints: { http: HTTP, ws: WS },
    onTokensChanged: () => changes.n++,
    log: silentLogger(),
    ...opts,
  });
  t.teardown(() => server.close());
  return { store, console: server, changes, client: (ip) => new Client(server.url, ip) };
}

/** Registers `email`, creates a stack and a token; returns the client and ids. */
async function account(f: Fixture, email: string, stackName = 'main') {
  const c = f.client();
  const r = await c.register(email);
  if (r.status !== 201) throw new Error(`register ${email}: ${r.status} ${r.text}`);
  const stack = (await c.send('POST', '/api/v1/stacks', { body: { name: stackName } })).json;
  const created = (await c.send('POST', `/api/v1/stacks/${stack.id}/tokens`, { body: { label: 'bot' } })).json;
  return { c, stack, token: created.token as string, tokenId: created.record.id as string, accountId: r.json.account.id as string };
}

function errorCode(r: Answer): string | undefined {
  return r.json?.error?.code;
}

function usage(tokenId: string, method: string, minute: number, calls: number, errors = 0, bytes = 100): UsageRow {
  return { tokenId, method, minute, calls, errors, bytesIn: bytes, bytesOut: bytes * 2, histogram: null };
}

const stores: [string, () => Promise<Store>][] = [
  ['sql store', () => openStore('sqlite://:memory:')],
  ['memory store', async () => new MemoryStore()],
];

for (const [kind, open] of stores) {
  t.test(kind, async (t) => {
    const newStore = async (t: Test) => {
      const s = await open();
      t.teardown(() => s.close());
      return s;
    };

    t.test('logged out: API 401, pages redirect to /login, login and register pages render', async (t) => {
      const f = await fixture(t, await newStore(t));
      const c = f.client();
      for (const [method, path] of [
        ['GET', '/api/v1/me'],
        ['POST', '/api/v1/logout'],
        ['GET', '/api/v1/stacks'],
        ['POST', '/api/v1/stacks'],
        ['GET', '/api/v1/stacks/x'],
        ['GET', '/api/v1/stacks/x/overview'],
        ['GET', '/api/v1/stacks/x/analytics'],
        ['GET', '/api/v1/stacks/x/tokens'],
        ['POST', '/api/v1/stacks/x/tokens'],
        ['PATCH', '/api/v1/stacks/x/tokens/y'],
        ['DELETE', '/api/v1/stacks/x/tokens/y'],
        ['GET', '/api/v1/stacks/x/landing'],
        ['GET', '/api/v1/stacks/x/landing/nodes'],
        ['GET', '/api/v1/landing/nodes'],
      ] as const) {
        // A body that would fail validation: auth is checked first.
        const r = await c.send(method, path, method === 'GET' ? {} : { body: { junk: 1 } });
        t.equal(r.status, 401, `${method} ${path}`);
        t.equal(errorCode(r), 'unauthorized');
      }
      c.cookie = 'jumpgate_session=not-a-session';
      t.equal((await c.get('/api/v1/me')).status, 401, 'an unknown session cookie is no session');
      c.cookie = null;
      for (const path of ['/', '/stacks', '/onboarding', '/stacks/x', '/stacks/x/tokens', '/stacks/x/nodes']) {
        const r = await c.get(path);
        t.equal(r.status, 302, path);
        t.match(r.headers.location, /^\/login/, `${path} → /login`);
      }
      t.equal((await c.get('/stacks/x/tokens')).headers.location, '/login?next=%2Fstacks%2Fx%2Ftokens');
      for (const path of ['/login', '/register']) {
        const r = await c.get(path);
        t.equal(r.status, 200, path);
        t.match(r.headers['content-type'], /text\/html/);
        t.match(r.text, /<form id="(login|register)-form">/);
        t.match(r.headers['content-security-policy'], /script-src 'self'/);
      }
    });

    t.test('register: validation, session cookie, duplicate email', async (t) => {
      const f = await fixture(t, await newStore(t));
      const c = f.client();
      const cases: [unknown, RegExp][] = [
        [{ email: 'not-an-email', password: PASSWORD }, /^email: must be a valid email address/],
        [{ email: 'a@example.com', password: 'short' }, /^password: must be at least 10 characters/],
        [{ email: 'a@example.com' }, /^password: is required/],
        [{ password: PASSWORD }, /^email: is required/],
        [{ email: 'a@example.com', password: 12 }, /password/],
        ['nope', /body/],
      ];
      for (const [body, message] of cases) {
        const r = await c.send('POST', '/api/v1/register', { body });
        t.equal(r.status, 400, JSON.stringify(body));
        t.equal(errorCode(r), 'invalid');
        t.match(r.json.error.message, message);
      }
      t.equal(c.cookie, null, 'no session after failures');

      const r = await c.register('Alice@Example.com');
      t.equal(r.status, 201);
      t.same(Object.keys(r.json).sort(), ['account', 'csrfToken']);
      t.equal(r.json.account.email, 'alice@example.com', 'emails are stored lower-cased');
      t.notOk('passwordHash' in r.json.account, 'the hash never leaves the server');
      t.notMatch(r.text, /scrypt/);
      const cookie = [r.headers['set-cookie']].flat()[0]!;
      t.match(cookie, /^jumpgate_session=[^;]+/);
      t.match(cookie, /HttpOnly/);
      t.match(cookie, /SameSite=Lax/);
      t.match(cookie, /Path=\//);
      t.notMatch(cookie, /Secure/, 'not Secure by default (plain HTTP)');
      t.match(r.headers['cache-control'], /no-store/);

      const me = await c.get('/api/v1/me');
      t.equal(me.status, 200);
      t.same(me.json, r.json, '/me answers the account and the same CSRF token');

      const dup = await f.client().register('alice@EXAMPLE.com', 'another password');
      t.equal(dup.status, 409);
      t.equal(errorCode(dup), 'conflict');
      t.match(dup.json.error.message, /^email:/);
    });

    t.test('registration closed: 403; login still works; the page says so', async (t) => {
      const store = await newStore(t);
      await store.createAccount('op@example.com', await hashPassword(PASSWORD));
      const f = await fixture(t, store, { registration: 'closed' });
      const c = f.client();
      const r = await c.register('new@example.com');
      t.equal(r.status, 403);
      t.equal(errorCode(r), 'registration_closed');
      t.equal(await store.accountByEmail('new@example.com'), null);
      const page = await c.get('/register');
      t.equal(page.status, 200);
      t.match(page.text, /id="registration-closed"/);
      t.notMatch(page.text, /register-form/);
      t.notMatch((await c.get('/login')).text, /href="\/register"/, 'no register link on the login page');
      t.equal((await c.login('op@example.com')).status, 200);
    });

    t.test('login, logout, sessions and CSRF', async (t) => {
      const f = await fixture(t, await newStore(t));
      const owner = f.client();
      await owner.register('bob@example.com');
      const firstSession = owner.cookie;

      const c = f.client();
      const wrong = await c.login('bob@example.com', 'wrong password!');
      const unknown = await c.login('nobody@example.com');
      t.equal(wrong.status, 401);
      t.equal(unknown.status, 401);
      t.same(wrong.json, unknown.json, 'same answer for a wrong password and an unknown email');
      t.equal(errorCode(wrong), 'bad_credentials');
      t.equal(c.cookie, null);
      t.equal((await c.send('POST', '/api/v1/login', { body: { email: 'bob@example.com' } })).status, 400, 'password required');

      const ok = await c.login('BOB@example.com');
      t.equal(ok.status, 200);
      t.equal(ok.json.account.email, 'bob@example.com');
      t.not(ok.json.csrfToken, owner.csrf, 'each session has its own CSRF token');
      t.equal((await owner.get('/api/v1/me')).status, 200, 'sessions are independent');

      // A login replaces the session the request came with (no fixation).
      const again = await c.login('bob@example.com');
      t.equal(again.status, 200);
      const stale = f.client();
      stale.cookie = firstSession;
      t.equal((await stale.get('/api/v1/me')).status, 200);
      const before = c.cookie;
      await c.login('bob@example.com');
      const old = f.client();
      old.cookie = before;
      t.equal((await old.get('/api/v1/me')).status, 401, 'the previous session of that browser is gone');

      // CSRF on every state-changing route.
      const noHeader = await c.send('POST', '/api/v1/stacks', { body: { name: 's' }, csrf: null });
      t.equal(noHeader.status, 403);
      t.equal(errorCode(noHeader), 'csrf');
      t.equal((await c.send('POST', '/api/v1/stacks', { body: { name: 's' }, csrf: owner.csrf })).status, 403, "another session's token");
      t.equal((await c.send('POST', '/api/v1/stacks', { body: { name: 's' }, csrf: 'x'.repeat(43) })).status, 403);
      t.equal((await c.send('POST', '/api/v1/logout', { csrf: null })).status, 403);
      t.equal((await c.send('POST', '/api/v1/logout', { csrf: '' })).status, 403);
      t.equal((await c.get('/api/v1/stacks')).json.stacks.length, 0, 'nothing was created');

      const out = await c.send('POST', '/api/v1/logout');
      t.equal(out.status, 204);
      t.equal(c.cookie, null, 'cookie cleared');
      const replay = f.client();
      replay.cookie = before;
      t.equal((await replay.get('/api/v1/me')).status, 401);
      t.equal((await owner.get('/api/v1/me')).status, 200, 'other sessions survive');
    });

    t.test('Secure cookies when asked', async (t) => {
      const f = await fixture(t, await newStore(t), { secureCookies: true });
      const r = await f.client().register('sec@example.com');
      t.match([r.headers['set-cookie']].flat()[0], /; Secure/);
    });

    t.test('stacks: create, list, read, validation, duplicates', async (t) => {
      const f = await fixture(t, await newStore(t));
      const c = f.client();
      await c.register('carol@example.com');
      t.same((await c.get('/api/v1/stacks')).json, { stacks: [] });
      const before = f.changes.n;
      const r = await c.send('POST', '/api/v1/stacks', { body: { name: '  prod  ', description: 'main dapp' } });
      t.equal(r.status, 201);
      t.match(r.json, { name: 'prod', description: 'main dapp', disabled: false });
      t.type(r.json.id, 'string');
      t.notOk('accountId' in r.json);
      t.equal(f.changes.n, before + 1, 'onTokensChanged after a stack write');
      const dup = await c.send('POST', '/api/v1/stacks', { body: { name: 'prod' } });
      t.equal(dup.status, 409);
      t.match(dup.json.error.message, /^name:/);
      for (const [body, message] of [
        [{}, /^name: is required/],
        [{ name: '   ' }, /^name: must not be blank/],
        [{ name: 'x'.repeat(65) }, /^name: must be at most 64 characters/],
        [{ name: 'ok', description: 7 }, /^description:/],
      ] as const) {
        const bad = await c.send('POST', '/api/v1/stacks', { body });
        t.equal(bad.status, 400, JSON.stringify(body));
        t.match(bad.json.error.message, message);
      }
      const second = (await c.send('POST', '/api/v1/stacks', { body: { name: 'staging' } })).json;
      t.equal(second.description, null);
      const list = (await c.get('/api/v1/stacks')).json.stacks;
      t.same(list.map((s: any) => s.name).sort(), ['prod', 'staging']);
      t.same((await c.get(`/api/v1/stacks/${r.json.id}`)).json, r.json);
      const missing = await c.get('/api/v1/stacks/stk_doesnotexist');
      t.equal(missing.status, 404);
      t.equal(errorCode(missing), 'not_found');
    });

    t.test('tokens: shown once, listed by label and prefix, (de)activated, deleted', async (t) => {
      const f = await fixture(t, await newStore(t));
      const c = f.client();
      await c.register('dave@example.com');
      const stack = (await c.send('POST', '/api/v1/stacks', { body: { name: 'main' } })).json;
      const base = `/api/v1/stacks/${stack.id}/tokens`;
      t.same((await c.get(base)).json, { tokens: [] });

      let changes = f.changes.n;
      const r = await c.send('POST', base, { body: { label: 'backend' } });
      t.equal(r.status, 201);
      t.equal(f.changes.n, ++changes, 'onTokensChanged after create');
      t.match(r.headers['cache-control'], /no-store/);
      const { token, record } = r.json;
      t.match(token, /^[A-Za-z0-9_-]{22,}$/, 'URL-path safe, long');
      t.match(record, { label: 'backend', active: true, stackId: stack.id, lastUsedAt: null });
      t.ok(token.startsWith(record.prefix), 'the prefix is the start of the token');
      t.ok(record.prefix.length < token.length);
      t.notOk('accountId' in record);

      const list = await c.get(base);
      t.equal(list.status, 200);
      t.same(list.json.tokens, [record]);
      t.notOk(list.text.includes(token), 'the list never contains the full token');
      t.notOk((await c.get(`/api/v1/stacks/${stack.id}/overview`)).text.includes(token));

      const gw = await f.store.tokensForGateway();
      t.equal(gw.find((x) => x.id === record.id)?.active, true);

      const off = await c.send('PATCH', `${base}/${record.id}`, { body: { active: false } });
      t.equal(off.status, 200);
      t.equal(off.json.active, false);
      t.equal(f.changes.n, ++changes, 'onTokensChanged after PATCH');
      t.equal((await f.store.tokensForGateway()).find((x) => x.id === record.id)?.active, false, 'the gateway table sees it inactive');
      t.equal((await c.get(base)).json.tokens[0].active, false);
      const on = await c.send('PATCH', `${base}/${record.id}`, { body: { active: true } });
      t.equal(on.json.active, true);
      changes++;

      for (const [body, message] of [
        [{}, /^active: is required/],
        [{ active: 'maybe' }, /^active: must be boolean/],
      ] as const) {
        const bad = await c.send('PATCH', `${base}/${record.id}`, { body });
        t.equal(bad.status, 400, JSON.stringify(body));
        t.match(bad.json.error.message, message);
      }
      t.match((await c.send('POST', base, { body: {} })).json.error.message, /^label: is required/);
      t.match((await c.send('POST', base, { body: { label: ' ' } })).json.error.message, /^label: must not be blank/);
      t.equal((await c.send('POST', '/api/v1/stacks/stk_nope/tokens', { body: { label: 'x' } })).status, 404, 'unknown stack');

      t.equal((await c.send('PATCH', `${base}/${record.id}`, { body: { active: false }, csrf: null })).status, 403, 'PATCH needs CSRF');
      t.equal((await c.send('DELETE', `${base}/${record.id}`, { csrf: null })).status, 403, 'DELETE needs CSRF');
      t.equal((await c.send('POST', base, { body: { label: 'x' }, csrf: null })).status, 403, 'create needs CSRF');

      const del = await c.send('DELETE', `${base}/${record.id}`);
      t.equal(del.status, 204);
      t.equal(f.changes.n, ++changes, 'onTokensChanged after DELETE');
      t.same((await c.get(base)).json, { tokens: [] });
      t.equal((await c.send('DELETE', `${base}/${record.id}`)).status, 404, 'deleted twice');
      t.equal((await c.send('PATCH', `${base}/${record.id}`, { body: { active: true } })).status, 404);
      t.notOk((await f.store.tokensForGateway()).some((x) => x.id === record.id && x.active));

      // A token of another stack of the same account is not reachable through this stack's URL.
      const other = (await c.send('POST', '/api/v1/stacks', { body: { name: 'other' } })).json;
      const foreign = (await c.send('POST', `/api/v1/stacks/${other.id}/tokens`, { body: { label: 'o' } })).json.record;
      t.equal((await c.send('PATCH', `${base}/${foreign.id}`, { body: { active: false } })).status, 404);
      t.equal((await c.send('DELETE', `${base}/${foreign.id}`)).status, 404);
      t.equal((await c.get(`/api/v1/stacks/${other.id}/tokens`)).json.tokens[0].active, true);
    });

    t.test('overview and analytics', async (t) => {
      const f = await fixture(t, await newStore(t));
      const a = await account(f, 'erin@example.com');
      const second = (await a.c.send('POST', `/api/v1/stacks/${a.stack.id}/tokens`, { body: { label: 'second' } })).json.record;
      const now = Date.now();
      const minute = Math.floor(now / 60_000) * 60_000;
      await f.store.addUsage([
        usage(a.tokenId, 'getSlot', minute, 5, 1, 100),
        usage(a.tokenId, 'getBalance', minute, 2, 0, 50),
        usage(second.id, 'getSlot', minute, 3, 0, 10),
        usage(a.tokenId, 'getSlot', minute - 3 * 86_400_000, 11, 0, 10),
      ]);

      const o = await a.c.get(`/api/v1/stacks/${a.stack.id}/overview`);
      t.equal(o.status, 200);
      t.equal(o.json.calls24h, 10);
      t.equal(o.json.bytes24h, 100 * 3 + 50 * 3 + 10 * 3);
      t.equal(o.json.activeTokens, 2);
      t.equal(o.json.daily.length, 7);
      t.equal(
        o.json.daily.reduce((n: number, d: any) => n + d.calls, 0),
        21,
      );
      t.equal(o.json.daily[6].calls, 10, 'today is last');
      t.same(o.json.endpoints, {
        http: `${HTTP}/api-token/<TOKEN>`,
        ws: `${WS}/api-token/<TOKEN>/`,
        httpBase: HTTP,
        wsBase: WS,
      });
      await a.c.send('PATCH', `/api/v1/stacks/${a.stack.id}/tokens/${second.id}`, { body: { active: false } });
      t.equal((await a.c.get(`/api/v1/stacks/${a.stack.id}/overview`)).json.activeTokens, 1);

      const base = `/api/v1/stacks/${a.stack.id}/analytics`;
      const all = await a.c.get(base);
      t.equal(all.status, 200);
      t.equal(all.json.window, '24h', 'default window');
      t.equal(all.json.tokenId, null);
      const byMethod = Object.fromEntries(all.json.methods.map((m: any) => [m.method, m]));
      t.match(byMethod.getSlot, { calls: 8, errors: 1 });
      t.match(byMethod.getBalance, { calls: 2, errors: 0 });
      t.ok('p50' in byMethod.getSlot && 'p99' in byMethod.getSlot);
      t.equal(
        all.json.series.reduce((n: number, p: any) => n + p.calls, 0),
        10,
      );
      t.ok(all.json.from < all.json.to);

      const one = await a.c.get(`${base}?window=1h&token=${second.id}`);
      t.equal(one.status, 200);
      t.equal(one.json.window, '1h');
      t.equal(one.json.tokenId, second.id);
      t.same(
        one.json.methods.map((m: any) => [m.method, m.calls]),
        [['getSlot', 3]],
      );
      const week = await a.c.get(`${base}?window=7d`);
      t.equal(week.json.methods.find((m: any) => m.method === 'getSlot').calls, 19);

      const bad = await a.c.get(`${base}?window=2d`);
      t.equal(bad.status, 400);
      t.match(bad.json.error.message, /^window: must be one of 1h, 24h, 7d/);
      t.equal((await a.c.get(`${base}?token=tok_unknown`)).status, 404, 'a token not of this stack');
      t.equal((await a.c.get('/api/v1/stacks/stk_nope/overview')).status, 404);
      t.equal((await a.c.get('/api/v1/stacks/stk_nope/analytics')).status, 404);
    });

    t.test('cross-account isolation: 404 for everything of another account', async (t) => {
      const f = await fixture(t, await newStore(t));
      const a = await account(f, 'alice@example.com', 'shared-name');
      const b = await account(f, 'mallory@example.com', 'shared-name');
      t.pass('stack names are unique per account, not globally');
      const aStack = `/api/v1/stacks/${a.stack.id}`;
      const bStack = `/api/v1/stacks/${b.stack.id}`;
      for (const [method, path, body] of [
        ['GET', aStack, undefined],
        ['GET', `${aStack}/overview`, undefined],
        ['GET', `${aStack}/analytics`, undefined],
        ['GET', `${aStack}/analytics?token=${a.tokenId}`, undefined],
        ['GET', `${aStack}/tokens`, undefined],
        ['GET', `${aStack}/landing`, undefined],
        ['GET', `${aStack}/landing/nodes`, undefined],
        ['POST', `${aStack}/tokens`, { label: 'mine now' }],
        ['PATCH', `${aStack}/tokens/${a.tokenId}`, { active: false }],
        ['DELETE', `${aStack}/tokens/${a.tokenId}`, undefined],
        ['PATCH', `${bStack}/tokens/${a.tokenId}`, { active: false }],
        ['DELETE', `${bStack}/tokens/${a.tokenId}`, undefined],
        ['GET', `${bStack}/analytics?token=${a.tokenId}`, undefined],
      ] as const) {
        const r = await b.c.send(method, path, body === undefined ? {} : { body });
        t.equal(r.status, 404, `B: ${method} ${path.replace(a.stack.id, 'A').replace(b.stack.id, 'B')}`);
        t.equal(errorCode(r), 'not_found');
      }
      const bStacks = (await b.c.get('/api/v1/stacks')).json.stacks;
      t.same(
        bStacks.map((s: any) => s.id),
        [b.stack.id],
        "B's list holds only B's stack",
      );
      const aTokens = (await a.c.get(`${aStack}/tokens`)).json.tokens;
      t.equal(aTokens.length, 1, 'B created nothing in A');
      t.equal(aTokens[0].active, true, "A's token untouched");
      t.equal((await b.c.get(`/stacks/${a.stack.id}`)).status, 404, "A's stack page is 404 for B");
      t.equal((await b.c.get(`/stacks/${a.stack.id}/tokens`)).status, 404);
      t.equal((await b.c.get(`/stacks/${a.stack.id}/nodes`)).status, 404);
    });

    t.test('pages for a logged-in account', async (t) => {
      const f = await fixture(t, await newStore(t));
      const c = f.client();
      await c.register('frank@example.com');
      let r = await c.get('/stacks');
      t.equal(r.status, 302, 'no stack yet: onboarding');
      t.equal(r.headers.location, '/onboarding');
      r = await c.get('/onboarding');
      t.equal(r.status, 200);
      t.match(r.text, /id="onboarding-form"/);
      t.match(r.text, /id="stack-name"/);
      t.match(r.text, new RegExp(`<meta name="csrf-token" content="${c.csrf}">`));
      t.equal((await c.get('/login')).headers.location, '/stacks', 'logged in: /login goes to /stacks');
      t.equal((await c.get('/register')).headers.location, '/stacks');
      t.equal((await c.get('/')).headers.location, '/stacks');

      const stack = (await c.send('POST', '/api/v1/stacks', { body: { name: '<b>x</b>' } })).json;
      const pages: [string, RegExp[]][] = [
        ['/stacks', [/id="stacks-list"/, /id="new-stack-form"/]],
        [
          `/stacks/${stack.id}`,
          [
            /id="overview-calls"/,
            /id="overview-bytes"/,
            /id="overview-tokens"/,
            /<canvas id="traffic-chart"/,
            /id="refresh"/,
            /id="link-tokens"/,
            /id="link-nodes"[^>]*>Elastic Nodes</,
            /src="\/assets\/chart\.umd\.js"/,
          ],
        ],
        [
          `/stacks/${stack.id}/tokens`,
          [/id="token-form"/, /id="token-label"/, /id="create-token"/, /id="token-created"/, /id="copy-token"/, /id="tokens-table"/],
        ],
        [
          `/stacks/${stack.id}/nodes`,
          [
            /id="endpoint-http"/,
            /id="endpoint-ws"/,
            /id="analytics-window"/,
            /id="analytics-token"/,
            /id="analytics-table"/,
            /id="analytics-calls-total"/,
            /<canvas id="analytics-chart"/,
            /id="refresh"/,
            /data-http-base="http:\/\/127\.0\.0\.1:8899"/,
          ],
        ],
      ];
      for (const [path, marks] of pages) {
        const p = await c.get(path);
        t.equal(p.status, 200, path);
        t.match(p.headers['content-type'], /text\/html/);
        t.match(p.headers['cache-control'], /no-store/);
        t.match(p.text, /id="logout"/);
        for (const m of marks) t.match(p.text, m, `${path} has ${m.source}`);
        t.notMatch(p.text, /<b>x<\/b>/, 'user text is escaped');
        // Every script the page loads is served.
        for (const [, src] of p.text.matchAll(/<script[^>]*src="([^"]+)"/g)) {
          const s = await c.get(src!);
          t.equal(s.status, 200, `${path}: ${src}`);
          t.match(s.headers['content-type'], /javascript/);
        }
      }
      t.equal((await c.get('/stacks/stk_nope')).status, 404);
      t.equal((await c.get('/nope')).status, 404);
    });

    t.test('assets: Chart.js, scripts and styles are served locally', async (t) => {
      const f = await fixture(t, await newStore(t));
      const c = f.client();
      const chart = await c.get('/assets/chart.umd.js');
      t.equal(chart.status, 200);
      t.match(chart.headers['content-type'], /javascript/);
      t.ok(chart.text.length > 100_000);
      t.match(chart.text, /Chart/);
      for (const file of ['common.js', 'auth.js', 'stacks.js', 'overview.js', 'tokens.js', 'nodes.js', 'charts.js', 'message.js']) {
        const r = await c.get(`/assets/${file}`);
        t.equal(r.status, 200, file);
        t.match(r.headers['content-type'], /javascript/);
        // Relative imports resolve to served files.
        for (const [, dep] of r.text.matchAll(/from '\.\/([^']+)'/g)) t.equal((await c.get(`/assets/${dep}`)).status, 200, `${file} → ${dep}`);
      }
      const css = await c.get('/assets/style.css');
      t.equal(css.status, 200);
      t.match(css.headers['content-type'], /text\/css/);
      t.equal((await c.get('/assets/nope.js')).status, 404);
      t.equal((await c.get('/assets/../server.js')).status, 404);
    });

    t.test('OpenAPI document lists every route', async (t) => {
      const f = await fixture(t, await newStore(t));
      const r = await f.client().get('/api/v1/openapi.json');
      t.equal(r.status, 200);
      const doc = r.json;
      t.match(doc.openapi, /^3\./);
      const want: Record<string, string[]> = {
        '/api/v1/openapi.json': ['get'],
        '/api/v1/register': ['post'],
        '/api/v1/login': ['post'],
        '/api/v1/logout': ['post'],
        '/api/v1/me': ['get'],
        '/api/v1/stacks': ['get', 'post'],
        '/api/v1/stacks/{id}': ['get'],
        '/api/v1/stacks/{id}/overview': ['get'],
        '/api/v1/stacks/{id}/analytics': ['get'],
        '/api/v1/stacks/{id}/tokens': ['get', 'post'],
        '/api/v1/stacks/{id}/tokens/{tokenId}': ['delete', 'patch'],
        '/api/v1/stacks/{id}/landing': ['get'],
        '/api/v1/stacks/{id}/landing/nodes': ['get'],
        '/api/v1/landing/nodes': ['get'],
      };
      t.same(Object.keys(doc.paths).sort(), Object.keys(want).sort(), 'API routes only, no pages');
      for (const [path, methods] of Object.entries(want)) t.same(Object.keys(doc.paths[path]).sort(), methods, path);
      t.ok(doc.components.securitySchemes.session);
      t.ok(doc.components.securitySchemes.csrf);
      t.ok(doc.paths['/api/v1/register'].post.requestBody, 'request bodies are documented');
      t.ok(doc.paths['/api/v1/stacks/{id}/tokens'].post.responses['201'], 'responses are documented');
    });

    t.test('malformed requests answer JSON errors', async (t) => {
      const f = await fixture(t, await newStore(t));
      const c = f.client();
      const badJson = await c.send('POST', '/api/v1/login', { raw: '{"email":' });
      t.equal(badJson.status, 400);
      t.equal(errorCode(badJson), 'bad_request');
      const text = await c.send('POST', '/api/v1/login', { raw: 'email=a', type: 'application/x-www-form-urlencoded' });
      t.equal(text.status, 415, 'only JSON: a cross-site form cannot post here');
      t.equal(errorCode(text), 'unsupported_media_type');
      const big = await c.send('POST', '/api/v1/register', { raw: JSON.stringify({ email: 'a@b.co', password: 'x'.repeat(70_000) }) });
      t.equal(big.status, 413);
      const none = await c.get('/api/v1/nope');
      t.equal(none.status, 404);
      t.equal(errorCode(none), 'not_found');
    });

    t.test('login throttling: per email and per IP, 429 with Retry-After', async (t) => {
      const store = await newStore(t);
      const f = await fixture(t, store, { loginLimits: { perIp: { perMinute: 1, burst: 4 }, perAccount: { perMinute: 1, burst: 3 } } });
      await store.createAccount('victim@example.com', await hashPassword(PASSWORD));
      await store.createAccount('other@example.com', await hashPassword(PASSWORD));

      // Per email: failures from different IPs add up.
      for (const ip of ['127.0.0.2', '127.0.0.3', '127.0.0.4']) t.equal((await f.client(ip).login('victim@example.com', 'wrong password')).status, 401);
      const blocked = await f.client('127.0.0.5').login('victim@example.com');
      t.equal(blocked.status, 429, 'even the right password waits');
      t.equal(errorCode(blocked), 'throttled');
      t.ok(Number(blocked.headers['retry-after']) >= 1, `Retry-After: ${blocked.headers['retry-after']}`);
      t.equal((await f.client('127.0.0.5').login('VICTIM@example.com')).status, 429, 'the email is normalised first');
      t.equal((await f.client('127.0.0.5').login('other@example.com')).status, 200, 'other accounts are not affected');
      t.equal((await f.client('127.0.0.5').login('unknown@example.com', 'x')).status, 401);

      // Per IP: failures on many emails from one address.
      const ip = '127.0.0.6';
      for (let i = 0; i < 4; i++) t.equal((await f.client(ip).login(`guess${i}@example.com`, 'wrong password')).status, 401);
      const ipBlocked = await f.client(ip).login('other@example.com');
      t.equal(ipBlocked.status, 429, 'the IP is throttled, whatever the email');
      t.ok(Number(ipBlocked.headers['retry-after']) >= 1);
      t.equal((await f.client('127.0.0.7').login('other@example.com')).status, 200, 'other IPs are not affected');

      // Successful logins do not count.
      for (let i = 0; i < 8; i++) t.equal((await f.client('127.0.0.8').login('other@example.com')).status, 200, `success ${i + 1}`);
    });

    t.test('registration throttling: per client IP, every attempt counts, 429 with Retry-After', async (t) => {
      const store = await newStore(t);
      const f = await fixture(t, store, { registerLimit: { perMinute: 1, burst: 3 } });
      const c = f.client('127.0.0.2');
      t.equal((await c.register('r1@example.com')).status, 201);
      t.equal((await c.register('r1@example.com')).status, 409, 'a taken email is an attempt too');
      t.equal((await c.register('r2@example.com')).status, 201);
      const blocked = await c.register('r3@example.com');
      t.equal(blocked.status, 429, 'the fourth attempt from one IP waits');
      t.equal(errorCode(blocked), 'throttled');
      t.ok(Number(blocked.headers['retry-after']) >= 1, `Retry-After: ${blocked.headers['retry-after']}`);
      t.equal(await store.accountByEmail('r3@example.com'), null, 'no account was made');
      t.equal((await f.client('127.0.0.3').register('r3@example.com')).status, 201, 'other IPs are not affected');
    });

    t.test('throttles see the client behind a trusted proxy, and only behind one', async (t) => {
      const store = await newStore(t);
      const f = await fixture(t, store, { registerLimit: { perMinute: 1, burst: 1 }, trustedProxies: ['127.0.0.9'] });
      const proxy = f.client('127.0.0.9');
      const via = (ip: string) => ({ headers: { 'x-forwarded-for': ip } });
      const reg = (c: Client, email: string, ip: string) => c.send('POST', '/api/v1/register', { body: { email, password: PASSWORD }, ...via(ip) });
      t.equal((await reg(proxy, 'p1@example.com', '203.0.113.5')).status, 201);
      t.equal((await reg(proxy, 'p2@example.com', '203.0.113.5')).status, 429, 'the forwarded client is throttled');
      t.equal((await reg(proxy, 'p2@example.com', '203.0.113.6')).status, 201, 'another client behind the same proxy is not');
      const direct = f.client('127.0.0.10');
      t.equal((await reg(direct, 'p3@example.com', '198.51.100.1')).status, 201);
      t.equal((await reg(direct, 'p4@example.com', '198.51.100.2')).status, 429, 'an untrusted peer cannot pick its IP with X-Forwarded-For');
    });

    t.test('login throttling defaults: 10 failures per email, then 429', async (t) => {
      const store = await newStore(t);
      const f = await fixture(t, store);
      await store.createAccount('target@example.com', await hashPassword(PASSWORD));
      const statuses: number[] = [];
      for (let i = 0; i < 11; i++) statuses.push((await f.client(`127.0.1.${i + 1}`).login('target@example.com', `guess number ${i}`)).status);
      t.same(statuses, [...Array(10).fill(401), 429]);
    });
  });
}

t.test('the app is built on the first request: requests that arrive meanwhile are all answered', async (t) => {
  const f = await fixture(t, new MemoryStore());
  const answers = await Promise.all(['/login', '/api/v1/me', '/assets/common.js', '/nowhere'].map((p) => f.client().get(p)));
  t.same(
    answers.map((a) => a.status),
    [200, 401, 200, 404],
  );
  t.equal(answers[0]!.headers['x-frame-options'], 'DENY', 'through the app (its security headers)');
});

t.test('a console closed before any request closes at once', async (t) => {
  const server = await startConsole({
    store: new MemoryStore(),
    host: '127.0.0.1',
    port: 0,
    registration: 'open',
    endpoints: { http: HTTP, ws: WS },
    log: silentLogger(),
  });
  await server.close();
  await t.rejects(new Client(server.url).get('/login'), { code: 'ECONNREFUSED' });
});
