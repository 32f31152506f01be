// The SQL store on PostgreSQL (docs/accounts.md "PostgreSQL store"), where several gateways share one
// database: migrations run under an advisory lock, so instances starting together on an empty
// database build the schema once; compaction takes a try-lock and is skipped while another
// instance compacts; every token or stack change is announced with NOTIFY, and
// onTokensChanged() listens for them (ChangeListener), so token syncs reload at once.

import { sql, type Kysely, type Transaction } from 'kysely';
import type pg from 'pg';
import { migrateToLatest } from '../migrations.js';
import type { Database } from '../schema.js';
import { SqlStore } from '../sql.js';
import { addUsage, compactUsage } from '../sql/usage.js';
import type { ApiToken, Stack, UsageRow } from '../types.js';
import { ChangeListener } from './listener.js';

/** The NOTIFY channel of token and stack changes. */
export const TOKENS_CHANNEL = 'jumpgate_tokens';

/** Advisory lock keys: (JUMPGATE_LOCKS, what). The two-key form never meets Kysely's one-key lock. */
export const JUMPGATE_LOCKS = 0x6a67;
export const MIGRATION_LOCK = 1;
export const COMPACTION_LOCK = 2;

export class PgStore extends SqlStore {
  private readonly listener: ChangeListener;

  constructor(db: Kysely<Database>, listenConfig: pg.ClientConfig) {
    super(db);
    this.listener = new ChangeListener(listenConfig, TOKENS_CHANNEL);
  }

  /** Waits for any other instance's migrations, then runs what is still pending, all on one connection that holds the lock. */
  override async migrate(): Promise<void> {
    await this.db.connection().execute(async (conn) => {
      await sql`select pg_advisory_lock(${sql.lit(JUMPGATE_LOCKS)}, ${sql.lit(MIGRATION_LOCK)})`.execute(conn);
      try {
        await migrateToLatest(conn);
      } finally {
        await sql`select pg_advisory_unlock(${sql.lit(JUMPGATE_LOCKS)}, ${sql.lit(MIGRATION_LOCK)})`.execute(conn);
      }
    });
  }

  override async close(): Promise<void> {
    await this.listener.close();
    await super.close();
  }

  /** Rows taken in key order (inserted when new, else locked) before they are updated, so flushes of several instances queue instead of deadlocking. */
  override async addUsage(rows: UsageRow[]): Promise<void> {
    await addUsage(this.db, rows, true);
  }

  /** Skipped while another instance compacts (its transaction holds the lock); the next interval tries again. */
  override async compactUsage(now: number, retentionDays: number): Promise<void> {
    await compactUsage(this.db, now, retentionDays, tryCompactionLock);
  }

  onTokensChanged(cb: () => void): () => void {
    return this.listener.subscribe(cb);
  }

  /** True while the LISTEN connection is up (tests). */
  get listening(): boolean {
    return this.listener.listening;
  }

  // Every change that can bump the token version is announced once it is committed. A failed
  // NOTIFY loses nothing: the token syncs' polling still sees the new version.

  override async updateStack(
    accountId: string,
    stackId: string,
    patch: { name?: string; description?: string | null; disabled?: boolean },
  ): Promise<Stack | null> {
    const r = await super.updateStack(accountId, stackId, patch);
    if (r !== null && patch.disabled !== undefined) await this.notifyTokens();
    return r;
  }

  override async createToken(accountId: string, stackId: string, label: string): Promise<{ token: string; record: ApiToken }> {
    const r = await super.createToken(accountId, stackId, label);
    await this.notifyTokens();
    return r;
  }

  override async setTokenActive(accountId: string, tokenId: string, active: boolean): Promise<ApiToken | null> {
    const r = await super.setTokenActive(accountId, tokenId, active);
    if (r !== null) await this.notifyTokens();
    return r;
  }

  override async deleteToken(accountId: string, tokenId: string): Promise<boolean> {
    const r = await super.deleteToken(accountId, tokenId);
    if (r) await this.notifyTokens();
    return r;
  }

  private async notifyTokens(): Promise<void> {
    await sql`select pg_notify(${TOKENS_CHANNEL}, '')`.execute(this.db).catch(() => {});
  }
}

async function tryCompactionLock(trx: Transaction<Database>): Promise<boolean> {
  const r = await sql<{ free: boolean }>`select pg_try_advisory_xact_lock(${sql.lit(JUMPGATE_LOCKS)}, ${sql.lit(COMPACTION_LOCK)}) as free`.execute(trx);
  return r.rows[0]?.free === true;
}
