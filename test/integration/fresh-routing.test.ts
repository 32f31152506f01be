// Fresh-state routing (docs/solana-routing.md) through the gateway, against simulated nodes
// at 0, 10 and 20 slots of lag (all within health.maxSlotLag, so default routing would use
// each): a read with minContextSlot goes only to a node that reached it, waits for one when
// none has, then goes to the freshest; a send goes only to nodes known to have its blockhash.

import t from 'tap';
import { getBase58Codec } from '@solana/kit';
import { Keypair, SystemProgram, Transaction } from '@solana/web3.js';
import { Commitment } from '../../src/solana/chain-view.js';
import { eventually } from '../helpers/eventually.js';
import { keyOnNode, startHarness, type Harness } from '../helpers/gateway.js';

type Test = Parameters<Parameters<typeof t.test>[0]>[0];

async function setup(t: Test, routing: Record<string, unknown> = {}): Promise<Harness> {
  const h = await startHarness({
    sims: [{ lag: 0 }, { lag: 10 }, { lag: 20 }],
    config: { routing: { minContextSlotWaitMs: 3000, blockhashWaitMs: 3000, ...routing }, health: { intervalMs: 200, chainWatch: true } },
  });
  t.teardown(() => h.close());
  const nodes = h.gw.pool.nodes;
  await eventually('every chain view known', () => nodes.every((n) => n.chain.slot(Commitment.Processed) > 0 && n.chain.slot(Commitment.Confirmed) > 0));
  return h;
}

async function direct(url: string, method: string, params: unknown[] = []): Promise<any> {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
  });
  return ((await res.json()) as { result: unknown }).result;
}

const ACCOUNT = '11111111111111111111111111111111';
const base58 = getBase58Codec();

t.test('minContextSlot: only nodes that reached it, under default routing and key affinity', async (t) => {
  const h = await setup(t);
  const slot = h.gw.pool.nodes[0]!.chain.slot(Commitment.Processed);
  for (let i = 0; i < 20; i++) {
    const r = await h.call('getBalance', [ACCOUNT, { commitment: 'processed', minContextSlot: slot }]);
    t.equal(r.node, 'n0', 'default routing: the node at the tip');
  }
  const key = keyOnNode(h, 2);
  const headers = { 'X-Service-Affinity': 'key', 'X-Service-Affinity-Key': key };
  t.equal((await h.call('getBalance', [ACCOUNT], headers)).node, 'n2', "the key's own node without minContextSlot");
  t.equal((await h.call('getBalance', [ACCOUNT, { commitment: 'processed', minContextSlot: slot }], headers)).node, 'n0', 'a node that reached it with');
  // n1 reached slot − 10: under affinity the key's sequence is walked, default routing picks n0 or n1.
  const older = slot - 12;
  for (let i = 0; i < 10; i++) {
    const r = await h.call('getBalance', [ACCOUNT, { commitment: 'processed', minContextSlot: older }]);
    t.not(r.node, 'n2', 'never the node behind it');
  }
  t.ok(h.gw.pool.fresh!.count(4) >= 20, 'counted as routed by context slot');
});

t.test('minContextSlot ahead of every node: waits for one, then the freshest', async (t) => {
  const h = await setup(t, { minContextSlotWaitMs: 3000 });
  const ahead = h.gw.pool.nodes[0]!.chain.slot(Commitment.Processed) + 2;
  const r = await h.call('getSlot', [{ commitment: 'processed', minContextSlot: ahead }]);
  t.equal(r.node, 'n0');
  t.ok(r.json.result >= ahead, 'answered once a node reached the slot');
  t.ok(h.gw.pool.fresh!.count(0) >= 1, 'counted as a wait');
  h.gw.pool.fresh!.minContextSlotWaitMs = 150;
  const far = await h.call('getSlot', [{ commitment: 'processed', minContextSlot: ahead + 100_000 }]);
  t.equal(far.node, 'n0', 'after the wait: the freshest node');
  t.equal(far.status, 200);
  t.ok(h.gw.pool.fresh!.count(3) >= 1, 'counted as sent to the freshest');
});

