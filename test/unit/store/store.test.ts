// The SQL store (docs/accounts.md "Accounts, tokens and the console") on SQLite, in memory and in a file,
// and on PostgreSQL when it is installed (backends.ts): accounts and sessions, stacks and
// per-account isolation, the token lifecycle and hashing, the token version, usage merging,
// overview and analytics math, compaction and retention. Also the usage meter's latency
// cells, the usage flush's retry and shutdown, and the password hashing.

import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import t from 'tap';
import { hashPassword, verifyPassword } from '../../../src/accounts/password.js';
import { silentLogger } from '../../../src/log.js';
import { LatencyHistogram } from '../../../src/metrics/histogram.js';
import { openStore, sqlitePath } from '../../../src/store/open.js';
import type { SqlStore } from '../../../src/store/sql.js';
import { sha256Hex } from '../../../src/store/sql/sessions.js';
import { DAY_MS, HOUR_MS, MINUTE_MS } from '../../../src/store/sql/usage.js';
import { StoreError, type FullStore, type UsageRow } from '../../../src/store/types.js';
import { startUsageFlush } from '../../../src/usage/flush.js';
import { UsageMeter } from '../../../src/usage/meter.js';
import { POSTGRES } from './backends.js';

type Test = Parameters<Parameters<typeof t.test>[0]>[0];

/** A fixed "now": 2025-01-10 12:30:15.500 UTC. */
const NOW = Date.UTC(2025, 0, 10, 12, 30, 15, 500);
const minuteOf = (ms: number): number => Math.floor(ms / MINUTE_MS) * MINUTE_MS;

