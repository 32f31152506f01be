// Two gateway instances on one PostgreSQL store (docs/landing.md "Several instances"): each
// instance's landing figures are fed as its data plane would feed them, both flush at the same
// time, and the console (of either instance) answers the sum per token and per node, while each
// admin API still shows its own instance's figures. Skipped, with the reason, without PostgreSQL.

import t from 'tap';
import { resolveConfig } from '../../src/config/load.js';
import { emptyCounts, type LandingCounts } from '../../src/landing/counts.js';
import { startGateway, type Gateway } from '../../src/lifecycle/start-gateway.js';
import { silentLogger } from '../../src/log.js';
import { startSim } from '../../src/tools/sim/node.js';
import { ConsoleClient } from '../helpers/console-client.js';
import { postgresSkipReason, startPostgres } from '../helpers/postgres.js';

const ADMIN = 'landing-instances-admin-0123456789';

function counts(sent: number, landed: number, expired: number, slot: number): LandingCounts {
  const c = emptyCounts();
  Object.assign(c, { sent, landed, expired });
  c.slots[slot] = landed;
  return c;
}

t.test('two instances on one PostgreSQL: the console shows the sum', { skip: postgresSkipReason(), timeout: 60_000 }, async (t) => {
  const pg = await startPostgres();
  t.teardown(() => pg.stop());
  const url = await pg.createDatabase('landing');
  const sims = await Promise.all(['n0', 'n1'].map((id) => startSim({ id, port: 0, synthetic: true })));
  t.teardown(() => Promise.all(sims.map((s) => s.close())));
  const start = async (workers: number): Promise<Gateway> => {
    const config = resolveConfig({
      rpc: { host: '127.0.0.1', port: 0, wsPort: 0, workers },
      console: { port: 0 },
      admin: { port: 0, token: ADMIN },
      store: { url },
      nodes: sims.map((s) => ({ id: s.id, url: s.url })),
      offload: { threads: 0 },
      health: { chainWatch: false },
      log: { level: 'silent' },
    });
    const gw = await startGateway(config, { log: silentLogger(), consoleEphemeral: true, adminEphemeral: true });
    t.teardown(() => gw.close());
    return gw;
  };
  // One inline, one with a data-plane worker: the figures live on the control plane either way.
  const [a, b] = [await start(0), await start(1)];

  const client = new ConsoleClient(a.console!.url);
  const { stack, tokenId } = await client.stackWithToken('ops@example.com', 'main', 'bot');

  // Rounds of reports on both instances, flushed at the same time: writers on the same rows.
  for (let round = 0; round < 5; round++) {
    a.landing.add({
      nodes: { n0: counts(3, 2, 1, 1), n1: counts(1, 1, 0, 4) },
      tokens: { [tokenId]: counts(4, 3, 1, 1) },
      tokenNodes: { [tokenId]: { n0: counts(3, 2, 1, 1), n1: counts(1, 1, 0, 4) } },
    });
    b.landing.add({ nodes: { n0: counts(2, 2, 0, 3) }, tokens: { [tokenId]: counts(2, 2, 0, 3) }, tokenNodes: { [tokenId]: { n0: counts(2, 2, 0, 3) } } });
    await Promise.all([a.landingFlush!.flush(), b.landingFlush!.flush()]);
  }

  for (const gw of [a, b]) {
    const c = gw === a ? client : new ConsoleClient(gw.console!.url);
    if (gw === b) await c.send('POST', '/api/v1/login', { email: 'ops@example.com', password: 'correct horse battery' });
    const panel = await c.get(`/api/v1/stacks/${stack}/landing`);
    t.equal(panel.status, 200);
    // 5 × (4 + 2) sent, 5 × (3 + 2) landed, 5 expired: 25 / 30 ended landed.
    t.match(panel.json.tokens, [{ tokenId, sent: 30, landed: 25, expired: 5, landedPct: 83.3, slotsToLand: { p50: 1, p90: 3 } }], 'per token: the sum');
    const nodes = await c.get(`/api/v1/stacks/${stack}/landing/nodes`);
    t.match(
      nodes.json.nodes,
      [
        { node: 'n0', sent: 25, landed: 20, expired: 5, landedPct: 80 },
        { node: 'n1', sent: 5, landed: 5, landedPct: 100, slotsToLand: { p50: 4 } },
      ],
      'per node: the sum',
    );
  }

  const own = async (gw: Gateway): Promise<{ nodes: Record<string, { sent: number }> }> =>
    (await fetch(gw.admin!.url + '/admin/landing', { headers: { authorization: `Bearer ${ADMIN}` } })).json() as Promise<{
      nodes: Record<string, { sent: number }>;
    }>;
  t.equal((await own(a)).nodes.n0!.sent, 15, "instance a's admin API: its own figures");
  t.equal((await own(b)).nodes.n0!.sent, 10, "instance b's admin API: its own figures");
});
