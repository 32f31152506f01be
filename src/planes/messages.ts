// What the control plane and the data-plane workers tell each other (README "Architecture":
// planes and workers). Plain data only: every message crosses a thread boundary by structured
// clone. Nothing here is sent per request: workers report once a second, the control plane
// sends when something changed (tokens, node health, operator changes, config).

import type { Config, TlsConfig } from '../config/schema.js';
import type { LimitBuffers } from '../limits/limiter.js';
import type { TokenRecord } from '../gateway/token-table.js';
import type { NodeHealthUpdate } from '../upstream/health.js';
import type { Consumed } from '../limits/consumption-tally.js';
import type { UsageCell } from '../usage/meter.js';
import type { LandingDelta } from '../landing/counts.js';
import type { CacheEvent } from '../cache/cache-events.js';
import type { CacheCounts } from '../cache/account-cache.js';
import type { SlotFees } from '../fees/levels.js';

/** Handed to a worker at start (workerData). */
export interface WorkerInit {
  index: number;
  config: Config;
  /** The ports to listen on (the first worker's, once known: the others share them). */
  port: number;
  wsPort: number;
  /** The rate-limit tables every worker shares (limits/limit-buffers.ts, limits/shared-bucket-table.ts). */
  limits: LimitBuffers;
  /** The token table and node health as they are when the worker starts. */
  tokens: TokenEntry[];
  health: NodeHealth[];
}

export interface TokenEntry {
  /** SHA-256 of the token, base64. */
  hash: string;
  record: TokenRecord;
}

/** One node as the control plane sees it: its prober's verdict and the operator's settings. */
/** One node as the control plane sees it: its prober's verdict, the operator's settings and the
 * shared memory every worker reads (upstream/health.ts NodeHealthUpdate). */
export type NodeHealth = NodeHealthUpdate;

export type ToWorker =
  /** The whole table; `gen` numbers the snapshots, and the worker answers `tokensApplied` with it. */
  | { type: 'tokens'; entries: TokenEntry[]; gen: number }
  | { type: 'health'; nodes: NodeHealth[] }
  /** `certificates`: changed certificate files to serve new connections with, else null. */
  | { type: 'config'; config: Config; limits: LimitBuffers; certificates: TlsConfig | null; seq: number }
  | { type: 'drain'; graceMs: number }
  /** A stop is coming: answers carry `Connection: close`; the port stays open. */
  | { type: 'closeAfterAnswers' }
  /** The account cache feed's decisions, in order (src/cache/cache-events.ts). */
  | { type: 'cacheEvents'; events: CacheEvent[] }
  /** New blocks' fee digests from the fee watcher (src/fees/watcher.ts). */
  | { type: 'feeSlots'; blocks: SlotFees[] };

/** Per node, what a worker saw since its last report. */
export interface NodeDelta {
  id: string;
  inflight: number;
  requests: number;
  failures: number;
  lastError: string | null;
  /** The node's live failures ejected it here (the control plane's prober readmits it). */
  ejected: boolean;
  /** Successful attempts' durations in µs (encoded histogram), null when none. */
  latency: string | null;
  /** Counts per Prometheus latency bucket, and their sum in ms. */
  buckets: number[];
  bucketsSumMs: number;
  /** Provider cost figures since the last report: calls, credits, 429s, cooldowns, learned exclusions (routing/budget.ts). */
  costs: number[];
}

/** Request counters since the last report: method, batch flag, status line, node label → count. */
export interface RequestDelta {
  method: string;
  batch: boolean;
  status: string;
  nodeIds: string;
  count: number;
}

export interface WorkerReport {
  type: 'report';
  index: number;
  usage: UsageCell[];
  nodes: NodeDelta[];
  requests: RequestDelta[];
  /** Request-duration bucket counts and sum (ms) since the last report. */
  duration: number[];
  durationSumMs: number;
  rateLimited: Record<string, number>;
  /** Hedges, broadcasts and coalesced joins since the last report (metrics/recorder.ts CALL_EVENTS). */
  callEvents?: Record<string, number>;
  /** Transaction tracking since the last report (src/landing/), absent when nothing was sent. */
  landing?: LandingDelta;
  inflight: number;
  ws: {
    connections: number;
    sharedSubscriptions: number;
    upstreamSubscriptions: Record<string, number>;
    redundancy: Record<string, { first: number; dropped: number }>;
  };
}

export type FromWorker =
  | { type: 'listening'; index: number; port: number; wsPort: number }
  | { type: 'failed'; index: number; message: string }
  | WorkerReport
  | { type: 'drained'; index: number }
  /** Token snapshot `gen` is the table requests are served from here from now on. */
  | { type: 'tokensApplied'; index: number; gen: number }
  /** The config of reload `seq` is applied here. */
  | { type: 'configured'; index: number; seq: number }
  /** With `redis.url`: what this worker's limiter took since its last such message (every `redis.syncMs`). */
  | { type: 'consumed'; index: number; consumed: Consumed }
  /** The account cache's hits, misses and reads per key since the last such message (every 50 ms while it is read). */
  | { type: 'cacheCounts'; index: number; counts: CacheCounts };
