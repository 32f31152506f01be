// Two jumpgate processes with the same config answer alike (docs/instances.md "Running several
// instances"): a balancer may send a client's requests to either, so an affinity key must land
// on the same node through both, fall back to the same node when that one dies, and an error
// must read the same whichever instance wrote it.

import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { startSim } from '../../src/tools/sim/node.js';
import { eventually } from '../helpers/eventually.js';
import { startInstance, type Instance } from '../helpers/instances.js';

const TOKEN = 'same-answers-token-0123456789';
const ADMIN_TOKEN = 'same-answers-admin-0123456789';
const KEYS = Array.from({ length: 300 }, (_, i) => `key-${i}`);

interface Sent {
  status: number;
  node: string | null;
  body: string;
  contentType: string | null;
}

async function post(url: string, body: string, headers: Record<string, string> = {}): Promise<Sent> {
  const r = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body });
  return { status: r.status, node: r.headers.get('x-service-node'), body: await r.text(), contentType: r.headers.get('content-type') };
}

/** key → serving node through one instance. */
async function placement(i: Instance): Promise<Map<string, string | null>> {
  const out = new Map<string, string | null>();
  for (const key of KEYS) {
    const r = await post(i.rpcUrl(TOKEN), '{"jsonrpc":"2.0","id":1,"method":"getSlot"}', { 'x-service-affinity': 'key', 'x-service-affinity-key': key });
    out.set(key, r.status === 200 ? r.node : `HTTP ${r.status}`);
  }
  return out;
}

const withoutIds = (body: string): string => body.replace(/"id":\s*(\d+|"[^"]*")/g, '"id":ID');

t.test('same config, two processes: same node per key, same fallback, same errors', async (t) => {
  const sims = await Promise.all(['n0', 'n1', 'n2'].map((id) => startSim({ id, port: 0 })));
  t.teardown(() => Promise.all(sims.map((s) => s.close())));
  const dir = mkdtempSync(join(tmpdir(), 'jg-same-'));
  const config = {
    rpc: { port: 0, wsPort: 0, workers: 1 },
    console: { port: 0 },
    offload: { threads: 0 },
    store: { url: 'sqlite://:memory:' },
    affinity: { seed: 1234 },
    limits: { maxBatch: 5 },
    health: { intervalMs: 200 },
    nodes: sims.map((s) => ({ id: s.id, url: s.url })),
    tokens: [{ token: TOKEN, stack: 's' }],
  };
  const [a, b] = await Promise.all(['a', 'b'].map((name) => startInstance({ dir, name, config, adminToken: ADMIN_TOKEN })));
  t.teardown(() => {
    a!.proc.child.kill('SIGKILL');
    b!.proc.child.kill('SIGKILL');
  });
  const healthy = async (i: Instance, n: number): Promise<boolean> => {
    const nodes = JSON.parse((await i.admin('/admin/nodes')).text) as { id: string; state: string }[];
    return nodes.filter((x) => x.state === 'healthy').length === n;
  };
  await eventually('every node healthy on both instances', async () => (await healthy(a!, 3)) && (await healthy(b!, 3)), 10_000);

  const onA = await placement(a!);
  const onB = await placement(b!);
  const spread = new Map<string, number>();
  for (const n of onA.values()) spread.set(String(n), (spread.get(String(n)) ?? 0) + 1);
  t.same([...spread.keys()].sort(), ['n0', 'n1', 'n2'], `the keys spread over the three nodes: ${JSON.stringify(Object.fromEntries(spread))}`);
  const differ = KEYS.filter((k) => onA.get(k) !== onB.get(k));
  t.same(differ, [], `all ${KEYS.length} keys on the same node through both instances`);

  // The node with the most keys dies: both instances fall back alike.
  const victim = [...spread].sort((x, y) => y[1] - x[1])[0]![0];
  await sims.find((s) => s.id === victim)!.close();
  const down = async (i: Instance): Promise<boolean> => {
    const nodes = JSON.parse((await i.admin('/admin/nodes')).text) as { id: string; state: string }[];
    return nodes.find((x) => x.id === victim)!.state !== 'healthy';
  };
  await eventually(`${victim} seen down by both instances`, async () => (await down(a!)) && (await down(b!)), 10_000);
  const afterA = await placement(a!);
  const afterB = await placement(b!);
  const moved = KEYS.filter((k) => onA.get(k) === victim);
  t.ok(
    moved.every((k) => afterA.get(k) !== victim && afterA.get(k)?.startsWith('n')),
    `the ${moved.length} keys of ${victim} are served by another node`,
  );
  t.same(
    KEYS.filter((k) => onA.get(k) !== victim && afterA.get(k) !== onA.get(k)),
    [],
    'the other keys stay where they were',
  );
  t.same(
    KEYS.filter((k) => afterA.get(k) !== afterB.get(k)),
    [],
    'the same fallback node for every key through both instances',
  );

  // Errors: a node's own (passed through), the token check's, the batch limit's.
  const cases: [string, (i: Instance, id: number) => Promise<Sent>][] = [
    [
      'unknown method (the node error passes through)',
      (i, id) =>
        post(i.rpcUrl(TOKEN), `{"jsonrpc":"2.0","id":${id},"method":"noSuchMethod"}`, { 'x-service-affinity': 'key', 'x-service-affinity-key': 'key-0' }),
    ],
    ['unknown token (7401)', (i, id) => post(i.rpcUrl('no-such-token-0123456789'), `{"jsonrpc":"2.0","id":${id},"method":"getSlot"}`)],
    [
      'batch over limits.maxBatch (7701)',
      (i, id) => post(i.rpcUrl(TOKEN), JSON.stringify(Array.from({ length: 6 }, (_, k) => ({ jsonrpc: '2.0', id: id + k, method: 'getSlot' })))),
    ],
  ];
  for (const [what, send] of cases) {
    const x = await send(a!, 7);
    const y = await send(b!, 8);
    t.ok(x.status >= 200 && x.body.includes('"error"'), `${what}: an error (${x.status} ${x.body})`);
    t.equal(x.status, y.status, `${what}: same HTTP status`);
    t.equal(x.contentType, y.contentType, `${what}: same content type`);
    t.equal(withoutIds(x.body), withoutIds(y.body), `${what}: the same bytes apart from the id`);
  }
});
