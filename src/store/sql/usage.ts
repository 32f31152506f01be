// Usage rows: what the gateway's usage flush writes (one row per token, method and minute),
// added with their roll-ups in one transaction (usage-rollup.ts), and how long each span is
// kept. Minutes last 24 h; hours, 6-hour blocks and days last `store.retentionDays`.

import type { Kysely, Transaction } from 'kysely';
import { USAGE_HORIZON_KEY, type Database } from '../schema.js';
import type { UsageRow } from '../types.js';
import type { Db } from './db.js';
import { retryConflicts } from './retry.js';
import { stacksOf, UsageBatch } from './usage-rollup.js';
import { ceilTo, DAY_MS, floorTo, HOUR_MS, MINUTE_MS, SPANS } from './usage-spans.js';

// The span sizes, where callers have always found them.
export { DAY_MS, floorTo, HOUR_MS, MINUTE_MS } from './usage-spans.js';

/** `rowLocks`: the database locks rows (PostgreSQL), see UsageBatch.write. */
export async function addUsage(db: Kysely<Database>, rows: UsageRow[], rowLocks = false): Promise<void> {
  if (rows.length === 0) return;
  // Another gateway flushing the same rows may deadlock with this one (sql/retry.ts); the batch
  // writes rows in one fixed order to make that rare, and a rolled-back flush runs again whole.
  await retryConflicts(() =>
    db.transaction().execute(async (trx) => {
      const stacks = await stacksOf(
        trx,
        rows.map((r) => r.tokenId),
      );
      const batch = new UsageBatch();
      for (const r of rows) batch.add(SPANS.token, SPANS.stack, r.tokenId, stacks.get(r.tokenId) ?? null, r.method, floorTo(r.minute, MINUTE_MS), r);
      await batch.write(trx, rowLocks);
    }),
  );
}

/**
 * The time from which usage is kept whole (epoch ms, 0 until retention first deleted): reads
 * start there, because a 6-hour or day row that straddles it also holds usage that retention
 * has deleted from the shorter spans.
 */
export async function usageHorizon(db: Db): Promise<number> {
  const r = await db.selectFrom('meta').select('value').where('key', '=', USAGE_HORIZON_KEY).executeTakeFirst();
  return r === undefined ? 0 : Number(r.value);
}

/**
 * Deletes what is past keeping. `exclusive`, when given, is asked first inside the
 * transaction (PostgreSQL: a try-lock, so one instance compacts at a time); false skips the
 * run. Resolves false when skipped.
 */
export async function compactUsage(
  db: Kysely<Database>,
  now: number,
  retentionDays: number,
  exclusive?: (trx: Transaction<Database>) => Promise<boolean>,
): Promise<boolean> {
  // Minutes are kept from the start of the hour 24 h ago; older usage is read from the hours,
  // which were kept as it was written.
  const cutoff = floorTo(now - DAY_MS, HOUR_MS);
  const keepFrom = now - retentionDays * DAY_MS;
  // Hours go whole: usage is kept from the start of keepFrom's hour. Only when that hour is
  // still kept in minutes (retentionDays 1) do its minutes before keepFrom go alone.
  const horizon = keepFrom > cutoff ? ceilTo(keepFrom, MINUTE_MS) : floorTo(keepFrom, HOUR_MS);
  return retryConflicts(() =>
    db.transaction().execute(async (trx) => {
      if (exclusive !== undefined && !(await exclusive(trx))) return false;
      for (const spans of [SPANS.token, SPANS.stack]) {
        for (const s of spans) {
          // A longer span's row goes once all of it is before the horizon.
          const before = s.span === MINUTE_MS ? Math.max(cutoff, horizon) : floorTo(horizon, s.span);
          await trx
            .deleteFrom(s.table as 'usage_minute')
            .where('start_ms', '<', before)
            .execute();
        }
      }
      // Only forward: a compactor with a late clock (another gateway) must not bring back rows
      // whose other spans are gone.
      await trx.updateTable('meta').set({ value: horizon }).where('key', '=', USAGE_HORIZON_KEY).where('value', '<', horizon).execute();
      await trx.deleteFrom('sessions').where('expires_at', '<=', now).execute();
      return true;
    }),
  );
}
