// A token that stops working closes its open WebSockets (docs/interface.md "WebSocket"): deactivated,
// its stack disabled, deleted from the store, or turned inactive by a config reload. The
// client sends nothing after subscribing: the close must come from the token sync alone.

import t from 'tap';
import { startTokenSync } from '../../src/accounts/token-sync.js';
import { hashPassword } from '../../src/accounts/password.js';
import { staticTokenRecord } from '../../src/gateway/token-table.js';
import { silentLogger } from '../../src/log.js';
import { openStore } from '../../src/store/open.js';
import type { FullStore } from '../../src/store/types.js';
import { eventually } from '../helpers/eventually.js';
import { startHarness, TOKEN, TOKEN2, type Harness } from '../helpers/gateway.js';
import { openWs, type TestWs } from '../helpers/ws-client.js';

type Test = Parameters<Parameters<typeof t.test>[0]>[0];

const STATIC = [
  { token: TOKEN, stack: 'test', active: true },
  { token: TOKEN2, stack: 'test2', active: true },
];

async function setup(t: Test): Promise<{ h: Harness; store: FullStore; accountId: string; stackId: string }> {
  const h = await startHarness({ config: { health: { intervalMs: 60_000 } } });
  t.teardown(() => h.close());
  const store = await openStore('sqlite://:memory:');
  t.teardown(() => store.close());
  const sync = startTokenSync(store, h.gw.tokens, STATIC, { log: silentLogger(), intervalMs: 500 });
  t.teardown(() => sync.stop());
  await sync.syncNow();
  const account = await store.createAccount('ws@example.com', await hashPassword('pw'));
  const stack = await store.createStack(account.id, 'main', null);
  return { h, store, accountId: account.id, stackId: stack.id };
}

/** A socket on `token` with a live slot subscription; resolves once a notification arrived. */
async function streaming(t: Test, h: Harness, token: string): Promise<TestWs> {
  const c = await openWs(`${h.url.replace('http', 'ws')}/api-token/${token}/`);
  t.teardown(() => c.close());
  c.send({ jsonrpc: '2.0', id: 1, method: 'slotSubscribe' });
  await c.next((f) => f.method === 'slotNotification');
  return c;
}

/**
 * Closed after the change, with 1008, while the client stays silent. The time it took is shown,
 * not compared: the token sync looks every 500 ms, and a deadline of ten looks stays clear of a
 * loaded machine's noise while still failing a revocation that never comes.
 */
async function closedByRevocation(t: Test, c: TestWs, what: string): Promise<void> {
  const started = performance.now();
  const closed = await c.waitClosed(5000);
  const ms = performance.now() - started;
  t.equal(closed.code, 1008, `${what}: closed with 1008 after ${Math.round(ms)} ms`);
}

t.test('deactivating a store token closes its open sockets, and only those', async (t) => {
  const { h, store, accountId, stackId } = await setup(t);
  const { token, record } = await store.createToken(accountId, stackId, 'bot');
  const a = await waitStreaming(t, h, token);
  const b = await waitStreaming(t, h, token);
  const other = await streaming(t, h, TOKEN);
  await store.setTokenActive(accountId, record.id, false);
  await closedByRevocation(t, a, 'deactivated');
  await closedByRevocation(t, b, 'deactivated (second socket)');
  const before = other.frames.length;
  await other.next((f) => f.method === 'slotNotification', 3000, before);
  t.equal(other.closed, null, "another token's socket keeps streaming");
});

t.test("disabling the stack closes its tokens' sockets", async (t) => {
  const { h, store, accountId, stackId } = await setup(t);
  const { token } = await store.createToken(accountId, stackId, 'bot');
  const c = await waitStreaming(t, h, token);
  await store.updateStack(accountId, stackId, { disabled: true });
  await closedByRevocation(t, c, 'stack disabled');
});

t.test('deleting a token closes its sockets', async (t) => {
  const { h, store, accountId, stackId } = await setup(t);
  const { token, record } = await store.createToken(accountId, stackId, 'bot');
  const c = await waitStreaming(t, h, token);
  await store.deleteToken(accountId, record.id);
  await closedByRevocation(t, c, 'deleted');
});

t.test('a config token turned inactive (as a reload does) closes its sockets', async (t) => {
  const h = await startHarness({ config: { health: { intervalMs: 60_000 } } });
  t.teardown(() => h.close());
  const c = await streaming(t, h, TOKEN2);
  h.gw.tokens.addPlain(TOKEN2, staticTokenRecord(TOKEN2, 'test2', false));
  await closedByRevocation(t, c, 'config token inactive');
});

/** A store token reaches the table within a sync interval; then the upgrade is accepted. */
async function waitStreaming(t: Test, h: Harness, token: string): Promise<TestWs> {
  await eventually('the store token in the gateway table', () => h.gw.tokens.find(token) !== null, 3000);
  return streaming(t, h, token);
}

t.test('with data-plane workers too: the revocation reaches the worker holding the socket', async (t) => {
  const h = await startHarness({ sims: [{}], config: { rpc: { workers: 2 }, health: { intervalMs: 60_000 } } });
  t.teardown(() => h.close());
  const store = h.gw.store!;
  const account = await store.createAccount('wsw@example.com', await hashPassword('pw'));
  const stack = await store.createStack(account.id, 'main', null);
  const { token, record } = await store.createToken(account.id, stack.id, 'bot');
  await eventually('the store token in the control plane table', () => h.gw.tokens.find(token) !== null, 3000);
  // Several sockets, so both workers hold some (each lands where the kernel puts it).
  const sockets: TestWs[] = [];
  for (let i = 0; i < 4; i++) sockets.push(await streaming(t, h, token));
  await store.setTokenActive(account.id, record.id, false);
  for (const [i, c] of sockets.entries()) await closedByRevocation(t, c, `socket ${i + 1}`);
});
