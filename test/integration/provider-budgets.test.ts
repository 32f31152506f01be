// In front of paid providers (docs/routing.md "Provider budgets", "Unsupported methods"):
// simulated providers with a per-second cap (429 with Retry-After past it), method costs and
// disabled methods. Load beyond one provider's cap spreads within every cap with no client
// 429; a spent pool answers 7429 with Retry-After; a node's 429 cools it without marking its
// health; a method one node does not serve never reaches the client as -32601.

import t from 'tap';
import { startHarness, type Harness } from '../helpers/gateway.js';
import { eventually } from '../helpers/eventually.js';
import { startSim, type SimNode } from '../../src/tools/sim/node.js';
import type { Config } from '../../src/config/schema.js';

type Test = Parameters<Parameters<typeof t.test>[0]>[0];

const GPA = { name: 'getProgramAccounts', params: ['11111111111111111111111111111111'] };
const COSTS = { getProgramAccounts: 10 };

async function providers(
  t: Test,
  specs: { id: string; knobs: Record<string, unknown>; node: Record<string, unknown> }[],
  config: Record<string, unknown> = {},
) {
  const sims: SimNode[] = await Promise.all(specs.map((s) => startSim({ id: s.id, port: 0, synthetic: true, ...s.knobs })));
  const h = await startHarness({
    sims: [],
    extraNodes: specs.map((s, i) => ({ id: s.id, url: sims[i]!.url, ...s.node })),
    config,
  });
  t.teardown(async () => {
    await h.close();
    await Promise.all(sims.map((s) => s.close()));
  });
  return { h, sims };
}

/** `perTick` calls every 100 ms for `ms`, 5% getProgramAccounts; the answers' statuses and error codes. */
async function load(h: Harness, perTick: number, ms: number): Promise<{ statuses: Map<number, number>; codes: Map<number, number>; sent: number }> {
  const statuses = new Map<number, number>();
  const codes = new Map<number, number>();
  const pending: Promise<void>[] = [];
  let sent = 0;
  const end = performance.now() + ms;
  for (let tick = performance.now(); tick < end; tick += 100) {
    for (let i = 0; i < perTick; i++) {
      const gpa = sent % 20 === 19;
      sent++;
      pending.push(
        h.call(gpa ? GPA.name : 'getBalance', gpa ? GPA.params : ['11111111111111111111111111111111']).then((r) => {
          statuses.set(r.status, (statuses.get(r.status) ?? 0) + 1);
          const code = (r.json as { error?: { code: number } } | null)?.error?.code;
          if (code !== undefined) codes.set(code, (codes.get(code) ?? 0) + 1);
        }),
      );
    }
    const wait = tick + 100 - performance.now();
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
  }
  await Promise.all(pending);
  return { statuses, codes, sent };
}

t.test('load above one provider’s cap but within the pool’s: spread within every cap, no client 429', async (t) => {
  const { h, sims } = await providers(t, [
    // Budgets at 95% of the caps, as an operator leaves headroom: a call spent at dispatch may
    // reach a provider a little later than the one after it (timings on a loaded machine).
    { id: 'p100', knobs: { rateCap: 100, methodCosts: COSTS }, node: { budget: { rate: 95, costs: COSTS } } },
    { id: 'p50', knobs: { rateCap: 50, methodCosts: COSTS }, node: { budget: { rate: 47.5, costs: COSTS } } },
  ]);
  const started = performance.now();
  // 8 calls a tick: 80 calls/s, 5% at 10 credits = ~116 credits/s, over p50's 50 and p100's 100, within their 142.5.
  const r = await load(h, 8, 3000);
  const seconds = (performance.now() - started) / 1000;
  t.equal(r.statuses.get(200), r.sent, `every call answered 200 (${JSON.stringify([...r.statuses])})`);
  t.equal(r.codes.get(7429) ?? 0, 0, 'no client 429');
  for (const s of sims) {
    const cap = s.knobs().rateCap;
    t.equal(s.stats.limited, 0, `${s.id}: never over its cap (no 429 from it)`);
    // The bucket starts full: at most one second's burst beyond the rate over the run.
    t.ok(s.stats.credits <= cap * (seconds + 1) * 1.05, `${s.id}: ${s.stats.credits} credits in ${seconds.toFixed(1)} s against ${cap}/s`);
  }
  t.ok(sims[1]!.stats.credits > 0 && sims[0]!.stats.credits > 0, 'both providers used');
  const [a, b] = ['p100', 'p50'].map((id) => h.gw.pool.byId(id)!.budget);
  t.equal(a!.credits + b!.credits, sims[0]!.stats.credits + sims[1]!.stats.credits, 'the gateway counts the credits the providers charged');
});

