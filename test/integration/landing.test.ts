// Landing figures on the control plane (docs/landing.md), inline and with a data-plane worker:
// what the figures are fed shows on GET /admin/landing (authenticated) and /metrics, reaches
// the store through the landing flush, and the console answers it per token of a stack and per
// node, an account's own transactions only (JSON routes; the pages carry the panel and the
// table). A stop writes what was left.

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { resolveConfig } from '../../src/config/load.js';
import { emptyCounts, type LandingCounts } from '../../src/landing/counts.js';
import { startGateway } from '../../src/lifecycle/start-gateway.js';
import { silentLogger } from '../../src/log.js';
import { openStore } from '../../src/store/open.js';
import { startSim } from '../../src/tools/sim/node.js';
import { ConsoleClient } from '../helpers/console-client.js';
import { eventually } from '../helpers/eventually.js';
import { PLANES, startHarness } from '../helpers/gateway.js';

const ADMIN = 'landing-admin-token-0123456789';

function counts(sent: number, landed: number, failed: number, expired: number, slots: Record<number, number>): LandingCounts {
  const c = emptyCounts();
  Object.assign(c, { sent, landed, failed, expired, resent: 1 });
  for (const [s, n] of Object.entries(slots)) c.slots[Number(s)] = n;
  return c;
}

