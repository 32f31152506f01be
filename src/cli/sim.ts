// `jumpgate sim`: one or more simulated nodes of one cluster in one process, for demos and
// out-of-process benchmarks (docs/simulator.md "The jumpgate sim command").

import { startClusterGrpcSource } from '../tools/sim-grpc/cluster-source.js';
import type { SimGrpcKnobs, SimGrpcSource } from '../tools/sim-grpc/server.js';
import { startBlockEngine, type BlockEngine, type BlockEngineKnobs } from '../tools/sim/block-engine.js';
import { DEFAULT_KNOBS, MAX_SLOW_MS, type SimKnobs } from '../tools/sim/knobs.js';
import { Cluster, startSim, type SimNode } from '../tools/sim/node.js';
import { numberFlag, parseFlags, UsageError } from './usage-error.js';

type Kind = 'int' | 'rate' | 'latency' | 'list' | 'mode' | 'bool' | 'json';

interface Flag {
  flag: string;
  knob: keyof SimKnobs;
  kind: Kind;
  max?: number;
  help: string;
}

/** Every knob flag; --help lists them with their defaults. */
const FLAGS: Flag[] = [
  { flag: 'slot-ms', knob: 'slotMs', kind: 'int', max: 3_600_000, help: 'slot time of the cluster' },
  { flag: 'lag', knob: 'lag', kind: 'int', help: 'slots behind the cluster tip; with --nodes, one value or a list "0,2,40"' },
  { flag: 'confirm-depth', knob: 'confirmDepth', kind: 'int', help: 'slots confirmed trails processed' },
  { flag: 'finalize-depth', knob: 'finalizeDepth', kind: 'int', help: 'slots finalized trails processed' },
  { flag: 'landing-ms', knob: 'landingMs', kind: 'int', help: 'delay before an accepted transaction lands' },
  { flag: 'tx-drop-rate', knob: 'txDropRate', kind: 'rate', help: 'fraction of accepted transactions that never land' },
  { flag: 'skip-rate', knob: 'skipRate', kind: 'rate', help: 'fraction of slots skipped by their leader' },
  { flag: 'archive-slots', knob: 'archiveSlots', kind: 'int', help: 'slots of blocks kept (0: an archive node)' },
  { flag: 'long-term-storage', knob: 'longTermStorage', kind: 'bool', help: 'blocks below the first available come from long-term storage (-32009)' },
  { flag: 'health-slots', knob: 'healthSlots', kind: 'int', help: 'lag above which the node is "behind" (-32005)' },
  { flag: 'synthetic', knob: 'synthetic', kind: 'bool', help: 'benchmark mode: every key has a deterministic account' },
  { flag: 'latency-ms', knob: 'latencyMs', kind: 'latency', help: 'added latency, MIN-MAX or one value' },
  { flag: 'fail-rate', knob: 'failRate', kind: 'rate', help: 'fraction of requests that fail (per --fail-mode)' },
  { flag: 'fail-mode', knob: 'failMode', kind: 'mode', help: 'http500, rpc-error or mixed' },
  { flag: 'stall-rate', knob: 'stallRate', kind: 'rate', help: 'fraction of requests never answered' },
  { flag: 'drop-rate', knob: 'dropRate', kind: 'rate', help: 'fraction of requests whose connection is closed' },
  { flag: 'slow-rate', knob: 'slowRate', kind: 'rate', help: 'fraction of requests answered --slow-ms late' },
  { flag: 'slow-ms', knob: 'slowMs', kind: 'int', max: MAX_SLOW_MS, help: 'delay of a slowed request' },
  { flag: 'slow-methods', knob: 'slowMethods', kind: 'list', help: 'only these methods are slowed (m1,m2)' },
  { flag: 'unhealthy', knob: 'unhealthy', kind: 'bool', help: 'getHealth answers -32005' },
  { flag: 'fee-market', knob: 'feeMarket', kind: 'json', help: 'synthetic fee-paying transactions per block, JSON (docs/simulator.md "Fee market")' },
  { flag: 'rate-cap', knob: 'rateCap', kind: 'int', help: 'credits per second before HTTP 429 with Retry-After (0: no cap)' },
  { flag: 'disabled-methods', knob: 'disabledMethods', kind: 'list', help: 'methods answered -32601 Method not found (m1,m2)' },
];

