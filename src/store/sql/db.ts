// What every query file of the SQL store shares: the Kysely handle its functions take (the
// database, or a transaction when the caller groups several changes) and the driver facts and
// id scheme they all follow.

import { randomBytes } from 'node:crypto';
import type { Kysely, Transaction } from 'kysely';
import type { Database } from '../schema.js';

export type Db = Kysely<Database> | Transaction<Database>;

/** A random text id such as `acc_…`: 96 bits, so ids can be made anywhere without coordination. */
export function newId(kind: string): string {
  return kind + '_' + randomBytes(12).toString('base64url');
}

/** Unique-constraint violation, as better-sqlite3 and pg report it. */
export function isUniqueViolation(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return code === 'SQLITE_CONSTRAINT_UNIQUE' || code === 'SQLITE_CONSTRAINT_PRIMARYKEY' || code === '23505';
}
