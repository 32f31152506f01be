// A reload applies node changes live (docs/configuration.md "Reload"): labels moved from one node
// to another route a label-routed method to the new node at once, a weight change moves traffic,
// and a restart-only change is listed under restartRequired, never dropped; inline and with
// data-plane worker threads (every worker follows before the reload answers).

import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { loadConfig } from '../../src/config/load.js';
import { startGateway, type Gateway } from '../../src/lifecycle/start-gateway.js';
import { silentLogger } from '../../src/log.js';
import { startSim } from '../../src/tools/sim/node.js';
import { TOKEN } from '../helpers/gateway.js';

const ADMIN = 'admin-token-0123456789abcdef';
const BALANCE = '{"jsonrpc":"2.0","id":1,"method":"getBalance","params":["11111111111111111111111111111111"]}';

/** One call on a connection of its own (with workers, it may land on either). */
async function call(gw: Gateway, body = BALANCE): Promise<{ status: number; node: string | null; json: any }> {
  const r = await fetch(`${gw.url}/api-token/${TOKEN}`, { method: 'POST', headers: { 'content-type': 'application/json', connection: 'close' }, body });
  const text = await r.text();
  return { status: r.status, node: r.headers.get('x-service-node'), json: JSON.parse(text) };
}

async function reload(gw: Gateway): Promise<{ status: number; json: any }> {
  const r = await fetch(gw.admin!.url + '/admin/reload', { method: 'POST', headers: { authorization: `Bearer ${ADMIN}` } });
  return { status: r.status, json: await r.json() };
}

for (const workers of [0, 2]) {
  t.test(`reload moves labels, weights and reports every change (rpc.workers ${workers})`, async (t) => {
    const sims = await Promise.all(['a', 'b'].map((id) => startSim({ id, port: 0, synthetic: true })));
    t.teardown(() => Promise.all(sims.map((s) => s.close())));
    const [a, b] = sims as [(typeof sims)[0], (typeof sims)[0]];
    const dir = mkdtempSync(join(tmpdir(), 'jg-reload-nodes-'));
    t.teardown(() => rmSync(dir, { recursive: true, force: true }));
    const file = join(dir, 'jumpgate.yaml');
    const base = [
      `rpc: { port: 0, wsPort: 0, workers: ${workers} }`,
      'console: { port: 0 }',
      "store: { url: 'sqlite://:memory:' }",
      'offload: { threads: 0 }',
      'log: { level: silent }',
      `admin: { port: 0, token: ${ADMIN} }`,
      `tokens: [{ token: ${TOKEN}, stack: t }]`,
      'routing: { methods: { getBalance: { labels: { tier: x }, fallback: none } } }',
    ];
    // The node urls carry a secret in their query: the reload answer never shows it.
    const url = (s: { url: string }): string => `${s.url}/?api-key=SECRET-KEY`;
    const write = (nodes: string[], extra: string[] = []): void => writeFileSync(file, [...base, ...extra, `nodes: [${nodes.join(', ')}]`].join('\n'));
    write([`{ id: a, url: "${url(a)}", labels: { tier: x } }`, `{ id: b, url: "${url(b)}" }`]);
    const gw = await startGateway(loadConfig(file), { log: silentLogger(), configPath: file, adminEphemeral: true });
    t.teardown(() => gw.close());

    for (let i = 0; i < 6; i++) t.equal((await call(gw)).node, 'a', `before: getBalance goes to a, the tier=x node (${i + 1})`);

    // The label moves from a to b.
    write([`{ id: a, url: "${url(a)}" }`, `{ id: b, url: "${url(b)}", labels: { tier: x } }`]);
    const moved = await reload(gw);
    t.equal(moved.status, 200);
    t.same(moved.json.applied, ['nodes.a.labels', 'nodes.b.labels'], 'both label changes are listed as applied');
    t.same(moved.json.restartRequired, []);
    t.same(moved.json.changes, { 'nodes.a.labels': { from: { tier: 'x' }, to: null }, 'nodes.b.labels': { from: null, to: { tier: 'x' } } });
    t.equal(moved.json.changed, true);
    // Right after the answer, on every data plane (fresh connections spread over the workers).
    for (let i = 0; i < 8; i++) {
      const r = await call(gw);
      t.equal(r.status, 200, `after: getBalance answered (${i + 1})`);
      t.equal(r.node, 'b', `after: getBalance goes to b (${i + 1})`);
    }

    // A weight change: a drains through its weight, every call goes to b.
    write([`{ id: a, url: "${url(a)}", weight: 0 }`, `{ id: b, url: "${url(b)}", labels: { tier: x } }`]);
    const weighed = await reload(gw);
    t.same(weighed.json.applied, ['nodes.a.weight']);
    t.same(weighed.json.changes, { 'nodes.a.weight': { from: 1, to: 0 } });
    t.same(weighed.json.nodes.weights, { a: { from: 1, to: 0 } });
    const GET_SLOT = '{"jsonrpc":"2.0","id":2,"method":"getSlot"}';
    for (let i = 0; i < 8; i++) t.equal((await call(gw, GET_SLOT)).node, 'b', `weight 0: getSlot goes to b (${i + 1})`);

    // A restart-only change is listed, not dropped, and left as it runs; a url change with a
    // secret in it shows no secret.
    write([`{ id: a, url: "${a.url}/?api-key=OTHER-KEY", weight: 0 }`, `{ id: b, url: "${url(b)}", labels: { tier: x } }`], ['ws: { maxMessageBytes: 4096 }']);
    const restart = await reload(gw);
    t.equal(restart.status, 200);
    t.same(restart.json.restartRequired, ['ws.maxMessageBytes']);
    t.same(restart.json.applied, ['nodes.a.url']);
    t.same(restart.json.changes['ws.maxMessageBytes'], { from: 65536, to: 4096 });
    t.same(restart.json.nodes.replaced, ['a']);
    t.notMatch(JSON.stringify(restart.json), /SECRET-KEY|OTHER-KEY/, 'no secret of a node url in the answer');
    t.notMatch(JSON.stringify(moved.json), /SECRET-KEY|admin-token/, 'none in the first answer either');
    t.equal(gw.config.ws.maxMessageBytes, 65536, 'the running config keeps what needs a restart');
    // The same file again: the restart-only change is still pending, nothing else.
    const again = await reload(gw);
    t.same(again.json.applied, []);
    t.same(again.json.restartRequired, ['ws.maxMessageBytes']);
  });
}
