// In-memory token table: the hot path authenticates here, never in the database. Tokens are
// kept only as SHA-256 hashes; a lookup hashes the presented token, finds the entry by hash
// and confirms with a constant-time compare, so timing says nothing about stored tokens.

import { createHash, timingSafeEqual } from 'node:crypto';

export interface TokenRecord {
  /** Stable id (store id, or "static:<prefix>" for config tokens). */
  readonly id: string;
  /** First characters of the token, safe to log and show. */
  readonly prefix: string;
  readonly stack: string;
  active: boolean;
}

interface Entry {
  hash: Buffer;
  record: TokenRecord;
}

export function hashToken(token: string): Buffer {
  return createHash('sha256').update(token).digest();
}

export function tokenPrefix(token: string): string {
  return token.slice(0, 8);
}

/** A config token as a table record. Its id comes from the hash: prefixes can collide. */
export function staticTokenRecord(token: string, stack: string, active: boolean): TokenRecord {
  return { id: 'static:' + hashToken(token).toString('hex').slice(0, 16), prefix: tokenPrefix(token), stack, active };
}

export const LOOKUP_UNKNOWN = 0;
export const LOOKUP_INACTIVE = 1;
export const LOOKUP_OK = 2;

export class TokenTable {
  private readonly byHash = new Map<string, Entry>();

  /** Adds or replaces a token given in plain text (config tokens). */
  addPlain(token: string, record: TokenRecord): void {
    this.addHashed(hashToken(token), record);
  }

  addHashed(hash: Buffer, record: TokenRecord): void {
    this.byHash.set(hash.toString('base64'), { hash, record });
  }

  removeHashed(hash: Buffer): void {
    this.byHash.delete(hash.toString('base64'));
  }

  /** Replaces the whole table in one step (reload, store sync). */
  replaceAll(entries: Iterable<{ hash: Buffer; record: TokenRecord }>): void {
    this.byHash.clear();
    for (const e of entries) this.addHashed(e.hash, e.record);
  }

  get size(): number {
    return this.byHash.size;
  }

  find(token: string): TokenRecord | null {
    const hash = hashToken(token);
    const entry = this.byHash.get(hash.toString('base64'));
    if (entry === undefined || !timingSafeEqual(entry.hash, hash)) return null;
    return entry.record;
  }
}
