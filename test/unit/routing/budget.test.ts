// A node's provider budget (docs/routing.md "Provider budgets"): the bucket, method costs, the
// daily cap, 429 cooldowns and the effective rate they lower; and the methods a node serves
// ("Unsupported methods"), configured and learned.

import t from 'tap';
import { BACKOFF_MS, CREEP_PER_S, FLOOR, LOWER_BY, NodeBudget, REPEAT_429_MS } from '../../../src/routing/budget.js';
import { MethodSupport } from '../../../src/routing/method-support.js';

const WALL = Date.UTC(2026, 0, 1, 12, 30);

t.test('a budget spends and refills at its rate; dear methods cost more', async (t) => {
  const b = new NodeBudget();
  b.configure({ rate: 10, costs: { getProgramAccounts: 5 } }, 1, 0);
  t.equal(b.costOf('getBalance'), 1);
  t.equal(b.costOf('getProgramAccounts'), 5);
  t.notOk(b.blocked(5, 0, WALL), 'a full bucket holds one second of credits');
  b.spend(5, 1, 0, WALL);
  b.spend(5, 1, 0, WALL);
  t.ok(b.blocked(1, 0, WALL), 'spent');
  t.equal(b.waitMs(1, 0, WALL), 100, 'one credit comes back in 100 ms');
  t.notOk(b.blocked(1, 100, WALL), 'refilled after 100 ms');
  t.ok(b.blocked(5, 100, WALL), 'not yet for a dearer call');
  t.equal(b.calls, 2);
  t.equal(b.credits, 10);
  t.same(
    b.hourly(WALL).map((h) => [h.hour, h.calls, h.credits]),
    [['2026-01-01T12:00:00.000Z', 2, 10]],
  );
});

t.test("a worker's share of the budget; the view shows the whole node's", async (t) => {
  const b = new NodeBudget();
  b.configure({ rate: 100, burst: 200 }, 0.25, 0);
  t.equal(b.rate, 25);
  t.equal(b.burst, 50);
  t.same(b.view(0, WALL)?.rate, 100);
  t.same(b.view(0, WALL)?.burst, 200);
  t.equal(new NodeBudget().view(0, WALL), null, 'no budget, no view');
});

t.test('the daily cap', async (t) => {
  const b = new NodeBudget();
  b.configure({ rate: 1000, perDay: 3 }, 1, 0);
  b.spend(3, 3, 0, WALL);
  t.ok(b.blocked(1, 10_000, WALL), 'spent for the day');
  t.ok(b.waitMs(1, 10_000, WALL) > 11 * 3_600_000, 'until the next UTC day');
  t.notOk(b.blocked(1, 10_000, WALL + 86_400_000), 'a new day');
});

t.test('a 429 cools the node; repeated ones lower the effective rate, which creeps back', async (t) => {
  const b = new NodeBudget();
  b.configure({ rate: 100 }, 1, 0);
  b.limitedBy(2000, 0, WALL);
  t.ok(b.blocked(1, 1999, WALL), 'cooling for Retry-After');
  t.notOk(b.blocked(1, 2000, WALL), 'then free');
  t.equal(b.effRate, 100, 'one 429 does not lower the rate');
  b.limitedBy(-1, 3000, WALL);
  t.equal(b.effRate, 100 * LOWER_BY, 'a second within 10 s does');
  t.equal(b.coolUntil, 3000 + 2 * BACKOFF_MS, 'no Retry-After: backoff doubling per 429 in a row');
  for (let i = 0; i < 30; i++) b.limitedBy(0, 3000 + i, WALL);
  t.equal(b.effRate, 100 * FLOOR, 'never below the floor');
  t.equal(b.limited, 32);
  t.equal(b.cooldowns, 2, 'a 429 while cooling extends the cooldown, it is not a new one');
  const quiet = 3029 + REPEAT_429_MS;
  b.blocked(1, quiet, WALL);
  b.blocked(1, quiet + 1000, WALL);
  t.ok(Math.abs(b.effRate - (100 * FLOOR + 100 * CREEP_PER_S)) < 1e-6, `after a quiet second ${b.effRate}`);
  b.blocked(1, quiet + 3_600_000, WALL);
  t.equal(b.effRate, 100, 'back to the configured rate');
});

t.test('a node without a budget only cools down', async (t) => {
  const b = new NodeBudget();
  t.notOk(b.blocked(1e9, 0, WALL));
  b.limitedBy(500, 0, WALL);
  t.ok(b.blocked(1, 10, WALL));
  t.equal(b.waitMs(1, 100, WALL), 400);
  t.notOk(b.blocked(1, 500, WALL));
});

t.test('reconfiguring keeps what is left of the budget', async (t) => {
  const b = new NodeBudget();
  b.configure({ rate: 10 }, 1, 0);
  b.spend(8, 1, 0, WALL);
  b.configure({ rate: 20 }, 1, 0);
  t.equal(b.tokens, 2);
  t.equal(b.burst, 20);
  b.configure(undefined, 1, 0);
  t.notOk(b.blocked(1000, 0, WALL), 'budget removed');
});

t.test('methods: only / except, and what nodes taught', async (t) => {
  const nodes = [{ bit: 1 }, { bit: 2 }, { bit: 4 }];
  const s = new MethodSupport(1000);
  s.configure([{ only: ['getSlot', 'getBalance'] }, { except: ['getProgramAccounts'] }, undefined], nodes, 1000);
  t.equal(s.configured('getSlot'), 0);
  t.equal(s.configured('getProgramAccounts'), 1 | 2);
  t.equal(s.configured('getBlock'), 1, 'a method no list names: the only-nodes are out');
  t.equal(s.learnedBits('getBlock', 0), 0);
  t.ok(s.learn('getBlock', 2, 0));
  t.notOk(s.learn('getBlock', 2, 10), 'known already');
  t.equal(s.learnedBits('getBlock', 500), 4);
  t.same(s.learnedOf(2, 500), ['getBlock']);
  t.equal(s.learnedBits('getBlock', 1010), 0, 'forgotten after unsupportedMs');
  t.same(s.learnedOf(2, 1010), []);
  const never = new MethodSupport(0);
  never.configure([], nodes, 0);
  t.notOk(never.learn('getBlock', 0, 0), 'unsupportedMs 0: nothing is learned');
});
