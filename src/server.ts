// Assembles the data plane from a resolved config: token table, node pool with health loop,
// worker pool, and the uWS RPC listener. Used by `jumpgate start`, the demo and the tests.

import * as uWS from 'uWebSockets.js';
import type { Config } from './config/schema.js';
import { attachRpcRoutes, type RuntimeRef } from './gateway/http.js';
import { Offload } from './gateway/offload.js';
import { buildRuntime, type Runtime } from './gateway/runtime.js';
import { TokenTable, tokenPrefix } from './gateway/tokens.js';
import { createLogger, type Logger } from './log.js';
import { NodePool } from './upstream/pool.js';

export interface Gateway {
  readonly port: number;
  readonly url: string;
  readonly pool: NodePool;
  readonly tokens: TokenTable;
  readonly ref: RuntimeRef;
  readonly log: Logger;
  /** Graceful stop: refuse new connections, finish in-flight requests (up to `graceMs`), close. */
  drain(graceMs?: number): Promise<void>;
  /** Immediate stop (tests). */
  close(): Promise<void>;
}

export function listen(app: uWS.TemplatedApp, host: string, port: number): Promise<uWS.us_listen_socket> {
  return new Promise((resolve, reject) => {
    app.listen(host, port, (sock) => {
      if (sock === false) reject(new Error(`cannot listen on ${host}:${port} (address in use or not available)`));
      else resolve(sock);
    });
  });
}

export function staticTokens(config: Config, table: TokenTable): void {
  for (const t of config.tokens) {
    const prefix = tokenPrefix(t.token);
    table.addPlain(t.token, { id: 'static:' + prefix, prefix, stack: t.stack, active: t.active });
  }
}

export async function startGateway(config: Config, opts: { log?: Logger } = {}): Promise<Gateway> {
  const log = opts.log ?? createLogger(config.log.level);
  const tokens = new TokenTable();
  staticTokens(config, tokens);
  const pool = new NodePool(config, log);
  await pool.start();
  const offload = new Offload(config.workers);
  const rt: Runtime = buildRuntime(config, { tokens, router: pool, offload, log });
  const ref: RuntimeRef = { rt };
  const app = attachRpcRoutes(uWS.App(), ref);
  let sock: uWS.us_listen_socket;
  try {
    sock = await listen(app, config.rpc.host, config.rpc.port);
  } catch (err) {
    await Promise.all([pool.close(), offload.close()]);
    throw err;
  }
  const port = uWS.us_socket_local_port(sock);
  log.info({ host: config.rpc.host, port, nodes: pool.nodes.map((n) => n.id) }, 'rpc listening');

  let closed = false;
  const shutdown = async (): Promise<void> => {
    if (closed) return;
    closed = true;
    app.close();
    await Promise.all([pool.close(), offload.close()]);
  };

  return {
    port,
    url: `http://${config.rpc.host}:${port}`,
    pool,
    tokens,
    ref,
    log,
    async drain(graceMs = config.limits.upstreamTimeoutMs) {
      const rt = ref.rt;
      rt.draining = true;
      uWS.us_listen_socket_close(sock);
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
