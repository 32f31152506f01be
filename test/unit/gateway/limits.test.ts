// Rate limits (src/gateway/limits.ts, docs/routing.md "Affinity and rate limits"): hot affinity keys
// and IPs, calls per token, calls per token and method. Time is passed in, in ms. Every case
// runs twice: over one thread's BucketTables and over shared tables (createLimitBuffers).

import t from 'tap';
import { resolveConfig } from '../../../src/config/load.js';
import type { Config } from '../../../src/config/schema.js';
import { createLimitBuffers, RateLimiter, SCOPE_IP, SCOPE_KEY, SCOPE_METHOD, SCOPE_TOKEN, type LimitBuffers } from '../../../src/gateway/limits.js';

function config(c: Record<string, unknown>): Config {
  return resolveConfig({ nodes: [{ id: 'n0', url: 'http://127.0.0.1:1' }], ...c });
}

interface Mode {
  name: string;
  make(c: Config): RateLimiter;
  /** A reload as its owner would do it. */
  reconfigure(l: RateLimiter, c: Config): void;
}

// What the owner of the configuration handed out last, per shared limiter.
const handedOut = new WeakMap<RateLimiter, LimitBuffers>();

const MODES: Mode[] = [
  { name: 'one thread', make: (c) => new RateLimiter(c), reconfigure: (l, c) => void l.configure(c) },
  {
    name: 'shared',
    make: (c) => {
      const buffers = createLimitBuffers(c);
      const l = RateLimiter.shared(c, buffers);
      handedOut.set(l, buffers);
      return l;
    },
    reconfigure: (l, c) => {
      const buffers = createLimitBuffers(c, handedOut.get(l)!);
      handedOut.set(l, buffers);
      if (l.configure(c, buffers) !== null) throw new Error('buffers missing after createLimitBuffers');
    },
  },
];

