// The Store (types.ts) over Kysely. Every query goes through Kysely's builder, with no
// dialect-specific SQL, so the SQLite default and PostgreSQL run the same code: the dialect is
// chosen in open.ts. Values read back are coerced with Number() (PostgreSQL returns bigint
// columns as strings). Every account-side method filters on the account id, so one account can
// never read or change another's stacks, tokens or usage.

import { createHash, randomBytes } from 'node:crypto';
import type { Kysely, Selectable, Transaction } from 'kysely';
import { LatencyHistogram } from '../metrics/histogram.js';
import { migrateToLatest, TOKEN_VERSION_KEY, type ApiTokensTable, type Database, type StacksTable, type UsageTable } from './migrations.js';
import {
  StoreError,
  type Account,
  type Analytics,
  type AnalyticsWindow,
  type ApiToken,
  type MethodStats,
  type Overview,
  type Session,
  type Stack,
  type FullStore,
  type TokenForGateway,
  type UsageRow,
} from './types.js';

export const MINUTE_MS = 60_000;
export const HOUR_MS = 3_600_000;
export const DAY_MS = 86_400_000;

/** Stack names and token labels: at most this many characters. */
export const MAX_NAME_LENGTH = 64;
export const MAX_DESCRIPTION_LENGTH = 500;

/** Bucket size and count of each analytics window (README "Accounts, tokens and the console": minute for 1 h, hour for 24 h, 6 h for 7 d). */
const WINDOWS: Record<AnalyticsWindow, { bucket: number; count: number }> = {
  '1h': { bucket: MINUTE_MS, count: 60 },
  '24h': { bucket: HOUR_MS, count: 24 },
  '7d': { bucket: 6 * HOUR_MS, count: 28 },
};

type Db = Kysely<Database> | Transaction<Database>;
type UsageTableName = 'usage_minute' | 'usage_hour';

const floorTo = (t: number, unit: number): number => Math.floor(t / unit) * unit;

function newId(kind: string): string {
  return kind + '_' + randomBytes(12).toString('base64url');
}

/** A new API token: 'jg_' + 24 random bytes (192 bits) in base64url, safe in a URL path. */
export function generateToken(): string {
  return 'jg_' + randomBytes(24).toString('base64url');
}

export function sha256Hex(s: string): string {
  return createHash('sha256').update(s).digest('hex');
}

/** Unique-constraint violation, as better-sqlite3 and pg report it. */
function isUniqueViolation(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return code === 'SQLITE_CONSTRAINT_UNIQUE' || code === 'SQLITE_CONSTRAINT_PRIMARYKEY' || code === '23505';
}

function normalizeEmail(email: string): string {
  return email.trim().toLowerCase();
}

function checkName(name: string, what: string): string {
  const n = name.trim();
  if (n === '') throw new StoreError('invalid', `${what} is required`);
  if (n.length > MAX_NAME_LENGTH) throw new StoreError('invalid', `${what} must be at most ${MAX_NAME_LENGTH} characters`);
  return n;
}

function checkDescription(d: string | null): string | null {
  if (d === null) return null;
  const s = d.trim();
  if (s.length > MAX_DESCRIPTION_LENGTH) throw new StoreError('invalid', `description must be at most ${MAX_DESCRIPTION_LENGTH} characters`);
  return s === '' ? null : s;
}

function toStack(r: Selectable<StacksTable>): Stack {
  return {
    id: r.id,
    accountId: r.account_id,
    name: r.name,
    description: r.description,
    disabled: Number(r.disabled) === 1,
    createdAt: Number(r.created_at),
  };
}

function toToken(r: Selectable<ApiTokensTable>): ApiToken {
  return {
    id: r.id,
    accountId: r.account_id,
    stackId: r.stack_id,
    prefix: r.prefix,
    label: r.label,
    active: Number(r.active) === 1,
    createdAt: Number(r.created_at),
    lastUsedAt: r.last_used_at === null ? null : Number(r.last_used_at),
  };
}

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

