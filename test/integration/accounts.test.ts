// Accounts end to end (docs/accounts.md "Accounts, tokens and the console", docs/admin-api.md "Admin API"): a store next to a running gateway, with the token sync
// and usage flush started here (as startGateway will): store tokens reach the gateway within
// 1 s (created, deactivated, reactivated, deleted, stack disabled); usage made through the
// gateway lands in the store exactly (batch elements and WS frames count) and stop() flushes
// what is left. Also the demo account and the `jumpgate tokens` CLI.

import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { ensureDemoAccount } from '../../src/tools/demo/account.js';
import { startAccounts } from '../../src/accounts/runtime.js';
import { resolveConfig } from '../../src/config/load.js';
import { hashPassword, verifyPassword } from '../../src/accounts/password.js';
import { startTokenSync, type TokenSync } from '../../src/accounts/token-sync.js';
import { runTokensCli } from '../../src/cli/tokens.js';
import { silentLogger } from '../../src/log.js';
import { openStore } from '../../src/store/open.js';
import type { FullStore } from '../../src/store/types.js';
import { startUsageFlush } from '../../src/usage/flush.js';
import { eventually, eventuallyValue } from '../helpers/eventually.js';
import { INACTIVE, startHarness, TOKEN, TOKEN2, type Harness } from '../helpers/gateway.js';
import { openWs } from '../helpers/ws-client.js';

type Test = Parameters<Parameters<typeof t.test>[0]>[0];

const STATIC = [
  { token: TOKEN, stack: 'test', active: true },
  { token: TOKEN2, stack: 'test2', active: true },
  { token: INACTIVE, stack: 'test', active: false },
];
const BODY = '{"jsonrpc":"2.0","id":1,"method":"getSlot"}';

interface Setup {
  h: Harness;
  store: FullStore;
  sync: TokenSync;
}

async function setup(t: Test): Promise<Setup> {
  const h = await startHarness({ config: { health: { intervalMs: 60_000 } } });
  t.teardown(() => h.close());
  await quietGatewayAccounts(h);
  const store = await openStore('sqlite://:memory:');
  t.teardown(() => store.close());
  const sync = startTokenSync(store, h.gw.tokens, STATIC, { log: silentLogger(), intervalMs: 500 });
  t.teardown(() => sync.stop());
  await sync.syncNow();
  return { h, store, sync };
}

/**
 * These tests run their own store, sync and flush next to the gateway; a flush the gateway
 * started itself (into its own store) would drain the same meter, so it is stopped first.
 */
async function quietGatewayAccounts(h: Harness): Promise<void> {
  await (h.gw as { usageFlush?: { stop(): Promise<void> } | null }).usageFlush?.stop();
}

