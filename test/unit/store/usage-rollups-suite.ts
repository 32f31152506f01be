// Usage roll-ups (docs/accounts.md "Accounts, tokens and the console") against the naive reference
// (usage-reference.ts): usage seeded through addUsage — tokens of two stacks, a deleted and an
// inactive token, a config token, keys repeated within and across calls, bytes-only rows, rows
// after "now", latency histograms — then the overview and every analytics window, for the
// stack and per token, at several "now"s (day, 6-hour and hour boundaries included), must be
// the reference's answer number for number. Then compaction and retention (1, 3 and 30 days,
// a compactor with a late clock, usage arriving late), two writers on one database, and the
// tables each span is kept in. Run for SQLite by usage-rollups.test.ts and for PostgreSQL by
// usage-rollups-postgres.test.ts (two files, so each stays short and they can run side by side).

import t from 'tap';
import { LatencyHistogram } from '../../../src/metrics/histogram.js';
import { openStore } from '../../../src/store/open.js';
import type { SqlStore } from '../../../src/store/sql.js';
import type { AnalyticsWindow, FullStore, UsageRow } from '../../../src/store/types.js';
import { rng } from '../../../src/tools/rng.js';
import type { StoreBackend } from './backends.js';
import { DAY_MS, HOUR_MS, MINUTE_MS, referenceAnalytics, referenceOverview } from './usage-reference.js';

type Test = Parameters<Parameters<typeof t.test>[0]>[0];

/** A fixed "now": 2025-01-10 12:30:15.500 UTC. */
const NOW = Date.UTC(2025, 0, 10, 12, 30, 15, 500);
const WINDOWS: AnalyticsWindow[] = ['1h', '24h', '7d'];
const floorTo = (v: number, unit: number): number => Math.floor(v / unit) * unit;

/** "Now"s to ask at: NOW, midnight, just before a 6-hour boundary, an hour boundary, off-minute times. */
const NOWS = [NOW, floorTo(NOW, DAY_MS), floorTo(NOW, 6 * HOUR_MS) - 1, floorTo(NOW, HOUR_MS), NOW - 3 * HOUR_MS - 17_000, NOW + 4 * MINUTE_MS];

function histograms(next: () => number): string[] {
  return Array.from({ length: 12 }, (_, i) => {
    const h = new LatencyHistogram({ digits: 2, highestUs: 600_000_000 });
    for (let k = 0; k < 5 + i * 3; k++) h.record(Math.exp(5 + next() * 8), 1 + Math.floor(next() * 4));
    return h.encode();
  });
}

const METHODS = ['getSlot', 'getBalance', 'getBlock', 'sendTransaction', 'getHealth', '(batch)'];

/** `n` random usage rows of `tokens` between `from` and `to` (minutes). */
function randomRows(next: () => number, pool: string[], tokens: string[], n: number, from: number, to: number): UsageRow[] {
  const rows: UsageRow[] = [];
  for (let i = 0; i < n; i++) {
    const method = METHODS[Math.floor(next() * METHODS.length)]!;
    const tokenId = tokens[Math.floor(next() * tokens.length)]!;
    const minute = from + Math.floor(next() * (to - from));
    if (method === '(batch)') {
      rows.push({ tokenId, method, minute, calls: 0, errors: 0, bytesIn: 1 + Math.floor(next() * 900), bytesOut: Math.floor(next() * 9000), histogram: null });
      continue;
    }
    const calls = Math.floor(next() * 6);
    rows.push({
      tokenId,
      method,
      minute,
      calls,
      errors: next() < 0.3 ? Math.floor(next() * 3) : 0,
      bytesIn: calls * 50,
      bytesOut: calls * 400,
      histogram: calls > 0 && next() < 0.8 ? pool[Math.floor(next() * pool.length)]! : null,
    });
  }
  return rows;
}

interface Fixture {
  s: FullStore;
  accountId: string;
  stackA: string;
  stackB: string;
  /** A1 active, A2 deleted after the seed, A3 inactive. */
  a: string[];
  b: string;
  rows: UsageRow[];
  next: () => number;
  pool: string[];
}

