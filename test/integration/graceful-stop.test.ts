// The stop sequence behind a balancer (docs/instances.md "Running several instances"), on a real process:
// SIGTERM turns /readyz to 503 at once while calls on new connections are still served for
// shutdown.readyDelayMs; then the port refuses, calls in flight to a slow node finish, the
// usage is written and the exit code is 0. SIGINT skips the wait; a second signal stops now.

import t from 'tap';
import { openStore } from '../../src/store/open.js';
import { startSim } from '../../src/tools/sim/node.js';
import { eventually } from '../helpers/eventually.js';
import { GET_SLOT, postOnce, refuses, startInstance, type Instance } from '../helpers/instances.js';
import { seedStore } from '../helpers/seeded-store.js';

type Test = Parameters<Parameters<typeof t.test>[0]>[0];

const ADMIN_TOKEN = 'graceful-admin-token-0123456789';

async function readyz(i: Instance): Promise<number> {
  return (await fetch(`${i.adminUrl}/readyz`)).status;
}

async function setup(t: Test, readyDelayMs: number) {
  const sim = await startSim({ id: 'n', port: 0 });
  t.teardown(() => sim.close());
  const { dir, dbUrl, account, stack, token, record } = await seedStore('jg-graceful-');
  const gw = await startInstance({
    dir,
    name: 'jumpgate',
    adminToken: ADMIN_TOKEN,
    config: {
      rpc: { port: 0, wsPort: 0, workers: 1 },
      console: { port: 0 },
      offload: { threads: 0 },
      store: { url: dbUrl },
      // Probes must not time out while the node is made slow on purpose.
      health: { timeoutMs: 10_000 },
      nodes: [{ id: 'n', url: sim.url }],
      // The slow calls leave together; pipelined on one connection, the simulated node (uWS)
      // would drop it (test/integration/pipelining.test.ts covers that, not this file).
      upstream: { pipelining: 1 },
      shutdown: { readyDelayMs },
    },
  });
  t.teardown(() => gw.proc.child.kill('SIGKILL'));
  await eventually('/readyz 200', async () => (await readyz(gw)) === 200, 10_000);
  // Health probes send getSlot too, one per getHealth.
  const clientCalls = (): number => (sim.stats.byMethod.get('getSlot') ?? 0) - (sim.stats.byMethod.get('getHealth') ?? 0);
  const storedCalls = async (): Promise<number | undefined> => {
    const s = await openStore(dbUrl);
    try {
      return (await s.analytics(account.id, stack.id, '1h', Date.now(), record.id)).methods.find((m) => m.method === 'getSlot')?.calls;
    } finally {
      await s.close();
    }
  };
  return { sim, gw, token, clientCalls, storedCalls };
}

t.test('SIGTERM: 503 at once, served through the delay, then refused; in-flight calls finish; usage written; exit 0', async (t) => {
  const delayMs = 1500;
  const { sim, gw, token, clientCalls, storedCalls } = await setup(t, delayMs);
  const url = gw.rpcUrl(token);
  // Calls to a node that takes 3 s: still in flight when the delay ends.
  sim.set({ latencyMs: [3000, 3000] });
  const slow = Array.from({ length: 10 }, () => postOnce(url, GET_SLOT));
  await eventually('the 10 slow calls to reach the node', () => clientCalls() >= 10);
  sim.set({ latencyMs: [0, 0] });

  const sentAt = performance.now();
  gw.proc.child.kill('SIGTERM');
  await eventually('/readyz 503', async () => (await readyz(gw)) === 503, 2000, 5);
  const notReadyMs = performance.now() - sentAt;
  // "At once" is an ordering: 503 while the instance still serves new connections (checked
  // just below, within the delay), not a limit on how fast this machine is.
  t.equal(gw.proc.child.exitCode, null, `/readyz answered 503 ${notReadyMs.toFixed(0)} ms after SIGTERM, while the instance still runs`);

  // During the delay: new connections are accepted and served; answers ask to close the connection.
  let during = 0;
  const statuses = new Map<string, number>();
  // Paced and bounded: each call is a new connection, left in TIME_WAIT for a minute.
  while (performance.now() - sentAt < delayMs - 400 && during < 40) {
    const r = await postOnce(url, GET_SLOT, { connection: 'keep-alive' });
    const k = `${r.status} connection: ${String(r.headers.connection)}`;
    statuses.set(k, (statuses.get(k) ?? 0) + 1);
    during++;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  // Each answer closes its connection: a keep-alive client reconnects, through the balancer.
  t.same([...statuses], [['200 connection: close', during]], 'every call on a new connection served during the delay, with Connection: close');
  t.ok(during >= 5, `${during} calls on new connections served during the delay`);
  t.equal(gw.proc.child.exitCode, null, 'still running');

  // After the delay the port refuses while the slow calls are still in flight.
  await eventually('the RPC port to refuse connections', () => refuses(gw.port), 3000, 10);
  const refusedMs = performance.now() - sentAt;
  t.ok(refusedMs >= delayMs - 50, `refused ${refusedMs.toFixed(0)} ms after SIGTERM, not before the ${delayMs} ms delay`);
  t.equal(gw.proc.child.exitCode, null, 'still draining the slow calls');

  const answers = await Promise.all(slow);
  for (const a of answers) if (a.status !== 200) t.comment(a.body);
  t.same(
    answers.map((a) => a.status),
    Array(10).fill(200),
    'every call in flight answered',
  );
  t.equal(await gw.proc.exited, 0, 'exit code 0');
  t.equal(await storedCalls(), 10 + during, 'every call counted in the store');
  t.match(gw.proc.out(), /"readyDelayMs":1500/, 'the stop is logged with its delay');
});

t.test('SIGINT skips the delay; a second signal stops at once with exit code 1, usage written', async (t) => {
  const { gw } = await setup(t, 20_000);
  // What the instance logs says which delay it took; a timer 4 times shorter than the configured
  // delay, on this side, must not fire first either (ordering, not a limit on speed).
  const later = new Promise<'later'>((resolve) => setTimeout(() => resolve('later'), 5000).unref());
  gw.proc.child.kill('SIGINT');
  t.equal(await Promise.race([gw.proc.exited, later]), 0, 'exit code 0, before the 20 s delay could have passed');
  t.match(gw.proc.out(), /"signal":"SIGINT","msg":"stopping"/, 'SIGINT: the stop is logged');
  t.notMatch(gw.proc.out(), /still serving until the balancer/, 'without the delay');

  const { gw: gw2, token, storedCalls } = await setup(t, 20_000);
  for (let i = 0; i < 7; i++) t.equal((await postOnce(gw2.rpcUrl(token), GET_SLOT)).status, 200);
  gw2.proc.child.kill('SIGTERM');
  await eventually('/readyz 503', async () => (await readyz(gw2)) === 503);
  t.equal(await postOnce(gw2.rpcUrl('unknown-token-0000000000'), GET_SLOT).then((r) => r.status), 401, 'still answering during the delay');
  // Ordering against a timer a quarter of the 20 s delay: the second signal does not wait it out.
  const later2 = new Promise<'later'>((resolve) => setTimeout(() => resolve('later'), 5000).unref());
  gw2.proc.child.kill('SIGTERM');
  t.equal(await Promise.race([gw2.proc.exited, later2]), 1, 'second signal: exit code 1, without waiting out the delay');
  t.match(gw2.proc.out(), /second signal: stopping now/);
  t.equal(await storedCalls(), 7, 'the usage counted so far is still written');
});
