// Real Solana clients through the gateway: @solana/web3.js v1 (derives its WebSocket URL as
// "same URL, port + 1", so the gateway listens on rpc.wsPort = port + 1) and @solana/kit.

import { createServer } from 'node:net';
import t from 'tap';
import { eventually } from '../helpers/eventually.js';
import { startHarness, TOKEN } from '../helpers/gateway.js';
import { checkKitRootAndAccount, checkKitSlotNotifications, checkWeb3OnSlotChange, checkWeb3RootAndAccount } from '../helpers/solana-clients.js';

function free(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = createServer();
    s.once('error', () => resolve(false));
    s.listen(port, '127.0.0.1', () => s.close(() => resolve(true)));
  });
}

async function freePair(): Promise<number> {
  for (let i = 0; i < 50; i++) {
    const p = 20000 + Math.floor(Math.random() * 30000);
    if ((await free(p)) && (await free(p + 1))) return p;
  }
  throw new Error('no free port pair');
}

t.test('web3.js v1 and kit through the gateway', async (t) => {
  const port = await freePair();
  const h = await startHarness({ sims: [{ slotMs: 50 }, { slotMs: 50 }], config: { rpc: { port, wsPort: port + 1 } } });
  t.teardown(() => h.close());
  const http = `${h.url}/api-token/${TOKEN}`;
  const ws = `ws://127.0.0.1:${port}/api-token/${TOKEN}/`;
  t.equal(h.gw.wsPort, port + 1);
  await t.test('web3.js onSlotChange (WS URL derived as port + 1)', (t) => checkWeb3OnSlotChange(http, t));
  await t.test('web3.js onRootChange / onAccountChange', (t) => checkWeb3RootAndAccount(http, t));
  await t.test('kit slotNotifications', (t) => checkKitSlotNotifications(ws, http, t));
  await t.test('kit root and account notifications', (t) => checkKitRootAndAccount(ws, t));
  // Clients that left took their subscriptions with them.
  await eventually('the hub to hold no subscription', () => h.gw.ws().sharedSubscriptions === 0, 5000, 50);
  t.equal(h.gw.ws().sharedSubscriptions, 0, 'no subscription left behind');
});
