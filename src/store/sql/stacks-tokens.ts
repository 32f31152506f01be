// Stacks and their API tokens. Every change that can alter what the gateway accepts (a token
// created, (de)activated or deleted, a stack disabled or re-enabled) bumps the token version in
// the same transaction: the gateway's token sync polls that one row and reloads the tokens
// only when it moved.

import type { Kysely, Selectable } from 'kysely';
import { hashToken, newApiToken, tokenPrefix } from '../../token-format.js';
import { TOKEN_VERSION_KEY, type ApiTokensTable, type Database, type StacksTable } from '../schema.js';
import { StoreError, type ApiToken, type Stack, type TokenForGateway } from '../types.js';
import { isUniqueViolation, newId, type Db } from './db.js';
import { retryConflicts } from './retry.js';

/** Stack names and token labels: at most this many characters. */
export const MAX_NAME_LENGTH = 64;
export const MAX_DESCRIPTION_LENGTH = 500;

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

async function bumpTokenVersion(trx: Db): Promise<void> {
  await trx
    .updateTable('meta')
    .set((eb) => ({ value: eb('value', '+', 1) }))
    .where('key', '=', TOKEN_VERSION_KEY)
    .execute();
}

// ---- stacks ---------------------------------------------------------------------------------

export async function stackById(db: Db, accountId: string, stackId: string): Promise<Stack | null> {
  const r = await db.selectFrom('stacks').selectAll().where('account_id', '=', accountId).where('id', '=', stackId).executeTakeFirst();
  return r === undefined ? null : toStack(r);
}

export async function stackByName(db: Db, accountId: string, name: string): Promise<Stack | null> {
  const r = await db.selectFrom('stacks').selectAll().where('account_id', '=', accountId).where('name', '=', name.trim()).executeTakeFirst();
  return r === undefined ? null : toStack(r);
}

export async function listStacks(db: Db, accountId: string): Promise<Stack[]> {
  const rows = await db.selectFrom('stacks').selectAll().where('account_id', '=', accountId).orderBy('created_at').orderBy('id').execute();
  return rows.map(toStack);
}

export async function createStack(db: Db, accountId: string, name: string, description: string | null): Promise<Stack> {
  const stack: Stack = {
    id: newId('stk'),
    accountId,
    name: checkName(name, 'name'),
    description: checkDescription(description),
    disabled: false,
    createdAt: Date.now(),
  };
  if ((await stackByName(db, accountId, stack.name)) !== null) throw new StoreError('conflict', `a stack named "${stack.name}" exists`);
  try {
    await db
      .insertInto('stacks')
      .values({ id: stack.id, account_id: accountId, name: stack.name, description: stack.description, disabled: 0, created_at: stack.createdAt })
      .execute();
  } catch (err) {
    if (isUniqueViolation(err)) throw new StoreError('conflict', `a stack named "${stack.name}" exists`);
    throw err;
  }
  return stack;
}

export async function updateStack(
  db: Kysely<Database>,
  accountId: string,
  stackId: string,
  patch: { name?: string; description?: string | null; disabled?: boolean },
): Promise<Stack | null> {
  const set: { name?: string; description?: string | null; disabled?: number } = {};
  if (patch.name !== undefined) set.name = checkName(patch.name, 'name');
  if (patch.description !== undefined) set.description = checkDescription(patch.description);
  if (patch.disabled !== undefined) set.disabled = patch.disabled ? 1 : 0;
  try {
    return await db.transaction().execute(async (trx) => {
      const cur = await trx.selectFrom('stacks').selectAll().where('account_id', '=', accountId).where('id', '=', stackId).executeTakeFirst();
      if (cur === undefined) return null;
      if (set.name !== undefined && set.name !== cur.name) {
        const dup = await trx.selectFrom('stacks').select('id').where('account_id', '=', accountId).where('name', '=', set.name).executeTakeFirst();
        if (dup !== undefined) throw new StoreError('conflict', `a stack named "${set.name}" exists`);
      }
      if (Object.keys(set).length > 0) {
        await trx.updateTable('stacks').set(set).where('account_id', '=', accountId).where('id', '=', stackId).execute();
        if (set.disabled !== undefined && set.disabled !== Number(cur.disabled)) await bumpTokenVersion(trx);
      }
      return toStack({ ...cur, ...set });
    });
  } catch (err) {
    if (isUniqueViolation(err)) throw new StoreError('conflict', `a stack named "${set.name ?? ''}" exists`);
    throw err;
  }
}

