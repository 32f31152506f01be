// The control plane's side of the data-plane workers (README "Architecture"): starts them on the
// shared port, sends what changed (tokens, node health, operator changes, config; a token
// change or a reload is acknowledged once every worker says it applied it), and folds
// their once-a-second reports into the one view the admin API, /metrics and the usage store
// read: usage into the control plane's meter, landing counts into its figures, request
// counters into the exporter, per-node attempts, failures and latency into the control plane's
// copy of each node.

import type { CacheCounts } from '../cache/account-cache.js';
import { Worker } from 'node:worker_threads';
import type { Config, TlsConfig } from '../config/schema.js';
import { reservePort } from '../gateway/client-listener.js';
import type { LimitBuffers } from '../limits/limiter.js';
import type { TokenTable } from '../gateway/token-table.js';
import type { LandingFigures } from '../landing/figures.js';
import type { Logger } from '../log.js';
import { LatencyHistogram } from '../metrics/histogram.js';
import type { GatewayMetrics } from '../metrics/prometheus.js';
import type { ConsumptionTally } from '../limits/consumption-tally.js';
import type { NodePool } from '../upstream/pool.js';
import type { UsageMeter } from '../usage/meter.js';
import type { FromWorker, NodeHealth, ToWorker, WorkerInit, WorkerReport } from './messages.js';
import { TokenAcks } from './token-acks.js';

const ENTRY = new URL('./worker-main.js', import.meta.url);

export interface WorkerParts {
  log: Logger;
  tokens: TokenTable;
  /** The control plane's pool: it probes; its nodes carry the folded figures. */
  pool: NodePool;
  meter: UsageMeter;
  metrics: GatewayMetrics;
  limits: LimitBuffers;
  /** Where the workers' transaction-landing counts are added (docs/landing.md "Figures"). */
  landing: LandingFigures;
}

interface Slot {
  worker: Worker;
  inflight: number;
  /** Client requests answered, from the reports (how traffic spreads over workers). */
  requests: number;
  /** Attempts in flight per node id, as last reported. */
  nodeInflight: Map<string, number>;
  ws: WorkerReport['ws'];
  drained: (() => void) | null;
  /** Resolves the reload waiting for this worker to apply config `seq`. */
  configured: { seq: number; done: () => void } | null;
  exited: boolean;
}

export function nodeHealth(pool: NodePool): NodeHealth[] {
  return pool.nodes.map((n) => ({
    id: n.id,
    state: n.state,
    slot: n.slot,
    ejectedUntil: n.ejectedUntil,
    weight: n.weight,
    drained: n.drained,
    probeMs: n.ewmaMs,
    mark: n.mark.buffer,
    chain: n.chain.buffer,
    rank: n.rank.buffer,
    book: pool.fresh?.book.buffer,
    freshCounts: pool.fresh?.counts.buffer as SharedArrayBuffer | undefined,
  }));
}

export class DataPlaneWorkers {
  private readonly slots: Slot[] = [];
  port = 0;
  wsPort = 0;
  private tokensQueued = false;
  private readonly tokenAcks: TokenAcks;
  /** With `redis.url`: where the workers' consumption goes for the sync with Redis (src/shared/). */
  tally: ConsumptionTally | null = null;
  /** Where the workers' account cache counts go (the control plane's cache feed). */
  onCacheCounts: ((counts: CacheCounts) => void) | null = null;

  constructor(
    private readonly config: Config,
    private readonly parts: WorkerParts,
  ) {
    this.tokenAcks = new TokenAcks(parts.log);
  }

  /** Starts `count` workers on the configured ports (`port` 0: on a free port found here). */
  async start(count: number): Promise<void> {
    // uWS sets SO_REUSEPORT only when it binds a given port: an ephemeral port cannot be
    // joined, so one is picked first.
    this.port = this.config.rpc.port === 0 ? await reservePort(this.config.rpc.host, 0) : this.config.rpc.port;
    this.wsPort = this.config.rpc.wsPort;
    const all: Promise<unknown>[] = [];
    for (let i = 0; i < count; i++) all.push(this.spawn(i, this.port, this.wsPort));
    await Promise.all(all);
    const { tokens, pool } = this.parts;
    tokens.onChanged(() => this.queueTokens());
    pool.healthListeners.push(() => this.broadcast({ type: 'health', nodes: nodeHealth(pool) }));
  }

  private spawn(index: number, port: number, wsPort: number): Promise<{ port: number; wsPort: number }> {
    const { tokens, pool } = this.parts;
    const init: WorkerInit = { index, config: this.config, port, wsPort, limits: this.parts.limits, tokens: tokens.entries(), health: nodeHealth(pool) };
    const worker = new Worker(ENTRY, { workerData: init });
    const slot: Slot = {
      worker,
      inflight: 0,
      requests: 0,
      nodeInflight: new Map(),
      ws: { connections: 0, sharedSubscriptions: 0, upstreamSubscriptions: {}, redundancy: {} },
      drained: null,
      configured: null,
      exited: false,
    };
    this.slots[index] = slot;
    this.tokenAcks.join(index);
    return new Promise((resolve, reject) => {
      worker.on('message', (m: FromWorker) => {
        if (m.type === 'listening') resolve({ port: m.port, wsPort: m.wsPort });
        else if (m.type === 'failed') reject(new Error(m.message));
        else if (m.type === 'report') this.fold(slot, m);
        else if (m.type === 'drained') slot.drained?.();
        else if (m.type === 'tokensApplied') this.tokenAcks.ack(index, m.gen);
        else if (m.type === 'configured' && slot.configured?.seq === m.seq) slot.configured.done();
        else if (m.type === 'consumed') this.tally?.merge(m.consumed);
        else if (m.type === 'cacheCounts') this.onCacheCounts?.(m.counts);
      });
      worker.on('error', (err) => {
        this.parts.log.error({ err, worker: index }, 'data-plane worker failed');
        reject(err);
      });
      worker.on('exit', (code) => {
        slot.exited = true;
        slot.drained?.();
        slot.configured?.done();
        this.tokenAcks.gone(index);
        if (code !== 0) this.parts.log.error({ worker: index, code }, 'data-plane worker exited');
        reject(new Error(`data-plane worker ${index} exited with code ${code} before listening`));
      });
    });
  }

