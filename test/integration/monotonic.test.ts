// Monotonic reads across failover (docs/routing.md "Monotonic reads"): a key's getSlot and context.slot
// never go back when its node is killed, stalls, is drained or re-weighted while the other
// node is 100 slots behind; the key gets 7505 after affinity.monotonicWaitMs instead, and is
// served again once the other node catches up. With affinity.monotonic false the same
// failover hands the key a lower slot (the test bites).

import t from 'tap';
import { eventually } from '../helpers/eventually.js';
import { keyOnNode, startHarness, type Harness } from '../helpers/gateway.js';
import { startTcpProxy, type TcpProxy } from '../helpers/tcp-proxy.js';
import { startSim, type SimNode } from '../../src/tools/sim/node.js';

type Test = Parameters<Parameters<typeof t.test>[0]>[0];

const WAIT_MS = 600;
const GET_SLOT = '{"jsonrpc":"2.0","id":1,"method":"getSlot"}';
const GET_BALANCE = '{"jsonrpc":"2.0","id":2,"method":"getBalance","params":["11111111111111111111111111111111"]}';

interface Setup {
  h: Harness;
  /** n0 at the tip (behind a TCP proxy, so it can be killed), n1 100 slots behind. */
  sims: SimNode[];
  proxy: TcpProxy;
  key: string;
}

async function setup(t: Test, monotonic: boolean): Promise<Setup> {
  const sims = await Promise.all([startSim({ id: 'n0', port: 0 }), startSim({ id: 'n1', port: 0, lag: 100 })]);
  const proxy = await startTcpProxy(sims[0]!.port);
  const h = await startHarness({
    sims: [],
    extraNodes: [
      { id: 'n0', url: proxy.url },
      { id: 'n1', url: sims[1]!.url },
    ],
    config: {
      affinity: { monotonic, monotonicWaitMs: WAIT_MS },
      health: { intervalMs: 150, timeoutMs: 300 },
      limits: { upstreamTimeoutMs: 500 },
    },
  });
  t.teardown(async () => {
    await h.close();
    await proxy.close();
    await Promise.all(sims.map((s) => s.close()));
  });
  // A key whose node is n0.
  const key = keyOnNode(h, 0);
  return { h, sims, proxy, key };
}

interface Answer {
  status: number;
  node: string | null;
  slot: number;
  error: { code: number; data?: { slot: number; bestAvailable: number | null } } | null;
  ms: number;
}

async function ask(h: Harness, key: string, body = GET_SLOT): Promise<Answer> {
  const t0 = performance.now();
  const r = await h.post(body, { headers: { 'x-service-affinity': 'key', 'x-service-affinity-key': key } });
  const json = JSON.parse(r.text) as { result?: number | { context: { slot: number } }; error?: Answer['error'] };
  const result = json.result;
  const slot = typeof result === 'number' ? result : result === undefined ? -1 : result.context.slot;
  return { status: r.status, node: r.headers.get('x-service-node'), slot, error: json.error ?? null, ms: performance.now() - t0 };
}

/** The key's answers so far: the highest slot seen, and every step back. */
class Seen {
  max = -1;
  regressions: string[] = [];
  add(a: Answer): void {
    if (a.slot < 0) return;
    if (a.slot < this.max) this.regressions.push(`${a.slot} from ${a.node} after ${this.max}`);
    else this.max = a.slot;
  }
}

async function warm(s: Setup, seen: Seen, t: Test): Promise<void> {
  for (let i = 0; i < 6; i++) {
    const a = await ask(s.h, s.key, i % 2 === 0 ? GET_SLOT : GET_BALANCE);
    t.equal(a.node, 'n0', 'the key is served by its node');
    seen.add(a);
  }
}

const FAILURES = {
  kill: (s: Setup) => s.proxy.stop(),
  stall: (s: Setup) => s.sims[0]!.set({ stallRate: 1 }),
  drain: (s: Setup) => {
    s.h.gw.pool.setDrained('n0', true);
  },
};

