// The gateway's stop list: newest part first, one at a time, every part even when one fails,
// and only once however often it is asked.

import t from 'tap';
import { StopList } from '../../src/stop-list.js';

t.test('stops run newest first, each awaited before the next', async (t) => {
  const list = new StopList();
  const log: string[] = [];
  for (const name of ['pool', 'store', 'listener']) {
    list.add(async () => {
      log.push(`${name} start`);
      await new Promise((r) => setTimeout(r, 5));
      log.push(`${name} end`);
    });
  }
  await list.run();
  t.same(log, ['listener start', 'listener end', 'store start', 'store end', 'pool start', 'pool end']);
});

t.test('a failing stop does not keep the others from running; the first failure is thrown', async (t) => {
  const list = new StopList();
  const ran: string[] = [];
  list.add(() => {
    ran.push('a');
  });
  list.add(() => {
    ran.push('b');
    throw new Error('b failed');
  });
  list.add(async () => {
    ran.push('c');
    throw new Error('c failed');
  });
  await t.rejects(list.run(), { message: 'c failed' });
  t.same(ran, ['c', 'b', 'a']);
});

t.test('run() stops everything once; later calls share the same run', async (t) => {
  const list = new StopList();
  let stops = 0;
  list.add(async () => {
    stops++;
    await new Promise((r) => setTimeout(r, 5));
  });
  const first = list.run();
  const second = list.run();
  t.equal(first, second, 'the same promise while running');
  await first;
  await list.run();
  t.equal(stops, 1);
});

t.test('an empty list resolves', async (t) => {
  await t.resolves(new StopList().run());
});
