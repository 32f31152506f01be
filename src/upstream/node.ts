// One upstream node: its keep-alive pool and the live state routing reads. Every field is
// set in the constructor so the object keeps one shape.

import { NodeLatency } from '../metrics/latency-buckets.js';
import { NodeBudget, type BudgetConfig } from '../routing/budget.js';
import { NodeMark } from '../routing/high-water.js';
import { RankCell, type RankedNode } from '../routing/send-rank.js';
import type { MethodListConfig } from '../routing/method-support.js';
import { ChainView } from '../solana/chain-view.js';
import type { MarkedNode } from '../routing/keyed-pick.js';
import type { NodeStateName, NodeView } from '../routing/node-view.js';
import { Http1Pool, type PipeliningDropped } from './http1/pool.js';
import { ProbeClient } from './probe-client.js';
import type { UpstreamClient } from './transport.js';
import type { UndiciClient } from './undici-client.js';

export interface NodeSpec {
  id: string;
  url: string;
  ws?: string | undefined;
  weight: number;
  labels?: Record<string, string> | undefined;
  expectLag?: boolean | undefined;
  /** docs/jito.md: block engines (jito) never enter the pool. */
  kind?: 'rpc' | 'jito' | undefined;
  /** Provider budget (docs/routing.md "Provider budgets"); applied by the pool's gate (node-gate.ts). */
  budget?: BudgetConfig | undefined;
  /** Methods the node serves (docs/routing.md "Unsupported methods"). */
  methods?: MethodListConfig | undefined;
}

export interface EjectPolicy {
  ejectAfterFailures: number;
  ejectBackoffMs: number;
  ejectBackoffMaxMs: number;
}

export interface ClientOptions {
  client: 'pipelined' | 'undici';
  connections: number;
  pipelining: number;
  pipelineStallMs: number;
  connectTimeoutMs: number;
  /** Told when a node drops a connection carrying pipelined requests (the node pool logs it). */
  onPipeliningDropped?: PipeliningDropped;
}

const EWMA_ALPHA = 0.2;

/** A node's WebSocket: `ws` from the config, else the HTTP URL with a ws scheme. */
export const wsUrlOf = (spec: NodeSpec): string => spec.ws ?? spec.url.replace(/^http/i, 'ws');

let undiciClient: typeof UndiciClient | null = null;

/** `upstream.client: undici` needs this awaited before its nodes are made: undici (a large
 * module with a WebAssembly parser) is loaded only by the gateways that use it. */
export async function loadUndiciClient(): Promise<void> {
  undiciClient ??= (await import('./undici-client.js')).UndiciClient;
}

function newUndiciClient(url: string, connections: number, connectTimeoutMs: number): UpstreamClient {
  if (undiciClient === null) throw new Error('upstream.client undici: loadUndiciClient() was not awaited');
  return new undiciClient(url, connections, connectTimeoutMs);
}

export class UpstreamNode implements NodeView, MarkedNode, RankedNode {
  readonly id: string;
  readonly url: string;
  readonly origin: string;
  readonly path: string;
  /** The node's WebSocket: `ws` from the config, else the HTTP URL with a ws scheme. */
  readonly wsUrl: string;
  /** Bit used in a request's tried-nodes mask (nodes past 31 share bit 31). */
  readonly bit: number;
  /** Carries the traffic. */
  readonly client: UpstreamClient;
  /** Health probes: connections of their own, so they never queue behind traffic. */
  readonly probes: ProbeClient;
  /** nodes[].labels (label routing); a reload may change them (NodePool.applyNodeSettings). */
  labels: Readonly<Record<string, string>> | undefined;
  /** nodes[].expectLag: falling behind is its purpose, not news (a reload may change it). */
  expectLag: boolean;
  /** Highest slot served to affinity keys, shared by every worker (docs/routing.md "Monotonic reads"). */
  readonly mark: NodeMark;
  /** Its processed, confirmed and finalized slots (docs/solana-routing.md "Chain view"). */
  readonly chain: ChainView;
  /** Its send-ranking score, written by the control plane (docs/landing.md "Sends go where they land"). */
  readonly rank: RankCell;
  /** Usable at the last routing refresh (a change to usable makes it returning: docs/routing.md "Monotonic reads"). */
  wasUsable: boolean;
  /** The slot of the last probe the routing refresh saw (a lower one means the node went back). */
  lastProbedSlot: number;
  weight: number;
  drained: boolean;
  state: NodeStateName;
  slot: number;
  inflight: number;
  ewmaMs: number;
  consecutiveFailures: number;
  ejectedUntil: number;
  backoffMs: number;
  probing: boolean;
  lastError: string | null;
  requests: number;
  failures: number;
  /** Ring of (time, requests) samples taken each second, for the recent request rate. */
  private readonly rateTimes = new Float64Array(6);
  private readonly rateCounts = new Float64Array(6);
  private rateNext = 0;
  /** Successful attempts' durations: rolling HDR window (admin API) and Prometheus buckets. */
  readonly latency: NodeLatency;
  /** Its provider budget, 429 cooldown and cost figures (routing/budget.ts); unlimited until configured. */
  readonly budget: NodeBudget;

