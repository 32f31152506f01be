// The long-lived parts the request path calls, one set per data plane (the inline one, or each
// worker thread's): built once, they keep their state (buckets, calls in flight, connections)
// for the process's life; a reload hands each the new configuration through its own typed
// reconfigure().

import { ACCOUNT_METHODS, CACHE_NODE_ID, cacheSettings, type AccountCache } from '../cache/account-cache.js';
import type { Config } from '../config/schema.js';
import { statusLine } from '../errors.js';
import { FEE_METHOD, FEE_NODE_ID, type FeeBook } from '../fees/fee-book.js';
import type { LandingTracker } from '../landing/tracker.js';
import type { SlotHasher } from '../limits/admission.js';
import type { LimitBuffers, MissingLimitBuffers } from '../limits/limit-buffers.js';
import { RateLimiter } from '../limits/limiter.js';
import type { Logger } from '../log.js';
import { NO_METRICS, type RequestRecorder } from '../metrics/recorder.js';
import { UsageMeter } from '../usage/meter.js';
import { CallPolicy } from '../upstream/call-policy.js';
import { BlockEngines } from '../upstream/jito/engines.js';
import type { Router } from '../upstream/router.js';
import { BodyMemory } from './body-memory.js';
import { Coalescer } from './coalesce.js';
import type { Offload } from './offload.js';
import type { TokenTable } from './token-table.js';

export interface ServiceParts {
  tokens: TokenTable;
  router: Router;
  slots: SlotHasher;
  offload: Offload;
  log: Logger;
  /** Request counters (the Prometheus exporter, a worker's delta recorder, or none). */
  metrics?: RequestRecorder;
  /** Per-token usage; default: a new meter. */
  usage?: UsageMeter;
  /** Rate limits shared with other threads (RateLimiter.shared); default: this loop's own. */
  limiter?: RateLimiter;
  /** Solana: follows accepted sendTransactions until they land (docs/landing.md); default: none. */
  landing?: LandingTracker | null;
  /** `cache.accounts`: account reads answered from memory (docs/account-cache.md); default: none. */
  accountCache?: AccountCache | null;
  /** `fees.estimates`: getPriorityFeeEstimate answered here (docs/priority-fees.md); default: none. */
  fees?: FeeBook | null;
}

export class Services {
  readonly tokens: TokenTable;
  readonly router: Router;
  readonly slots: SlotHasher;
  readonly offload: Offload;
  /** Where request bodies live (slab, shared or plain memory). */
  readonly memory: BodyMemory;
  readonly log: Logger;
  readonly limiter: RateLimiter;
  /** Broadcast, hedge and coalescing rules (docs/routing.md "Broadcast sends", "Hedged reads", "Coalescing"). */
  readonly calls: CallPolicy;
  /** Identical calls in flight, shared (this data plane's). */
  readonly coalescer: Coalescer;
  readonly metrics: RequestRecorder;
  /** Per-token usage, drained by the accounts store (or a worker's report) in the background. */
  readonly usage: UsageMeter;
  /** Solana pools: tracks accepted sendTransactions until they land or expire (docs/landing.md); null otherwise. */
  readonly landing: LandingTracker | null;
  /** Account reads answered from memory (docs/account-cache.md); null when `cache.accounts` is off. */
  readonly accountCache: AccountCache | null;
  /** Jito block engines: the bundle methods and sendTransaction copies (docs/jito.md); empty when none is configured. */
  readonly engines: BlockEngines;
  /** Recent blocks' fees (docs/priority-fees.md); null when `fees.estimates` is off. */
  readonly fees: FeeBook | null;
  /** Of the last answerLocally answer: an error answer, its node label and its status line. */
  localError = false;
  localNode = '';
  localStatus = '200 OK';

  constructor(config: Config, parts: ServiceParts) {
    this.tokens = parts.tokens;
    this.router = parts.router;
    this.slots = parts.slots;
    this.offload = parts.offload;
    this.memory = new BodyMemory(parts.offload.parseThreshold);
    this.log = parts.log;
    this.limiter = parts.limiter ?? new RateLimiter(config);
    this.metrics = parts.metrics ?? NO_METRICS;
    this.calls = new CallPolicy(config.routing, this.metrics);
    this.coalescer = new Coalescer(parts.router, this.calls.windowMs, this.metrics);
    this.usage = parts.usage ?? new UsageMeter();
    this.landing = parts.landing ?? null;
    this.accountCache = parts.accountCache ?? null;
    this.engines = new BlockEngines(config, parts.log, this.landing);
    this.fees = parts.fees ?? null;
  }

  /**
   * A single request answered from this data plane's memory (the account cache, fee
   * estimates), or null when it goes to a node; `affine`: it carries an affinity.
   */
  answerLocally(body: Buffer, method: string, affine: boolean, paramsStart: number, paramsEnd: number): Buffer | string | null {
    const cache = this.accountCache;
    if (cache !== null && ACCOUNT_METHODS.has(method)) {
      const answer = cache.answer(body, method, affine);
      this.localError = cache.answeredError;
      this.localNode = CACHE_NODE_ID;
      this.localStatus = '200 OK';
      return answer;
    }
    const fees = this.fees;
    if (fees === null || method !== FEE_METHOD) return null;
    const answer = fees.answer(body, paramsStart, paramsEnd);
    this.localError = fees.answeredError;
    this.localNode = FEE_NODE_ID;
    this.localStatus = statusLine(fees.answeredHttp);
    return answer;
  }

  /**
   * A reload: every service takes its part of `next` and keeps its state. `buffers` are the
   * shared limit tables sent with the config (worker threads); the answer names those missing.
   */
  reconfigure(next: Config, buffers: LimitBuffers | null = null): MissingLimitBuffers | null {
    this.calls.reconfigure(next.routing);
    this.coalescer.reconfigure(this.calls.windowMs);
    this.landing?.reconfigure(next);
    this.engines.reconfigure(next);
    this.accountCache?.reconfigure(cacheSettings(next));
    this.fees?.reconfigure(next.fees.estimates.lookbackSlots);
    return this.limiter.reconfigure(next, buffers);
  }
}
