// The health loop (HealthChecker) with scripted probe results instead of nodes on the network:
// healthy or lagging by the distance to the best slot, unhealthy on a failed probe, ejected
// nodes probed again only after their backoff and readmitted by one good probe.

import t from 'tap';
import type { NodeStateName } from '../../../src/routing/node-view.js';
import { HealthChecker, type HealthOptions, type ProbeResult } from '../../../src/upstream/health.js';
import { UpstreamNode } from '../../../src/upstream/node.js';
import { eventually } from '../../helpers/eventually.js';

type Test = Parameters<Parameters<typeof t.test>[0]>[0];

const OPTS: HealthOptions = { chain: 'solana', intervalMs: 60_000, maxSlotLag: 32, timeoutMs: 1000 };
const CLIENT = { client: 'pipelined', connections: 1, pipelining: 1, pipelineStallMs: 5, connectTimeoutMs: 1000 } as const;

/** Nodes on a port nobody listens on: the probes here are scripted, nothing connects. */
function nodes(t: Test, count: number, ejectBackoffMs = 1000): UpstreamNode[] {
  const policy = { ejectAfterFailures: 3, ejectBackoffMs, ejectBackoffMaxMs: 8 * ejectBackoffMs };
  const ns = Array.from({ length: count }, (_, i) => new UpstreamNode({ id: `n${i}`, url: `http://127.0.0.1:9/${i}`, weight: 1 }, i, policy, CLIENT));
  t.teardown(() => Promise.all(ns.map((n) => n.destroy())));
  return ns;
}

const ok = (slot: number, ms = 3): ProbeResult => ({ ok: true, slot, reason: '', ms });
const fail = (reason: string): ProbeResult => ({ ok: false, slot: -1, reason, ms: 1 });

interface Change {
  node: string;
  from: string;
  to: NodeStateName;
  reason: string;
}

/** A checker whose probes answer from `script` (node id → result); records probes and state changes. */
function checker(ns: UpstreamNode[], script: Map<string, ProbeResult>, opts: HealthOptions = OPTS): { hc: HealthChecker; probed: string[]; changes: Change[] } {
  const probed: string[] = [];
  const changes: Change[] = [];
  const hc = new HealthChecker(
    () => ns,
    opts,
    { stateChanged: (node, from, reason) => changes.push({ node: node.id, from, to: node.state, reason }) },
    async (node) => {
      probed.push(node.id);
      return script.get(node.id) ?? fail('no script');
    },
  );
  return { hc, probed, changes };
}

t.test('healthy or lagging by the distance to the best slot of the round', async (t) => {
  const ns = nodes(t, 3);
  const { hc, changes } = checker(
    ns,
    new Map([
      ['n0', ok(1000)],
      ['n1', ok(968)],
      ['n2', ok(967)],
    ]),
  );
  await hc.round();
  t.same(
    ns.map((n) => [n.state, n.slot]),
    [
      ['healthy', 1000],
      ['healthy', 968],
      ['lagging', 967],
    ],
    'maxSlotLag 32: 32 behind is healthy, 33 behind lagging',
  );
  t.same(changes, [{ node: 'n2', from: 'healthy', to: 'lagging', reason: '' }], 'one state change, for n2');
  t.equal(ns[0]!.ewmaMs, 3, 'a node without traffic yet takes its latency from the probe');
});

t.test('the best slot ignores unhealthy and ejected nodes', async (t) => {
  const ns = nodes(t, 3);
  ns[1]!.state = 'unhealthy';
  ns[1]!.slot = 5000;
  ns[2]!.eject(Date.now()); // not due for a while
  ns[2]!.slot = 9000;
  const { hc, probed } = checker(
    ns,
    new Map([
      ['n0', ok(100)],
      ['n1', fail('still down')],
    ]),
  );
  await hc.round();
  t.same(probed, ['n0', 'n1'], 'the ejected node is not probed before its backoff has passed');
  t.equal(ns[0]!.state, 'healthy', 'stale slots of unhealthy and ejected nodes do not make n0 lag');
});