t.test('every node spent: 7429 with data.scope nodes and Retry-After; the providers never answer 429', async (t) => {
  const { h, sims } = await providers(t, [
    { id: 'a', knobs: { rateCap: 3 }, node: { budget: { rate: 2 } } },
    { id: 'b', knobs: { rateCap: 3 }, node: { budget: { rate: 2 } } },
  ]);
  const answers = await Promise.all(Array.from({ length: 10 }, () => h.post('{"jsonrpc":"2.0","id":7,"method":"getSlot"}')));
  const refused = answers.filter((a) => a.status === 429);
  t.ok(refused.length >= 5, `${refused.length} refused`);
  t.equal(answers.filter((a) => a.status === 200).length, 10 - refused.length);
  const j = JSON.parse(refused[0]!.text) as { error: { code: number; data: { scope: string; retryAfterMs: number } }; id: number };
  t.equal(j.error.code, 7429);
  t.equal(j.error.data.scope, 'nodes');
  t.ok(j.error.data.retryAfterMs > 0 && j.error.data.retryAfterMs <= 1000, `retryAfterMs ${j.error.data.retryAfterMs}`);
  t.equal(j.id, 7);
  t.equal(refused[0]!.headers.get('retry-after'), '1');
  t.same(
    sims.map((s) => s.stats.limited),
    [0, 0],
  );
  await eventually('the budget refills', async () => (await h.call('getSlot')).status === 200);
});

t.test("a node's 429: it cools down without being marked unhealthy, the call goes to another node", async (t) => {
  const { h, sims } = await providers(t, [
    { id: 'capped', knobs: { rateCap: 5 }, node: {} },
    { id: 'own', knobs: {}, node: {} },
  ]);
  const answers = await Promise.all(Array.from({ length: 40 }, () => h.call('getSlot')));
  t.same(
    answers.filter((a) => a.status !== 200),
    [],
    'every call answered',
  );
  t.ok(sims[0]!.stats.limited > 0, `the capped node answered 429 (${sims[0]!.stats.limited})`);
  const capped = h.gw.pool.byId('capped')!;
  t.equal(capped.state, 'healthy', 'not marked unhealthy');
  t.equal(capped.failures, 0, 'no failure counted');
  t.ok(capped.budget.limited > 0 && capped.budget.cooldowns > 0, 'counted as 429s and cooldowns');
  t.ok(capped.budget.coolUntil > 0, 'cooling until its Retry-After');
});

t.test('a method disabled on one node never reaches the client as -32601; learned and shown', async (t) => {
  const { h, sims } = await providers(t, [
    // Weighted so that the first call goes to the node that does not serve the method.
    { id: 'nogpa', knobs: { disabledMethods: ['getProgramAccounts'] }, node: { weight: 100 } },
    { id: 'full', knobs: {}, node: {} },
  ]);
  for (let i = 0; i < 30; i++) {
    const r = await h.call(GPA.name, GPA.params);
    t.equal(r.json.error, undefined, `call ${i} answered with a result`);
    if (r.json.error !== undefined) break;
  }
  t.equal(sims[0]!.stats.byMethod.get('getProgramAccounts') ?? 0, 1, 'the node that does not serve it was asked once');
  t.same(h.gw.pool.gate.support.learnedOf(0, performance.now()), ['getProgramAccounts']);
  t.equal(h.gw.pool.byId('nogpa')!.budget.learned, 1);
  t.equal(h.gw.pool.byId('nogpa')!.state, 'healthy');
  // With the other node drained, no node serves it: the client gets Agave's own answer.
  h.gw.pool.setDrained('full', true);
  const none = await h.post('{"jsonrpc":"2.0","id":3,"method":"getProgramAccounts","params":["11111111111111111111111111111111"]}');
  t.equal(none.status, 200);
  t.equal(none.text, '{"jsonrpc":"2.0","error":{"code":-32601,"message":"Method not found"},"id":3}');
});

t.test('nodes[].methods: only and except', async (t) => {
  const { h, sims } = await providers(t, [
    { id: 'reads', knobs: {}, node: { methods: { except: ['getProgramAccounts'] } } },
    { id: 'gpa', knobs: {}, node: { methods: { only: ['getProgramAccounts'] } } },
  ]);
  for (let i = 0; i < 10; i++) {
    t.equal((await h.call(GPA.name, GPA.params)).node, 'gpa');
    t.equal((await h.call('getBalance', ['11111111111111111111111111111111'])).node, 'reads');
  }
  t.equal(sims[0]!.stats.byMethod.get('getProgramAccounts') ?? 0, 0);
  t.equal(sims[1]!.stats.byMethod.get('getBalance') ?? 0, 0);
  h.gw.pool.setDrained('gpa', true);
  const r = await h.call(GPA.name, GPA.params);
  t.same(r.json, { jsonrpc: '2.0', error: { code: -32601, message: 'Method not found' }, id: 1 });
});

t.test('pool.reconfigure (what a reload calls) applies new budgets and method lists', async (t) => {
  const { h } = await providers(t, [
    { id: 'x', knobs: {}, node: {} },
    { id: 'y', knobs: {}, node: {} },
  ]);
  const pool = h.gw.pool;
  const config = structuredClone(h.gw.config) as Config;
  config.nodes[0]!.budget = { rate: 1 };
  config.nodes[1]!.methods = { except: ['getSlot'] };
  pool.reconfigure(config);
  t.equal(pool.byId('x')!.budget.rate, 1);
  const first = await h.call('getSlot');
  t.equal(first.node, 'x', 'y does not serve getSlot');
  const second = await h.call('getSlot');
  t.equal(second.status, 429, "x's budget is spent");
});
