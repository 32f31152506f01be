// What the console's stack pages read from the usage rows: the overview (24 h totals, calls per
// day for a week) and per-method analytics over a window. Both read the minute and hour tables
// together; compaction (usage.ts) keeps them from overlapping.

import { LatencyHistogram } from '../../metrics/histogram.js';
import { StoreError, type Analytics, type AnalyticsWindow, type MethodStats, type Overview } from '../types.js';
import type { Db } from './db.js';
import { stackById } from './stacks-tokens.js';
import { DAY_MS, floorTo, HOUR_MS, MINUTE_MS } from './usage.js';

/** Bucket size and count of each analytics window (README "Accounts, tokens and the console": minute for 1 h, hour for 24 h, 6 h for 7 d). */
const WINDOWS: Record<AnalyticsWindow, { bucket: number; count: number }> = {
  '1h': { bucket: MINUTE_MS, count: 60 },
  '24h': { bucket: HOUR_MS, count: 24 },
  '7d': { bucket: 6 * HOUR_MS, count: 28 },
};

interface UsagePoint {
  method: string;
  start: number;
  calls: number;
  errors: number;
  bytes: number;
  histogram: string | null;
}

async function requireStack(db: Db, accountId: string, stackId: string): Promise<void> {
  if ((await stackById(db, accountId, stackId)) === null) throw new StoreError('not_found', 'no such stack');
}

/** Usage rows (minute and hour tables together) of a stack's tokens with from <= start <= to. */
async function stackUsage(db: Db, accountId: string, stackId: string, from: number, to: number, opts: { tokenId?: string; histogram: boolean }): Promise<UsagePoint[]> {
  const out: UsagePoint[] = [];
  for (const table of ['usage_minute', 'usage_hour'] as const) {
    const t = table as 'usage_minute';
    let q = db
      .selectFrom(t)
      .innerJoin('api_tokens', 'api_tokens.id', `${t}.token_id`)
      .select([`${t}.method as method`, `${t}.start_ms as start`, `${t}.calls as calls`, `${t}.errors as errors`, `${t}.bytes_in as bytesIn`, `${t}.bytes_out as bytesOut`])
      .where('api_tokens.account_id', '=', accountId)
      .where('api_tokens.stack_id', '=', stackId)
      .where(`${t}.start_ms`, '>=', from)
      .where(`${t}.start_ms`, '<=', to);
    if (opts.tokenId !== undefined) q = q.where(`${t}.token_id`, '=', opts.tokenId);
    const rows = opts.histogram ? await q.select(`${t}.histogram as histogram`).execute() : await q.execute();
    for (const r of rows) {
      out.push({
        method: r.method,
        start: Number(r.start),
        calls: Number(r.calls),
        errors: Number(r.errors),
        bytes: Number(r.bytesIn) + Number(r.bytesOut),
        histogram: (r as { histogram?: string | null }).histogram ?? null,
      });
    }
  }
  return out;
}

export async function overview(db: Db, accountId: string, stackId: string, now: number): Promise<Overview> {
  await requireStack(db, accountId, stackId);
  const firstDay = floorTo(now, DAY_MS) - 6 * DAY_MS;
  const since24h = now - DAY_MS;
  const daily = Array.from({ length: 7 }, (_, i) => ({ day: firstDay + i * DAY_MS, calls: 0 }));
  let calls24h = 0;
  let bytes24h = 0;
  for (const r of await stackUsage(db, accountId, stackId, Math.min(firstDay, since24h), now, { histogram: false })) {
    if (r.start >= since24h) {
      calls24h += r.calls;
      bytes24h += r.bytes;
    }
    const i = Math.floor((r.start - firstDay) / DAY_MS);
    if (i >= 0 && i < 7) daily[i]!.calls += r.calls;
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

export async function analytics(db: Db, accountId: string, stackId: string, window: AnalyticsWindow, now: number, tokenId?: string): Promise<Analytics> {
  await requireStack(db, accountId, stackId);
  const w = WINDOWS[window];
  if (w === undefined) throw new StoreError('invalid', `window must be one of ${Object.keys(WINDOWS).join(', ')}`);
  const from = floorTo(now, w.bucket) - (w.count - 1) * w.bucket;
  const series = Array.from({ length: w.count }, (_, i) => ({ t: from + i * w.bucket, calls: 0, errors: 0 }));
  const methods = new Map<string, { calls: number; errors: number; hist: LatencyHistogram | null }>();
  for (const r of await stackUsage(db, accountId, stackId, from, now, { tokenId, histogram: true })) {
    const s = series[Math.floor((r.start - from) / w.bucket)];
    if (s !== undefined) {
      s.calls += r.calls;
      s.errors += r.errors;
    }
    if (r.calls === 0 && r.errors === 0) continue; // bytes-only rows: '(batch)', WS notifications
    let m = methods.get(r.method);
    if (m === undefined) methods.set(r.method, (m = { calls: 0, errors: 0, hist: null }));
    m.calls += r.calls;
    m.errors += r.errors;
    if (r.histogram !== null) {
      const h = LatencyHistogram.decode(r.histogram);
      if (m.hist === null) m.hist = h;
      else m.hist.add(h);
    }
  }
  const stats: MethodStats[] = [];
  for (const [method, m] of methods) {
    const timed = m.hist !== null && m.hist.count > 0;
    stats.push({
      method,
      calls: m.calls,
      errors: m.errors,
      p50: timed ? m.hist!.percentile(50) / 1000 : null,
      p99: timed ? m.hist!.percentile(99) / 1000 : null,
    });
  }
  stats.sort((a, b) => b.calls - a.calls || b.errors - a.errors || (a.method < b.method ? -1 : a.method > b.method ? 1 : 0));
  return { from, to: now, methods: stats, series };
}
