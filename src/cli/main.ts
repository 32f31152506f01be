#!/usr/bin/env node
// `jumpgate <command>`: the usage text and the dispatch to one file per command. Each command's
// modules are imported when it runs: a gateway process does not keep the load generator, the
// simulator or the demo in memory, and `jumpgate sim` or `bench` does not load the gateway
// (idle RSS counts).

import { asksHelp, helpFor } from './help.js';
import { endOfLifeWarning, unsupportedNode } from './node-version.js';
import { UsageError } from './usage-error.js';

const USAGE = `usage: jumpgate <command> [options]

commands:
  start [--config FILE] [--port N] [--workers N|auto] [--data DIR]
                       run the gateway; without --config, a demo with three simulated nodes
  sim --port P [--nodes N] [--id NAME] [--slot-ms 400] [--lag SLOTS[,SLOTS…]] [--grpc-port G] [knobs…]
                       run simulated Solana nodes of one cluster, each with a Yellowstone
                       gRPC source with --grpc-port (jumpgate sim --help)
  transfer --url RPC_URL [--to ADDRESS] [--lamports N] [--key FILE]
                       send a real SOL transfer and watch it confirm (the demo's funded key)
  sim-grpc --port P [--slot-ms 400] [--seed S] [--accounts N] [--transactions N]
           [--delay-ms MS] [--jitter-ms MS] [--drop-rate F] [--stall-rate F --stall-ms MS] [--delay-seed S]
                       run one simulated Yellowstone gRPC source of generated updates (docs/grpc.md)
  nodes [set-weight ID W | drain ID | undrain ID] [--admin URL] [--token T]
                       show or change nodes through the admin API
  reload [--admin URL] [--token T]
                       re-read the config file of a running gateway (like SIGHUP)
  tokens create --stack NAME [--label L] | tokens list [--stack NAME] | tokens revoke ID
       [--account EMAIL] [--config FILE] [--store URL] [--json]
                       manage API tokens in the account store
  accounts create --email E [--password-stdin] [--config FILE] [--store URL] [--json]
                       create a console account (the first one of a new store, too)
  bench --url URL [--rate R | --closed] [--duration D] [--connections C] [--method M] [--batch N]
        [--affinity key --keys K] [--token T] [--ws-subscribers N] [--json]
                       load-test any JSON-RPC endpoint (jumpgate bench --help)
  ws URL [MESSAGE…] [--count N]
                       open a WebSocket, send the messages (default slotSubscribe), print frames
  help                 this text

jumpgate <command> --help shows a command's options and their defaults.`;

/** The command being run, for the usage text of its errors. */
let command = '';

async function main(argv: string[]): Promise<void> {
  const [cmd, ...rest] = argv;
  command = cmd ?? '';
  // `sim` and `bench` answer --help themselves; the others from help.ts.
  if (cmd !== undefined && cmd !== 'sim' && cmd !== 'bench' && asksHelp(rest)) {
    const text = helpFor(cmd, rest);
    if (text !== undefined) {
      process.stdout.write(text + '\n');
      return;
    }
  }
  switch (cmd) {
    case 'start':
      return (await import('./start.js')).runStart(rest);
    case 'sim':
      return (await import('./sim.js')).runSimCli(rest);
    case 'transfer':
      process.exitCode = await (await import('./transfer.js')).runTransferCli(rest);
      return;
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
    case 'accounts':
      process.exitCode = await (await import('./accounts.js')).runAccountsCli(rest);
      return;
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

// Before any command loads a native module built for other Node.js versions.
const unsupported = unsupportedNode(process.versions.node);
if (unsupported !== null) {
  process.stderr.write(unsupported + '\n');
  process.exit(1);
}
// Said where jumpgate runs as a service (and `npm start`); other commands' output is often parsed.
const pastEndOfLife = process.argv[2] === 'start' ? endOfLifeWarning(process.versions.node) : null;
if (pastEndOfLife !== null) process.stderr.write(pastEndOfLife + '\n');

main(process.argv.slice(2)).catch(async (err: Error) => {
  if (err instanceof UsageError) {
    const own = helpFor(command, []);
    process.stderr.write(own === undefined ? `jumpgate: ${err.message}\n\n${USAGE}\n` : `jumpgate ${command}: ${err.message}\n\n${own}\n`);
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
