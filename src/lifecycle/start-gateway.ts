// Assembles the gateway from a resolved config: token table, node pool with health loop,
// worker pool, accounts (store, token sync, usage flush), the uWS RPC listener with its
// subscription hub, the admin listener and the console. Used by `jumpgate start`, the demo and
// the tests. Each part registers its stop as it starts (../stop-list.ts): a failed start and a
// shutdown run that one list.

import { jitoNodes } from '../config/node-kinds.js';
import { DEFAULT_ENGINE_RATE } from '../upstream/jito/engines.js';
import { startAccounts, type AccountsRuntime } from '../accounts/runtime.js';
import { AdminAuth } from '../admin/auth.js';
import { Reloader, type ReloadSummary } from '../admin/reload.js';
import { startAdminServer, type AdminServer } from '../admin/listener.js';
import { ConfigError, loadTls } from '../config/load.js';
import type { Config } from '../config/schema.js';
import type { TlsMaterial } from '../config/tls.js';
import { staticTokenRecord, TokenTable } from '../gateway/token-table.js';
import type { LandingFigures } from '../landing/figures.js';
import type { LandingFlush } from '../landing/flush.js';
import { createLogger, type Logger } from '../log.js';
import type { GatewayMetrics } from '../metrics/prometheus.js';
import { inlinePlane, workerPlanes, workersFor, type ControlView, type WsView } from '../planes/planes.js';
import { startSharedState } from '../shared/shared-state.js';
import { onInternalError } from '../upstream/call.js';
import type { NodePool } from '../upstream/pool.js';
import { startConsole, type ConsoleServer } from '../console/listener.js';
import { StopList } from '../stop-list.js';
import { serverEngine, ServerChoiceError } from '../server/engine.js';
import type { ServerEngine } from '../server/types.js';
import type { FullStore } from '../store/types.js';
import type { UsageFlush } from '../usage/flush.js';
import type { UsageMeter } from '../usage/meter.js';
import type { SubscriptionHub } from '../upstream/ws/hub.js';
import type { AccountCacheControl } from '../grpc/cache-control.js';
import { FeeWatcher } from '../fees/watcher.js';
import type { GrpcListener } from '../grpc/listener.js';

export interface ListenerView {
  /** 'uws' or 'node'. */
  engine: string;
  reason: string;
}

/** rpc.server's engine for this runtime, or a config error that says why it cannot be had. */
function chooseEngine(config: Config, workerCount: number, source: string | undefined): ServerEngine {
  let engine: ServerEngine;
  try {
    engine = serverEngine(config.rpc.server);
  } catch (err) {
    if (err instanceof ServerChoiceError) throw new ConfigError([err.message], source);
    throw err;
  }
  if (workerCount > 1 && !engine.sharesPorts) {
    throw new ConfigError(
      [
        `rpc.workers ${workerCount} with Node's http listener needs Node.js 22.12 or later (SO_REUSEPORT); this is ${process.versions.node}: set rpc.workers to 1 (docs/runtimes.md)`,
      ],
      source,
    );
  }
  return engine;
}