export class SqlStore implements FullStore {
  constructor(readonly db: Kysely<Database>) {}

  async migrate(): Promise<void> {
    await migrateToLatest(this.db);
  }

  async close(): Promise<void> {
    await this.db.destroy();
  }

  // ---- accounts and sessions ----------------------------------------------------------------

  async createAccount(email: string, passwordHash: string): Promise<Account> {
    const e = normalizeEmail(email);
    if (e === '') throw new StoreError('invalid', 'email is required');
    const account: Account = { id: newId('acc'), email: e, passwordHash, createdAt: Date.now() };
    if ((await this.accountByEmail(e)) !== null) throw new StoreError('conflict', 'an account with this email exists');
    try {
      await this.db.insertInto('accounts').values({ id: account.id, email: e, password_hash: passwordHash, created_at: account.createdAt }).execute();
    } catch (err) {
      if (isUniqueViolation(err)) throw new StoreError('conflict', 'an account with this email exists');
      throw err;
    }
    return account;
  }

  private async accountWhere(col: 'email' | 'id', value: string): Promise<Account | null> {
    const r = await this.db.selectFrom('accounts').selectAll().where(col, '=', value).executeTakeFirst();
    return r === undefined ? null : { id: r.id, email: r.email, passwordHash: r.password_hash, createdAt: Number(r.created_at) };
  }

  accountByEmail(email: string): Promise<Account | null> {
    return this.accountWhere('email', normalizeEmail(email));
  }

  accountById(id: string): Promise<Account | null> {
    return this.accountWhere('id', id);
  }

  async setPasswordHash(accountId: string, passwordHash: string): Promise<boolean> {
    const r = await this.db.updateTable('accounts').set({ password_hash: passwordHash }).where('id', '=', accountId).executeTakeFirst();
    return Number(r.numUpdatedRows) > 0;
  }

  async listAccounts(): Promise<Account[]> {
    const rows = await this.db.selectFrom('accounts').selectAll().orderBy('created_at').orderBy('id').execute();
    return rows.map((r) => ({ id: r.id, email: r.email, passwordHash: r.password_hash, createdAt: Number(r.created_at) }));
  }

  async createSession(accountId: string, ttlMs: number): Promise<Session> {
    const now = Date.now();
    const s: Session = { id: randomBytes(32).toString('base64url'), accountId, csrfToken: randomBytes(32).toString('base64url'), createdAt: now, expiresAt: now + ttlMs };
    await this.db
      .insertInto('sessions')
      .values({ id: sha256Hex(s.id), account_id: accountId, csrf_token: s.csrfToken, created_at: s.createdAt, expires_at: s.expiresAt })
      .execute();
    return s;
  }

  async sessionById(id: string): Promise<Session | null> {
    const r = await this.db.selectFrom('sessions').selectAll().where('id', '=', sha256Hex(id)).where('expires_at', '>', Date.now()).executeTakeFirst();
    if (r === undefined) return null;
    return { id, accountId: r.account_id, csrfToken: r.csrf_token, createdAt: Number(r.created_at), expiresAt: Number(r.expires_at) };
  }

  async deleteSession(id: string): Promise<void> {
    await this.db.deleteFrom('sessions').where('id', '=', sha256Hex(id)).execute();
  }

  // ---- stacks -------------------------------------------------------------------------------

  async createStack(accountId: string, name: string, description: string | null): Promise<Stack> {
    const stack: Stack = { id: newId('stk'), accountId, name: checkName(name, 'name'), description: checkDescription(description), disabled: false, createdAt: Date.now() };
    if ((await this.stackByName(accountId, stack.name)) !== null) throw new StoreError('conflict', `a stack named "${stack.name}" exists`);
    try {
      await this.db
        .insertInto('stacks')
        .values({ id: stack.id, account_id: accountId, name: stack.name, description: stack.description, disabled: 0, created_at: stack.createdAt })
        .execute();
    } catch (err) {
      if (isUniqueViolation(err)) throw new StoreError('conflict', `a stack named "${stack.name}" exists`);
      throw err;
    }
    return stack;
  }

