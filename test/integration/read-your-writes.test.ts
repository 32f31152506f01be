// Read your writes (docs/accounts.md "When a change takes effect"): a token created, deactivated
// or deleted through an instance's console API works (or is refused) on the very next call to
// that instance, with no retry and no wait, because the API answers only once every data plane
// of the instance applied the change; other instances sharing the store follow within a second.
// Rounds repeat, so a race between the answer and the data plane shows. SQLite and PostgreSQL
// (skipped, with the reason, without it), inline and with one data-plane worker; then a stack
// disabled in the store by an embedder, two instances on one PostgreSQL, the CLI writing the
// store directly, and a config reload.

import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { runTokensCli } from '../../src/cli/tokens.js';
import { loadConfig } from '../../src/config/load.js';
import { startGateway } from '../../src/lifecycle/start-gateway.js';
import { silentLogger } from '../../src/log.js';
import { startSim } from '../../src/tools/sim/node.js';
import { ConsoleClient } from '../helpers/console-client.js';
import { eventually } from '../helpers/eventually.js';
import { PLANES, startHarness, type Harness } from '../helpers/gateway.js';
import { postgresSkipReason, startPostgres, type Postgres } from '../helpers/postgres.js';

const ROUNDS = 30;
const GET_SLOT = '{"jsonrpc":"2.0","id":1,"method":"getSlot"}';
const ADMIN = 'ryw-admin-token-0123456789abcdef';

type Test = Parameters<Parameters<typeof t.test>[0]>[0];

