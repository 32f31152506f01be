// The shared-memory buffers behind the limits when several threads serve requests: made once by
// the thread that owns the configuration, handed to the others as plain data (workerData,
// postMessage), and carried over a reload table by table.

import type { Config } from '../config/schema.js';
import { SharedBucketTable } from './shared-bucket-table.js';

/** Tables for token and method limits hold at most this many tokens each. */
export const TOKEN_TABLE = 100_000;

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

/** What the limits read of a configuration. */
export type LimitConfig = Pick<Config, 'affinity' | 'rateLimits'>;

/**
 * Buffers for every table `config` asks for. The thread that owns the configuration calls it
 * before starting the workers, and again on each reload with the buffers it handed out last
 * (`previous`): tables that still exist keep their buffer, so their buckets carry over, and only
 * tables the reload adds get a new one. It then sends the result with the new config to every
 * worker, whose limiter's reconfigure() attaches what it lacks.
 */
export function createLimitBuffers(config: LimitConfig, previous: LimitBuffers | null = null): LimitBuffers {
  const keys = previous?.keys ?? SharedBucketTable.allocate(config.affinity.maxTrackedKeys);
  const tokens = config.rateLimits.token.rate > 0 ? (previous?.tokens ?? SharedBucketTable.allocate(TOKEN_TABLE)) : null;
  const methods: MethodBuffer[] = [];
  for (const [method, r] of Object.entries(config.rateLimits.methods)) {
    if (r.rate <= 0) continue;
    methods.push({ method, buffer: methodBuffer(previous, method) ?? SharedBucketTable.allocate(TOKEN_TABLE) });
  }
  return { keys, tokens, methods };
}

export function methodBuffer(buffers: LimitBuffers | null, method: string): SharedArrayBuffer | null {
  if (buffers === null) return null;
  for (const m of buffers.methods) if (m.method === method) return m.buffer;
  return null;
}

export function listMissing(missing: MissingLimitBuffers): string {
  const names = missing.methods.map((m) => `method ${m}`);
  if (missing.tokens) names.unshift('tokens');
  return names.join(', ');
}
