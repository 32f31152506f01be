// Monotonic reads per commitment (docs/solana-routing.md "Monotonic reads per commitment"): a key
// reading confirmed, processed and finalized slots never sees one go back at any of the three
// when its node is killed (inline) or drained (two data-plane workers sharing the marks) and the
// key fails over to a node 2 slots behind. Each level waits only
// for its own mark: were the levels one mark, the finalized read after the failover would need
// the other node's finalized slot to pass the processed slot the key saw (32 slots on), and
// would be refused with 7505 instead of served.

import t from 'tap';
import { Commitment } from '../../src/solana/chain-view.js';
import { startSim } from '../../src/tools/sim/node.js';
import { eventually } from '../helpers/eventually.js';
import { keyOnNode, startHarness } from '../helpers/gateway.js';
import { startTcpProxy } from '../helpers/tcp-proxy.js';

const LEVELS = ['processed', 'confirmed', 'finalized'] as const;
const ADMIN = 'admin-token-monotonic-commitment-0123';

for (const { failover, workers } of [
  { failover: 'kill', workers: 0 },
  { failover: 'drain', workers: 2 },
] as const) {
  t.test(`confirmed, processed, finalized through a ${failover} (${workers} workers): no level goes back, none waits for another`, async (t) => {
    const sims = await Promise.all([startSim({ id: 'n0', port: 0, synthetic: true }), startSim({ id: 'n1', port: 0, synthetic: true, lag: 2 })]);
    const proxy = await startTcpProxy(sims[0]!.port);
    const h = await startHarness({
      sims: [],
      extraNodes: [
        { id: 'n0', url: proxy.url },
        { id: 'n1', url: sims[1]!.url },
      ],
      workers,
      admin: true,
      config: {
        admin: { token: ADMIN },
        affinity: { monotonic: true, monotonicWaitMs: 3000 },
        health: { intervalMs: 150, timeoutMs: 300, chainWatch: true },
        limits: { upstreamTimeoutMs: 500 },
      },
    });
    t.teardown(async () => {
      await h.close();
      await proxy.close();
      await Promise.all(sims.map((s) => s.close()));
    });
    const pool = h.gw.pool;
    await eventually('every chain view known', () => pool.nodes.every((n) => n.chain.slot(Commitment.Finalized) > 0));
    const key = keyOnNode(h, 0);
    const headers = { 'X-Service-Affinity': 'key', 'X-Service-Affinity-Key': key };
    const seen = [-1, -1, -1];
    const regressions: string[] = [];
    const read = async (level: number, method: string): Promise<{ node: string | null; status: number; code: number | null }> => {
      const r = await h.call(
        method,
        method === 'getSlot' ? [{ commitment: LEVELS[level] }] : ['11111111111111111111111111111111', { commitment: LEVELS[level] }],
        headers,
      );
      const result = r.json.result as number | { context: { slot: number } } | undefined;
      const slot = typeof result === 'number' ? result : result === undefined ? -1 : result.context.slot;
      if (slot >= 0 && slot < seen[level]!) regressions.push(`${LEVELS[level]} ${slot} from ${r.node} after ${seen[level]}`);
      if (slot > seen[level]!) seen[level] = slot;
      return { node: r.node, status: r.status, code: (r.json.error as { code: number } | undefined)?.code ?? null };
    };
    for (const level of [1, 0, 2, 0, 1, 2])
      for (const method of ['getSlot', 'getBalance']) t.equal((await read(level, method)).node, 'n0', 'the key is on its node');
    t.ok(seen[0]! > seen[2]!, 'the key saw a processed slot ahead of its finalized one');
    t.equal(pool.byId('n0')!.mark.at(Commitment.Processed), seen[0], "n0's processed mark is the key's processed slot");
    t.equal(pool.byId('n0')!.mark.at(Commitment.Finalized), seen[2], 'its finalized mark the finalized one');
    if (failover === 'kill') await proxy.stop();
    else {
      const r = await fetch(h.gw.admin!.url + '/admin/nodes/n0', {
        method: 'PATCH',
        headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' },
        body: '{"drained":true}',
      });
      t.equal(r.status, 200, 'n0 drained');
    }
    // Finalized first: its mark is reached by n1 two slots on, the processed one only ~34 slots on.
    const start = performance.now();
    const fin = await read(Commitment.Finalized, 'getSlot');
    t.equal(fin.status, 200, `finalized served after the failover (error ${fin.code})`);
    t.equal(fin.node, 'n1');
    t.ok(performance.now() - start < 2500, 'waited at most for n1 to pass the finalized mark');
    for (const level of [1, 0, 2, 0, 1, 2]) {
      for (const method of ['getSlot', 'getBalance']) {
        const r = await read(level, method);
        t.equal(r.status, 200, `${LEVELS[level]} ${method} served (error ${r.code})`);
        t.equal(r.node, 'n1');
      }
    }
    t.same(regressions, [], 'no context slot went back at any level');
  });
}