t.test('sendTransaction goes only to nodes known to have its blockhash', async (t) => {
  const h = await setup(t);
  const key = keyOnNode(h, 2);
  const headers = { 'X-Service-Affinity': 'key', 'X-Service-Affinity-Key': key };
  const payer = Keypair.generate();
  // A blockhash from the node at the tip, taken straight from it.
  const latest = (await direct(h.sims[0]!.url, 'getLatestBlockhash', [{ commitment: 'processed' }])) as { value: { blockhash: string } };
  const tx = new Transaction({ feePayer: payer.publicKey, recentBlockhash: latest.value.blockhash });
  tx.add(SystemProgram.transfer({ fromPubkey: payer.publicKey, toPubkey: Keypair.generate().publicKey, lamports: 1 }));
  tx.sign(payer);
  const b64 = tx.serialize().toString('base64');
  // Preflight at processed: the node must have processed the blockhash's slot (at finalized it would be 32 slots later).
  const r = await h.call('sendTransaction', [b64, { encoding: 'base64', preflightCommitment: 'processed' }], headers);
  t.equal(r.status, 200);
  t.equal(r.node, 'n0', "not the key's node (20 slots behind the blockhash)");
  // A blockhash every node has (finalized) goes to the key's own node.
  const old = (await direct(h.sims[2]!.url, 'getLatestBlockhash', [{ commitment: 'finalized' }])) as { value: { blockhash: string } };
  const bytes = Buffer.from(old.value.blockhash);
  h.gw.pool.fresh!.book.learnBase58(bytes, 0, bytes.length, h.gw.pool.nodes[2]!.chain.slot(Commitment.Finalized));
  const tx2 = new Transaction({ feePayer: payer.publicKey, recentBlockhash: old.value.blockhash });
  tx2.add(SystemProgram.transfer({ fromPubkey: payer.publicKey, toPubkey: Keypair.generate().publicKey, lamports: 2 }));
  tx2.sign(payer);
  t.equal(
    (await h.call('sendTransaction', [tx2.serialize().toString('base64'), { encoding: 'base64', preflightCommitment: 'processed' }], headers)).node,
    'n2',
  );
  t.ok(h.gw.pool.fresh!.count(1) >= 1, 'counted as routed by blockhash');
});

t.test('a getLatestBlockhash answer passing through teaches the book its slot', async (t) => {
  const h = await setup(t);
  const book = h.gw.pool.fresh!.book;
  for (let i = 0; i < 5; i++) {
    const r = await h.call('getLatestBlockhash', [{ commitment: 'processed' }]);
    const hash = new Uint8Array(base58.encode(r.json.result.value.blockhash as string));
    // Learned on the answer's way back, before the client read it (the poll may have been first).
    const slot = book.slotOf(hash, 0);
    t.ok(slot > 0 && slot <= r.json.result.context.slot, 'in the book at most at its context slot');
  }
});

t.test('with two data-plane workers: shared chain views, counters in /metrics, views in /admin/nodes', async (t) => {
  const ADMIN = 'admin-token-fresh-routing-0123';
  const h = await startHarness({
    sims: [{ lag: 0 }, { lag: 10 }, { lag: 20 }],
    admin: true,
    config: { rpc: { workers: 2 }, admin: { token: ADMIN }, routing: { minContextSlotWaitMs: 3000 }, health: { intervalMs: 200, chainWatch: true } },
  });
  t.teardown(() => h.close());
  const auth = { authorization: `Bearer ${ADMIN}` };
  type Slots = { processed: number | null; confirmed: number | null; finalized: number | null };
  const nodes = async (): Promise<{ id: string; chain: Slots; chainLag: Slots }[]> =>
    (await (await fetch(h.gw.admin!.url + '/admin/nodes', { headers: auth })).json()) as never;
  await eventually('chain views in /admin/nodes', async () =>
    (await nodes()).every((n) => n.chain.processed !== null && n.chain.confirmed !== null && n.chain.finalized !== null),
  );
  const view = await nodes();
  const tip = view.find((n) => n.id === 'n0')!.chain.processed!;
  t.ok(view.find((n) => n.id === 'n2')!.chain.processed! < tip, 'the lagging node shows behind');
  for (let i = 0; i < 12; i++) {
    const r = await h.call('getBalance', [ACCOUNT, { commitment: 'processed', minContextSlot: tip }]);
    t.equal(r.node, 'n0', 'either worker routes by the shared view');
  }
  const metrics = await (await fetch(h.gw.admin!.url + '/metrics', { headers: auth })).text();
  t.match(metrics, /jumpgate_node_commitment_slot\{node="n0",commitment="confirmed"\} [1-9]/);
  // Lag per commitment: n1 is 10 slots behind and n2 20 at each (a slot or two of watch delay either way).
  const near = (v: number | null, want: number): boolean => v !== null && Math.abs(v - want) <= 3;
  await eventually('lag per commitment in /admin/nodes', async () => {
    const lags = Object.fromEntries((await nodes()).map((n) => [n.id, n.chainLag]));
    return (['processed', 'confirmed', 'finalized'] as const).every((c) => near(lags.n0![c], 0) && near(lags.n1![c], 10) && near(lags.n2![c], 20));
  });
  for (const c of ['processed', 'confirmed', 'finalized']) {
    const lag = new RegExp(`jumpgate_node_commitment_lag_slots\\{node="n2",commitment="${c}"\\} (\\d+)`).exec(metrics);
    t.ok(lag !== null && near(Number(lag[1]), 20), `n2's ${c} lag in /metrics (${lag?.[1]})`);
  }
  const routed = /jumpgate_fresh_routing_total\{cause="routed_by_context_slot"\} (\d+)/.exec(metrics);
  t.ok(routed !== null && Number(routed[1]) >= 12, 'counted over both workers');
});