async function post(h: Harness, token: string, body = BODY): Promise<{ status: number; text: string; code: number | null }> {
  const r = await fetch(`${h.url}/api-token/${token}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
  const text = await r.text();
  let code: number | null = null;
  try {
    code = (JSON.parse(text) as { error?: { code?: number } }).error?.code ?? null;
  } catch {
    // not JSON
  }
  return { status: r.status, text, code };
}

/**
 * Polls until the gateway answers `status` for `token`; resolves with the time it took (shown,
 * never compared: the store is polled every 500 ms, and a deadline of ten polls stays clear of a
 * loaded machine's noise while still failing a sync that stopped working).
 */
async function answersWith(h: Harness, token: string, status: number, limitMs = 5000): Promise<{ ms: number; code: number | null }> {
  const start = performance.now();
  let last = 0;
  return eventuallyValue(
    () => `HTTP ${status} (still HTTP ${last})`,
    async () => {
      const r = await post(h, token);
      last = r.status;
      return r.status === status ? { ms: performance.now() - start, code: r.code } : undefined;
    },
    limitMs + 1000,
  );
}

t.test('store token changes reach the gateway through its sync', async (t) => {
  const { h, store } = await setup(t);
  const account = await store.createAccount('a@example.com', await hashPassword('pw'));
  const stack = await store.createStack(account.id, 'main', null);

  const { token, record } = await store.createToken(account.id, stack.id, 'ci');
  t.equal((await post(h, token)).status, 401, 'not known yet at the instant of creation');
  const created = await answersWith(h, token, 200);
  t.pass(`created: works after ${Math.round(created.ms)} ms`);
  t.equal(h.gw.tokens.find(token)?.id, record.id, 'the table record carries the store id');

  await store.setTokenActive(account.id, record.id, false);
  const off = await answersWith(h, token, 403);
  t.pass(`deactivated: 403 after ${Math.round(off.ms)} ms`);
  t.equal(off.code, 7403);

  await store.setTokenActive(account.id, record.id, true);
  const on = await answersWith(h, token, 200);
  t.pass(`reactivated: 200 after ${Math.round(on.ms)} ms`);

  await store.updateStack(account.id, stack.id, { disabled: true });
  const disabled = await answersWith(h, token, 403);
  t.equal(disabled.code, 7403, `stack disabled: 403 after ${Math.round(disabled.ms)} ms`);
  await store.updateStack(account.id, stack.id, { disabled: false });
  await answersWith(h, token, 200);

  await store.deleteToken(account.id, record.id);
  const gone = await answersWith(h, token, 401);
  t.pass(`deleted: 401 after ${Math.round(gone.ms)} ms`);
  t.equal(gone.code, 7401);

  t.equal((await post(h, TOKEN)).status, 200, 'static config tokens keep working');
  t.equal((await post(h, INACTIVE)).status, 403, 'and keep their state');
});

t.test('usage through the gateway lands in the store exactly', async (t) => {
  const { h, store, sync } = await setup(t);
  const account = await store.createAccount('a@example.com', 'x');
  const stack = await store.createStack(account.id, 'main', null);
  const a = await store.createToken(account.id, stack.id, 'a');
  const b = await store.createToken(account.id, stack.id, 'b');
  await sync.syncNow();
  const flush = startUsageFlush(h.gw.usage, store, { log: silentLogger(), intervalMs: 60_000, compactEveryMs: 0 });
  let stopped = false;
  t.teardown(() => (stopped ? undefined : flush.stop()));

  let bytes = 0;
  const send = async (token: string, body: string): Promise<void> => {
    const r = await post(h, token, body);
    t.equal(r.status, 200, body.slice(0, 60));
    bytes += Buffer.byteLength(body) + Buffer.byteLength(r.text);
  };
  const single = (method: string, id = 1): string => JSON.stringify({ jsonrpc: '2.0', id, method });
  const batch = (methods: string[]): string => JSON.stringify(methods.map((method, i) => ({ jsonrpc: '2.0', id: i, method })));

  for (let i = 0; i < 5; i++) await send(a.token, single('getSlot', i));
  await send(a.token, single('getBlockHeight'));
  await send(a.token, batch(['getSlot', 'getBalance', 'getSlot', 'getHealth']));
  await send(a.token, batch(Array(30).fill('getBlockHeight')));
  await send(b.token, single('getSlot'));
  await send(b.token, batch(['getHealth', 'getHealth']));
  const calls = 5 + 1 + 4 + 30 + 1 + 2;

  await flush.flush();
  const now = Date.now();
  const o = await store.overview(account.id, stack.id, now);
  t.equal(o.calls24h, calls, `overview: ${calls} calls (batch elements counted)`);
  t.equal(o.bytes24h, bytes, 'overview: request and answer bytes');
  t.equal(o.activeTokens, 2);
  t.equal(o.daily[6]!.calls, calls, 'today in the 7-day chart');

  const an = await store.analytics(account.id, stack.id, '1h', now);
  t.same(
    an.methods.map((m) => [m.method, m.calls, m.errors]),
    [
      ['getBlockHeight', 31, 0],
      ['getSlot', 8, 0],
      ['getHealth', 3, 0],
      // Without params the node answers -32602: an error of its method, inside a batch too (docs/usage.md).
      ['getBalance', 1, 1],
    ],
    'per method',
  );
  t.ok(
    an.methods.every((m) => m.p50 !== null && m.p50 > 0 && m.p99! >= m.p50),
    'latency recorded for every method',
  );
  t.equal(
    an.series.reduce((x, s) => x + s.calls, 0),
    calls,
    'series adds up',
  );
  const onlyB = await store.analytics(account.id, stack.id, '1h', now, b.record.id);
  t.same(
    onlyB.methods.map((m) => [m.method, m.calls]),
    [
      ['getHealth', 2],
      ['getSlot', 1],
    ],
    'token filter',
  );
  t.ok((await store.tokenById(account.id, a.record.id))!.lastUsedAt! >= now - 10_000, 'last use recorded');

  // WebSocket frames count as calls too.
  const ws = await openWs(`${h.url.replace('http', 'ws')}/api-token/${a.token}/`);
  ws.send(single('getSlot', 77));
  await ws.next((f) => f.id === 77);
  ws.close();
  await ws.waitClosed();

  // What is still in the meter is written by stop().
  await send(b.token, batch(['getSlot', 'getSlot', 'getSlot']));
  await flush.stop();
  stopped = true;
  const after = await store.overview(account.id, stack.id, Date.now());
  t.equal(after.calls24h, calls + 1 + 3, 'stop() flushed the rest');
  t.equal((await store.analytics(account.id, stack.id, '1h', Date.now(), b.record.id)).methods.find((m) => m.method === 'getSlot')!.calls, 4);
});

t.test('usage is visible without a manual flush (short interval)', async (t) => {
  const { h, store, sync } = await setup(t);
  const account = await store.createAccount('a@example.com', 'x');
  const stack = await store.createStack(account.id, 'main', null);
  const { token } = await store.createToken(account.id, stack.id, '');
  await sync.syncNow();
  const flush = startUsageFlush(h.gw.usage, store, { log: silentLogger(), intervalMs: 200, compactEveryMs: 0 });
  t.teardown(() => flush.stop());
  for (let i = 0; i < 3; i++) t.equal((await post(h, token)).status, 200);
  const start = Date.now();
  await eventually('usage to arrive', async () => (await store.overview(account.id, stack.id, Date.now())).calls24h >= 3, 3000, 50);
  t.pass(`visible after ${Date.now() - start} ms`);
});

t.test('demo account: created once, same password and token afterwards, works through the gateway', async (t) => {
  const { h, store, sync } = await setup(t);
  const dir = mkdtempSync(join(tmpdir(), 'jg-demo-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const first = await ensureDemoAccount(store, dir);
  t.equal(first.email, 'demo@jumpgate.local');
  t.equal(first.stack.name, 'demo');
  t.match(first.token, /^jg_[A-Za-z0-9_-]{32}$/);
  t.equal((statSync(join(dir, 'demo.json')).mode & 0o777).toString(8), '600', 'demo.json is mode 600');
  const saved = JSON.parse(readFileSync(join(dir, 'demo.json'), 'utf8'));
  t.same(saved, { email: first.email, password: first.password, token: first.token });
  const account = (await store.accountByEmail(first.email))!;
  t.ok(await verifyPassword(first.password!, account.passwordHash), 'the printed password logs in');
  t.same(await ensureDemoAccount(store, dir), first, 'second run: the same');
  t.equal((await store.listTokens(account.id, first.stack.id)).length, 1, 'no extra token');
  t.equal((await store.listStacks(account.id)).length, 1, 'no extra stack');
  await sync.syncNow();
  t.equal((await post(h, first.token)).status, 200, 'the demo token works');

  // A deleted token is replaced; a lost file means a new password for the same account.
  const [tok] = await store.listTokens(account.id, first.stack.id);
  await store.deleteToken(account.id, tok!.id);
  const third = await ensureDemoAccount(store, dir);
  t.not(third.token, first.token, 'new token');
  t.equal(third.password, first.password, 'same password');
  rmSync(join(dir, 'demo.json'));
  const fourth = await ensureDemoAccount(store, dir);
  t.not(fourth.password, first.password, 'lost file: new password');
  t.ok(await verifyPassword(fourth.password!, (await store.accountByEmail(first.email))!.passwordHash));
  t.equal((await store.listAccounts()).length, 1, 'still one account');
  // Changed by its user: not reset, reported as unknown.
  await store.setPasswordHash(account.id, await hashPassword('mine now'));
  const fifth = await ensureDemoAccount(store, dir);
  t.equal(fifth.password, null);
  t.ok(await verifyPassword('mine now', (await store.accountByEmail(first.email))!.passwordHash));
});

t.test('jumpgate tokens create / list / revoke', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'jg-cli-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const url = `sqlite://${join(dir, 'jg.db')}`;
  const run = async (...argv: string[]): Promise<{ code: number; out: string; err: string }> => {
    let out = '';
    let err = '';
    const code = await runTokensCli([...argv, '--store', url], { out: (l) => void (out += l + '\n'), err: (l) => void (err += l + '\n') });
    return { code, out, err };
  };

  const none = await run('create', '--stack', 'x');
  t.equal(none.code, 1);
  t.match(none.err, /no accounts yet/);
  t.equal((await run('create')).code, 2, 'missing --stack: usage error');
  t.equal((await run('frobnicate')).code, 2);

  const store = await openStore(url);
  t.teardown(() => store.close());
  const account = await store.createAccount('ops@example.com', 'x');

  const made = await run('create', '--stack', 'prod', '--label', 'deploy bot');
  t.equal(made.code, 0, made.err);
  t.match(made.out, /created stack "prod"/);
  const token = made.out.match(/^ {2}(jg_[A-Za-z0-9_-]{32})$/m)?.[1];
  t.ok(token, 'the full token is printed');
  const stack = (await store.stackByName(account.id, 'prod'))!;
  const [rec] = await store.listTokens(account.id, stack.id);
  t.same([rec!.label, rec!.prefix], ['deploy bot', token!.slice(0, 8)]);

  const json = await run('create', '--stack', 'prod', '--json');
  t.equal(json.code, 0);
  const j = JSON.parse(json.out);
  t.same([j.stack, j.stackCreated, j.account], ['prod', false, 'ops@example.com']);
  t.match(j.token, /^jg_/);

  const listed = await run('list');
  t.equal(listed.code, 0);
  t.match(listed.out, /^ID\s+STACK\s+PREFIX\s+LABEL\s+STATE/);
  t.match(listed.out, new RegExp(`${rec!.id}\\s+prod\\s+${rec!.prefix.replace(/[-]/g, '\\-')}\\s+deploy bot\\s+active`));
  t.notMatch(listed.out, new RegExp(token!.slice(8)), 'list never shows a full token');
  t.equal((await run('list', '--stack', 'nope')).code, 1);

  const revoked = await run('revoke', rec!.id);
  t.equal(revoked.code, 0, revoked.err);
  t.equal((await store.tokenById(account.id, rec!.id))!.active, false, 'deactivated');
  t.match((await run('list', '--stack', 'prod')).out, /deploy bot\s+inactive/);
  t.equal((await run('revoke', 'tok_nope')).code, 1);

  await store.createAccount('second@example.com', 'x');
  const ambiguous = await run('list');
  t.equal(ambiguous.code, 1);
  t.match(ambiguous.err, /2 accounts: choose one with --account EMAIL/);
  t.equal((await run('list', '--account', 'OPS@example.com')).code, 0, '--account picks one (any case)');
  t.equal((await run('create', '--stack', 'x', '--account', 'nobody@example.com')).code, 1);
});

