// What PostgreSQL adds when several gateways share one database (docs/accounts.md "PostgreSQL store"):
// clear errors when the server refuses us; instances starting together on an empty database
// build the schema once; concurrent usage flushes from two instances on the same keys add up
// exactly (every span, histograms included) and analytics agree with the reference;
// compaction runs on one instance at a time; a token change through one instance reaches the
// token sync of another at once through LISTEN/NOTIFY (polling set to 10 s), also after the
// listening connection was cut. One throwaway cluster for the file (test/helpers/postgres.ts).

import pg from 'pg';
import t from 'tap';
import { startTokenSync } from '../../../src/accounts/token-sync.js';
import { TokenTable } from '../../../src/gateway/token-table.js';
import { silentLogger } from '../../../src/log.js';
import { LatencyHistogram } from '../../../src/metrics/histogram.js';
import { openStore } from '../../../src/store/open.js';
import { COMPACTION_LOCK, JUMPGATE_LOCKS, type PgStore } from '../../../src/store/postgres/store.js';
import { LatencySum } from '../../../src/store/sql/latency-sum.js';
import type { FullStore, UsageRow } from '../../../src/store/types.js';
import { rng } from '../../../src/tools/rng.js';
import { eventually } from '../../helpers/eventually.js';
import { POSTGRES, postgresCluster } from './backends.js';
import { DAY_MS, HOUR_MS, MINUTE_MS, referenceAnalytics } from './usage-reference.js';

type Test = Parameters<Parameters<typeof t.test>[0]>[0];

const NOW = Date.UTC(2025, 0, 10, 12, 30, 15, 500);
const skip = { skip: POSTGRES.skip };

async function openOn(t: Test, url: string): Promise<FullStore> {
  const s = await openStore(url);
  t.teardown(() => s.close());
  return s;
}

/** Runs `query` on its own connection to `url`. */
async function rawQuery<R extends pg.QueryResultRow>(url: string, query: string): Promise<R[]> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    return (await c.query<R>(query)).rows;
  } finally {
    await c.end();
  }
}

t.test('connection errors name the user, database, host and port, never the password', skip, async (t) => {
  const cluster = await postgresCluster();
  const at = `127.0.0.1:${cluster.port}`;
  const err1 = await openStore(`postgres://nobody:hunter2@${at}/postgres`).then(
    () => null,
    (e: Error) => e,
  );
  t.match(
    err1?.message,
    new RegExp(
      `^store\\.url postgres://nobody@${at.replace(/\./g, '\\.')}/postgres: cannot open the PostgreSQL store at ${at.replace(/\./g, '\\.')}: authentication failed for user "nobody"`,
    ),
  );
  t.notMatch(err1?.message, /hunter2/, 'no password in the message');
  const err2 = await openStore(`postgresql://postgres:hunter2@${at}/no_such_db`).then(
    () => null,
    (e: Error) => e,
  );
  t.match(err2?.message, /database "no_such_db" does not exist/);
  t.notMatch(err2?.message, /hunter2/);
});

t.test('instances starting together on an empty database build the schema once', skip, async (t) => {
  const url = await POSTGRES.freshUrl(t);
  const stores = await Promise.all(Array.from({ length: 4 }, () => openOn(t, url)));
  const applied = await rawQuery<{ name: string }>(url, 'select name from kysely_migration order by name');
  t.same(
    applied.map((r) => r.name),
    ['0001_initial', '0002_usage_rollups', '0003_landing'],
    'each migration recorded once',
  );
  const meta = await rawQuery<{ key: string }>(url, 'select key from meta order by key');
  t.same(
    meta.map((r) => r.key),
    ['token_version', 'usage_horizon'],
    'the seed rows once',
  );
  const a = await stores[0]!.createAccount('a@example.com', 'h');
  t.equal((await stores[3]!.accountById(a.id))?.email, 'a@example.com', 'all four use the one schema');
  const later = await openOn(t, url);
  t.equal(await later.tokenVersion(), 0, 'a later start finds nothing to do');
});

