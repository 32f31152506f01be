// Rate limits (docs/routing.md "Affinity and rate limits", code 7429): hot affinity keys and IPs under key
// affinity, calls per token, and calls per token per method. Every check answers a refusal
// value (verdict.ts): PASS, or the scope and the wait in one number; a check that passes
// allocates nothing.
//
// One thread keeps its buckets in BucketTables (`new RateLimiter(config)`). When several
// threads serve requests, each builds its limiter over the same SharedBucketTables
// (`RateLimiter.shared(config, buffers)`, limit-buffers.ts), so every limit holds for the whole
// gateway without a message per request. A reload reconfigures the limiter in place: every
// table the new config still has keeps its buckets, in both modes.

import { BucketTable } from './bucket-table.js';
import { TABLE_IP, TABLE_KEY, TABLE_METHOD_PREFIX, TABLE_TOKEN, type ConsumptionTally } from './consumption-tally.js';
import { listMissing, methodBuffer, TOKEN_TABLE, type LimitBuffers, type LimitConfig, type MissingLimitBuffers } from './limit-buffers.js';
import { SharedBucketTable } from './shared-bucket-table.js';
import { PASS, refusal, S_IP, S_KEY, S_METHOD, S_TOKEN } from './verdict.js';

export { createLimitBuffers, type LimitBuffers, type LimitConfig, type MissingLimitBuffers } from './limit-buffers.js';

// IPs and explicit keys share the hot-key table; a leading unit keeps their buckets apart.
const TAG_IP = 0x69; // 'i'
const TAG_KEY = 0x6b; // 'k'

type Buckets = BucketTable | SharedBucketTable;

export class RateLimiter {
  readonly keys: Buckets;
  tokens: Buckets | null;
  methods: Map<string, Buckets>;
  /**
   * Set when limits are shared across instances (`redis.url`): every passing take is added to
   * it for the control plane's sync (docs/routing.md "Shared limits across instances (Redis)").
   */
  tally: ConsumptionTally | null = null;
  /** `keys` when shared: its takeTagged() spares building 'i' + key per request. */
  private readonly sharedKeys: SharedBucketTable | null;

  /** Over BucketTables (one thread), or over the shared tables in `buffers`: see shared(). */
  constructor(config: LimitConfig, buffers: LimitBuffers | null = null) {
    const a = config.affinity;
    if (buffers === null) {
      this.keys = new BucketTable(a.maxTrackedKeys, a.keyRate, a.keyBurst);
      this.sharedKeys = null;
    } else {
      this.sharedKeys = SharedBucketTable.attach(buffers.keys, a.keyRate, a.keyBurst);
      this.keys = this.sharedKeys;
    }
    this.tokens = null;
    this.methods = new Map();
    const missing = this.reconfigure(config, buffers);
    if (missing !== null) throw new Error(`RateLimiter: no shared buffer for ${listMissing(missing)}; make them with createLimitBuffers(config)`);
  }

  /** A limiter whose buckets every thread attached to the same `buffers` shares (createLimitBuffers()). */
  static shared(config: LimitConfig, buffers: LimitBuffers): RateLimiter {
    return new RateLimiter(config, buffers);
  }

  /**
   * Applies new rates (reload) and keeps every table the new config still has, with its
   * buckets: a token at its limit stays limited. A table the config adds is made here (one
   * thread) or attached from `buffers` (shared: made by the owner of the configuration with
   * createLimitBuffers(config, previous) and sent with it); if some are not there, the answer
   * names them and those limits stay off until reconfigure() is called again with them.
   */
  reconfigure(config: LimitConfig, buffers: LimitBuffers | null = null): MissingLimitBuffers | null {
    this.keys.rate = config.affinity.keyRate;
    this.keys.burst = config.affinity.keyBurst;
    let missing: MissingLimitBuffers | null = null;
    const t = config.rateLimits.token;
    this.tokens = t.rate <= 0 ? null : this.table(this.tokens, t.rate, t.burst, buffers?.tokens ?? null);
    if (t.rate > 0 && this.tokens === null) missing = { tokens: true, methods: [] };
    const methods = new Map<string, Buckets>();
    for (const [m, r] of Object.entries(config.rateLimits.methods)) {
      if (r.rate <= 0) continue;
      const table = this.table(this.methods.get(m) ?? null, r.rate, r.burst, methodBuffer(buffers, m));
      if (table !== null) methods.set(m, table);
      else (missing ??= { tokens: false, methods: [] }).methods.push(m);
    }
    this.methods = methods;
    return missing;
  }

