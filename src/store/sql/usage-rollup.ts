// Writing usage into its tables: every usage row is added into its minute and into the hour,
// 6-hour (and, for its stack, day) rows around it, in the caller's transaction. A batch is
// first summed in memory, one pending row per table row it touches, then each pending row is
// added into the database: sums in SQL (atomic), the histogram read, merged and written back
// with an optimistic check, so concurrent writers (several gateways on one database) add up
// and never overwrite one another.

import type { UsageTable } from '../schema.js';
import type { Db } from './db.js';
import { LatencySum, v2Bytes } from './latency-sum.js';
import { floorTo, KEY_COLUMN, type SpanTable, type UsageScope } from './usage-spans.js';

/** What one usage row adds (UsageRow without its key and minute). */
export interface UsageAmounts {
  calls: number;
  errors: number;
  bytesIn: number;
  bytesOut: number;
  histogram: string | null;
}

/** The sums of every usage row that falls in one row of one table. */
class PendingRow {
  calls = 0;
  errors = 0;
  bytesIn = 0;
  bytesOut = 0;
  readonly latency = new LatencySum();
  /** Histograms added; while only one, `single` is its text as written. */
  histograms = 0;
  single: string | null = null;

  constructor(
    readonly scope: UsageScope,
    readonly table: SpanTable['table'],
    readonly key: string,
    readonly method: string,
    readonly start: number,
  ) {}

  add(u: UsageAmounts, latency: Buffer | null): void {
    this.calls += u.calls;
    this.errors += u.errors;
    this.bytesIn += u.bytesIn;
    this.bytesOut += u.bytesOut;
    if (latency === null) return;
    this.latency.addBytes(latency);
    this.single = ++this.histograms === 1 ? u.histogram : null;
  }

  /**
   * The histogram to store: minute rows keep the meter's compressed encoding (a lone histogram
   * stays the text the meter wrote), roll-ups the uncompressed one (latency-sum.ts).
   */
  encoded(existing: string | null): string | null {
    if (this.histograms === 0) return existing;
    const minute = this.table === 'usage_minute';
    if (existing === null && minute && this.single !== null) return this.single;
    let sum = this.latency;
    if (existing !== null) {
      sum = new LatencySum();
      sum.add(existing);
      sum.addSum(this.latency);
    }
    return minute ? sum.encodeCompressed() : sum.encode();
  }
}

/** Usage summed per table row, then added into the database (write). */
export class UsageBatch {
  private readonly rows = new Map<string, PendingRow>();

  /**
   * Adds `u` (of `tokenId`'s `method` at minute `minute`) into the rows of `tokenSpans` and,
   * when the token belongs to a stack, of `stackSpans`.
   */
  add(tokenSpans: readonly SpanTable[], stackSpans: readonly SpanTable[], tokenId: string, stackId: string | null, method: string, minute: number, u: UsageAmounts): void {
    const latency = u.histogram === null ? null : v2Bytes(u.histogram);
    for (const s of tokenSpans) this.row('token', s, tokenId, method, minute).add(u, latency);
    if (stackId === null) return;
    for (const s of stackSpans) this.row('stack', s, stackId, method, minute).add(u, latency);
  }

  private row(scope: UsageScope, s: SpanTable, key: string, method: string, minute: number): PendingRow {
    const start = floorTo(minute, s.span);
    const id = s.table + '\0' + key + '\0' + method + '\0' + start;
    let r = this.rows.get(id);
    if (r === undefined) this.rows.set(id, (r = new PendingRow(scope, s.table, key, method, start)));
    return r;
  }

  get size(): number {
    return this.rows.size;
  }

  async write(trx: Db): Promise<void> {
    for (const r of this.rows.values()) await addRow(trx, r);
  }
}

async function addRow(trx: Db, r: PendingRow): Promise<void> {
  // Every usage table has the same columns but for its key; the casts only pick one table's
  // name for the typings.
  const t = r.table as 'usage_minute';
  const k = KEY_COLUMN[r.scope] as 'token_id';
  for (let attempt = 0; attempt < 20; attempt++) {
    const cur = await trx.selectFrom(t).select('histogram').where(k, '=', r.key).where('method', '=', r.method).where('start_ms', '=', r.start).executeTakeFirst();
    if (cur === undefined) {
      const values = { [k]: r.key, method: r.method, start_ms: r.start, calls: r.calls, errors: r.errors, bytes_in: r.bytesIn, bytes_out: r.bytesOut, histogram: r.encoded(null) };
      const ins = await trx
        .insertInto(t)
        .values(values as unknown as UsageTable)
        .onConflict((oc) => oc.columns([k, 'method', 'start_ms']).doNothing())
        .executeTakeFirst();
      if (Number(ins.numInsertedOrUpdatedRows ?? 0) > 0) return;
      continue; // someone inserted it meanwhile: add into theirs
    }
    let q = trx
      .updateTable(t)
      .set((eb) => ({
        calls: eb('calls', '+', r.calls),
        errors: eb('errors', '+', r.errors),
        bytes_in: eb('bytes_in', '+', r.bytesIn),
        bytes_out: eb('bytes_out', '+', r.bytesOut),
        ...(r.histograms === 0 ? {} : { histogram: r.encoded(cur.histogram) }),
      }))
      .where(k, '=', r.key)
      .where('method', '=', r.method)
      .where('start_ms', '=', r.start);
    if (r.histograms > 0) q = cur.histogram === null ? q.where('histogram', 'is', null) : q.where('histogram', '=', cur.histogram);
    const upd = await q.executeTakeFirst();
    if (Number(upd.numUpdatedRows) > 0) return;
  }
  throw new Error(`usage row ${r.table}/${r.key}/${r.method}/${r.start}: too many concurrent updates`);
}

/** The stack of each of `tokenIds` that is a stored token (config tokens have none). */
export async function stacksOf(db: Db, tokenIds: Iterable<string>): Promise<Map<string, string>> {
  const ids = [...new Set(tokenIds)];
  const out = new Map<string, string>();
  for (let i = 0; i < ids.length; i += 500) {
    const rows = await db.selectFrom('api_tokens').select(['id', 'stack_id']).where('id', 'in', ids.slice(i, i + 500)).execute();
    for (const r of rows) out.set(r.id, r.stack_id);
  }
  return out;
}
