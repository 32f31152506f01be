// Two gateway instances sharing one real redis-server (docs/routing.md "Shared limits across instances
// (Redis)"), with two data-plane workers each (or one inline): a hot key and a token hammered through both at
// ~3× their rate get the configured rate ±10% in total; Redis killed mid-run leaves requests
// answered under local limits, `jumpgate_redis_up` 0 and one log line, and its restart
// brings the shared limits back; a token deactivated through one instance's console is refused
// by the other within a second although its store poll is a minute.

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import t from 'tap';
import { resolveConfig } from '../../src/config/load.js';
import { startGateway, type Gateway } from '../../src/lifecycle/start-gateway.js';
import { silentLogger } from '../../src/log.js';
import { startSim, type SimNode } from '../../src/tools/sim/node.js';
import { eventually } from '../helpers/eventually.js';
import { TOKEN, TOKEN2 } from '../helpers/gateway.js';
import { RedisServer, skipWithoutRedis } from '../helpers/redis.js';

type Test = Parameters<Parameters<typeof t.test>[0]>[0];

const GET_SLOT = '{"jsonrpc":"2.0","id":1,"method":"getSlot"}';
const RATE = 100;
// Half a second of burst: a load generator paused by a loaded machine loses little refill to the cap.
const BURST = 50;
const SECONDS = 4;

interface StartOptions {
  config?: Record<string, unknown>;
  logLines?: string[];
  console?: boolean;
  tokenSyncIntervalMs?: number;
}

async function sim(t: Test): Promise<SimNode> {
  const s = await startSim({ id: 'n0', port: 0 });
  t.teardown(() => s.close());
  return s;
}

async function instance(t: Test, redis: RedisServer, node: SimNode, o: StartOptions = {}): Promise<Gateway> {
  const config = resolveConfig({
    rpc: { host: '127.0.0.1', port: 0, wsPort: 0, workers: 2 },
    console: { port: 0 },
    admin: { port: 0 },
    store: { url: 'sqlite://:memory:' },
    nodes: [{ id: node.id, url: node.url }],
    tokens: [
      { token: TOKEN, stack: 'test' },
      { token: TOKEN2, stack: 'warm-up' },
    ],
    offload: { threads: 0 },
    redis: { url: redis.url, syncMs: 50, keyPrefix: 'it:' },
    log: { level: 'info' },
    ...o.config,
  });
  const lines = o.logLines;
  const log =
    lines === undefined ? silentLogger() : pino({ level: 'info' }, new Writable({ write: (chunk: Buffer, _enc, cb) => (lines.push(chunk.toString()), cb()) }));
  const gw = await startGateway(config, {
    log,
    consoleEphemeral: o.console === true,
    ...(o.tokenSyncIntervalMs === undefined ? {} : { tokenSyncIntervalMs: o.tokenSyncIntervalMs }),
  });
  t.teardown(() => gw.close());
  return gw;
}

interface Tally {
  ok: number;
  limited: number;
  other: number;
  /** From the first call sent to the last. */
  ms: number;
  /** From the last call sent to its answer: on a loaded machine calls queue, and the gateway admits them up to then. */
  drainMs: number;
}

/**
 * Open loop: every 10 ms, `perSecond / 100` calls, spread over `urls` by `share` (fractions of
 * the traffic per URL); at most 100 in flight, so calls queue little on a loaded machine. Counts the answers by status.
 */