  async listStacks(accountId: string): Promise<Stack[]> {
    const rows = await this.db.selectFrom('stacks').selectAll().where('account_id', '=', accountId).orderBy('created_at').orderBy('id').execute();
    return rows.map(toStack);
  }

  async stackById(accountId: string, stackId: string): Promise<Stack | null> {
    const r = await this.db.selectFrom('stacks').selectAll().where('account_id', '=', accountId).where('id', '=', stackId).executeTakeFirst();
    return r === undefined ? null : toStack(r);
  }

  async stackByName(accountId: string, name: string): Promise<Stack | null> {
    const r = await this.db.selectFrom('stacks').selectAll().where('account_id', '=', accountId).where('name', '=', name.trim()).executeTakeFirst();
    return r === undefined ? null : toStack(r);
  }

  async updateStack(accountId: string, stackId: string, patch: { name?: string; description?: string | null; disabled?: boolean }): Promise<Stack | null> {
    const set: { name?: string; description?: string | null; disabled?: number } = {};
    if (patch.name !== undefined) set.name = checkName(patch.name, 'name');
    if (patch.description !== undefined) set.description = checkDescription(patch.description);
    if (patch.disabled !== undefined) set.disabled = patch.disabled ? 1 : 0;
    try {
      return await this.db.transaction().execute(async (trx) => {
        const cur = await trx.selectFrom('stacks').selectAll().where('account_id', '=', accountId).where('id', '=', stackId).executeTakeFirst();
        if (cur === undefined) return null;
        if (set.name !== undefined && set.name !== cur.name) {
          const dup = await trx.selectFrom('stacks').select('id').where('account_id', '=', accountId).where('name', '=', set.name).executeTakeFirst();
          if (dup !== undefined) throw new StoreError('conflict', `a stack named "${set.name}" exists`);
        }
        if (Object.keys(set).length > 0) {
          await trx.updateTable('stacks').set(set).where('account_id', '=', accountId).where('id', '=', stackId).execute();
          if (set.disabled !== undefined && set.disabled !== Number(cur.disabled)) await this.bumpVersion(trx);
        }
        return toStack({ ...cur, ...set });
      });
    } catch (err) {
      if (isUniqueViolation(err)) throw new StoreError('conflict', `a stack named "${set.name ?? ''}" exists`);
      throw err;
    }
  }

  // ---- tokens -------------------------------------------------------------------------------

  private async bumpVersion(trx: Db): Promise<void> {
    await trx
      .updateTable('meta')
      .set((eb) => ({ value: eb('value', '+', 1) }))
      .where('key', '=', TOKEN_VERSION_KEY)
      .execute();
  }

  async createToken(accountId: string, stackId: string, label: string): Promise<{ token: string; record: ApiToken }> {
    const l = label.trim();
    if (l.length > MAX_NAME_LENGTH) throw new StoreError('invalid', `label must be at most ${MAX_NAME_LENGTH} characters`);
    const token = generateToken();
    const row: Selectable<ApiTokensTable> = {
      id: newId('tok'),
      account_id: accountId,
      stack_id: stackId,
      hash: sha256Hex(token),
      prefix: token.slice(0, 8),
      label: l,
      active: 1,
      created_at: Date.now(),
      last_used_at: null,
      deleted_at: null,
    };
    await this.db.transaction().execute(async (trx) => {
      const stack = await trx.selectFrom('stacks').select('id').where('account_id', '=', accountId).where('id', '=', stackId).executeTakeFirst();
      if (stack === undefined) throw new StoreError('not_found', 'no such stack');
      await trx.insertInto('api_tokens').values(row).execute();
      await this.bumpVersion(trx);
    });
    return { token, record: toToken(row) };
  }

