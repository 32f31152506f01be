// Bearer auth of the admin listener. The configured token is kept as a SHA-256 digest and a
// presented token is hashed and compared with timingSafeEqual, so neither its length nor its
// content leaks through timing. An empty configured token disables every protected route.

import { createHash, timingSafeEqual } from 'node:crypto';

export const AUTH_OK = 0;
/** No admin.token configured. */
export const AUTH_DISABLED = 1;
/** No `Authorization: Bearer …` header. */
export const AUTH_MISSING = 2;
export const AUTH_WRONG = 3;

const sha256 = (s: string): Buffer => createHash('sha256').update(s).digest();

export class AdminAuth {
  private digest: Buffer | null = null;

  constructor(token: string) {
    this.set(token);
  }

  /** Replaces the token (reload). */
  set(token: string): void {
    this.digest = token === '' ? null : sha256(token);
  }

  get enabled(): boolean {
    return this.digest !== null;
  }

  check(authorization: string | undefined): number {
    if (this.digest === null) return AUTH_DISABLED;
    const m = /^Bearer[ \t]+(\S+)[ \t]*$/i.exec(authorization ?? '');
    if (m === null) return AUTH_MISSING;
    return timingSafeEqual(sha256(m[1]!), this.digest) ? AUTH_OK : AUTH_WRONG;
  }
}
