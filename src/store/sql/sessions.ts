// Console sessions. The cookie holds a random id; the table holds only its SHA-256, so a
// leaked database holds no live session.

import { createHash, randomBytes } from 'node:crypto';
import type { Session } from '../types.js';
import type { Db } from './db.js';

export function sha256Hex(s: string): string {
  return createHash('sha256').update(s).digest('hex');
}

export async function createSession(db: Db, accountId: string, ttlMs: number): Promise<Session> {
  const now = Date.now();
  const s: Session = {
    id: randomBytes(32).toString('base64url'),
    accountId,
    csrfToken: randomBytes(32).toString('base64url'),
    createdAt: now,
    expiresAt: now + ttlMs,
  };
  await db
    .insertInto('sessions')
    .values({ id: sha256Hex(s.id), account_id: accountId, csrf_token: s.csrfToken, created_at: s.createdAt, expires_at: s.expiresAt })
    .execute();
  return s;
}

export async function sessionById(db: Db, id: string): Promise<Session | null> {
  const r = await db.selectFrom('sessions').selectAll().where('id', '=', sha256Hex(id)).where('expires_at', '>', Date.now()).executeTakeFirst();
  if (r === undefined) return null;
  return { id, accountId: r.account_id, csrfToken: r.csrf_token, createdAt: Number(r.created_at), expiresAt: Number(r.expires_at) };
}

export async function deleteSession(db: Db, id: string): Promise<void> {
  await db.deleteFrom('sessions').where('id', '=', sha256Hex(id)).execute();
}
