// The two ways the data plane runs beside the control plane (README "Architecture"):
// - inline (`rpc.workers: 0`): on the control plane's own event loop, as one process with no
//   threads; what embedding and most tests use;
// - N data-plane worker threads (`rpc.workers: N | auto`): each terminates HTTP and WS on its
//   own loop for the shared port; the control plane (console, store, usage writes, admin,
//   health prober, token sync, reload) keeps the main thread, which no request waits for.
// Either way the rest of the gateway sees one ControlView: the pool the admin API shows, the
// metrics, what a reload reconfigures, and how to drain. With workers the control plane builds
// nothing that serves requests: no settings, offload or subscription hub of its own.

import type { CacheCounts } from '../cache/account-cache.js';
import type { CacheEvent } from '../cache/cache-events.js';
import type { SlotFees } from '../fees/levels.js';
import type { ReloadTarget } from '../admin/reload.js';

import { availableParallelism } from 'node:os';
import type { Config, TlsConfig } from '../config/schema.js';
import { reservePort } from '../gateway/client-listener.js';
import type { TokenTable } from '../gateway/token-table.js';
import type { ConsumptionTally } from '../limits/consumption-tally.js';
import { createLimitBuffers, RateLimiter } from '../limits/limiter.js';
import { LandingFigures } from '../landing/figures.js';
import { SendRanking } from '../landing/ranking.js';
import type { Logger } from '../log.js';
import { GatewayMetrics } from '../metrics/prometheus.js';
import type { StopList } from '../stop-list.js';
import { NodePool } from '../upstream/pool.js';
import type { SubscriptionHub } from '../upstream/ws/hub.js';
import { UsageMeter } from '../usage/meter.js';
import { startDataPlane } from './data-plane.js';
import { lockRpcPort } from './port-lock.js';
import { DataPlaneWorkers } from './workers.js';

export interface WsView {
  connections: number;
  sharedSubscriptions: number;
  upstreamSubscriptions: Record<string, number>;
  /** Per node: notifications of redundant subscriptions it delivered first, its copies dropped. */
  redundancy: Record<string, { first: number; dropped: number }>;
}

export interface ControlView {
  pool: NodePool;
  /** The limiter the Redis sync debits: inline, the one requests take from; with workers, one over their shared buffers. */
  limiter: RateLimiter;
  /** Per-token usage of every request (with workers, merged from their reports), drained by the accounts store. */
  usage: UsageMeter;
  /**
   * Transaction landing since start (docs/landing.md "Figures"): with workers, added from their
   * reports; inline, from the tracker's timer. The landing flush drains it into the store.
   */
  landing: LandingFigures;
  /** Requests in flight (with workers, as of their last reports). */
  inflight(): number;
  /** Draining or unready: answers carry `Connection: close` (/readyz answers 503). */
  draining(): boolean;
  /** What a reload reconfigures after the node pool (the data plane follows in reloaded()). */
  target: ReloadTarget;
  /** The inline data plane's subscription hub; null with worker threads (each has its own). */
  hub: SubscriptionHub | null;
  metrics: GatewayMetrics;
  port: number;
  wsPort: number;
  ws(): WsView;
  /** Data-plane threads (0 inline) and the client requests each answered so far. */
  workers: number;
  requestsByWorker(): number[];
  scheme: 'http' | 'https';
  /** New connections get the certificate in these files (a reload found them changed). */
  replaceCertificate(files: TlsConfig): void;
  /** A reload was applied to the control plane: resolves once the data plane follows (its config tokens included). */
  reloaded(config: Config): Promise<void>;
  /**
   * Resolves once every data plane serves from the token table as it is now: at once inline
   * (it reads that table), with workers once each confirmed the snapshot (bounded wait, see
   * token-acks.ts TOKENS_APPLIED_WAIT_MS). Never awaited on a request's path.
   */
  tokensApplied(): Promise<void>;
  /** Stops accepting and waits for in-flight requests (up to graceMs), with their usage counted. */
  drain(graceMs: number): Promise<void>;
  /**
   * Still accepting, but every answer from now on carries `Connection: close`: keep-alive
   * clients reconnect, and behind a balancer that has marked this gateway down they reach
   * another instance (docs/instances.md "Running several instances").
   */
  closeAfterAnswers(): void;
  /**
   * Limits shared across instances (src/shared/): every take that passes, in any thread, is
   * added to `tally`; `limiter` is then the one to debit (with workers, it is attached to their
   * shared buffers).
   */
  tallyInto(tally: ConsumptionTally): void;
  /** The account cache feed's events, to every data plane's store (src/grpc/cache-feed.ts). */
  cacheEvents(events: CacheEvent[]): void;
  /** Where every data plane's account cache counts go. */
  onCacheCounts(sink: (counts: CacheCounts) => void): void;
  /** New blocks' fee digests, to every data plane (src/fees/watcher.ts). */
  feeSlots(blocks: SlotFees[]): void;
}

