// Opens the account store named by `store.url` and brings its schema up to date.
//   sqlite://./data/jumpgate.db   a file, relative to the working directory (folder created)
//   sqlite:///var/lib/jg/jg.db    an absolute path
//   sqlite://:memory:             a private in-memory database (tests)
//   postgres://USER:PASSWORD@HOST:PORT/DB (or postgresql://…)   PostgreSQL (postgres/open.ts)

import { mkdirSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import Database from 'better-sqlite3';
import { Kysely, SqliteDialect } from 'kysely';
import { StoreUrlError } from './errors.js';
import { openPostgresStore } from './postgres/open.js';
import type { Database as Schema } from './schema.js';
import { SqlStore } from './sql.js';
import type { FullStore } from './types.js';

export { StoreConnectError, StoreUrlError } from './errors.js';

/** The SQLite file a `sqlite://` URL names (':memory:' for an in-memory database), or null for other schemes. */
export function sqlitePath(url: string, cwd = process.cwd()): string | null {
  if (!url.startsWith('sqlite://')) return null;
  const rest = url.slice('sqlite://'.length);
  if (rest === ':memory:') return ':memory:';
  if (rest === '') throw new StoreUrlError(`store.url "${url}": expected sqlite://PATH (e.g. sqlite://./data/jumpgate.db) or sqlite://:memory:`);
  return resolve(cwd, decodeURIComponent(rest));
}

export async function openStore(url: string): Promise<FullStore> {
  if (/^postgres(ql)?:\/\//i.test(url)) return openPostgresStore(url);
  const path = sqlitePath(url);
  if (path === null) throw new StoreUrlError(`store.url "${url}": expected sqlite://… or postgres://…`);
  if (path !== ':memory:') mkdirSync(dirname(path), { recursive: true });
  const sqlite = new Database(path);
  try {
    if (path !== ':memory:') sqlite.pragma('journal_mode = WAL');
    sqlite.pragma('synchronous = NORMAL');
    // Another process (the tokens CLI, a second gateway) may hold the write lock briefly.
    sqlite.pragma('busy_timeout = 5000');
    sqlite.pragma('foreign_keys = ON');
  } catch (err) {
    sqlite.close();
    throw err;
  }
  return new SqlStore(new Kysely<Schema>({ dialect: new SqliteDialect({ database: sqlite }) })).migrateOrClose();
}
