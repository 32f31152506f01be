#!/usr/bin/env node
// `jumpgate <command>`: the usage text and the dispatch to one file per command. Each command's
// modules are imported when it runs: a gateway process does not keep the load generator, the
// simulator or the demo in memory, and `jumpgate sim` or `bench` does not load the gateway
// (idle RSS counts).

import { UsageError } from './usage-error.js';

const USAGE = `usage: jumpgate <command> [options]

commands:
  start [--config FILE] [--port N] [--workers N|auto] [--data DIR]
                       run the gateway; without --config, a demo with three simulated nodes
  sim --port P [--id NAME] [--slot-ms 400] [--lag SLOTS] [--latency-ms MIN-MAX]
      [--fail-rate F] [--fail-mode http500|rpc-error|mixed] [--stall-rate F] [--drop-rate F]
      [--slow-rate F --slow-ms MS [--slow-methods m1,m2]]
                       run one simulated Solana node
  sim-grpc --port P [--slot-ms 400] [--seed S] [--accounts N] [--transactions N]
           [--delay-ms MS] [--jitter-ms MS] [--drop-rate F] [--stall-rate F --stall-ms MS]
                       run one simulated Yellowstone gRPC source (docs/grpc.md)
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

async function main(argv: string[]): Promise<void> {
  const [cmd, ...rest] = argv;
  switch (cmd) {
    case 'start':
      return (await import('./start.js')).runStart(rest);
    case 'sim':
      return (await import('./sim.js')).runSimCli(rest);
    case 'sim-grpc':
      return (await import('./sim-grpc.js')).runSimGrpcCli(rest);
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
      return (await import('./reload.js')).runReloadCli(rest);
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

main(process.argv.slice(2)).catch(async (err: Error) => {
  if (err instanceof UsageError) {
    process.stderr.write(`jumpgate: ${err.message}\n\n${USAGE}\n`);
    process.exit(2);
  }
  // Loaded only now: commands that never read a config do not load the config schema.
  const { ConfigError } = await import('../config/load.js');
  if (err instanceof ConfigError) {
    process.stderr.write(err.message + '\n');
    process.exit(2);
  }
  process.stderr.write(`jumpgate: ${err.message}\n`);
  process.exit(1);
});
