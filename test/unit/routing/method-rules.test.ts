// Label rules and how default-mode batches are grouped by them (src/routing/method-rules.ts).

import t from 'tap';
import { buildMethodRules, routeRuns } from '../../../src/routing/method-rules.js';

t.test('a rule allows the nodes with every label and excludes the others', async (t) => {
  const nodes: { bit: number; labels?: Record<string, string> }[] = [
    { bit: 1, labels: { role: 'gpa', zone: 'a' } },
    { bit: 2, labels: { role: 'gpa' } },
    { bit: 4 },
  ];
  const rules = buildMethodRules({ getProgramAccounts: { labels: { role: 'gpa', zone: 'a' }, fallback: 'none' } }, nodes);
  const r = rules.get('getProgramAccounts')!;
  t.same([...r.allowed], [1, 0, 0]);
  t.equal(r.exclude, 6);
  t.equal(r.fallbackAny, false);
  t.equal(r.error.code, 7503);
  t.equal(r.error.message, 'No node with labels role=gpa, zone=a is available for getProgramAccounts');
  t.same(r.data, { attempts: 0, method: 'getProgramAccounts', labels: { role: 'gpa', zone: 'a' } });
});

t.test('batches: routed calls grouped per method, cut at the sub-batch size, request order kept inside', async (t) => {
  const plan = { methods: ['getSlot', 'getProgramAccounts', 'getSlot', 'getProgramAccounts', 'getProgramAccounts', 'getBalance', 'getTokenLargestAccounts'] };
  const order = Int32Array.from([0, 1, 2, 3, 4, 5, 6]);
  const routed = new Set(['getProgramAccounts', 'getTokenLargestAccounts']);
  const r = routeRuns(plan, order, 2, routed)!;
  t.same([...r.order], [0, 2, 5, 1, 3, 4, 6]);
  t.same(r.ends, [2, 3, 5, 6, 7], 'plain calls [0,2] [5]; getProgramAccounts [1,3] [4]; the other method alone');
  t.equal(routeRuns({ methods: ['getSlot', 'getBalance'] }, Int32Array.from([0, 1]), 100, routed), null, 'nothing routed: split as usual');
});
