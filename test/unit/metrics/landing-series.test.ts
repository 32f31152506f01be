// Landing series on /metrics (src/metrics/landing-series.ts): counts per node and outcome, and
// the slots-to-land histogram built from the per-slot counts (cumulative, 64 or more only in
// +Inf), read from the landing figures at scrape time.

import t from 'tap';
import { emptyCounts } from '../../../src/landing/counts.js';
import { LandingFigures } from '../../../src/landing/figures.js';
import { GatewayMetrics } from '../../../src/metrics/prometheus.js';

function sample(text: string, line: string): number | undefined {
  const found = text.split('\n').find((l) => l.startsWith(line + ' '));
  return found === undefined ? undefined : Number(found.slice(line.length + 1));
}

t.test('counts per node and outcome, and the slots-to-land histogram', async (t) => {
  const figures = new LandingFigures();
  const m = new GatewayMetrics({ nodes: () => [], inflight: () => 0 });
  m.watchLanding(() => figures.nodes());
  let text = await m.text();
  t.match(text, /# TYPE jumpgate_landing_transactions_total counter/);
  t.match(text, /# TYPE jumpgate_landing_slots_to_land histogram/);
  t.equal(sample(text, 'jumpgate_landing_transactions_total{node="a",outcome="sent"}'), undefined, 'no node before any count');

  const c = emptyCounts();
  Object.assign(c, { sent: 10, landed: 6, expired: 1, failed: 1, untracked: 2, resent: 3 });
  c.slots[0] = 1;
  c.slots[2] = 2;
  c.slots[5] = 1;
  c.slots[40] = 1;
  c.slots[64] = 2; // 64 or more
  figures.add({ nodes: { a: c }, tokens: {} });
  figures.add({ nodes: { a: { ...emptyCounts(), sent: 1 } }, tokens: {} });
  text = await m.text();
  const expect: Record<string, number> = { sent: 11, landed: 6, expired: 1, failed: 1, untracked: 2, resent: 3 };
  for (const [outcome, n] of Object.entries(expect)) t.equal(sample(text, `jumpgate_landing_transactions_total{node="a",outcome="${outcome}"}`), n, outcome);
  const le = (b: string): number | undefined => sample(text, `jumpgate_landing_slots_to_land_bucket{node="a",le="${b}"}`);
  t.same(['0', '1', '2', '3', '4', '6', '8', '12', '16', '32', '64', '+Inf'].map(le), [1, 1, 3, 3, 3, 4, 4, 4, 4, 4, 5, 7]);
  t.equal(sample(text, 'jumpgate_landing_slots_to_land_count{node="a"}'), 7);
  t.equal(sample(text, 'jumpgate_landing_slots_to_land_sum{node="a"}'), 0 + 4 + 5 + 40 + 128);
});