t.test('a failed probe makes a node unhealthy; a good one brings it back', async (t) => {
  const ns = nodes(t, 2);
  const script = new Map([
    ['n0', ok(10)],
    ['n1', fail('getHealth not ok')],
  ]);
  const { hc, changes } = checker(ns, script);
  await hc.round();
  t.equal(ns[1]!.state, 'unhealthy');
  t.equal(ns[1]!.lastError, 'getHealth not ok');
  t.same(changes, [{ node: 'n1', from: 'healthy', to: 'unhealthy', reason: 'getHealth not ok' }]);
  script.set('n1', ok(10));
  await hc.round();
  t.equal(ns[1]!.state, 'healthy', 'unhealthy nodes are probed every round');
  t.same(changes[1], { node: 'n1', from: 'unhealthy', to: 'healthy', reason: '' });
});

t.test('an ejected node is probed only after its backoff; one good probe readmits it', async (t) => {
  const ns = nodes(t, 2, 150);
  const script = new Map([
    ['n0', ok(10)],
    ['n1', fail('refused')],
  ]);
  const { hc, probed, changes } = checker(ns, script);
  const ejectedAt = Date.now();
  ns[1]!.eject(ejectedAt);
  await hc.round();
  t.notOk(probed.includes('n1'), 'not probed during its backoff');
  t.equal(ns[1]!.state, 'ejected');

  // Half-open probe fails: still ejected, backoff doubled.
  await eventually('the half-open probe', async () => {
    await hc.round();
    return probed.includes('n1');
  });
  t.ok(Date.now() - ejectedAt >= 150, 'probed once the backoff had passed');
  t.equal(ns[1]!.state, 'ejected', 'a failed half-open probe keeps the node out');
  t.equal(ns[1]!.backoffMs, 600, 'and doubles its backoff (150 → 300 at the ejection, → 600 now)');
  t.same(changes, [], 'ejected → ejected is no change');

  script.set('n1', ok(10));
  ns[1]!.ejectedUntil = 0; // its (longer) backoff has passed
  probed.length = 0;
  await hc.round();
  t.ok(probed.includes('n1'));
  t.equal(ns[1]!.state, 'healthy', 'one good probe readmits it');
  t.equal(ns[1]!.consecutiveFailures, 0);
  t.same(changes, [{ node: 'n1', from: 'ejected', to: 'healthy', reason: '' }]);
});

t.test('a probe that was running when live traffic ejected the node is ignored', async (t) => {
  const ns = nodes(t, 1);
  let answer: (r: ProbeResult) => void = () => undefined;
  const changes: string[] = [];
  const hc = new HealthChecker(
    () => ns,
    OPTS,
    { stateChanged: (node, from) => changes.push(`${from}->${node.state}`) },
    () => new Promise<ProbeResult>((resolve) => (answer = resolve)),
  );
  const round = hc.round();
  t.equal(ns[0]!.probing, true);
  const second = hc.round(); // the node is still being probed: not probed twice
  ns[0]!.eject(Date.now());
  const until = ns[0]!.ejectedUntil;
  answer(ok(10));
  await Promise.all([round, second]);
  t.equal(ns[0]!.state, 'ejected', 'the good answer predates the ejection: no readmission');
  t.equal(ns[0]!.ejectedUntil, until, 'nor a second ejection');
  t.equal(ns[0]!.probing, false);
  t.same(changes, []);
});

t.test('lagging is measured against slots from this round too', async (t) => {
  const ns = nodes(t, 2);
  ns[0]!.slot = 500; // from an earlier round
  const { hc } = checker(
    ns,
    new Map([
      ['n0', ok(500)],
      ['n1', ok(600)],
    ]),
  );
  await hc.round();
  t.equal(ns[0]!.state, 'lagging', 'n1 answered 600 in the same round');
  t.equal(ns[1]!.state, 'healthy');
});
