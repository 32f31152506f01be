// Transaction landing rows (docs/landing.md "Several instances"): per hour and per token, node,
// or token on a node, counters in landing_hour and the slots-to-land histogram as (bucket, count) rows in
// landing_slots_hour. Every write adds into what is there (`x = x + excluded.x` on conflict),
// so instances flushing into one database add up and none overwrites another. Rows are written
// in one key order, so two writers lock them in the same order (see sql/retry.ts for the rest).

import type { Kysely } from 'kysely';
import type { Database } from '../schema.js';
import { tokenNodeKey, type LandingAmounts, type LandingRow, type LandingTotals, type TokenNodeLandingTotals } from '../types.js';
import type { Db } from './db.js';
import { retryConflicts } from './retry.js';
import { DAY_MS, floorTo, HOUR_MS } from './usage-spans.js';

/** Rows per statement: well under both databases' limit on bound values. */
const CHUNK = 200;
/** Keys per `in (…)` list when reading. */
const READ_CHUNK = 500;

/** Slots-to-land buckets read back: landing/counts.ts SLOT_BUCKETS (0…63, then 64 or more), which this layer cannot import. */
export const LANDING_SLOT_BUCKETS = 65;

const COUNTS = ['sent', 'landed', 'expired', 'failed', 'untracked', 'resent'] as const;

function emptyAmounts(slots: number): LandingAmounts {
  return { sent: 0, landed: 0, expired: 0, failed: 0, untracked: 0, resent: 0, slots: new Array<number>(slots).fill(0) };
}

function chunks<T>(list: readonly T[], size: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < list.length; i += size) out.push(list.slice(i, i + size));
  return out;
}

const order = (a: { kind: string; key: string; start_ms: number }, b: { kind: string; key: string; start_ms: number }): number =>
  a.kind < b.kind ? -1 : a.kind > b.kind ? 1 : a.key < b.key ? -1 : a.key > b.key ? 1 : a.start_ms - b.start_ms;

/** Adds `rows` into their hours. Rows with one kind, key and hour are summed first (one statement may touch a row once). */
export async function addLanding(db: Kysely<Database>, rows: readonly LandingRow[]): Promise<void> {
  const counts = new Map<string, Database['landing_hour']>();
  const slots = new Map<string, Database['landing_slots_hour']>();
  for (const r of rows) {
    const start = floorTo(r.hour, HOUR_MS);
    const id = r.kind + '\0' + r.key + '\0' + start;
    let c = counts.get(id);
    if (c === undefined)
      counts.set(id, (c = { kind: r.kind, key: r.key, start_ms: start, sent: 0, landed: 0, expired: 0, failed: 0, untracked: 0, resent: 0 }));
    for (const name of COUNTS) c[name] += r[name];
    r.slots.forEach((n, bucket) => {
      if (n <= 0) return;
      const sid = id + '\0' + bucket;
      const s = slots.get(sid);
      if (s === undefined) slots.set(sid, { kind: r.kind, key: r.key, start_ms: start, bucket, count: n });
      else s.count += n;
    });
  }
  if (counts.size === 0) return;
  const countRows = [...counts.values()].sort(order);
  const slotRows = [...slots.values()].sort((a, b) => order(a, b) || a.bucket - b.bucket);
  await retryConflicts(() =>
    db.transaction().execute(async (trx) => {
      for (const chunk of chunks(countRows, CHUNK)) {
        await trx
          .insertInto('landing_hour')
          .values(chunk)
          .onConflict((oc) =>
            oc.columns(['kind', 'key', 'start_ms']).doUpdateSet((eb) => ({
              sent: eb('landing_hour.sent', '+', eb.ref('excluded.sent')),
              landed: eb('landing_hour.landed', '+', eb.ref('excluded.landed')),
              expired: eb('landing_hour.expired', '+', eb.ref('excluded.expired')),
              failed: eb('landing_hour.failed', '+', eb.ref('excluded.failed')),
              untracked: eb('landing_hour.untracked', '+', eb.ref('excluded.untracked')),
              resent: eb('landing_hour.resent', '+', eb.ref('excluded.resent')),
            })),
          )
          .execute();
      }
      for (const chunk of chunks(slotRows, CHUNK)) {
        await trx
          .insertInto('landing_slots_hour')
          .values(chunk)
          .onConflict((oc) =>
            oc.columns(['kind', 'key', 'start_ms', 'bucket']).doUpdateSet((eb) => ({ count: eb('landing_slots_hour.count', '+', eb.ref('excluded.count')) })),
          )
          .execute();
      }
    }),
  );
}

