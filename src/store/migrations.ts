// The store's schema, as Kysely migrations defined in code (nothing to find on disk at run
// time). Portable on purpose: text ids, integer epoch-ms timestamps (bigint), booleans as
// integers 0/1, no autoincrement, no dialect-specific SQL, so PostgreSQL runs the same DDL.
// A new migration is a new entry in MIGRATIONS; never edit one that has shipped.

import { Kysely, Migrator, type Migration, type MigrationProvider } from 'kysely';
import { TOKEN_VERSION_KEY, USAGE_HORIZON_KEY, type Database } from './schema.js';
import { backfillRollups } from './sql/usage-backfill.js';

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

/** A stack's roll-up table: its rows are read by stack and time range, so the key starts with both. */
async function createStackUsageTable(db: Kysely<any>, name: string): Promise<void> {
  await db.schema
    .createTable(name)
    .addColumn('stack_id', 'text', (c) => c.notNull())
    .addColumn('method', 'text', (c) => c.notNull())
    .addColumn('start_ms', 'bigint', (c) => c.notNull())
    .addColumn('calls', 'bigint', (c) => c.notNull())
    .addColumn('errors', 'bigint', (c) => c.notNull())
    .addColumn('bytes_in', 'bigint', (c) => c.notNull())
    .addColumn('bytes_out', 'bigint', (c) => c.notNull())
    .addColumn('histogram', 'text')
    .addPrimaryKeyConstraint(`${name}_pk`, ['stack_id', 'start_ms', 'method'])
    .execute();
  await db.schema.createIndex(`${name}_start`).on(name).column('start_ms').execute();
}

const STACK_USAGE_TABLES = ['stack_usage_minute', 'stack_usage_hour', 'stack_usage_6h', 'stack_usage_day'];

/**
 * Usage roll-ups (docs/accounts.md "Accounts, tokens and the console"): 6-hour rows per token, and minute,
 * hour, 6-hour and day rows per stack, built from the usage already stored; usage_hour now holds
 * every hour, not only those compaction rolled up. In one transaction (SQLite runs migrations
 * outside one), so a failed backfill leaves nothing half-built.
 */
const usageRollups: Migration = {
  async up(db: Kysely<any>): Promise<void> {
    const run = async (trx: Kysely<any>): Promise<void> => {
      await createUsageTable(trx, 'usage_6h');
      for (const name of STACK_USAGE_TABLES) await createStackUsageTable(trx, name);
      await trx.insertInto('meta').values({ key: USAGE_HORIZON_KEY, value: 0 }).execute();
      await backfillRollups(trx as Kysely<Database>);
    };
    if (db.isTransaction) await run(db);
    else await db.transaction().execute(run);
  },
  async down(db: Kysely<any>): Promise<void> {
    for (const t of [...STACK_USAGE_TABLES, 'usage_6h']) await db.schema.dropTable(t).ifExists().execute();
    await db.deleteFrom('meta').where('key', '=', USAGE_HORIZON_KEY).execute();
    // 0001 reads minutes and hours together: drop the hours the minutes still hold.
    const first = await db
      .selectFrom('usage_minute')
      .select((eb) => eb.fn.min('start_ms').as('start'))
      .executeTakeFirst();
    if (first?.start != null)
      await db
        .deleteFrom('usage_hour')
        .where('start_ms', '>=', Math.floor(Number(first.start) / 3_600_000) * 3_600_000)
        .execute();
  },
};

/**
 * Transaction landing per hour, token and node (docs/landing.md "Several instances"): counts in
 * one table, the slots-to-land histogram as (bucket, count) rows in another, both keyed so
 * writers add into a row rather than replace it.
 */
const landing: Migration = {
  async up(db: Kysely<any>): Promise<void> {
    const counts = ['sent', 'landed', 'expired', 'failed', 'untracked', 'resent'];
    let table = db.schema
      .createTable('landing_hour')
      .addColumn('kind', 'text', (c) => c.notNull())
      .addColumn('key', 'text', (c) => c.notNull())
      .addColumn('start_ms', 'bigint', (c) => c.notNull());
    for (const name of counts) table = table.addColumn(name, 'bigint', (c) => c.notNull());
    await table.addPrimaryKeyConstraint('landing_hour_pk', ['kind', 'key', 'start_ms']).execute();
    await db.schema.createIndex('landing_hour_start').on('landing_hour').column('start_ms').execute();
    await db.schema
      .createTable('landing_slots_hour')
      .addColumn('kind', 'text', (c) => c.notNull())
      .addColumn('key', 'text', (c) => c.notNull())
      .addColumn('start_ms', 'bigint', (c) => c.notNull())
      .addColumn('bucket', 'integer', (c) => c.notNull())
      .addColumn('count', 'bigint', (c) => c.notNull())
      .addPrimaryKeyConstraint('landing_slots_hour_pk', ['kind', 'key', 'start_ms', 'bucket'])
      .execute();
    await db.schema.createIndex('landing_slots_hour_start').on('landing_slots_hour').column('start_ms').execute();
  },
  async down(db: Kysely<any>): Promise<void> {
    for (const t of ['landing_slots_hour', 'landing_hour']) await db.schema.dropTable(t).ifExists().execute();
  },
};

/** Every migration, in order. Names sort in application order. */
export const MIGRATIONS: Record<string, Migration> = {
  '0001_initial': initial,
  '0002_usage_rollups': usageRollups,
  '0003_landing': landing,
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
