// The Store (types.ts) over Kysely. Every query goes through Kysely's builder, with no
// dialect-specific SQL, so the SQLite default and PostgreSQL run the same code: the dialect is
// chosen in open.ts, and postgres/store.ts adds PostgreSQL's locks and notifications. Values
// read back are coerced with Number() (pg returns bigint columns as strings unless told).
// Every account-side method filters on the account id, so one account can never read or
// change another's stacks, tokens or usage.
//
// The queries live by concern in sql/ (accounts, sessions, stacks and tokens, usage, analytics)
// as functions over the Kysely handle; this class only binds them to one database.

import type { Kysely } from 'kysely';
import { migrateToLatest } from './migrations.js';
import type { Database } from './schema.js';
import * as accounts from './sql/accounts.js';
import * as analytics from './sql/analytics.js';
import * as landing from './sql/landing.js';
import * as sessions from './sql/sessions.js';
import * as stacksTokens from './sql/stacks-tokens.js';
import * as usage from './sql/usage.js';
import type {
  Account,
  Analytics,
  AnalyticsWindow,
  ApiToken,
  FullStore,
  LandingRow,
  LandingTotals,
  Overview,
  Session,
  Stack,
  TokenForGateway,
  TokenNodeLandingTotals,
  UsageRow,
} from './types.js';

export class SqlStore implements FullStore {
  constructor(readonly db: Kysely<Database>) {}

  async migrate(): Promise<void> {
    await migrateToLatest(this.db);
  }

  /** Migrates, or closes the store and rethrows: a store that fails to open leaves no connection behind. */
  async migrateOrClose(): Promise<this> {
    try {
      await this.migrate();
    } catch (err) {
      await this.close();
      throw err;
    }
    return this;
  }

  async close(): Promise<void> {
    await this.db.destroy();
  }

  // ---- accounts and sessions ----------------------------------------------------------------

  createAccount(email: string, passwordHash: string): Promise<Account> {
    return accounts.createAccount(this.db, email, passwordHash);
  }

  accountByEmail(email: string): Promise<Account | null> {
    return accounts.accountByEmail(this.db, email);
  }

  accountById(id: string): Promise<Account | null> {
    return accounts.accountById(this.db, id);
  }

  setPasswordHash(accountId: string, passwordHash: string): Promise<boolean> {
    return accounts.setPasswordHash(this.db, accountId, passwordHash);
  }

  listAccounts(): Promise<Account[]> {
    return accounts.listAccounts(this.db);
  }

  createSession(accountId: string, ttlMs: number): Promise<Session> {
    return sessions.createSession(this.db, accountId, ttlMs);
  }

  sessionById(id: string): Promise<Session | null> {
    return sessions.sessionById(this.db, id);
  }

  deleteSession(id: string): Promise<void> {
    return sessions.deleteSession(this.db, id);
  }

  // ---- stacks and tokens --------------------------------------------------------------------

  createStack(accountId: string, name: string, description: string | null): Promise<Stack> {
    return stacksTokens.createStack(this.db, accountId, name, description);
  }

  listStacks(accountId: string): Promise<Stack[]> {
    return stacksTokens.listStacks(this.db, accountId);
  }

  stackById(accountId: string, stackId: string): Promise<Stack | null> {
    return stacksTokens.stackById(this.db, accountId, stackId);
  }

  stackByName(accountId: string, name: string): Promise<Stack | null> {
    return stacksTokens.stackByName(this.db, accountId, name);
  }

  updateStack(accountId: string, stackId: string, patch: { name?: string; description?: string | null; disabled?: boolean }): Promise<Stack | null> {
    return stacksTokens.updateStack(this.db, accountId, stackId, patch);
  }

  createToken(accountId: string, stackId: string, label: string): Promise<{ token: string; record: ApiToken }> {
    return stacksTokens.createToken(this.db, accountId, stackId, label);
  }

  listTokens(accountId: string, stackId: string): Promise<ApiToken[]> {
    return stacksTokens.listTokens(this.db, accountId, stackId);
  }

  tokenById(accountId: string, tokenId: string): Promise<ApiToken | null> {
    return stacksTokens.tokenById(this.db, accountId, tokenId);
  }

  setTokenActive(accountId: string, tokenId: string, active: boolean): Promise<ApiToken | null> {
    return stacksTokens.setTokenActive(this.db, accountId, tokenId, active);
  }

  deleteToken(accountId: string, tokenId: string): Promise<boolean> {
    return stacksTokens.deleteToken(this.db, accountId, tokenId);
  }

  tokensForGateway(): Promise<TokenForGateway[]> {
    return stacksTokens.tokensForGateway(this.db);
  }

  tokenVersion(): Promise<number> {
    return stacksTokens.tokenVersion(this.db);
  }

  touchTokens(lastUsed: Map<string, number>): Promise<void> {
    return stacksTokens.touchTokens(this.db, lastUsed);
  }

  // ---- usage and analytics ------------------------------------------------------------------

  addUsage(rows: UsageRow[]): Promise<void> {
    return usage.addUsage(this.db, rows);
  }

  async compactUsage(now: number, retentionDays: number): Promise<void> {
    await usage.compactUsage(this.db, now, retentionDays);
  }

  overview(accountId: string, stackId: string, now: number): Promise<Overview> {
    return analytics.overview(this.db, accountId, stackId, now);
  }

  analytics(accountId: string, stackId: string, window: AnalyticsWindow, now: number, tokenId?: string): Promise<Analytics> {
    return analytics.analytics(this.db, accountId, stackId, window, now, tokenId);
  }

  // ---- transaction landing (docs/landing.md "Several instances") ---------------------------

  addLanding(rows: LandingRow[]): Promise<void> {
    return landing.addLanding(this.db, rows);
  }

  landingByToken(tokenIds: readonly string[], sinceMs: number): Promise<LandingTotals[]> {
    return landing.landingTotals(this.db, 'token', tokenIds, sinceMs);
  }

  landingByNode(sinceMs: number): Promise<LandingTotals[]> {
    return landing.landingTotals(this.db, 'node', null, sinceMs);
  }

  landingByTokenNode(tokenIds: readonly string[], sinceMs: number): Promise<TokenNodeLandingTotals[]> {
    return landing.landingByTokenNode(this.db, tokenIds, sinceMs);
  }

  compactLanding(now: number, retentionDays: number): Promise<void> {
    return landing.compactLanding(this.db, now, retentionDays);
  }
}
