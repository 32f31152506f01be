// Rate limits (src/limits/limiter.ts, docs/routing.md "Affinity and rate limits"): hot affinity keys
// and IPs, calls per token, calls per token and method. Time is passed in, in ms. Every case
// runs twice: over one thread's BucketTables and over shared tables (createLimitBuffers).

import t from 'tap';
import { resolveConfig } from '../../../src/config/load.js';
import type { Config } from '../../../src/config/schema.js';
import { createLimitBuffers, RateLimiter, type LimitBuffers } from '../../../src/limits/limiter.js';
import { PASS, refusalScope, refusalWaitMs, SCOPE_IP, SCOPE_KEY, SCOPE_METHOD, SCOPE_TOKEN } from '../../../src/limits/verdict.js';

let last = PASS;

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
  { name: 'one thread', make: (c) => new RateLimiter(c), reconfigure: (l, c) => void l.reconfigure(c) },
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
      if (l.reconfigure(c, buffers) !== null) throw new Error('buffers missing after createLimitBuffers');
    },
  },
];

for (const mode of MODES) {
  const limiter = (c: Record<string, unknown>): RateLimiter => mode.make(config(c));

  t.test(`${mode.name}: hot keys: a burst, then refusals until the bucket refills at keyRate`, async (t) => {
    const l = limiter({ affinity: { keyRate: 10, keyBurst: 3 } });
    for (let i = 0; i < 3; i++) t.equal(l.takeKey('wallet', false, 1, 1000), PASS, `burst call ${i + 1}`);
    t.not((last = l.takeKey('wallet', false, 1, 1000)), PASS);
    t.equal(refusalScope(last), SCOPE_KEY);
    t.equal(refusalWaitMs(last), 100, 'one token at 10/s');
    t.not((last = l.takeKey('wallet', false, 1, 1050)), PASS, 'half a token is not enough');
    t.equal(refusalWaitMs(last), 50);
    t.equal(l.takeKey('wallet', false, 1, 1100), PASS, 'refilled');
    t.equal(l.takeKey('other', false, 3, 1100), PASS, 'another key has its own bucket');
  });

  t.test(`${mode.name}: a batch takes one token per call; the wait covers all of them`, async (t) => {
    const l = limiter({ affinity: { keyRate: 10, keyBurst: 5 } });
    t.equal(l.takeKey('k', false, 4, 0), PASS);
    t.not((last = l.takeKey('k', false, 3, 0)), PASS);
    t.equal(refusalWaitMs(last), 200, 'two more tokens needed');
    t.equal(l.takeKey('k', false, 1, 0), PASS, 'a refused batch took nothing');
  });

  t.test(`${mode.name}: IPs (key affinity without a key) and keys are separate buckets and scopes`, async (t) => {
    const l = limiter({ affinity: { keyRate: 1, keyBurst: 1 } });
    t.equal(l.takeKey('10.0.0.1', true, 1, 0), PASS);
    t.not((last = l.takeKey('10.0.0.1', true, 1, 0)), PASS);
    t.equal(refusalScope(last), SCOPE_IP);
    t.equal(l.takeKey('10.0.0.1', false, 1, 0), PASS, 'the same text as an explicit key');
    t.not((last = l.takeKey('10.0.0.1', false, 1, 0)), PASS);
    t.equal(refusalScope(last), SCOPE_KEY);
  });

  t.test(`${mode.name}: per token: off at rate 0; else a burst, refills, and tokens do not share`, async (t) => {
    t.equal(limiter({}).takeToken('a', 1_000_000, 0), PASS, 'rate 0: unlimited');
    const l = limiter({ rateLimits: { token: { rate: 2, burst: 2 } } });
    t.equal(l.takeToken('a', 2, 0), PASS);
    t.not((last = l.takeToken('a', 1, 0)), PASS);
    t.equal(refusalScope(last), SCOPE_TOKEN);
    t.equal(refusalWaitMs(last), 500);
    t.equal(l.takeToken('b', 2, 0), PASS, 'another token');
    t.equal(l.takeToken('a', 1, 500), PASS);
  });

  t.test(`${mode.name}: per token and method: listed methods only, one token per call, batches entry by entry`, async (t) => {
    const l = limiter({ rateLimits: { methods: { getProgramAccounts: { rate: 1, burst: 2 } } } });
    t.equal(l.takeMethods('a', 'getSlot', 0), PASS, 'not listed');
    t.equal(l.takeMethods('a', 'getProgramAccounts', 0), PASS);
    t.equal(l.takeMethods('a', ['getSlot', '', 'getProgramAccounts'], 0), PASS, "'' (an invalid element) takes nothing");
    t.not((last = l.takeMethods('a', ['getSlot', 'getProgramAccounts'], 0)), PASS);
    t.equal(refusalScope(last), SCOPE_METHOD);
    t.equal(refusalWaitMs(last), 1000);
    t.equal(l.takeMethods('b', 'getProgramAccounts', 0), PASS, 'per token');
    t.equal(limiter({}).takeMethods('a', ['getProgramAccounts', 'getProgramAccounts', 'getProgramAccounts'], 0), PASS, 'no method limits');
  });

  t.test(`${mode.name}: reconfigure() applies reloaded rates; every bucket carries over`, async (t) => {
    const l = limiter({ affinity: { keyRate: 1, keyBurst: 1 } });
    t.equal(l.takeKey('k', false, 1, 0), PASS);
    mode.reconfigure(l, config({ affinity: { keyRate: 1000, keyBurst: 1 }, rateLimits: { token: { rate: 1, burst: 1 } } }));
    t.not((last = l.takeKey('k', false, 1, 0)), PASS, 'still empty');
    t.equal(refusalWaitMs(last), 1, 'refilling at the new rate');
    t.equal(l.takeToken('a', 1, 0), PASS);
    t.not((last = l.takeToken('a', 1, 0)), PASS, 'token limit now on');
  });

  t.test(`${mode.name}: a reload keeps token and method buckets at their level`, async (t) => {
    const c = { rateLimits: { token: { rate: 1, burst: 2 }, methods: { getBlock: { rate: 1, burst: 1 } } } };
    const l = limiter(c);
    t.equal(l.takeToken('a', 2, 0), PASS);
    t.equal(l.takeMethods('a', 'getBlock', 0), PASS);
    // Another setting changes (a method limit added); the token and getBlock limits stay as they were.
    mode.reconfigure(l, config({ rateLimits: { ...c.rateLimits, methods: { ...c.rateLimits.methods, getSlot: { rate: 1, burst: 1 } } } }));
    t.equal(refusalScope((last = l.takeToken('a', 1, 0))), SCOPE_TOKEN, 'the token stays at its limit');
    t.equal(refusalWaitMs(last), 1000);
    t.equal(refusalScope(l.takeMethods('a', 'getBlock', 0)), SCOPE_METHOD, 'the method bucket too');
    t.equal(l.takeMethods('a', 'getSlot', 0), PASS, 'the added method limit starts full');
    // A limit the reload raises: the same bucket, refilling toward the new burst.
    mode.reconfigure(l, config({ rateLimits: { token: { rate: 1, burst: 5 } } }));
    t.equal(refusalScope(l.takeToken('a', 1, 0)), SCOPE_TOKEN, 'still empty right after the reload');
    t.equal(l.takeToken('a', 3, 3000), PASS, 'refilled at the rate since');
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
    let a: number;
    let b: number;
    const what = pick(3);
    if (what === 0) {
      const key = 'k' + pick(30);
      const isIp = pick(2) === 0;
      const calls = 1 + pick(3);
      a = one.takeKey(key, isIp, calls, now);
      b = shared.takeKey(key, isIp, calls, now);
    } else if (what === 1) {
      const calls = 1 + pick(3);
      const token = 'tok' + pick(10);
      a = one.takeToken(token, calls, now);
      b = shared.takeToken(token, calls, now);
    } else {
      const token = 'tok' + pick(10);
      const methods = pick(2) === 0 ? METHODS[pick(4)]! : [METHODS[pick(4)]!, METHODS[pick(4)]!, METHODS[pick(4)]!];
      a = one.takeMethods(token, methods, now);
      b = shared.takeMethods(token, methods, now);
    }
    if (a !== PASS) seen.add(refusalScope(a));
    // A refusal carries scope and wait in its value: equal values, equal answers.
    if (a !== b && differ++ < 5) t.fail(`check ${i}: one thread ${refusalScope(a)} ${refusalWaitMs(a)}, shared ${refusalScope(b)} ${refusalWaitMs(b)}`);
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
  t.equal(a.takeKey('wallet', false, 2, 0), PASS);
  t.not((last = b.takeKey('wallet', false, 1, 0)), PASS, 'the key drained through the other limiter');
  t.equal(refusalScope(last), SCOPE_KEY);
  t.equal(refusalWaitMs(last), 100);
  t.equal(b.takeKey('wallet', false, 1, 100), PASS, 'refilled for both');
  t.not((last = a.takeKey('wallet', false, 1, 100)), PASS);
  t.equal(b.takeKey('10.0.0.1', true, 2, 0), PASS);
  t.not((last = a.takeKey('10.0.0.1', true, 1, 0)), PASS);
  t.equal(refusalScope(last), SCOPE_IP);
  t.equal(a.takeToken('tok', 1, 0), PASS);
  t.equal(b.takeToken('tok', 1, 0), PASS);
  t.not((last = a.takeToken('tok', 1, 0)), PASS, 'two calls through two limiters spent the burst of 2');
  t.equal(refusalScope(last), SCOPE_TOKEN);
  t.equal(b.takeMethods('tok', 'getBlock', 0), PASS);
  t.not((last = a.takeMethods('tok', ['getSlot', 'getBlock'], 0)), PASS);
  t.equal(refusalScope(last), SCOPE_METHOD);
  t.equal(new RateLimiter(c).takeKey('wallet', false, 2, 0), PASS, 'a one-thread limiter shares nothing');
});

t.test('shared reload: tables that remain keep their buffer and buckets; only new ones need a buffer', async (t) => {
  const c1 = config({ rateLimits: { token: { rate: 1, burst: 1 }, methods: { getBlock: { rate: 1, burst: 1 }, getSlot: { rate: 1, burst: 1 } } } });
  const first = createLimitBuffers(c1);
  const a = RateLimiter.shared(c1, first);
  const b = RateLimiter.shared(c1, first);
  t.equal(a.takeToken('tok', 1, 0), PASS);
  t.equal(a.takeMethods('tok', 'getBlock', 0), PASS);

  const c2 = config({
    rateLimits: { token: { rate: 1000, burst: 1 }, methods: { getBlock: { rate: 1, burst: 1 }, getProgramAccounts: { rate: 1, burst: 1 } } },
  });
  const second = createLimitBuffers(c2, first);
  t.equal(second.keys, first.keys, 'hot keys: the same buffer');
  t.equal(second.tokens, first.tokens, 'tokens: the same buffer');
  t.equal(second.methods.find((m) => m.method === 'getBlock')!.buffer, first.methods.find((m) => m.method === 'getBlock')!.buffer, 'getBlock: the same buffer');
  t.notOk(
    first.methods.some((m) => m.method === 'getProgramAccounts'),
    'getProgramAccounts is new',
  );
  t.same(
    second.methods.map((m) => m.method),
    ['getBlock', 'getProgramAccounts'],
    'getSlot dropped',
  );

  t.same(a.reconfigure(c2), { tokens: false, methods: ['getProgramAccounts'] }, 'without buffers: what is missing is named');
  t.equal(a.takeMethods('tok', ['getProgramAccounts', 'getProgramAccounts'], 0), PASS, 'and that limit is off meanwhile');
  t.equal(a.reconfigure(c2, second), null, 'with them: nothing missing');
  t.equal(b.reconfigure(c2, second), null);
  t.not((last = b.takeToken('tok', 1, 0)), PASS, 'the token bucket carried over (still empty)');
  t.equal(refusalWaitMs(last), 1, 'refilling at the new rate');
  t.not((last = b.takeMethods('tok', 'getBlock', 0)), PASS, 'so did getBlock');
  t.equal(a.takeMethods('tok', 'getProgramAccounts', 0), PASS, 'getProgramAccounts is on');
  t.not((last = b.takeMethods('tok', 'getProgramAccounts', 0)), PASS, 'and shared');
  t.equal(b.takeMethods('tok', ['getSlot', 'getSlot'], 0), PASS, 'getSlot is off');

  const c3 = config({});
  const third = createLimitBuffers(c3, second);
  t.equal(third.tokens, null, 'token limit off: no buffer');
  t.same(third.methods, []);
  t.equal(b.reconfigure(c3, third), null);
  t.equal(b.takeToken('tok', 1_000_000, 0), PASS, 'off');
  t.same(b.reconfigure(c2), { tokens: true, methods: ['getBlock', 'getProgramAccounts'] }, 'turned on again: new tables, new buffers');
});

t.test('shared: a limiter cannot be built over buffers that lack a configured table', async (t) => {
  const c = config({ rateLimits: { token: { rate: 1, burst: 1 }, methods: { getBlock: { rate: 1, burst: 1 } } } });
  t.throws(() => RateLimiter.shared(c, createLimitBuffers(config({}))), /no shared buffer for tokens, method getBlock/);
});
