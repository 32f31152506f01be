// A data-plane worker thread (README "Architecture"): its own event loop terminates HTTP and
// WebSocket for the shared RPC port, with its own upstream pools and subscription hub. It never
// waits for the control plane: tokens, node health, operator changes and config arrive as
// messages and are applied between requests; usage, counters and node figures leave once a
// second in one report.

import { parentPort, workerData } from 'node:worker_threads';
import { Reloader } from '../admin/reload.js';
import type { Config } from '../config/schema.js';
import type { LimitBuffers } from '../limits/limit-buffers.js';
import { RateLimiter } from '../limits/limiter.js';
import { TokenTable } from '../gateway/token-table.js';
import { createLogger } from '../log.js';
import { LatencyHistogram } from '../metrics/histogram.js';
import { ConsumptionTally } from '../limits/consumption-tally.js';
import { StopList } from '../stop-list.js';
import { onInternalError } from '../upstream/call.js';
import type { UpstreamNode } from '../upstream/node.js';
import { startDataPlane, type DataPlane } from './data-plane.js';
import { DeltaRecorder } from './delta-recorder.js';
import type { FromWorker, NodeDelta, ToWorker, WorkerInit } from './messages.js';

const REPORT_MS = 1000;
const NODE_HISTOGRAM = { digits: 2 } as const;

interface NodeSeen {
  requests: number;
  failures: number;
  buckets: Float64Array;
  bucketsSumMs: number;
  ejectedReported: boolean;
  /** The node's cost figures at the last report (NodeBudget.totals()). */
  costs: number[];
}

function send(m: FromWorker): void {
  parentPort!.postMessage(m);
}

/** What a node did since the last report (counters are cumulative on the node: diffed here). */
function nodeDelta(n: UpstreamNode, seen: WeakMap<UpstreamNode, NodeSeen>): NodeDelta {
  let s = seen.get(n);
  if (s === undefined) {
    s = {
      requests: 0,
      failures: 0,
      buckets: new Float64Array(n.latency.buckets.counts.length),
      bucketsSumMs: 0,
      ejectedReported: false,
      costs: [0, 0, 0, 0, 0],
    };
    seen.set(n, s);
  }
  n.latency.delta ??= new LatencyHistogram(NODE_HISTOGRAM);
  const d = n.latency.delta;
  const counts = n.latency.buckets.counts;
  const buckets = Array.from(counts, (c, i) => c - s.buckets[i]!);
  s.buckets.set(counts);
  const ejected = n.state === 'ejected' && !s.ejectedReported;
  s.ejectedReported = n.state === 'ejected';
  const out: NodeDelta = {
    id: n.id,
    inflight: n.inflight,
    requests: n.requests - s.requests,
    failures: n.failures - s.failures,
    lastError: n.lastError,
    ejected,
    latency: d.count > 0 ? d.encode() : null,
    buckets,
    bucketsSumMs: n.latency.buckets.sumMs - s.bucketsSumMs,
    costs: n.budget.totals().map((v, i) => v - s.costs[i]!),
  };
  s.costs = n.budget.totals();
  d.reset();
  s.requests = n.requests;
  s.failures = n.failures;
  s.bucketsSumMs = n.latency.buckets.sumMs;
  return out;
}

function report(index: number, plane: DataPlane, recorder: DeltaRecorder, seen: WeakMap<UpstreamNode, NodeSeen>): void {
  const counts = recorder.drain();
  const landing = plane.serving.services.landing?.tally.drain() ?? null;
  send({
    type: 'report',
    index,
    usage: plane.serving.services.usage.drain(),
    nodes: plane.pool.nodes.map((n) => nodeDelta(n, seen)),
    requests: counts.requests,
    duration: counts.duration,
    durationSumMs: counts.durationSumMs,
    rateLimited: counts.rateLimited,
    callEvents: counts.callEvents,
    ...(landing === null ? {} : { landing }),
    inflight: plane.serving.state.inflight,
    ws: {
      connections: plane.wsStats.connections,
      sharedSubscriptions: plane.hub.sharedCount,
      upstreamSubscriptions: plane.hub.upstreamSubscriptions(),
      redundancy: plane.hub.redundancyCounts(),
    },
  });
}