for (const [kind, fail] of Object.entries(FAILURES)) {
  t.test(`${kind} the key's node while the other is 100 slots behind: 7505, never a lower slot; served again once it caught up`, async (t) => {
    const s = await setup(t, true);
    const seen = new Seen();
    await warm(s, seen, t);
    await fail(s);
    const a = await ask(s.h, s.key);
    seen.add(a);
    t.equal(a.status, 503);
    t.equal(a.error?.code, 7505);
    t.ok(a.error!.data!.slot >= seen.max, `data.slot ${a.error!.data!.slot} is the slot the key has seen (${seen.max}) or later`);
    t.ok(a.error!.data!.bestAvailable! < seen.max, `data.bestAvailable ${a.error!.data!.bestAvailable} is behind it`);
    t.ok(a.ms >= WAIT_MS * 0.9, `answered after the wait (${a.ms.toFixed(0)} ms)`);
    for (let i = 0; i < 3; i++) {
      const b = await ask(s.h, s.key, GET_BALANCE);
      seen.add(b);
      t.equal(b.error?.code, 7505, 'a lagging pool keeps the key refused');
    }
    const m = await s.h.gw.metrics.registry.metrics();
    t.match(m, /jumpgate_monotonic_refusals_total\{node="n0",reason="(down|retry|drained)"\} [1-9]/, 'the refusals are counted under the node the key left');
    t.match(m, /jumpgate_monotonic_waits_total\{node="n0",reason="(down|retry|drained)"\} [1-9]/, 'and the waits before them');
    t.match(m, new RegExp(`jumpgate_node_high_water_slot\\{node="n0"\\} ${seen.max}`), "n0's high-water mark is the key's highest slot");
    // The other node catches up: the key is served from it, at or above what it saw.
    s.sims[1]!.set({ lag: 0 });
    let last: Answer | null = null;
    await eventually(
      () => `the key served by n1 (last: ${JSON.stringify(last)})`,
      async () => {
        last = await ask(s.h, s.key);
        seen.add(last);
        return last.status === 200 && last.node === 'n1';
      },
      10_000,
      50,
    );
    t.ok(last!.slot >= seen.max || seen.regressions.length === 0, 'at or above the slot seen');
    t.same(seen.regressions, [], 'no answer went back in slot');
  });
}

t.test('affinity.monotonic false: the same failover hands the key a lower slot', async (t) => {
  const s = await setup(t, false);
  const seen = new Seen();
  await warm(s, seen, t);
  await s.proxy.stop();
  const a = await ask(s.h, s.key);
  seen.add(a);
  t.equal(a.status, 200);
  t.equal(a.node, 'n1');
  t.ok(seen.regressions.length > 0, `the key went back ${seen.max - a.slot} slots`);
});

t.test('re-weight: a key the change moves stays on its old node until the new one caught up', async (t) => {
  const s = await setup(t, true);
  const pool = s.h.gw.pool;
  // A key on n0 that n1 takes when its weight goes to 10.
  const before = pool.keyMap;
  const after = new (before.constructor as typeof import('../../src/routing/keymap.js').KeyMap)([
    { id: 'n0', weight: 1 },
    { id: 'n1', weight: 10 },
  ]);
  let key = '';
  for (let i = 0; key === ''; i++) {
    const slot = pool.slot(`w${i}`);
    if (before.primary(slot) === 0 && after.primary(slot) === 1) key = `w${i}`;
  }
  const seen = new Seen();
  for (let i = 0; i < 4; i++) seen.add(await ask(s.h, key));
  pool.setWeight('n1', 10);
  for (let i = 0; i < 4; i++) {
    const a = await ask(s.h, key, i % 2 === 0 ? GET_SLOT : GET_BALANCE);
    seen.add(a);
    t.equal(a.node, 'n0', 'still served by the node it had: the new one is 100 slots behind');
  }
  s.sims[1]!.set({ lag: 0 });
  await eventually(
    'the key moved to n1 once it caught up',
    async () => {
      const a = await ask(s.h, key);
      seen.add(a);
      return a.node === 'n1';
    },
    10_000,
    50,
  );
  t.same(seen.regressions, [], 'no answer went back in slot');
});

t.test('a node back from a kill, behind what the key was given elsewhere, does not take the key back', async (t) => {
  const s = await setup(t, true);
  s.sims[1]!.set({ lag: 0 });
  const seen = new Seen();
  await warm(s, seen, t);
  await s.proxy.stop();
  await eventually(
    'the key served by n1',
    async () => {
      const a = await ask(s.h, s.key);
      seen.add(a);
      return a.node === 'n1';
    },
    10_000,
    50,
  );
  // n0 restarts 50 slots behind.
  s.sims[0]!.set({ lag: 50 });
  await s.proxy.start();
  await eventually('n0 probed healthy again', () => s.h.gw.pool.byId('n0')!.state !== 'unhealthy' && s.h.gw.pool.byId('n0')!.state !== 'ejected', 10_000);
  for (let i = 0; i < 5; i++) {
    const a = await ask(s.h, s.key);
    seen.add(a);
    t.equal(a.node, 'n1', 'the key stays on n1');
  }
  t.same(seen.regressions, [], 'no answer went back in slot');
});