/** Rows over a few tokens, methods and minutes (so two writers hit the same rows), some with histograms. */
function overlappingRows(next: () => number, tokens: string[], pool: string[], n: number): UsageRow[] {
  const methods = ['getSlot', 'getBalance', 'getBlock'];
  const minutes = [NOW - 3 * MINUTE_MS, NOW - 2 * MINUTE_MS, NOW - 61 * MINUTE_MS, NOW - 7 * HOUR_MS, NOW - DAY_MS - 5 * HOUR_MS].map(
    (m) => Math.floor(m / MINUTE_MS) * MINUTE_MS,
  );
  return Array.from({ length: n }, () => {
    const calls = 1 + Math.floor(next() * 5);
    return {
      tokenId: tokens[Math.floor(next() * tokens.length)]!,
      method: methods[Math.floor(next() * methods.length)]!,
      minute: minutes[Math.floor(next() * minutes.length)]!,
      calls,
      errors: next() < 0.3 ? 1 : 0,
      bytesIn: calls * 7,
      bytesOut: calls * 70,
      histogram: next() < 0.7 ? pool[Math.floor(next() * pool.length)]! : null,
    };
  });
}

t.test('two instances flushing the same keys at once add up exactly, in every span', skip, async (t) => {
  const url = await POSTGRES.freshUrl(t);
  const a = await openOn(t, url);
  const b = await openOn(t, url);
  const account = await a.createAccount('u@example.com', 'h');
  const stack = await a.createStack(account.id, 'main', null);
  const tokens = [(await a.createToken(account.id, stack.id, 't1')).record.id, (await a.createToken(account.id, stack.id, 't2')).record.id];
  const next = rng(7);
  const pool = Array.from({ length: 6 }, (_, i) => {
    const h = new LatencyHistogram({ digits: 2 });
    for (let k = 0; k <= i; k++) h.record(1000 * (k + 1) + i * 37);
    return h.encode();
  });
  // 40 flushes of 30 rows, half through each instance, all in flight together.
  const batches = Array.from({ length: 40 }, () => overlappingRows(next, tokens, pool, 30));
  await Promise.all(batches.map((rows, i) => (i % 2 === 0 ? a : b).addUsage(rows)));
  const rows = batches.flat();
  const want = {
    calls: rows.reduce((s, r) => s + r.calls, 0),
    errors: rows.reduce((s, r) => s + r.errors, 0),
    bytesIn: rows.reduce((s, r) => s + r.bytesIn, 0),
    bytesOut: rows.reduce((s, r) => s + r.bytesOut, 0),
    latencies: rows.reduce((s, r) => s + (r.histogram === null ? 0 : LatencyHistogram.decode(r.histogram).count), 0),
  };
  const db = (a as PgStore).db;
  for (const table of ['usage_minute', 'usage_hour', 'usage_6h', 'stack_usage_minute', 'stack_usage_hour', 'stack_usage_6h', 'stack_usage_day'] as const) {
    const stored = await db.selectFrom(table).select(['calls', 'errors', 'bytes_in', 'bytes_out', 'histogram']).execute();
    const latency = new LatencySum();
    for (const r of stored) if (r.histogram !== null) latency.add(r.histogram);
    t.same(
      {
        calls: stored.reduce((s, r) => s + r.calls, 0),
        errors: stored.reduce((s, r) => s + r.errors, 0),
        bytesIn: stored.reduce((s, r) => s + r.bytes_in, 0),
        bytesOut: stored.reduce((s, r) => s + r.bytes_out, 0),
        latencies: latency.count,
      },
      want,
      `${table}: calls, errors, bytes and latencies all add up`,
    );
  }
  for (const w of ['1h', '24h', '7d'] as const) {
    t.same(await b.analytics(account.id, stack.id, w, NOW), referenceAnalytics(rows, new Set(tokens), w, NOW), `${w} analytics agree with the reference`);
  }
});

