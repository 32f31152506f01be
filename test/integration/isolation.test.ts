// The control plane never delays a request (README "Architecture"): with the data plane in a
// worker thread, a console query that holds the control plane's event loop for a second (as a
// slow synchronous SQLite query does) leaves RPC answers on time. The client runs in a child
// process, so the blocked loop is only the gateway's control plane.

import { spawn } from 'node:child_process';
import t from 'tap';
import { runCli } from '../helpers/cli.js';
import { startHarness, TOKEN } from '../helpers/gateway.js';

/** Calls getSlot back to back for `ms` and prints each call's latency (ms) as one JSON array. */
const CLIENT = `
const [url, ms] = process.argv.slice(1);
const out = [];
const end = Date.now() + Number(ms);
while (Date.now() < end) {
  const t0 = performance.now();
  const r = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"jsonrpc":"2.0","id":1,"method":"getSlot"}' });
  await r.text();
  out.push([r.status, performance.now() - t0]);
}
console.log(JSON.stringify(out));
`;

function runClient(url: string, ms: number): Promise<[number, number][]> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--input-type=module', '-e', CLIENT, url, String(ms)], { stdio: ['ignore', 'pipe', 'inherit'] });
    let text = '';
    child.stdout.on('data', (d: Buffer) => (text += d.toString()));
    child.on('error', reject);
    child.on('exit', () => {
      try {
        resolve(JSON.parse(text) as [number, number][]);
      } catch (err) {
        reject(err as Error);
      }
    });
  });
}

t.test('a control plane busy for 1 s does not delay RPC answers served by a worker', async (t) => {
  // The node runs in a process of its own too: a simulated node on the test's thread would be
  // blocked along with the control plane.
  const sim = runCli(['sim', '--port', '0', '--id', 'far']);
  t.teardown(() => sim.child.kill('SIGKILL'));
  const [, simUrl] = await sim.waitFor(/listening on (http:\/\/\S+)/);
  const h = await startHarness({ sims: [], extraNodes: [{ id: 'far', url: simUrl! }], config: { rpc: { workers: 1 }, health: { intervalMs: 60_000 } } });
  t.teardown(() => h.close());
  const url = `${h.url}/api-token/${TOKEN}`;
  const calls = runClient(url, 2500);
  // Let the client start and warm up, then hold the control plane's loop for a second.
  await new Promise((r) => setTimeout(r, 700));
  const blockedFrom = Date.now();
  while (Date.now() - blockedFrom < 1000) {
    // a console query that takes a second
  }
  const results = await calls;
  t.ok(results.length > 20, `${results.length} calls in 2.5 s`);
  t.ok(
    results.every(([status]) => status === 200),
    'every call answered 200',
  );
  const worst = Math.max(...results.map(([, ms]) => ms));
  t.ok(worst < 250, `slowest call ${worst.toFixed(1)} ms while the control plane was blocked for 1000 ms`);
});
