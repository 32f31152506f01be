// `jumpgate start`: the gateway from a config file, or without --config the demo (simulated
// nodes and a demo account: src/tools/demo/). Runs until SIGTERM/SIGINT (the stop sequence of
// ../lifecycle/graceful-stop.ts); SIGHUP re-reads the config file.

import { ReloadError } from '../admin/reload.js';
import { ConfigError, loadConfig } from '../config/load.js';
import { rpcNodes } from '../config/node-kinds.js';
import type { Config } from '../config/schema.js';
import { GracefulStop } from '../lifecycle/graceful-stop.js';
import { startGateway } from '../lifecycle/start-gateway.js';
import { createLogger } from '../log.js';
import type { Demo } from '../tools/demo/start-demo.js';
import { parseFlags, UsageError } from './usage-error.js';

interface StartOptions {
  config?: string;
  port?: number;
  /** --workers: data-plane threads (`rpc.workers`), a number or 'auto'. */
  workers?: number | 'auto';
  data: string;
}

function parseStart(argv: string[]): StartOptions {
  const { values } = parseFlags(argv, {
    config: { type: 'string', short: 'c' },
    port: { type: 'string' },
    workers: { type: 'string' },
    data: { type: 'string' },
  });
  let port: number | undefined;
  if (values.port !== undefined) {
    port = Number(values.port);
    if (!Number.isInteger(port) || port < 0 || port > 65535) throw new UsageError(`--port must be an integer from 0 to 65535, got "${values.port}"`);
  }
  let workers: number | 'auto' | undefined;
  if (values.workers !== undefined) {
    workers = values.workers === 'auto' ? 'auto' : Number(values.workers);
    if (workers !== 'auto' && !(Number.isInteger(workers) && workers >= 0 && workers <= 256))
      throw new UsageError(`--workers must be an integer from 0 to 256 or auto, got "${values.workers}"`);
  }
  return { config: values.config, port, workers, data: values.data ?? './data' };
}

/** `port`: the --port flag, which moves the WebSocket port along (to port + 1, or ephemeral with 0). */
function configFromFile(path: string, port: number | undefined): Config {
  const config = loadConfig(path);
  if (port !== undefined) {
    config.rpc.port = port;
    config.rpc.wsPort = port === 0 ? 0 : port + 1;
  }
  if (rpcNodes(config.nodes).length === 0)
    throw new ConfigError(['nodes: at least one node is required (block engines, kind jito, do not count; or run without --config for the demo)'], path);
  return config;
}

export async function runStart(argv: string[]): Promise<void> {
  const opts = parseStart(argv);
  let demo: Demo | null = null;
  let config: Config;
  if (opts.config !== undefined) config = configFromFile(opts.config, opts.port);
  else {
    // The demo's modules (simulator included) load only here.
    demo = await (await import('../tools/demo/start-demo.js')).prepareDemo(opts.data, opts.port);
    config = demo.config;
  }
  const prepareConfig = (c: Config): void => {
    if (opts.port !== undefined) c.rpc.port = opts.port;
    if (opts.workers !== undefined) c.rpc.workers = opts.workers;
  };
  prepareConfig(config);
  // No balancer checks the demo's readiness: a SIGTERM needs no wait either.
  if (demo !== null) config.shutdown.readyDelayMs = 0;
  const log = createLogger(config.log.level);
  const gw = await startGateway(config, {
    log,
    configPath: opts.config,
    prepareConfig,
    adminOptional: demo !== null,
    store: demo?.store,
    consoleEphemeral: demo !== null && opts.port === 0,
    adminEphemeral: demo !== null && opts.port === 0,
    grpcEphemeral: demo !== null,
  }).catch(async (err: Error) => {
    await demo?.nodes.close();
    await demo?.store.close();
    throw err;
  });
  if (demo !== null) process.stdout.write((await import('../tools/demo/start-demo.js')).startedText(demo, gw));

  const stop = new GracefulStop(gw, { log, exit: (code) => process.exit(code), after: async () => void (await demo?.nodes.close()) });
  process.on('SIGTERM', () => stop.signal('SIGTERM'));
  process.on('SIGINT', () => stop.signal('SIGINT'));
  process.on('SIGHUP', () => {
    if (stop.stopping) return;
    log.info({ signal: 'SIGHUP' }, 'reloading config');
    gw.reload().catch((err: Error) => {
      if (err instanceof ReloadError) log.error({ reason: err.message }, 'config reload refused; nothing changed');
      else log.error({ err }, 'config reload failed');
    });
  });
}
