// Prometheus exporter. The hot path only bumps plain counters (nested Maps of small cell
// objects, bounded in size); prom-client's registry formats them at scrape time through
// metrics whose values are computed in `get()`. Node gauges are read from the live pool then.
//
// Cardinality: method labels come from clients, so at most `maxMethods` distinct names are
// kept (names longer than 64 characters never are); later ones count as `(other)`. Node
// labels are configured node ids, plus `(none)` (no node served the answer) and
// `(multiple)` (a batch split over several nodes). Status labels are HTTP status codes.

import { collectDefaultMetrics, Registry } from 'prom-client';
import type { NodeBudget } from '../routing/budget.js';
import { bestSlot, NODE_STATES, slotLag, type NodeView } from '../routing/node-view.js';
import { Buckets } from './latency-buckets.js';
import { CALL_EVENTS, type CallEvent, type RequestRecorder } from './recorder.js';
import { MONOTONIC_REASONS, type NodeMark } from '../routing/high-water.js';
import type { ChainView } from '../solana/chain-view.js';
import { computed, type Labels, type Sample } from './computed.js';
import { budgetSeries } from './budget-series.js';
import { landingSeries, type LandingSeriesCounts } from './landing-series.js';
import { solanaSeries } from './solana-series.js';
import { wsSeries, type WsFigures } from './ws-series.js';

export const METHOD_NONE = '(none)';
export const METHOD_BATCH = '(batch)';
export const METHOD_OTHER = '(other)';
export const NODE_NONE = '(none)';
export const NODE_MULTIPLE = '(multiple)';
export const DEFAULT_MAX_METHODS = 256;
const MAX_METHOD_LENGTH = 64;

/** What the node series read of a node. */
export interface MetricsNode extends NodeView {
  readonly requests: number;
  readonly failures: number;
  readonly latency: { readonly buckets: Buckets };
  /** High-water mark and monotonic-read counters, shared by every worker (routing/high-water.ts). */
  readonly mark?: NodeMark;
  /** Its chain view (solana/chain-view.ts), shared by every worker. */
  readonly chain?: ChainView;
  /** Provider budget and cost figures (routing/budget.ts). */
  readonly budget?: NodeBudget;
}

export interface MetricsSources {
  /** The pool's current nodes. */
  nodes(): readonly MetricsNode[];
  /** Client requests accepted and not yet answered. */
  inflight(): number;
}

class Cell {
  n = 0;
}

/** status line → node label → count */
type StatusMap = Map<string, Map<string, Cell>>;

function histogramSamples(name: string, labels: Labels, b: Buckets, out: Sample[]): void {
  let cum = 0;
  for (let i = 0; i < b.boundsSec.length; i++) {
    cum += b.counts[i]!;
    out.push({ metricName: name + '_bucket', labels: { ...labels, le: String(b.boundsSec[i]) }, value: cum });
  }
  cum += b.counts[b.boundsSec.length]!;
  out.push({ metricName: name + '_bucket', labels: { ...labels, le: '+Inf' }, value: cum });
  out.push({ metricName: name + '_sum', labels, value: b.sumMs / 1000 });
  out.push({ metricName: name + '_count', labels, value: b.count });
}

let processRegistry: Registry | null = null;

/** Process metrics (CPU, memory, event loop lag, GC…), one set per process. */
function processMetrics(): Registry {
  if (processRegistry === null) {
    processRegistry = new Registry();
    collectDefaultMetrics({ register: processRegistry });
  }
  return processRegistry;
}

export class GatewayMetrics implements RequestRecorder {
  readonly registry = new Registry();
  readonly contentType = Registry.PROMETHEUS_CONTENT_TYPE;
  private readonly methods = new Map<string, StatusMap>();
  private readonly other: StatusMap = new Map();
  private clientMethods = 0;
  private readonly duration = new Buckets();
  private readonly limited = new Map<string, Cell>();
  /** Counts of CALL_EVENTS, by name. */
  private readonly callEvents = new Map<string, Cell>(CALL_EVENTS.map((e) => [e, new Cell()]));

