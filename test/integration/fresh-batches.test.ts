// minContextSlot inside JSON-RPC batches (docs/solana-routing.md "minContextSlot routing"), through
// the gateway, against simulated nodes at 0, 10 and 20 slots of lag: each sub-batch goes to a
// node that reached, at each commitment its calls name, the highest minContextSlot asked there, so
// no call of it is answered -32016 by a node behind it.

import t from 'tap';
import { Commitment } from '../../src/solana/chain-view.js';
import { eventually } from '../helpers/eventually.js';
import { keyOnNode, startHarness, type Harness } from '../helpers/gateway.js';

type Test = Parameters<Parameters<typeof t.test>[0]>[0];
const ACCOUNT = '11111111111111111111111111111111';

async function setup(t: Test, upstreamBatch = 100): Promise<Harness> {
  const h = await startHarness({
    sims: [{ lag: 0 }, { lag: 10 }, { lag: 20 }],
    config: { routing: { minContextSlotWaitMs: 3000, upstreamBatch }, health: { intervalMs: 200, chainWatch: true } },
  });
  t.teardown(() => h.close());
  await eventually('every chain view known', () => h.gw.pool.nodes.every((n) => n.chain.slot(Commitment.Confirmed) > 0));
  return h;
}

interface Element {
  id: number;
  result?: number | { context: { slot: number } };
  error?: { code: number };
}

async function batch(h: Harness, calls: [string, unknown[]][], headers: Record<string, string> = {}): Promise<{ nodes: string; answers: Element[] }> {
  const body = JSON.stringify(calls.map(([method, params], id) => ({ jsonrpc: '2.0', id, method, params })));
  const r = await h.post(body, { headers });
  t.equal(r.status, 200);
  const answers = (JSON.parse(r.text) as Element[]).sort((a, b) => a.id - b.id);
  return { nodes: r.headers.get('x-service-node') ?? '', answers };
}

function slotOf(e: Element): number {
  return typeof e.result === 'number' ? e.result : (e.result?.context.slot ?? -1);
}

t.test('a batch goes to a node that reached the highest minContextSlot among its calls', async (t) => {
  const h = await setup(t);
  const tip = h.gw.pool.nodes[0]!.chain.slot(Commitment.Processed);
  for (let i = 0; i < 10; i++) {
    const r = await batch(h, [
      ['getSlot', [{ commitment: 'processed' }]],
      ['getBalance', [ACCOUNT, { commitment: 'processed', minContextSlot: tip - 25 }]],
      ['getBalance', [ACCOUNT, { commitment: 'processed', minContextSlot: tip }]],
      ['getSlot', [{ commitment: 'confirmed' }]],
    ]);
    t.equal(r.nodes, 'n0', 'only the node at the tip reached the highest');
    t.same(
      r.answers.map((a) => a.error?.code ?? null),
      [null, null, null, null],
      'no call answered -32016',
    );
    t.ok(slotOf(r.answers[2]!) >= tip);
  }
  const key = keyOnNode(h, 2);
  const headers = { 'X-Service-Affinity': 'key', 'X-Service-Affinity-Key': key };
  t.equal((await batch(h, [['getSlot', [{ commitment: 'processed' }]]], headers)).nodes, 'n2', "a batch without: the key's own node");
  const keyed = await batch(
    h,
    [
      ['getSlot', []],
      ['getBalance', [ACCOUNT, { commitment: 'processed', minContextSlot: tip }]],
    ],
    headers,
  );
  t.equal(keyed.nodes, 'n0', 'with: the next node of its sequence that reached it');
  t.equal(keyed.answers[1]!.error, undefined);
  t.ok(h.gw.pool.fresh!.count(4) >= 11, 'counted as routed by context slot');
});

t.test("the minContextSlot is read at its call's commitment", async (t) => {
  const h = await setup(t);
  // n0's finalized slot: every node has processed it, only n0 finalized it.
  const f = h.gw.pool.nodes[0]!.chain.slot(Commitment.Finalized);
  for (let i = 0; i < 10; i++) {
    const r = await batch(h, [
      ['getBalance', [ACCOUNT, { commitment: 'processed' }]],
      ['getSlot', [{ minContextSlot: f }]],
    ]);
    t.equal(r.nodes, 'n0', 'the node that finalized it');
    t.equal(r.answers[1]!.error, undefined, 'not answered -32016 by a node that only processed it');
  }
  // Ahead of every node: the batch waits for one, then is answered.
  const ahead = h.gw.pool.nodes[0]!.chain.slot(Commitment.Processed) + 2;
  const waited = await batch(h, [['getSlot', [{ commitment: 'processed', minContextSlot: ahead }]]]);
  t.equal(waited.nodes, 'n0');
  t.ok(slotOf(waited.answers[0]!) >= ahead, 'answered once a node reached it');
  t.ok(h.gw.pool.fresh!.count(0) >= 1, 'counted as a wait');
});

t.test('a batch asking minContextSlot at several commitments needs a node that reached each', async (t) => {
  const h = await setup(t);
  const pool = h.gw.pool;
  // n1's processed slot (n0 and n1 reached it) is the batch's highest; n0's finalized slot (only
  // n0 finalized it) is lower, at a higher commitment, and must hold too.
  const processed = pool.nodes[1]!.chain.slot(Commitment.Processed);
  const finalized = pool.nodes[0]!.chain.slot(Commitment.Finalized);
  t.ok(processed > finalized, 'the processed need is the highest slot');
  const key = keyOnNode(h, 1);
  const headers = { 'X-Service-Affinity': 'key', 'X-Service-Affinity-Key': key };
  t.equal((await batch(h, [['getSlot', [{ commitment: 'processed' }]]], headers)).nodes, 'n1', "the key's own node is n1");
  for (let i = 0; i < 5; i++) {
    const r = await batch(
      h,
      [
        ['getBalance', [ACCOUNT, { commitment: 'processed', minContextSlot: processed }]],
        ['getBalance', [ACCOUNT, { commitment: 'finalized', minContextSlot: finalized }]],
      ],
      headers,
    );
    t.equal(r.nodes, 'n0', 'n1 processed the slot but has not finalized the other');
    t.same(
      r.answers.map((a) => a.error?.code ?? null),
      [null, null],
      'no call answered -32016',
    );
    t.ok(slotOf(r.answers[1]!) >= finalized);
  }
});

t.test('sub-batches: each goes by its own calls', async (t) => {
  const h = await setup(t, 2);
  const tip = h.gw.pool.nodes[0]!.chain.slot(Commitment.Processed);
  for (let i = 0; i < 8; i++) {
    const r = await batch(h, [
      ['getSlot', [{ commitment: 'processed' }]],
      ['getSlot', [{ commitment: 'processed' }]],
      ['getBalance', [ACCOUNT, { commitment: 'processed', minContextSlot: tip }]],
      ['getSlot', [{ commitment: 'processed', minContextSlot: tip }]],
    ]);
    t.same(
      r.answers.map((a) => a.error?.code ?? null),
      [null, null, null, null],
      'no call answered -32016',
    );
    t.ok(slotOf(r.answers[2]!) >= tip && slotOf(r.answers[3]!) >= tip);
  }
});