/** One call with `token` to the gateway at `url`: its HTTP status (200, 401 unknown, 403 inactive). */
async function status(url: string, token: string): Promise<number> {
  const r = await fetch(`${url}/api-token/${token}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: GET_SLOT });
  await r.arrayBuffer();
  return r.status;
}

// One cluster for the file, a database per test: starting PostgreSQL is the slow part.
const pgSkip = postgresSkipReason();
let pgStarted: Promise<Postgres> | null = null;
let databases = 0;
async function pgDatabase(): Promise<string> {
  if (pgStarted === null) {
    pgStarted = startPostgres();
    const started = pgStarted;
    t.teardown(async () => (await started).stop());
  }
  return (await pgStarted).createDatabase(`ryw${++databases}`);
}

const STORES = [
  { name: 'SQLite', skip: false as string | false, url: async () => 'sqlite://:memory:' },
  { name: 'PostgreSQL', skip: pgSkip, url: pgDatabase },
];

async function gateway(t: Test, workers: number, storeUrl: string): Promise<Harness> {
  const h = await startHarness({ workers, console: true, config: { store: { url: storeUrl }, health: { intervalMs: 60_000 } } });
  t.teardown(() => h.close());
  return h;
}

/** Signed up, with a stack whose id is returned. */
async function account(console: ConsoleClient, email: string): Promise<string> {
  return (await console.stackWithToken(email, 'main', 'first')).stack;
}

async function createToken(console: ConsoleClient, stack: string, label: string): Promise<{ id: string; token: string }> {
  const r = await console.send('POST', `/api/v1/stacks/${stack}/tokens`, { label });
  if (r.status !== 201) throw new Error(`create token: ${r.status} ${r.text}`);
  return { id: r.json.record.id as string, token: r.json.token as string };
}

/** A console API write that must succeed (the assertions are on the calls that follow it). */
async function change(console: ConsoleClient, method: string, path: string, body?: unknown): Promise<void> {
  const r = await console.send(method, path, body);
  if (r.status >= 300) throw new Error(`${method} ${path}: ${r.status} ${r.text}`);
}

/** The statuses that were not `want`, as "round: status", for the assertion's message. */
function misses(statuses: number[], want: number): string[] {
  return statuses.flatMap((s, i) => (s === want ? [] : [`${i + 1}: ${s}`]));
}

for (const store of STORES) {
  for (const plane of PLANES) {
    t.test(`${store.name}, ${plane.name}: created through the console, usable on the very next call`, { skip: store.skip, timeout: 120_000 }, async (t) => {
      const h = await gateway(t, plane.workers, await store.url());
      const c = new ConsoleClient(h.gw.console!.url);
      const stack = await account(c, 'ryw@example.com');
      const statuses: number[] = [];
      for (let i = 0; i < ROUNDS; i++) {
        const { token } = await createToken(c, stack, `round ${i}`);
        statuses.push(await status(h.url, token));
      }
      const bad = misses(statuses, 200);
      t.same(bad, [], `every one of ${ROUNDS} new tokens worked at once (${bad.length} refused)`);
    });

    t.test(`${store.name}, ${plane.name}: revoked through the console, refused on the very next call`, { skip: store.skip, timeout: 120_000 }, async (t) => {
      const h = await gateway(t, plane.workers, await store.url());
      const c = new ConsoleClient(h.gw.console!.url);
      const stack = await account(c, 'revoke@example.com');
      const after = { deactivated: [] as number[], reactivated: [] as number[], deleted: [] as number[] };
      for (let i = 0; i < ROUNDS; i++) {
        const { id, token } = await createToken(c, stack, `round ${i}`);
        const path = `/api/v1/stacks/${stack}/tokens/${id}`;
        await change(c, 'PATCH', path, { active: false });
        after.deactivated.push(await status(h.url, token));
        await change(c, 'PATCH', path, { active: true });
        after.reactivated.push(await status(h.url, token));
        await change(c, 'DELETE', path);
        after.deleted.push(await status(h.url, token));
      }
      t.same(misses(after.deactivated, 403), [], 'deactivated: 403 on the next call, every round');
      t.same(misses(after.reactivated, 200), [], 'activated again: 200 on the next call, every round');
      t.same(misses(after.deleted, 401), [], 'deleted: 401 on the next call, every round');
    });
  }
}

for (const plane of PLANES) {
  t.test(`${plane.name}: a stack disabled in the store, then syncTokens(): refused on the very next call`, { timeout: 60_000 }, async (t) => {
    const h = await gateway(t, plane.workers, 'sqlite://:memory:');
    const c = new ConsoleClient(h.gw.console!.url);
    const stack = await account(c, 'stack@example.com');
    const { token } = await createToken(c, stack, 'bot');
    const store = h.gw.store!;
    const owner = (await store.accountByEmail('stack@example.com'))!;
    const after = { disabled: [] as number[], enabled: [] as number[] };
    for (let i = 0; i < ROUNDS; i++) {
      await store.updateStack(owner.id, stack, { disabled: true });
      await h.gw.syncTokens();
      after.disabled.push(await status(h.url, token));
      await store.updateStack(owner.id, stack, { disabled: false });
      await h.gw.syncTokens();
      after.enabled.push(await status(h.url, token));
    }
    t.same(misses(after.disabled, 403), [], 'stack disabled: 403 on the next call, every round');
    t.same(misses(after.enabled, 200), [], 'stack enabled again: 200 on the next call, every round');
  });
}

t.test('two instances on one PostgreSQL: at once on the one that made the change, within 1 s on the other', { skip: pgSkip, timeout: 120_000 }, async (t) => {
  const url = await pgDatabase();
  // The one that makes the changes runs a data-plane worker; the other is inline.
  const a = await gateway(t, 1, url);
  const b = await gateway(t, 0, url);
  const c = new ConsoleClient(a.gw.console!.url);
  const stack = await account(c, 'two@example.com');
  const slowest = { created: 0, revoked: 0 };
  const onA = { created: [] as number[], revoked: [] as number[] };
  for (let i = 0; i < 10; i++) {
    const { id, token } = await createToken(c, stack, `round ${i}`);
    let at = performance.now();
    onA.created.push(await status(a.url, token));
    await eventually(`round ${i}: the new token to work on the other instance`, async () => (await status(b.url, token)) === 200, 1000, 10);
    slowest.created = Math.max(slowest.created, performance.now() - at);
    await change(c, 'PATCH', `/api/v1/stacks/${stack}/tokens/${id}`, { active: false });
    at = performance.now();
    onA.revoked.push(await status(a.url, token));
    await eventually(`round ${i}: the deactivated token to be refused on the other instance`, async () => (await status(b.url, token)) === 403, 1000, 10);
    slowest.revoked = Math.max(slowest.revoked, performance.now() - at);
  }
  t.same(misses(onA.created, 200), [], 'created: works at once on the instance whose console made it');
  t.same(misses(onA.revoked, 403), [], 'deactivated: refused at once on the instance whose console did it');
  t.comment(`the other instance followed within ${slowest.created.toFixed(0)} ms (create), ${slowest.revoked.toFixed(0)} ms (deactivate)`);
});

t.test('the tokens CLI writes the store itself: a running gateway follows within 1 s', { timeout: 60_000 }, async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'jg-ryw-cli-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const url = `sqlite://${join(dir, 'jg.db')}`;
  const h = await gateway(t, 1, url);
  await new ConsoleClient(h.gw.console!.url).stackWithToken('cli@example.com', 'main', 'first');
  const run = async (...argv: string[]): Promise<string> => {
    let out = '';
    const code = await runTokensCli([...argv, '--store', url, '--json'], { out: (l) => void (out += l + '\n'), err: (l) => void (out += l + '\n') });
    if (code !== 0) throw new Error(`tokens ${argv.join(' ')}: exit ${code}: ${out}`);
    return out;
  };
  const made = JSON.parse(await run('create', '--stack', 'main')) as { token: string; id: string };
  await eventually('the token the CLI made to work', async () => (await status(h.url, made.token)) === 200, 1000, 10);
  await run('revoke', made.id);
  await eventually('the token the CLI revoked to be refused', async () => (await status(h.url, made.token)) === 403, 1000, 10);
});