  constructor(
    private readonly src: MetricsSources,
    readonly maxMethods = DEFAULT_MAX_METHODS,
  ) {
    this.methods.set(METHOD_NONE, new Map());
    this.methods.set(METHOD_BATCH, new Map());
    this.methods.set(METHOD_OTHER, this.other);
    this.register();
  }

  request(method: string, batch: boolean, status: string, nodeIds: string, ms: number): void {
    const key = batch ? METHOD_BATCH : method === '' ? METHOD_NONE : method;
    let byStatus = this.methods.get(key);
    if (byStatus === undefined) byStatus = this.addMethod(key);
    let byNode = byStatus.get(status);
    if (byNode === undefined) byStatus.set(status, (byNode = new Map()));
    const node = nodeIds === '' ? NODE_NONE : nodeIds.indexOf(',') === -1 ? nodeIds : NODE_MULTIPLE;
    let cell = byNode.get(node);
    if (cell === undefined) byNode.set(node, (cell = new Cell()));
    cell.n++;
    this.duration.observeMs(ms);
  }

  /**
   * Adds counts a data-plane worker recorded since its last report (README "Architecture"):
   * one exporter for the whole gateway, whatever the number of workers.
   */
  merge(
    requests: readonly { method: string; batch: boolean; status: string; nodeIds: string; count: number }[],
    duration: readonly number[],
    durationSumMs: number,
    rateLimited: Record<string, number>,
  ): void {
    for (const r of requests) {
      const key = r.batch ? METHOD_BATCH : r.method === '' ? METHOD_NONE : r.method;
      let byStatus = this.methods.get(key);
      if (byStatus === undefined) byStatus = this.addMethod(key);
      let byNode = byStatus.get(r.status);
      if (byNode === undefined) byStatus.set(r.status, (byNode = new Map()));
      const node = r.nodeIds === '' ? NODE_NONE : r.nodeIds.indexOf(',') === -1 ? r.nodeIds : NODE_MULTIPLE;
      let cell = byNode.get(node);
      if (cell === undefined) byNode.set(node, (cell = new Cell()));
      cell.n += r.count;
    }
    this.duration.addCounts(duration, durationSumMs);
    for (const [scope, n] of Object.entries(rateLimited)) {
      let cell = this.limited.get(scope);
      if (cell === undefined) {
        if (this.limited.size >= 16) continue;
        this.limited.set(scope, (cell = new Cell()));
      }
      cell.n += n;
    }
  }

  private addMethod(method: string): StatusMap {
    if (this.clientMethods >= this.maxMethods || method.length > MAX_METHOD_LENGTH) return this.other;
    const m: StatusMap = new Map();
    this.methods.set(method, m);
    this.clientMethods++;
    return m;
  }

  rateLimited(scope: string): void {
    let cell = this.limited.get(scope);
    if (cell === undefined) {
      if (this.limited.size >= 16) return;
      this.limited.set(scope, (cell = new Cell()));
    }
    cell.n++;
  }

  callEvent(kind: CallEvent): void {
    this.callEvents.get(kind)!.n++;
  }

  /** Adds a worker's call-event counts since its last report. */
  mergeCallEvents(counts: Record<string, number> | undefined): void {
    if (counts === undefined) return;
    for (const [kind, n] of Object.entries(counts)) {
      const cell = this.callEvents.get(kind);
      if (cell !== undefined) cell.n += n;
    }
  }

  /** Series of the shared state across instances (docs/routing.md "Shared limits across instances (Redis)"), when `redis.url` is set. */
  watchRedis(src: { up(): boolean; syncFailures(): number }): void {
    this.registry.registerMetric(
      computed('jumpgate_redis_up', '1 while Redis answers the limit syncs, 0 while limits are enforced per instance', 'gauge', () => [
        { labels: {}, value: src.up() ? 1 : 0 },
      ]),
    );
    this.registry.registerMetric(
      computed('jumpgate_redis_sync_failures_total', 'Limit syncs with Redis that failed (their consumption stayed local)', 'counter', () => [
        { labels: {}, value: src.syncFailures() },
      ]),
    );
  }