t.test('startAccounts: store from store.url, first sync before it resolves, stop() flushes and closes', async (t) => {
  const h = await startHarness({ config: { health: { intervalMs: 60_000 } } });
  t.teardown(() => h.close());
  await quietGatewayAccounts(h);
  const dir = mkdtempSync(join(tmpdir(), 'jg-acc-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const url = `sqlite://${join(dir, 'data', 'jg.db')}`;
  const seed = await openStore(url);
  const account = await seed.createAccount('a@example.com', 'x');
  const stack = await seed.createStack(account.id, 'main', null);
  const { token } = await seed.createToken(account.id, stack.id, 'pre-existing');
  await seed.close();

  const config = resolveConfig({ store: { url, retentionDays: 7 }, tokens: STATIC });
  const acc = await startAccounts(config, { tokens: h.gw.tokens, usage: h.gw.usage, log: silentLogger() });
  t.equal((await post(h, token)).status, 200, 'a token already in the store works as soon as startAccounts resolves');
  t.equal((await post(h, TOKEN)).status, 200, 'static tokens too');
  await post(h, token, '[' + Array(5).fill(BODY).join(',') + ']');
  await acc.stop();
  await acc.stop();
  await t.rejects(acc.store.tokenVersion(), 'the store it opened is closed');

  const reopened = await openStore(url);
  t.teardown(() => reopened.close());
  t.equal((await reopened.overview(account.id, stack.id, Date.now())).calls24h, 6, 'stop() wrote the usage to the file');
});