/** A seeded store: on `url`, or on a new database of `backend`. */
async function seeded(t: Test, backend: StoreBackend, url?: string): Promise<Fixture> {
  let s: FullStore;
  if (url === undefined) s = await backend.open(t);
  else {
    s = await openStore(url);
    t.teardown(() => s.close());
  }
  const next = rng(20250110);
  const pool = histograms(next);
  const account = await s.createAccount('r@example.com', 'x');
  const stackA = await s.createStack(account.id, 'a', null);
  const stackB = await s.createStack(account.id, 'b', null);
  const a: string[] = [];
  for (const label of ['a1', 'a2', 'a3']) a.push((await s.createToken(account.id, stackA.id, label)).record.id);
  const b = (await s.createToken(account.id, stackB.id, 'b1')).record.id;
  const rows: UsageRow[] = [];
  // Nine days of usage (some after NOW), in calls of different sizes; then repeats of rows
  // already written, and a dense last hour.
  for (let i = 0; i < 12; i++) {
    const batch = randomRows(next, pool, [...a, b, 'static:0123456789abcdef'], 50 + Math.floor(next() * 300), NOW - 9 * DAY_MS, NOW + 5 * MINUTE_MS);
    if (i > 0) batch.push(...rows.slice(0, 20).map((r) => ({ ...r })));
    await s.addUsage(batch);
    rows.push(...batch);
  }
  const dense = randomRows(next, pool, a, 400, NOW - HOUR_MS, NOW);
  await s.addUsage(dense);
  rows.push(...dense);
  await s.deleteToken(account.id, a[1]!);
  await s.setTokenActive(account.id, a[2]!, false);
  return { s, accountId: account.id, stackA: stackA.id, stackB: stackB.id, a, b, rows, next, pool };
}

/** Every answer at `now` equals the reference over `rows` kept from `keptFrom`. */
async function matchesReference(t: Test, f: Fixture, rows: UsageRow[], now: number, keptFrom = 0, label = ''): Promise<void> {
  const at = `${label}now ${new Date(now).toISOString()}`;
  const stackA = new Set(f.a);
  t.same(await f.s.overview(f.accountId, f.stackA, now), referenceOverview(rows, stackA, 1, now, keptFrom), `${at}: overview`);
  t.same(await f.s.overview(f.accountId, f.stackB, now), referenceOverview(rows, new Set([f.b]), 1, now, keptFrom), `${at}: overview of the other stack`);
  for (const w of WINDOWS) {
    t.same(await f.s.analytics(f.accountId, f.stackA, w, now), referenceAnalytics(rows, stackA, w, now, keptFrom), `${at}: ${w} analytics of the stack`);
    for (const tok of f.a)
      t.same(
        await f.s.analytics(f.accountId, f.stackA, w, now, tok),
        referenceAnalytics(rows, new Set([tok]), w, now, keptFrom),
        `${at}: ${w} analytics of one token`,
      );
    t.same(
      await f.s.analytics(f.accountId, f.stackA, w, now, f.b),
      referenceAnalytics([], new Set(), w, now),
      `${at}: ${w}: another stack's token shows nothing`,
    );
  }
}

