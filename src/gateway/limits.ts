// Rate limits (docs/routing.md "Affinity and rate limits", code 7429): hot affinity keys and IPs under key affinity,
// calls per token, and calls per token per method. A check that passes allocates nothing;
// a refusal leaves its scope and wait in `scope` / `retryAfterMs`.
//
// One thread keeps its buckets in BucketTables (`new RateLimiter(config)`). When several
// threads serve requests, each builds its limiter over the same SharedBucketTables
// (`RateLimiter.shared(config, buffers)`), so every limit holds for the whole gateway without a
// message per request. The buffers are made once, by the thread that owns the configuration,
// with createLimitBuffers(), and handed to the others as plain data (workerData, postMessage).

import type { Config } from '../config/schema.js';
import { BucketTable } from '../routing/bucket-table.js';
import { SharedBucketTable } from '../routing/shared-bucket-table.js';
import { TABLE_IP, TABLE_KEY, TABLE_METHOD_PREFIX, TABLE_TOKEN, type ConsumptionTally } from '../shared/consumption-tally.js';

export const SCOPE_KEY = 'affinity-key';
export const SCOPE_IP = 'ip';
export const SCOPE_TOKEN = 'token';
export const SCOPE_METHOD = 'method';

/** Tables for token and method limits hold at most this many tokens each. */
const TOKEN_TABLE = 100_000;

// IPs and explicit keys share the hot-key table; a leading unit keeps their buckets apart.
const TAG_IP = 0x69; // 'i'
const TAG_KEY = 0x6b; // 'k'

type Buckets = BucketTable | SharedBucketTable;

/** One method's shared table. */
export interface MethodBuffer {
  readonly method: string;
  readonly buffer: SharedArrayBuffer;
}

/** The shared tables' buffers; plain data, so it crosses threads by structured clone. */
export interface LimitBuffers {
  readonly keys: SharedArrayBuffer;
  /** null while per-token limits are off. */
  readonly tokens: SharedArrayBuffer | null;
  /** One per method with a limit (an array: method names are not safe as object keys). */
  readonly methods: readonly MethodBuffer[];
}

/** The tables a configuration needs that a shared limiter was given no buffer for. */
export interface MissingLimitBuffers {
  tokens: boolean;
  methods: string[];
}

/**
 * Buffers for every table `config` asks for. The thread that owns the configuration calls it
 * before starting the workers, and again on each reload with the buffers it handed out last
 * (`previous`): tables that still exist keep their buffer, so their buckets carry over, and only
 * tables the reload adds get a new one. It then sends the result with the new config to every
 * worker, whose configure() attaches what it lacks.
 */
export function createLimitBuffers(config: Config, previous: LimitBuffers | null = null): LimitBuffers {
  const keys = previous?.keys ?? SharedBucketTable.allocate(config.affinity.maxTrackedKeys);
  const tokens = config.rateLimits.token.rate > 0 ? (previous?.tokens ?? SharedBucketTable.allocate(TOKEN_TABLE)) : null;
  const methods: MethodBuffer[] = [];
  for (const [method, r] of Object.entries(config.rateLimits.methods)) {
    if (r.rate <= 0) continue;
    methods.push({ method, buffer: methodBuffer(previous, method) ?? SharedBucketTable.allocate(TOKEN_TABLE) });
  }
  return { keys, tokens, methods };
}

function methodBuffer(buffers: LimitBuffers | null, method: string): SharedArrayBuffer | null {
  if (buffers === null) return null;
  for (const m of buffers.methods) if (m.method === method) return m.buffer;
  return null;
}

function listMissing(missing: MissingLimitBuffers): string {
  const names = missing.methods.map((m) => `method ${m}`);
  if (missing.tokens) names.unshift('tokens');
  return names.join(', ');
}

export class RateLimiter {
  readonly keys: Buckets;
  tokens: Buckets | null;
  methods: Map<string, Buckets>;
  scope = '';
  retryAfterMs = 0;
  /**
   * Set when limits are shared across instances (`redis.url`): every passing take is added to
   * it for the control plane's sync (docs/routing.md "Shared limits across instances (Redis)").
   */
  tally: ConsumptionTally | null = null;
  /** `keys` when shared: its takeTagged() spares building 'i' + key per request. */
  private readonly sharedKeys: SharedBucketTable | null;