async function hammer(urls: string[], share: number[], headers: Record<string, string>, perSecond: number, seconds: number): Promise<Tally> {
  // Connections first (another token, no key): the measured span has no connection setup in it.
  await Promise.all(
    urls.flatMap((u) =>
      Array.from({ length: 20 }, () =>
        fetch(`${u}/api-token/${TOKEN2}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: GET_SLOT }).then((r) => r.arrayBuffer()),
      ),
    ),
  );
  const tally: Tally = { ok: 0, limited: 0, other: 0, ms: 0, drainMs: 0 };
  const inflight = new Set<Promise<void>>();
  const start = performance.now();
  let sent = 0;
  while (performance.now() - start < seconds * 1000) {
    const due = Math.floor(((performance.now() - start) / 1000) * perSecond);
    for (; sent < due && inflight.size < 100; sent++) {
      // Deterministic spread: call i goes to the URL whose share it falls in.
      const x = (sent * 0.618034) % 1;
      let u = 0;
      for (let acc = share[0]!; x >= acc && u < urls.length - 1; acc += share[++u]!);
      const p = fetch(`${urls[u]}/api-token/${TOKEN}`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: GET_SLOT })
        .then(async (r) => {
          await r.arrayBuffer();
          if (r.status === 200) tally.ok++;
          else if (r.status === 429) tally.limited++;
          else tally.other++;
        })
        .catch(() => {
          tally.other++;
        })
        .finally(() => inflight.delete(p));
      inflight.add(p);
    }
    await new Promise((r) => setTimeout(r, 10));
  }
  tally.ms = performance.now() - start;
  await Promise.all(inflight);
  tally.drainMs = performance.now() - start - tally.ms;
  return tally;
}

/** Allowed = burst + rate × the time calls were admitted: at least while they were sent, at most until the last was answered. */
function within10(t: Test, what: string, tally: Tally): void {
  const low = BURST + (RATE * tally.ms) / 1000;
  const high = BURST + (RATE * (tally.ms + tally.drainMs)) / 1000;
  const err = tally.ok < low ? (tally.ok - low) / low : tally.ok > high ? (tally.ok - high) / high : 0;
  const span = high - low < 0.5 ? low.toFixed(0) : `${low.toFixed(0)}-${high.toFixed(0)}`;
  t.ok(
    Math.abs(err) <= 0.1,
    `${what}: ${tally.ok} allowed vs ${span} expected (${(err * 100).toFixed(1)}% off), ${tally.limited} limited, ${tally.other} other`,
  );
  t.equal(tally.other, 0, `${what}: every call answered 200 or 429`);
}

const KEYED = (key: string): Record<string, string> => ({ 'x-service-affinity': 'key', 'x-service-affinity-key': key });

t.test('limits hold across two instances with two workers each', { skip: skipWithoutRedis() }, async (t) => {
  const redis = await RedisServer.start();
  t.teardown(() => redis.kill());
  const node = await sim(t);
  const config = { affinity: { keyRate: RATE, keyBurst: BURST } };
  const a = await instance(t, redis, node, { config });
  const b = await instance(t, redis, node, { config });
  await eventually(
    'both instances synced with Redis once',
    async () => (await a.metrics.text()).includes('jumpgate_redis_up 1') && (await b.metrics.text()).includes('jumpgate_redis_up 1'),
    5000,
  ).catch(() => {});

  t.test('a hot key split 50/50', async (t) => {
    within10(t, 'hot key, 50/50', await hammer([a.url, b.url], [0.5, 0.5], KEYED('hot-5050'), 3 * RATE, SECONDS));
  });
  t.test('a hot key with all its traffic on one instance', async (t) => {
    within10(t, 'hot key, all on A', await hammer([a.url], [1], KEYED('hot-a'), 3 * RATE, SECONDS));
  });
  t.test('a hot key split 80/20', async (t) => {
    within10(t, 'hot key, 80/20', await hammer([a.url, b.url], [0.8, 0.2], KEYED('hot-8020'), 3 * RATE, SECONDS));
    const served = (g: Gateway): number[] => g.dataPlane.requestsByWorker();
    await eventually(
      () => `every worker served (A ${JSON.stringify(served(a))}, B ${JSON.stringify(served(b))})`,
      () => [...served(a), ...served(b)].every((n) => n > 0),
      3000,
    );
    t.pass(`requests per worker: A ${JSON.stringify(served(a))}, B ${JSON.stringify(served(b))}`);
  });
});

t.test('a token rate limit holds across two instances, one of them inline', { skip: skipWithoutRedis() }, async (t) => {
  const redis = await RedisServer.start();
  t.teardown(() => redis.kill());
  const node = await sim(t);
  const config = { rateLimits: { token: { rate: RATE, burst: BURST } } };
  // rpc.workers 0: the control plane's own limiter serves, tallies and is debited.
  const a = await instance(t, redis, node, { config: { ...config, rpc: { host: '127.0.0.1', port: 0, wsPort: 0, workers: 0 } } });
  const b = await instance(t, redis, node, { config });
  within10(t, 'token, 50/50', await hammer([a.url, b.url], [0.5, 0.5], {}, 3 * RATE, SECONDS));
});

t.test('Redis killed mid-run: served under local limits, up 0, logged once; restarted: shared again', { skip: skipWithoutRedis() }, async (t) => {
  const redis = await RedisServer.start();
  t.teardown(() => redis.kill());
  const node = await sim(t);
  const config = { affinity: { keyRate: RATE, keyBurst: BURST } };
  const lines: string[] = [];
  const a = await instance(t, redis, node, { config, logLines: lines });
  const b = await instance(t, redis, node, { config });
  const up = async (g: Gateway): Promise<string> => /^jumpgate_redis_up (\d)/m.exec(await g.metrics.text())?.[1] ?? '?';
  // A first sync marks it up: some traffic with a key.
  await hammer([a.url, b.url], [0.5, 0.5], KEYED('warm'), RATE, 0.5);
  await eventually('both up', async () => (await up(a)) === '1' && (await up(b)) === '1');

  await redis.kill();
  const local = await hammer([a.url, b.url], [0.5, 0.5], KEYED('during'), 3 * RATE, 2);
  const one = BURST + (RATE * local.ms) / 1000;
  t.equal(local.other, 0, `Redis down: every call answered (${local.ok} allowed, ${local.limited} limited)`);
  t.ok(local.ok > 1.5 * one && local.ok < 2.2 * one, `each instance limits on its own: ${local.ok} allowed, one instance's share is ${one.toFixed(0)}`);
  await eventually('jumpgate_redis_up 0 on both', async () => (await up(a)) === '0' && (await up(b)) === '0');
  const failures = Number(/^jumpgate_redis_sync_failures_total (\d+)/m.exec(await a.metrics.text())?.[1] ?? 0);
  t.ok(failures > 0, `failed syncs counted: ${failures}`);
  const downLines = (): number => lines.filter((l) => l.includes('redis unreachable')).length;
  t.equal(downLines(), 1, 'the outage is logged once');

  await redis.restart();
  await eventually(
    'jumpgate_redis_up 1 again on both',
    async () => {
      // Syncs happen only with consumption: keep a trickle going.
      await hammer([a.url, b.url], [0.5, 0.5], KEYED('trickle'), RATE, 0.2);
      return (await up(a)) === '1' && (await up(b)) === '1';
    },
    10_000,
  );
  t.equal(downLines(), 1, 'still one outage line');
  t.equal(lines.filter((l) => l.includes('redis reachable again')).length, 1, 'the recovery is logged once');
  within10(t, 'after the restart, hot key 50/50', await hammer([a.url, b.url], [0.5, 0.5], KEYED('after'), 3 * RATE, SECONDS));
});

/** The console API as a browser uses it: session cookie and CSRF token. */
class ConsoleClient {
  private cookie = '';
  private csrf = '';

  constructor(private readonly base: string) {}

  async send(method: string, path: string, body?: unknown): Promise<{ status: number; json: any }> {
    const headers: Record<string, string> = { cookie: this.cookie, 'x-csrf-token': this.csrf };
    if (body !== undefined) headers['content-type'] = 'application/json';
    const r = await fetch(this.base + path, { method, headers, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
    for (const c of r.headers.getSetCookie()) this.cookie = c.split(';')[0]!;
    const text = await r.text();
    const json = text === '' ? null : JSON.parse(text);
    if (json?.csrfToken !== undefined) this.csrf = json.csrfToken;
    return { status: r.status, json };
  }
}

t.test('token changes on one instance reach the other through Redis, not its poll', { skip: skipWithoutRedis() }, async (t) => {
  const redis = await RedisServer.start();
  t.teardown(() => redis.kill());
  const node = await sim(t);
  const dir = mkdtempSync(join(tmpdir(), 'jg-redis-tokens-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  // One store for both; a poll once a minute, so only the channel can be this fast.
  const config = { store: { url: `sqlite://${join(dir, 'store.db')}` } };
  const a = await instance(t, redis, node, {
    config: { ...config, rpc: { host: '127.0.0.1', port: 0, wsPort: 0, workers: 0 } },
    console: true,
    tokenSyncIntervalMs: 60_000,
  });
  const b = await instance(t, redis, node, { config, tokenSyncIntervalMs: 60_000 });
  await eventually('B subscribed', async () => Number(await redis.numSub('it:tokens')) >= 2, 5000);
  const c = new ConsoleClient(a.console!.url);
  t.equal((await c.send('POST', '/api/v1/register', { email: 'r@example.com', password: 'correct horse battery' })).status, 201);
  const stack = (await c.send('POST', '/api/v1/stacks', { name: 'main' })).json;
  const created = (await c.send('POST', `/api/v1/stacks/${stack.id}/tokens`, { label: 'bot' })).json;
  const token = created.token as string;
  const status = async (): Promise<number> => {
    const r = await fetch(`${b.url}/api-token/${token}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', connection: 'close' },
      body: GET_SLOT,
    });
    await r.arrayBuffer();
    return r.status;
  };
  const seenAfterChange = async (what: string, want: number): Promise<void> => {
    // B polls the store once a minute: answering within this deadline at all shows the change
    // came through Redis (the time is shown, not compared).
    const started = performance.now();
    await eventually(`${what}: B answers ${want}`, async () => (await status()) === want, 20_000, 20);
    t.pass(`${what} on A: B answers ${want} after ${Math.round(performance.now() - started)} ms`);
  };
  await seenAfterChange('created', 200);
  t.equal((await c.send('PATCH', `/api/v1/stacks/${stack.id}/tokens/${created.record.id}`, { active: false })).status, 200);
  await seenAfterChange('deactivated', 403);
  t.equal((await c.send('DELETE', `/api/v1/stacks/${stack.id}/tokens/${created.record.id}`)).status, 204);
  await seenAfterChange('deleted', 401);
});

t.test('a gateway starts and serves with Redis unreachable from the start, and shares once it comes', { skip: skipWithoutRedis() }, async (t) => {
  const node = await sim(t);
  // Started only to reserve its port, then stopped: nothing listens there at the gateway's start.
  const redis = await RedisServer.start();
  t.teardown(() => redis.kill());
  await redis.kill();
  const lines: string[] = [];
  // Started at all with Redis down: a start that waited for Redis would never get past this line.
  const a = await instance(t, redis, node, {
    config: { affinity: { keyRate: RATE, keyBurst: BURST }, rpc: { host: '127.0.0.1', port: 0, wsPort: 0, workers: 0 } },
    logLines: lines,
  });
  const r = await hammer([a.url], [1], KEYED('alone'), RATE, 1);
  t.ok(r.ok > 0 && r.other === 0, `served: ${r.ok} allowed, ${r.limited} limited, ${r.other} other`);
  t.match(await a.metrics.text(), /^jumpgate_redis_up 0/m);
  await eventually('the outage logged', () => lines.some((l) => l.includes('redis unreachable')));
  t.equal(lines.filter((l) => l.includes('redis unreachable')).length, 1, 'once');
  await redis.restart();
  await eventually('subscribed to the token channel once Redis is there', async () => (await redis.numSub('it:tokens')) === 1, 10_000);
  await eventually('jumpgate_redis_up 1', async () => /^jumpgate_redis_up 1/m.test(await a.metrics.text()), 10_000);
  t.pass('shared once Redis came');
});
