// Which keys the cache holds: hot after N reads close together, idle ones out, a cap on held
// keys, and a bounded memory of keys read but not held (a million keys read once).

import t from 'tap';
import { KeyDirectory } from '../../../src/cache/key-directory.js';

t.test('a key becomes hot after hotAfterReads reads within idleMs of each other', async (t) => {
  const d = new KeyDirectory({ hotAfterReads: 3, idleMs: 1000, maxKeys: 10 });
  t.equal(d.read('a', 1, 0), false);
  t.equal(d.read('a', 1, 500), false);
  t.equal(d.read('a', 1, 900), true, 'third read');
  d.hold('a', 900);
  t.ok(d.has('a'));
  t.equal(d.read('a', 5, 950), false, 'a held key is only touched');
  // Reads far apart never add up.
  t.equal(d.read('b', 2, 0), false);
  t.equal(d.read('b', 1, 5000), false, 'the earlier reads were too long ago');
  t.equal(d.read('c', 3, 0), true, 'a report of several reads at once counts them all');
});

t.test('idle keys and the least recently read come out first', async (t) => {
  const d = new KeyDirectory({ hotAfterReads: 1, idleMs: 1000, maxKeys: 10 });
  for (const [k, at] of [
    ['a', 0],
    ['b', 100],
    ['c', 200],
  ] as const) {
    d.read(k, 1, at);
    d.hold(k, at);
  }
  d.read('a', 1, 300);
  t.same([...d.leastRecent()], ['b', 'c', 'a'], 'a read moves a key to the back');
  t.same(d.idle(1250), ['b', 'c'], 'not read for idleMs');
  d.drop('b');
  t.same([...d.keys()], ['c', 'a']);
});

t.test('held keys are capped at maxKeys', async (t) => {
  const d = new KeyDirectory({ hotAfterReads: 1, idleMs: 1000, maxKeys: 2 });
  for (const k of ['a', 'b']) {
    t.equal(d.read(k, 1, 0), true);
    d.hold(k, 0);
  }
  t.equal(d.read('c', 5, 0), false, 'no room: not hot');
  t.equal(d.size, 2);
});

t.test('a million keys read once: the memory of cold keys stays bounded', async (t) => {
  const d = new KeyDirectory({ hotAfterReads: 2, idleMs: 60_000, maxKeys: 1000 });
  for (let i = 0; i < 1_000_000; i++) d.read('k' + i, 1, i / 1000);
  t.equal(d.size, 0, 'none held');
  t.ok(d.coldSize <= 2000, `cold keys kept: ${d.coldSize}`);
  // The most recent cold keys are the ones remembered: a second read makes one hot.
  t.equal(d.read('k999999', 1, 1000), true);
  t.equal(d.read('k1', 1, 1000), false, 'long forgotten');
});