/** Per-source knobs of the nodes' gRPC sources (docs/grpc.md "Simulated sources"). */
const GRPC_FLAGS: { flag: string; knob: keyof SimGrpcKnobs; rate: boolean; help: string }[] = [
  { flag: 'grpc-delay-ms', knob: 'delayMs', rate: false, help: 'fixed delay of every gRPC update' },
  { flag: 'grpc-jitter-ms', knob: 'jitterMs', rate: false, help: 'random extra delay per gRPC update, 0..V (streams stay in order)' },
  { flag: 'grpc-drop-rate', knob: 'dropRate', rate: true, help: 'fraction of gRPC updates never sent' },
  { flag: 'grpc-stall-rate', knob: 'stallRate', rate: true, help: 'fraction of slots after which a gRPC stream stops for --grpc-stall-ms' },
  { flag: 'grpc-stall-ms', knob: 'stallMs', rate: false, help: 'length of a gRPC stall' },
];

/** The block engine's knobs (docs/simulator.md "Block engine"). */
const ENGINE_FLAGS: { flag: string; knob: keyof BlockEngineKnobs; max: number; help: string }[] = [
  { flag: 'bundle-land-rate', knob: 'bundleLandRate', max: 1, help: 'fraction of accepted bundles that land (default 1)' },
  { flag: 'bundle-landing-ms', knob: 'bundleLandingMs', max: 600_000, help: 'delay before an accepted bundle lands (default 400)' },
  { flag: 'engine-rate-limit', knob: 'engineRateLimit', max: 1_000_000, help: 'calls a second the engine answers, beyond: 429 (default 0: none)' },
];

export const SIM_HELP = `usage: jumpgate sim --port P [--nodes N] [--id NAME] [--host H] [--grpc-port G] [--engine-port E] [knob flags]

Runs N simulated Solana nodes of one cluster (default 1): node i listens on P+2i (HTTP and
WebSocket) and P+2i+1 (WebSocket, where @solana/web3.js v1 looks); --port 0 picks free ports.
Every knob can be changed later with POST /sim/control on a node (docs/simulator.md "Knobs").

--grpc-port G gives node i a Yellowstone gRPC source on G+i (G 0: free ports) streaming the
cluster's slots, account writes, transactions and block metas at the node's lag
(docs/grpc.md "Simulated sources"); every URL is printed. Its knobs (default 0):
${GRPC_FLAGS.map((f) => `  --${(f.flag + ' V').padEnd(18)} ${f.help}`).join('\n')}

--engine-port E starts a Jito block engine of the cluster on E (0: a free port): sendBundle,
getBundleStatuses, getInflightBundleStatuses, getTipAccounts on /api/v1/bundles, sendTransaction
on /api/v1/transactions (docs/simulator.md "Block engine"). Its knobs:
${ENGINE_FLAGS.map((f) => `  --${(f.flag + ' V').padEnd(18)} ${f.help}`).join('\n')}

knob flags (default):
${FLAGS.map((f) => `  --${(f.flag + (f.kind === 'bool' ? '' : ' V')).padEnd(18)} ${f.help} (${JSON.stringify(DEFAULT_KNOBS[f.knob])})`).join('\n')}
  --help               this text`;

function latency(text: string): [number, number] {
  const m = /^\s*(\d+(?:\.\d+)?)\s*(?:-\s*(\d+(?:\.\d+)?)\s*)?$/.exec(text);
  const lo = m ? Number(m[1]) : NaN;
  const hi = m?.[2] !== undefined ? Number(m[2]) : lo;
  if (!m || lo > hi) throw new UsageError(`--latency-ms must be MIN-MAX (or one value) with MIN <= MAX, got "${text}"`);
  return [lo, hi];
}

