// Opens a PostgreSQL store (`store.url: postgres://USER:PASSWORD@HOST:PORT/DATABASE`):
// Kysely's PostgresDialect over a small pg pool (connect.ts), schema brought up to date.

import { Kysely, PostgresDialect } from 'kysely';
import type { Database } from '../schema.js';
import { clientConfig, connectPool } from './connect.js';
import { PgStore } from './store.js';

export async function openPostgresStore(url: string): Promise<PgStore> {
  const listenConfig = clientConfig(url);
  const pool = await connectPool(url);
  return new PgStore(new Kysely<Database>({ dialect: new PostgresDialect({ pool }) }), listenConfig).migrateOrClose();
}