function tmp(t: Test): string {
  const dir = mkdtempSync(join(tmpdir(), 'jg-store-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

const KINDS = ['memory', 'file', 'postgres'] as const;
const skipOf = (kind: (typeof KINDS)[number]): { skip: string | false } => ({ skip: kind === 'postgres' ? POSTGRES.skip : false });

async function open(t: Test, kind: (typeof KINDS)[number]): Promise<FullStore> {
  if (kind === 'postgres') return POSTGRES.open(t);
  const url = kind === 'memory' ? 'sqlite://:memory:' : `sqlite://${join(tmp(t), 'sub', 'jg.db')}`;
  const s = await openStore(url);
  t.teardown(() => s.close());
  return s;
}

async function rejectsCode(t: Test, p: Promise<unknown>, code: StoreError['code'], what: string): Promise<void> {
  try {
    await p;
    t.fail(`${what}: expected StoreError ${code}`);
  } catch (err) {
    t.ok(err instanceof StoreError && err.code === code, `${what}: StoreError ${code} (${(err as Error).message})`);
  }
}

function hist(values: number[]): string {
  const h = new LatencyHistogram({ digits: 2 });
  for (const v of values) h.record(v);
  return h.encode();
}

function row(tokenId: string, method: string, minute: number, calls: number, extra: Partial<UsageRow> = {}): UsageRow {
  return { tokenId, method, minute: minuteOf(minute), calls, errors: 0, bytesIn: calls * 10, bytesOut: calls * 100, histogram: null, ...extra };
}

/** An account with a stack and a token. */
async function fixture(s: FullStore, email = 'a@example.com', stackName = 'main') {
  const account = await s.createAccount(email, await hashPassword('pw'));
  const stack = await s.createStack(account.id, stackName, null);
  const tok = await s.createToken(account.id, stack.id, 'first');
  return { account, stack, token: tok.token, tokenId: tok.record.id };
}

t.test('password hashing: scrypt, salted, verifies only the right password', async (t) => {
  const h = await hashPassword('correct horse');
  t.match(h, /^scrypt\$16384\$8\$1\$[A-Za-z0-9+/=]+\$[A-Za-z0-9+/=]+$/, 'encoded as scrypt$N$r$p$salt$hash');
  t.not(h, await hashPassword('correct horse'), 'salted: two hashes differ');
  t.equal(await verifyPassword('correct horse', h), true);
  t.equal(await verifyPassword('correct horsE', h), false);
  t.equal(await verifyPassword('x', 'garbage'), false, 'malformed hash: false, no throw');
  t.equal(await verifyPassword('x', 'scrypt$1073741824$8$1$AAAA$AAAAAAAAAAAAAAAAAAAAAA=='), false, 'absurd cost refused');
});

t.test('store URLs', async (t) => {
  t.equal(sqlitePath('sqlite://:memory:'), ':memory:');
  t.equal(sqlitePath('sqlite://./data/x.db', '/srv'), '/srv/data/x.db', 'relative to the working directory');
  t.equal(sqlitePath('sqlite:///var/x.db', '/srv'), '/var/x.db');
  await t.rejects(
    openStore('postgres://u:secret@127.0.0.1:1/jg'),
    /^store\.url postgres:\/\/u@127\.0\.0\.1:1\/jg: cannot open the PostgreSQL store at 127\.0\.0\.1:1: connection refused/,
    'unreachable: names host and port, not the password',
  );
  await t.rejects(openStore('postgresql://u@127.0.0.1:1'), /name the database/);
  await t.rejects(openStore('mysql://db'), /expected sqlite:/);
});

for (const kind of KINDS) {
  t.test(`${kind}: accounts and sessions`, skipOf(kind), async (t) => {
    const s = await open(t, kind);
    const a = await s.createAccount('  Alice@Example.COM ', 'hash-a');
    t.equal(a.email, 'alice@example.com', 'email trimmed and lower-cased');
    t.match(a.id, /^acc_[A-Za-z0-9_-]{16}$/, 'random text id');
    await rejectsCode(t, s.createAccount('ALICE@example.com', 'x'), 'conflict', 'same email, other case');
    t.same(await s.accountByEmail('alice@EXAMPLE.com'), a);
    t.same(await s.accountById(a.id), a);
    t.equal(await s.accountById('acc_nope'), null);
    t.equal(await s.accountByEmail('bob@example.com'), null);

    const sess = await s.createSession(a.id, 60_000);
    t.ok(sess.id.length >= 40 && sess.csrfToken.length >= 40, 'session id and CSRF token are long random strings');
    t.equal(sess.expiresAt - sess.createdAt, 60_000);
    t.same(await s.sessionById(sess.id), sess);
    t.equal(await s.sessionById(sess.id + 'x'), null);
    const raw = await (s as SqlStore).db.selectFrom('sessions').select('id').execute();
    t.same(
      raw.map((r) => r.id),
      [sha256Hex(sess.id)],
      'only a hash of the session id is stored',
    );
    await s.deleteSession(sess.id);
    t.equal(await s.sessionById(sess.id), null, 'deleted');

    const short = await s.createSession(a.id, 20);
    t.ok(await s.sessionById(short.id), 'alive before its expiry');
    await new Promise((r) => setTimeout(r, 40));
    t.equal(await s.sessionById(short.id), null, 'null once expired');
    await s.compactUsage(Date.now(), 30);
    t.equal((await (s as SqlStore).db.selectFrom('sessions').select('id').execute()).length, 0, 'expired sessions purged by compaction');
    t.same(
      (await s.listAccounts()).map((x) => x.email),
      ['alice@example.com'],
    );
  });

  t.test(`${kind}: stacks, and one account never sees another's`, skipOf(kind), async (t) => {
    const s = await open(t, kind);
    const A = await fixture(s, 'a@example.com', 'prod');
    const B = await fixture(s, 'b@example.com', 'mine');
    await rejectsCode(t, s.createStack(A.account.id, 'prod', 'again'), 'conflict', 'duplicate stack name in one account');
    await rejectsCode(t, s.createStack(A.account.id, '   ', null), 'invalid', 'blank name');
    const bProd = await s.createStack(B.account.id, 'prod', 'B has one too');
    t.equal(bProd.description, 'B has one too', 'the same name in another account is fine');
    t.same(
      (await s.listStacks(A.account.id)).map((x) => x.name),
      ['prod'],
    );
    t.same(
      (await s.listStacks(B.account.id)).map((x) => x.name),
      ['mine', 'prod'],
    );
    t.same(await s.stackByName(A.account.id, 'prod'), A.stack);

    // B against A's stack and token.
    t.equal(await s.stackById(B.account.id, A.stack.id), null, 'stackById');
    t.equal((await s.stackByName(B.account.id, 'prod'))?.id, bProd.id, "stackByName finds B's own");
    await rejectsCode(t, s.createToken(B.account.id, A.stack.id, 'steal'), 'not_found', 'createToken in a foreign stack');
    t.same(await s.listTokens(B.account.id, A.stack.id), [], 'listTokens');
    t.equal(await s.tokenById(B.account.id, A.tokenId), null, 'tokenById');
    t.equal(await s.setTokenActive(B.account.id, A.tokenId, false), null, 'setTokenActive');
    t.equal(await s.deleteToken(B.account.id, A.tokenId), false, 'deleteToken');
    t.equal(await s.updateStack(B.account.id, A.stack.id, { disabled: true }), null, 'updateStack');
    await rejectsCode(t, s.overview(B.account.id, A.stack.id, NOW), 'not_found', 'overview');
    await rejectsCode(t, s.analytics(B.account.id, A.stack.id, '24h', NOW), 'not_found', 'analytics');
    await s.addUsage([row(A.tokenId, 'getSlot', NOW, 9)]);
    t.same((await s.analytics(B.account.id, B.stack.id, '24h', NOW, A.tokenId)).methods, [], "B's analytics filtered by A's token: nothing");
    t.equal((await s.overview(B.account.id, B.stack.id, NOW)).calls24h, 0, "A's usage is not in B's overview");
    t.equal((await s.overview(A.account.id, A.stack.id, NOW)).calls24h, 9);
    t.equal((await s.tokenById(A.account.id, A.tokenId))?.active, true, "A's token untouched");
    t.equal((await s.stackById(A.account.id, A.stack.id))?.disabled, false, "A's stack untouched");

    // updateStack
    const renamed = await s.updateStack(A.account.id, A.stack.id, { name: 'production', description: 'live' });
    t.same([renamed?.name, renamed?.description], ['production', 'live']);
    const other = await s.createStack(A.account.id, 'staging', null);
    await rejectsCode(t, s.updateStack(A.account.id, other.id, { name: 'production' }), 'conflict', 'rename onto an existing name');
  });

  t.test(`${kind}: token lifecycle, hashing and the token version`, skipOf(kind), async (t) => {
    const s = await open(t, kind);
    t.equal(typeof s.onTokensChanged, kind === 'postgres' ? 'function' : 'undefined', 'only PostgreSQL pushes token changes (LISTEN/NOTIFY)');
    const v0 = await s.tokenVersion();
    const a = await s.createAccount('a@example.com', 'h');
    const stack = await s.createStack(a.id, 'main', null);
    t.equal(await s.tokenVersion(), v0, 'accounts and stacks do not move the token version');
    const { token, record } = await s.createToken(a.id, stack.id, ' ci ');
    t.match(token, /^jg_[A-Za-z0-9_-]{32}$/, "'jg_' + 192 bits in base64url: URL-path safe");
    t.equal(record.prefix, token.slice(0, 8));
    t.equal(record.label, 'ci');
    t.same([record.active, record.lastUsedAt, record.stackId, record.accountId], [true, null, stack.id, a.id]);
    const v1 = await s.tokenVersion();
    t.ok(v1 > v0, 'create bumps the version');
    const gw = await s.tokensForGateway();
    t.equal(gw.length, 1);
    t.same([gw[0]!.id, gw[0]!.prefix, gw[0]!.stackId, gw[0]!.active], [record.id, record.prefix, stack.id, true]);
    t.equal(gw[0]!.hash.toString('hex'), sha256Hex(token), 'the gateway gets the SHA-256 of the token');
    t.same(await s.listTokens(a.id, stack.id), [record]);
    t.same(await s.tokenById(a.id, record.id), record);

    t.equal((await s.setTokenActive(a.id, record.id, false))?.active, false);
    const v2 = await s.tokenVersion();
    t.ok(v2 > v1, 'deactivation bumps');
    t.equal((await s.tokensForGateway())[0]!.active, false, 'inactive for the gateway');
    await s.setTokenActive(a.id, record.id, false);
    t.equal(await s.tokenVersion(), v2, 'a no-op change does not bump');
    await s.setTokenActive(a.id, record.id, true);
    const v3 = await s.tokenVersion();
    t.ok(v3 > v2, 'reactivation bumps');

    await s.updateStack(a.id, stack.id, { disabled: true });
    const v4 = await s.tokenVersion();
    t.ok(v4 > v3, 'disabling the stack bumps');
    t.equal((await s.tokensForGateway())[0]!.active, false, "a disabled stack's tokens are inactive for the gateway");
    t.equal((await s.tokenById(a.id, record.id))?.active, true, 'while the token itself stays active');
    await s.updateStack(a.id, stack.id, { description: 'x' });
    t.equal(await s.tokenVersion(), v4, 'a description change does not bump');
    await s.updateStack(a.id, stack.id, { disabled: false });
    t.equal((await s.tokensForGateway())[0]!.active, true);

    const touchedAt = NOW;
    await s.touchTokens(
      new Map([
        [record.id, touchedAt],
        ['static:abc', touchedAt],
      ]),
    );
    t.equal((await s.tokenById(a.id, record.id))?.lastUsedAt, touchedAt, 'touchTokens sets last use (unknown ids ignored)');
    await s.touchTokens(new Map([[record.id, touchedAt - 1000]]));
    t.equal((await s.tokenById(a.id, record.id))?.lastUsedAt, touchedAt, 'never moves back');
    const v5 = await s.tokenVersion();

    t.equal(await s.deleteToken(a.id, record.id), true);
    t.ok((await s.tokenVersion()) > v5, 'delete bumps');
    t.same(await s.tokensForGateway(), [], 'deleted: gone for the gateway');
    t.same(await s.listTokens(a.id, stack.id), [], 'and from the list');
    t.equal(await s.tokenById(a.id, record.id), null);
    t.equal(await s.deleteToken(a.id, record.id), false, 'deleting twice: false');
    t.equal(await s.setTokenActive(a.id, record.id, true), null, 'a deleted token cannot come back');
    await rejectsCode(t, s.createToken(a.id, stack.id, 'x'.repeat(65)), 'invalid', 'overlong label');
  });

  t.test(`${kind}: usage merges into the minute: sums, histograms added`, skipOf(kind), async (t) => {
    const s = await open(t, kind);
    const { account, stack, tokenId } = await fixture(s);
    const m = minuteOf(NOW);
    await s.addUsage([
      row(tokenId, 'getSlot', m, 3, { errors: 1, histogram: hist([1000, 2000, 3000]) }),
      row(tokenId, 'getBalance', m, 1, { histogram: hist([500]) }),
    ]);
    await s.addUsage([row(tokenId, 'getSlot', m, 2, { histogram: hist([100_000, 100_000]) }), row(tokenId, 'getSlot', m + 5, 1)]);
    await s.addUsage([]);
    const rows = await (s as SqlStore).db.selectFrom('usage_minute').selectAll().where('method', '=', 'getSlot').execute();
    t.equal(rows.length, 1, 'one row per token, method and minute');
    t.same([rows[0]!.calls, rows[0]!.errors, rows[0]!.bytes_in, rows[0]!.bytes_out], [6, 1, 60, 600], 'sums');
    const h = LatencyHistogram.decode(rows[0]!.histogram!);
    t.equal(h.count, 5, 'histogram counts added (the row without latency adds none)');
    const a = await s.analytics(account.id, stack.id, '1h', NOW);
    const slot = a.methods.find((x) => x.method === 'getSlot')!;
    t.same([slot.calls, slot.errors], [6, 1]);
    t.ok(Math.abs(slot.p50! - 3) < 0.05, `p50 ≈ 3 ms (${slot.p50})`);
    t.ok(Math.abs(slot.p99! - 100) < 1, `p99 ≈ 100 ms (${slot.p99})`);
    t.same(
      a.methods.map((x) => x.method),
      ['getSlot', 'getBalance'],
      'busiest method first',
    );
    // A null histogram merged with an existing one keeps it.
    await s.addUsage([row(tokenId, 'getBalance', m, 1)]);
    const again = await s.analytics(account.id, stack.id, '1h', NOW);
    t.equal(again.methods.find((x) => x.method === 'getBalance')!.calls, 2);
    t.ok(again.methods.find((x) => x.method === 'getBalance')!.p50! > 0.4, 'latency kept');
  });

  t.test(`${kind}: overview: last 24 h, active tokens, 7 daily buckets`, skipOf(kind), async (t) => {
    const s = await open(t, kind);
    const { account, stack, tokenId } = await fixture(s);
    const second = await s.createToken(account.id, stack.id, 'second');
    const third = await s.createToken(account.id, stack.id, 'third');
    await s.setTokenActive(account.id, third.record.id, false);
    const other = await s.createStack(account.id, 'other', null);
    const otherTok = await s.createToken(account.id, other.id, 'o');
    const today = Date.UTC(2025, 0, 10);
    await s.addUsage([
      row(tokenId, 'getSlot', NOW - MINUTE_MS, 5), // today, in 24 h
      row(second.record.id, 'getSlot', NOW - 23 * HOUR_MS, 7), // yesterday (13:30 on the 9th), in 24 h
      row(tokenId, 'getSlot', NOW - 25 * HOUR_MS, 11), // yesterday, not in 24 h
      row(tokenId, 'getSlot', today - 6 * DAY_MS + HOUR_MS, 13), // oldest bucket
      row(tokenId, 'getSlot', today - 7 * DAY_MS + HOUR_MS, 17), // too old for the chart
      row(tokenId, 'getSlot', NOW + 2 * MINUTE_MS, 19), // after "now": not counted
      row(otherTok.record.id, 'getSlot', NOW - MINUTE_MS, 23), // another stack
      row('static:0123456789abcdef', 'getSlot', NOW - MINUTE_MS, 29), // config token: no stack
      row(tokenId, '(ws notifications)', NOW - MINUTE_MS, 0, { bytesOut: 1000 }),
    ]);
    const o = await s.overview(account.id, stack.id, NOW);
    t.equal(o.calls24h, 12, 'calls in the last 24 h');
    t.equal(o.bytes24h, 12 * 110 + 1000, 'bytes in + out in the last 24 h (notifications included)');
    t.equal(o.activeTokens, 2, 'active tokens of the stack');
    t.same(
      o.daily,
      [13, 0, 0, 0, 0, 18, 5].map((calls, i) => ({ day: today - (6 - i) * DAY_MS, calls })),
      '7 UTC days, oldest first',
    );
    const empty = await s.overview(account.id, other.id, NOW + 30 * DAY_MS);
    t.same([empty.calls24h, empty.bytes24h, empty.daily.length, empty.daily.every((d) => d.calls === 0)], [0, 0, 7, true]);
  });

  t.test(`${kind}: analytics per method, series buckets and the token filter`, skipOf(kind), async (t) => {
    const s = await open(t, kind);
    const { account, stack, tokenId } = await fixture(s);
    const b = await s.createToken(account.id, stack.id, 'b');
    await s.addUsage([
      row(tokenId, 'getSlot', NOW, 4, { errors: 1, histogram: hist([1000, 1000, 1000, 9000]) }),
      row(tokenId, 'getSlot', NOW - 30 * MINUTE_MS, 2, { histogram: hist([1000, 1000]) }),
      row(b.record.id, 'getSlot', NOW - 2 * HOUR_MS, 8, { histogram: hist(Array(8).fill(5000)) }),
      row(b.record.id, 'sendTransaction', NOW - 3 * DAY_MS, 1, { errors: 1 }),
      row(tokenId, '(batch)', NOW, 0, { bytesIn: 500, bytesOut: 900 }),
    ]);
    const h1 = await s.analytics(account.id, stack.id, '1h', NOW);
    t.equal(h1.to, NOW);
    t.equal(h1.from, minuteOf(NOW) - 59 * MINUTE_MS, '1 h: 60 minute buckets ending with the current minute');
    t.equal(h1.series.length, 60);
    t.same(h1.series[59], { t: minuteOf(NOW), calls: 4, errors: 1 });
    t.same(h1.series[29], { t: minuteOf(NOW) - 30 * MINUTE_MS, calls: 2, errors: 0 });
    t.same(
      h1.methods.map((m) => [m.method, m.calls, m.errors]),
      [['getSlot', 6, 1]],
      'only calls inside the hour; bytes-only rows are not methods',
    );

    const d1 = await s.analytics(account.id, stack.id, '24h', NOW);
    t.equal(d1.series.length, 24);
    t.equal(d1.from, Math.floor(NOW / HOUR_MS) * HOUR_MS - 23 * HOUR_MS);
    t.equal(
      d1.series.reduce((a, x) => a + x.calls, 0),
      14,
    );
    t.equal(d1.series[21]!.calls, 8, 'two hours back');
    const slot = d1.methods[0]!;
    t.same([slot.method, slot.calls], ['getSlot', 14]);
    t.ok(slot.p50! > 4.9 && slot.p50! < 5.1, `merged p50 over both tokens ≈ 5 ms (${slot.p50})`);

    const w7 = await s.analytics(account.id, stack.id, '7d', NOW);
    t.equal(w7.series.length, 28, '7 d: 6 h buckets');
    t.equal(w7.series[1]!.t - w7.series[0]!.t, 6 * HOUR_MS);
    t.same(
      w7.methods.map((m) => [m.method, m.calls, m.errors, m.p50]),
      [
        ['getSlot', 14, 1, w7.methods[0]!.p50],
        ['sendTransaction', 1, 1, null],
      ],
      'no latency recorded: p50 null',
    );

    const onlyA = await s.analytics(account.id, stack.id, '7d', NOW, tokenId);
    t.same(
      onlyA.methods.map((m) => [m.method, m.calls]),
      [['getSlot', 6]],
      'filtered by token',
    );
    t.ok(onlyA.methods[0]!.p99! > 8.9, 'its own latencies');
    const onlyB = await s.analytics(account.id, stack.id, '7d', NOW, b.record.id);
    t.same(
      onlyB.methods.map((m) => [m.method, m.calls]),
      [
        ['getSlot', 8],
        ['sendTransaction', 1],
      ],
    );
  });

  t.test(`${kind}: compaction rolls old minutes into hours and keeps every total; retention deletes`, skipOf(kind), async (t) => {
    const s = await open(t, kind);
    const { account, stack, tokenId } = await fixture(s);
    const rows: UsageRow[] = [];
    // Every 7 minutes over the last 3 days: some within 24 h, most older.
    let i = 0;
    for (let at = NOW - 3 * DAY_MS; at <= NOW; at += 7 * MINUTE_MS) {
      const method = i++ % 3 === 0 ? 'getBalance' : 'getSlot';
      rows.push(row(tokenId, method, at, 2, { errors: 1, histogram: hist(method === 'getSlot' ? [2000, 4000] : [i * 100]) }));
    }
    await s.addUsage(rows);
    const total = rows.reduce((a, r) => a + r.calls, 0);
    const before7 = await s.analytics(account.id, stack.id, '7d', NOW);
    const before24 = await s.analytics(account.id, stack.id, '24h', NOW);
    const beforeO = await s.overview(account.id, stack.id, NOW);
    t.equal(
      before7.series.reduce((a, x) => a + x.calls, 0),
      total,
    );

    await s.compactUsage(NOW, 30);
    const db = (s as SqlStore).db;
    const cutoff = Math.floor((NOW - DAY_MS) / HOUR_MS) * HOUR_MS;
    const oldMinutes = await db.selectFrom('usage_minute').select('start_ms').where('start_ms', '<', cutoff).execute();
    t.equal(oldMinutes.length, 0, 'no minute rows older than the hour 24 h ago');
    const hours = await db.selectFrom('usage_hour').selectAll().execute();
    t.ok(hours.length > 40, `hour rows made (${hours.length})`);
    // Hours are rolled up as usage is written, so the last 24 h have hour rows too.
    t.ok(
      hours.every((h) => Number(h.start_ms) % HOUR_MS === 0),
      'whole hours only',
    );

    const after7 = await s.analytics(account.id, stack.id, '7d', NOW);
    t.same(after7, before7, '7 d analytics identical (series, calls, errors, percentiles)');
    t.same(await s.analytics(account.id, stack.id, '24h', NOW), before24, '24 h analytics identical');
    t.same(await s.overview(account.id, stack.id, NOW), beforeO, 'overview identical');

    await s.compactUsage(NOW, 30);
    t.same(await s.analytics(account.id, stack.id, '7d', NOW), before7, 'compacting again changes nothing');

    // Usage arriving late for an old minute lands in minutes and is rolled in next time.
    const lateRow = row(tokenId, 'getSlot', NOW - 2 * DAY_MS, 5);
    await s.addUsage([lateRow]);
    await s.compactUsage(NOW, 30);
    const late = await s.analytics(account.id, stack.id, '7d', NOW);
    t.equal(
      late.series.reduce((a, x) => a + x.calls, 0),
      total + 5,
      'late rows merged into their hour',
    );

    await s.compactUsage(NOW, 2);
    const kept = await db.selectFrom('usage_hour').select('start_ms').execute();
    const keepFrom = Math.floor((NOW - 2 * DAY_MS) / HOUR_MS) * HOUR_MS;
    t.ok(kept.length > 0 && kept.every((h) => Number(h.start_ms) >= keepFrom), 'retention: hours older than 2 days deleted');
    const after = await s.analytics(account.id, stack.id, '7d', NOW);
    const expected = [...rows, lateRow].filter((r) => r.minute >= keepFrom).reduce((a, r) => a + r.calls, 0);
    t.equal(
      after.series.reduce((a, x) => a + x.calls, 0),
      expected,
      'what remains is exactly the rows inside the retention',
    );
  });
}

t.test('file store: WAL mode; the plain token is never written; data survives a reopen', async (t) => {
  const dir = tmp(t);
  const url = `sqlite://${join(dir, 'jg.db')}`;
  const s = await openStore(url);
  const { account, stack, token, tokenId } = await fixture(s);
  const more = await s.createToken(account.id, stack.id, 'more');
  await s.setTokenActive(account.id, more.record.id, false);
  await s.touchTokens(new Map([[tokenId, NOW]]));
  const mode = await sql<{ journal_mode: string }>`pragma journal_mode`.execute((s as SqlStore).db);
  t.equal(mode.rows[0]?.journal_mode, 'wal', 'WAL mode');
  await s.close();
  const files = readdirSync(dir);
  t.ok(files.includes('jg.db'), `files: ${files.join(', ')}`);
  let bytes = Buffer.alloc(0);
  for (const f of files) bytes = Buffer.concat([bytes, readFileSync(join(dir, f))]);
  for (const plain of [token, more.token]) {
    t.equal(bytes.indexOf(plain), -1, 'the token is not in the database files');
    t.equal(bytes.indexOf(plain.slice(8)), -1, 'not even its secret part');
    t.not(bytes.indexOf(sha256Hex(plain)), -1, 'its hash is');
  }
  const again = await openStore(url);
  t.teardown(() => again.close());
  t.equal((await again.tokenById(account.id, tokenId))?.lastUsedAt, NOW, 'reopened: data kept, migrations not rerun');
  t.equal((await again.listTokens(account.id, stack.id)).length, 2);
});

t.test('usage meter: latency per cell, drained encoded, cells reused then dropped when idle', async (t) => {
  const m = new UsageMeter();
  m.record('t1', 'getSlot', 1, 0, 10, 20, 1500);
  m.record('t1', 'getSlot', 1, 1, 10, 20, 2500);
  m.record('t1', '(batch)', 0, 0, 5, 5);
  const first = m.drain();
  t.equal(first.length, 2);
  const slot = first.find((c) => c.method === 'getSlot')!;
  t.same([slot.calls, slot.errors, slot.bytesIn, slot.bytesOut], [2, 1, 20, 40]);
  const h = LatencyHistogram.decode(slot.histogram!);
  t.equal(h.count, 2);
  t.ok(Math.abs(h.percentile(50) - 1500) < 20, `p50 ${h.percentile(50)}`);
  t.equal(first.find((c) => c.method === '(batch)')!.histogram, null, 'no latency recorded: null');
  t.same(m.drain(), [], 'nothing new: nothing drained');
  m.record('t1', 'getSlot', 1, 0, 1, 1, 100);
  const second = m.drain();
  t.equal(LatencyHistogram.decode(second[0]!.histogram!).count, 1, 'the reused histogram was reset by the drain');
  t.same(m.totals('t1'), { calls: 0, errors: 0, bytesIn: 0, bytesOut: 0 });
});

t.test('usage meter: at most 256 methods per token, the rest as (other); room again once cells go idle', async (t) => {
  const m = new UsageMeter();
  for (let i = 0; i < 300; i++) m.record('t1', `m${i}`, 1, 0, 0, 0);
  m.record('t2', 'm299', 1, 0, 0, 0);
  const cells = m.drain();
  t.equal(cells.filter((c) => c.tokenId === 't1').length, 257, '256 names plus (other)');
  t.equal(cells.find((c) => c.tokenId === 't1' && c.method === '(other)')?.calls, 44);
  t.equal(cells.find((c) => c.tokenId === 't2')?.method, 'm299', 'another token has its own 256');
  t.same(m.drain(), [], 'idle: every cell dropped');
  m.record('t1', 'm299', 1, 0, 0, 0);
  t.same(
    m.drain().map((c) => c.method),
    ['m299'],
    'a new name is counted under its own name again',
  );
  t.same(m.totals('t1'), { calls: 0, errors: 0, bytesIn: 0, bytesOut: 0 });
  t.same(m.totals('nobody'), { calls: 0, errors: 0, bytesIn: 0, bytesOut: 0 });
});

t.test('usage flush: writes each interval, retries after failures, bounded, stop() flushes the rest', async (t) => {
  const s = await openStore('sqlite://:memory:');
  t.teardown(() => s.close());
  const { account, stack, tokenId } = await fixture(s);
  const meter = new UsageMeter();
  let failWrites = 0;
  const flaky = new Proxy(s, {
    get(target, prop, recv) {
      if (prop === 'addUsage') {
        return (rows: UsageRow[]) => (failWrites-- > 0 ? Promise.reject(new Error('disk on fire')) : target.addUsage(rows));
      }
      const v = Reflect.get(target, prop, recv);
      return typeof v === 'function' ? v.bind(target) : v;
    },
  });
  const logs: string[] = [];
  const log = silentLogger();
  log.error = ((_o: unknown, msg?: string) => void logs.push(String(msg))) as typeof log.error;
  const f = startUsageFlush(meter, flaky, { log, intervalMs: 60_000, compactEveryMs: 0, maxPendingRows: 3 });
  const total = async (): Promise<number> => (await s.overview(account.id, stack.id, Date.now())).calls24h;

  meter.record(tokenId, 'getSlot', 2, 0, 1, 1, 1000);
  await f.flush();
  t.equal(await total(), 2, 'flushed');
  t.ok((await s.tokenById(account.id, tokenId))!.lastUsedAt! > Date.now() - 10_000, 'last use set');

  failWrites = 2;
  meter.record(tokenId, 'getSlot', 3, 0, 1, 1, 1000);
  await f.flush();
  t.equal(f.pendingRows, 1, 'kept after a failed write');
  meter.record(tokenId, 'getBalance', 4, 0, 1, 1, 1000);
  await f.flush();
  t.equal(f.pendingRows, 2, 'still kept');
  t.equal(await total(), 2);
  meter.record(tokenId, 'getHealth', 5, 0, 1, 1);
  await f.flush();
  t.equal(f.pendingRows, 0, 'written once the store is back');
  t.equal(await total(), 14, 'nothing lost');
  t.equal(logs.filter((l) => /flush failed/.test(l)).length, 1, 'one log line per failure streak');

  failWrites = 100;
  for (const method of ['a', 'b', 'c', 'd', 'e']) {
    meter.record(tokenId, method, 1, 0, 0, 0);
    await f.flush();
  }
  t.equal(f.pendingRows, 3, 'bounded');
  t.ok(
    logs.some((l) => /oldest usage rows dropped/.test(l)),
    'drops logged',
  );
  failWrites = 0;
  meter.record(tokenId, 'getSlot', 100, 0, 0, 0);
  await f.stop();
  t.equal(await total(), 14 + 3 + 100, 'stop() writes the kept rows and what the meter still held');
  t.same(meter.drain(), []);
});
