// Migration 0002 on a store that already holds usage: the store is created at 0001 and filled
// the way the store kept usage before roll-ups (minutes of the last 24 h; older minutes rolled
// into hours by compaction; late minutes not yet rolled in), then reopened. The roll-ups built
// from those rows must answer as the reference over the same usage does, before and after the
// next compaction; a failed migration leaves nothing behind.

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { Kysely, Migrator, SqliteDialect, sql } from 'kysely';
import t from 'tap';
import { LatencyHistogram } from '../../../src/metrics/histogram.js';
import { MIGRATIONS } from '../../../src/store/migrations.js';
import { openStore } from '../../../src/store/open.js';
import type { Database as Schema } from '../../../src/store/schema.js';
import { SqlStore } from '../../../src/store/sql.js';
import type { AnalyticsWindow, UsageRow } from '../../../src/store/types.js';
import { rng } from '../../../src/tools/rng.js';
import { DAY_MS, HOUR_MS, MINUTE_MS, referenceAnalytics, referenceOverview } from './usage-reference.js';

const NOW = Date.UTC(2025, 0, 10, 12, 30, 15, 500);
const floorTo = (v: number, unit: number): number => Math.floor(v / unit) * unit;

/** A database at migration 0001 only: the schema before roll-ups. */
async function atFirstMigration(file: string): Promise<SqlStore> {
  const db = new Kysely<Schema>({ dialect: new SqliteDialect({ database: new Database(file) }) });
  const only = { '0001_initial': MIGRATIONS['0001_initial']! };
  const { error } = await new Migrator({ db, provider: { getMigrations: () => Promise.resolve(only) } }).migrateToLatest();
  if (error !== undefined) throw error;
  return new SqlStore(db);
}

/** Sums rows per (token, method, start) as the store did before roll-ups (histograms through the library). */
function merged(rows: { tokenId: string; method: string; start: number; r: UsageRow }[]) {
  const out = new Map<
    string,
    { token_id: string; method: string; start_ms: number; calls: number; errors: number; bytes_in: number; bytes_out: number; histogram: string | null }
  >();
  for (const { tokenId, method, start, r } of rows) {
    const key = `${tokenId}\0${method}\0${start}`;
    const o = out.get(key);
    if (o === undefined) {
      out.set(key, {
        token_id: tokenId,
        method,
        start_ms: start,
        calls: r.calls,
        errors: r.errors,
        bytes_in: r.bytesIn,
        bytes_out: r.bytesOut,
        histogram: r.histogram,
      });
      continue;
    }
    o.calls += r.calls;
    o.errors += r.errors;
    o.bytes_in += r.bytesIn;
    o.bytes_out += r.bytesOut;
    if (r.histogram !== null) {
      if (o.histogram === null) o.histogram = r.histogram;
      else {
        const h = LatencyHistogram.decode(o.histogram);
        h.add(LatencyHistogram.decode(r.histogram));
        o.histogram = h.encode();
      }
    }
  }
  return [...out.values()];
}

function usage(next: () => number, tokens: string[], n: number, from: number, to: number, pool: string[]): UsageRow[] {
  const methods = ['getSlot', 'getBalance', 'getBlock', '(batch)'];
  return Array.from({ length: n }, () => {
    const method = methods[Math.floor(next() * methods.length)]!;
    const calls = method === '(batch)' ? 0 : 1 + Math.floor(next() * 4);
    return {
      tokenId: tokens[Math.floor(next() * tokens.length)]!,
      method,
      minute: floorTo(from + next() * (to - from), MINUTE_MS),
      calls,
      errors: next() < 0.2 ? 1 : 0,
      bytesIn: 10 + calls,
      bytesOut: 100 * calls,
      histogram: calls > 0 && next() < 0.8 ? pool[Math.floor(next() * pool.length)]! : null,
    };
  });
}

