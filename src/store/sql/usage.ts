// Usage rows: what the gateway's usage flush writes (one row per token, method and minute) and
// how old minutes roll up into hours. Counts are summed in SQL and histograms merged with an
// optimistic check, so several gateways writing to one database never lose counts.

import type { Kysely, Selectable } from 'kysely';
import { LatencyHistogram } from '../../metrics/histogram.js';
import type { Database, UsageTable } from '../migrations.js';
import type { UsageRow } from '../types.js';
import type { Db } from './db.js';

export const MINUTE_MS = 60_000;
export const HOUR_MS = 3_600_000;
export const DAY_MS = 86_400_000;

type UsageTableName = 'usage_minute' | 'usage_hour';

export const floorTo = (t: number, unit: number): number => Math.floor(t / unit) * unit;

/** Adds two encoded histograms (either may be null). */
export function mergeHistograms(a: string | null, b: string | null): string | null {
  if (a === null) return b;
  if (b === null) return a;
  const h = LatencyHistogram.decode(a);
  h.add(LatencyHistogram.decode(b));
  return h.encode();
}

/** Merges rows with the same (token, method, start) in memory: sums, histograms added. */
function mergeRows(rows: Iterable<Selectable<UsageTable>>): Selectable<UsageTable>[] {
  const byKey = new Map<string, Selectable<UsageTable>>();
  for (const r of rows) {
    const key = r.token_id + '\0' + r.method + '\0' + r.start_ms;
    const o = byKey.get(key);
    if (o === undefined) byKey.set(key, { ...r });
    else {
      o.calls += r.calls;
      o.errors += r.errors;
      o.bytes_in += r.bytes_in;
      o.bytes_out += r.bytes_out;
      o.histogram = mergeHistograms(o.histogram, r.histogram);
    }
  }
  return [...byKey.values()];
}

function toUsageTable(r: UsageRow): Selectable<UsageTable> {
  return {
    token_id: r.tokenId,
    method: r.method,
    start_ms: floorTo(r.minute, MINUTE_MS),
    calls: r.calls,
    errors: r.errors,
    bytes_in: r.bytesIn,
    bytes_out: r.bytesOut,
    histogram: r.histogram,
  };
}

/**
 * Adds one row into a usage table: sums in SQL (atomic), the histogram read-merge-written
 * with an optimistic check, so concurrent writers (several gateways on one PostgreSQL)
 * never lose counts.
 */
async function mergeInto(trx: Db, table: UsageTableName, r: Selectable<UsageTable>): Promise<void> {
  // Both tables have the same columns; the cast only picks one name for the typings.
  const t = table as 'usage_minute';
  for (let attempt = 0; attempt < 20; attempt++) {
    const cur = await trx
      .selectFrom(t)
      .select('histogram')
      .where('token_id', '=', r.token_id)
      .where('method', '=', r.method)
      .where('start_ms', '=', r.start_ms)
      .executeTakeFirst();
    if (cur === undefined) {
      const ins = await trx
        .insertInto(t)
        .values(r)
        .onConflict((oc) => oc.columns(['token_id', 'method', 'start_ms']).doNothing())
        .executeTakeFirst();
      if (Number(ins.numInsertedOrUpdatedRows ?? 0) > 0) return;
      continue; // someone inserted it meanwhile: merge into theirs
    }
    let q = trx
      .updateTable(t)
      .set((eb) => ({
        calls: eb('calls', '+', r.calls),
        errors: eb('errors', '+', r.errors),
        bytes_in: eb('bytes_in', '+', r.bytes_in),
        bytes_out: eb('bytes_out', '+', r.bytes_out),
        ...(r.histogram === null ? {} : { histogram: mergeHistograms(cur.histogram, r.histogram) }),
      }))
      .where('token_id', '=', r.token_id)
      .where('method', '=', r.method)
      .where('start_ms', '=', r.start_ms);
    if (r.histogram !== null) q = cur.histogram === null ? q.where('histogram', 'is', null) : q.where('histogram', '=', cur.histogram);
    const upd = await q.executeTakeFirst();
    if (Number(upd.numUpdatedRows) > 0) return;
  }
  throw new Error(`usage row ${table}/${r.token_id}/${r.method}/${r.start_ms}: too many concurrent updates`);
}

export async function addUsage(db: Kysely<Database>, rows: UsageRow[]): Promise<void> {
  if (rows.length === 0) return;
  const merged = mergeRows(rows.map(toUsageTable));
  await db.transaction().execute(async (trx) => {
    for (const r of merged) await mergeInto(trx, 'usage_minute', r);
  });
}

export async function compactUsage(db: Kysely<Database>, now: number, retentionDays: number): Promise<void> {
  // Minutes before the start of the hour 24 h ago become hours, so an hour row is always
  // whole: windows that start on an hour boundary add minutes and hours without overlap.
  const cutoff = floorTo(now - DAY_MS, HOUR_MS);
  const keepFrom = now - retentionDays * DAY_MS;
  await db.transaction().execute(async (trx) => {
    // DELETE … RETURNING: a concurrent compactor (another gateway) cannot roll the same rows twice.
    const old = await trx.deleteFrom('usage_minute').where('start_ms', '<', cutoff).returningAll().execute();
    const hours: Selectable<UsageTable>[] = [];
    for (const r of old) {
      const start = floorTo(Number(r.start_ms), HOUR_MS);
      if (start < floorTo(keepFrom, HOUR_MS)) continue;
      hours.push({
        token_id: r.token_id,
        method: r.method,
        start_ms: start,
        calls: Number(r.calls),
        errors: Number(r.errors),
        bytes_in: Number(r.bytes_in),
        bytes_out: Number(r.bytes_out),
        histogram: r.histogram,
      });
    }
    for (const r of mergeRows(hours)) await mergeInto(trx, 'usage_hour', r);
    await trx.deleteFrom('usage_hour').where('start_ms', '<', floorTo(keepFrom, HOUR_MS)).execute();
    await trx.deleteFrom('usage_minute').where('start_ms', '<', keepFrom).execute();
    await trx.deleteFrom('sessions').where('expires_at', '<=', now).execute();
  });
}
