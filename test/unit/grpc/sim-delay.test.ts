// A simulated source's jitter (docs/grpc.md "Simulated sources"): drawn from the update and the
// source's seed, so every stream of one source delays an update alike and two seeds do not.

import t from 'tap';
import { GeneratedFeed } from '../../../src/tools/sim-grpc/feed.js';
import { delayUnit } from '../../../src/tools/sim-grpc/server.js';

t.test('the same update and seed give the same delay; other seeds independent ones', async (t) => {
  const feed = new GeneratedFeed();
  const updates = [...feed.slotUpdates(1000), ...feed.blockUpdates(1000), ...feed.blockUpdates(1001)];
  const a = updates.map((u) => delayUnit(1, u));
  const again = updates.map((u) => delayUnit(1, u));
  const b = updates.map((u) => delayUnit(2, u));
  t.same(a, again, 'deterministic per (seed, update)');
  t.ok(
    a.every((x) => x >= 0 && x < 1),
    'in [0, 1)',
  );
  t.ok(new Set(a).size > updates.length * 0.9, 'updates differ');
  const differing = a.filter((x, i) => Math.abs(x - b[i]!) > 0.01).length;
  t.ok(differing > updates.length * 0.8, `seeds 1 and 2 differ on ${differing} of ${updates.length}`);
  // Roughly uniform: the mean of many draws near 0.5.
  const many = [];
  for (let s = 0; s < 50; s++) for (const u of updates) many.push(delayUnit(s, u));
  const mean = many.reduce((x, y) => x + y, 0) / many.length;
  t.ok(mean > 0.45 && mean < 0.55, `mean ${mean.toFixed(3)}`);
});
