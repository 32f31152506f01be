// `npm run bench [-- scenario…] [--quick] [--results FILE] [--tables]`: benchmark scenarios.
//   s1..s5  HTTP side by side: direct to a node, jumpgate, nginx, HAProxy (http-scenarios.ts)
//   s6      WebSocket fan-out: 5,000 slotSubscribe clients direct to the nodes, through jumpgate, nginx, HAProxy (ws-fanout-peers.ts)
//   floor   a fixed answer, no work: uWS.js bare, uWS.js with jumpgate's request reads, nginx `return 200`
//   parse   offload-pool threshold (inline vs piscina, by body size; parse-threshold.ts)
//   badinput  malformed / oversize / bad-header requests at volume: errors and RSS
//   keymap  key → node map: lookup rate, distribution error, keys moved vs minimum
//   hotkeys memory of the hot-key buckets after 1,000,000 distinct keys
//   ws      1,000 slotSubscribe clients through jumpgate alone: RSS per connection, delay; ws.redundancy 1 and 2 (ws-fanout.ts)
//   wsreq   getSlot/getBalance over 50 client WebSockets at 2,000/s: gateway CPU per 1k requests, p50/p99 (also over HTTP)
//   console the console's stack pages (overview, analytics) on a store with 10 tokens × 50 methods of history
//   isolation  getSlot at 1,000 req/s with and without a console viewer refreshing RPC Analytics
//   s7      S1's load against jumpgate with rpc.workers 1 and 2, nginx with 1 and 2 workers (worker-scaling.ts)
//   hedge, coalesce, broadcast  how one call reaches nodes (calls.ts)
//   monotonic  10,000 affinity keys through 20 failovers: slot regressions with affinity.monotonic off and on
//   providers  two capped providers and an own node, a bot's mix at 1.5× the larger cap: client 429s and credits per provider, jumpgate vs nginx (providers.ts)
//   sends   one client address's sends over nodes landing 95/60/20%: direct, IP-pinned, landing-aware, fanout 2, nginx (sends.ts)
//   landing transactions through nodes that land 95/70/30%: landed share and slots to land via jumpgate (default, fanout 2, fanout 2 + rebroadcast) and nginx
//   freshness  3 nodes at 0/30/120 slots of lag: minContextSlot reads and fresh-blockhash sends direct, through jumpgate, nginx (freshness.ts)
//   grpc    Yellowstone gRPC: two jittery simulated sources, N subscribers through jumpgate against each source direct (--grpc-subscribers N)
//   cache   the account cache: a bot's read mix over 50 hot and 1,000 rarely written accounts, direct, jumpgate without and with the cache, nginx (account-cache.ts)
// With no scenario named, all of them run. --quick runs each for a second or so. Results are
// printed as markdown tables and merged into bench/results/latest.json (quick.json with
// --quick; --results FILE or JUMPGATE_BENCH_RESULTS elsewhere). --tables prints docs/benchmarks.md's
// tables from a results file without running anything. --s2-rate R and --ws-clients N
// override S2's rate and S6's client count.

