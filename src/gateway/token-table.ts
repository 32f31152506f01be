// In-memory token table: the hot path authenticates here, never in the database. Tokens are
// kept only as SHA-256 hashes; a lookup hashes the presented token, finds the entry by hash
// and confirms with a constant-time compare, so timing says nothing about stored tokens.

import { hashToken, hashTokenBase64, tokenPrefix } from '../token-format.js';

export interface TokenRecord {
  /** Stable id (store id, or "static:<prefix>" for config tokens). */
  readonly id: string;
  /** First characters of the token, safe to log and show. */
  readonly prefix: string;
  readonly stack: string;
  active: boolean;
}

interface Entry {
  /** The hash in base64, the table's key. */
  key: string;
  record: TokenRecord;
}

/** Compares two equal-length keys without an early exit. */
function sameKey(a: string, b: string): boolean {
  if (a.length !== b.length) return false;
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= a.charCodeAt(i) ^ b.charCodeAt(i);
  return diff === 0;
}

/** A config token as a table record. Its id comes from the hash: prefixes can collide. */
export function staticTokenRecord(token: string, stack: string, active: boolean): TokenRecord {
  return { id: 'static:' + hashToken(token).toString('hex').slice(0, 16), prefix: tokenPrefix(token), stack, active };
}

export const LOOKUP_UNKNOWN = 0;
export const LOOKUP_INACTIVE = 1;
export const LOOKUP_OK = 2;

/** Told the id of a token that stopped authenticating (removed, deactivated, replaced). */
export type RevokedListener = (tokenId: string) => void;

export class TokenTable {
  private readonly byHash = new Map<string, Entry>();
  /**
   * Open WebSockets hold their token's record and are not looked up per frame: they learn of a
   * revocation from here (docs/interface.md "WebSocket": closed with 1008 within a second).
   */
  private readonly revokedListeners: RevokedListener[] = [];

  /** Told after any change (the control plane sends the table to its workers then). */
  private readonly changedListeners: (() => void)[] = [];

  onRevoked(fn: RevokedListener): void {
    this.revokedListeners.push(fn);
  }

  onChanged(fn: () => void): void {
    this.changedListeners.push(fn);
  }

  private changed(): void {
    for (const fn of this.changedListeners) fn();
  }

  /** Every entry: the hash (base64) and the record, for a worker's copy of the table. */
  entries(): { hash: string; record: TokenRecord }[] {
    return [...this.byHash.values()].map((e) => ({ hash: e.key, record: { ...e.record } }));
  }

  private revoked(id: string): void {
    for (const fn of this.revokedListeners) fn(id);
  }

  /** Adds or replaces a token given in plain text (config tokens). */
  addPlain(token: string, record: TokenRecord): void {
    this.addHashed(hashToken(token), record);
  }

  addHashed(hash: Buffer, record: TokenRecord): void {
    const key = hash.toString('base64');
    const old = this.byHash.get(key);
    this.byHash.set(key, { key, record });
    if (old !== undefined && old.record !== record && (old.record.id !== record.id || !record.active)) this.revoked(old.record.id);
    this.changed();
  }

  removeHashed(hash: Buffer): void {
    const key = hash.toString('base64');
    const old = this.byHash.get(key);
    if (old === undefined) return;
    this.byHash.delete(key);
    this.revoked(old.record.id);
    this.changed();
  }

  /** Flips a record in place (connections hold it); going inactive counts as a revocation. */
  setActive(record: TokenRecord, active: boolean): void {
    const was = record.active;
    record.active = active;
    if (was && !active) this.revoked(record.id);
    if (was !== active) this.changed();
  }

  /** Replaces the whole table in one step (reload, store sync). */
  replaceAll(entries: Iterable<{ hash: Buffer; record: TokenRecord }>): void {
    const before = [...this.byHash.values()];
    this.byHash.clear();
    for (const e of entries) this.byHash.set(e.hash.toString('base64'), { key: e.hash.toString('base64'), record: e.record });
    for (const old of before) {
      const now = this.byHash.get(old.key);
      if (now === undefined || (now.record !== old.record && (now.record.id !== old.record.id || !now.record.active))) this.revoked(old.record.id);
    }
    this.changed();
  }

  get size(): number {
    return this.byHash.size;
  }

  find(token: string): TokenRecord | null {
    const key = hashTokenBase64(token);
    const entry = this.byHash.get(key);
    if (entry === undefined || !sameKey(entry.key, key)) return null;
    return entry.record;
  }
}