  constructor(
    spec: NodeSpec,
    index: number,
    private readonly policy: EjectPolicy,
    co: ClientOptions,
  ) {
    const u = new URL(spec.url);
    this.id = spec.id;
    this.url = spec.url;
    this.origin = u.origin;
    this.path = (u.pathname || '/') + u.search;
    this.wsUrl = wsUrlOf(spec);
    this.bit = 1 << Math.min(index, 31);
    this.client =
      co.client === 'undici'
        ? newUndiciClient(spec.url, co.connections, co.connectTimeoutMs)
        : new Http1Pool(
            spec.url,
            { connections: co.connections, pipelining: co.pipelining, stallMs: co.pipelineStallMs, connectTimeoutMs: co.connectTimeoutMs, idleMs: 4_000 },
            this,
            co.onPipeliningDropped,
          );
    this.probes = new ProbeClient(spec.url);
    this.labels = spec.labels;
    this.expectLag = spec.expectLag === true;
    this.mark = new NodeMark();
    this.chain = new ChainView();
    this.rank = new RankCell();
    this.wasUsable = true;
    this.lastProbedSlot = -1;
    this.weight = spec.weight;
    this.drained = spec.weight === 0;
    this.state = 'healthy';
    this.slot = -1;
    this.inflight = 0;
    this.ewmaMs = 1;
    this.consecutiveFailures = 0;
    this.ejectedUntil = 0;
    this.backoffMs = policy.ejectBackoffMs;
    this.probing = false;
    this.lastError = null;
    this.requests = 0;
    this.failures = 0;
    this.latency = new NodeLatency();
    this.budget = new NodeBudget();
  }

  /** The log level of a change from `from` to the current state: warn, except a node meant to lag moving between healthy and lagging. */
  stateChangeLevel(from: string): 'info' | 'warn' {
    const lagOnly = (s: string): boolean => s === 'healthy' || s === 'lagging';
    return this.expectLag && lagOnly(from) && lagOnly(this.state) ? 'info' : 'warn';
  }

  /** Called once a second by the pool. */
  sampleRate(now: number): void {
    this.rateTimes[this.rateNext] = now;
    this.rateCounts[this.rateNext] = this.requests;
    this.rateNext = (this.rateNext + 1) % this.rateTimes.length;
  }

  /** Attempts per second since the oldest sample in the ring (~5 s, less just after start). */
  recentRps(now: number): number {
    const len = this.rateTimes.length;
    for (let k = 0; k < len; k++) {
      const i = (this.rateNext + k) % len;
      const t = this.rateTimes[i]!;
      if (t === 0) continue;
      return now > t ? ((this.requests - this.rateCounts[i]!) * 1000) / (now - t) : 0;
    }
    return 0;
  }

  /** `now`: performance.now() when the attempt ended. */
  recordSuccess(ms: number, now: number): void {
    this.latency.record(ms, now);
    this.ewmaMs += EWMA_ALPHA * (ms - this.ewmaMs);
    this.consecutiveFailures = 0;
  }

  /** A live-traffic failure; ejects the node after too many in a row. */
  recordFailure(reason: string, now: number): void {
    this.failures++;
    this.lastError = reason;
    if (++this.consecutiveFailures >= this.policy.ejectAfterFailures && this.state !== 'ejected') this.eject(now);
  }

  eject(now: number): void {
    this.state = 'ejected';
    this.wasUsable = false;
    this.ejectedUntil = now + this.backoffMs;
    this.backoffMs = Math.min(this.backoffMs * 2, this.policy.ejectBackoffMaxMs);
  }

  /** A successful probe of an ejected node (half-open) lets traffic back in. */
  readmit(): void {
    this.consecutiveFailures = 0;
    this.state = 'healthy';
  }

  /** A node that stayed healthy for a whole probe interval earns its short backoff back. */
  resetBackoff(): void {
    this.backoffMs = this.policy.ejectBackoffMs;
  }

  async close(): Promise<void> {
    await Promise.all([this.client.close(), this.probes.close()]);
  }

  async destroy(): Promise<void> {
    await Promise.all([this.client.destroy(), this.probes.destroy()]);
  }
}