import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { dirname, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { cacheTable, runCacheBench } from './account-cache.js';
import { badInputTable, runBadInput } from './bad-input.js';
import { broadcastTable, coalesceTable, hedgeTable, runBroadcast, runCoalesce, runHedge } from './calls.js';
import { runConsoleBench } from './console.js';
import { floorTable, runFloor } from './floor.js';
import { freshnessTable, runFreshness } from './freshness.js';
import { grpcTable, runGrpcBench } from './grpc.js';
import { hotkeysTable, runHotkeys } from './hotkeys.js';
import { runHttpScenario, type HttpScenarioId } from './http-scenarios.js';
import { isolationTable, runIsolation } from './isolation.js';
import { keymapTable, runKeymapBench } from './keymap.js';
import { landingTable, runLandingBench } from './landing.js';
import { runSendsBench, sendsTable } from './sends.js';
import { providersTable, runProvidersBench } from './providers.js';
import { monotonicTable, runMonotonic } from './monotonic.js';
import { measureThreshold, thresholdTable } from './parse-threshold.js';
import { runWsFanoutPeers } from './ws-fanout-peers.js';
import { runWorkerScaling, workerScalingTable } from './worker-scaling.js';
import { consoleTable, httpTable, docTables, setup, setupText, wsTable } from './tables.js';
import { runWsFanout, wsFanoutTable } from './ws-fanout.js';
import { runWsRequests, wsRequestsTable } from './ws-requests.js';

const ALL = [
  's1',
  's2',
  's3',
  's4',
  's5',
  's6',
  'floor',
  'parse',
  'badinput',
  'keymap',
  'hotkeys',
  'ws',
  'wsreq',
  'console',
  'isolation',
  's7',
  'hedge',
  'coalesce',
  'broadcast',
  'monotonic',
  'freshness',
  'grpc',
  'landing',
  'sends',
  'providers',
  'cache',
] as const;
type Name = (typeof ALL)[number];

const USAGE = `usage: npm run bench [-- scenario…] [--quick] [--results FILE] [--tables] [--baseline DIR] [--s2-rate R] [--ws-clients N] [--grpc-subscribers N]\nscenarios: ${ALL.join(' ')} (all when none is named)`;

function parseCommandLine() {
  return parseArgs({
    args: process.argv.slice(2),
    allowPositionals: true,
    strict: true,
    options: {
      quick: { type: 'boolean' },
      results: { type: 'string' },
      tables: { type: 'boolean' },
      's2-rate': { type: 'string' },
      baseline: { type: 'string' },
      'ws-clients': { type: 'string' },
      'grpc-subscribers': { type: 'string' },
    },
  });
}

let parsed: ReturnType<typeof parseCommandLine>;
try {
  parsed = parseCommandLine();
} catch (e) {
  // --help, a misspelt option: say what is known instead of a stack trace.
  const help = process.argv.includes('--help') || process.argv.includes('-h');
  if (help) {
    console.log(USAGE);
    process.exit(0);
  }
  console.error(`bench: ${(e as Error).message.split('.')[0]}\n${USAGE}`);
  process.exit(2);
}
const { values, positionals } = parsed;
for (const p of positionals) {
  if (!(ALL as readonly string[]).includes(p)) {
    console.error(`bench: unknown scenario "${p}"; known: ${ALL.join(' ')}`);
    process.exit(2);
  }
}
const quick = values.quick === true;
// `--baseline DIR`: a built checkout of another revision, measured beside this one (S1-S6, wsreq).
const baselineCli = values.baseline === undefined ? undefined : resolve(values.baseline, 'dist/src/cli/main.js');
const file = resolve(
  values.results ?? process.env.JUMPGATE_BENCH_RESULTS ?? new URL(`../../bench/results/${quick ? 'quick' : 'latest'}.json`, import.meta.url).pathname,
);

function readPrevious(): Record<string, unknown> {
  try {
    return JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>;
  } catch {
    return {};
  }
}

if (values.tables === true) {
  console.log(docTables(readPrevious()));
  process.exit(0);
}

const wanted: Name[] = positionals.length === 0 ? [...ALL] : ALL.filter((n) => positionals.includes(n));
const started = performance.now();
const env = await setup();
const results: Record<string, unknown> = { date: env.date, node: process.version, cpus: cpus().length };
const log = (line: string): void => console.error(line);
console.log(setupText(env));
const runsHttp = wanted.some((n) => /^s[1-6]$/.test(n));
if (runsHttp) results.setup = env;

let failures = 0;
let s2Rate: number | undefined = values['s2-rate'] === undefined ? undefined : Number(values['s2-rate']);
for (const name of wanted) {
  const t0 = performance.now();
  console.error(`\n[bench] ${name}…`);
  try {
    await runOne(name);
  } catch (e) {
    // One scenario failing (a peer refusing its config, a port race) does not lose the others.
    failures++;
    console.log(`\n**${name}: failed**: ${(e as Error).stack ?? String(e)}`);
    results[name] = { error: (e as Error).message };
  }
  console.error(`[bench] ${name} done in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
}

async function runOne(name: Name): Promise<void> {
  switch (name) {
    case 's1':
    case 's2':
    case 's3':
    case 's4':
    case 's5': {
      const r = await runHttpScenario(name as HttpScenarioId, { quick, s2Rate, log, baselineCli });
      if (name === 's1' && s2Rate === undefined) {
        // S2 runs at a rate every target sustains: at most half the slowest target's S1 rate.
        const slowest = Math.min(...r.targets.filter((x) => x.skipped === null).map((x) => x.throughput));
        const cap = quick ? 2000 : 10_000;
        s2Rate = Math.max(500, Math.min(cap, Math.floor(slowest / 2 / 500) * 500));
      }
      console.log('\n' + httpTable(r));
      results[name] = r;
      break;
    }
    case 's6': {
      const r = await runWsFanoutPeers({ quick, clients: values['ws-clients'] === undefined ? undefined : Number(values['ws-clients']), log, baselineCli });
      console.log('\n' + wsTable(r));
      results.s6 = r;
      break;
    }
    case 'floor': {
      const r = await runFloor({ quick, log });
      console.log('\n' + floorTable(r));
      results.floor = r;
      break;
    }
    case 'parse': {
      const r = await measureThreshold();
      console.log('\nOffload pool threshold (median per body)\n' + thresholdTable(r));
      results.parse = r;
      break;
    }
    case 'badinput': {
      const r = await runBadInput(quick ? 20 : 2000);
      console.log('\nBad input: documented errors, bounded memory\n' + badInputTable(r));
      results.badinput = r;
      break;
    }
    case 'landing': {
      const r = await runLandingBench({ quick, log });
      console.log('\n' + landingTable(r));
      results.landing = r;
      break;
    }
    case 'providers': {
      const r = await runProvidersBench({ quick, log });
      console.log('\n' + providersTable(r));
      results.providers = r;
      break;
    }
    case 'sends': {
      const r = await runSendsBench({ quick, log });
      console.log('\n' + sendsTable(r));
      results.sends = r;
      break;
    }
    case 'keymap': {
      const r = await runKeymapBench();
      console.log('\nKey affinity map (1,000,000 keys)\n' + keymapTable(r));
      results.keymap = r;
      break;
    }
    case 'hotkeys': {
      const r = runHotkeys(quick ? 100_000 : 1_000_000);
      console.log('\nHot-key buckets under random keys\n' + hotkeysTable(r));
      results.hotkeys = r;
      break;
    }
    case 'ws': {
      const r = await runWsFanout(quick ? 50 : 1000, quick ? 1 : 5);
      // The same clients with every subscription on both nodes (ws.redundancy 2).
      const r2 = await runWsFanout(quick ? 50 : 1000, quick ? 1 : 5, 2);
      console.log('\nWebSocket fan-out (slotSubscribe through jumpgate)\n' + wsFanoutTable([r, r2]));
      results.ws = r;
      results.wsRedundancy2 = r2;
      break;
    }
    case 'wsreq': {
      const r = await runWsRequests({ quick, baselineCli, log });
      console.log('\n' + wsRequestsTable(r));
      results.wsreq = r;
      break;
    }
    case 'console': {
      const r = await runConsoleBench({ quick, log });
      console.log('\n' + consoleTable(r));
      results.console = r;
      break;
    }
    case 'isolation': {
      const r = await runIsolation({ quick, log });
      console.log('\n' + isolationTable(r));
      results.isolation = r;
      break;
    }
    case 'hedge': {
      const r = await runHedge({ quick, log });
      console.log('\n' + hedgeTable(r));
      results.hedge = r;
      break;
    }
    case 'coalesce': {
      const r = await runCoalesce({ quick, log });
      console.log('\n' + coalesceTable(r));
      results.coalesce = r;
      break;
    }
    case 'broadcast': {
      const r = await runBroadcast({ quick, log });
      console.log('\n' + broadcastTable(r));
      results.broadcast = r;
      break;
    }
    case 's7': {
      const r = await runWorkerScaling({ quick, log });
      console.log('\n' + workerScalingTable(r));
      results.s7 = r;
      break;
    }
    case 'grpc': {
      const subscribers = values['grpc-subscribers'] === undefined ? (quick ? 20 : 500) : Number(values['grpc-subscribers']);
      const r = await runGrpcBench({ subscribers, seconds: quick ? 5 : 20, log });
      console.log('\n' + grpcTable(r));
      results.grpc = r;
      break;
    }
    case 'cache': {
      const r = await runCacheBench({ quick, log });
      console.log('\n' + cacheTable(r));
      results.cache = r;
      break;
    }
    case 'freshness': {
      const r = await runFreshness({ quick, log });
      console.log('\n' + freshnessTable(r));
      results.freshness = r;
      break;
    }
    case 'monotonic': {
      const r = await runMonotonic({ quick, log });
      console.log('\nMonotonic reads across failover\n' + monotonicTable(r));
      results.monotonic = r;
      break;
    }
  }
}

const wall = (performance.now() - started) / 1000;
results.wallSeconds = wall;
mkdirSync(dirname(file), { recursive: true });
// A run of some scenarios updates only their entries.
writeFileSync(file, JSON.stringify({ ...readPrevious(), ...results }, (_k, v: unknown) => (v === Infinity ? null : v), 2) + '\n');
console.log(`\nresults written to ${file} (${(wall / 60).toFixed(1)} min)`);
if (failures > 0) process.exitCode = 1;
