import t from 'tap';
import { pickNode } from '../../../src/routing/select.js';
import { UpstreamNode } from '../../../src/upstream/node.js';

const POLICY = { ejectAfterFailures: 3, ejectBackoffMs: 1000, ejectBackoffMaxMs: 30000 };
const CLIENT = { client: 'pipelined', connections: 4, pipelining: 8, pipelineStallMs: 5, connectTimeoutMs: 1000 } as const;

function nodes(specs: { weight?: number; ewma?: number; state?: UpstreamNode['state'] }[]): UpstreamNode[] {
  return specs.map((s, i) => {
    const n = new UpstreamNode({ id: `n${i}`, url: `http://127.0.0.1:${1000 + i}`, weight: s.weight ?? 1 }, i, POLICY, CLIENT);
    n.ewmaMs = s.ewma ?? 1;
    n.state = s.state ?? 'healthy';
    return n;
  });
}

/** Simulates a load where each pick stays in flight for `hold` picks. */
function share(ns: UpstreamNode[], picks: number, hold: number): number[] {
  const counts = ns.map(() => 0);
  const live: UpstreamNode[] = [];
  for (let i = 0; i < picks; i++) {
    const n = pickNode(ns, 0)!;
    counts[ns.indexOf(n)]!++;
    n.inflight++;
    live.push(n);
    if (live.length > hold) live.shift()!.inflight--;
  }
  return counts.map((c) => c / picks);
}

t.test('weights count even with two nodes', async (t) => {
  const ns = nodes([{ weight: 2 }, { weight: 1 }]);
  const [a, b] = share(ns, 20000, 20);
  t.ok(a! > 0.6 && b! > 0.2, `2:1 weights give ${a!.toFixed(2)} : ${b!.toFixed(2)}`);
  await Promise.all(ns.map((n) => n.close()));
});

t.test('a slow node gets little traffic', async (t) => {
  const ns = nodes([{ ewma: 0.2 }, { ewma: 40 }, { ewma: 0.3 }]);
  const s = share(ns, 20000, 10);
  t.ok(s[1]! < 0.05, `slow node share ${s[1]!.toFixed(3)}`);
  await Promise.all(ns.map((n) => n.close()));
});

t.test('tiers: healthy first, then lagging, then unhealthy; never ejected, drained or weight 0', async (t) => {
  const ns = nodes([{ state: 'lagging' }, { state: 'unhealthy' }, { state: 'ejected' }, { weight: 0 }]);
  t.equal(pickNode(ns, 0), ns[0], 'lagging before unhealthy');
  t.equal(pickNode(ns, ns[0]!.bit), ns[1], 'unhealthy as a last resort');
  t.equal(pickNode(ns, ns[0]!.bit | ns[1]!.bit), null, 'ejected and weight-0 nodes are never picked');
  ns[0]!.drained = true;
  t.equal(pickNode(ns, 0), ns[1], 'drained nodes are skipped');
  await Promise.all(ns.map((n) => n.close()));
});

t.test('excluded (already tried) nodes are skipped', async (t) => {
  const ns = nodes([{}, {}, {}]);
  for (let i = 0; i < 200; i++) t.not(pickNode(ns, ns[1]!.bit), ns[1]);
  await Promise.all(ns.map((n) => n.close()));
});
