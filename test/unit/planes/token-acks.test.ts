// The acknowledgement of a token change (src/planes/token-acks.ts): it waits for every live
// worker to confirm the snapshot that carried the change, not an older one; a worker that exits
// is not waited for; one that never answers ends the wait after the bound, named in an error log.

import { pino } from 'pino';
import t from 'tap';
import { TokenAcks } from '../../../src/planes/token-acks.js';

/** A logger whose error lines are kept, parsed. */
function capture(): { log: pino.Logger; lines: Record<string, any>[] } {
  const lines: Record<string, any>[] = [];
  const log = pino({ level: 'error' }, { write: (s: string) => void lines.push(JSON.parse(s)) });
  return { log, lines };
}

/** Whether `p` settled by the time the microtasks queued now have run. */
async function settled(p: Promise<void>): Promise<boolean> {
  let done = false;
  void p.then(() => (done = true));
  await new Promise((r) => setImmediate(r));
  return done;
}

t.test('nothing sent since the workers started: no wait', async (t) => {
  const acks = new TokenAcks(capture().log, 60_000);
  acks.join(0);
  acks.join(1);
  t.ok(await settled(acks.wait()));
});

t.test('waits for every worker to confirm the latest snapshot', async (t) => {
  const { log, lines } = capture();
  const acks = new TokenAcks(log, 60_000);
  acks.join(0);
  acks.join(1);
  const first = acks.next();
  const second = acks.next();
  const w = acks.wait();
  t.notOk(await settled(w), 'nobody confirmed yet');
  acks.ack(0, second);
  acks.ack(1, first);
  t.notOk(await settled(w), 'worker 1 is one snapshot behind');
  acks.ack(1, second);
  t.ok(await settled(w), 'both serve the latest');
  t.same(lines, [], 'nothing logged');
  // A late answer of an older snapshot does not move a worker back.
  acks.ack(1, first);
  t.ok(await settled(acks.wait()));
});

t.test('a worker that exited is not waited for', async (t) => {
  const acks = new TokenAcks(capture().log, 60_000);
  acks.join(0);
  acks.join(1);
  const gen = acks.next();
  const w = acks.wait();
  acks.ack(0, gen);
  t.notOk(await settled(w));
  acks.gone(1);
  t.ok(await settled(w));
});

t.test('a worker that never answers: the wait ends after the bound, with an error naming it', async (t) => {
  const { log, lines } = capture();
  const acks = new TokenAcks(log, 50);
  acks.join(0);
  acks.join(1);
  const gen = acks.next();
  acks.ack(0, gen);
  // The bound's timer does not hold the process open (a gateway's loop is alive anyway): this does.
  const alive = setInterval(() => {}, 1000);
  t.teardown(() => clearInterval(alive));
  const started = performance.now();
  await acks.wait();
  const ms = performance.now() - started;
  t.ok(ms >= 45, `waited ${ms.toFixed(0)} ms`);
  t.equal(lines.length, 1);
  t.match(lines[0], { level: 50, gen, behind: [{ worker: 1, applied: 0 }], waitedMs: 50, msg: /did not confirm a token change/ });
});
