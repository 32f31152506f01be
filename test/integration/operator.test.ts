// The operator's promise: with a load running, one CLI command changes a node's weight, the
// shift shows in `jumpgate nodes` within 5 seconds, and no request fails.

import t from 'tap';
import { startHarness } from '../helpers/gateway.js';
import { runCli } from '../helpers/cli.js';
import { eventually, eventuallyValue } from '../helpers/eventually.js';

const ADMIN = 'operator-admin-token-0123';

interface Row {
  id: string;
  rps: number;
}

t.test('set-weight during a load: traffic shifts within 5 s, nothing fails', async (t) => {
  const h = await startHarness({ sims: [{}, {}], admin: true, config: { admin: { token: ADMIN } } });
  t.teardown(() => h.close());
  const base = ['--admin', `http://127.0.0.1:${h.gw.admin!.port}`, '--token', ADMIN];
  const nodes = async (): Promise<Map<string, number>> => {
    const p = runCli(['nodes', '--json', ...base]);
    await p.exited;
    return new Map((JSON.parse(p.out()) as Row[]).map((r) => [r.id, r.rps]));
  };

  let stop = false;
  let ok = 0;
  let failed = 0;
  const worker = async (): Promise<void> => {
    while (!stop) {
      const r = await h.post('{"jsonrpc":"2.0","id":1,"method":"getSlot"}');
      if (r.status === 200 && typeof (JSON.parse(r.text) as { result?: unknown }).result === 'number') ok++;
      else failed++;
    }
  };
  const load = Promise.all(Array.from({ length: 8 }, worker));
  t.teardown(() => {
    stop = true;
  });

  // Wait for both nodes to show a rate. The view's rate runs from the pool's first
  // once-a-second sample, so a reading just after it spans a moment, not a rate: the second
  // reading in a row spans at least one CLI round trip.
  let serving = 0;
  const before = await eventuallyValue(
    'both nodes to show a rate twice in a row',
    async () => {
      const now = await nodes();
      serving = now.get('n0')! > 0 && now.get('n1')! > 0 ? serving + 1 : 0;
      return serving >= 2 ? now : undefined;
    },
    10_000,
    0,
  );
  t.ok(before.get('n0')! > 0 && before.get('n1')! > 0, `both nodes serve before (${[...before]})`);
  const set = runCli(['nodes', 'set-weight', 'n0', '0', ...base]);
  t.equal(await set.exited, 0, set.out());
  const shifted = await eventually(
    'jumpgate nodes to show the traffic moving off n0',
    async () => {
      const now = await nodes();
      return now.get('n0')! < before.get('n0')! / 2 && now.get('n1')! > before.get('n1')!;
    },
    5000,
    250,
  ).then(
    () => true,
    () => false,
  );
  t.ok(shifted, 'jumpgate nodes shows the traffic moving off n0 within 5 s');
  stop = true;
  await load;
  t.ok(ok > 500, `${ok} requests answered during the test`);
  t.equal(failed, 0, 'no request failed');
});
