// What the HTTP hot path needs, derived once from the config (and swapped on reload), so a
// request never consults the config object or allocates lookups.

import type { Logger } from 'pino';
import type { Config } from '../config/schema.js';
import { NO_METRICS, type RequestRecorder } from '../metrics/recorder.js';
import type { Router } from '../upstream/call.js';
import { CallPolicy } from '../upstream/call-policy.js';
import { Coalescer } from './coalesce.js';
import type { Offload } from './offload.js';
import { ClientIpResolver } from './client-ip.js';
import { headerKeys, headerNames, type HeaderKeys, type HeaderNames } from './headers.js';
import { RateLimiter } from './limits.js';
import { ResponseHeads } from './response-heads.js';
import { UsageMeter } from '../usage/meter.js';
import type { TokenTable } from './token-table.js';

/** Affinity key or IP → hash slot (see src/routing/keymap.ts). */
export interface SlotHasher {
  slot(key: string): number;
}

export interface Runtime {
  names: HeaderNames;
  /** The same names as bytes, for uWS calls on the hot path. */
  keys: HeaderKeys;
  tokens: TokenTable;
  router: Router;
  offload: Offload;
  log: Logger;
  maxBodyBytes: number;
  maxBatch: number;
  upstreamBatch: number;
  exposeNode: boolean;
  /** '*' when any origin is allowed, else the allowed set. */
  corsAny: boolean;
  corsOrigins: Set<string>;
  /** Prebuilt header lines of a JSON answer (when CORS allows any origin or none applies). */
  heads: ResponseHeads;
  defaultTimeoutMs: number;
  methodTimeouts: Map<string, number>;
  noRetry: Set<string>;
  /** Broadcast, hedge and coalescing settings (docs/routing.md "Broadcast sends", "Hedged reads", "Coalescing"). */
  calls: CallPolicy;
  /** Identical calls in flight, shared (this worker's). */
  coalescer: Coalescer;
  /** Methods that get IP affinity when the client asked for default routing. */
  autoAffinity: Set<string>;
  /** Methods with a label rule (docs/routing.md "Label routing"): default-mode batches group their calls. */
  routedMethods: Set<string>;
  slots: SlotHasher;
  limiter: RateLimiter;
  clientIp: ClientIpResolver;
  /** Request counters (the Prometheus exporter, or a no-op). */
  metrics: RequestRecorder;
  /** Per-token usage, drained by the accounts store in the background. */
  usage: UsageMeter;
  /** Requests accepted and not yet answered or aborted. */
  inflight: number;
  /** While draining for shutdown, answers carry `Connection: close`. */
  draining: boolean;
  onIdle: (() => void) | null;
}

export function buildRuntime(config: Config, parts: { tokens: TokenTable; router: Router; offload: Offload; log: Logger; slots: SlotHasher; metrics?: RequestRecorder; usage?: UsageMeter }): Runtime {
  const names = headerNames(config.headers.brand);
  const corsAny = config.cors.origins.includes('*');
  const metrics = parts.metrics ?? NO_METRICS;
  const calls = new CallPolicy(config, metrics);
  return {
    names,
    keys: headerKeys(names),
    tokens: parts.tokens,
    router: parts.router,
    offload: parts.offload,
    log: parts.log,
    maxBodyBytes: config.limits.maxBodyBytes,
    maxBatch: config.limits.maxBatch,
    upstreamBatch: config.routing.upstreamBatch,
    exposeNode: config.exposeNode,
    corsAny,
    corsOrigins: new Set(config.cors.origins),
    heads: new ResponseHeads(names, corsAny, config.exposeNode),
    defaultTimeoutMs: config.limits.upstreamTimeoutMs,
    methodTimeouts: new Map(Object.entries(config.limits.methodTimeoutMs)),
    noRetry: new Set(config.routing.noRetryMethods),
    calls,
    coalescer: new Coalescer(parts.router, calls.windowMs, metrics),
    autoAffinity: new Set(config.routing.autoAffinityMethods),
    routedMethods: new Set(Object.keys(config.routing.methods)),
    slots: parts.slots,
    limiter: new RateLimiter(config),
    clientIp: new ClientIpResolver(config.trustedProxies),
    metrics,
    usage: parts.usage ?? new UsageMeter(),
    inflight: 0,
    draining: false,
    onIdle: null,
  };
}

export function timeoutFor(rt: Runtime, method: string): number {
  return rt.methodTimeouts.get(method) ?? rt.defaultTimeoutMs;
}
