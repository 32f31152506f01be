// Opens the account store named by `store.url` and brings its schema up to date.
//   sqlite://./data/jumpgate.db   a file, relative to the working directory (folder created)
//   sqlite:///var/lib/jg/jg.db    an absolute path
//   sqlite://:memory:             a private in-memory database (tests)
//   postgres://… / postgresql://… refused in this build: the pg driver is not installed. The
//     queries are dialect-neutral; adding it means `npm install pg` and building a Kysely
//     PostgresDialect here (untested so far).

import { mkdirSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import Database from 'better-sqlite3';
import { Kysely, SqliteDialect } from 'kysely';
import type { Database as Schema } from './schema.js';
import { SqlStore } from './sql.js';
import type { FullStore } from './types.js';

export class StoreUrlError extends Error {}

/** The SQLite file a `sqlite://` URL names (':memory:' for an in-memory database), or null for other schemes. */
export function sqlitePath(url: string, cwd = process.cwd()): string | null {
  if (!url.startsWith('sqlite://')) return null;
  const rest = url.slice('sqlite://'.length);
  if (rest === ':memory:') return ':memory:';
  if (rest === '') throw new StoreUrlError(`store.url "${url}": expected sqlite://PATH (e.g. sqlite://./data/jumpgate.db) or sqlite://:memory:`);
  return resolve(cwd, decodeURIComponent(rest));
}

export async function openStore(url: string): Promise<FullStore> {
  if (/^postgres(ql)?:\/\//i.test(url)) {
    throw new StoreUrlError(
      'PostgreSQL is not available in this build: install pg (npm install pg) and add a Kysely PostgresDialect in src/store/open.ts; ' +
        'the SQL layer is written for both. Until then use store.url: sqlite://./data/jumpgate.db',
    );
  }
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
  const store = new SqlStore(new Kysely<Schema>({ dialect: new SqliteDialect({ database: sqlite }) }));
  try {
    await store.migrate();
  } catch (err) {
    await store.close();
    throw err;
  }
  return store;
}
