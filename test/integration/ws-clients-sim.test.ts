// Real Solana client libraries against the simulated node directly: proves the sim's HTTP and
// WebSocket shapes are exactly Solana's (the same checks run against the gateway elsewhere).

import t from 'tap';
import { startSim, type SimNode } from '../../src/tools/sim/node.js';
import { eventually } from '../helpers/eventually.js';
import { checkKitRootAndAccount, checkKitSlotNotifications, checkWeb3OnSlotChange, checkWeb3RootAndAccount } from '../helpers/solana-clients.js';

type Test = Parameters<Parameters<typeof t.test>[0]>[0];

async function sim(t: Test): Promise<SimNode> {
  const node = await startSim({ id: 'clients', port: 0, slotMs: 50, synthetic: true });
  t.teardown(() => node.close());
  return node;
}

t.test('@solana/web3.js v1: onSlotChange over the derived WS URL (port + 1), getSlot, getAccountInfo', async (t) => {
  const node = await sim(t);
  await checkWeb3OnSlotChange(node.url, t);
  t.equal(node.stats.wsSubscriptions, 0, 'web3.js unsubscribed');
  await eventually('web3.js socket closed', () => node.stats.wsConnections === 0);
  t.ok((node.stats.byMethod.get('getSlot') ?? 0) >= 1, 'HTTP went to the sim');
  t.ok(node.stats.wsMessages >= 2, 'the subscribe and unsubscribe went over WS');
});

t.test('@solana/web3.js v1: explicit wsEndpoint on port P', async (t) => {
  const node = await sim(t);
  await checkWeb3OnSlotChange(node.url, t, node.wsUrl);
});

t.test('@solana/web3.js v1: onRootChange and onAccountChange', async (t) => {
  const node = await sim(t);
  await checkWeb3RootAndAccount(node.url, t);
  t.equal(node.stats.wsSubscriptions, 0);
});

t.test('@solana/kit: slotNotifications, getSlot, getAccountInfo', async (t) => {
  const node = await sim(t);
  await checkKitSlotNotifications(node.wsUrl, node.url, t);
  await eventually('kit unsubscribed', () => node.stats.wsSubscriptions === 0);
  t.pass('kit sent slotUnsubscribe (or closed) after the abort');
});

t.test('@solana/kit: rootNotifications and accountNotifications', async (t) => {
  const node = await sim(t);
  await checkKitRootAndAccount(node.wsUrlPlusOne, t);
  await eventually('kit unsubscribed', () => node.stats.wsSubscriptions === 0);
  t.pass('kit cleaned up both subscriptions');
});