export interface Gateway {
  readonly port: number;
  /** The extra WebSocket port (rpc.wsPort), 0 when none. */
  readonly wsPort: number;
  /** The inline data plane's subscription hub; null with worker threads (each has its own). */
  readonly hub: SubscriptionHub | null;
  /** WebSocket connections and subscriptions, over every data-plane thread (with workers, as of their last reports). */
  ws(): WsView;
  readonly store: FullStore | null;
  readonly console: ConsoleServer | null;
  readonly usageFlush: UsageFlush | null;
  /** Writes `landing` to the store (docs/landing.md "Several instances"); null without a store. */
  readonly landingFlush: LandingFlush | null;
  readonly url: string;
  readonly pool: NodePool;
  readonly tokens: TokenTable;
  /** Per-token usage of every request, drained by the accounts store (docs/usage.md "Usage"). */
  readonly usage: UsageMeter;
  /** Transaction landing since start (docs/landing.md "Figures"), flushed into the store. */
  readonly landing: LandingFigures;
  /** Requests accepted and not answered yet (with workers, as of their last reports). */
  inflight(): number;
  readonly log: Logger;
  readonly metrics: GatewayMetrics;
  /** How the data plane runs: worker threads (0 = inline) and the requests each answered. */
  readonly dataPlane: { readonly workers: number; requestsByWorker(): number[] };
  /** The server engine serving the RPC and WebSocket ports, and why (docs/runtimes.md). */
  readonly listener: ListenerView;
  /** The admin listener; null when `admin.port` is 0. */
  readonly admin: AdminServer | null;
  /** The Yellowstone gRPC listener (docs/grpc.md); null when `grpc.port` is 0. */
  readonly grpc: GrpcListener | null;
  /** The account cache's control-plane side (docs/account-cache.md); null when `cache.accounts` is off or has no gRPC source. */
  readonly cache: AccountCacheControl | null;
  /**
   * Reads the store's tokens now and resolves once every data plane serves from them: for a
   * process that writes the store itself and must not call before the change applies (the
   * console does this after each of its writes; docs/accounts.md "When a change takes effect").
   */
  syncTokens(): Promise<void>;
  /** Re-reads the config file and applies it (SIGHUP, POST /admin/reload); rejects with ReloadError. */
  reload(): Promise<ReloadSummary>;
  /** The config in effect: the start's, or the last reload's. */
  readonly config: Config;
  /**
   * The first step of a stop behind a balancer (./graceful-stop.ts): /readyz answers 503 from
   * now on and answers carry `Connection: close`, while new connections are still served.
   */
  unready(): void;
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
  /** How often the token table polls the store for changes; default 500 ms (tests of the Redis channel make it long). */
  tokenSyncIntervalMs?: number;
  /** Start the gRPC listener on an ephemeral port even though `grpc.port` is 0 (tests). */
  grpcEphemeral?: boolean;
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
  const workerCount = workersFor(config);
  // Chosen here first so that a runtime without uWS fails the start before anything listens;
  // the data-plane threads choose the same (src/server/engine.ts).
  const engine = chooseEngine(config, workerCount, opts.configPath);
  // Tokens from the store join the config's static ones before the first request is served;
  // the accounts stop after the data plane, so usage counted until then is written.
  const holder: { accounts: AccountsRuntime | null; usage: UsageMeter | null } = { accounts: null, usage: null };
  const startAccountsInto = async (usage: UsageMeter, landing: LandingFigures): Promise<void> => {
    // The control plane's meter: the gRPC listener books its usage there.
    holder.usage = usage;
    if (opts.store === null) return;
    const started = await startAccounts(config, {
      tokens,
      usage,
      landing,
      log,
      store: opts.store,
      ownStore: true,
      ...(opts.tokenSyncIntervalMs === undefined ? {} : { syncIntervalMs: opts.tokenSyncIntervalMs }),
    });
    holder.accounts = started;
    stops.add(() => started.stop());
  };
  const plane: ControlView =
    workerCount === 0
      ? await inlinePlane(config, tokens, log, stops, startAccountsInto)
      : await workerPlanes(config, tokens, log, stops, workerCount, startAccountsInto);
  const accounts = holder.accounts;
  const { pool, hub, metrics, port, wsPort } = plane;
  // Read your writes: the table as the store has it now, on the control plane, then in every data plane.
  const syncTokens = async (): Promise<void> => {
    await accounts?.sync.syncNow();
    await plane.tokensApplied();
  };
  metrics.watchWs(() => plane.ws());
  metrics.watchFresh(() => pool.fresh);
  metrics.watchLanding(() => plane.landing.nodes());
  // `redis.url`: limits and token changes shared with the other instances (docs/routing.md "Shared limits across instances (Redis)").
  const shared = startSharedState(config, { limiter: plane.limiter, log, metrics, onRemoteTokens: () => accounts?.sync.changed() });
  if (shared !== null) {
    plane.tallyInto(shared.tally);
    // Added after the data plane: it stops first, and the last syncs of a drain are not needed.
    stops.add(() => shared.close());
  }
  // The bytes as served from now on: the console's TLS takes them, and a reload compares the
  // files against them.
  const tls = config.tls === null ? null : loadTls(config.tls);
  const url = `${plane.scheme}://${config.rpc.host}:${port}`;
  const wsUrl = `${plane.scheme === 'https' ? 'wss' : 'ws'}://${config.rpc.host}:${wsPort || port}`;
  log.info(
    {
      host: config.rpc.host,
      port,
      wsPort: wsPort || undefined,
      url,
      ws: wsUrl,
      workers: workerCount,
      server: engine.name,
      serverReason: engine.reason,
      nodes: pool.nodes.map((n) => n.id),
    },
    'rpc listening',
  );

  let grpc: GrpcListener | null = null;
  let cache: AccountCacheControl | null = null;
  const g = config.grpc;
  const serveGrpc = g.port !== 0 || opts.grpcEphemeral === true;
  const cacheOn = config.chain === 'solana' && config.cache.accounts.enabled;
  if (cacheOn && g.sources.length === 0) log.warn('cache.accounts is on but grpc.sources is empty: account reads go to nodes (docs/account-cache.md)');
  if (serveGrpc || (cacheOn && g.sources.length > 0)) {
    // Loaded only when used: gRPC and protobuf cost a gateway ~29 MB of RSS.
    const { createGrpcHub, startGrpcListener } = await import('../grpc/listener.js');
    const shared = createGrpcHub({ ...g, stallMs: g.sourceStallMs, tokens, registry: metrics.registry, log });
    if (cacheOn && g.sources.length > 0) {
      const { startAccountCacheControl } = await import('../grpc/cache-control.js');
      const started = startAccountCacheControl(config, {
        hub: shared.hub,
        nodes: () => pool.nodes,
        publish: (events) => plane.cacheEvents(events),
        registry: metrics.registry,
        log,
      });
      plane.onCacheCounts((c) => started.counts(c));
      cache = started;
    }
    if (serveGrpc) {
      const started = await startGrpcListener({ ...g, stallMs: g.sourceStallMs, tokens, usage: holder.usage, registry: metrics.registry, tls, log }, shared);
      stops.add(() => started.close());
      grpc = started;
      log.info({ host: g.host, port: started.port, sources: g.sources.map((s) => s.id) }, 'grpc listening');
    } else stops.add(() => shared.hub.close());
    const feedControl = cache;
    if (feedControl !== null) stops.add(() => feedControl.close());
  }

