// The two ways the data plane runs beside the control plane (README "Architecture"):
// - inline (`rpc.workers: 0`): on the control plane's own event loop, as one process with no
//   threads; what embedding and most tests use;
// - N data-plane worker threads (`rpc.workers: N | auto`): each terminates HTTP and WS on its
//   own loop for the shared port; the control plane (console, store, usage writes, admin,
//   health prober, token sync, reload) keeps the main thread, which no request waits for.
// Either way the rest of the gateway sees one ControlView: the pool the admin API shows, the
// metrics, the runtime a reload rewrites, and how to drain.

import { availableParallelism } from 'node:os';
import type { Config, TlsConfig } from '../config/schema.js';
import type { RuntimeRef } from '../gateway/http-listener.js';
import { reservePort } from '../gateway/client-listener.js';
import { createLimitBuffers, RateLimiter } from '../gateway/limits.js';
import { Offload } from '../gateway/offload.js';
import { buildRuntime } from '../gateway/runtime.js';
import type { TokenTable } from '../gateway/token-table.js';
import type { WsStats } from '../gateway/ws-listener.js';
import type { Logger } from '../log.js';
import { GatewayMetrics } from '../metrics/prometheus.js';
import type { ConsumptionTally } from '../shared/consumption-tally.js';
import type { StopList } from '../stop-list.js';
import { NodePool } from '../upstream/pool.js';
import { openUpstreamSocket, SubscriptionHub } from '../upstream/ws/hub.js';
import { UsageMeter } from '../usage/meter.js';
import { startDataPlane } from './data-plane.js';
import { lockRpcPort } from './port-lock.js';
import { DataPlaneWorkers } from './workers.js';

export interface WsView {
  connections: number;
  sharedSubscriptions: number;
  upstreamSubscriptions: Record<string, number>;
}

export interface ControlView {
  pool: NodePool;
  ref: RuntimeRef;
  hub: SubscriptionHub;
  wsStats: WsStats;
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
  /** A reload was applied to the control plane: resolves once the data plane follows. */
  reloaded(config: Config): Promise<void>;
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
   * added to `tally`; `ref.rt.limiter` is then the one to debit (with workers, it is attached
   * to their shared buffers).
   */
  tallyInto(tally: ConsumptionTally): void;
}

/** `rpc.workers`: 'auto' is one per core. */
export function workersFor(config: Config): number {
  const w = config.rpc.workers;
  return w === 'auto' ? availableParallelism() : w;
}

type StartAccounts = (usage: UsageMeter) => Promise<void>;

export async function inlinePlane(config: Config, tokens: TokenTable, log: Logger, stops: StopList, startAccounts: StartAccounts): Promise<ControlView> {
  let metrics: GatewayMetrics | null = null;
  // Accounts first: store tokens are in the table before the listener opens, and the usage
  // flush stops after it (a stop list runs newest first).
  const usage = new UsageMeter();
  await startAccounts(usage);
  // Inline holds the address's lock too: a gateway with workers on it would otherwise join.
  if (config.rpc.port !== 0) {
    const lock = await lockRpcPort(config.rpc.host, config.rpc.port);
    stops.add(() => lock.release());
  }
  const plane = await startDataPlane(config, {
    usage,
    tokens,
    log,
    stops,
    probes: true,
    exclusive: true,
    port: config.rpc.port,
    wsPort: config.rpc.wsPort,
    recorder: (pool, ref) => (metrics = new GatewayMetrics({ nodes: () => pool.nodes, inflight: () => ref.rt.inflight })),
  });
  return {
    ...plane,
    metrics: metrics!,
    ws: () => ({ connections: plane.wsStats.connections, sharedSubscriptions: plane.hub.sharedCount, upstreamSubscriptions: plane.hub.upstreamSubscriptions() }),
    workers: 0,
    requestsByWorker: () => [],
    scheme: plane.listener.scheme,
    replaceCertificate: (files) => plane.listener.replaceCertificate(files),
    reloaded: () => Promise.resolve(),
    drain: (graceMs) => plane.drain(graceMs, log),
    closeAfterAnswers: () => {
      plane.ref.rt.draining = true;
    },
    tallyInto: (tally) => {
      plane.ref.rt.limiter.tally = tally;
    },
  };
}

export async function workerPlanes(config: Config, tokens: TokenTable, log: Logger, stops: StopList, count: number, startAccounts: StartAccounts): Promise<ControlView> {
  // The control plane's pool probes the nodes for every worker and carries their figures; it
  // sends no traffic.
  const pool = new NodePool(config, log);
  stops.add(() => pool.close());
  await pool.start();
  // A runtime of the control plane's own: its meter receives the workers' usage, and reloads
  // rewrite it like a worker's. It serves no request.
  const offload = new Offload(config.offload);
  stops.add(() => offload.close());
  const ref = {} as RuntimeRef;
  const workersRef: { w: DataPlaneWorkers | null } = { w: null };
  const metrics = new GatewayMetrics({ nodes: () => pool.nodes, inflight: () => workersRef.w?.inflight ?? 0 });
  ref.rt = buildRuntime(config, { tokens, router: pool, offload, log, slots: pool, metrics });
  await startAccounts(ref.rt.usage);
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
  ref.rt.limiter = RateLimiter.shared(config, limits);
  let certificates: TlsConfig | null = null;
  const workers = new DataPlaneWorkers(config, { log, tokens, pool, meter: ref.rt.usage, metrics, limits });
  workersRef.w = workers;
  // Added after the accounts: an immediate stop ends the workers before the last usage flush.
  stops.add(() => workers.stop());
  await workers.start(count);
  if (config.rpc.port === 0) {
    const lock = await lockRpcPort(config.rpc.host, workers.port);
    stops.add(() => lock.release());
  }
  const hub = new SubscriptionHub(pool, { chain: config.chain, maxSubscriptionsPerConnection: config.ws.maxSubscriptionsPerConnection }, log, openUpstreamSocket(log));
  return {
    pool,
    ref,
    hub,
    wsStats: { connections: 0, byToken: new Map() },
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
      limits = createLimitBuffers(next, limits);
      ref.rt.limiter.configure(next, limits);
      const swap = certificates;
      certificates = null;
      return workers.configure(next, limits, swap);
    },
    tallyInto: (tally) => {
      workers.tally = tally;
    },
    async drain(graceMs) {
      ref.rt.draining = true;
      log.info({ inflight: workers.inflight, workers: count }, 'draining the data-plane workers');
      await workers.drain(graceMs);
    },
    closeAfterAnswers() {
      ref.rt.draining = true;
      workers.broadcast({ type: 'closeAfterAnswers' });
    },
  };
}