t.test('0002 builds the roll-ups from the minutes and hours already stored', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'jg-migrate-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const file = join(dir, 'jg.db');
  const old = await atFirstMigration(file);
  const account = await old.createAccount('m@example.com', 'x');
  const stack = await old.createStack(account.id, 'main', null);
  const tokens: string[] = [];
  for (const label of ['a', 'b']) tokens.push((await old.createToken(account.id, stack.id, label)).record.id);
  const next = rng(2002);
  const pool = Array.from({ length: 8 }, (_, i) => {
    const h = new LatencyHistogram({ digits: 2, highestUs: 600_000_000 });
    for (let k = 0; k < 4 + i; k++) h.record(Math.exp(6 + next() * 6), 1 + k);
    return h.encode();
  });
  // Five days of usage: what compaction rolled into hours, the last 24 h as minutes, and late
  // minutes for hours already rolled up (kept as minutes until the next compaction).
  const cutoff = floorTo(NOW - DAY_MS, HOUR_MS);
  const older = usage(next, [...tokens, 'static:00ff'], 1500, NOW - 5 * DAY_MS, cutoff, pool);
  const recent = usage(next, [...tokens, 'static:00ff'], 1500, cutoff, NOW, pool);
  const late = usage(next, tokens, 100, NOW - 3 * DAY_MS, cutoff, pool);
  const hours = merged(older.map((r) => ({ tokenId: r.tokenId, method: r.method, start: floorTo(r.minute, HOUR_MS), r })));
  const minutes = merged([...recent, ...late].map((r) => ({ tokenId: r.tokenId, method: r.method, start: r.minute, r })));
  for (let i = 0; i < hours.length; i += 200)
    await old.db
      .insertInto('usage_hour')
      .values(hours.slice(i, i + 200))
      .execute();
  for (let i = 0; i < minutes.length; i += 200)
    await old.db
      .insertInto('usage_minute')
      .values(minutes.slice(i, i + 200))
      .execute();
  await old.close();

  const s = await openStore(`sqlite://${file}`);
  t.teardown(() => s.close());
  const db = (s as SqlStore).db;
  const applied = await sql<{ name: string }>`select name from kysely_migration order by name`.execute(db);
  t.same(
    applied.rows.map((r) => r.name),
    ['0001_initial', '0002_usage_rollups', '0003_landing'],
    'every migration recorded',
  );
  const rows = [...older, ...recent, ...late];
  const mine = new Set(tokens);
  const check = async (label: string): Promise<void> => {
    for (const now of [NOW, NOW + 4 * MINUTE_MS]) {
      t.same(await s.overview(account.id, stack.id, now), referenceOverview(rows, mine, 2, now), `${label}: overview`);
      for (const w of ['1h', '24h', '7d'] as AnalyticsWindow[]) {
        t.same(await s.analytics(account.id, stack.id, w, now), referenceAnalytics(rows, mine, w, now), `${label}: ${w} analytics`);
        t.same(
          await s.analytics(account.id, stack.id, w, now, tokens[0]),
          referenceAnalytics(rows, new Set([tokens[0]!]), w, now),
          `${label}: ${w} analytics of one token`,
        );
      }
    }
  };
  await check('migrated');
  const recentHours = await db.selectFrom('usage_hour').select('start_ms').where('start_ms', '>=', cutoff).execute();
  t.ok(recentHours.length > 0, 'usage_hour now holds the hours of the kept minutes too');
  const days = await db
    .selectFrom('stack_usage_day')
    .select((eb) => eb.fn.sum<number>('calls').as('n'))
    .executeTakeFirstOrThrow();
  t.equal(
    Number(days.n),
    rows.filter((r) => mine.has(r.tokenId)).reduce((a, r) => a + r.calls, 0),
    "the stack's days hold all of its tokens' calls, once",
  );
  await s.compactUsage(NOW, 30);
  await check('migrated, then compacted');
});

t.test('0002 that fails half-way leaves the store at 0001, and runs whole next time', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'jg-migrate-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const file = join(dir, 'jg.db');
  const old = await atFirstMigration(file);
  const account = await old.createAccount('f@example.com', 'x');
  const stack = await old.createStack(account.id, 'main', null);
  const token = (await old.createToken(account.id, stack.id, 'a')).record.id;
  await old.db
    .insertInto('usage_minute')
    .values({
      token_id: token,
      method: 'getSlot',
      start_ms: floorTo(NOW, MINUTE_MS),
      calls: 3,
      errors: 0,
      bytes_in: 1,
      bytes_out: 2,
      histogram: 'not a histogram',
    })
    .execute();
  await old.close();
  await t.rejects(openStore(`sqlite://${file}`), /store migration 0002_usage_rollups failed/, 'an unreadable histogram fails the backfill');
  const raw = new Database(file);
  const tables = raw.prepare(`select name from sqlite_master where type = 'table' and name like '%usage%' order by name`).all() as { name: string }[];
  t.same(
    tables.map((x) => x.name),
    ['usage_hour', 'usage_minute'],
    'no roll-up table left behind',
  );
  raw.prepare(`update usage_minute set histogram = null`).run();
  raw.close();
  const s = await openStore(`sqlite://${file}`);
  t.teardown(() => s.close());
  const o = await s.overview(account.id, stack.id, NOW);
  t.equal(o.calls24h, 3, 'migrated on the next start, the usage counted once');
});
