// The in-memory usage meter (src/usage/meter.ts). Draining, cell reuse and the per-token
// method cap are also covered in test/unit/store/store.test.ts beside the flush.

import t from 'tap';
import { LatencyHistogram } from '../../../src/metrics/histogram.js';
import { UsageMeter } from '../../../src/usage/meter.js';

t.test('records add up per token and method', async (t) => {
  const m = new UsageMeter();
  m.record('t1', 'getSlot', 1, 0, 40, 60);
  m.record('t1', 'getSlot', 2, 1, 10, 20);
  m.record('t1', 'getBalance', 1, 1, 5, 5);
  m.record('t2', 'getSlot', 7, 0, 1, 1);
  t.same(m.totals('t1'), { calls: 4, errors: 2, bytesIn: 55, bytesOut: 85 });
  t.same(m.totals('t2'), { calls: 7, errors: 0, bytesIn: 1, bytesOut: 1 });
  const cells = m.drain();
  t.same(
    cells.map((c) => [c.tokenId, c.method, c.calls, c.errors, c.bytesIn, c.bytesOut]),
    [
      ['t1', 'getSlot', 3, 1, 50, 80],
      ['t1', 'getBalance', 1, 1, 5, 5],
      ['t2', 'getSlot', 7, 0, 1, 1],
    ],
  );
});

t.test('latency: every call of a record took it; none recorded without a latency or without calls', async (t) => {
  const m = new UsageMeter();
  m.record('t1', 'getSlot', 3, 0, 0, 0, 2000);
  m.record('t1', 'getSlot', 1, 0, 0, 0);
  m.record('t1', 'getSlot', 0, 2, 0, 0, 9_000_000);
  m.record('t1', 'bytes only', 0, 0, 10, 10, 500);
  const cells = m.drain();
  const h = LatencyHistogram.decode(cells.find((c) => c.method === 'getSlot')!.histogram!);
  t.equal(h.count, 3, 'a batch of three at the batch latency');
  t.ok(Math.abs(h.percentile(99) - 2000) < 40, `p99 ${h.percentile(99)}`);
  t.equal(cells.find((c) => c.method === 'bytes only')!.histogram, null);
});

t.test('a drain hands everything over once', async (t) => {
  const m = new UsageMeter();
  m.record('t1', 'getSlot', 1, 0, 1, 1, 100);
  t.equal(m.drain().length, 1);
  t.same(m.drain(), []);
  t.same(m.totals('t1'), { calls: 0, errors: 0, bytesIn: 0, bytesOut: 0 });
  m.record('t1', 'getSlot', 2, 0, 0, 0);
  t.same(
    m.drain().map((c) => [c.calls, c.histogram]),
    [[2, null]],
    'a kept cell with no new latency hands over no histogram',
  );
});

t.test('merge: cells drained from other meters add up exactly, latency included', async (t) => {
  const a = new UsageMeter();
  const b = new UsageMeter();
  a.record('t1', 'getSlot', 3, 1, 30, 300, 1000);
  b.record('t1', 'getSlot', 2, 0, 20, 200, 3000);
  b.record('t2', 'getBalance', 1, 0, 5, 50);
  const control = new UsageMeter();
  control.merge(a.drain());
  control.merge(b.drain());
  t.same(control.totals('t1'), { calls: 5, errors: 1, bytesIn: 50, bytesOut: 500 });
  t.same(control.totals('t2'), { calls: 1, errors: 0, bytesIn: 5, bytesOut: 50 });
  const cells = control.drain();
  const slot = cells.find((c) => c.method === 'getSlot')!;
  const h = LatencyHistogram.decode(slot.histogram!);
  t.equal(h.count, 5, "both meters' latencies, one per call");
  t.ok(h.percentile(50) < 1100 && h.percentile(99) > 2900, `p50 ${h.percentile(50)}, p99 ${h.percentile(99)}`);
  t.equal(cells.find((c) => c.method === 'getBalance')!.histogram, null, 'no latency merged where none was recorded');
  t.same(control.drain(), [], 'merged usage is handed over once');
});
