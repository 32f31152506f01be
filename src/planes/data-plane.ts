// The data plane of one event loop: node pool, worker offload, the request runtime, the
// subscription hub and the uWS listener for HTTP and WebSocket. The same assembly serves the
// inline mode (`rpc.workers: 0`, on the control plane's loop) and each data-plane worker thread
// (src/planes/worker-main.ts); the caller decides who probes the nodes and who owns the port.

import type { Config } from '../config/schema.js';
import { ClientListener } from '../gateway/client-listener.js';
import { attachRpcRoutes, type RuntimeRef } from '../gateway/http-listener.js';
import type { RateLimiter } from '../gateway/limits.js';
import { Offload } from '../gateway/offload.js';
import { buildRuntime } from '../gateway/runtime.js';
import type { TokenTable } from '../gateway/token-table.js';
import { attachWebSocket, type WsStats } from '../gateway/ws-listener.js';
import type { Logger } from '../log.js';
import type { RequestRecorder } from '../metrics/recorder.js';
import type { StopList } from '../stop-list.js';
import type { UsageMeter } from '../usage/meter.js';
import { loadUndiciClient } from '../upstream/node.js';
import { NodePool } from '../upstream/pool.js';
import { openUpstreamSocket, SubscriptionHub } from '../upstream/ws/hub.js';

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
  /** Builds the request recorder once the pool and runtime exist. */
  recorder(pool: NodePool, ref: RuntimeRef): RequestRecorder;
  /** The usage meter the accounts flush drains; default: a new one. */
  usage?: UsageMeter;
  /** Rate limits shared with other workers; default: this loop's own. */
  limiter?: RateLimiter;
}

export interface DataPlane {
  pool: NodePool;
  ref: RuntimeRef;
  hub: SubscriptionHub;
  wsStats: WsStats;
  offload: Offload;
  /** The uWS app(s) and ports, plain or TLS (certificate swaps on reload). */
  listener: ClientListener;
  port: number;
  wsPort: number;
  /** Stops accepting and waits for in-flight requests to finish (up to graceMs). */
  drain(graceMs: number, log: Logger): Promise<void>;
}

export async function startDataPlane(config: Config, opts: DataPlaneOptions): Promise<DataPlane> {
  const { log, stops } = opts;
  if (config.upstream.client === 'undici') await loadUndiciClient();
  const pool = new NodePool(config, log, { probes: opts.probes });
  stops.add(() => pool.close());
  await pool.start();
  const offload = new Offload(config.offload);
  stops.add(() => offload.close());
  const ref = {} as RuntimeRef;
  const recorder = opts.recorder(pool, ref);
  ref.rt = buildRuntime(config, { tokens: opts.tokens, router: pool, offload, log, slots: pool, metrics: recorder, ...(opts.usage === undefined ? {} : { usage: opts.usage }) });
  if (opts.limiter !== undefined) ref.rt.limiter = opts.limiter;

  const listener = new ClientListener(config.rpc.host, config.tls, !opts.exclusive);
  stops.add(() => listener.close());
  const hub = new SubscriptionHub(pool, { chain: config.chain, maxSubscriptionsPerConnection: config.ws.maxSubscriptionsPerConnection }, log, openUpstreamSocket(log));
  // Added after the listener, so it stops first: clients dropped by its close then send no
  // unsubscribes to nodes whose sockets are closing anyway.
  stops.add(() => hub.close());
  pool.unusableListeners.push((node) => hub.nodeUnusable(node));
  const wsStats: WsStats = { connections: 0, byToken: new Map() };
  // @solana/web3.js derives its WebSocket URL as "same URL, port + 1": hence rpc.wsPort.
  await listener.listen(opts.port, opts.wsPort, (app) => {
    attachWebSocket(app, ref, hub, config.ws, wsStats);
    attachRpcRoutes(app, ref);
  });
  return {
    pool,
    ref,
    hub,
    wsStats,
    offload,
    listener,
    port: listener.port,
    wsPort: listener.wsPort,
    async drain(graceMs, log) {
      const rt = ref.rt;
      rt.draining = true;
      listener.stopListening();
      if (rt.inflight === 0) return;
      log.info({ inflight: rt.inflight }, 'draining in-flight requests');
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, graceMs);
        rt.onIdle = () => {
          clearTimeout(timer);
          resolve();
        };
      });
    },
  };
}
