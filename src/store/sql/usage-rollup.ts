// Writing usage into its tables: every usage row is added into the rows around it, its
// token's minute, hour and 6-hour block and, when the token belongs to a stack, the stack's
// minute, hour, 6-hour block and day, all in the caller's transaction. A batch is
// first summed in memory, one pending row per table row it touches, then the pending rows are
// added into the database: sums in SQL (atomic), the histogram read, merged and written back
// with an optimistic check, so concurrent writers (several gateways on one database) add up
// and never overwrite one another.

import { sql } from 'kysely';
import type { UsageTable } from '../schema.js';
import type { Db } from './db.js';
import { LatencySum, v2Bytes } from './latency-sum.js';
import { floorTo, KEY_COLUMN, SPANS, type SpanTable, type UsageScope } from './usage-spans.js';

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
  /** The rows' histograms as v2Bytes(), summed only when written (most rows get one). */
  readonly latencies: Buffer[] = [];
  /** The first histogram's text as given. */
  firstText: string | null = null;

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
    if (this.latencies.length === 0) this.firstText = u.histogram;
    this.latencies.push(latency);
  }

  get histograms(): number {
    return this.latencies.length;
  }

  /**
   * The histogram to store, `existing` added: minute rows keep the meter's compressed
   * encoding (a lone histogram stays the text the meter wrote), roll-ups the uncompressed one
   * (latency-sum.ts; a lone histogram's is the bytes it was read into).
   */
  encoded(existing: string | null): string | null {
    if (this.latencies.length === 0) return existing;
    const minute = this.table === 'usage_minute';
    if (existing === null && this.latencies.length === 1) return minute ? this.firstText : this.latencies[0]!.toString('base64');
    const sum = new LatencySum();
    if (existing !== null) sum.add(existing);
    for (const l of this.latencies) sum.addBytes(l);
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
  add(
    tokenSpans: readonly SpanTable[],
    stackSpans: readonly SpanTable[],
    tokenId: string,
    stackId: string | null,
    method: string,
    minute: number,
    u: UsageAmounts,
  ): void {
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

  /**
   * Adds every pending row into the database. Rows of one table and start are looked up
   * together, the missing ones inserted together and the present ones updated together (a
   * flush mostly adds into rows that exist, a backfill mostly inserts); what a concurrent
   * writer inserted or changed meanwhile goes row by row.
   *
   * `rowLocks`: the database locks rows, not itself (PostgreSQL). Each chunk's rows are then
   * taken in key order (inserted when new, else locked) before any is updated, so two writers
   * on the same rows queue instead of deadlocking, and the one statement that updates a chunk
   * (which visits rows in whatever order its plan picks) never waits on another writer.
   */
  async write(trx: Db, rowLocks = false): Promise<void> {
    // One order for every writer (table as in SPANS, start, key, method): two gateways adding
    // into the same rows then lock them in the same order, rather than each waiting on a row
    // the other holds (a deadlock PostgreSQL breaks by failing one; see sql/retry.ts).
    const sorted = [...this.rows.values()].sort(writeOrder);
    let i = 0;
    while (i < sorted.length) {
      const first = sorted[i]!;
      let end = i + 1;
      while (end < sorted.length && end - i < CHUNK_ROWS && sorted[end]!.table === first.table && sorted[end]!.start === first.start) end++;
      await writeChunk(trx, sorted.slice(i, end), rowLocks);
      i = end;
    }
  }
}

/** Position of each table in the write order: token spans, then stack spans, shortest first (as compaction deletes). */
const TABLE_ORDER = new Map<string, number>([...SPANS.token, ...SPANS.stack].map((s, i) => [s.table, i]));

function writeOrder(a: PendingRow, b: PendingRow): number {
  return (
    TABLE_ORDER.get(a.table)! - TABLE_ORDER.get(b.table)! ||
    a.start - b.start ||
    (a.key < b.key ? -1 : a.key > b.key ? 1 : 0) ||
    (a.method < b.method ? -1 : a.method > b.method ? 1 : 0)
  );
}

/** Rows per lookup and per insert (9 bound values a row: far below any driver's limit). */
const CHUNK_ROWS = 500;

const rowId = (key: string, method: string): string => key + '\0' + method;

/** Adds rows of one table and one start into the database. */
async function writeChunk(trx: Db, rows: PendingRow[], rowLocks: boolean): Promise<void> {
  const first = rows[0]!;
  // Every usage table has the same columns but for its key; the casts only pick one table's
  // name for the typings.
  const t = first.table as 'usage_minute';
  const k = KEY_COLUMN[first.scope] as 'token_id';
  let pending = rows;
  if (rowLocks) {
    // Each row taken in key order, by this insert (new rows, which it holds) or by the
    // locking lookup below (the rest): two writers then wait on each other only one way round.
    const inserted = await insertNew(trx, t, k, rows);
    pending = rows.filter((r) => !inserted.has(rowId(r.key, r.method)));
    if (pending.length === 0) return;
  }
  const keys = [...new Set(pending.map((r) => r.key))];
  const methods = [...new Set(pending.map((r) => r.method))];
  // Keys × methods may name a few rows not asked for; they are ignored.
  let lookup = trx.selectFrom(t).select([k, 'method', 'histogram']).where('start_ms', '=', first.start).where(k, 'in', keys).where('method', 'in', methods);
  if (rowLocks) lookup = lookup.orderBy(k).orderBy('method').forUpdate();
  const found = await lookup.execute();
  const existing = new Map<string, string | null>();
  for (const f of found) existing.set(rowId(f[k], f.method), f.histogram);
  const missing = pending.filter((r) => !existing.has(rowId(r.key, r.method)));
  let lost = new Set<PendingRow>();
  if (missing.length > 0) {
    const inserted = await insertNew(trx, t, k, missing);
    // Inserted by another writer since the lookup (or, with rowLocks, deleted and inserted
    // again meanwhile): added into theirs below.
    lost = new Set(missing.filter((r) => !inserted.has(rowId(r.key, r.method))));
  }
  const present = pending.filter((r) => existing.has(rowId(r.key, r.method)));
  const updated = present.length === 0 ? new Set<string>() : await updateAll(trx, k, present, existing);
  for (const r of pending) {
    // Rows whose histogram another writer changed since the lookup, and rows it inserted.
    if ((existing.has(rowId(r.key, r.method)) && !updated.has(rowId(r.key, r.method))) || lost.has(r)) await addRow(trx, r);
  }
}

/** Inserts those of `rows` whose row does not exist yet; resolves the ids (rowId) of those it inserted. */
async function insertNew(trx: Db, t: 'usage_minute', k: 'token_id', rows: PendingRow[]): Promise<Set<string>> {
  const inserted = await trx
    .insertInto(t)
    .values(rows.map((r) => newValues(k, r)))
    .onConflict((oc) => oc.columns([k, 'method', 'start_ms']).doNothing())
    .returning([k, 'method'])
    .execute();
  return new Set(inserted.map((x) => rowId(x[k], x.method)));
}

/**
 * Adds each of `rows` (one table and start, all present) into its row in one statement, as
 * tryUpdate does one by one: sums in SQL, the histogram only where it is still what the
 * lookup read. A flush mostly adds into rows that exist, so this is most of its work; one
 * statement instead of one per row matters where every statement is a network round trip
 * (PostgreSQL). UPDATE … FROM a VALUES list named in a WITH clause, which SQLite and
 * PostgreSQL both take; the numbers are cast so PostgreSQL types the list. Resolves the ids
 * (rowId) of the rows updated.
 */
async function updateAll(trx: Db, k: 'token_id', rows: PendingRow[], existing: Map<string, string | null>): Promise<Set<string>> {
  const t = rows[0]!.table;
  const col = (c: string) => sql.ref(`${t}.${c}`);
  const values = sql.join(
    rows.map((r) => {
      const cur = existing.get(rowId(r.key, r.method)) ?? null;
      const check = r.histograms > 0 ? 1 : 0;
      return sql`(${r.key}, ${r.method}, cast(${r.calls} as bigint), cast(${r.errors} as bigint), cast(${r.bytesIn} as bigint), cast(${r.bytesOut} as bigint), cast(${check} as integer), ${cur}, ${check === 1 ? r.encoded(cur) : null})`;
    }),
  );
  const res = await sql<{ k: string; method: string }>`with v(k, method, calls, errors, bytes_in, bytes_out, check_hist, cur, hist) as (values ${values})
update ${sql.table(t)} set calls = ${col('calls')} + v.calls, errors = ${col('errors')} + v.errors, bytes_in = ${col('bytes_in')} + v.bytes_in, bytes_out = ${col('bytes_out')} + v.bytes_out,
  histogram = case when v.check_hist = 1 then v.hist else ${col('histogram')} end
from v
where ${col(k)} = v.k and ${col('method')} = v.method and ${col('start_ms')} = ${rows[0]!.start}
  and (v.check_hist = 0 or (v.cur is null and ${col('histogram')} is null) or ${col('histogram')} = v.cur)
returning ${col(k)} as k, ${col('method')} as method`.execute(trx);
  return new Set(res.rows.map((x) => rowId(x.k, x.method)));
}

function newValues(k: 'token_id', r: PendingRow): UsageTable {
  const values = {
    [k]: r.key,
    method: r.method,
    start_ms: r.start,
    calls: r.calls,
    errors: r.errors,
    bytes_in: r.bytesIn,
    bytes_out: r.bytesOut,
    histogram: r.encoded(null),
  };
  return values as unknown as UsageTable;
}

/**
 * Adds `r` into its row, whose histogram was `cur` when read: sums in SQL; the histogram only
 * if nobody changed it since (false then: read it again).
 */
async function tryUpdate(trx: Db, k: 'token_id', r: PendingRow, cur: string | null): Promise<boolean> {
  let q = trx
    .updateTable(r.table as 'usage_minute')
    .set((eb) => ({
      calls: eb('calls', '+', r.calls),
      errors: eb('errors', '+', r.errors),
      bytes_in: eb('bytes_in', '+', r.bytesIn),
      bytes_out: eb('bytes_out', '+', r.bytesOut),
      ...(r.histograms === 0 ? {} : { histogram: r.encoded(cur) }),
    }))
    .where(k, '=', r.key)
    .where('method', '=', r.method)
    .where('start_ms', '=', r.start);
  if (r.histograms > 0) q = cur === null ? q.where('histogram', 'is', null) : q.where('histogram', '=', cur);
  const upd = await q.executeTakeFirst();
  return Number(upd.numUpdatedRows) > 0;
}

/** Adds `r` into its row, inserting it when missing, retrying while other writers get in between. */
async function addRow(trx: Db, r: PendingRow): Promise<void> {
  const t = r.table as 'usage_minute';
  const k = KEY_COLUMN[r.scope] as 'token_id';
  for (let attempt = 0; attempt < 20; attempt++) {
    const cur = await trx
      .selectFrom(t)
      .select('histogram')
      .where(k, '=', r.key)
      .where('method', '=', r.method)
      .where('start_ms', '=', r.start)
      .executeTakeFirst();
    if (cur === undefined) {
      const ins = await trx
        .insertInto(t)
        .values(newValues(k, r))
        .onConflict((oc) => oc.columns([k, 'method', 'start_ms']).doNothing())
        .executeTakeFirst();
      if (Number(ins.numInsertedOrUpdatedRows ?? 0) > 0) return;
      continue; // someone inserted it meanwhile: add into theirs
    }
    if (await tryUpdate(trx, k, r, cur.histogram)) return;
  }
  throw new Error(`usage row ${r.table}/${r.key}/${r.method}/${r.start}: too many concurrent updates`);
}

/** The stack of each of `tokenIds` that is a stored token (config tokens have none). */
export async function stacksOf(db: Db, tokenIds: Iterable<string>): Promise<Map<string, string>> {
  const ids = [...new Set(tokenIds)];
  const out = new Map<string, string>();
  for (let i = 0; i < ids.length; i += 500) {
    const rows = await db
      .selectFrom('api_tokens')
      .select(['id', 'stack_id'])
      .where('id', 'in', ids.slice(i, i + 500))
      .execute();
    for (const r of rows) out.set(r.id, r.stack_id);
  }
  return out;
}