  private seq = 0;

  /** Sends a reloaded config; resolves once every worker applied it (a reload answers then). */
  reconfigure(config: Config, limits: LimitBuffers, certificates: TlsConfig | null): Promise<void> {
    const seq = ++this.seq;
    return Promise.all(
      this.slots.map(
        (s) =>
          new Promise<void>((resolve) => {
            if (s.exited) return resolve();
            s.configured = { seq, done: resolve };
            s.worker.postMessage({ type: 'config', config, limits, certificates, seq } satisfies ToWorker);
          }),
      ),
    ).then(() => {});
  }

  broadcast(m: ToWorker): void {
    for (const s of this.slots) if (!s.exited) s.worker.postMessage(m);
  }

  /** Token changes come in bursts (a sync applies many): one snapshot per turn of the loop. */
  private queueTokens(): void {
    if (this.tokensQueued) return;
    this.tokensQueued = true;
    setImmediate(() => {
      if (this.tokensQueued) this.sendTokens();
    });
  }

  private sendTokens(): void {
    this.tokensQueued = false;
    this.broadcast({ type: 'tokens', entries: this.parts.tokens.entries(), gen: this.tokenAcks.next() });
  }

  /**
   * Resolves once every worker serves requests from the control plane's token table as it is
   * now (read your writes), or after a bounded wait that logs the workers that did not answer
   * (token-acks.ts).
   */
  tokensApplied(): Promise<void> {
    // A snapshot still queued for the next turn of the loop goes now: the caller waits for it.
    if (this.tokensQueued) this.sendTokens();
    return this.tokenAcks.wait();
  }

  private fold(slot: Slot, r: WorkerReport): void {
    const { meter, metrics, pool, log, landing } = this.parts;
    meter.merge(r.usage);
    if (r.landing) landing.add(r.landing);
    metrics.merge(r.requests, r.duration, r.durationSumMs, r.rateLimited);
    metrics.mergeCallEvents(r.callEvents);
    slot.inflight = r.inflight;
    slot.ws = r.ws;
    for (const q of r.requests) slot.requests += q.count;
    const now = performance.now();
    let ejected = false;
    for (const d of r.nodes) {
      slot.nodeInflight.set(d.id, d.inflight);
      const n = pool.byId(d.id);
      if (n === undefined) continue;
      n.requests += d.requests;
      n.failures += d.failures;
      if (d.lastError !== null) n.lastError = d.lastError;
      let inflight = 0;
      for (const s of this.slots) inflight += s.nodeInflight.get(d.id) ?? 0;
      n.inflight = inflight;
      if (d.latency !== null) n.latency.window.addAt(LatencyHistogram.decode(d.latency), now);
      n.latency.buckets.addCounts(d.buckets, d.bucketsSumMs);
      if (d.costs.some((v) => v !== 0)) n.budget.addFigures(d.costs, Date.now());
      if (d.ejected && n.state !== 'ejected') {
        // One worker's live failures eject the node for all; the prober readmits it.
        const from = n.state;
        n.eject(Date.now());
        log.warn({ node: n.id, from, to: n.state, reason: d.lastError ?? undefined }, 'node state changed');
        ejected = true;
      }
    }
    if (ejected) this.broadcast({ type: 'health', nodes: nodeHealth(pool) });
  }

  requestsByWorker(): number[] {
    return this.slots.map((s) => s.requests);
  }

  get inflight(): number {
    let n = 0;
    for (const s of this.slots) n += s.inflight;
    return n;
  }

  ws(): WorkerReport['ws'] {
    const out: WorkerReport['ws'] = { connections: 0, sharedSubscriptions: 0, upstreamSubscriptions: {}, redundancy: {} };
    for (const s of this.slots) {
      out.connections += s.ws.connections;
      out.sharedSubscriptions += s.ws.sharedSubscriptions;
      for (const [node, n] of Object.entries(s.ws.upstreamSubscriptions)) out.upstreamSubscriptions[node] = (out.upstreamSubscriptions[node] ?? 0) + n;
      for (const [node, c] of Object.entries(s.ws.redundancy)) {
        const sum = (out.redundancy[node] ??= { first: 0, dropped: 0 });
        sum.first += c.first;
        sum.dropped += c.dropped;
      }
    }
    return out;
  }

  /** Every worker stops accepting, finishes its in-flight requests and sends its last report. */
  async drain(graceMs: number): Promise<void> {
    await Promise.all(
      this.slots.map(
        (s) =>
          new Promise<void>((resolve) => {
            if (s.exited) return resolve();
            s.drained = resolve;
            s.worker.postMessage({ type: 'drain', graceMs } satisfies ToWorker);
          }),
      ),
    );
  }

  /**
   * Immediate stop: in-flight requests are dropped, but each worker closes uWS itself (a
   * thread terminated from outside with uWS open aborts the whole process).
   */
  async stop(): Promise<void> {
    await this.drain(0);
  }
}
