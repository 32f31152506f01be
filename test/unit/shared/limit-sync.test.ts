// LimitSync (src/shared/limit-sync.ts) against a real redis-server: each instance's bucket is
// debited by what the other took, through one counter per bucket; a counter new to an
// instance costs it at most a burst; Redis down means failed syncs, `up` false and local
// limits; back up, the sharing resumes.

import t from 'tap';
import { PASS } from '../../../src/limits/verdict.js';
import { resolveConfig } from '../../../src/config/load.js';
import { createLimitBuffers, RateLimiter } from '../../../src/limits/limiter.js';
import { silentLogger } from '../../../src/log.js';
import { ConsumptionTally } from '../../../src/limits/consumption-tally.js';
import { LimitSync } from '../../../src/shared/limit-sync.js';
import { RedisLink } from '../../../src/shared/redis-link.js';
import { eventually } from '../../helpers/eventually.js';
import { RedisServer, skipWithoutRedis } from '../../helpers/redis.js';

// A slow refill: a test's few seconds add no token worth counting.
const config = resolveConfig({
  nodes: [{ id: 'n0', url: 'http://127.0.0.1:1' }],
  affinity: { keyRate: 0.01, keyBurst: 100 },
  rateLimits: { token: { rate: 0.01, burst: 100 } },
});

interface Instance {
  limiter: RateLimiter;
  link: RedisLink;
  sync: LimitSync;
}

type Test = Parameters<Parameters<typeof t.test>[0]>[0];

function instance(t: Test, url: string, prefix: string, shared: boolean): Instance {
  const limiter = shared ? RateLimiter.shared(config, createLimitBuffers(config)) : new RateLimiter(config);
  const link = new RedisLink(url, silentLogger());
  // A long interval: the test calls sync() itself.
  const sync = new LimitSync(link, limiter, new ConsumptionTally(5000), { syncMs: 60_000, keyPrefix: prefix, maxSeen: 5000 }, silentLogger());
  limiter.tally = sync.tally;
  t.teardown(async () => {
    sync.stop();
    await link.close();
  });
  return { limiter, link, sync };
}

/** Calls `key`'s bucket still allows right now (taking them). */
function drainKey(l: RateLimiter, key: string): number {
  let n = 0;
  while (n < 1000 && l.takeKey(key, false, 1, performance.now()) === PASS) n++;
  return n;
}

t.test('two instances debit each other through Redis', { skip: skipWithoutRedis() }, async (t) => {
  const redis = await RedisServer.start();
  t.teardown(() => redis.kill());
  const a = instance(t, redis.url, 'ls1:', false);
  const b = instance(t, redis.url, 'ls1:', true);
  // Both: a sync of one that is still connecting debits nothing.
  await eventually('both connected', () => a.link.client.status === 'ready' && b.link.client.status === 'ready');
  const now = performance.now();
  t.equal(a.limiter.takeKey('hot', false, 30, now), PASS);
  t.equal(a.limiter.takeToken('tok', 40, now), PASS);
  await a.sync.sync();
  t.ok(a.link.up, 'a sync succeeded');
  // B's first sight of the counters: A's 30 and 40 are debited (within one burst).
  t.equal(b.limiter.takeKey('hot', false, 10, now), PASS);
  t.equal(b.limiter.takeToken('tok', 10, now), PASS);
  await b.sync.sync();
  t.equal(drainKey(b.limiter, 'hot'), 60, 'B: 100 - 10 own - 30 of A');
  await b.sync.sync();
  // A learns B's 10 + 60 at its next sync, and only those.
  t.equal(a.limiter.takeKey('hot', false, 1, now), PASS);
  await a.sync.sync();
  t.equal(drainKey(a.limiter, 'hot'), 0, 'A: 100 - 31 own - 70 of B is below zero');
  // A took no token calls since its first sync: it learns B's 10 with its next own take.
  t.not(a.limiter.takeToken('tok', 61, now), PASS, 'A: token bucket 100 - 40 own');
  t.equal(a.limiter.takeToken('tok', 1, now), PASS);
  await a.sync.sync();
  t.not(a.limiter.takeToken('tok', 50, now), PASS, "A: B's 10 debited at that sync");
  t.equal(a.limiter.takeToken('tok', 49, now), PASS);
  const counter = await a.link.client.get('ls1:k:hot');
  t.equal(counter, '101', 'one counter per bucket holds the total of both');
});

