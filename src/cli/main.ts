#!/usr/bin/env node
// `jumpgate <command>`: start (gateway, or the demo without a config) and sim.
// Each command's own modules are imported when it runs: a gateway process does not keep the
// load generator, the simulator or the demo in memory (idle RSS counts).

import { randomBytes } from 'node:crypto';
import { parseArgs } from 'node:util';
import { ReloadError } from '../admin/reload.js';
import { ConfigError, loadConfig, resolveConfig } from '../config/load.js';
import type { Config } from '../config/schema.js';
import { join } from 'node:path';
import type { DemoAccount } from '../tools/demo/account.js';
import type { DemoNodes } from '../tools/demo/nodes.js';
import { openStore } from '../store/open.js';
import type { FullStore } from '../store/types.js';
import { createLogger } from '../log.js';
import { startGateway } from '../lifecycle.js';

const USAGE = `usage: jumpgate <command> [options]

commands:
  start [--config FILE] [--port N] [--data DIR]
                       run the gateway; without --config, a demo with three simulated nodes
  sim --port P [--id NAME] [--slot-ms 400] [--lag SLOTS] [--latency-ms MIN-MAX]
      [--fail-rate F] [--fail-mode http500|rpc-error|mixed] [--stall-rate F] [--drop-rate F]
                       run one simulated Solana node
  nodes [set-weight ID W | drain ID | undrain ID] [--admin URL] [--token T]
                       show or change nodes through the admin API
  reload [--admin URL] [--token T]
                       re-read the config file of a running gateway (like SIGHUP)
  tokens create --stack NAME [--label L] | tokens list [--stack NAME] | tokens revoke ID
       [--account EMAIL] [--config FILE] [--store URL] [--json]
                       manage API tokens in the account store
  bench --url URL [--rate R | --closed] [--duration D] [--connections C] [--method M] [--batch N]
        [--affinity key --keys K] [--token T] [--ws-subscribers N] [--json]
                       load-test any JSON-RPC endpoint (jumpgate bench --help)
  ws URL [MESSAGE…] [--count N]
                       open a WebSocket, send the messages (default slotSubscribe), print frames
  help                 this text`;

class UsageError extends Error {}

function parseStart(argv: string[]): { config?: string; port?: number; data: string } {
  let values;
  try {
    ({ values } = parseArgs({ args: argv, strict: true, allowPositionals: false, options: { config: { type: 'string', short: 'c' }, port: { type: 'string' }, data: { type: 'string' } } }));
  } catch (e) {
    throw new UsageError((e as Error).message.split('\n')[0]!);
  }
  let port: number | undefined;
  if (values.port !== undefined) {
    port = Number(values.port);
    if (!Number.isInteger(port) || port < 0 || port > 65535) throw new UsageError(`--port must be an integer from 0 to 65535, got "${values.port}"`);
  }
  return { config: values.config, port, data: values.data ?? './data' };
}

async function start(argv: string[]): Promise<void> {
  const opts = parseStart(argv);
  let config: Config;
  let demo: DemoNodes | null = null;
  let token = '';
  let store: FullStore | undefined;
  let account: DemoAccount | null = null;
  if (opts.config !== undefined) {
    config = loadConfig(opts.config);
    if (opts.port !== undefined) {
      config.rpc.port = opts.port;
      config.rpc.wsPort = opts.port === 0 ? 0 : opts.port + 1;
    }
    if (config.nodes.length === 0) throw new ConfigError(['nodes: at least one node is required (or run without --config for the demo)'], opts.config);
  } else {
    // The demo keeps its account store, account, stack and token under --data (default ./data).
    const [{ ensureDemoAccount }, { startDemoNodes }] = await Promise.all([import('../tools/demo/account.js'), import('../tools/demo/nodes.js')]);
    store = await openStore(`sqlite://${join(opts.data, 'jumpgate.db')}`);
    account = await ensureDemoAccount(store, opts.data);
    token = account.token;
    demo = await startDemoNodes();
    // The demo's admin API gets a fresh token each run (printed below); a busy port only skips it.
    const admin = { token: 'jga_' + randomBytes(18).toString('base64url') };
    const ephemeral = opts.port === 0;
    config = resolveConfig({
      nodes: demo.nodes,
      admin,
      console: ephemeral ? { port: 0 } : {},
      rpc: opts.port === undefined ? {} : { port: opts.port, wsPort: ephemeral ? 0 : opts.port + 1 },
    });
  }
  const log = createLogger(config.log.level);
  const prepareConfig = (c: Config): void => {
    if (opts.port !== undefined) c.rpc.port = opts.port;
  };
  const gw = await startGateway(config, { log, configPath: opts.config, prepareConfig, adminOptional: demo !== null, store, consoleEphemeral: demo !== null && opts.port === 0 }).catch(async (err: Error) => {
    await demo?.close();
    await store?.close();
    throw err;
  });
  if (demo) {
    const { demoBanner } = await import('../tools/demo/nodes.js');
    const consoleLogin = gw.console === null || account === null ? null : { url: gw.console.url, email: account.email, password: account.password };
    process.stdout.write(demoBanner(gw.url, gw.wsPort, token, config.headers.brand, demo.sims.map((n) => ({ id: n.id, url: n.url })), consoleLogin) + '\n');
    if (gw.admin !== null) {
      const a = `--admin ${gw.admin.url} --token ${config.admin.token}`;
      process.stdout.write(`Admin API (this run's token): jumpgate nodes ${a}\n  e.g. jumpgate nodes set-weight sim-slow 0 ${a}\n\n`);
    }
  }

  let stopping = false;
  const stop = (signal: string): void => {
    if (stopping) return;
    stopping = true;
    log.info({ signal }, 'shutting down');
    void gw
      .drain()
      .then(() => demo?.close())
      .then(() => process.exit(0));
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
  process.on('SIGHUP', () => {
    if (stopping) return;
    log.info({ signal: 'SIGHUP' }, 'reloading config');
    gw.reload().catch((err: Error) => {
      if (err instanceof ReloadError) log.error({ reason: err.message }, 'config reload refused; nothing changed');
      else log.error({ err }, 'config reload failed');
    });
  });
}

async function main(argv: string[]): Promise<void> {
  const [cmd, ...rest] = argv;
  switch (cmd) {
    case 'start':
      return start(rest);
    case 'sim':
      return (await import('./sim.js')).runSimCli(rest);
    case 'bench':
      process.exitCode = await (await import('./bench.js')).runBenchCli(rest);
      return;
    case 'tokens':
      process.exitCode = await (await import('./tokens.js')).runTokensCli(rest);
      return;
    case 'ws': {
      const { runWsCli } = await import('./ws.js');
      try {
        process.exitCode = await runWsCli(rest);
      } catch (e) {
        throw new UsageError((e as Error).message);
      }
      return;
    }
    case 'nodes':
      return (await import('./nodes.js')).runNodesCli(rest);
    case 'reload':
      return (await import('./nodes.js')).runReloadCli(rest);
    case undefined:
    case 'help':
    case '--help':
    case '-h':
      process.stdout.write(USAGE + '\n');
      return;
    default:
      throw new UsageError(`unknown command "${cmd}"`);
  }
}

main(process.argv.slice(2)).catch((err: Error) => {
  if (err instanceof UsageError) {
    process.stderr.write(`jumpgate: ${err.message}\n\n${USAGE}\n`);
    process.exit(2);
  }
  if (err instanceof ConfigError) {
    process.stderr.write(err.message + '\n');
    process.exit(2);
  }
  process.stderr.write(`jumpgate: ${err.message}\n`);
  process.exit(1);
});
