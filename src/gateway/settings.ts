// What the request path reads of one configuration generation, derived once so a request never
// consults the config object or allocates lookups. Immutable: a reload builds a new Settings
// and swaps the reference (serving.ts); a request keeps the generation it started with.

import type { Config } from '../config/schema.js';
import { ClientIpResolver } from './client-ip.js';
import { headerKeys, headerNames, type HeaderKeys, type HeaderNames } from './headers.js';
import { ResponseHeads } from './response-heads.js';

export class Settings {
  readonly names: HeaderNames;
  /** The same names as bytes, for uWS calls on the hot path. */
  readonly keys: HeaderKeys;
  readonly maxBodyBytes: number;
  /** A single HTTP call's answer over this streams to the client (docs/routing.md "Large answers"). */
  readonly streamOver: number;
  /** The most of an answer held where it cannot stream; beyond: 7506. */
  readonly maxBuffered: number;
  readonly maxBatch: number;
  readonly upstreamBatch: number;
  readonly exposeNode: boolean;
  /** True when any origin is allowed ('*'), else the allowed set applies. */
  readonly corsAny: boolean;
  readonly corsOrigins: ReadonlySet<string>;
  /** Prebuilt header lines of a JSON answer (when CORS allows any origin or none applies). */
  readonly heads: ResponseHeads;
  readonly defaultTimeoutMs: number;
  readonly methodTimeouts: ReadonlyMap<string, number>;
  readonly noRetry: ReadonlySet<string>;
  /** Methods that get IP affinity when the client asked for default routing. */
  readonly autoAffinity: ReadonlySet<string>;
  /** Methods with a label rule (docs/routing.md "Label routing"): default-mode batches group their calls. */
  readonly routedMethods: ReadonlySet<string>;
  readonly clientIp: ClientIpResolver;

  constructor(config: Config) {
    const names = headerNames(config.headers.brand);
    this.names = names;
    this.keys = headerKeys(names);
    this.maxBodyBytes = config.limits.maxBodyBytes;
    this.maxBuffered = config.limits.maxBufferedAnswerBytes;
    this.streamOver = Math.min(config.limits.streamAnswersOverBytes, this.maxBuffered);
    this.maxBatch = config.limits.maxBatch;
    this.upstreamBatch = config.routing.upstreamBatch;
    this.exposeNode = config.exposeNode;
    this.corsAny = config.cors.origins.includes('*');
    this.corsOrigins = new Set(config.cors.origins);
    this.heads = new ResponseHeads(names, this.corsAny, config.exposeNode);
    this.defaultTimeoutMs = config.limits.upstreamTimeoutMs;
    this.methodTimeouts = new Map(Object.entries(config.limits.methodTimeoutMs));
    this.noRetry = new Set(config.routing.noRetryMethods);
    this.autoAffinity = new Set(config.routing.autoAffinityMethods);
    this.routedMethods = new Set(Object.keys(config.routing.methods));
    this.clientIp = new ClientIpResolver(config.trustedProxies);
    Object.freeze(this);
  }

  timeoutFor(method: string): number {
    return this.methodTimeouts.get(method) ?? this.defaultTimeoutMs;
  }
}