/** Sums of `kind` from the start of `sinceMs`'s hour on, per key, in key order; `keys` null for every key. */
export async function landingTotals(db: Db, kind: LandingRow['kind'], keys: readonly string[] | null, sinceMs: number): Promise<LandingTotals[]> {
  const slotBuckets = LANDING_SLOT_BUCKETS;
  const from = floorTo(sinceMs, HOUR_MS);
  const out = new Map<string, LandingTotals>();
  const entry = (key: string): LandingTotals => {
    let e = out.get(key);
    if (e === undefined) out.set(key, (e = { key, ...emptyAmounts(slotBuckets) }));
    return e;
  };
  const groups = keys === null ? [null] : chunks([...new Set(keys)], READ_CHUNK);
  for (const group of groups) {
    if (group !== null && group.length === 0) continue;
    let q = db
      .selectFrom('landing_hour')
      .select((eb) => [
        'key',
        eb.fn.sum<number>('sent').as('sent'),
        eb.fn.sum<number>('landed').as('landed'),
        eb.fn.sum<number>('expired').as('expired'),
        eb.fn.sum<number>('failed').as('failed'),
        eb.fn.sum<number>('untracked').as('untracked'),
        eb.fn.sum<number>('resent').as('resent'),
      ])
      .where('kind', '=', kind)
      .where('start_ms', '>=', from)
      .groupBy('key');
    if (group !== null) q = q.where('key', 'in', group);
    for (const r of await q.execute()) {
      const e = entry(r.key);
      for (const name of COUNTS) e[name] = Number(r[name]);
    }
    let s = db
      .selectFrom('landing_slots_hour')
      .select((eb) => ['key', 'bucket', eb.fn.sum<number>('count').as('count')])
      .where('kind', '=', kind)
      .where('start_ms', '>=', from)
      .groupBy(['key', 'bucket']);
    if (group !== null) s = s.where('key', 'in', group);
    for (const r of await s.execute()) {
      const b = Math.min(Math.max(0, Number(r.bucket)), slotBuckets - 1);
      entry(r.key).slots[b]! += Number(r.count);
    }
  }
  return [...out.values()].sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
}

/**
 * Landing of `tokenIds` per node, from the start of `sinceMs`'s hour on. The rows are found by
 * their exact keys, every token with every node that had landing in the range (the `node` rows
 * of the same flushes), so the read uses the primary key and never sees another token's rows.
 */
export async function landingByTokenNode(db: Db, tokenIds: readonly string[], sinceMs: number): Promise<TokenNodeLandingTotals[]> {
  if (tokenIds.length === 0) return [];
  const nodes = await db
    .selectFrom('landing_hour')
    .select('key')
    .distinct()
    .where('kind', '=', 'node')
    .where('start_ms', '>=', floorTo(sinceMs, HOUR_MS))
    .execute();
  const pairs = new Map<string, { tokenId: string; node: string }>();
  for (const tokenId of tokenIds) for (const { key: node } of nodes) pairs.set(tokenNodeKey(tokenId, node), { tokenId, node });
  const totals = await landingTotals(db, 'token-node', [...pairs.keys()], sinceMs);
  const out = totals.map(({ key, ...amounts }) => ({ ...pairs.get(key)!, ...amounts }));
  return out.sort((a, b) => (a.tokenId < b.tokenId ? -1 : a.tokenId > b.tokenId ? 1 : a.node < b.node ? -1 : a.node > b.node ? 1 : 0));
}

/** Deletes the hours that end before `retentionDays` ago. */
export async function compactLanding(db: Db, now: number, retentionDays: number): Promise<void> {
  const before = floorTo(now - retentionDays * DAY_MS, HOUR_MS);
  await db.deleteFrom('landing_slots_hour').where('start_ms', '<', before).execute();
  await db.deleteFrom('landing_hour').where('start_ms', '<', before).execute();
}
