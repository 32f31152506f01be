import t from 'tap';
import { Worker } from 'node:worker_threads';
import { Keypair } from '@solana/web3.js';
import { BlockhashBook } from '../../../src/solana/blockhash-book.js';
import { ChainView, Commitment, commitmentOf, freshestSlots, lagAt } from '../../../src/solana/chain-view.js';

t.test('chain view: commitments only rise, a higher commitment raises the lower ones', async (t) => {
  const v = new ChainView();
  t.same(v.snapshot(), { processed: null, confirmed: null, finalized: null, firstAvailable: null });
  v.raise(Commitment.Processed, 100);
  v.raise(Commitment.Finalized, 68);
  t.equal(v.slot(Commitment.Processed), 100);
  t.equal(v.slot(Commitment.Confirmed), 68);
  t.equal(v.slot(Commitment.Finalized), 68);
  v.raise(Commitment.Processed, 90);
  t.equal(v.slot(Commitment.Processed), 100, 'a late, older report does not lower it');
  v.raise(Commitment.Confirmed, 99);
  t.equal(v.slot(Commitment.Confirmed), 99);
  t.equal(v.saidBehind, -1);
  v.sayBehind(12, 5_000);
  t.equal(v.saidBehind, 12);
  t.equal(v.saidAt, 5);
  v.clearBehind();
  t.equal(v.saidBehind, -1);
  const copy = new ChainView();
  copy.raise(Commitment.Processed, 150);
  copy.attach(v.buffer);
  t.equal(v.slot(Commitment.Processed), 150, 'attach carries what the copy knew');
});

t.test('commitment names from bytes', async (t) => {
  const b = Buffer.from('"processed","confirmed","finalized","recent","max"');
  t.equal(commitmentOf(b, 1, 10), Commitment.Processed);
  t.equal(commitmentOf(b, 13, 22), Commitment.Confirmed);
  t.equal(commitmentOf(b, 25, 34), Commitment.Finalized);
  t.equal(commitmentOf(b, 37, 43), -1);
  t.equal(commitmentOf(b, 46, 49), -1);
});

t.test('blockhash book: learn, look up, keep the lowest slot, miss on unknown', async (t) => {
  let book = new BlockhashBook();
  const hashes = Array.from({ length: 400 }, () => Keypair.generate().publicKey);
  hashes.forEach((h, i) => book.learn(h.toBytes(), 0, 1000 + i));
  let found = 0;
  hashes.forEach((h, i) => {
    if (book.slotOf(h.toBytes(), 0) === 1000 + i) found++;
  });
  t.ok(found >= 380, `most of 400 recent hashes are found (${found}); a collision evicts the older`);
  t.equal(book.slotOf(Keypair.generate().publicKey.toBytes(), 0), -1);
  // A book of its own: among 400 hashes a collision may have evicted the first.
  const h = hashes[0]!.toBytes();
  book = new BlockhashBook();
  book.learn(h, 0, 1000);
  book.learn(h, 0, 5000);
  t.equal(book.slotOf(h, 0), 1000, 'a later sighting keeps the earlier slot');
  book.learn(h, 0, 900);
  t.equal(book.slotOf(h, 0), 900);
  const text = Buffer.from(`"${hashes[1]!.toBase58()}"`);
  const other = new BlockhashBook();
  other.learnBase58(text, 1, text.length - 1, 77);
  t.equal(other.slotOf(hashes[1]!.toBytes(), 0), 77, 'learned from base58 text');
  other.learnBase58(Buffer.from('0OIl'), 0, 4, 1);
});

t.test('blockhash book and chain view are shared across threads', async (t) => {
  const book = new BlockhashBook();
  const view = new ChainView();
  const hash = Keypair.generate().publicKey.toBytes();
  const url = new URL('../../../src/solana/blockhash-book.js', import.meta.url).href;
  const cvUrl = new URL('../../../src/solana/chain-view.js', import.meta.url).href;
  const code = `
    const { workerData, parentPort } = require('node:worker_threads');
    Promise.all([import(${JSON.stringify(url)}), import(${JSON.stringify(cvUrl)})]).then(([b, c]) => {
      new b.BlockhashBook(workerData.book).learn(workerData.hash, 0, 4242);
      new c.ChainView(workerData.view).raise(2, 777);
      parentPort.postMessage('done');
    });`;
  const w = new Worker(code, { eval: true, workerData: { book: book.buffer, view: view.buffer, hash } });
  await new Promise((resolve, reject) => {
    w.once('message', resolve);
    w.once('error', reject);
  });
  await w.terminate();
  t.equal(book.slotOf(hash, 0), 4242);
  t.equal(view.slot(Commitment.Processed), 777);
});

t.test('lag per commitment: behind the freshest node that answers probes, null while unknown', async (t) => {
  const node = (id: string, state: 'healthy' | 'unhealthy', p: number, c: number, f: number) => {
    const chain = new ChainView();
    if (p > 0) chain.raise(Commitment.Processed, p);
    if (c > 0) chain.raise(Commitment.Confirmed, c);
    if (f > 0) chain.raise(Commitment.Finalized, f);
    return { id, bit: 1, state, drained: false, weight: 1, slot: f, ewmaMs: 1, inflight: 0, chain };
  };
  const a = node('a', 'healthy', 1000, 999, 968);
  const b = node('b', 'healthy', 990, 995, 970);
  const down = node('down', 'unhealthy', 5000, 5000, 5000);
  const unknown = node('u', 'healthy', 0, 0, 0);
  const best = freshestSlots([a, b, down, unknown]);
  t.same(best, [1000, 999, 970], "each commitment's freshest on its own; the down node's frozen view counts for none");
  t.same(
    [0, 1, 2].map((c) => lagAt(a.chain, best, c)),
    [0, 0, 2],
  );
  t.same(
    [0, 1, 2].map((c) => lagAt(b.chain, best, c)),
    [5, 4, 0],
    'b: its confirmed 995 raised its processed too',
  );
  t.same(
    [0, 1, 2].map((c) => lagAt(unknown.chain, best, c)),
    [null, null, null],
  );
  t.same(freshestSlots([unknown]), [0, 0, 0]);
});
