// What the console's stack pages read: the overview (24 h totals, calls per day for a week) and
// per-method analytics over a window. Each range is cut into the fewest roll-up rows that
// cover it exactly (usage-spans.ts), a stack's from its own roll-ups, one token's from the
// token's; counts are summed in SQL, and only latency histograms are added up here, one per
// row read (latency-sum.ts). So a page reads a bounded number of rows however much usage a
// stack has: at most about 90 per method (the current hour's minutes are most of them).

import { StoreError, type Analytics, type AnalyticsWindow, type MethodStats, type Overview } from '../types.js';
import type { Db } from './db.js';
import { LatencySum } from './latency-sum.js';
import { stackById } from './stacks-tokens.js';
import { usageHorizon } from './usage.js';
import { ceilTo, cover, DAY_MS, floorTo, HOUR_MS, KEY_COLUMN, MINUTE_MS, SIX_HOURS_MS, SPANS, type Piece, type UsageScope } from './usage-spans.js';

/** Bucket size and count of each analytics window (docs/accounts.md "Accounts, tokens and the console": minute for 1 h, hour for 24 h, 6 h for 7 d). */
const WINDOWS: Record<AnalyticsWindow, { bucket: number; count: number }> = {
  '1h': { bucket: MINUTE_MS, count: 60 },
  '24h': { bucket: HOUR_MS, count: 24 },
  '7d': { bucket: SIX_HOURS_MS, count: 28 },
};

/** Whose rows to read: a stack's (over all its tokens) or one token's. */
interface Subject {
  scope: UsageScope;
  key: string;
}

interface StartSums {
  start: number;
  calls: number;
  errors: number;
  bytes: number;
}

async function requireStack(db: Db, accountId: string, stackId: string): Promise<void> {
  if ((await stackById(db, accountId, stackId)) === null) throw new StoreError('not_found', 'no such stack');
}

/** The first minute from which usage counts: `from`, or later where retention has deleted usage. */
async function readFrom(db: Db, from: number): Promise<number> {
  return Math.max(from, await usageHorizon(db));
}

/**
 * The pieces' rows summed per row start (a piece's rows each lie inside one bucket of the
 * caller's, so it adds them by start). Every usage table has the same columns but for its key;
 * the casts only pick one table's name for the typings.
 */
async function sumsByStart(db: Db, who: Subject, pieces: Piece[]): Promise<StartSums[]> {
  const out: StartSums[] = [];
  const k = KEY_COLUMN[who.scope] as 'token_id';
  for (const p of pieces) {
    const t = p.table as 'usage_minute';
    const rows = await db
      .selectFrom(t)
      .select((eb) => [
        'start_ms',
        eb.fn.sum<number>('calls').as('calls'),
        eb.fn.sum<number>('errors').as('errors'),
        eb.fn.sum<number>('bytes_in').as('bytesIn'),
        eb.fn.sum<number>('bytes_out').as('bytesOut'),
      ])
      .where(k, '=', who.key)
      .where('start_ms', '>=', p.from)
      .where('start_ms', '<', p.to)
      .groupBy('start_ms')
      .execute();
    for (const r of rows)
      out.push({ start: Number(r.start_ms), calls: Number(r.calls), errors: Number(r.errors), bytes: Number(r.bytesIn) + Number(r.bytesOut) });
  }
  return out;
}

export async function overview(db: Db, accountId: string, stackId: string, now: number): Promise<Overview> {
  await requireStack(db, accountId, stackId);
  const stack: Subject = { scope: 'stack', key: stackId };
  const firstDay = floorTo(now, DAY_MS) - 6 * DAY_MS;
  // Rows that start after `now` do not count: a minute row starts at most at now's minute.
  const end = floorTo(now, MINUTE_MS) + MINUTE_MS;
  const daily = Array.from({ length: 7 }, (_, i) => ({ day: firstDay + i * DAY_MS, calls: 0 }));
  for (const g of await sumsByStart(db, stack, cover(SPANS.stack, await readFrom(db, firstDay), end))) {
    daily[Math.floor((g.start - firstDay) / DAY_MS)]!.calls += g.calls;
  }
  let calls24h = 0;
  let bytes24h = 0;
  for (const g of await sumsByStart(db, stack, cover(SPANS.stack, await readFrom(db, ceilTo(now - DAY_MS, MINUTE_MS)), end))) {
    calls24h += g.calls;
    bytes24h += g.bytes;
  }
  const active = await db
    .selectFrom('api_tokens')
    .select((eb) => eb.fn.countAll().as('n'))
    .where('account_id', '=', accountId)
    .where('stack_id', '=', stackId)
    .where('active', '=', 1)
    .where('deleted_at', 'is', null)
    .executeTakeFirst();
  return { calls24h, bytes24h, activeTokens: Number(active?.n ?? 0), daily };
}

