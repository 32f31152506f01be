// How a node's change of state is logged (docs/configuration.md `nodes[]`): a warning, except
// the moves between healthy and lagging of a node meant to lag (`expectLag`), which are info.

import t from 'tap';
import { resolveConfig } from '../../../src/config/load.js';
import type { NodeStateName } from '../../../src/routing/node-view.js';
import { UpstreamNode } from '../../../src/upstream/node.js';

const CLIENT = { client: 'pipelined', connections: 1, pipelining: 1, pipelineStallMs: 5, connectTimeoutMs: 1000 } as const;
const POLICY = { ejectAfterFailures: 3, ejectBackoffMs: 1000, ejectBackoffMaxMs: 8000 };

t.test('expectLag: healthy ⇄ lagging at info; anything else, and any other node, at warn', async (t) => {
  const meant = new UpstreamNode({ id: 'lags', url: 'http://127.0.0.1:9/', weight: 1, expectLag: true }, 0, POLICY, CLIENT);
  const plain = new UpstreamNode({ id: 'plain', url: 'http://127.0.0.1:9/', weight: 1 }, 1, POLICY, CLIENT);
  t.teardown(() => Promise.all([meant.destroy(), plain.destroy()]));
  const level = (n: UpstreamNode, from: NodeStateName, to: NodeStateName): string => {
    n.state = to;
    return n.stateChangeLevel(from);
  };
  t.equal(level(meant, 'healthy', 'lagging'), 'info');
  t.equal(level(meant, 'lagging', 'healthy'), 'info');
  t.equal(level(meant, 'lagging', 'unhealthy'), 'warn', 'a failing probe is news even for it');
  t.equal(level(meant, 'healthy', 'ejected'), 'warn');
  t.equal(level(meant, 'unhealthy', 'lagging'), 'warn');
  t.equal(level(plain, 'healthy', 'lagging'), 'warn');
  t.equal(level(plain, 'lagging', 'healthy'), 'warn');
});

t.test('nodes[].expectLag in the config: a boolean, off by default', async (t) => {
  const c = resolveConfig({
    nodes: [
      { id: 'a', url: 'http://127.0.0.1:1', expectLag: true },
      { id: 'b', url: 'http://127.0.0.1:2' },
    ],
  });
  t.equal(c.nodes[0]!.expectLag, true);
  t.equal(c.nodes[1]!.expectLag, undefined);
  t.throws(() => resolveConfig({ nodes: [{ id: 'a', url: 'http://127.0.0.1:1', expectLag: 'yes' }] }), /nodes\[0\]\.expectLag/);
});
