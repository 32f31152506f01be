// `jumpgate sim`: one simulated node per process, for demos and out-of-process benchmarks.

import { parseArgs } from 'node:util';
import { checkKnobs, MAX_SLOW_MS, type SimKnobs } from '../tools/sim/knobs.js';
import { startSim } from '../tools/sim/node.js';
import { UsageError } from './usage-error.js';

function num(flag: string, text: string, integer: boolean, min: number, max: number): number {
  const v = Number(text);
  if (text.trim() === '' || !Number.isFinite(v) || (integer && !Number.isInteger(v)) || v < min || v > max) {
    const kind = integer ? 'an integer' : 'a number';
    throw new UsageError(`--${flag} must be ${kind} from ${min} to ${max}, got "${text}"`);
  }
  return v;
}

function latency(text: string): [number, number] {
  const m = /^\s*(\d+(?:\.\d+)?)\s*(?:-\s*(\d+(?:\.\d+)?)\s*)?$/.exec(text);
  const lo = m ? Number(m[1]) : NaN;
  const hi = m?.[2] !== undefined ? Number(m[2]) : lo;
  if (!m || lo > hi) throw new UsageError(`--latency-ms must be MIN-MAX (or one value) with MIN <= MAX, got "${text}"`);
  return [lo, hi];
}

interface CliConfig {
  id: string;
  host: string;
  port: number;
  knobs: Partial<SimKnobs>;
}

/** Parses `jumpgate sim` flags (argv excludes the `sim` word); throws UsageError. */
export function parseSimArgs(argv: string[]): CliConfig {
  let values;
  try {
    ({ values } = parseArgs({
      args: argv,
      strict: true,
      allowPositionals: false,
      options: {
        port: { type: 'string' },
        id: { type: 'string' },
        host: { type: 'string' },
        'slot-ms': { type: 'string' },
        lag: { type: 'string' },
        'latency-ms': { type: 'string' },
        'fail-rate': { type: 'string' },
        'fail-mode': { type: 'string' },
        'stall-rate': { type: 'string' },
        'drop-rate': { type: 'string' },
        'slow-rate': { type: 'string' },
        'slow-ms': { type: 'string' },
        'slow-methods': { type: 'string' },
      },
    }));
  } catch (e) {
    throw new UsageError((e as Error).message.split('\n')[0]!);
  }
  if (values.port === undefined) throw new UsageError('--port is required');
  const port = num('port', values.port, true, 0, 65535);
  const knobs: Partial<SimKnobs> = {};
  if (values['slot-ms'] !== undefined) knobs.slotMs = num('slot-ms', values['slot-ms'], true, 1, 3_600_000);
  if (values.lag !== undefined) knobs.lag = num('lag', values.lag, true, 0, Number.MAX_SAFE_INTEGER);
  if (values['latency-ms'] !== undefined) knobs.latencyMs = latency(values['latency-ms']);
  if (values['fail-rate'] !== undefined) knobs.failRate = num('fail-rate', values['fail-rate'], false, 0, 1);
  if (values['stall-rate'] !== undefined) knobs.stallRate = num('stall-rate', values['stall-rate'], false, 0, 1);
  if (values['drop-rate'] !== undefined) knobs.dropRate = num('drop-rate', values['drop-rate'], false, 0, 1);
  if (values['slow-rate'] !== undefined) knobs.slowRate = num('slow-rate', values['slow-rate'], false, 0, 1);
  if (values['slow-ms'] !== undefined) knobs.slowMs = num('slow-ms', values['slow-ms'], true, 0, MAX_SLOW_MS);
  if (values['slow-methods'] !== undefined) knobs.slowMethods = values['slow-methods'].split(',').map((m) => m.trim()).filter((m) => m !== '');
  if (values['fail-mode'] !== undefined) {
    try {
      knobs.failMode = checkKnobs({ failMode: values['fail-mode'] }).failMode!;
    } catch (e) {
      throw new UsageError(`--fail-mode must be http500, rpc-error or mixed, got "${values['fail-mode']}"`, { cause: e });
    }
  }
  return { id: values.id ?? `sim-${port}`, host: values.host ?? '127.0.0.1', port, knobs };
}

export async function runSimCli(argv: string[]): Promise<void> {
  let cfg: CliConfig;
  try {
    cfg = parseSimArgs(argv);
  } catch (e) {
    if (!(e instanceof UsageError)) throw e;
    process.stderr.write(`jumpgate sim: ${e.message}\n`);
    process.exit(2);
  }
  const node = await startSim({ id: cfg.id, host: cfg.host, port: cfg.port, ...cfg.knobs });
  process.stdout.write(`sim node ${node.id} listening on ${node.url}\n`);
  const plusOne = node.wsUrlPlusOne !== '' ? ` and ${node.wsUrlPlusOne} (port+1, for @solana/web3.js v1)` : ` (port ${node.port + 1} is taken: no WS there for @solana/web3.js v1)`;
  process.stdout.write(`  WebSocket: ${node.wsUrl}${plusOne}\n`);
  const stop = (): void => {
    void node.close().then(() => process.exit(0));
  };
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
}