  /** Over BucketTables (one thread), or over the shared tables in `buffers`: see shared(). */
  constructor(config: Config, buffers: LimitBuffers | null = null) {
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
    const missing = this.configure(config, buffers);
    if (missing !== null) throw new Error(`RateLimiter: no shared buffer for ${listMissing(missing)}; make them with createLimitBuffers(config)`);
  }

  /** A limiter whose buckets every thread attached to the same `buffers` shares (createLimitBuffers()). */
  static shared(config: Config, buffers: LimitBuffers): RateLimiter {
    return new RateLimiter(config, buffers);
  }

  /**
   * Applies new rates (reload) without forgetting the current buckets where it can.
   *
   * A shared limiter keeps every table the new config still has (rates and bursts updated in
   * place) and attaches a buffer from `buffers` only for a table it lacks. Those are made by
   * the owner of the configuration (createLimitBuffers(config, previous)) and sent with it; if
   * some are not there, the answer names them and those limits stay off until configure() is
   * called again with them. One thread's limiter needs no buffers and answers null.
   */
  configure(config: Config, buffers: LimitBuffers | null = null): MissingLimitBuffers | null {
    this.keys.rate = config.affinity.keyRate;
    this.keys.burst = config.affinity.keyBurst;
    if (this.sharedKeys !== null) return this.configureShared(config, buffers);
    const t = config.rateLimits.token;
    this.tokens = t.rate > 0 ? new BucketTable(TOKEN_TABLE, t.rate, t.burst) : null;
    const methods = new Map<string, BucketTable>();
    for (const [m, r] of Object.entries(config.rateLimits.methods)) if (r.rate > 0) methods.set(m, new BucketTable(TOKEN_TABLE, r.rate, r.burst));
    this.methods = methods;
    return null;
  }

  private configureShared(config: Config, buffers: LimitBuffers | null): MissingLimitBuffers | null {
    let missing: MissingLimitBuffers | null = null;
    const t = config.rateLimits.token;
    if (t.rate <= 0) this.tokens = null;
    else if (this.tokens !== null) {
      this.tokens.rate = t.rate;
      this.tokens.burst = t.burst;
    } else if (buffers !== null && buffers.tokens !== null) this.tokens = SharedBucketTable.attach(buffers.tokens, t.rate, t.burst);
    else missing = { tokens: true, methods: [] };
    const methods = new Map<string, Buckets>();
    for (const [m, r] of Object.entries(config.rateLimits.methods)) {
      if (r.rate <= 0) continue;
      const kept = this.methods.get(m);
      if (kept !== undefined) {
        kept.rate = r.rate;
        kept.burst = r.burst;
        methods.set(m, kept);
        continue;
      }
      const buffer = methodBuffer(buffers, m);
      if (buffer !== null) methods.set(m, SharedBucketTable.attach(buffer, r.rate, r.burst));
      else (missing ??= { tokens: false, methods: [] }).methods.push(m);
    }
    this.methods = methods;
    return missing;
  }

  private refuse(scope: string, wait: number): boolean {
    this.scope = scope;
    this.retryAfterMs = wait;
    return false;
  }

  /** Hot-key bucket; `key` is the affinity key or the client IP. */
  allowKey(key: string, isIp: boolean, calls: number, now: number): boolean {
    const shared = this.sharedKeys;
    const wait = shared !== null ? shared.takeTagged(isIp ? TAG_IP : TAG_KEY, key, calls, now) : this.keys.take(isIp ? 'i' + key : 'k' + key, calls, now);
    if (wait !== 0) return this.refuse(isIp ? SCOPE_IP : SCOPE_KEY, wait);
    if (this.tally !== null) this.tally.key(isIp, key, calls);
    return true;
  }

  allowToken(tokenId: string, calls: number, now: number): boolean {
    if (this.tokens === null) return true;
    const wait = this.tokens.take(tokenId, calls, now);
    if (wait !== 0) return this.refuse(SCOPE_TOKEN, wait);
    if (this.tally !== null) this.tally.token(tokenId, calls);
    return true;
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
    if (wait !== 0) return this.refuse(SCOPE_METHOD, wait);
    if (this.tally !== null) this.tally.method(method, tokenId, n);
    return true;
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