/** The roll-up tests on `backend`. */
export function rollupTests(backend: StoreBackend): void {
  t.test(`${backend.name}: overview and analytics equal the naive reference at every "now" and window`, { skip: backend.skip }, async (t) => {
    const f = await seeded(t, backend);
    const a = await f.s.analytics(f.accountId, f.stackA, '7d', NOW);
    t.ok(a.methods.length >= 4 && a.methods.every((m) => m.p50 !== null), `methods with latencies to compare (${a.methods.map((m) => m.method).join(', ')})`);
    t.ok(
      (await f.s.overview(f.accountId, f.stackA, NOW)).daily.every((d) => d.calls > 0),
      'usage on every day of the week',
    );
    for (const now of NOWS) await matchesReference(t, f, f.rows, now);
  });

  t.test(`${backend.name}: compaction keeps every answer; retention per span; the horizon only moves forward`, { skip: backend.skip }, async (t) => {
    const f = await seeded(t, backend);
    const db = (f.s as SqlStore).db;
    await f.s.compactUsage(NOW, 30);
    const cutoff = floorTo(NOW - DAY_MS, HOUR_MS);
    for (const table of ['usage_minute', 'stack_usage_minute'] as const) {
      const old = await db.selectFrom(table).select('start_ms').where('start_ms', '<', cutoff).execute();
      t.equal(old.length, 0, `${table}: nothing before the hour 24 h ago`);
      t.ok((await db.selectFrom(table).select('start_ms').execute()).length > 0, `${table}: the last 24 h kept`);
    }
    for (const now of [NOW, NOW + 17_000, NOW + 4 * MINUTE_MS]) await matchesReference(t, f, f.rows, now, 0, 'compacted, ');

    // Usage arriving late for minutes already compacted counts at once, and after the next compaction.
    const late = randomRows(f.next, f.pool, [f.a[0]!, f.b], 60, NOW - 4 * DAY_MS, NOW - 2 * DAY_MS);
    await f.s.addUsage(late);
    const rows = [...f.rows, ...late];
    await matchesReference(t, f, rows, NOW, 0, 'late rows, ');
    await f.s.compactUsage(NOW, 30);
    await matchesReference(t, f, rows, NOW, 0, 'late rows compacted, ');

    // Retention 3 days: usage before the start of that hour goes from every span.
    await f.s.compactUsage(NOW, 3);
    const kept3 = floorTo(NOW - 3 * DAY_MS, HOUR_MS);
    await matchesReference(t, f, rows, NOW, kept3, '3 days kept, ');
    for (const [table, span] of [
      ['usage_hour', HOUR_MS],
      ['usage_6h', 6 * HOUR_MS],
      ['stack_usage_hour', HOUR_MS],
      ['stack_usage_6h', 6 * HOUR_MS],
      ['stack_usage_day', DAY_MS],
    ] as const) {
      const starts = (await db.selectFrom(table).select('start_ms').execute()).map((r) => Number(r.start_ms));
      t.ok(starts.length > 0 && starts.every((s) => s + span > kept3), `${table}: only rows reaching past the horizon kept`);
      t.ok(starts.some((s) => s < kept3) === (kept3 % span !== 0), `${table}: the row straddling the horizon kept (span ${span / HOUR_MS} h)`);
    }
    // A compactor whose clock is late (another gateway) deletes nothing more and moves nothing back.
    await f.s.compactUsage(NOW - 5 * HOUR_MS, 30);
    await matchesReference(t, f, rows, NOW, kept3, 'after a late compactor, ');

    // Retention 1 day: that hour's minutes before the cut go alone, the rest of it stays.
    await f.s.compactUsage(NOW, 1);
    const kept1 = Math.ceil((NOW - DAY_MS) / MINUTE_MS) * MINUTE_MS;
    for (const now of [NOW, NOW + 4 * MINUTE_MS]) await matchesReference(t, f, rows, now, kept1, '1 day kept, ');
  });

  t.test(`${backend.name}: two writers on one database add up; calls in flight on one handle too`, { skip: backend.skip }, async (t) => {
    const url = await backend.freshUrl(t);
    const f = await seeded(t, backend, url);
    const other = await openStore(url);
    t.teardown(() => other.close());
    const rows = [...f.rows];
    // The same keys from both writers, alternately: each adds into what the other wrote.
    const same = randomRows(f.next, f.pool, f.a, 200, NOW - 2 * HOUR_MS, NOW);
    for (let i = 0; i < 4; i++) {
      const w = i % 2 === 0 ? f.s : other;
      await w.addUsage(same.map((r) => ({ ...r })));
      rows.push(...same);
    }
    await matchesReference(t, f, rows, NOW, 0, 'two writers, ');
    const inFlight = Array.from({ length: 5 }, () => randomRows(f.next, f.pool, f.a, 80, NOW - 3 * DAY_MS, NOW));
    await Promise.all(inFlight.map((batch) => other.addUsage(batch)));
    rows.push(...inFlight.flat());
    await matchesReference(t, f, rows, NOW, 0, 'concurrent calls, ');
    const db = (f.s as SqlStore).db;
    const total = (table: 'usage_minute' | 'usage_hour' | 'usage_6h' | 'stack_usage_day') =>
      db
        .selectFrom(table)
        .select((eb) => eb.fn.sum<number>('calls').as('n'))
        .executeTakeFirstOrThrow()
        .then((r) => Number(r.n));
    const stored = rows.filter((r) => f.a.includes(r.tokenId)).reduce((s, r) => s + r.calls, 0);
    const all = rows.reduce((s, r) => s + r.calls, 0);
    t.equal(await total('usage_minute'), all, 'minutes hold every call');
    t.equal(await total('usage_hour'), all, 'hours too');
    t.equal(await total('usage_6h'), all, '6-hour blocks too');
    const ofB = rows.filter((r) => r.tokenId === f.b).reduce((s, r) => s + r.calls, 0);
    t.equal(await total('stack_usage_day'), stored + ofB, 'stack days hold the calls of stored tokens (not config tokens)');
  });
}
