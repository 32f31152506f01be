// Rate limits (src/gateway/limits.ts, README "Affinity and rate limits"): hot affinity keys
// and IPs, calls per token, calls per token and method. Time is passed in, in ms.

import t from 'tap';
import { resolveConfig } from '../../../src/config/load.js';
import { RateLimiter, SCOPE_IP, SCOPE_KEY, SCOPE_METHOD, SCOPE_TOKEN } from '../../../src/gateway/limits.js';

function limiter(config: Record<string, unknown>): RateLimiter {
  return new RateLimiter(resolveConfig({ nodes: [{ id: 'n0', url: 'http://127.0.0.1:1' }], ...config }));
}

t.test('hot keys: a burst, then refusals until the bucket refills at keyRate', async (t) => {
  const l = limiter({ affinity: { keyRate: 10, keyBurst: 3 } });
  for (let i = 0; i < 3; i++) t.ok(l.allowKey('wallet', false, 1, 1000), `burst call ${i + 1}`);
  t.notOk(l.allowKey('wallet', false, 1, 1000));
  t.equal(l.scope, SCOPE_KEY);
  t.equal(l.retryAfterMs, 100, 'one token at 10/s');
  t.notOk(l.allowKey('wallet', false, 1, 1050), 'half a token is not enough');
  t.equal(l.retryAfterMs, 50);
  t.ok(l.allowKey('wallet', false, 1, 1100), 'refilled');
  t.ok(l.allowKey('other', false, 3, 1100), 'another key has its own bucket');
});

t.test('a batch takes one token per call; the wait covers all of them', async (t) => {
  const l = limiter({ affinity: { keyRate: 10, keyBurst: 5 } });
  t.ok(l.allowKey('k', false, 4, 0));
  t.notOk(l.allowKey('k', false, 3, 0));
  t.equal(l.retryAfterMs, 200, 'two more tokens needed');
  t.ok(l.allowKey('k', false, 1, 0), 'a refused batch took nothing');
});

t.test('IPs (key affinity without a key) and keys are separate buckets and scopes', async (t) => {
  const l = limiter({ affinity: { keyRate: 1, keyBurst: 1 } });
  t.ok(l.allowKey('10.0.0.1', true, 1, 0));
  t.notOk(l.allowKey('10.0.0.1', true, 1, 0));
  t.equal(l.scope, SCOPE_IP);
  t.ok(l.allowKey('10.0.0.1', false, 1, 0), 'the same text as an explicit key');
  t.notOk(l.allowKey('10.0.0.1', false, 1, 0));
  t.equal(l.scope, SCOPE_KEY);
});

t.test('per token: off at rate 0; else a burst, refills, and tokens do not share', async (t) => {
  t.ok(limiter({}).allowToken('a', 1_000_000, 0), 'rate 0: unlimited');
  const l = limiter({ rateLimits: { token: { rate: 2, burst: 2 } } });
  t.ok(l.allowToken('a', 2, 0));
  t.notOk(l.allowToken('a', 1, 0));
  t.equal(l.scope, SCOPE_TOKEN);
  t.equal(l.retryAfterMs, 500);
  t.ok(l.allowToken('b', 2, 0), 'another token');
  t.ok(l.allowToken('a', 1, 500));
});

t.test('per token and method: listed methods only, one token per call, batches entry by entry', async (t) => {
  const l = limiter({ rateLimits: { methods: { getProgramAccounts: { rate: 1, burst: 2 } } } });
  t.ok(l.allowMethods('a', 'getSlot', 0), 'not listed');
  t.ok(l.allowMethods('a', 'getProgramAccounts', 0));
  t.ok(l.allowMethods('a', ['getSlot', '', 'getProgramAccounts'], 0), "'' (an invalid element) takes nothing");
  t.notOk(l.allowMethods('a', ['getSlot', 'getProgramAccounts'], 0));
  t.equal(l.scope, SCOPE_METHOD);
  t.equal(l.retryAfterMs, 1000);
  t.ok(l.allowMethods('b', 'getProgramAccounts', 0), 'per token');
  t.ok(limiter({}).allowMethods('a', ['getProgramAccounts', 'getProgramAccounts', 'getProgramAccounts'], 0), 'no method limits');
});

t.test('configure() applies reloaded rates; hot-key buckets carry over', async (t) => {
  const l = limiter({ affinity: { keyRate: 1, keyBurst: 1 } });
  t.ok(l.allowKey('k', false, 1, 0));
  l.configure(resolveConfig({ nodes: [{ id: 'n0', url: 'http://127.0.0.1:1' }], affinity: { keyRate: 1000, keyBurst: 1 }, rateLimits: { token: { rate: 1, burst: 1 } } }));
  t.notOk(l.allowKey('k', false, 1, 0), 'still empty');
  t.equal(l.retryAfterMs, 1, 'refilling at the new rate');
  t.ok(l.allowToken('a', 1, 0));
  t.notOk(l.allowToken('a', 1, 0), 'token limit now on');
});
