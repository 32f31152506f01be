// What the console's route plugins share.

import type { FastifyRequest } from 'fastify';
import type { Logger } from 'pino';
import type { RankShown } from '../landing/ranking.js';
import type { Account, ApiToken, Stack, Store } from '../store/types.js';
import type { Sessions } from './session.js';
import type { LoginThrottle, RateSpec, RegisterThrottle, ThrottleLimits } from './throttle.js';

export interface Endpoints {
  /** Gateway HTTP base URL, e.g. http://127.0.0.1:8899 */
  http: string;
  /** Gateway WebSocket base URL, e.g. ws://127.0.0.1:8900 */
  ws: string;
}

/** How the console is started (startConsole) and built (buildConsole). */
export interface ConsoleOptions {
  store: Store;
  host: string;
  /** 0 = an ephemeral port. */
  port: number;
  registration: 'open' | 'closed';
  /** Gateway base URLs the pages show, e.g. http://127.0.0.1:8899 and ws://127.0.0.1:8900. */
  endpoints: Endpoints;
  /**
   * Called after any token or stack write so the gateway syncs at once. A promise it returns
   * holds that request's answer until it settles: the gateway's settles once the change is in
   * effect on this instance (docs/accounts.md "When a change takes effect").
   */
  onTokensChanged?: () => unknown;
  log: Logger;
  /** Mark the session cookie Secure (set it when the console is served over HTTPS). Default false. */
  secureCookies?: boolean;
  /** Failed-login limits per client IP and per email (tests lower them). */
  loginLimits?: ThrottleLimits;
  /** Registrations per client IP (tests lower it). */
  registerLimit?: RateSpec;
  /** CIDRs whose X-Forwarded-For is believed (the config's `trustedProxies`, as on the RPC side). */
  trustedProxies?: readonly string[];
  /** Where each node ranks for sends and why (docs/landing.md "Sends go where they land"); none when not given. */
  sendRanking?: () => Record<string, RankShown>;
}

export interface ConsoleContext {
  store: Store;
  sessions: Sessions;
  throttle: LoginThrottle;
  registrations: RegisterThrottle;
  /** The client's IP for throttling: the peer, or behind a trusted proxy its X-Forwarded-For. */
  clientIp(req: FastifyRequest): string;
  registration: 'open' | 'closed';
  endpoints: Endpoints;
  /** Each node's send ranking, by node id (empty without one). */
  sendRanking(): Record<string, RankShown>;
  /** Called after every token or stack write so the gateway syncs at once; the answer waits for it (app.ts). */
  tokensChanged(): void;
  /** A hash checked against when the email is unknown, so both failures cost one scrypt. */
  dummyHash: Promise<string>;
  log: Logger;
  /** onRequest hook of protected routes: 401 unless logged in, 403 on a bad CSRF token. */
  guard(req: FastifyRequest): Promise<void>;
}

export function endpointUrls(e: Endpoints): { http: string; ws: string; httpBase: string; wsBase: string } {
  const http = e.http.replace(/\/+$/, '');
  const ws = e.ws.replace(/\/+$/, '');
  return { http: `${http}/api-token/<TOKEN>`, ws: `${ws}/api-token/<TOKEN>/`, httpBase: http, wsBase: ws };
}

export function accountView(a: Account): { id: string; email: string; createdAt: number } {
  return { id: a.id, email: a.email, createdAt: a.createdAt };
}

export function stackView(s: Stack): Omit<Stack, 'accountId'> {
  return { id: s.id, name: s.name, description: s.description, disabled: s.disabled, createdAt: s.createdAt };
}

export function tokenView(t: ApiToken): Omit<ApiToken, 'accountId'> {
  return { id: t.id, stackId: t.stackId, label: t.label, prefix: t.prefix, active: t.active, createdAt: t.createdAt, lastUsedAt: t.lastUsedAt };
}

/** Lower-cased, trimmed: one account per mailbox however it is typed. */
export function normalizeEmail(email: string): string {
  return email.trim().toLowerCase();
}