/** Calls, errors and summed latencies per method over the pieces; methods with neither calls nor errors (bytes-only: '(batch)', WS notifications) are left out. */
async function perMethod(db: Db, who: Subject, pieces: Piece[]): Promise<Map<string, { calls: number; errors: number; latency: LatencySum | null }>> {
  const methods = new Map<string, { calls: number; errors: number; latency: LatencySum | null }>();
  const k = KEY_COLUMN[who.scope] as 'token_id';
  for (const p of pieces) {
    const t = p.table as 'usage_minute';
    const rows = await db
      .selectFrom(t)
      .select((eb) => ['method', eb.fn.sum<number>('calls').as('calls'), eb.fn.sum<number>('errors').as('errors')])
      .where(k, '=', who.key)
      .where('start_ms', '>=', p.from)
      .where('start_ms', '<', p.to)
      .groupBy('method')
      .execute();
    for (const r of rows) {
      let m = methods.get(r.method);
      if (m === undefined) methods.set(r.method, (m = { calls: 0, errors: 0, latency: null }));
      m.calls += Number(r.calls);
      m.errors += Number(r.errors);
    }
  }
  for (const [method, m] of methods) if (m.calls === 0 && m.errors === 0) methods.delete(method);
  for (const p of pieces) {
    const t = p.table as 'usage_minute';
    const rows = await db
      .selectFrom(t)
      .select(['method', 'histogram'])
      .where(k, '=', who.key)
      .where('start_ms', '>=', p.from)
      .where('start_ms', '<', p.to)
      .where('histogram', 'is not', null)
      .execute();
    for (const r of rows) {
      const m = methods.get(r.method);
      if (m !== undefined) (m.latency ??= new LatencySum()).add(r.histogram!);
    }
  }
  return methods;
}

/** Whether `tokenId` is one of the stack's tokens (deleted ones included: their usage still shows). */
async function tokenOfStack(db: Db, accountId: string, stackId: string, tokenId: string): Promise<boolean> {
  const r = await db
    .selectFrom('api_tokens')
    .select('id')
    .where('id', '=', tokenId)
    .where('account_id', '=', accountId)
    .where('stack_id', '=', stackId)
    .executeTakeFirst();
  return r !== undefined;
}

export async function analytics(db: Db, accountId: string, stackId: string, window: AnalyticsWindow, now: number, tokenId?: string): Promise<Analytics> {
  await requireStack(db, accountId, stackId);
  const w = WINDOWS[window];
  if (w === undefined) throw new StoreError('invalid', `window must be one of ${Object.keys(WINDOWS).join(', ')}`);
  const from = floorTo(now, w.bucket) - (w.count - 1) * w.bucket;
  const series = Array.from({ length: w.count }, (_, i) => ({ t: from + i * w.bucket, calls: 0, errors: 0 }));
  const who: Subject = tokenId === undefined ? { scope: 'stack', key: stackId } : { scope: 'token', key: tokenId };
  if (tokenId !== undefined && !(await tokenOfStack(db, accountId, stackId, tokenId))) return { from, to: now, methods: [], series };
  const start = await readFrom(db, from);
  const end = floorTo(now, MINUTE_MS) + MINUTE_MS;
  const spans = SPANS[who.scope];
  // The chart reads no span longer than its buckets; the table reads the longest that fit.
  for (const g of await sumsByStart(db, who, cover(spans, start, end, w.bucket))) {
    const s = series[Math.floor((g.start - from) / w.bucket)];
    if (s === undefined) continue;
    s.calls += g.calls;
    s.errors += g.errors;
  }
  const stats: MethodStats[] = [];
  for (const [method, m] of await perMethod(db, who, cover(spans, start, end))) {
    const timed = m.latency !== null && m.latency.count > 0;
    stats.push({
      method,
      calls: m.calls,
      errors: m.errors,
      p50: timed ? m.latency!.percentile(50) / 1000 : null,
      p99: timed ? m.latency!.percentile(99) / 1000 : null,
    });
  }
  stats.sort((a, b) => b.calls - a.calls || b.errors - a.errors || (a.method < b.method ? -1 : a.method > b.method ? 1 : 0));
  return { from, to: now, methods: stats, series };
}
