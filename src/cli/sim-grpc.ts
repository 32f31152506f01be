// `jumpgate sim-grpc`: one simulated Yellowstone gRPC source per process (docs/grpc.md
// "Simulated sources"), for demos and out-of-process benchmarks.

import { GeneratedFeed, DEFAULT_FEED } from '../tools/sim-grpc/feed.js';
import { startSimGrpcSource, type SimGrpcKnobs } from '../tools/sim-grpc/server.js';
import { numberFlag, parseFlags, UsageError } from './usage-error.js';

export interface SimGrpcCli {
  host: string;
  port: number;
  slotMs: number;
  seed: number;
  accountsPerSlot: number;
  transactionsPerSlot: number;
  knobs: Partial<SimGrpcKnobs>;
  /** Seed of the delays, drops and stalls (the feed has its own). */
  delaySeed: number;
}

/** Parses `jumpgate sim-grpc` flags (argv excludes the command word); throws UsageError. */
export function parseSimGrpcArgs(argv: string[]): SimGrpcCli {
  const { values } = parseFlags(argv, {
    port: { type: 'string' },
    host: { type: 'string' },
    'slot-ms': { type: 'string' },
    seed: { type: 'string' },
    accounts: { type: 'string' },
    transactions: { type: 'string' },
    'delay-ms': { type: 'string' },
    'jitter-ms': { type: 'string' },
    'drop-rate': { type: 'string' },
    'stall-rate': { type: 'string' },
    'stall-ms': { type: 'string' },
    'delay-seed': { type: 'string' },
  });
  if (values.port === undefined) throw new UsageError('--port is required');
  const knobs: Partial<SimGrpcKnobs> = {};
  if (values['delay-ms'] !== undefined) knobs.delayMs = numberFlag('delay-ms', values['delay-ms'], false, 0, 600_000);
  if (values['jitter-ms'] !== undefined) knobs.jitterMs = numberFlag('jitter-ms', values['jitter-ms'], false, 0, 600_000);
  if (values['drop-rate'] !== undefined) knobs.dropRate = numberFlag('drop-rate', values['drop-rate'], false, 0, 1);
  if (values['stall-rate'] !== undefined) knobs.stallRate = numberFlag('stall-rate', values['stall-rate'], false, 0, 1);
  if (values['stall-ms'] !== undefined) knobs.stallMs = numberFlag('stall-ms', values['stall-ms'], false, 0, 600_000);
  return {
    host: values.host ?? '127.0.0.1',
    port: numberFlag('port', values.port, true, 0, 65535),
    slotMs: values['slot-ms'] === undefined ? 400 : numberFlag('slot-ms', values['slot-ms'], true, 1, 3_600_000),
    seed: values.seed === undefined ? DEFAULT_FEED.seed : numberFlag('seed', values.seed, true, 0, 2 ** 31),
    accountsPerSlot: values.accounts === undefined ? DEFAULT_FEED.accountsPerSlot : numberFlag('accounts', values.accounts, true, 0, 10_000),
    transactionsPerSlot:
      values.transactions === undefined ? DEFAULT_FEED.transactionsPerSlot : numberFlag('transactions', values.transactions, true, 0, 10_000),
    knobs,
    delaySeed: values['delay-seed'] === undefined ? 7 : numberFlag('delay-seed', values['delay-seed'], true, 0, 2 ** 31),
  };
}

export async function runSimGrpcCli(argv: string[]): Promise<void> {
  const cfg = parseSimGrpcArgs(argv);
  const feed = new GeneratedFeed({
    seed: cfg.seed,
    accountsPerSlot: cfg.accountsPerSlot,
    transactionsPerSlot: cfg.transactionsPerSlot,
    accountPool: Math.max(DEFAULT_FEED.accountPool, cfg.accountsPerSlot),
  });
  const source = await startSimGrpcSource({ host: cfg.host, port: cfg.port, slotMs: cfg.slotMs, feed, knobs: cfg.knobs, seed: cfg.delaySeed });
  process.stdout.write(`sim gRPC source listening on ${source.url}\n`);
  const stop = (): void => {
    void source.close().then(() => process.exit(0));
  };
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
}
