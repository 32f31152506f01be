// Rate limits (README "Affinity and rate limits", code 7429): hot affinity keys and IPs under key affinity,
// calls per token, and calls per token per method. A check that passes allocates nothing;
// a refusal leaves its scope and wait in `scope` / `retryAfterMs`.

import type { Config } from '../config/schema.js';
import { BucketTable } from '../routing/bucket-table.js';

export const SCOPE_KEY = 'affinity-key';
export const SCOPE_IP = 'ip';
export const SCOPE_TOKEN = 'token';
export const SCOPE_METHOD = 'method';

/** Tables for token and method limits hold at most this many tokens each. */
const TOKEN_TABLE = 100_000;

export class RateLimiter {
  readonly keys: BucketTable;
  tokens: BucketTable | null;
  methods: Map<string, BucketTable>;
  scope = '';
  retryAfterMs = 0;

  constructor(config: Config) {
    this.keys = new BucketTable(config.affinity.maxTrackedKeys, config.affinity.keyRate, config.affinity.keyBurst);
    this.tokens = null;
    this.methods = new Map();
    this.configure(config);
  }

  /** Applies new rates (reload) without forgetting the current buckets where it can. */
  configure(config: Config): void {
    this.keys.rate = config.affinity.keyRate;
    this.keys.burst = config.affinity.keyBurst;
    const t = config.rateLimits.token;
    this.tokens = t.rate > 0 ? new BucketTable(TOKEN_TABLE, t.rate, t.burst) : null;
    const methods = new Map<string, BucketTable>();
    for (const [m, r] of Object.entries(config.rateLimits.methods)) if (r.rate > 0) methods.set(m, new BucketTable(TOKEN_TABLE, r.rate, r.burst));
    this.methods = methods;
  }

  private refuse(scope: string, wait: number): boolean {
    this.scope = scope;
    this.retryAfterMs = wait;
    return false;
  }

  /** Hot-key bucket; `key` is the affinity key or the client IP. */
  allowKey(key: string, isIp: boolean, calls: number, now: number): boolean {
    const wait = this.keys.take(isIp ? 'i' + key : 'k' + key, calls, now);
    return wait === 0 || this.refuse(isIp ? SCOPE_IP : SCOPE_KEY, wait);
  }

  allowToken(tokenId: string, calls: number, now: number): boolean {
    if (this.tokens === null) return true;
    const wait = this.tokens.take(tokenId, calls, now);
    return wait === 0 || this.refuse(SCOPE_TOKEN, wait);
  }

  /** `methods` lists the call's methods (one entry per call). */
  allowMethods(tokenId: string, methods: readonly string[] | string, now: number): boolean {
    if (this.methods.size === 0) return true;
    if (typeof methods === 'string') return this.allowMethod(tokenId, methods, 1, now);
    for (let i = 0; i < methods.length; i++) if (methods[i] !== '' && !this.allowMethod(tokenId, methods[i]!, 1, now)) return false;
    return true;
  }

  private allowMethod(tokenId: string, method: string, n: number, now: number): boolean {
    const table = this.methods.get(method);
    if (table === undefined) return true;
    const wait = table.take(tokenId, n, now);
    return wait === 0 || this.refuse(SCOPE_METHOD, wait);
  }
}
