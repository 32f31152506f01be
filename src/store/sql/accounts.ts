// Accounts: one per email (stored lower-cased), holding the password hash the console checks.

import type { Selectable } from 'kysely';
import type { AccountsTable } from '../schema.js';
import { StoreError, type Account } from '../types.js';
import { isUniqueViolation, newId, type Db } from './db.js';

function normalizeEmail(email: string): string {
  return email.trim().toLowerCase();
}

function toAccount(r: Selectable<AccountsTable>): Account {
  return { id: r.id, email: r.email, passwordHash: r.password_hash, createdAt: Number(r.created_at) };
}

async function accountWhere(db: Db, col: 'email' | 'id', value: string): Promise<Account | null> {
  const r = await db.selectFrom('accounts').selectAll().where(col, '=', value).executeTakeFirst();
  return r === undefined ? null : toAccount(r);
}

export function accountByEmail(db: Db, email: string): Promise<Account | null> {
  return accountWhere(db, 'email', normalizeEmail(email));
}

export function accountById(db: Db, id: string): Promise<Account | null> {
  return accountWhere(db, 'id', id);
}

export async function createAccount(db: Db, email: string, passwordHash: string): Promise<Account> {
  const e = normalizeEmail(email);
  if (e === '') throw new StoreError('invalid', 'email is required');
  const account: Account = { id: newId('acc'), email: e, passwordHash, createdAt: Date.now() };
  if ((await accountByEmail(db, e)) !== null) throw new StoreError('conflict', 'an account with this email exists');
  try {
    await db.insertInto('accounts').values({ id: account.id, email: e, password_hash: passwordHash, created_at: account.createdAt }).execute();
  } catch (err) {
    // A concurrent registration won the race between the check above and the insert.
    if (isUniqueViolation(err)) throw new StoreError('conflict', 'an account with this email exists');
    throw err;
  }
  return account;
}

export async function setPasswordHash(db: Db, accountId: string, passwordHash: string): Promise<boolean> {
  const r = await db.updateTable('accounts').set({ password_hash: passwordHash }).where('id', '=', accountId).executeTakeFirst();
  return Number(r.numUpdatedRows) > 0;
}

export async function listAccounts(db: Db): Promise<Account[]> {
  const rows = await db.selectFrom('accounts').selectAll().orderBy('created_at').orderBy('id').execute();
  return rows.map(toAccount);
}