  async listTokens(accountId: string, stackId: string): Promise<ApiToken[]> {
    const rows = await this.db
      .selectFrom('api_tokens')
      .selectAll()
      .where('account_id', '=', accountId)
      .where('stack_id', '=', stackId)
      .where('deleted_at', 'is', null)
      .orderBy('created_at')
      .orderBy('id')
      .execute();
    return rows.map(toToken);
  }

  async tokenById(accountId: string, tokenId: string): Promise<ApiToken | null> {
    const r = await this.db
      .selectFrom('api_tokens')
      .selectAll()
      .where('account_id', '=', accountId)
      .where('id', '=', tokenId)
      .where('deleted_at', 'is', null)
      .executeTakeFirst();
    return r === undefined ? null : toToken(r);
  }

  async setTokenActive(accountId: string, tokenId: string, active: boolean): Promise<ApiToken | null> {
    return this.db.transaction().execute(async (trx) => {
      const r = await trx
        .selectFrom('api_tokens')
        .selectAll()
        .where('account_id', '=', accountId)
        .where('id', '=', tokenId)
        .where('deleted_at', 'is', null)
        .executeTakeFirst();
      if (r === undefined) return null;
      const value = active ? 1 : 0;
      if (Number(r.active) !== value) {
        await trx.updateTable('api_tokens').set({ active: value }).where('account_id', '=', accountId).where('id', '=', tokenId).execute();
        await this.bumpVersion(trx);
      }
      return toToken({ ...r, active: value });
    });
  }

  /** The token stops authenticating at once (401); the row stays so the stack's usage history keeps its calls. */
  async deleteToken(accountId: string, tokenId: string): Promise<boolean> {
    return this.db.transaction().execute(async (trx) => {
      const res = await trx
        .updateTable('api_tokens')
        .set({ deleted_at: Date.now(), active: 0 })
        .where('account_id', '=', accountId)
        .where('id', '=', tokenId)
        .where('deleted_at', 'is', null)
        .executeTakeFirst();
      if (Number(res.numUpdatedRows) === 0) return false;
      await this.bumpVersion(trx);
      return true;
    });
  }

  async tokensForGateway(): Promise<TokenForGateway[]> {
    const rows = await this.db
      .selectFrom('api_tokens')
      .innerJoin('stacks', 'stacks.id', 'api_tokens.stack_id')
      .select(['api_tokens.id as id', 'api_tokens.hash as hash', 'api_tokens.prefix as prefix', 'api_tokens.stack_id as stackId', 'api_tokens.active as active', 'stacks.disabled as disabled'])
      .where('api_tokens.deleted_at', 'is', null)
      .execute();
    return rows.map((r) => ({
      id: r.id,
      hash: Buffer.from(r.hash, 'hex'),
      prefix: r.prefix,
      stackId: r.stackId,
      active: Number(r.active) === 1 && Number(r.disabled) !== 1,
    }));
  }

  async tokenVersion(): Promise<number> {
    const r = await this.db.selectFrom('meta').select('value').where('key', '=', TOKEN_VERSION_KEY).executeTakeFirst();
    return r === undefined ? 0 : Number(r.value);
  }

  async touchTokens(lastUsed: Map<string, number>): Promise<void> {
    if (lastUsed.size === 0) return;
    await this.db.transaction().execute(async (trx) => {
      for (const [id, at] of lastUsed) {
        await trx
          .updateTable('api_tokens')
          .set({ last_used_at: at })
          .where('id', '=', id)
          .where((eb) => eb.or([eb('last_used_at', 'is', null), eb('last_used_at', '<', at)]))
          .execute();
      }
    });
  }

  // ---- usage --------------------------------------------------------------------------------

  async addUsage(rows: UsageRow[]): Promise<void> {
    if (rows.length === 0) return;
    const merged = mergeRows(rows.map(toUsageTable));
    await this.db.transaction().execute(async (trx) => {
      for (const r of merged) await this.mergeInto(trx, 'usage_minute', r);
    });
  }

