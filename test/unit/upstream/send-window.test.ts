// A block engine's send window (docs/jito.md "Rate limit"): never more than its share in any
// window, whatever the timing, and the wait it names is when the next send is free.

import t from 'tap';
import { SendWindow } from '../../../src/upstream/jito/window.js';

/** The most sends in any `windowMs` span of `times`. */
function busiest(times: number[], windowMs: number): number {
  let most = 0;
  for (let i = 0, j = 0; i < times.length; i++) {
    while (times[i]! - times[j]! >= windowMs) j++;
    most = Math.max(most, i - j + 1);
  }
  return most;
}

t.test('5 a second on one plane: the sixth waits for the first to age out', async (t) => {
  const w = SendWindow.forLimit(5, 1);
  for (let i = 0; i < 5; i++) t.equal(w.take(1000 + i * 10), 0);
  t.equal(w.take(1100), 900, 'the sixth waits until the first is 1 s old');
  t.equal(w.wait(1100), 900);
  t.equal(w.take(2000), 0, 'free again once the first is a second old');
  t.equal(w.take(2005), 5, 'the second went at 1010');
});

t.test('the planes share the limit: floor(limit / planes) each, one per longer window below one', async (t) => {
  t.same([SendWindow.forLimit(5, 2).max, SendWindow.forLimit(5, 2).windowMs], [2, 1000]);
  t.same([SendWindow.forLimit(5, 4).max, SendWindow.forLimit(5, 4).windowMs], [1, 1000]);
  t.same([SendWindow.forLimit(2, 4).max, SendWindow.forLimit(2, 4).windowMs], [1, 2000]);
  t.same([SendWindow.forLimit(0.5, 1).max, SendWindow.forLimit(0.5, 1).windowMs], [1, 2000]);
});

t.test('random arrivals: never more than the limit in any second', async (t) => {
  for (const limit of [1, 3, 5, 20]) {
    const w = SendWindow.forLimit(limit, 1);
    const sent: number[] = [];
    let now = 0;
    for (let i = 0; i < 5000; i++) {
      now += Math.random() * (400 / limit);
      if (w.take(now) === 0) sent.push(now);
    }
    t.ok(busiest(sent, 1000) <= limit, `limit ${limit}: busiest second ${busiest(sent, 1000)}`);
    t.ok(sent.length >= Math.floor(now / 1000) * limit * 0.7, `limit ${limit}: the limit is used (${sent.length} sends in ${Math.round(now)} ms)`);
  }
});
