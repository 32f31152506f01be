// A reload keeps every limit's state (docs/routing.md "Affinity and rate limits"): a token at its rate
// limit stays limited after a config reload, with the inline data plane and with worker threads
// (whose buckets live in shared memory the control plane hands over again): inline, the
// shipped default of one worker, and two.

import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { loadConfig } from '../../src/config/load.js';
import { startGateway } from '../../src/lifecycle/start-gateway.js';
import { silentLogger } from '../../src/log.js';
import { startSim } from '../../src/tools/sim/node.js';
import { TOKEN } from '../helpers/gateway.js';

const ADMIN = 'admin-token-0123456789abcdef';
const GET_SLOT = '{"jsonrpc":"2.0","id":7,"method":"getSlot"}';

/** One call on a connection of its own (with workers, it may land on either). */
async function call(url: string): Promise<{ status: number; retryAfter: string | null; json: any }> {
  const r = await fetch(`${url}/api-token/${TOKEN}`, { method: 'POST', headers: { 'content-type': 'application/json', connection: 'close' }, body: GET_SLOT });
  return { status: r.status, retryAfter: r.headers.get('retry-after'), json: JSON.parse(await r.text()) };
}

for (const workers of [0, 1, 2]) {
  t.test(`a token at its limit stays limited across a reload (rpc.workers ${workers})`, async (t) => {
    const sim = await startSim({ id: 'n0', port: 0 });
    t.teardown(() => sim.close());
    const dir = mkdtempSync(join(tmpdir(), 'jg-reload-limits-'));
    t.teardown(() => rmSync(dir, { recursive: true, force: true }));
    const file = join(dir, 'jumpgate.yaml');
    // One token every 100 s: nothing refills while the test runs.
    const base = [
      `rpc: { port: 0, wsPort: 0, workers: ${workers} }`,
      'console: { port: 0 }',
      "store: { url: 'sqlite://:memory:' }",
      'offload: { threads: 0 }',
      'log: { level: silent }',
      `admin: { port: 0, token: ${ADMIN} }`,
      `tokens: [{ token: ${TOKEN}, stack: t }]`,
      `nodes: [{ id: n0, url: "${sim.url}" }]`,
    ];
    writeFileSync(file, [...base, 'rateLimits: { token: { rate: 0.01, burst: 3 } }'].join('\n'));
    const gw = await startGateway(loadConfig(file), { log: silentLogger(), configPath: file, adminEphemeral: true });
    t.teardown(() => gw.close());

    for (let i = 0; i < 3; i++) t.equal((await call(gw.url)).status, 200, `call ${i + 1} of the burst`);
    const before = await call(gw.url);
    t.equal(before.status, 429, 'the fourth call is limited');
    t.match(before.json, { id: 7, error: { code: 7429, data: { scope: 'token' } } });

    // A reload that changes the limits section (a method limit added, the token limit kept).
    writeFileSync(file, [...base, 'rateLimits: { token: { rate: 0.01, burst: 3 }, methods: { getBlock: { rate: 1, burst: 1 } } }'].join('\n'));
    const r = await fetch(gw.admin!.url + '/admin/reload', { method: 'POST', headers: { authorization: `Bearer ${ADMIN}` } });
    t.equal(r.status, 200);
    const summary = (await r.json()) as { applied: string[] };
    t.ok(summary.applied.includes('rateLimits.methods'), `the limits were reloaded (${summary.applied.join(', ')})`);

    // With workers, several fresh connections: every worker holds the same bucket.
    for (let i = 0; i < (workers === 0 ? 1 : 4); i++) {
      const after = await call(gw.url);
      t.equal(after.status, 429, `still limited after the reload (call ${i + 1})`);
      t.match(after.json, { id: 7, error: { code: 7429, data: { scope: 'token' } } });
      t.ok(after.json.error.data.retryAfterMs > 0, 'retryAfterMs');
      t.ok(Number(after.retryAfter) > 0, 'Retry-After');
    }
  });
}