for (const plane of PLANES) {
  t.test(`${plane.name}: a config token added or deactivated by a reload works or is refused once the reload answered`, { timeout: 60_000 }, async (t) => {
    const sim = await startSim({ id: 'n0', port: 0, synthetic: true });
    t.teardown(() => sim.close());
    const dir = mkdtempSync(join(tmpdir(), 'jg-ryw-reload-'));
    t.teardown(() => rmSync(dir, { recursive: true, force: true }));
    const file = join(dir, 'jumpgate.yaml');
    const write = (tokens: string): void =>
      writeFileSync(
        file,
        [
          `rpc: { port: 0, wsPort: 0, workers: ${plane.workers} }`,
          'console: { port: 0 }',
          "store: { url: 'sqlite://:memory:' }",
          'offload: { threads: 0 }',
          'log: { level: silent }',
          'health: { chainWatch: false, intervalMs: 60000 }',
          `admin: { port: 0, token: ${ADMIN} }`,
          `tokens: [${tokens}]`,
          `nodes: [{ id: n0, url: "${sim.url}" }]`,
        ].join('\n'),
      );
    write('');
    const gw = await startGateway(loadConfig(file), { log: silentLogger(), configPath: file, adminEphemeral: true });
    t.teardown(() => gw.close());
    const reload = async (): Promise<void> => {
      const r = await fetch(gw.admin!.url + '/admin/reload', { method: 'POST', headers: { authorization: `Bearer ${ADMIN}` } });
      if (r.status !== 200) throw new Error(`reload: ${r.status} ${await r.text()}`);
      await r.arrayBuffer();
    };
    const added: number[] = [];
    const deactivated: number[] = [];
    for (let i = 0; i < 10; i++) {
      const token = `reload-token-${i}-0123456789abcdef`;
      write(`{ token: ${token}, stack: s }`);
      await reload();
      added.push(await status(gw.url, token));
      write(`{ token: ${token}, stack: s, active: false }`);
      await reload();
      deactivated.push(await status(gw.url, token));
    }
    t.same(misses(added, 200), [], 'added by a reload: works on the next call, every round');
    t.same(misses(deactivated, 403), [], 'deactivated by a reload: refused on the next call, every round');
  });
}