  /** WebSocket figures, set once the data plane runs (docs/instances.md "Running several instances": the dashboard's WS panels). */
  private wsView: (() => WsFigures) | null = null;

  watchWs(view: () => WsFigures): void {
    this.wsView = view;
  }

  /** Fresh-state routing's counters (docs/solana-routing.md), for Solana pools. */
  private freshView: (() => { count(cause: number): number } | null) | null = null;

  watchFresh(view: () => { count(cause: number): number } | null): void {
    this.freshView = view;
  }

  /** Transaction landing per node since start (docs/landing.md "Where they show"). */
  watchLanding(nodes: () => ReadonlyMap<string, LandingSeriesCounts>): void {
    for (const m of landingSeries(nodes)) this.registry.registerMetric(m);
  }

  /** The exposition text (gateway metrics, then process metrics). */
  async text(): Promise<string> {
    const [own, proc] = await Promise.all([this.registry.metrics(), processMetrics().metrics()]);
    return own + proc;
  }

  private register(): void {
    const r = this.registry;
    const nodes = (): readonly MetricsNode[] => this.src.nodes();
    const perNode = (value: (n: MetricsNode) => number) => (): Sample[] => nodes().map((n) => ({ labels: { node: n.id }, value: value(n) }));

    r.registerMetric(
      computed(
        'jumpgate_requests_total',
        'Client HTTP requests answered, by JSON-RPC method ((batch) for batches), HTTP status and serving node',
        'counter',
        () => {
          const sums = new Map<string, Sample>();
          for (const [method, byStatus] of this.methods) {
            for (const [line, byNode] of byStatus) {
              const sp = line.indexOf(' ');
              const status = sp === -1 ? line : line.slice(0, sp);
              for (const [node, cell] of byNode) {
                const k = method + '\0' + status + '\0' + node;
                const s = sums.get(k);
                if (s === undefined) sums.set(k, { labels: { method, status, node }, value: cell.n });
                else s.value += cell.n;
              }
            }
          }
          return [...sums.values()];
        },
      ),
    );
    r.registerMetric(
      computed('jumpgate_request_duration_seconds', 'Time from a request being accepted to its answer', 'histogram', () => {
        const out: Sample[] = [];
        histogramSamples('jumpgate_request_duration_seconds', {}, this.duration, out);
        return out;
      }),
    );
    r.registerMetric(
      computed('jumpgate_inflight_requests', 'Client requests accepted and not yet answered', 'gauge', () => [{ labels: {}, value: this.src.inflight() }]),
    );
    r.registerMetric(
      computed('jumpgate_rate_limited_total', 'Requests refused by a rate limit (HTTP 429, code 7429), by scope', 'counter', () =>
        [...this.limited].map(([scope, c]) => ({ labels: { scope }, value: c.n })),
      ),
    );
    const event = (name: string, kind: CallEvent, help: string) =>
      r.registerMetric(computed(name, help, 'counter', () => [{ labels: {}, value: this.callEvents.get(kind)!.n }]));
    event(
      'jumpgate_hedges_fired_total',
      'hedge_fired',
      'Hedged reads: extra attempts sent because the first node was slower than its percentile (docs/routing.md "Hedged reads")',
    );
    event('jumpgate_hedges_won_total', 'hedge_won', 'Hedged reads answered by a hedge rather than by the first node');
    event('jumpgate_broadcasts_total', 'broadcast', 'Calls sent to more than one node at once (docs/routing.md "Broadcast sends")');
    event(
      'jumpgate_coalesced_joins_total',
      'coalesced',
      'Client calls answered by an identical call already in flight instead of a call of their own (docs/routing.md "Coalescing")',
    );
    r.registerMetric(
      computed('jumpgate_node_state', 'Node health state: 1 for the current state, 0 for the others', 'gauge', () => {
        const out: Sample[] = [];
        for (const n of nodes()) for (const s of NODE_STATES) out.push({ labels: { node: n.id, state: s }, value: n.state === s ? 1 : 0 });
        return out;
      }),
    );
    r.registerMetric(
      computed(
        'jumpgate_node_weight',
        'Operator weight of the node',
        'gauge',
        perNode((n) => n.weight),
      ),
    );
    r.registerMetric(
      computed(
        'jumpgate_node_drained',
        '1 when the node is drained by the operator',
        'gauge',
        perNode((n) => (n.drained ? 1 : 0)),
      ),
    );
    r.registerMetric(
      computed(
        'jumpgate_node_slot',
        'Last slot (block number) the node reported; -1 unknown',
        'gauge',
        perNode((n) => n.slot),
      ),
    );
    r.registerMetric(
      computed('jumpgate_node_slot_lag', 'Slots behind the best node (omitted while unknown)', 'gauge', () => {
        const list = nodes();
        const best = bestSlot(list);
        const out: Sample[] = [];
        for (const n of list) {
          const lag = slotLag(n, best);
          if (lag !== null) out.push({ labels: { node: n.id }, value: lag });
        }
        return out;
      }),
    );
    r.registerMetric(
      computed(
        'jumpgate_node_inflight',
        'Attempts in flight to the node',
        'gauge',
        perNode((n) => n.inflight),
      ),
    );
    r.registerMetric(
      computed(
        'jumpgate_node_attempts_total',
        'Attempts sent to the node (retries included)',
        'counter',
        perNode((n) => n.requests),
      ),
    );
    r.registerMetric(
      computed(
        'jumpgate_node_failures_total',
        'Attempts to the node that failed (connect error, timeout, reset, 5xx, unusable body; a 429 is counted in jumpgate_node_rate_limited_total instead)',
        'counter',
        perNode((n) => n.failures),
      ),
    );
    for (const m of budgetSeries(nodes)) r.registerMetric(m);
    r.registerMetric(
      computed('jumpgate_node_latency_seconds', 'Duration of successful attempts to the node', 'histogram', () => {
        const out: Sample[] = [];
        for (const n of nodes()) histogramSamples('jumpgate_node_latency_seconds', { node: n.id }, n.latency.buckets, out);
        return out;
      }),
    );
    const ws = (): WsFigures | null => this.wsView?.() ?? null;
    for (const m of wsSeries(ws)) r.registerMetric(m);
    // Monotonic reads (docs/routing.md "Monotonic reads"): read straight from the shared marks.
    r.registerMetric(
      computed(
        'jumpgate_node_high_water_slot',
        'Highest slot the node served to an affinity key (0 none)',
        'gauge',
        perNode((n) => n.mark?.slot ?? 0),
      ),
    );
    const byReason = (value: (m: NodeMark, reason: number) => number) => (): Sample[] => {
      const out: Sample[] = [];
      for (const n of nodes()) {
        if (n.mark === undefined) continue;
        for (let i = 0; i < MONOTONIC_REASONS.length; i++) out.push({ labels: { node: n.id, reason: MONOTONIC_REASONS[i]! }, value: value(n.mark, i) });
      }
      return out;
    };
    r.registerMetric(
      computed(
        'jumpgate_monotonic_waits_total',
        'Keyed calls that waited for a node to catch up with the node they left (node) and why it was left (reason)',
        'counter',
        byReason((m, i) => m.waits(i)),
      ),
    );
    // Solana routing (docs/solana-routing.md): chain views and fresh-state routing counters.
    for (const m of solanaSeries(nodes, () => this.freshView?.() ?? null)) r.registerMetric(m);
    r.registerMetric(
      computed(
        'jumpgate_monotonic_refusals_total',
        'Keyed calls answered 7505: no node caught up within affinity.monotonicWaitMs',
        'counter',
        byReason((m, i) => m.refusals(i)),
      ),
    );
  }
}