/** `rpc.workers`: 'auto' is one per core. */
export function workersFor(config: Config): number {
  const w = config.rpc.workers;
  return w === 'auto' ? availableParallelism() : w;
}

type StartAccounts = (usage: UsageMeter, landing: LandingFigures) => Promise<void>;

export async function inlinePlane(config: Config, tokens: TokenTable, log: Logger, stops: StopList, startAccounts: StartAccounts): Promise<ControlView> {
  let metrics: GatewayMetrics | null = null;
  // Accounts first: store tokens are in the table before the listener opens, and the usage
  // flush stops after it (a stop list runs newest first).
  const usage = new UsageMeter();
  const landing = new LandingFigures();
  await startAccounts(usage, landing);
  // Inline holds the address's lock too: a gateway with workers on it would otherwise join.
  if (config.rpc.port !== 0) {
    const lock = await lockRpcPort(config.rpc.host, config.rpc.port);
    stops.add(() => lock.release());
  }
  const cacheSink: { fn: ((c: CacheCounts) => void) | null } = { fn: null };
  const plane = await startDataPlane(config, {
    cacheReport: (c) => cacheSink.fn?.(c),
    usage,
    tokens,
    log,
    stops,
    probes: true,
    exclusive: true,
    port: config.rpc.port,
    wsPort: config.rpc.wsPort,
    recorder: (pool, inflight) => (metrics = new GatewayMetrics({ nodes: () => pool.nodes, inflight })),
  });
  const { services, state } = plane.serving;
  const tracker = services.landing;
  if (tracker !== null) {
    const pool = plane.pool;
    landing.ranking = new SendRanking(
      () => pool.sendRank,
      () => pool.nodes,
    );
    // What a worker's report does once a second; the stop (newest first) folds in the last counts.
    const fold = (): void => {
      const d = tracker.tally.drain();
      if (d !== null) landing.add(d);
    };
    const timer = setInterval(fold, 1000);
    timer.unref();
    stops.add(() => {
      clearInterval(timer);
      fold();
    });
  }
  return {
    pool: plane.pool,
    limiter: services.limiter,
    usage: services.usage,
    landing,
    inflight: () => state.inflight,
    draining: () => state.draining,
    target: { reconfigure: (next) => void plane.reconfigure(next) },
    hub: plane.hub,
    port: plane.port,
    wsPort: plane.wsPort,
    metrics: metrics!,
    ws: () => ({
      connections: plane.wsStats.connections,
      sharedSubscriptions: plane.hub.sharedCount,
      upstreamSubscriptions: plane.hub.upstreamSubscriptions(),
      redundancy: plane.hub.redundancyCounts(),
    }),
    workers: 0,
    requestsByWorker: () => [],
    scheme: plane.listener.scheme,
    replaceCertificate: (files) => plane.listener.replaceCertificate(files),
    reloaded: () => Promise.resolve(),
    tokensApplied: () => Promise.resolve(),
    drain: (graceMs) => plane.drain(graceMs, log),
    closeAfterAnswers: () => {
      state.draining = true;
    },
    tallyInto: (tally) => {
      services.limiter.tally = tally;
    },
    cacheEvents: (events) => plane.cache?.apply(events),
    feeSlots: (blocks) => plane.fees?.apply(blocks),
    onCacheCounts: (sink) => {
      cacheSink.fn = sink;
    },
  };
}