for (const mode of MODES) {
  const limiter = (c: Record<string, unknown>): RateLimiter => mode.make(config(c));

  t.test(`${mode.name}: hot keys: a burst, then refusals until the bucket refills at keyRate`, async (t) => {
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

  t.test(`${mode.name}: a batch takes one token per call; the wait covers all of them`, async (t) => {
    const l = limiter({ affinity: { keyRate: 10, keyBurst: 5 } });
    t.ok(l.allowKey('k', false, 4, 0));
    t.notOk(l.allowKey('k', false, 3, 0));
    t.equal(l.retryAfterMs, 200, 'two more tokens needed');
    t.ok(l.allowKey('k', false, 1, 0), 'a refused batch took nothing');
  });

  t.test(`${mode.name}: IPs (key affinity without a key) and keys are separate buckets and scopes`, async (t) => {
    const l = limiter({ affinity: { keyRate: 1, keyBurst: 1 } });
    t.ok(l.allowKey('10.0.0.1', true, 1, 0));
    t.notOk(l.allowKey('10.0.0.1', true, 1, 0));
    t.equal(l.scope, SCOPE_IP);
    t.ok(l.allowKey('10.0.0.1', false, 1, 0), 'the same text as an explicit key');
    t.notOk(l.allowKey('10.0.0.1', false, 1, 0));
    t.equal(l.scope, SCOPE_KEY);
  });

  t.test(`${mode.name}: per token: off at rate 0; else a burst, refills, and tokens do not share`, async (t) => {
    t.ok(limiter({}).allowToken('a', 1_000_000, 0), 'rate 0: unlimited');
    const l = limiter({ rateLimits: { token: { rate: 2, burst: 2 } } });
    t.ok(l.allowToken('a', 2, 0));
    t.notOk(l.allowToken('a', 1, 0));
    t.equal(l.scope, SCOPE_TOKEN);
    t.equal(l.retryAfterMs, 500);
    t.ok(l.allowToken('b', 2, 0), 'another token');
    t.ok(l.allowToken('a', 1, 500));
  });

  t.test(`${mode.name}: per token and method: listed methods only, one token per call, batches entry by entry`, async (t) => {
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

  t.test(`${mode.name}: configure() applies reloaded rates; hot-key buckets carry over`, async (t) => {
    const l = limiter({ affinity: { keyRate: 1, keyBurst: 1 } });
    t.ok(l.allowKey('k', false, 1, 0));
    mode.reconfigure(l, config({ affinity: { keyRate: 1000, keyBurst: 1 }, rateLimits: { token: { rate: 1, burst: 1 } } }));
    t.notOk(l.allowKey('k', false, 1, 0), 'still empty');
    t.equal(l.retryAfterMs, 1, 'refilling at the new rate');
    t.ok(l.allowToken('a', 1, 0));
    t.notOk(l.allowToken('a', 1, 0), 'token limit now on');
  });
}

t.test('shared: the same answers as one thread for a random mix of keys, IPs, tokens, methods and batches', async (t) => {
  const c = config({
    affinity: { keyRate: 20, keyBurst: 5 },
    rateLimits: { token: { rate: 50, burst: 10 }, methods: { getProgramAccounts: { rate: 5, burst: 3 }, getBlock: { rate: 2, burst: 1 } } },
  });
  const one = new RateLimiter(c);
  const shared = RateLimiter.shared(c, createLimitBuffers(c));
  const METHODS = ['getSlot', 'getProgramAccounts', 'getBlock', ''];
  let seed = 7;
  const pick = (n: number): number => {
    seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
    return Math.floor((seed / 2 ** 32) * n);
  };
  let now = 0;
  let differ = 0;
  const seen = new Set<string>();
  for (let i = 0; i < 20_000; i++) {
    now += pick(3);
    let a: boolean;
    let b: boolean;
    const what = pick(3);
    if (what === 0) {
      const key = 'k' + pick(30);
      const isIp = pick(2) === 0;
      const calls = 1 + pick(3);
      a = one.allowKey(key, isIp, calls, now);
      b = shared.allowKey(key, isIp, calls, now);
    } else if (what === 1) {
      const calls = 1 + pick(3);
      const token = 'tok' + pick(10);
      a = one.allowToken(token, calls, now);
      b = shared.allowToken(token, calls, now);
    } else {
      const token = 'tok' + pick(10);
      const methods = pick(2) === 0 ? METHODS[pick(4)]! : [METHODS[pick(4)]!, METHODS[pick(4)]!, METHODS[pick(4)]!];
      a = one.allowMethods(token, methods, now);
      b = shared.allowMethods(token, methods, now);
    }
    if (!a) seen.add(one.scope);
    if (a !== b || (!a && (one.scope !== shared.scope || one.retryAfterMs !== shared.retryAfterMs))) {
      if (differ++ < 5) t.fail(`check ${i}: one thread ${a} ${one.scope} ${one.retryAfterMs}, shared ${b} ${shared.scope} ${shared.retryAfterMs}`);
    }
  }
  t.equal(differ, 0, 'every answer, scope and wait equal');
  t.same([...seen].sort(), [SCOPE_KEY, SCOPE_IP, SCOPE_METHOD, SCOPE_TOKEN].sort(), 'every scope refused something');
});

t.test('shared: two limiters attached to the same buffers share every limit', async (t) => {
  const c = config({ affinity: { keyRate: 10, keyBurst: 2 }, rateLimits: { token: { rate: 1, burst: 2 }, methods: { getBlock: { rate: 1, burst: 1 } } } });
  const buffers = createLimitBuffers(c);
  const a = RateLimiter.shared(c, buffers);
  // What another thread receives: a structured clone, whose SharedArrayBuffers are the same memory.
  const b = RateLimiter.shared(c, structuredClone(buffers));
  t.ok(a.allowKey('wallet', false, 2, 0));
  t.notOk(b.allowKey('wallet', false, 1, 0), 'the key drained through the other limiter');
  t.equal(b.scope, SCOPE_KEY);
  t.equal(b.retryAfterMs, 100);
  t.ok(b.allowKey('wallet', false, 1, 100), 'refilled for both');
  t.notOk(a.allowKey('wallet', false, 1, 100));
  t.ok(b.allowKey('10.0.0.1', true, 2, 0));
  t.notOk(a.allowKey('10.0.0.1', true, 1, 0));
  t.equal(a.scope, SCOPE_IP);
  t.ok(a.allowToken('tok', 1, 0));
  t.ok(b.allowToken('tok', 1, 0));
  t.notOk(a.allowToken('tok', 1, 0), 'two calls through two limiters spent the burst of 2');
  t.equal(a.scope, SCOPE_TOKEN);
  t.ok(b.allowMethods('tok', 'getBlock', 0));
  t.notOk(a.allowMethods('tok', ['getSlot', 'getBlock'], 0));
  t.equal(a.scope, SCOPE_METHOD);
  t.ok(new RateLimiter(c).allowKey('wallet', false, 2, 0), 'a one-thread limiter shares nothing');
});

t.test('shared reload: tables that remain keep their buffer and buckets; only new ones need a buffer', async (t) => {
  const c1 = config({ rateLimits: { token: { rate: 1, burst: 1 }, methods: { getBlock: { rate: 1, burst: 1 }, getSlot: { rate: 1, burst: 1 } } } });
  const first = createLimitBuffers(c1);
  const a = RateLimiter.shared(c1, first);
  const b = RateLimiter.shared(c1, first);
  t.ok(a.allowToken('tok', 1, 0));
  t.ok(a.allowMethods('tok', 'getBlock', 0));

  const c2 = config({ rateLimits: { token: { rate: 1000, burst: 1 }, methods: { getBlock: { rate: 1, burst: 1 }, getProgramAccounts: { rate: 1, burst: 1 } } } });
  const second = createLimitBuffers(c2, first);
  t.equal(second.keys, first.keys, 'hot keys: the same buffer');
  t.equal(second.tokens, first.tokens, 'tokens: the same buffer');
  t.equal(second.methods.find((m) => m.method === 'getBlock')!.buffer, first.methods.find((m) => m.method === 'getBlock')!.buffer, 'getBlock: the same buffer');
  t.notOk(first.methods.some((m) => m.method === 'getProgramAccounts'), 'getProgramAccounts is new');
  t.same(
    second.methods.map((m) => m.method),
    ['getBlock', 'getProgramAccounts'],
    'getSlot dropped',
  );

  t.same(a.configure(c2), { tokens: false, methods: ['getProgramAccounts'] }, 'without buffers: what is missing is named');
  t.ok(a.allowMethods('tok', ['getProgramAccounts', 'getProgramAccounts'], 0), 'and that limit is off meanwhile');
  t.equal(a.configure(c2, second), null, 'with them: nothing missing');
  t.equal(b.configure(c2, second), null);
  t.notOk(b.allowToken('tok', 1, 0), 'the token bucket carried over (still empty)');
  t.equal(b.retryAfterMs, 1, 'refilling at the new rate');
  t.notOk(b.allowMethods('tok', 'getBlock', 0), 'so did getBlock');
  t.ok(a.allowMethods('tok', 'getProgramAccounts', 0), 'getProgramAccounts is on');
  t.notOk(b.allowMethods('tok', 'getProgramAccounts', 0), 'and shared');
  t.ok(b.allowMethods('tok', ['getSlot', 'getSlot'], 0), 'getSlot is off');

  const c3 = config({});
  const third = createLimitBuffers(c3, second);
  t.equal(third.tokens, null, 'token limit off: no buffer');
  t.same(third.methods, []);
  t.equal(b.configure(c3, third), null);
  t.ok(b.allowToken('tok', 1_000_000, 0), 'off');
  t.same(b.configure(c2), { tokens: true, methods: ['getBlock', 'getProgramAccounts'] }, 'turned on again: new tables, new buffers');
});

t.test('shared: a limiter cannot be built over buffers that lack a configured table', async (t) => {
  const c = config({ rateLimits: { token: { rate: 1, burst: 1 }, methods: { getBlock: { rate: 1, burst: 1 } } } });
  t.throws(() => RateLimiter.shared(c, createLimitBuffers(config({}))), /no shared buffer for tokens, method getBlock/);
});
