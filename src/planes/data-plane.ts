// The data plane of one event loop: node pool, worker offload, the request runtime, the
// subscription hub and the uWS listener for HTTP and WebSocket. The same assembly serves the
// inline mode (`rpc.workers: 0`, on the control plane's loop) and each data-plane worker thread
// (src/planes/worker-main.ts); the caller decides who probes the nodes and who owns the port.

import * as uWS from 'uWebSockets.js';
import type { Config } from '../config/schema.js';
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
  port: number;
  wsPort: number;
  /** Stops accepting connections (drain); open ones finish. */
  stopListening(): void;
}

/** uWS's LIBUS_LISTEN_EXCLUSIVE_PORT (not exported by this build at runtime). */
const EXCLUSIVE_PORT = 1;
const SHARED_PORT = 0;

export function listen(app: uWS.TemplatedApp, host: string, port: number, exclusive = true): Promise<uWS.us_listen_socket> {
  return new Promise((resolve, reject) => {
    // Exclusive unless the control plane holds the address: uWS otherwise shares the port
    // (SO_REUSEPORT) with any other process, and the two silently split the connections.
    (app.listen as unknown as (h: string, p: number, opts: number, cb: (s: uWS.us_listen_socket | false) => void) => void)(
      host,
      port,
      exclusive ? EXCLUSIVE_PORT : SHARED_PORT,
      (sock) => {
        if (sock === false) reject(new Error(`cannot listen on ${host}:${port} (address in use or not available)`));
        else resolve(sock);
      },
    );
  });
}

export async function startDataPlane(config: Config, opts: DataPlaneOptions): Promise<DataPlane> {
  const { log, stops } = opts;
  if (config.upstream.client === 'undici') await loadUndiciClient();
  const pool = new NodePool(config, log, { probes: opts.probes });
  stops.add(() => pool.close());
  await pool.start();
  const offload = new Offload(config.workers);
  stops.add(() => offload.close());
  const ref = {} as RuntimeRef;
  const recorder = opts.recorder(pool, ref);
  ref.rt = buildRuntime(config, { tokens: opts.tokens, router: pool, offload, log, slots: pool, metrics: recorder, ...(opts.usage === undefined ? {} : { usage: opts.usage }) });
  if (opts.limiter !== undefined) ref.rt.limiter = opts.limiter;

  const app = uWS.App();
  stops.add(() => {
    app.close();
  });
  const hub = new SubscriptionHub(pool, { chain: config.chain, maxSubscriptionsPerConnection: config.ws.maxSubscriptionsPerConnection }, log, openUpstreamSocket(log));
  // Added after the app, so it stops first: clients dropped by the app's close then send no
  // unsubscribes to nodes whose sockets are closing anyway.
  stops.add(() => hub.close());
  pool.unusableListeners.push((node) => hub.nodeUnusable(node));
  const wsStats: WsStats = { connections: 0, byToken: new Map() };
  attachWebSocket(app, ref, hub, config.ws, wsStats);
  attachRpcRoutes(app, ref);
  const sockets: uWS.us_listen_socket[] = [];
  sockets.push(await listen(app, config.rpc.host, opts.port, opts.exclusive));
  // @solana/web3.js derives its WebSocket URL as "same URL, port + 1".
  if (opts.wsPort !== 0) sockets.push(await listen(app, config.rpc.host, opts.wsPort, opts.exclusive));
  return {
    pool,
    ref,
    hub,
    wsStats,
    offload,
    port: uWS.us_socket_local_port(sockets[0]!),
    wsPort: sockets.length > 1 ? uWS.us_socket_local_port(sockets[1]!) : 0,
    stopListening() {
      for (const sock of sockets.splice(0)) uWS.us_listen_socket_close(sock);
    },
  };
}
