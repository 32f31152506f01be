// The chain watch against a simulated node: the slot stream and the polls keep the node's
// chain view and the blockhash book current, with or without the stream.

import t, { type Test } from 'tap';
import { getBase58Codec } from '@solana/kit';
import { silentLogger } from '../../src/log.js';
import { BlockhashBook } from '../../src/solana/blockhash-book.js';
import { NodeChainWatch } from '../../src/upstream/chain-watch.js';
import { ChainView, Commitment } from '../../src/solana/chain-view.js';
import { startSim } from '../../src/tools/sim/node.js';
import { UpstreamNode } from '../../src/upstream/node.js';
import { eventually } from '../helpers/eventually.js';

const POLICY = { ejectAfterFailures: 3, ejectBackoffMs: 1000, ejectBackoffMaxMs: 8000 };
const CLIENT = { client: 'pipelined', connections: 1, pipelining: 1, pipelineStallMs: 5, connectTimeoutMs: 1000 } as const;
const base58 = getBase58Codec();

async function latestBlockhash(url: string): Promise<string> {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: '{"jsonrpc":"2.0","id":1,"method":"getLatestBlockhash","params":[{"commitment":"processed"}]}',
  });
  const body = (await res.json()) as { result: { value: { blockhash: string } } };
  return body.result.value.blockhash;
}

for (const stream of [true, false]) {
  t.test(`the chain view follows the node (${stream ? 'slot stream and polls' : 'polls only'})`, async (t) => {
    const sim = await startSim({ id: 'cw', port: 0, slotMs: 200 });
    t.teardown(() => sim.close());
    const node = new UpstreamNode({ id: 'cw', url: sim.url, weight: 1 }, 0, POLICY, CLIENT);
    t.teardown(() => node.probes.destroy());
    const view = new ChainView();
    const book = new BlockhashBook();
    const watch = new NodeChainWatch(node, view, book, { pollMs: 40, timeoutMs: 1000, stream }, silentLogger());
    watch.start();
    t.teardown(() => watch.stop());
    const all = (): boolean => view.slot(Commitment.Processed) > 0 && view.slot(Commitment.Confirmed) > 0 && view.slot(Commitment.Finalized) > 0;
    await eventually('every commitment known', all);
    if (stream) await eventually('slot stream updates', () => watch.streamUpdates > 3);
    const before = view.slot(Commitment.Processed);
    await eventually('processed advances', () => view.slot(Commitment.Processed) >= before + 2);
    t.ok(view.slot(Commitment.Finalized) <= view.slot(Commitment.Processed), 'finalized is never ahead of processed');
    // Polled several times a slot, so the hash a client is handed now is in the book within a poll.
    const hash = base58.encode(await latestBlockhash(sim.url));
    await eventually("the node's latest blockhash in the book", () => book.slotOf(new Uint8Array(hash), 0) >= 0);
    t.ok(book.slotOf(new Uint8Array(hash), 0) <= view.slot(Commitment.Processed), 'its slot is one the node has processed');
  });
}

t.test('a node that refuses batches is asked call by call', async (t) => {
  const { createServer } = await import('node:http');
  const hash = base58.decode(new Uint8Array(32).fill(7));
  let batches = 0;
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (d: Buffer) => (body += d.toString()));
    req.on('end', () => {
      const call = JSON.parse(body) as { id: number; method: string } | unknown[];
      res.setHeader('content-type', 'application/json');
      if (Array.isArray(call)) {
        batches++;
        res.end('{"jsonrpc":"2.0","error":{"code":-32600,"message":"batch requests are not allowed"},"id":null}');
        return;
      }
      const result = call.method === 'getLatestBlockhash' ? { context: { slot: 120 }, value: { blockhash: hash, lastValidBlockHeight: 270 } } : 120;
      res.end(JSON.stringify({ jsonrpc: '2.0', id: call.id, result }));
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  t.teardown(() => server.close());
  const url = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  const node = new UpstreamNode({ id: 'nb', url, weight: 1 }, 0, POLICY, CLIENT);
  t.teardown(() => node.probes.destroy());
  const view = new ChainView();
  const book = new BlockhashBook();
  const watch = new NodeChainWatch(node, view, book, { pollMs: 40, timeoutMs: 1000, stream: false }, silentLogger());
  watch.start();
  t.teardown(() => watch.stop());
  await eventually('every commitment known', () => view.slot(Commitment.Finalized) === 120 && view.slot(Commitment.Confirmed) === 120);
  t.equal(book.slotOf(new Uint8Array(32).fill(7), 0), 120, 'the blockhash learned');
  t.equal(batches, 1, 'one batch refused, then calls one by one');
});

/** Rounds a watch with a slot stream runs while its node advances `slots` slots. */
async function roundsOver(t: Test, confirmDepth: number, slots: number): Promise<number> {
  const sim = await startSim({ id: 'cr', port: 0, slotMs: 200, confirmDepth });
  t.teardown(() => sim.close());
  const node = new UpstreamNode({ id: 'cr', url: sim.url, weight: 1 }, 0, POLICY, CLIENT);
  t.teardown(() => node.probes.destroy());
  const view = new ChainView();
  const watch = new NodeChainWatch(node, view, new BlockhashBook(), { pollMs: 40, timeoutMs: 1000, stream: true }, silentLogger());
  watch.start();
  t.teardown(() => watch.stop());
  await eventually('the slot stream is up', () => watch.streamed && watch.streamUpdates > 1 && view.slot(Commitment.Confirmed) > 0);
  const polls = watch.polls;
  const from = view.slot(Commitment.Processed);
  await eventually(`${slots} more slots`, () => view.slot(Commitment.Processed) >= from + slots);
  t.ok(view.slot(Commitment.Confirmed) >= view.slot(Commitment.Processed) - confirmDepth - 1, 'confirmed keeps up');
  return watch.polls - polls;
}

t.test('with the slot stream, a round follows each new slot and no more while nothing is due', async (t) => {
  // Five rounds a slot at 40 ms without the stream; one a slot with it (confirmed trails by one).
  const rounds = await roundsOver(t, 1, 6);
  t.ok(rounds <= 6 + 2, `${rounds} rounds over 6 slots`);
  t.ok(rounds >= 5, 'a round for (nearly) every slot');
});

t.test('with the slot stream, rounds go on every poll period while a confirmation is due', async (t) => {
  // Confirmed three slots behind processed (a slow confirmation): polled as without the stream.
  const rounds = await roundsOver(t, 3, 6);
  t.ok(rounds >= 6 * 3, `${rounds} rounds over 6 slots`);
});

t.test('a slot stream that announces no slot for a second is no guide: a round every poll period', async (t) => {
  // Slots of 5 s: the stream is up but quiet, as a stalled one is.
  const sim = await startSim({ id: 'cq', port: 0, slotMs: 5000 });
  t.teardown(() => sim.close());
  const node = new UpstreamNode({ id: 'cq', url: sim.url, weight: 1 }, 0, POLICY, CLIENT);
  t.teardown(() => node.probes.destroy());
  const watch = new NodeChainWatch(node, new ChainView(), new BlockhashBook(), { pollMs: 40, timeoutMs: 1000, stream: true }, silentLogger());
  watch.start();
  t.teardown(() => watch.stop());
  await eventually('the slot stream is up', () => watch.streamed);
  const polls = watch.polls;
  // 40 rounds take 1.6 s at 40 ms (and at most a second more after a slot); a round a second would take 40 s.
  await eventually('rounds every poll period', () => watch.polls - polls >= 40, 4000);
  t.pass(`${watch.polls - polls} rounds`);
});