function value(f: Flag, text: string | boolean): unknown {
  if (typeof text === 'boolean') return text;
  switch (f.kind) {
    case 'int':
      return numberFlag(f.flag, text, true, f.knob === 'slotMs' ? 1 : 0, f.max ?? Number.MAX_SAFE_INTEGER);
    case 'rate':
      return numberFlag(f.flag, text, false, 0, 1);
    case 'latency':
      return latency(text);
    case 'json':
      try {
        return JSON.parse(text) as unknown;
      } catch {
        throw new UsageError(`--${f.flag} must be JSON, got "${text}"`);
      }
    case 'list':
      return text
        .split(',')
        .map((m) => m.trim())
        .filter((m) => m !== '');
    default:
      if (!['http500', 'rpc-error', 'mixed'].includes(text)) throw new UsageError(`--fail-mode must be http500, rpc-error or mixed, got "${text}"`);
      return text;
  }
}

export interface CliConfig {
  id: string;
  host: string;
  port: number;
  /** Nodes of the one cluster. */
  nodes: number;
  knobs: Partial<SimKnobs>;
  /** Per-node lags when --lag is a list. */
  lags: number[] | null;
  /** The first node's gRPC port (node i: +i; 0: free ports); null: no gRPC sources. */
  grpcPort: number | null;
  grpcKnobs: Partial<SimGrpcKnobs>;
  /** The block engine's port (0: free); null: no engine. */
  enginePort: number | null;
  engineKnobs: Partial<BlockEngineKnobs>;
  help: boolean;
}

/** Parses `jumpgate sim` flags (argv excludes the `sim` word); throws UsageError. */
export function parseSimArgs(argv: string[]): CliConfig {
  const options: Record<string, { type: 'string' | 'boolean' }> = {
    port: { type: 'string' },
    id: { type: 'string' },
    host: { type: 'string' },
    nodes: { type: 'string' },
    help: { type: 'boolean' },
    'grpc-port': { type: 'string' },
    'engine-port': { type: 'string' },
  };
  for (const f of ENGINE_FLAGS) options[f.flag] = { type: 'string' };
  for (const f of GRPC_FLAGS) options[f.flag] = { type: 'string' };
  for (const f of FLAGS) options[f.flag] = { type: f.kind === 'bool' ? 'boolean' : 'string' };
  const values = parseFlags(argv, options).values as Record<string, string | boolean | undefined>;
  const help = values.help === true;
  if (values.port === undefined && !help) throw new UsageError('--port is required');
  const port = help ? 0 : numberFlag('port', values.port as string, true, 0, 65535);
  const nodes = values.nodes === undefined ? 1 : numberFlag('nodes', values.nodes as string, true, 1, 64);
  const knobs: Partial<SimKnobs> = {};
  let lags: number[] | null = null;
  for (const f of FLAGS) {
    const v = values[f.flag];
    if (v === undefined) continue;
    if (f.knob === 'lag' && typeof v === 'string' && v.includes(',')) {
      lags = v.split(',').map((x) => numberFlag('lag', x.trim(), true, 0, Number.MAX_SAFE_INTEGER));
      if (lags.length !== nodes) throw new UsageError(`--lag lists ${lags.length} values for ${nodes} nodes`);
      continue;
    }
    (knobs as Record<string, unknown>)[f.knob] = value(f, v);
  }
  const grpcPort = values['grpc-port'] === undefined ? null : numberFlag('grpc-port', values['grpc-port'] as string, true, 0, 65535 - (nodes - 1));
  const grpcKnobs: Partial<SimGrpcKnobs> = {};
  for (const f of GRPC_FLAGS) {
    const v = values[f.flag];
    if (typeof v !== 'string') continue;
    if (grpcPort === null) throw new UsageError(`--${f.flag} needs --grpc-port`);
    grpcKnobs[f.knob as 'delayMs'] = numberFlag(f.flag, v, false, 0, f.rate ? 1 : 600_000);
  }
  const enginePort = values['engine-port'] === undefined ? null : numberFlag('engine-port', values['engine-port'] as string, true, 0, 65535);
  const engineKnobs: Partial<BlockEngineKnobs> = {};
  for (const f of ENGINE_FLAGS) {
    const v = values[f.flag];
    if (typeof v !== 'string') continue;
    if (enginePort === null) throw new UsageError(`--${f.flag} needs --engine-port`);
    engineKnobs[f.knob] = numberFlag(f.flag, v, f.max !== 1, 0, f.max);
  }
  const id = (values.id as string | undefined) ?? `sim-${port}`;
  return { id, host: (values.host as string | undefined) ?? '127.0.0.1', port, nodes, knobs, lags, grpcPort, grpcKnobs, enginePort, engineKnobs, help };
}

