// A node dies under load and no request is lost (docs/routing.md "Retries and node health"); a lagging node gets no
// traffic while healthy nodes exist.

import t from 'tap';
import { eventually } from '../helpers/eventually.js';
import { startHarness } from '../helpers/gateway.js';

const GET_SLOT = '{"jsonrpc":"2.0","id":1,"method":"getSlot"}';
const GET_IDENTITY = '{"jsonrpc":"2.0","id":1,"method":"getIdentity"}';

/** Runs `total` jobs with at most `concurrency` at a time, in start order. */
async function runPool(total: number, concurrency: number, job: (i: number) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < total) await job(next++);
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
}

t.test('killing a node under load loses no request', async (t) => {
  const h = await startHarness({ sims: [{}, {}, {}] });
  t.teardown(() => h.close());
  const TOTAL = 1000;
  const results: { status: number; result: unknown; node: string | null; startedAfterKill: boolean }[] = [];
  let completed = 0;
  let killed = false;
  let killing: Promise<void> | null = null;

  await runPool(TOTAL, 20, async (i) => {
    const startedAfterKill = killed;
    const r = await h.post(GET_SLOT);
    let result: unknown;
    try {
      result = (JSON.parse(r.text) as { result?: unknown }).result;
    } catch {
      result = r.text;
    }
    results[i] = { status: r.status, result, node: r.headers.get('x-service-node'), startedAfterKill };
    if (++completed === 200) {
      killing = h.sims[1]!.close().then(() => {
        killed = true;
      });
      await killing;
    }
  });
  await killing;

  t.equal(results.length, TOTAL);
  const bad = results.filter((r) => r.status !== 200 || typeof r.result !== 'number');
  t.same(bad.slice(0, 5), [], 'every request got HTTP 200 with a numeric slot');
  t.equal(bad.length, 0, 'none lost');
  const before = results.filter((r) => !r.startedAfterKill);
  const after = results.filter((r) => r.startedAfterKill);
  t.ok(after.length >= 700, `most requests started after the kill (${after.length})`);
  t.ok(
    before.some((r) => r.node === 'n1'),
    'the killed node served requests before the kill',
  );
  t.equal(after.filter((r) => r.node === 'n1').length, 0, 'and none after');
  t.same(new Set(after.map((r) => r.node)), new Set(['n0', 'n2']), 'the survivors took the load');
  t.not(h.gw.pool.byId('n1')!.state, 'healthy', 'the dead node is no longer healthy');
});

t.test('a lagging node is avoided', async (t) => {
  const h = await startHarness({
    sims: [{}, {}, { lag: 100 }],
    config: { health: { maxSlotLag: 32, intervalMs: 100 } },
  });
  t.teardown(() => h.close());
  const state = (id: string): string => h.gw.pool.byId(id)!.state;
  await eventually('n2 lagging, n0 and n1 healthy', () => state('n2') === 'lagging' && state('n0') === 'healthy' && state('n1') === 'healthy');
  t.equal(h.gw.pool.byId('n2')!.state, 'lagging');
  t.equal(h.gw.pool.byId('n0')!.state, 'healthy');
  t.equal(h.gw.pool.byId('n1')!.state, 'healthy');

  const seen = new Map<string, number>();
  await runPool(200, 10, async () => {
    const r = await h.post(GET_IDENTITY);
    t.equal(r.status, 200);
    const identity = (JSON.parse(r.text) as { result: { identity: string } }).result.identity;
    t.equal(r.headers.get('x-service-node'), identity, 'header and answer agree');
    seen.set(identity, (seen.get(identity) ?? 0) + 1);
  });
  t.equal(seen.get('n2') ?? 0, 0, 'the lagging node answered none of 200 calls');
  t.ok((seen.get('n0') ?? 0) > 0 && (seen.get('n1') ?? 0) > 0, 'the healthy nodes share the load');
  t.equal(h.sims[2]!.stats.byMethod.get('getIdentity') ?? 0, 0, 'no getIdentity ever reached the lagging node');
  t.equal(h.gw.pool.byId('n2')!.state, 'lagging');
});
