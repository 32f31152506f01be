// What an API token looks like, in one place for everything that makes, accepts, shows or
// hashes one: the account store issues tokens, the config schema accepts static ones, the
// gateway's token table finds them by hash, the console and the CLI list them by prefix
// (docs/accounts.md "Accounts, tokens and the console"). A leaf module (node:crypto only) so the store,
// the config and the gateway can all use it without depending on each other.

import * as crypto from 'node:crypto';

/**
 * What a token must look like to be accepted as a static config token. Tokens travel in URL
 * paths (`/api-token/<T>/`), so only characters that need no escaping; 16 or more of them, so a
 * hand-picked token is not trivially guessable. Issued tokens match it too.
 */
export const API_TOKEN_RE = /^[A-Za-z0-9_-]{16,}$/;
/** API_TOKEN_RE in words, for configuration errors. */
export const API_TOKEN_RULE = 'at least 16 characters from [A-Za-z0-9_-]';

/**
 * A new API token: 'jg_' + 24 random bytes (192 bits) in base64url. The mark makes a leaked
 * token recognisable (logs, pasted code, secret scanners); base64url without padding stays
 * inside API_TOKEN_RE, so it needs no escaping in a URL path.
 */
export function newApiToken(): string {
  return 'jg_' + crypto.randomBytes(24).toString('base64url');
}

/**
 * A fresh admin API token (the demo makes one per run). 'jga_' tells it apart from API tokens
 * at a glance: it opens the admin API, not the RPC endpoint.
 */
export function newAdminToken(): string {
  return 'jga_' + crypto.randomBytes(18).toString('base64url');
}

/**
 * The part of a token that may be shown and logged: its first 8 characters. Enough to tell a
 * stack's tokens apart in a list; for an issued token that is 'jg_' and 30 of its 192 random
 * bits, which leaves the rest unguessable.
 */
export function tokenPrefix(token: string): string {
  return token.slice(0, 8);
}

/**
 * SHA-256 of the token's UTF-8 bytes: the only form in which a token is kept (the store holds
 * it in hex, the gateway's table in base64), so a leaked database or heap dump holds no usable
 * token. A fast hash is enough: tokens are long random strings, not passwords.
 */
export function hashToken(token: string): Buffer {
  return crypto.createHash('sha256').update(token).digest();
}

// crypto.hash (Node >= 20.12) is a one-shot digest without a Hash object: about 0.3 µs per
// lookup instead of 1.4 µs, on every request.
const oneShot = (crypto as { hash?: (algorithm: string, data: string, encoding: 'base64') => string }).hash;

/** hashToken(token) in base64, computed the cheapest way: the gateway's per-request lookup key. */
export function hashTokenBase64(token: string): string {
  return oneShot !== undefined ? oneShot('sha256', token, 'base64') : hashToken(token).toString('base64');
}