export async function runSimCli(argv: string[]): Promise<void> {
  let cfg: CliConfig;
  try {
    cfg = parseSimArgs(argv);
  } catch (e) {
    if (!(e instanceof UsageError)) throw e;
    process.stderr.write(`jumpgate sim: ${e.message}\n\n${SIM_HELP}\n`);
    process.exit(2);
  }
  if (cfg.help) {
    process.stdout.write(SIM_HELP + '\n');
    return;
  }
  const cluster = new Cluster({ slotMs: cfg.knobs.slotMs ?? DEFAULT_KNOBS.slotMs, skipRate: cfg.knobs.skipRate ?? 0 });
  const started: SimNode[] = [];
  for (let i = 0; i < cfg.nodes; i++) {
    const id = cfg.nodes === 1 ? cfg.id : `${cfg.id}-${i}`;
    const port = cfg.port === 0 ? 0 : cfg.port + 2 * i;
    const lag = cfg.lags?.[i] ?? cfg.knobs.lag;
    started.push(await startSim({ ...cfg.knobs, ...(lag === undefined ? {} : { lag }), id, host: cfg.host, port, cluster }));
  }
  const sources: SimGrpcSource[] = [];
  if (cfg.grpcPort !== null) {
    for (let i = 0; i < started.length; i++) {
      const port = cfg.grpcPort === 0 ? 0 : cfg.grpcPort + i;
      // A seed per node: their delays and drops are independent, as two providers' are.
      sources.push(await startClusterGrpcSource(started[i]!, { host: cfg.host, port, knobs: cfg.grpcKnobs, seed: i + 1 }));
    }
  }
  const engine: BlockEngine | null =
    cfg.enginePort === null ? null : await startBlockEngine({ ...cfg.engineKnobs, cluster, port: cfg.enginePort, host: cfg.host });
  for (const [i, node] of started.entries()) {
    process.stdout.write(`sim node ${node.id} listening on ${node.url} (lag ${node.knobs().lag})\n`);
    const plusOne =
      node.wsUrlPlusOne !== ''
        ? ` and ${node.wsUrlPlusOne} (port+1, for @solana/web3.js v1)`
        : ` (port ${node.port + 1} is taken: no WS there for @solana/web3.js v1)`;
    process.stdout.write(`  WebSocket: ${node.wsUrl}${plusOne}\n`);
    if (sources[i] !== undefined) process.stdout.write(`  gRPC (Yellowstone): ${sources[i]!.url}\n`);
  }
  if (engine !== null) process.stdout.write(`Jito block engine listening on ${engine.url} (/api/v1/bundles, /api/v1/transactions)\n`);
  if (cfg.nodes > 1) process.stdout.write(`${cfg.nodes} nodes of one cluster: a transaction sent to any of them lands for all\n`);
  const stop = (): void => {
    void Promise.all([...sources.map((g) => g.close()), ...started.map((n) => n.close()), ...(engine === null ? [] : [engine.close()])]).then(() =>
      process.exit(0),
    );
  };
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
}
