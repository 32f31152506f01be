// Agave error classes (docs/solana-routing.md "Agave error classes") against scripted nodes:
// a -32016 from a node believed to have reached the slot, a preflight BlockhashNotFound, a
// retry-class error and a "not available" answer go once to another node (an archive node for
// the last); final errors, and -32016 from a node not believed ahead, reach the client as they are.

import t from 'tap';
import { getBase58Codec } from '@solana/kit';
import { Keypair, SystemProgram, Transaction } from '@solana/web3.js';
import { Commitment } from '../../src/solana/chain-view.js';
import { FreshCause } from '../../src/solana/fresh-routing.js';
import { trueSlot } from '../../src/tools/sim/chain.js';
import { eventually } from '../helpers/eventually.js';
import { keyOnNode, startHarness, type Harness } from '../helpers/gateway.js';
import { startScriptNode, type ScriptNode } from '../helpers/script-node.js';

type Test = Parameters<Parameters<typeof t.test>[0]>[0];

const err = (code: number, message: string, data = 'null'): string => `{"jsonrpc":"2.0","error":{"code":${code},"message":"${message}","data":${data}},"id":1}`;
const ok = (id: string): string => `{"jsonrpc":"2.0","result":{"context":{"slot":1},"value":"${id}"},"id":1}`;

async function setup(t: Test, archive = false): Promise<{ h: Harness; a: ScriptNode; b: ScriptNode; c: ScriptNode; headers: Record<string, string> }> {
  const [a, b, c] = await Promise.all([startScriptNode('a'), startScriptNode('b'), startScriptNode('c')]);
  b.script = () => ({ body: ok('b') });
  c.script = () => ({ body: ok('c') });
  const h = await startHarness({
    sims: [],
    extraNodes: [
      { id: 'a', url: a.url },
      { id: 'b', url: b.url, ...(archive ? { labels: { history: 'archive' } } : {}) },
      { id: 'c', url: c.url },
    ],
    config: { routing: { minContextSlotWaitMs: 200, blockhashWaitMs: 200 }, health: { intervalMs: 200, chainWatch: true } },
  });
  t.teardown(async () => {
    await h.close();
    await Promise.all([a.close(), b.close(), c.close()]);
  });
  await eventually('chain views known', () => h.gw.pool.nodes.every((n) => n.chain.slot(Commitment.Processed) > 0));
  const key = keyOnNode(h, 0);
  return { h, a, b, c, headers: { 'X-Service-Affinity': 'key', 'X-Service-Affinity-Key': key } };
}

t.test('-32016 from a node believed to have reached the slot: once more elsewhere', async (t) => {
  const { h, a, headers } = await setup(t);
  a.script = () => ({ body: err(-32016, 'Minimum context slot has not been reached', '{"contextSlot":5}') });
  const slot = trueSlot(400) - 50;
  const r = await h.call('getBalance', ['11111111111111111111111111111111', { commitment: 'processed', minContextSlot: slot }], headers);
  t.equal(r.json.result.value, r.node, 'answered by the node it was retried on');
  t.not(r.node, 'a');
  t.equal(h.gw.pool.fresh!.count(FreshCause.RetriedContextSlot), 1);
  // Without minContextSlot nobody believed anything: the node's answer stands.
  const plain = await h.call('getBalance', ['11111111111111111111111111111111'], headers);
  t.equal(plain.node, 'a');
  t.equal(plain.json.error.code, -32016);
});

t.test('a preflight BlockhashNotFound goes once to another node that has the blockhash', async (t) => {
  const { h, a, headers } = await setup(t);
  a.script = () => ({
    body: err(-32002, 'Transaction simulation failed: Blockhash not found', '{"accounts":null,"err":"BlockhashNotFound","logs":[],"unitsConsumed":0}'),
  });
  const payer = Keypair.generate();
  const hash = Keypair.generate().publicKey.toBase58();
  h.gw.pool.fresh!.book.learn(new Uint8Array(getBase58Codec().encode(hash)), 0, h.gw.pool.nodes[0]!.chain.slot(Commitment.Processed) - 5);
  const tx = new Transaction({ feePayer: payer.publicKey, recentBlockhash: hash });
  tx.add(SystemProgram.transfer({ fromPubkey: payer.publicKey, toPubkey: Keypair.generate().publicKey, lamports: 1 }));
  tx.sign(payer);
  const r = await h.call('sendTransaction', [tx.serialize().toString('base64'), { encoding: 'base64' }], headers);
  t.not(r.node, 'a');
  t.equal(a.count('sendTransaction'), 1, 'the first node saw it once');
  t.equal(h.gw.pool.fresh!.count(FreshCause.RetriedBlockhash), 1);
  // Any other preflight failure is the transaction's own: final.
  a.script = () => ({ body: err(-32002, 'Transaction simulation failed: insufficient funds', '{"err":"InsufficientFundsForFee"}') });
  const final = await h.call('sendTransaction', [tx.serialize().toString('base64'), { encoding: 'base64' }], headers);
  t.equal(final.node, 'a');
  t.equal(final.json.error.code, -32002);
});

t.test('retry-class errors go to another node, final ones reach the client, -32005 feeds the chain view', async (t) => {
  const { h, a, headers } = await setup(t);
  a.script = () => ({ body: err(-32004, 'Block not available for slot 5') });
  const r = await h.call('getBlock', [5], headers);
  t.not(r.node, 'a');
  t.equal(h.gw.pool.fresh!.count(FreshCause.RetriedErrorClass), 1);
  a.script = () => ({ body: err(-32005, 'Node is behind by 42 slots', '{"numSlotsBehind":42}') });
  const u = await h.call('getBalance', ['11111111111111111111111111111111'], headers);
  t.not(u.node, 'a');
  t.equal(h.gw.pool.nodes[0]!.chain.saidBehind, 42, 'what the node said of its lag is kept');
  a.script = () => ({ body: err(-32003, 'Transaction signature verification failure') });
  const f = await h.call('getBalance', ['11111111111111111111111111111111'], headers);
  t.equal(f.node, 'a');
  t.equal(f.json.error.code, -32003);
});

t.test('"missing in long-term storage" goes to an archive node, and only there', async (t) => {
  const { h, a, b, c, headers } = await setup(t, true);
  a.script = () => ({ body: err(-32009, 'Slot 5 was skipped, or missing in long-term storage') });
  c.script = () => ({ body: err(-32009, 'Slot 5 was skipped, or missing in long-term storage') });
  const before = c.count('getBlock');
  const r = await h.call('getBlock', [5], headers);
  t.equal(r.node, 'b', 'the archive node');
  t.equal(c.count('getBlock'), before, 'the other non-archive node was not asked');
  t.equal(b.count('getBlock'), 1);
  t.equal(h.gw.pool.fresh!.count(FreshCause.RetriedOnArchive), 1);
});