for (const plane of PLANES) {
  t.test(`${plane.name}: admin route, /metrics, store and console`, async (t) => {
    const h = await startHarness({ workers: plane.workers, admin: true, console: true, sims: [{}, {}], config: { admin: { token: ADMIN } } });
    t.teardown(() => h.close());
    const gw = h.gw;
    const admin = async (path: string, token: string | null = ADMIN) => {
      const r = await fetch(gw.admin!.url + path, { headers: token === null ? {} : { authorization: `Bearer ${token}` } });
      return { status: r.status, text: await r.text() };
    };

    const c = new ConsoleClient(gw.console!.url);
    const { stack, tokenId } = await c.stackWithToken('lander@example.com', 'main', 'bot');
    // Another account's token: never in this stack's panel.
    const otherClient = new ConsoleClient(gw.console!.url);
    const other = { client: otherClient, ...(await otherClient.stackWithToken('other@example.com', 'theirs', 'x')) };

    gw.landing.add({
      nodes: { n0: counts(10, 6, 1, 1, { 1: 3, 2: 2, 9: 1 }), n1: counts(4, 4, 0, 0, { 0: 4 }) },
      tokens: { [tokenId]: counts(14, 10, 1, 1, { 0: 4, 1: 3, 2: 2, 9: 1 }), [other.tokenId]: counts(1, 0, 0, 1, {}) },
      tokenNodes: {
        [tokenId]: { n0: counts(10, 6, 1, 1, { 1: 3, 2: 2, 9: 1 }), n1: counts(4, 4, 0, 0, { 0: 4 }) },
        [other.tokenId]: { n0: counts(1, 0, 0, 1, {}) },
      },
    });
    gw.landing.add({
      rank: { n0: { inTime: 20, late: 0, slots: 20 }, n1: { inTime: 2, late: 1, slots: 2 } },
      nodes: { n0: counts(2, 0, 0, 0, {}) },
      tokens: { [tokenId]: counts(2, 0, 0, 0, {}) },
      tokenNodes: { [tokenId]: { n0: counts(2, 0, 0, 0, {}) } },
    });

    t.equal((await admin('/admin/landing', null)).status, 401, 'the admin route needs the admin token');
    t.match((await admin('/admin/nope')).text, /GET \/admin\/landing/, 'the 404 names the route');
    const a = await admin('/admin/landing');
    t.equal(a.status, 200);
    const view = JSON.parse(a.text);
    t.same(view.nodes.n0, { sent: 12, landed: 6, expired: 1, failed: 1, untracked: 0, resent: 2, landedPct: 75, slotsToLand: { p50: 1, p90: 9 } });
    t.same(view.nodes.n1.slotsToLand, { p50: 0, p90: 0 });
    t.equal(view.tokens[tokenId].sent, 16);
    t.equal(view.tokens[tokenId].landedPct, 83.3);

    const metrics = (await admin('/metrics')).text;
    t.match(metrics, /jumpgate_landing_transactions_total\{node="n0",outcome="sent"\} 12/);
    t.match(metrics, /jumpgate_landing_slots_to_land_bucket\{node="n0",le="2"\} 5/);

    await gw.landingFlush!.flush();
    const nodes = await gw.store!.landingByNode(Date.now() - 3_600_000);
    t.same(
      nodes.map((n) => [n.key, n.sent, n.landed]),
      [
        ['n0', 12, 6],
        ['n1', 4, 4],
      ],
      'flushed to the store',
    );

    const panel = await c.get(`/api/v1/stacks/${stack}/landing`);
    t.equal(panel.status, 200);
    t.equal(panel.json.tokens.length, 1, "only the stack's own tokens");
    t.match(panel.json.tokens[0], { tokenId, label: 'bot', sent: 16, landed: 10, landedPct: 83.3, slotsToLand: { p50: 1, p90: 2 } });
    t.ok(panel.json.to - panel.json.from > 24 * 3_600_000 - 1 && panel.json.from % 3_600_000 === 0, 'the last 24 h, from the start of an hour');
    // Per node: this account's transactions only (the other's expired one on n0 is not in it).
    for (const path of [`/api/v1/stacks/${stack}/landing/nodes`, '/api/v1/landing/nodes']) {
      const byNode = await c.get(path);
      t.equal(byNode.status, 200);
      t.same(
        byNode.json.nodes.map((n: { node: string; sent: number; landedPct: number; slotsToLand: { p50: number } }) => [
          n.node,
          n.sent,
          n.landedPct,
          n.slotsToLand.p50,
        ]),
        [
          ['n0', 12, 75, 1],
          ['n1', 4, 100, 0],
        ],
        path,
      );
    }
    // Where each node ranks for sends: node-wide, the same for every account, with no counts.
    const ranking = (await c.get('/api/v1/landing/nodes')).json.ranking;
    t.match(ranking.n0, { position: 1, includedPct: 100, meanSlots: 1, reason: /in a block within 20 slots/ });
    t.match(ranking.n1, { position: null, reason: /exploring/ });
    t.notOk('samples' in ranking.n0, "no count of anyone's sends");
    t.match(JSON.parse(a.text).ranking, { n0: { position: 1, samples: 20 } }, 'the admin API has the samples');
    const theirs = await other.client.get('/api/v1/landing/nodes');
    t.match(theirs.json.nodes, [{ node: 'n0', sent: 1, expired: 1, landed: 0 }], "the other account's own, on its node");
    t.equal(theirs.json.nodes.length, 1);
    t.equal((await c.get(`/api/v1/stacks/${other.stack}/landing/nodes`)).status, 404, "another account's stack");
    t.equal((await c.get(`/api/v1/stacks/${other.stack}/landing`)).status, 404, "another account's stack");
    const anonymous = new ConsoleClient(gw.console!.url);
    t.equal((await anonymous.get(`/api/v1/stacks/${stack}/landing`)).status, 401);
    t.equal((await anonymous.get('/api/v1/landing/nodes')).status, 401);
    t.match((await c.get(`/stacks/${stack}`)).text, /id="landing-table"/, 'the overview carries the Transactions panel');
    t.match((await c.get(`/stacks/${stack}/nodes`)).text, /id="nodes-landing-table"/, 'the nodes page carries the landing table');
    const doc = await c.get('/api/v1/openapi.json');
    for (const path of ['/api/v1/stacks/{id}/landing', '/api/v1/stacks/{id}/landing/nodes', '/api/v1/landing/nodes'])
      t.ok(doc.json.paths[path], `${path} in the OpenAPI document`);
  });
}

t.test('a stop writes the landing rows still pending', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'jg-landing-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const url = `sqlite://${join(dir, 'jg.db')}`;
  const sim = await startSim({ id: 'n0', port: 0, synthetic: true });
  t.teardown(() => sim.close());
  const config = resolveConfig({
    rpc: { host: '127.0.0.1', port: 0, wsPort: 0, workers: 0 },
    console: { port: 0 },
    admin: { port: 0 },
    store: { url },
    nodes: [{ id: 'n0', url: sim.url }],
    offload: { threads: 0 },
    health: { chainWatch: false },
    log: { level: 'silent' },
  });
  const gw = await startGateway(config, { log: silentLogger() });
  gw.landing.add({ nodes: { n0: counts(3, 2, 1, 0, { 4: 3 }) }, tokens: {} });
  await gw.drain(1000);
  const store = await openStore(url);
  t.teardown(() => store.close());
  await eventually('the rows in the store', async () => (await store.landingByNode(0)).length === 1);
  const [n0] = await store.landingByNode(0);
  t.same([n0!.sent, n0!.landed, n0!.failed, n0!.slots[4]], [3, 2, 1, 3]);
});