export async function workerPlanes(
  config: Config,
  tokens: TokenTable,
  log: Logger,
  stops: StopList,
  count: number,
  startAccounts: StartAccounts,
): Promise<ControlView> {
  // The control plane's pool probes the nodes for every worker and carries their figures; it
  // sends no traffic.
  const pool = new NodePool(config, log);
  stops.add(() => pool.close());
  await pool.start();
  // The meter the workers' usage reports merge into, for the accounts store.
  const usage = new UsageMeter();
  const workersRef: { w: DataPlaneWorkers | null } = { w: null };
  const inflight = (): number => workersRef.w?.inflight ?? 0;
  const metrics = new GatewayMetrics({ nodes: () => pool.nodes, inflight });
  // What the workers' landing reports add into.
  const landing = new LandingFigures();
  if (config.chain === 'solana')
    landing.ranking = new SendRanking(
      () => pool.sendRank,
      () => pool.nodes,
    );
  await startAccounts(usage, landing);
  if (config.rpc.port !== 0) {
    const lock = await lockRpcPort(config.rpc.host, config.rpc.port);
    stops.add(() => lock.release());
    // The lock keeps out another gateway; this keeps out anything else holding the port.
    for (const p of config.rpc.wsPort === 0 ? [config.rpc.port] : [config.rpc.port, config.rpc.wsPort]) await reservePort(config.rpc.host, p);
  }
  // Hot-key, token and method buckets live in shared memory: the limits hold for the whole
  // gateway, whichever worker a connection lands on, with no message per request.
  let limits = createLimitBuffers(config);
  // Over the workers' buckets: it takes nothing, but the sync with Redis debits through it.
  const limiter = RateLimiter.shared(config, limits);
  // The state the control plane keeps for itself: draining, for /readyz.
  let draining = false;
  let certificates: TlsConfig | null = null;
  const workers = new DataPlaneWorkers(config, { log, tokens, pool, meter: usage, metrics, limits, landing });
  workersRef.w = workers;
  // Added after the accounts: an immediate stop ends the workers before the last usage flush.
  stops.add(() => workers.stop());
  await workers.start(count);
  if (config.rpc.port === 0) {
    const lock = await lockRpcPort(config.rpc.host, workers.port);
    stops.add(() => lock.release());
  }
  return {
    pool,
    limiter,
    usage,
    landing,
    inflight,
    draining: () => draining,
    // New buffers for tables the reload adds; those that stay keep theirs, and their buckets.
    target: {
      reconfigure(next) {
        limits = createLimitBuffers(next, limits);
        limiter.reconfigure(next, limits);
      },
    },
    hub: null,
    metrics,
    port: workers.port,
    wsPort: workers.wsPort,
    ws: () => workers.ws(),
    workers: count,
    requestsByWorker: () => workers.requestsByWorker(),
    scheme: config.tls === null ? 'http' : 'https',
    // Sent with the reloaded config that follows (the reloader swaps certificates first).
    replaceCertificate: (files) => {
      certificates = files;
    },
    reloaded: (next) => {
      const swap = certificates;
      certificates = null;
      // The reload changed the control plane's table (config tokens): that snapshot is awaited too.
      return Promise.all([workers.reconfigure(next, limits, swap), workers.tokensApplied()]).then(() => {});
    },
    tokensApplied: () => workers.tokensApplied(),
    tallyInto: (tally) => {
      workers.tally = tally;
    },
    cacheEvents: (events) => workers.broadcast({ type: 'cacheEvents', events }),
    feeSlots: (blocks) => workers.broadcast({ type: 'feeSlots', blocks }),
    onCacheCounts: (sink) => {
      workers.onCacheCounts = sink;
    },
    async drain(graceMs) {
      draining = true;
      log.info({ inflight: workers.inflight, workers: count }, 'draining the data-plane workers');
      await workers.drain(graceMs);
    },
    closeAfterAnswers() {
      draining = true;
      workers.broadcast({ type: 'closeAfterAnswers' });
    },
  };
}