t.test('compaction runs on one instance at a time', skip, async (t) => {
  const url = await POSTGRES.freshUrl(t);
  const a = await openOn(t, url);
  const b = await openOn(t, url);
  const account = await a.createAccount('c@example.com', 'h');
  const stack = await a.createStack(account.id, 'main', null);
  const tokenId = (await a.createToken(account.id, stack.id, 't')).record.id;
  const old = Math.floor((NOW - 2 * DAY_MS) / MINUTE_MS) * MINUTE_MS;
  await a.addUsage([{ tokenId, method: 'getSlot', minute: old, calls: 3, errors: 0, bytesIn: 1, bytesOut: 1, histogram: null }]);
  const oldMinutes = async (): Promise<number> =>
    (await (a as PgStore).db.selectFrom('usage_minute').select('start_ms').where('start_ms', '=', old).execute()).length;
  t.equal(await oldMinutes(), 1);

  // Another instance compacting holds the lock for its transaction: a session lock stands in for it.
  const holder = new pg.Client({ connectionString: url });
  await holder.connect();
  t.teardown(() => holder.end());
  await holder.query(`select pg_advisory_lock(${JUMPGATE_LOCKS}, ${COMPACTION_LOCK})`);
  await b.compactUsage(NOW, 30);
  t.equal(await oldMinutes(), 1, 'skipped while another instance holds the compaction lock');
  await holder.query(`select pg_advisory_unlock(${JUMPGATE_LOCKS}, ${COMPACTION_LOCK})`);
  await b.compactUsage(NOW, 30);
  t.equal(await oldMinutes(), 0, 'runs once the lock is free');

  // Both at once: one compacts, the other skips or finds nothing left; the answers stay.
  const before = await a.analytics(account.id, stack.id, '7d', NOW);
  await a.addUsage([{ tokenId, method: 'getSlot', minute: old + MINUTE_MS, calls: 2, errors: 0, bytesIn: 1, bytesOut: 1, histogram: null }]);
  await Promise.all([a.compactUsage(NOW, 30), b.compactUsage(NOW, 30), a.compactUsage(NOW, 30)]);
  const after = await a.analytics(account.id, stack.id, '7d', NOW);
  t.equal(
    after.series.reduce((s, x) => s + x.calls, 0),
    before.series.reduce((s, x) => s + x.calls, 0) + 2,
    'concurrent compactions keep every call',
  );
});

t.test('a token change through one instance reaches the token sync of another within 1 s (polling at 10 s)', skip, async (t) => {
  const url = await POSTGRES.freshUrl(t);
  const a = await openOn(t, url);
  const b = (await openOn(t, url)) as PgStore;
  const account = await a.createAccount('n@example.com', 'h');
  const stack = await a.createStack(account.id, 'main', null);
  const table = new TokenTable();
  const sync = startTokenSync(b, table, [], { log: silentLogger(), intervalMs: 10_000 });
  t.teardown(() => sync.stop());
  await sync.syncNow();
  await eventually('the LISTEN connection', () => b.listening);

  const created = await a.createToken(account.id, stack.id, 'ci');
  await eventually('the new token in the other instance’s table', () => table.find(created.token) !== null, 1000);
  await a.setTokenActive(account.id, created.record.id, false);
  await eventually('the token inactive there', () => table.find(created.token)?.active === false, 1000);
  await a.updateStack(account.id, stack.id, { disabled: false });
  await a.setTokenActive(account.id, created.record.id, true);
  await eventually('active again', () => table.find(created.token)?.active === true, 1000);

  // The listening connection cut (server restart, failover): it comes back and hears again.
  const cut = await rawQuery<{ ok: boolean }>(
    url,
    `select pg_terminate_backend(pid) as ok from pg_stat_activity where query = 'LISTEN jumpgate_tokens' and datname = current_database()`,
  );
  t.equal(cut.length, 1, 'one listening connection, cut');
  await eventually(
    'listening again',
    async () =>
      b.listening &&
      (await rawQuery(url, `select 1 from pg_stat_activity where query = 'LISTEN jumpgate_tokens' and datname = current_database()`)).length === 1,
    5000,
  );
  await a.deleteToken(account.id, created.record.id);
  await eventually('the deleted token gone there', () => table.find(created.token) === null, 1000);
});
