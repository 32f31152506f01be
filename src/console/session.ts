// Sessions: a random id in an HttpOnly, SameSite=Lax cookie, the record in the store (7 days).
// Every state-changing API call (other than register and login) must also send the session's
// CSRF token in X-CSRF-Token; a cross-site page can neither read it nor set that header
// without a CORS preflight, which this server never grants.

import { timingSafeEqual } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Account, Session, Store } from '../store/types.js';
import { ApiError } from './errors.js';

export const SESSION_COOKIE = 'jumpgate_session';
export const SESSION_TTL_MS = 7 * 24 * 60 * 60 * 1000;
export const CSRF_HEADER = 'x-csrf-token';
const SESSION_ID_RE = /^[\x21-\x7e]{1,256}$/;

export interface Auth {
  account: Account;
  session: Session;
}

declare module 'fastify' {
  interface FastifyRequest {
    /** The logged-in account and its session, once `loadAuth` ran; null when logged out. */
    auth: Auth | null;
  }
}

export class Sessions {
  constructor(
    private readonly store: Store,
    private readonly secure: boolean,
  ) {}

  /** Resolves the request's session cookie (null when absent, unknown or expired). */
  async load(req: FastifyRequest): Promise<Auth | null> {
    const id = req.cookies[SESSION_COOKIE];
    if (!id || !SESSION_ID_RE.test(id)) return null;
    const session = await this.store.sessionById(id);
    if (!session) return null;
    const account = await this.store.accountById(session.accountId);
    return account ? { account, session } : null;
  }

  /** Starts a new session for `account` (dropping the request's old one: no fixation). */
  async start(req: FastifyRequest, reply: FastifyReply, account: Account): Promise<Session> {
    const old = req.cookies[SESSION_COOKIE];
    if (old && SESSION_ID_RE.test(old)) await this.store.deleteSession(old);
    const session = await this.store.createSession(account.id, SESSION_TTL_MS);
    reply.setCookie(SESSION_COOKIE, session.id, {
      path: '/',
      httpOnly: true,
      sameSite: 'lax',
      secure: this.secure,
      maxAge: Math.floor(SESSION_TTL_MS / 1000),
    });
    return session;
  }

  async end(auth: Auth, reply: FastifyReply): Promise<void> {
    await this.store.deleteSession(auth.session.id);
    reply.clearCookie(SESSION_COOKIE, { path: '/', httpOnly: true, sameSite: 'lax', secure: this.secure });
  }
}

const MUTATING = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/**
 * An onRequest hook for protected API routes: runs before the body is read or validated, so
 * a logged-out caller gets 401 and a forged request 403 whatever it sent.
 */
export function guard(sessions: Sessions): (req: FastifyRequest) => Promise<void> {
  return async (req) => {
    req.auth = await sessions.load(req);
    const auth = requireAuth(req);
    if (MUTATING.has(req.method)) checkCsrf(req, auth);
  };
}

/** The request's auth, or a 401. */
export function requireAuth(req: FastifyRequest): Auth {
  if (!req.auth) throw new ApiError('unauthorized');
  return req.auth;
}

/** Throws 403 unless X-CSRF-Token equals the session's token. */
export function checkCsrf(req: FastifyRequest, auth: Auth): void {
  const sent = req.headers[CSRF_HEADER];
  if (typeof sent !== 'string' || !sameText(sent, auth.session.csrfToken)) throw new ApiError('csrf');
}

function sameText(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}
