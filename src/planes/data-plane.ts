// The data plane of one event loop: node pool, worker offload, the request path's settings and
// services (gateway/serving.ts), the subscription hub and the client listener for HTTP and
// WebSocket (on the server engine rpc.server chose, src/server/engine.ts). The same assembly serves the inline mode (`rpc.workers: 0`, on the control plane's
// loop) and each data-plane worker thread (src/planes/worker-main.ts); the caller decides who
// probes the nodes and who owns the port.

import type { Config } from '../config/schema.js';
import { ClientListener } from '../gateway/client-listener.js';
import { serverEngine } from '../server/engine.js';
import { attachRpcRoutes } from '../gateway/http-listener.js';
import { Offload } from '../gateway/offload.js';
import { Serving } from '../gateway/serving.js';
import { AccountCache, cacheSettings, type CacheCounts } from '../cache/account-cache.js';
import { LandingTracker } from '../landing/tracker.js';
import type { TokenTable } from '../gateway/token-table.js';
import { attachWebSocket, type WsStats } from '../gateway/ws-listener.js';
import type { LimitBuffers, MissingLimitBuffers } from '../limits/limit-buffers.js';
import type { RateLimiter } from '../limits/limiter.js';
import type { Logger } from '../log.js';
import type { RequestRecorder } from '../metrics/recorder.js';
import type { StopList } from '../stop-list.js';
import { FeeBook } from '../fees/fee-book.js';
import type { UsageMeter } from '../usage/meter.js';
import { loadUndiciClient } from '../upstream/node.js';
import { NodePool } from '../upstream/pool.js';
import { openUpstreamSocket, SubscriptionHub, type HubOptions } from '../upstream/ws/hub.js';

export interface DataPlaneOptions {
  tokens: TokenTable;
  log: Logger;
  stops: StopList;
  /** Inline mode probes its nodes; workers apply the control plane's probe results instead. */
  probes: boolean;
  /** Inline mode owns the port alone; workers share it (SO_REUSEPORT) under the control plane's lock. */
  exclusive: boolean;
  /** Ports to listen on: the config's, or those the first worker bound (an ephemeral port); wsPort 0 = none. */
  port: number;
  wsPort: number;
  /** Builds the request recorder once the pool exists; `inflight` reads the requests in flight. */
  recorder(pool: NodePool, inflight: () => number): RequestRecorder;
  /** The usage meter the accounts flush drains; default: a new one. */
  usage?: UsageMeter;
  /** Rate limits shared with other workers; default: this loop's own. */
  limiter?: RateLimiter;
  /** With `cache.accounts` on (Solana): where the account cache's counts go (the control plane's feed). */
  cacheReport?: (counts: CacheCounts) => void;
}

export interface DataPlane {
  pool: NodePool;
  serving: Serving;
  hub: SubscriptionHub;
  /** The account cache (docs/account-cache.md); null when `cache.accounts` is off. */
  cache: AccountCache | null;
  /** Recent blocks' fees, fed by the control plane (docs/priority-fees.md); null when `fees.estimates` is off. */
  fees: FeeBook | null;
  wsStats: WsStats;
  offload: Offload;
  /** The app(s) and ports, plain or TLS (certificate swaps on reload). */
  listener: ClientListener;
  port: number;
  wsPort: number;
  /**
   * A reload, after the node pool took it: new settings for new requests, each service
   * reconfigured in place (limit buckets kept). `buffers`: the shared limit tables sent with the
   * config (worker threads); the answer names those missing.
   */
  reconfigure(next: Config, buffers?: LimitBuffers | null): MissingLimitBuffers | null;
  /** Stops accepting and waits for in-flight requests to finish (up to graceMs). */
  drain(graceMs: number, log: Logger): Promise<void>;
}

/** The highest processed slot any node is known to have (0 while none is). */
function freshestProcessed(pool: NodePool): number {
  let best = 0;
  for (const n of pool.nodes) {
    const s = n.chain.slot(0);
    if (s > best) best = s;
  }
  return best;
}

const hubOptions = (config: Config): HubOptions => ({
  chain: config.chain,
  maxSubscriptionsPerConnection: config.ws.maxSubscriptionsPerConnection,
  redundancy: config.ws.redundancy,
});

export async function startDataPlane(config: Config, opts: DataPlaneOptions): Promise<DataPlane> {
  const { log, stops } = opts;
  if (config.upstream.client === 'undici') await loadUndiciClient();
  const pool = new NodePool(config, log, { probes: opts.probes });
  stops.add(() => pool.close());
  await pool.start();
  const offload = new Offload(config.offload);
  stops.add(() => offload.close());
  const holder: { serving: Serving | null } = { serving: null };
  const recorder = opts.recorder(pool, () => holder.serving?.state.inflight ?? 0);
  const landing = config.chain === 'solana' ? new LandingTracker(config, { nodes: () => pool.nodes, methodLatency: pool.methodLatency, log }) : null;
  if (landing !== null) stops.add(() => landing.stop());
  const report = opts.cacheReport;
  const cache =
    config.chain === 'solana' && config.cache.accounts.enabled && report !== undefined
      ? new AccountCache(cacheSettings(config), () => freshestProcessed(pool), report)
      : null;
  if (cache !== null) stops.add(() => cache.close());
  const fees = config.chain === 'solana' && config.fees.estimates.enabled ? new FeeBook(config.fees.estimates.lookbackSlots) : null;
  const serving = new Serving(config, {
    tokens: opts.tokens,
    router: pool,
    slots: pool,
    offload,
    log,
    metrics: recorder,
    landing,
    accountCache: cache,
    fees,
    ...(opts.usage === undefined ? {} : { usage: opts.usage }),
    ...(opts.limiter === undefined ? {} : { limiter: opts.limiter }),
  });
  holder.serving = serving;
  stops.add(() => serving.services.engines.close());

  const listener = new ClientListener(serverEngine(config.rpc.server), config.rpc.host, config.tls, !opts.exclusive);
  stops.add(() => listener.close());
  const hub = new SubscriptionHub(pool, hubOptions(config), log, openUpstreamSocket(log));
  // Added after the listener, so it stops first: clients dropped by its close then send no
  // unsubscribes to nodes whose sockets are closing anyway.
  stops.add(() => hub.close());
  pool.unusableListeners.push((node) => hub.nodeUnusable(node));
  const wsStats: WsStats = { connections: 0, byToken: new Map() };
  // @solana/web3.js derives its WebSocket URL as "same URL, port + 1": hence rpc.wsPort.
  await listener.listen(opts.port, opts.wsPort, (app) => {
    attachWebSocket(app, serving, hub, config.ws, wsStats);
    attachRpcRoutes(app, serving);
  });
  return {
    pool,
    serving,
    hub,
    cache,
    fees,
    wsStats,
    offload,
    listener,
    port: listener.port,
    wsPort: listener.wsPort,
    reconfigure(next, buffers = null) {
      hub.reconfigure(hubOptions(next));
      return serving.reconfigure(next, buffers);
    },
    async drain(graceMs, log) {
      const state = serving.state;
      state.draining = true;
      listener.stopListening();
      if (state.inflight === 0) return;
      log.info({ inflight: state.inflight }, 'draining in-flight requests');
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, graceMs);
        state.onIdle = () => {
          clearTimeout(timer);
          resolve();
        };
      });
    },
  };
}