// ---- tokens ---------------------------------------------------------------------------------

export async function createToken(db: Kysely<Database>, accountId: string, stackId: string, label: string): Promise<{ token: string; record: ApiToken }> {
  const l = label.trim();
  if (l.length > MAX_NAME_LENGTH) throw new StoreError('invalid', `label must be at most ${MAX_NAME_LENGTH} characters`);
  const token = newApiToken();
  const row: Selectable<ApiTokensTable> = {
    id: newId('tok'),
    account_id: accountId,
    stack_id: stackId,
    hash: hashToken(token).toString('hex'),
    prefix: tokenPrefix(token),
    label: l,
    active: 1,
    created_at: Date.now(),
    last_used_at: null,
    deleted_at: null,
  };
  await db.transaction().execute(async (trx) => {
    const stack = await trx.selectFrom('stacks').select('id').where('account_id', '=', accountId).where('id', '=', stackId).executeTakeFirst();
    if (stack === undefined) throw new StoreError('not_found', 'no such stack');
    await trx.insertInto('api_tokens').values(row).execute();
    await bumpTokenVersion(trx);
  });
  return { token, record: toToken(row) };
}

export async function listTokens(db: Db, accountId: string, stackId: string): Promise<ApiToken[]> {
  const rows = await db
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

export async function tokenById(db: Db, accountId: string, tokenId: string): Promise<ApiToken | null> {
  const r = await db
    .selectFrom('api_tokens')
    .selectAll()
    .where('account_id', '=', accountId)
    .where('id', '=', tokenId)
    .where('deleted_at', 'is', null)
    .executeTakeFirst();
  return r === undefined ? null : toToken(r);
}

export async function setTokenActive(db: Kysely<Database>, accountId: string, tokenId: string, active: boolean): Promise<ApiToken | null> {
  return db.transaction().execute(async (trx) => {
    const t = await tokenById(trx, accountId, tokenId);
    if (t === null) return null;
    if (t.active !== active) {
      await trx
        .updateTable('api_tokens')
        .set({ active: active ? 1 : 0 })
        .where('account_id', '=', accountId)
        .where('id', '=', tokenId)
        .execute();
      await bumpTokenVersion(trx);
    }
    return { ...t, active };
  });
}

/** The token stops authenticating at once (401); the row stays so the stack's usage history keeps its calls. */
export async function deleteToken(db: Kysely<Database>, accountId: string, tokenId: string): Promise<boolean> {
  return db.transaction().execute(async (trx) => {
    const res = await trx
      .updateTable('api_tokens')
      .set({ deleted_at: Date.now(), active: 0 })
      .where('account_id', '=', accountId)
      .where('id', '=', tokenId)
      .where('deleted_at', 'is', null)
      .executeTakeFirst();
    if (Number(res.numUpdatedRows) === 0) return false;
    await bumpTokenVersion(trx);
    return true;
  });
}

export async function tokensForGateway(db: Db): Promise<TokenForGateway[]> {
  const rows = await db
    .selectFrom('api_tokens')
    .innerJoin('stacks', 'stacks.id', 'api_tokens.stack_id')
    .select([
      'api_tokens.id as id',
      'api_tokens.hash as hash',
      'api_tokens.prefix as prefix',
      'api_tokens.stack_id as stackId',
      'api_tokens.active as active',
      'stacks.disabled as disabled',
    ])
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

export async function tokenVersion(db: Db): Promise<number> {
  const r = await db.selectFrom('meta').select('value').where('key', '=', TOKEN_VERSION_KEY).executeTakeFirst();
  return r === undefined ? 0 : Number(r.value);
}

export async function touchTokens(db: Kysely<Database>, lastUsed: Map<string, number>): Promise<void> {
  if (lastUsed.size === 0) return;
  // By id, so two gateways stamping the same tokens lock them in the same order (sql/retry.ts).
  const stamps = [...lastUsed].sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
  await retryConflicts(() =>
    db.transaction().execute(async (trx) => {
      for (const [id, at] of stamps) {
        await trx
          .updateTable('api_tokens')
          .set({ last_used_at: at })
          .where('id', '=', id)
          .where((eb) => eb.or([eb('last_used_at', 'is', null), eb('last_used_at', '<', at)]))
          .execute();
      }
    }),
  );
}