async function main(): Promise<void> {
  const init = workerData as WorkerInit;
  // Listening on the port from the start keeps this thread alive while the start awaits
  // things that hold no handle of the loop (WebAssembly compiles): a worker whose loop ran
  // empty would exit with uWS's poll handle still open. Messages wait until the plane is up.
  const early: ToWorker[] = [];
  let handle: (m: ToWorker) => void = (m) => early.push(m);
  parentPort!.on('message', (m: ToWorker) => handle(m));
  let config: Config = init.config;
  const log = createLogger(config.log.level).child({ worker: init.index });
  onInternalError((err) => log.error({ err }, 'internal error while finishing a call'));
  const tokens = new TokenTable();
  tokens.replaceAll(init.tokens.map((e) => ({ hash: Buffer.from(e.hash, 'base64'), record: e.record })));
  const stops = new StopList();
  const recorder = new DeltaRecorder();
  let plane: DataPlane;
  try {
    plane = await startDataPlane(config, {
      tokens,
      log,
      stops,
      probes: false,
      exclusive: false,
      port: init.port,
      wsPort: init.wsPort,
      recorder: () => recorder,
      limiter: RateLimiter.shared(config, init.limits),
      cacheReport: (counts) => send({ type: 'cacheCounts', index: init.index, counts }),
    });
  } catch (err) {
    await stops.run().catch(() => {});
    send({ type: 'failed', index: init.index, message: (err as Error).message });
    // uWS is closed: the thread may end (ending it any other way aborts the process).
    parentPort!.close();
    return;
  }
  plane.pool.applyHealth(init.health);
  // Attempts are reported as deltas from the first one on (nodes a reload adds start at their first report).
  for (const n of plane.pool.nodes) n.latency.delta = new LatencyHistogram(NODE_HISTOGRAM);
  const seen = new WeakMap<UpstreamNode, NodeSeen>();
  // The shared limit tables as the control plane sent them last (a reload may add some).
  let buffers: LimitBuffers = init.limits;
  const target = {
    reconfigure(next: Config): void {
      const missing = plane.reconfigure(next, buffers);
      if (missing !== null) log.error({ missing }, 'no shared buffer for some limits: they stay off in this worker');
    },
  };
  // Static tokens come with the table snapshots: this reloader applies only the rest.
  const reloader = new Reloader({ configPath: null, pool: plane.pool, target, tokens: new TokenTable(), log, setAdminToken: () => {} }, config);
  const timer = setInterval(() => report(init.index, plane, recorder, seen), REPORT_MS);
  // Limits shared across instances: the control plane syncs this worker's consumption with Redis.
  const tally = config.redis.url === null ? null : (plane.serving.services.limiter.tally = new ConsumptionTally(config.redis.maxKeysPerSync));
  const sendConsumed = (): void => {
    if (tally !== null && tally.entries > 0) send({ type: 'consumed', index: init.index, consumed: tally.drain() });
  };
  const tallyTimer = tally === null ? null : setInterval(sendConsumed, config.redis.syncMs);
  send({ type: 'listening', index: init.index, port: plane.port, wsPort: plane.wsPort });

  handle = (m: ToWorker): void => {
    switch (m.type) {
      case 'tokens':
        tokens.replaceAll(m.entries.map((e) => ({ hash: Buffer.from(e.hash, 'base64'), record: e.record })));
        // What a console write waits for before it answers (read your writes).
        send({ type: 'tokensApplied', index: init.index, gen: m.gen });
        return;
      case 'health':
        plane.pool.applyHealth(m.nodes);
        return;
      case 'config':
        config = m.config;
        // With the shared tables the reload attaches (new ones for newly limited methods).
        buffers = m.limits;
        if (m.certificates !== null) {
          try {
            plane.listener.replaceCertificate(m.certificates);
          } catch (err) {
            log.error({ err }, 'this worker could not take the new certificate; it keeps the old one');
          }
        }
        void reloader
          .applyConfig(config)
          .catch((err: unknown) => log.error({ err }, 'applying the reloaded config failed'))
          .finally(() => send({ type: 'configured', index: init.index, seq: m.seq }));
        return;
      case 'cacheEvents':
        plane.cache?.apply(m.events);
        return;
      case 'feeSlots':
        plane.fees?.apply(m.blocks);
        return;
      case 'closeAfterAnswers':
        plane.serving.state.draining = true;
        return;
      case 'drain':
        void plane.drain(m.graceMs, log).then(async () => {
          clearInterval(timer);
          if (tallyTimer !== null) clearInterval(tallyTimer);
          // The last report carries the usage of the requests that just finished.
          report(init.index, plane, recorder, seen);
          await stops.run().catch((err: unknown) => log.warn({ err }, 'stopping the data plane failed'));
          send({ type: 'drained', index: init.index });
          parentPort!.close();
        });
        return;
    }
  };
  for (const m of early.splice(0)) handle(m);
}

main().catch((err: unknown) => {
  // Before anything listens: tell the control plane, which fails the start.
  send({ type: 'failed', index: (workerData as WorkerInit).index, message: (err as Error).stack ?? String(err) });
});