  // Fee estimates (docs/priority-fees.md): the control plane fetches each new block and every data plane holds the digests.
  let fees: FeeWatcher | null = null;
  if (config.chain === 'solana' && config.fees.estimates.enabled) {
    const watcher = new FeeWatcher({ nodes: () => pool.nodes, windowSlots: config.fees.estimates.lookbackSlots, publish: (b) => plane.feeSlots(b), log });
    watcher.start();
    stops.add(() => watcher.stop());
    fees = watcher;
  }

  const auth = new AdminAuth(config.admin.token);
  let consoleServer: ConsoleServer | null = null;
  const replaceCertificates = (material: TlsMaterial): void => {
    plane.replaceCertificate(material.files);
    consoleServer?.replaceCertificate(material);
  };
  const reloader = new Reloader(
    {
      configPath: opts.configPath ?? null,
      pool,
      target: plane.target,
      tokens,
      log,
      prepare: opts.prepareConfig,
      setAdminToken: (t) => auth.set(t),
      tls,
      replaceCertificates,
    },
    config,
  );
  const reload = async (): Promise<ReloadSummary> => {
    const summary = await reloader.reload();
    cache?.reconfigure(reloader.config);
    fees?.reconfigure(reloader.config.fees.estimates.lookbackSlots);
    await plane.reloaded(reloader.config);
    return summary;
  };
  let unready = false;
  const listener: ListenerView = { engine: engine.name, reason: engine.reason };
  let admin: AdminServer | null = null;
  if (config.admin.port !== 0 || opts.adminEphemeral === true) {
    admin = await startAdminServer(config.admin.host, config.admin.port, {
      pool,
      metrics,
      auth,
      reload,
      draining: () => unready || plane.draining(),
      ws: () => plane.ws(),
      landing: plane.landing,
      cache: () => cache?.view() ?? { enabled: false },
      status: () => ({ node: process.versions.node, listener, workers: workerCount, draining: unready || plane.draining() }),
      engines: () => jitoNodes(reloader.config.nodes).map((n) => ({ id: n.id, url: n.url, rateLimit: n.rateLimit ?? DEFAULT_ENGINE_RATE })),
      log,
    }).catch((err: Error) => {
      if (opts.adminOptional !== true) throw err;
      log.warn({ err: err.message }, 'admin API not started');
      return null;
    });
  }
  if (admin !== null) {
    const started = admin;
    stops.add(() => started.close());
    log.info(
      { host: config.admin.host, port: admin.port, auth: auth.enabled },
      auth.enabled ? 'admin listening' : 'admin listening (no admin.token: only /healthz and /readyz answer)',
    );
  }

  if (accounts !== null && (config.console.port !== 0 || opts.consoleEphemeral === true)) {
    const started = await startConsole(
      {
        store: accounts.store,
        host: config.console.host,
        port: config.console.port,
        registration: config.console.registration,
        trustedProxies: config.trustedProxies,
        endpoints: { http: url, ws: wsUrl },
        sendRanking: () => plane.landing.ranking?.shown() ?? {},
        // The console's answer waits for this: the change is in effect here once it is given.
        onTokensChanged: () => {
          shared?.tokens.publish();
          return syncTokens();
        },
        log,
      },
      tls,
    );
    // Added after the accounts, so it stops before the store it writes to closes.
    stops.add(() => started.close());
    // startConsole logs its own 'console listening': one line per event.
    consoleServer = started;
  }

  const shutdown = (): Promise<void> => stops.run();

  return {
    port,
    wsPort,
    url,
    hub,
    ws: () => plane.ws(),
    store: accounts?.store ?? null,
    get console() {
      return consoleServer;
    },
    usageFlush: accounts?.flush ?? null,
    landingFlush: accounts?.landingFlush ?? null,
    pool,
    tokens,
    usage: plane.usage,
    landing: plane.landing,
    inflight: () => plane.inflight(),
    log,
    metrics,
    dataPlane: { workers: plane.workers, requestsByWorker: () => plane.requestsByWorker() },
    listener,
    admin,
    grpc,
    cache,
    get config() {
      return reloader.config;
    },
    unready() {
      unready = true;
      plane.closeAfterAnswers();
    },
    reload,
    syncTokens,
    async drain(graceMs = config.limits.upstreamTimeoutMs) {
      await plane.drain(graceMs);
      await shutdown();
      log.info('stopped');
    },
    close: shutdown,
  };
}
