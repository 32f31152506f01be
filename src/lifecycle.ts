// Assembles the gateway from a resolved config: token table, node pool with health loop,
// worker pool, accounts (store, token sync, usage flush), the uWS RPC listener with its
// subscription hub, the admin listener and the console. Used by `jumpgate start`, the demo and
// the tests. Each part registers its stop as it starts (./stop-list.ts): a failed start and a
// shutdown run that one list.

import { startAccounts } from './accounts/runtime.js';
import { AdminAuth } from './admin/auth.js';
import { Reloader, type ReloadSummary } from './admin/reload.js';
import { startAdminServer, type AdminServer } from './admin/listener.js';
import { loadTls } from './config/load.js';
import type { Config } from './config/schema.js';
import type { TlsMaterial } from './config/tls.js';
import { ClientListener } from './gateway/client-listener.js';
import { attachRpcRoutes, type RuntimeRef } from './gateway/http-listener.js';
import { Offload } from './gateway/offload.js';
import { buildRuntime, type Runtime } from './gateway/runtime.js';
import { staticTokenRecord, TokenTable } from './gateway/token-table.js';
import { createLogger, type Logger } from './log.js';
import { GatewayMetrics } from './metrics/prometheus.js';
import { onInternalError } from './upstream/call.js';
import { loadUndiciClient } from './upstream/node.js';
import { NodePool } from './upstream/pool.js';
import { startConsole, type ConsoleServer } from './console/listener.js';
import { StopList } from './stop-list.js';
import type { FullStore } from './store/types.js';
import type { UsageFlush } from './usage/flush.js';
import { openUpstreamSocket, SubscriptionHub } from './upstream/ws/hub.js';
import { attachWebSocket, type WsStats } from './gateway/ws-listener.js';

export interface Gateway {
  readonly port: number;
  /** The extra WebSocket port (rpc.wsPort), 0 when none. */
  readonly wsPort: number;
  readonly hub: SubscriptionHub;
  readonly wsStats: WsStats;
  readonly store: FullStore | null;
  readonly console: ConsoleServer | null;
  readonly usageFlush: UsageFlush | null;
  readonly url: string;
  readonly pool: NodePool;
  readonly tokens: TokenTable;
  readonly ref: RuntimeRef;
  readonly log: Logger;
  readonly metrics: GatewayMetrics;
  /** The admin listener; null when `admin.port` is 0. */
  readonly admin: AdminServer | null;
  /** Re-reads the config file and applies it (SIGHUP, POST /admin/reload); rejects with ReloadError. */
  reload(): Promise<ReloadSummary>;
  /** Graceful stop: refuse new connections, finish in-flight requests (up to `graceMs`), close. */
  drain(graceMs?: number): Promise<void>;
  /** Immediate stop (tests). */
  close(): Promise<void>;
}

export function staticTokens(config: Config, table: TokenTable): void {
  for (const t of config.tokens) {
    table.addPlain(t.token, staticTokenRecord(t.token, t.stack, t.active));
  }
}

export interface GatewayOptions {
  log?: Logger;
  /** The account store, closed with the gateway; default: opened from `store.url`. null = no store (static tokens only, no console). */
  store?: FullStore | null;
  /** Start the console on an ephemeral port even though `console.port` is 0 (tests). */
  consoleEphemeral?: boolean;
  /** The file `config` came from; reload re-reads it. Without it, reload answers 409. */
  configPath?: string;
  /** Applied to every config loaded by a reload, like at start (command-line overrides). */
  prepareConfig?: (config: Config) => void;
  /** Start the admin listener on an ephemeral port even though `admin.port` is 0 (tests). */
  adminEphemeral?: boolean;
  /** A failure to open the admin listener is logged instead of failing the start (demo). */
  adminOptional?: boolean;
}

export async function startGateway(config: Config, opts: GatewayOptions = {}): Promise<Gateway> {
  const log = opts.log ?? createLogger(config.log.level);
  onInternalError((err) => log.error({ err }, 'internal error while finishing a call'));
  const stops = new StopList();
  try {
    return await assemble(config, opts, log, stops);
  } catch (err) {
    // What had started stops as in a shutdown; the caller hears why the start failed.
    await stops.run().catch((e: unknown) => log.warn({ err: e }, 'stopping after a failed start failed'));
    throw err;
  }
}

