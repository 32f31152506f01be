// The simulator's tail-latency knob (docs/cli.md "CLI", `jumpgate sim`): slowRate of RPC calls (of
// any method or of slowMethods) answered slowMs late; health probes never; settable at start,
// through POST /sim/control and from the CLI, with errors that name the knob.

import t from 'tap';
import { parseSimArgs } from '../../src/cli/sim.js';
import { startSim } from '../../src/tools/sim/node.js';

async function timedPost(url: string, body: string, headers: Record<string, string> = {}): Promise<{ ms: number; status: number; text: string }> {
  const t0 = performance.now();
  // A call slowed by 60 s (the largest slowMs) is given up after 30 s.
  const r = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body, signal: AbortSignal.timeout(30_000) });
  const text = await r.text();
  return { ms: performance.now() - t0, status: r.status, text };
}

const rpc = (method: string) =>
  `{"jsonrpc":"2.0","id":1,"method":"${method}"${method === 'getBalance' ? ',"params":["11111111111111111111111111111111"]' : ''}}`;

t.test('slowRate 1: every call is slowMs late, except health probes', async (t) => {
  const node = await startSim({ id: 's', port: 0, slowRate: 1, slowMs: 250 });
  t.teardown(() => node.close());
  const slow = await timedPost(node.url, rpc('getBalance'));
  t.equal(slow.status, 200);
  t.ok(slow.ms >= 240, `getBalance took ${slow.ms.toFixed(0)} ms`);
  t.match(slow.text, /"result"/);
});

t.test('health probes are never slowed', async (t) => {
  // slowMs at its largest, twice the calls' own 30 s timeout: a slowed probe would never answer
  // in time, so an answer at all shows it was not slowed (no limit on how fast it was).
  const node = await startSim({ id: 's', port: 0, slowRate: 1, slowMs: 60_000 });
  t.teardown(() => node.close());
  const health = await timedPost(node.url, rpc('getHealth'));
  t.equal(health.status, 200, `getHealth answered (${health.ms.toFixed(0)} ms)`);
  const probe = await timedPost(node.url, rpc('getSlot'), { 'user-agent': 'jumpgate-health' });
  t.equal(probe.status, 200, `the gateway's probe answered (${probe.ms.toFixed(0)} ms)`);
  t.match(probe.text, /"result":\d+/);
});

t.test('slowMethods: only the listed methods; a fraction of them', async (t) => {
  const node = await startSim({ id: 's', port: 0 });
  t.teardown(() => node.close());
  // A slowed call cannot answer before slowMs; 3 s is far above what an unslowed call takes even
  // on a loaded machine, so the split below reads the knob, not the machine's speed.
  const SLOW = 3000;
  const res = await fetch(node.url + '/sim/control', { method: 'POST', body: JSON.stringify({ slowRate: 0.5, slowMs: SLOW, slowMethods: ['getBalance'] }) });
  t.equal(res.status, 200);
  t.match(JSON.parse(await res.text()), { slowRate: 0.5, slowMs: SLOW, slowMethods: ['getBalance'] });
  const other = await Promise.all(Array.from({ length: 10 }, () => timedPost(node.url, rpc('getIdentity'))));
  t.ok(
    other.every((r) => r.status === 200 && r.ms < SLOW),
    'unlisted methods are never slowed',
  );
  const listed = await Promise.all(Array.from({ length: 40 }, () => timedPost(node.url, rpc('getBalance'))));
  t.ok(
    listed.every((r) => r.status === 200),
    'slowed, never stalled: every call answered',
  );
  const slowed = listed.filter((r) => r.ms >= SLOW).length;
  t.ok(slowed >= 5 && slowed <= 35, `about half slowed: ${slowed} of 40`);
});

t.test('bad values are refused, naming the knob', async (t) => {
  const node = await startSim({ id: 's', port: 0 });
  t.teardown(() => node.close());
  for (const [knobs, msg] of [
    [{ slowRate: 2 }, /slowRate must be a number from 0 to 1/],
    [{ slowMs: -1 }, /slowMs must be an integer >= 0/],
    [{ slowMs: 3_600_000 }, /slowMs must be at most 60000/],
    [{ slowMethods: 'getBalance' }, /slowMethods must be a list of method names/],
  ] as const) {
    const r = await fetch(node.url + '/sim/control', { method: 'POST', body: JSON.stringify(knobs) });
    t.equal(r.status, 400);
    t.match(await r.text(), msg);
  }
  t.throws(() => node.set({ slowRate: -0.1 }), /slowRate/);
});

t.test('CLI flags', async (t) => {
  const cfg = parseSimArgs(['--port', '0', '--slow-rate', '0.05', '--slow-ms', '200', '--slow-methods', 'getBalance, getAccountInfo']);
  t.same(cfg.knobs, { slowRate: 0.05, slowMs: 200, slowMethods: ['getBalance', 'getAccountInfo'] });
  t.throws(() => parseSimArgs(['--port', '0', '--slow-ms', '99999999']), /--slow-ms must be an integer from 0 to 60000/);
});