t.test('a counter seen first after a long history is debited one burst at most', { skip: skipWithoutRedis() }, async (t) => {
  const redis = await RedisServer.start();
  t.teardown(() => redis.kill());
  const a = instance(t, redis.url, 'ls2:', false);
  const b = instance(t, redis.url, 'ls2:', false);
  await eventually('connected', () => a.link.client.status === 'ready' && b.link.client.status === 'ready');
  await a.link.client.set('ls2:k:old', '5000');
  t.equal(b.limiter.takeKey('old', false, 1, performance.now()), PASS);
  await b.sync.sync();
  t.equal(drainKey(b.limiter, 'old'), 0, 'emptied, not 4,900 in debt');
  t.equal(b.limiter.takeKey('old', false, 1, performance.now() + 250_000), PASS, 'refilled from -1 at its rate, it allows again');
});

t.test('Redis down: syncs fail at once, limits stay local; back up: sharing resumes', { skip: skipWithoutRedis() }, async (t) => {
  const redis = await RedisServer.start();
  t.teardown(() => redis.kill());
  const a = instance(t, redis.url, 'ls3:', false);
  const b = instance(t, redis.url, 'ls3:', false);
  await eventually('connected', () => a.link.client.status === 'ready' && b.link.client.status === 'ready');
  t.equal(a.limiter.takeKey('k', false, 1, performance.now()), PASS);
  await a.sync.sync();
  t.ok(a.link.up);
  await redis.kill();
  await eventually('A sees the connection gone', () => !a.link.up && a.link.client.status !== 'ready');
  t.equal(a.limiter.takeKey('k', false, 10, performance.now()), PASS);
  // Redis stays down while this runs: a command queued for a reconnect would never settle, so
  // settling at all shows it was refused at once (no clock needed).
  await a.sync.sync();
  t.ok(a.link.syncFailures >= 1, `failed syncs counted (${a.link.syncFailures})`);
  t.notOk(a.link.up);
  t.equal(a.limiter.takeKey('k', false, 50, performance.now()), PASS, 'local limits still allow');
  await redis.restart();
  await eventually('both reconnect', () => a.link.client.status === 'ready' && b.link.client.status === 'ready', 10_000);
  t.ok(a.link.up, 'up again once reconnected');
  t.equal(a.limiter.takeKey('k', false, 20, performance.now()), PASS);
  await a.sync.sync();
  t.equal(b.limiter.takeKey('k', false, 1, performance.now()), PASS);
  await b.sync.sync();
  // A's 10 went with the failed sync; its 50 and 20 since reach Redis now.
  t.equal(drainKey(b.limiter, 'k'), 29, 'B debited by what A took since its failed sync');
});

t.test('a sync of many buckets goes in several script calls, every counter counted', { skip: skipWithoutRedis() }, async (t) => {
  const redis = await RedisServer.start();
  t.teardown(() => redis.kill());
  const a = instance(t, redis.url, 'ls4:', false);
  const b = instance(t, redis.url, 'ls4:', true);
  await eventually('connected', () => a.link.client.status === 'ready' && b.link.client.status === 'ready');
  const now = performance.now();
  let allowed = 0;
  for (let i = 0; i < 2500; i++) if (a.limiter.takeKey(`key${i}`, false, 1 + (i % 3), now) === PASS) allowed++;
  t.equal(allowed, 2500);
  await a.sync.sync();
  t.ok(a.link.up, `up after the sync (${a.link.syncFailures} failures)`);
  t.equal(await a.link.client.dbsize(), 2500, 'one counter per bucket');
  t.equal(await a.link.client.get('ls4:k:key2499'), '1', 'the last call counted too (2499 % 3 = 0: one call)');
  t.equal(b.limiter.takeKey('key2498', false, 1, now), PASS);
  await b.sync.sync();
  t.equal(drainKey(b.limiter, 'key2498'), 96, "B: 100 - 1 own - A's 3");
});