async function assemble(config: Config, opts: GatewayOptions, log: Logger, stops: StopList): Promise<Gateway> {
  const tokens = new TokenTable();
  staticTokens(config, tokens);
  if (config.upstream.client === 'undici') await loadUndiciClient();
  const pool = new NodePool(config, log);
  stops.add(() => pool.close());
  await pool.start();
  const offload = new Offload(config.workers);
  stops.add(() => offload.close());
  const metrics = new GatewayMetrics({ nodes: () => pool.nodes, inflight: () => ref.rt.inflight });
  const rt: Runtime = buildRuntime(config, { tokens, router: pool, offload, log, slots: pool, metrics });
  const ref: RuntimeRef = { rt };
  // Tokens from the store join the config's static ones before the first request is served.
  // Stopped after the client listener: usage counted until then is written before the store closes.
  const accounts = opts.store === null ? null : await startAccounts(config, { tokens, usage: rt.usage, log, store: opts.store, ownStore: true });
  if (accounts !== null) stops.add(() => accounts.stop());

  // The bytes as served from now on: the console's TLS takes them, and a reload compares the
  // files against them.
  const tls = config.tls === null ? null : loadTls(config.tls);
  const listener = new ClientListener(config.rpc.host, config.tls);
  stops.add(() => listener.close());
  const hub = new SubscriptionHub(pool, { chain: config.chain, maxSubscriptionsPerConnection: config.ws.maxSubscriptionsPerConnection }, log, openUpstreamSocket(log));
  // Added after the listener, so it stops first: clients dropped by its close then send no
  // unsubscribes to nodes whose sockets are closing anyway.
  stops.add(() => hub.close());
  pool.unusableListeners.push((node) => hub.nodeUnusable(node));
  const wsStats: WsStats = { connections: 0, byToken: new Map() };
  // @solana/web3.js derives its WebSocket URL as "same URL, port + 1": hence rpc.wsPort.
  await listener.listen(config.rpc.port, config.rpc.wsPort, (app) => {
    attachWebSocket(app, ref, hub, config.ws, wsStats);
    attachRpcRoutes(app, ref);
  });
  const { port, wsPort, scheme } = listener;
  const url = `${scheme}://${config.rpc.host}:${port}`;
  const wsUrl = `${scheme === 'https' ? 'wss' : 'ws'}://${config.rpc.host}:${wsPort || port}`;
  log.info({ host: config.rpc.host, port, wsPort: wsPort || undefined, url, ws: wsUrl, nodes: pool.nodes.map((n) => n.id) }, 'rpc listening');

  const auth = new AdminAuth(config.admin.token);
  let consoleServer: ConsoleServer | null = null;
  const replaceCertificates = (material: TlsMaterial): void => {
    listener.replaceCertificate(material.files);
    consoleServer?.replaceCertificate(material);
  };
  const reloader = new Reloader(
    { configPath: opts.configPath ?? null, pool, ref, tokens, log, prepare: opts.prepareConfig, setAdminToken: (t) => auth.set(t), tls, replaceCertificates },
    config,
  );
  const reload = (): Promise<ReloadSummary> => reloader.reload();
  let admin: AdminServer | null = null;
  if (config.admin.port !== 0 || opts.adminEphemeral === true) {
    const ws = (): { connections: number; sharedSubscriptions: number; upstreamSubscriptions: Record<string, number> } => ({
      connections: wsStats.connections,
      sharedSubscriptions: hub.sharedCount,
      upstreamSubscriptions: hub.upstreamSubscriptions(),
    });
    admin = await startAdminServer(config.admin.host, config.admin.port, { pool, metrics, auth, reload, draining: () => ref.rt.draining, ws, log }).catch((err: Error) => {
      if (opts.adminOptional !== true) throw err;
      log.warn({ err: err.message }, 'admin API not started');
      return null;
    });
  }
  if (admin !== null) {
    const started = admin;
    stops.add(() => started.close());
    log.info({ host: config.admin.host, port: admin.port, auth: auth.enabled }, auth.enabled ? 'admin listening' : 'admin listening (no admin.token: only /healthz and /readyz answer)');
  }

  if (accounts !== null && (config.console.port !== 0 || opts.consoleEphemeral === true)) {
    const started = await startConsole(
      {
        store: accounts.store,
        host: config.console.host,
        port: config.console.port,
        registration: config.console.registration,
        endpoints: { http: url, ws: wsUrl },
        onTokensChanged: () => void accounts.sync.syncNow(),
        log,
      },
      tls,
    );
    // Added after the accounts, so it stops before the store it writes to closes.
    stops.add(() => started.close());
    consoleServer = started;
    log.info({ url: consoleServer.url }, 'console listening');
  }

  const shutdown = (): Promise<void> => stops.run();

  return {
    port,
    wsPort,
    url,
    hub,
    wsStats,
    store: accounts?.store ?? null,
    get console() {
      return consoleServer;
    },
    usageFlush: accounts?.flush ?? null,
    pool,
    tokens,
    ref,
    log,
    metrics,
    admin,
    reload,
    async drain(graceMs = config.limits.upstreamTimeoutMs) {
      const rt = ref.rt;
      rt.draining = true;
      listener.stopListening();
      if (rt.inflight > 0) {
        log.info({ inflight: rt.inflight }, 'draining in-flight requests');
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, graceMs);
          rt.onIdle = () => {
            clearTimeout(timer);
            resolve();
          };
        });
      }
      await shutdown();
      log.info('stopped');
    },
    close: shutdown,
  };
}
