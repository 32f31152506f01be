// The limit side of shared limits (src/limits/remote-ledger.ts): from a shared counter's new
// total, what the other instances took since the last look is debited from the local bucket;
// a counter seen for the first time debits at most a bucket's burst. No Redis needed.

import t from 'tap';
import { resolveConfig } from '../../../src/config/load.js';
import { RateLimiter } from '../../../src/limits/limiter.js';
import { RemoteLedger } from '../../../src/limits/remote-ledger.js';
import { PASS, refusalScope } from '../../../src/limits/verdict.js';

const config = resolveConfig({ nodes: [{ id: 'n0', url: 'http://127.0.0.1:1' }], rateLimits: { token: { rate: 0.001, burst: 10 } } });

t.test('the growth beyond this instance’s own part is debited; a new counter debits at most a burst', async (t) => {
  const limiter = new RateLimiter(config);
  const ledger = new RemoteLedger(limiter, 100, 500);
  // The counter is new here and already held 1000 (others' calls, when is unknown): one burst at most.
  ledger.apply([['t', 'tok', 1]], ['p:t:tok'], [60_000], [1001]);
  t.not(limiter.takeToken('tok', 1, performance.now()), PASS, 'the bucket is empty: a full burst was debited');
  const other = new RateLimiter(config);
  const ledger2 = new RemoteLedger(other, 100, 500);
  ledger2.apply([['t', 'tok', 2]], ['p:t:tok'], [60_000], [2]);
  t.equal(other.takeToken('tok', 8, performance.now()), PASS, 'only its own calls in the total: nothing debited');
  // Next sync: this instance added 1, the total grew by 4: the others took 3.
  ledger2.apply([['t', 'tok', 1]], ['p:t:tok'], [60_000], [6]);
  const r = other.takeToken('tok', 1, performance.now());
  t.equal(refusalScope(r), 'token', "the others' 3 were debited: the bucket is below zero");
});

t.test('ttlFor: the bucket refill time plus slack and four syncs', async (t) => {
  const ledger = new RemoteLedger(new RateLimiter(config), 100, 500);
  t.equal(ledger.ttlFor('t'), Math.ceil((10 * 1000) / 0.001 + 2000 + 2000));
  t.equal(ledger.ttlFor('m:none'), 4000, 'a table this config lacks: slack only');
});
