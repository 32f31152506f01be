// The simulator's tail-latency knob (README "CLI", `jumpgate sim`): slowRate of RPC calls (of
// any method or of slowMethods) answered slowMs late; health probes never; settable at start,
// through POST /sim/control and from the CLI, with errors that name the knob.

import t from 'tap';
import { parseSimArgs } from '../../src/cli/sim.js';
import { startSim } from '../../src/tools/sim/node.js';

async function timedPost(url: string, body: string, headers: Record<string, string> = {}): Promise<{ ms: number; status: number; text: string }> {
  const t0 = performance.now();
  const r = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body });
  const text = await r.text();
  return { ms: performance.now() - t0, status: r.status, text };
}

const rpc = (method: string) => `{"jsonrpc":"2.0","id":1,"method":"${method}"${method === 'getBalance' ? ',"params":["11111111111111111111111111111111"]' : ''}}`;

t.test('slowRate 1: every call is slowMs late, except health probes', async (t) => {
  const node = await startSim({ id: 's', port: 0, slowRate: 1, slowMs: 250 });
  t.teardown(() => node.close());
  const slow = await timedPost(node.url, rpc('getBalance'));
  t.equal(slow.status, 200);
  t.ok(slow.ms >= 240, `getBalance took ${slow.ms.toFixed(0)} ms`);
  t.match(slow.text, /"result"/);
  const health = await timedPost(node.url, rpc('getHealth'));
  t.ok(health.ms < 200, `getHealth is never slowed: ${health.ms.toFixed(0)} ms`);
  const probe = await timedPost(node.url, rpc('getSlot'), { 'user-agent': 'jumpgate-health' });
  t.ok(probe.ms < 200, `the gateway's probe is never slowed: ${probe.ms.toFixed(0)} ms`);
});

t.test('slowMethods: only the listed methods; a fraction of them', async (t) => {
  const node = await startSim({ id: 's', port: 0 });
  t.teardown(() => node.close());
  const res = await fetch(node.url + '/sim/control', { method: 'POST', body: JSON.stringify({ slowRate: 0.5, slowMs: 150, slowMethods: ['getBalance'] }) });
  t.equal(res.status, 200);
  t.match(JSON.parse(await res.text()), { slowRate: 0.5, slowMs: 150, slowMethods: ['getBalance'] });
  const other = await Promise.all(Array.from({ length: 10 }, () => timedPost(node.url, rpc('getIdentity'))));
  t.ok(
    other.every((r) => r.ms < 140),
    'unlisted methods are answered at once',
  );
  const listed = await Promise.all(Array.from({ length: 40 }, () => timedPost(node.url, rpc('getBalance'))));
  const slowed = listed.filter((r) => r.ms >= 140).length;
  t.ok(slowed >= 5 && slowed <= 35, `about half slowed: ${slowed} of 40`);
  t.ok(
    listed.every((r) => r.ms < 1000),
    'slowed, never stalled',
  );
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
