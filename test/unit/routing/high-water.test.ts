// Per-node high-water marks shared by threads (src/routing/high-water.ts).

import t from 'tap';
import { Worker } from 'node:worker_threads';
import { NodeMark, R_DOWN, R_RETRY } from '../../../src/routing/high-water.js';

t.test('the mark only goes up; counters count', async (t) => {
  const m = new NodeMark();
  t.equal(m.slot, 0);
  m.raise(100);
  m.raise(90);
  t.equal(m.slot, 100, 'a lower slot leaves the mark');
  m.raise(2 ** 33);
  t.equal(m.slot, 0xffffffff, 'past 2^32 - 1 it stays at the top');
  m.waited(R_DOWN);
  m.waited(R_DOWN);
  m.refused(R_RETRY);
  t.equal(m.waits(R_DOWN), 2);
  t.equal(m.refusals(R_RETRY), 1);
  t.equal(m.returning, false);
  m.setReturning(true);
  t.equal(m.returning, true);
});

t.test('attach: a local copy joins the shared buffer, keeping its mark, counts and returning flag', async (t) => {
  const shared = new NodeMark();
  shared.raise(500);
  shared.waited(R_DOWN);
  const local = new NodeMark();
  local.raise(600);
  local.waited(R_DOWN);
  local.setReturning(true);
  local.attach(shared.buffer);
  t.equal(shared.slot, 600, 'the higher local mark raised the shared one');
  t.equal(shared.waits(R_DOWN), 2);
  t.equal(shared.returning, true);
  local.raise(700);
  t.equal(shared.slot, 700, 'later raises land in the shared words');
  local.attach(shared.buffer);
  t.equal(shared.waits(R_DOWN), 2, 'attaching the same buffer again adds nothing');
});

t.test('threads raising one mark at once: the highest wins', async (t) => {
  const mark = new NodeMark();
  const src = `
    const { workerData, parentPort } = require('node:worker_threads');
    const w = new Uint32Array(workerData.buffer);
    for (let i = 0; i < 200000; i++) {
      const s = workerData.base + i;
      let cur = Atomics.load(w, 0);
      while (s > cur) { const prev = Atomics.compareExchange(w, 0, cur, s); if (prev === cur) break; cur = prev; }
    }
    parentPort.postMessage('done');`;
  const runs = [0, 1, 2].map(
    (k) =>
      new Promise<void>((resolve, reject) => {
        const w = new Worker(src, { eval: true, workerData: { buffer: mark.buffer, base: k * 1000 } });
        w.once('message', () => resolve());
        w.once('error', reject);
      }),
  );
  for (let i = 0; i < 200000; i++) mark.raise(500 + i);
  await Promise.all(runs);
  t.equal(mark.slot, 2000 + 199999, 'no raise was lost to another');
});

t.test('a mark per level: each rises on its own, attach carries every level', async (t) => {
  const m = new NodeMark();
  m.raise(300, 0);
  m.raise(200, 2);
  t.equal(m.at(0), 300);
  t.equal(m.at(1), 0, 'a level nothing was served at stays at 0');
  t.equal(m.at(2), 200);
  t.equal(m.slot, 300, 'slot: the highest over the levels');
  m.raise(250, 2);
  t.equal(m.at(0), 300, 'a raise at one level leaves the others');
  const shared = new NodeMark();
  shared.raise(100, 1);
  m.attach(shared.buffer);
  t.same([shared.at(0), shared.at(1), shared.at(2)], [300, 100, 250]);
});
