// The store's schema, as Kysely migrations defined in code (nothing to find on disk at run
// time). Portable on purpose: text ids, integer epoch-ms timestamps (bigint), booleans as
// integers 0/1, no autoincrement, no dialect-specific SQL, so PostgreSQL runs the same DDL.
// A new migration is a new entry in MIGRATIONS; never edit one that has shipped.

import { Kysely, Migrator, type Migration, type MigrationProvider } from 'kysely';

/** Table shapes as the queries see them (numbers may come back as strings from PostgreSQL: coerce). */
export interface AccountsTable {
  id: string;
  /** Lower-cased. */
  email: string;
  password_hash: string;
  created_at: number;
}

export interface SessionsTable {
  /** SHA-256 (hex) of the session id the cookie holds: a leaked database holds no live session. */
  id: string;
  account_id: string;
  csrf_token: string;
  created_at: number;
  expires_at: number;
}

export interface StacksTable {
  id: string;
  account_id: string;
  name: string;
  description: string | null;
  disabled: number;
  created_at: number;
}

export interface ApiTokensTable {
  id: string;
  account_id: string;
  stack_id: string;
  /** SHA-256 (hex) of the token; the token itself is never stored. */
  hash: string;
  prefix: string;
  label: string;
  active: number;
  created_at: number;
  last_used_at: number | null;
  /** Deleted tokens stay (their usage still counts for the stack) but never authenticate again. */
  deleted_at: number | null;
}

export interface MetaTable {
  key: string;
  value: number;
}

/** usage_minute and usage_hour share this shape; `start_ms` is the minute's or hour's start. */
export interface UsageTable {
  token_id: string;
  method: string;
  start_ms: number;
  calls: number;
  errors: number;
  bytes_in: number;
  bytes_out: number;
  /** Encoded HDR histogram of latencies in µs, null when none. */
  histogram: string | null;
}

export interface Database {
  accounts: AccountsTable;
  sessions: SessionsTable;
  stacks: StacksTable;
  api_tokens: ApiTokensTable;
  meta: MetaTable;
  usage_minute: UsageTable;
  usage_hour: UsageTable;
}

export const TOKEN_VERSION_KEY = 'token_version';

async function createUsageTable(db: Kysely<any>, name: string): Promise<void> {
  await db.schema
    .createTable(name)
    .addColumn('token_id', 'text', (c) => c.notNull())
    .addColumn('method', 'text', (c) => c.notNull())
    .addColumn('start_ms', 'bigint', (c) => c.notNull())
    .addColumn('calls', 'bigint', (c) => c.notNull())
    .addColumn('errors', 'bigint', (c) => c.notNull())
    .addColumn('bytes_in', 'bigint', (c) => c.notNull())
    .addColumn('bytes_out', 'bigint', (c) => c.notNull())
    .addColumn('histogram', 'text')
    .addPrimaryKeyConstraint(`${name}_pk`, ['token_id', 'method', 'start_ms'])
    .execute();
  await db.schema.createIndex(`${name}_token_start`).on(name).columns(['token_id', 'start_ms']).execute();
  await db.schema.createIndex(`${name}_start`).on(name).column('start_ms').execute();
}

const initial: Migration = {
  async up(db: Kysely<any>): Promise<void> {
    await db.schema
      .createTable('accounts')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('email', 'text', (c) => c.notNull().unique())
      .addColumn('password_hash', 'text', (c) => c.notNull())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .execute();
    await db.schema
      .createTable('sessions')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('account_id', 'text', (c) => c.notNull().references('accounts.id').onDelete('cascade'))
      .addColumn('csrf_token', 'text', (c) => c.notNull())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('expires_at', 'bigint', (c) => c.notNull())
      .execute();
    await db.schema.createIndex('sessions_account').on('sessions').column('account_id').execute();
    await db.schema.createIndex('sessions_expires').on('sessions').column('expires_at').execute();
    await db.schema
      .createTable('stacks')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('account_id', 'text', (c) => c.notNull().references('accounts.id').onDelete('cascade'))
      .addColumn('name', 'text', (c) => c.notNull())
      .addColumn('description', 'text')
      .addColumn('disabled', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addUniqueConstraint('stacks_account_name', ['account_id', 'name'])
      .execute();
    await db.schema
      .createTable('api_tokens')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('account_id', 'text', (c) => c.notNull().references('accounts.id').onDelete('cascade'))
      .addColumn('stack_id', 'text', (c) => c.notNull().references('stacks.id').onDelete('cascade'))
      .addColumn('hash', 'text', (c) => c.notNull().unique())
      .addColumn('prefix', 'text', (c) => c.notNull())
      .addColumn('label', 'text', (c) => c.notNull())
      .addColumn('active', 'integer', (c) => c.notNull())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('last_used_at', 'bigint')
      .addColumn('deleted_at', 'bigint')
      .execute();
    await db.schema.createIndex('api_tokens_account_stack').on('api_tokens').columns(['account_id', 'stack_id']).execute();
    await db.schema
      .createTable('meta')
      .addColumn('key', 'text', (c) => c.primaryKey())
      .addColumn('value', 'bigint', (c) => c.notNull())
      .execute();
    await db.insertInto('meta').values({ key: TOKEN_VERSION_KEY, value: 0 }).execute();
    await createUsageTable(db, 'usage_minute');
    await createUsageTable(db, 'usage_hour');
  },
  async down(db: Kysely<any>): Promise<void> {
    for (const t of ['usage_hour', 'usage_minute', 'meta', 'api_tokens', 'stacks', 'sessions', 'accounts']) {
      await db.schema.dropTable(t).ifExists().execute();
    }
  },
};

/** Every migration, in order. Names sort in application order. */
export const MIGRATIONS: Record<string, Migration> = {
  '0001_initial': initial,
};

const provider: MigrationProvider = {
  getMigrations: () => Promise.resolve(MIGRATIONS),
};

/** Applies pending migrations; throws the first failure (nothing half-applied stays: each runs in a transaction where the dialect allows). */
export async function migrateToLatest(db: Kysely<Database>): Promise<void> {
  const migrator = new Migrator({ db, provider });
  const { error, results } = await migrator.migrateToLatest();
  if (error !== undefined) {
    const failed = results?.find((r) => r.status === 'Error');
    const msg = error instanceof Error ? error.message : String(error);
    throw new Error(`store migration ${failed?.migrationName ?? ''} failed: ${msg}`, { cause: error });
  }
}