  /** The table kept (new rates in place), a new one, or null when a shared one has no buffer. */
  private table(kept: Buckets | null, rate: number, burst: number, buffer: SharedArrayBuffer | null): Buckets | null {
    if (kept !== null) {
      kept.rate = rate;
      kept.burst = burst;
      return kept;
    }
    if (this.sharedKeys === null) return new BucketTable(TOKEN_TABLE, rate, burst);
    return buffer === null ? null : SharedBucketTable.attach(buffer, rate, burst);
  }

  /** Hot-key bucket; `key` is the affinity key or the client IP. PASS or a refusal (verdict.ts). */
  takeKey(key: string, isIp: boolean, calls: number, now: number): number {
    const shared = this.sharedKeys;
    const wait = shared !== null ? shared.takeTagged(isIp ? TAG_IP : TAG_KEY, key, calls, now) : this.keys.take(isIp ? 'i' + key : 'k' + key, calls, now);
    if (wait !== 0) return refusal(isIp ? S_IP : S_KEY, wait);
    if (this.tally !== null) this.tally.key(isIp, key, calls);
    return PASS;
  }

  takeToken(tokenId: string, calls: number, now: number): number {
    if (this.tokens === null) return PASS;
    const wait = this.tokens.take(tokenId, calls, now);
    if (wait !== 0) return refusal(S_TOKEN, wait);
    if (this.tally !== null) this.tally.token(tokenId, calls);
    return PASS;
  }

  /** `methods` lists the call's methods (one entry per call). */
  takeMethods(tokenId: string, methods: readonly string[] | string, now: number): number {
    if (this.methods.size === 0) return PASS;
    if (typeof methods === 'string') return this.takeMethod(tokenId, methods, 1, now);
    for (let i = 0; i < methods.length; i++) {
      if (methods[i] === '') continue;
      const r = this.takeMethod(tokenId, methods[i]!, 1, now);
      if (r !== PASS) return r;
    }
    return PASS;
  }

  private takeMethod(tokenId: string, method: string, n: number, now: number): number {
    const table = this.methods.get(method);
    if (table === undefined) return PASS;
    const wait = table.take(tokenId, n, now);
    if (wait !== 0) return refusal(S_METHOD, wait);
    if (this.tally !== null) this.tally.method(method, tokenId, n);
    return PASS;
  }

  /**
   * Takes `n` calls from `key`'s bucket in `table` (a tally's table id) even below zero: what
   * other instances consumed. A table this config no longer has is skipped.
   */
  debit(table: string, key: string, n: number, now: number): void {
    const t = this.tableOf(table);
    if (t === null) return;
    if (table === TABLE_KEY || table === TABLE_IP) {
      const tag = table === TABLE_IP ? TAG_IP : TAG_KEY;
      if (this.sharedKeys !== null) this.sharedKeys.debitTagged(tag, key, n, now);
      else this.keys.debit(String.fromCharCode(tag) + key, n, now);
    } else t.debit(key, n, now);
  }

  /** The rate and burst of `table` (a tally's table id); null for a table this config lacks. */
  shapeOf(table: string): { readonly rate: number; readonly burst: number } | null {
    return this.tableOf(table);
  }

  private tableOf(table: string): Buckets | null {
    if (table === TABLE_KEY || table === TABLE_IP) return this.keys;
    if (table === TABLE_TOKEN) return this.tokens;
    if (table.startsWith(TABLE_METHOD_PREFIX)) return this.methods.get(table.slice(TABLE_METHOD_PREFIX.length)) ?? null;
    return null;
  }
}
