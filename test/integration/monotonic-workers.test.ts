// Monotonic reads with two data-plane workers (docs/routing.md "Monotonic reads"): the high-water marks
// are one SharedArrayBuffer per node, so what one worker served holds in the other, and the
// admin API reads the marks directly (no worker report is involved).

import t from 'tap';
import { eventually } from '../helpers/eventually.js';
import { keyOnNode, startHarness, TOKEN } from '../helpers/gateway.js';

const ADMIN = 'admin-token-0123456789abcdef';
const GET_SLOT = '{"jsonrpc":"2.0","id":1,"method":"getSlot"}';

t.test('a key served in one worker is never given a lower slot by the other', async (t) => {
  const h = await startHarness({
    sims: [{}, { lag: 100 }],
    admin: true,
    config: { rpc: { workers: 2 }, admin: { token: ADMIN }, affinity: { monotonicWaitMs: 300 }, health: { intervalMs: 150 } },
  });
  t.teardown(() => h.close());
  const admin = async (path: string, init: RequestInit = {}): Promise<Response> =>
    fetch(h.gw.admin!.url + path, { ...init, headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' } });
  // A key whose node is n0 (the same map in every worker: same config).
  const key = keyOnNode(h, 0);
  const headers = { 'content-type': 'application/json', 'x-service-affinity': 'key', 'x-service-affinity-key': key };
  // One keep-alive connection: every call lands in the same worker.
  let seen = -1;
  for (let i = 0; i < 5; i++) {
    const r = await fetch(`${h.url}/api-token/${TOKEN}`, { method: 'POST', headers, body: GET_SLOT });
    t.equal(r.headers.get('x-service-node'), 'n0');
    seen = Math.max(seen, ((await r.json()) as { result: number }).result);
  }
  const nodes = (await (await admin('/admin/nodes')).json()) as { id: string; highWaterSlot: number | null }[];
  const n0 = nodes.find((n) => n.id === 'n0')!;
  t.ok(n0.highWaterSlot !== null && n0.highWaterSlot >= seen, `the control plane reads the worker's mark at once (${n0.highWaterSlot} >= ${seen})`);
  t.equal(nodes.find((n) => n.id === 'n1')!.highWaterSlot, null, 'n1 served no key');

  t.equal((await admin('/admin/nodes/n0', { method: 'PATCH', body: '{"drained":true}' })).status, 200);
  // Fresh connections land on both workers; none may hand the key a lower slot.
  const before = h.gw.dataPlane.requestsByWorker();
  const statuses: number[] = [];
  const lower: number[] = [];
  await eventually(
    () => `both workers answered the key after the drain (${JSON.stringify(h.gw.dataPlane.requestsByWorker())} from ${JSON.stringify(before)})`,
    async () => {
      const rs = await Promise.all(
        Array.from({ length: 6 }, async () => {
          const r = await fetch(`${h.url}/api-token/${TOKEN}`, { method: 'POST', headers: { ...headers, connection: 'close' }, body: GET_SLOT });
          const j = (await r.json()) as { result?: number; error?: { code: number } };
          statuses.push(r.status);
          if (j.result !== undefined && j.result < seen) lower.push(j.result);
          return j;
        }),
      );
      t.ok(
        rs.every((j) => j.error?.code === 7505),
        'every answer is 7505',
      );
      const now = h.gw.dataPlane.requestsByWorker();
      return now.every((n, i) => n > before[i]!);
    },
    20_000,
    100,
  );
  t.same(lower, [], 'no worker handed the key a lower slot');
  t.ok(statuses.every((s) => s === 503));
  const m = await (await admin('/metrics')).text();
  t.match(m, /jumpgate_monotonic_refusals_total\{node="n0",reason="drained"\} [1-9]/, 'refusals of both workers counted under the drained node');
});
