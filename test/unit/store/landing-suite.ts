// The store's landing tables (docs/landing.md "Several instances") against a reference summed
// in memory: rows per hour, token and node added through addLanding (keys repeated within and
// across calls, an hour before the window, slots in many buckets), then landingByToken and
// landingByNode from a time inside an hour, landingByTokenNode (only the named tokens' rows, by
// exact key), two writers on one database adding at once, and retention. Run for SQLite by landing.test.ts and for PostgreSQL by landing-postgres.test.ts.

import t from 'tap';
import { emptyCounts, SLOT_BUCKETS } from '../../../src/landing/counts.js';
import { openStore } from '../../../src/store/open.js';
import { LANDING_SLOT_BUCKETS } from '../../../src/store/sql/landing.js';
import { tokenNodeKey, type LandingRow, type LandingTotals, type TokenNodeLandingTotals } from '../../../src/store/types.js';
import { rng } from '../../../src/tools/rng.js';
import type { StoreBackend } from './backends.js';

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
/** 2025-01-10 12:30 UTC. */
const NOW = Date.UTC(2025, 0, 10, 12, 30);
const KEYS = { token: ['tokA', 'tokB', 'tokC'], node: ['n0', 'n1'] };

function randomRows(next: () => number, count: number, fromMs: number): LandingRow[] {
  return Array.from({ length: count }, () => {
    const kind = next() < 0.5 ? 'token' : 'node';
    const keys = KEYS[kind];
    const row: LandingRow = {
      hour: Math.floor((fromMs + next() * (NOW - fromMs)) / HOUR) * HOUR,
      kind,
      key: keys[Math.floor(next() * keys.length)]!,
      ...emptyCounts(),
    };
    row.sent = Math.floor(next() * 50);
    row.landed = Math.floor(next() * row.sent);
    row.failed = Math.floor(next() * 3);
    row.expired = Math.floor(next() * 3);
    row.untracked = Math.floor(next() * 2);
    row.resent = Math.floor(next() * 5);
    for (let i = 0; i < row.landed; i++) row.slots[Math.min(Math.floor(next() * next() * 80), SLOT_BUCKETS - 1)]!++;
    return row;
  });
}

function reference(rows: readonly LandingRow[], kind: LandingRow['kind'], keys: readonly string[] | null, sinceMs: number): LandingTotals[] {
  const from = Math.floor(sinceMs / HOUR) * HOUR;
  const out = new Map<string, LandingTotals>();
  for (const r of rows) {
    if (r.kind !== kind || r.hour < from || (keys !== null && !keys.includes(r.key))) continue;
    let e = out.get(r.key);
    if (e === undefined) out.set(r.key, (e = { key: r.key, ...emptyCounts() }));
    for (const k of ['sent', 'landed', 'expired', 'failed', 'untracked', 'resent'] as const) e[k] += r[k];
    r.slots.forEach((n, i) => (e.slots[i]! += n));
  }
  return [...out.values()].sort((a, b) => (a.key < b.key ? -1 : 1));
}

