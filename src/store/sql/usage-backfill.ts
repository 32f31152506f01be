// Builds the roll-ups from the usage a store held before they were kept (migration
// 0002_usage_rollups). Until then, minutes and hours held different usage: hour rows were the
// minutes compaction had rolled up, minute rows the rest. So every hour row is added into its
// 6-hour block and its stack's hour, 6-hour block and day, and every minute row into its hour,
// 6-hour block and all of its stack's spans. Hours go first, before minutes are added into
// them. Rows are read in pages (by primary key) so a large store is never held in memory.

import type { UsageTable } from '../schema.js';
import type { Db } from './db.js';
import { stacksOf, UsageBatch } from './usage-rollup.js';
import { SPANS, type SpanTable } from './usage-spans.js';

const PAGE_ROWS = 5000;

const spansOf = (spans: readonly SpanTable[], tables: readonly string[]): SpanTable[] => spans.filter((s) => tables.includes(s.table));

async function rollUpTable(db: Db, from: 'usage_minute' | 'usage_hour', tokenSpans: SpanTable[], stackSpans: SpanTable[]): Promise<void> {
  let after: [string, string, number] | null = null;
  for (;;) {
    let q = db.selectFrom(from).selectAll().orderBy('token_id').orderBy('method').orderBy('start_ms').limit(PAGE_ROWS);
    if (after !== null) {
      const [token, method, start] = after;
      q = q.where((eb) => eb(eb.refTuple('token_id', 'method', 'start_ms'), '>', eb.tuple(token, method, start)));
    }
    const rows: UsageTable[] = await q.execute();
    if (rows.length === 0) return;
    const stacks = await stacksOf(
      db,
      rows.map((r) => r.token_id),
    );
    const batch = new UsageBatch();
    for (const r of rows) {
      const amounts = { calls: Number(r.calls), errors: Number(r.errors), bytesIn: Number(r.bytes_in), bytesOut: Number(r.bytes_out), histogram: r.histogram };
      batch.add(tokenSpans, stackSpans, r.token_id, stacks.get(r.token_id) ?? null, r.method, Number(r.start_ms), amounts);
    }
    await batch.write(db);
    const last = rows[rows.length - 1]!;
    after = [last.token_id, last.method, Number(last.start_ms)];
  }
}

/** Adds the usage already stored into the roll-up tables (empty, just created). */
export async function backfillRollups(db: Db): Promise<void> {
  await rollUpTable(db, 'usage_hour', spansOf(SPANS.token, ['usage_6h']), spansOf(SPANS.stack, ['stack_usage_hour', 'stack_usage_6h', 'stack_usage_day']));
  await rollUpTable(db, 'usage_minute', spansOf(SPANS.token, ['usage_hour', 'usage_6h']), [...SPANS.stack]);
}
