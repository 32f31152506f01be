// startGateway's failure paths: whatever had started is stopped through the same stop list as
// a shutdown (the store it was handed is closed, its listeners let go of their ports).

import { createServer, type Server } from 'node:net';
import t from 'tap';
import { resolveConfig } from '../../src/config/load.js';
import { startGateway } from '../../src/lifecycle/start-gateway.js';
import { silentLogger } from '../../src/log.js';
import { openStore } from '../../src/store/open.js';
import { startSim } from '../../src/tools/sim/node.js';
import { freePort } from '../helpers/ports.js';

type Test = Parameters<Parameters<typeof t.test>[0]>[0];

/** A port held by another listener for the length of the test. */
async function busyPort(t: Test): Promise<number> {
  const server: Server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => new Promise<void>((resolve) => server.close(() => resolve())));
  return (server.address() as { port: number }).port;
}

/** Listens on `port` and closes again; rejects when the port is taken. */
function listenOnce(port: number): Promise<void> {
  const server = createServer();
  return new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => server.close(() => resolve()));
  });
}

async function config(t: Test, overrides: Record<string, unknown>): Promise<ReturnType<typeof resolveConfig>> {
  const sim = await startSim({ id: 'n0', port: 0 });
  t.teardown(() => sim.close());
  return resolveConfig(
    {
      rpc: { host: '127.0.0.1', port: 0, wsPort: 0 },
      console: { port: 0 },
      admin: { port: 0 },
      offload: { threads: 0 },
      log: { level: 'silent' },
      nodes: [{ id: 'n0', url: sim.url }],
      ...overrides,
    },
    {},
  );
}

t.test('the RPC port is taken: the start fails and the store it was handed is closed', async (t) => {
  const port = await busyPort(t);
  const store = await openStore('sqlite://:memory:');
  const c = await config(t, { rpc: { host: '127.0.0.1', port, wsPort: 0 } });
  await t.rejects(startGateway(c, { log: silentLogger(), store }), /cannot listen on 127\.0\.0\.1:\d+/);
  await t.rejects(store.tokenVersion(), 'the store is closed');
});

t.test('the admin port is taken: the start fails and the RPC port is let go', async (t) => {
  const adminPort = await busyPort(t);
  const rpcPort = await freePort();
  const store = await openStore('sqlite://:memory:');
  const c = await config(t, { rpc: { host: '127.0.0.1', port: rpcPort, wsPort: 0 }, admin: { host: '127.0.0.1', port: adminPort } });
  await t.rejects(startGateway(c, { log: silentLogger(), store }), /admin API/);
  await t.rejects(store.tokenVersion(), 'the store is closed');
  await t.resolves(listenOnce(rpcPort), 'the RPC port is free again');
});

t.test('adminOptional: a taken admin port only skips the admin API', async (t) => {
  const adminPort = await busyPort(t);
  const c = await config(t, { admin: { host: '127.0.0.1', port: adminPort } });
  const gw = await startGateway(c, { log: silentLogger(), store: null, adminOptional: true });
  t.teardown(() => gw.close());
  t.equal(gw.admin, null);
  t.equal(gw.store, null, 'no store: no accounts');
  t.equal(gw.usageFlush, null);
  const r = await fetch(`${gw.url}/`, { method: 'POST', body: '{}' });
  t.ok(r.status > 0, 'the RPC listener answers');
  await gw.close();
  await gw.close();
  await t.rejects(fetch(`${gw.url}/`, { method: 'POST', body: '{}' }), 'closed: the RPC port is let go');
});