export function landingTests(backend: StoreBackend): void {
  t.test('the store reads slots back in the buckets landing/counts.ts counts', async (t) => {
    t.equal(LANDING_SLOT_BUCKETS, SLOT_BUCKETS);
  });

  t.test(`${backend.name}: landing rows add up per token and per node from an hour on`, { skip: backend.skip }, async (t) => {
    const s = await backend.open(t);
    const next = rng(11);
    const rows: LandingRow[] = [];
    for (let i = 0; i < 4; i++) {
      const batch = randomRows(next, 60, NOW - 3 * DAY);
      await s.addLanding(batch);
      rows.push(...batch);
    }
    // Written twice in one call: summed before the statement (a row is touched once per statement).
    const twice = randomRows(next, 5, NOW - HOUR);
    await s.addLanding([...twice, ...twice]);
    rows.push(...twice, ...twice);
    for (const since of [NOW - DAY, NOW - 2 * DAY - 1, NOW, NOW + HOUR]) {
      t.same(await s.landingByNode(since), reference(rows, 'node', null, since), `nodes since ${new Date(since).toISOString()}`);
      t.same(await s.landingByToken(['tokA', 'tokC', 'nope'], since), reference(rows, 'token', ['tokA', 'tokC'], since), 'two tokens');
    }
    t.same(await s.landingByToken([], NOW - DAY), [], 'no tokens, nothing');
    await s.addLanding([]);
  });

  t.test(`${backend.name}: per token and node, only the tokens asked for`, { skip: backend.skip }, async (t) => {
    const s = await backend.open(t);
    const next = rng(23);
    // As the landing flush writes them: a token's row on a node beside the node's own row.
    // "tokA" is a prefix of "tokAB": exact keys, never a prefix match.
    const tokens = ['tokA', 'tokAB', 'tokB'];
    const rows: LandingRow[] = [];
    for (const r of randomRows(next, 120, NOW - 2 * DAY)) {
      const token = tokens[Math.floor(next() * tokens.length)]!;
      const node = KEYS.node[Math.floor(next() * KEYS.node.length)]!;
      rows.push({ ...r, kind: 'node', key: node }, { ...r, kind: 'token-node', key: tokenNodeKey(token, node) });
    }
    await s.addLanding(rows);
    const want = (ids: string[], since: number): TokenNodeLandingTotals[] =>
      reference(rows, 'token-node', null, since)
        .map(({ key, ...amounts }) => ({ tokenId: key.split('/')[0]!, node: key.split('/')[1]!, ...amounts }))
        .filter((p) => ids.includes(p.tokenId));
    for (const since of [NOW - DAY, NOW - 2 * DAY - 1, NOW + HOUR]) {
      t.same(
        await s.landingByTokenNode(['tokA', 'tokB', 'nope'], since),
        want(['tokA', 'tokB'], since),
        `tokA and tokB since ${new Date(since).toISOString()}`,
      );
      t.same(await s.landingByTokenNode(['tokAB'], since), want(['tokAB'], since), 'tokAB alone');
    }
    t.same(await s.landingByTokenNode([], NOW - DAY), [], 'no tokens, nothing');
  });

  t.test(`${backend.name}: two writers on one database add up`, { skip: backend.skip }, async (t) => {
    const url = await backend.freshUrl(t);
    const a = await openStore(url);
    const b = await openStore(url);
    t.teardown(async () => {
      await a.close();
      await b.close();
    });
    const next = rng(5);
    const batches = Array.from({ length: 8 }, () => randomRows(next, 40, NOW - 6 * HOUR));
    if (backend.name === 'postgres') {
      await Promise.all(batches.map((batch, i) => (i % 2 === 0 ? a : b).addLanding(batch)));
    } else {
      // Two SQLite handles in one thread would wait on each other's write lock synchronously:
      // they take turns, and each handle's calls run at once.
      await Promise.all(batches.slice(0, 4).map((batch) => a.addLanding(batch)));
      await Promise.all(batches.slice(4).map((batch) => b.addLanding(batch)));
    }
    const rows = batches.flat();
    t.same(await a.landingByNode(NOW - DAY), reference(rows, 'node', null, NOW - DAY));
    t.same(await b.landingByToken(KEYS.token, NOW - DAY), reference(rows, 'token', KEYS.token, NOW - DAY));
  });

  t.test(`${backend.name}: retention deletes whole hours older than retentionDays`, { skip: backend.skip }, async (t) => {
    const s = await backend.open(t);
    const rows = randomRows(rng(3), 100, NOW - 5 * DAY);
    await s.addLanding(rows);
    await s.compactLanding(NOW, 2);
    const kept = rows.filter((r) => r.hour >= Math.floor((NOW - 2 * DAY) / HOUR) * HOUR);
    t.ok(kept.length < rows.length && kept.length > 0, 'some rows are old');
    t.same(await s.landingByNode(0), reference(kept, 'node', null, 0));
    t.same(await s.landingByToken(KEYS.token, 0), reference(kept, 'token', KEYS.token, 0));
  });
}
