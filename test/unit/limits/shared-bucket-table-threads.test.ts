// SharedBucketTable across threads (src/limits/shared-bucket-table.ts): worker threads
// attached to one table, each taking as fast as it can, are held to one bucket per key for the
// whole process: burst + rate x elapsed allowed in all, not that per thread.

import { Worker } from 'node:worker_threads';
import t from 'tap';
import { SharedBucketTable } from '../../../src/limits/shared-bucket-table.js';
import type { HammerJob, HammerReport } from '../../helpers/bucket-hammer.js';

const HAMMER = new URL('../../helpers/bucket-hammer.js', import.meta.url);
const THREADS = 4;
const RUN_MS = 1000;
// A burst of half a second of rate: all threads stalled at once (a loaded machine) for less
// than that lose no tokens to the cap, so the count stays near burst + rate x elapsed.
const RATE = 2000;
const BURST = 1000;

function start(job: HammerJob): Promise<Worker> {
  const w = new Worker(HAMMER, { workerData: job });
  return new Promise((resolve, reject) => {
    w.once('error', reject);
    w.once('message', (m) => (m === 'ready' ? resolve(w) : reject(new Error(`unexpected ${String(m)}`))));
  });
}

function report(w: Worker, endAt: number): Promise<HammerReport> {
  return new Promise((resolve, reject) => {
    w.once('error', reject);
    w.once('message', (r: HammerReport) => resolve(r));
    w.postMessage(endAt);
  });
}

t.test(`${THREADS} threads hammering shared keys are held to one limit for the process`, { timeout: 60_000 }, async (t) => {
  const table = SharedBucketTable.create(1000, RATE, BURST);
  const workers: Worker[] = [];
  t.teardown(() => Promise.all(workers.map((w) => w.terminate())));
  const starting: Promise<Worker>[] = [];
  for (let i = 0; i < THREADS; i++) {
    // 'hot' in every turn, the others in turn; each thread in its own order.
    const keys = ['hot', 'a', 'hot', 'b', 'hot', 'c'];
    for (let r = 0; r < i; r++) keys.push(keys.shift()!);
    starting.push(start({ buffer: table.buffer, rate: RATE, burst: BURST, keys, churn: `w${i}-` }));
  }
  workers.push(...(await Promise.all(starting)));
  const endAt = performance.timeOrigin + performance.now() + RUN_MS;
  const reports = await Promise.all(workers.map((w) => report(w, endAt)));

  for (const r of reports) t.equal(r.bad, null, 'no thread saw an impossible wait or level');
  t.ok(
    reports.every((r) => r.churned > 0),
    `new keys replaced slots meanwhile (${reports.map((r) => r.churned).join(', ')})`,
  );
  for (const key of ['hot', 'a', 'b', 'c']) {
    const tallies = reports.map((r) => r.tallies.find((x) => x.key === key)!);
    const allowed = tallies.reduce((s, x) => s + x.allowed, 0);
    const takes = tallies.reduce((s, x) => s + x.takes, 0);
    const elapsed = Math.max(...tallies.map((x) => x.last)) - Math.min(...tallies.map((x) => x.first));
    const expected = BURST + (RATE * elapsed) / 1000;
    t.ok(
      tallies.every((x) => x.allowed > 0),
      `${key}: every thread got some of it (${tallies.map((x) => x.allowed).join(', ')})`,
    );
    t.ok(takes > 3 * expected, `${key}: ${takes} takes, far more than the ${Math.round(expected)} the bucket allows`);
    // Never above (that would be a token handed out twice); below only if every thread
    // stalled for longer than the bucket takes to fill.
    t.ok(
      allowed <= expected + 1,
      `${key}: ${allowed} allowed in ${elapsed.toFixed(0)} ms by all threads, at most burst + rate x elapsed = ${expected.toFixed(1)}`,
    );
    t.ok(allowed >= expected * 0.9, `${key}: and not 10% fewer`);
  }
});