  /**
   * Adds one row into a usage table: sums in SQL (atomic), the histogram read-merge-written
   * with an optimistic check, so concurrent writers (several gateways on one PostgreSQL)
   * never lose counts.
   */
  private async mergeInto(trx: Db, table: UsageTableName, r: Selectable<UsageTable>): Promise<void> {
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

  private async requireStack(accountId: string, stackId: string): Promise<void> {
    if ((await this.stackById(accountId, stackId)) === null) throw new StoreError('not_found', 'no such stack');
  }

  /** Usage rows (minute and hour tables together) of a stack's tokens with from <= start <= to. */
  private async stackUsage(
    accountId: string,
    stackId: string,
    from: number,
    to: number,
    opts: { tokenId?: string; histogram: boolean },
  ): Promise<{ method: string; start: number; calls: number; errors: number; bytes: number; histogram: string | null }[]> {
    const out: { method: string; start: number; calls: number; errors: number; bytes: number; histogram: string | null }[] = [];
    for (const table of ['usage_minute', 'usage_hour'] as const) {
      const t = table as 'usage_minute';
      let q = this.db
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

  async overview(accountId: string, stackId: string, now: number): Promise<Overview> {
    await this.requireStack(accountId, stackId);
    const firstDay = floorTo(now, DAY_MS) - 6 * DAY_MS;
    const since24h = now - DAY_MS;
    const daily = Array.from({ length: 7 }, (_, i) => ({ day: firstDay + i * DAY_MS, calls: 0 }));
    let calls24h = 0;
    let bytes24h = 0;
    for (const r of await this.stackUsage(accountId, stackId, Math.min(firstDay, since24h), now, { histogram: false })) {
      if (r.start >= since24h) {
        calls24h += r.calls;
        bytes24h += r.bytes;
      }
      const i = Math.floor((r.start - firstDay) / DAY_MS);
      if (i >= 0 && i < 7) daily[i]!.calls += r.calls;
    }
    const active = await this.db
      .selectFrom('api_tokens')
      .select((eb) => eb.fn.countAll().as('n'))
      .where('account_id', '=', accountId)
      .where('stack_id', '=', stackId)
      .where('active', '=', 1)
      .where('deleted_at', 'is', null)
      .executeTakeFirst();
    return { calls24h, bytes24h, activeTokens: Number(active?.n ?? 0), daily };
  }

  async analytics(accountId: string, stackId: string, window: AnalyticsWindow, now: number, tokenId?: string): Promise<Analytics> {
    await this.requireStack(accountId, stackId);
    const w = WINDOWS[window];
    if (w === undefined) throw new StoreError('invalid', `window must be one of ${Object.keys(WINDOWS).join(', ')}`);
    const from = floorTo(now, w.bucket) - (w.count - 1) * w.bucket;
    const series = Array.from({ length: w.count }, (_, i) => ({ t: from + i * w.bucket, calls: 0, errors: 0 }));
    const methods = new Map<string, { calls: number; errors: number; hist: LatencyHistogram | null }>();
    for (const r of await this.stackUsage(accountId, stackId, from, now, { tokenId, histogram: true })) {
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

  async compactUsage(now: number, retentionDays: number): Promise<void> {
    // Minutes before the start of the hour 24 h ago become hours, so an hour row is always
    // whole: windows that start on an hour boundary add minutes and hours without overlap.
    const cutoff = floorTo(now - DAY_MS, HOUR_MS);
    const keepFrom = now - retentionDays * DAY_MS;
    await this.db.transaction().execute(async (trx) => {
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
      for (const r of mergeRows(hours)) await this.mergeInto(trx, 'usage_hour', r);
      await trx.deleteFrom('usage_hour').where('start_ms', '<', floorTo(keepFrom, HOUR_MS)).execute();
      await trx.deleteFrom('usage_minute').where('start_ms', '<', keepFrom).execute();
      await trx.deleteFrom('sessions').where('expires_at', '<=', now).execute();
    });
  }
}
