// Transaction tracking through the gateway (docs/landing.md) against simulated nodes of one
// cluster that land 95%, 70% and 30% of what they accept, at different delays: the tracked
// outcomes per node equal the simulator's ledger exactly; rebroadcast lifts the landed share
// and stops once a transaction is in a block; status polling is one call per slot however many
// transactions are tracked.

import t from 'tap';
import { address, createSolanaRpc, generateKeyPairSigner, lamports, type KeyPairSigner } from '@solana/kit';
import type { LandingCounts } from '../../src/landing/counts.js';
import { Cluster } from '../../src/tools/sim/cluster.js';
import type { SimOptions } from '../../src/tools/sim/node.js';
import { ConsoleClient } from '../helpers/console-client.js';
import { eventually } from '../helpers/eventually.js';
import { keyOnNode, startHarness, type Harness } from '../helpers/gateway.js';
import { signTx, transferIx } from '../helpers/kit-tx.js';

type Test = Parameters<Parameters<typeof t.test>[0]>[0];

const SLOT_MS = 50;
/** A blockhash lives 150 blocks: ~7.5 s at 50 ms slots, plus polling. */
const DEADLINE_MS = 30_000;

/** Nodes of one cluster; their landing knobs are set once the payer is funded (an airdrop is a transaction too). */
async function setup(t: Test, sims: Partial<SimOptions>[], landing: Record<string, unknown> = {}, broadcast?: number): Promise<Harness> {
  const cluster = new Cluster({ slotMs: SLOT_MS });
  const h = await startHarness({
    sims: sims.map(() => ({ cluster, synthetic: false })),
    config: {
      health: { intervalMs: 200, chainWatch: true },
      routing: { landing, ...(broadcast === undefined ? {} : { broadcast: { methods: ['sendTransaction'], fanout: broadcast } }) },
    },
  });
  t.teardown(() => h.close());
  knobs.set(h, sims);
  return h;
}

const knobs = new WeakMap<Harness, Partial<SimOptions>[]>();

async function funded(h: Harness): Promise<KeyPairSigner> {
  const payer = await generateKeyPairSigner();
  await h.call('requestAirdrop', [payer.address, 100_000_000_000]);
  await eventually(
    'the airdrop confirmed',
    async () => (await h.call('getBalance', [payer.address, { commitment: 'confirmed' }])).json.result?.value > 0,
    DEADLINE_MS,
  );
  h.sims.forEach((sim, i) => sim.set(knobs.get(h)![i]!));
  return payer;
}

interface Sent {
  signature: string;
  node: string;
}

/** `n` transfers signed over one finalized blockhash, each sent once through the gateway, spread over the nodes by affinity key. */
async function sendTransfers(h: Harness, payer: KeyPairSigner, n: number): Promise<Sent[]> {
  const keys = h.sims.map((_, i) => keyOnNode(h, i));
  const to = (await generateKeyPairSigner()).address;
  // Finalized: every node has it, so blockhash-aware routing keeps each key on its node.
  const latest = (await h.call('getLatestBlockhash', [{ commitment: 'finalized' }])).json.result.value;
  const sent: Sent[] = [];
  for (let i = 0; i < n; i++) {
    const tx = await signTx(payer, [transferIx(payer, to, BigInt(1_000_000 + i))], latest.blockhash, BigInt(latest.lastValidBlockHeight));
    const headers = { 'X-Service-Affinity': 'key', 'X-Service-Affinity-Key': keys[i % keys.length]! };
    const r = await h.call('sendTransaction', [tx.wire, { encoding: 'base64', preflightCommitment: 'confirmed' }], headers);
    if (r.json.result !== tx.signature) throw new Error('send refused: ' + JSON.stringify(r.json));
    sent.push({ signature: tx.signature, node: r.node! });
  }
  return sent;
}

type Counts = ReadonlyMap<string, Readonly<LandingCounts>>;

function sum(counts: Counts, field: keyof Omit<LandingCounts, 'slots'>): number {
  let n = 0;
  for (const c of counts.values()) n += c[field];
  return n;
}

/** Every tracked transaction ended (landed, failed, expired or untracked). */
async function allEnded(h: Harness, n: number): Promise<Counts> {
  await eventually(
    'every tracked transaction ended',
    () => {
      const tokens = h.gw.landing.tokens();
      return sum(tokens, 'sent') === n && sum(tokens, 'landed') + sum(tokens, 'failed') + sum(tokens, 'expired') + sum(tokens, 'untracked') === n;
    },
    DEADLINE_MS,
  );
  return h.gw.landing.nodes();
}

t.test('outcomes per node equal the ledger: nodes landing 95%, 70% and 30% at different delays', async (t) => {
  const h = await setup(t, [
    { txDropRate: 0.05, landingMs: 0 },
    { txDropRate: 0.3, landingMs: 100 },
    { txDropRate: 0.7, landingMs: 300 },
  ]);
  const payer = await funded(h);
  const sent = await sendTransfers(h, payer, 60);
  const byNode = await allEnded(h, 60);
  const ledger = h.sims[0]!.cluster.ledger;
  for (const sim of h.sims) {
    const mine = sent.filter((s) => s.node === sim.id);
    const landed = mine.filter((s) => ledger.record(s.signature)?.err === null).length;
    const failed = mine.filter((s) => ledger.record(s.signature)?.err != null).length;
    const c = byNode.get(sim.id)!;
    t.equal(mine.length, 20, `${sim.id}: a third of the sends`);
    t.equal(c.sent, mine.length, `${sim.id}: sent`);
    t.equal(c.landed, landed, `${sim.id}: landed as the ledger says`);
    t.equal(c.failed, failed, `${sim.id}: failed as the ledger says`);
    t.equal(c.expired, mine.length - landed - failed, `${sim.id}: the rest expired`);
    t.equal(c.untracked, 0);
    t.equal(
      c.slots.reduce((a, b) => a + b, 0),
      landed + failed,
      `${sim.id}: a slots-to-land count per landed transaction`,
    );
  }
});

t.test('rebroadcast lifts the landed share and stops once a transaction is in a block', async (t) => {
  const lossy = [{ txDropRate: 0.7, landingMs: 100 }];
  const plain = await setup(t, lossy);
  await sendTransfers(plain, await funded(plain), 30);
  const without = (await allEnded(plain, 30)).get('n0')!;

  const h = await setup(t, lossy, { rebroadcastMs: 100 });
  const sent = await sendTransfers(h, await funded(h), 30);
  const withResends = (await allEnded(h, 30)).get('n0')!;
  t.ok(without.landed <= 21, `without rebroadcast: ${without.landed}/30 landed`);
  t.ok(withResends.landed >= 28, `with rebroadcast every 100 ms: ${withResends.landed}/30 landed`);
  t.ok(withResends.resent > 0, `${withResends.resent} resends counted`);
  const ledger = h.sims[0]!.cluster.ledger;
  t.equal(withResends.landed, sent.filter((s) => ledger.record(s.signature)?.err === null).length, 'as the ledger says');

  // Nothing tracked: no copy goes out any more, however long the chain runs on.
  const sends = (): number => h.sims[0]!.stats.byMethod.get('sendTransaction') ?? 0;
  const before = sends();
  const slot = h.sims[0]!.slot();
  await eventually('20 more slots', () => h.sims[0]!.slot() >= slot + 20, DEADLINE_MS);
  t.equal(sends(), before, 'no resend after every transaction ended');
});

t.test('status polling: one call per slot at most, however many transactions are tracked', async (t) => {
  // Synthetic nodes acknowledge any bytes with a signature and know no status: 600 stay tracked.
  const cluster = new Cluster({ slotMs: SLOT_MS });
  const h = await startHarness({
    sims: [{ cluster }, { cluster }],
    config: { health: { intervalMs: 200, chainWatch: true } },
  });
  t.teardown(() => h.close());
  for (let i = 0; i < 600; i++) await h.call('sendTransaction', ['junk' + i]);
  const statusCalls = (): number => h.sims.reduce((a, s) => a + (s.stats.byMethod.get('getSignatureStatuses') ?? 0), 0);
  const startCalls = statusCalls();
  const startSlot = h.sims[0]!.slot();
  await eventually('40 slots', () => h.sims[0]!.slot() >= startSlot + 40, DEADLINE_MS);
  const polls = (statusCalls() - startCalls) / 3;
  const slots = h.sims[0]!.slot() - startSlot;
  t.equal(Number.isInteger(polls), true, 'every poll asks for all 600 in three elements of one batch');
  t.ok(polls >= slots / 4, `polled: ${polls} polls in ${slots} slots`);
  t.ok(polls <= slots + 1, `at most one poll per slot: ${polls} polls in ${slots} slots`);
});

t.test('a @solana/kit transfer through a worker: tracked, on /admin/landing and in the console', async (t) => {
  const ADMIN = 'landing-admin-token-0123456789';
  const cluster = new Cluster({ slotMs: SLOT_MS });
  const h = await startHarness({
    workers: 1,
    admin: true,
    console: true,
    sims: [
      { cluster, synthetic: false },
      { cluster, synthetic: false },
    ],
    config: { admin: { token: ADMIN }, health: { intervalMs: 200, chainWatch: true } },
  });
  t.teardown(() => h.close());
  const c = new ConsoleClient(h.gw.console!.url);
  const { stack, tokenId, token } = await c.stackWithToken('bot@example.com', 'bots', 'sniper');
  const rpc = createSolanaRpc(`${h.url}/api-token/${token}`);
  await eventually(
    'the console token reaches the worker',
    async () =>
      (
        await fetch(`${h.url}/api-token/${token}`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: '{"jsonrpc":"2.0","id":1,"method":"getSlot"}',
        })
      ).status === 200,
  );
  const payer = await generateKeyPairSigner();
  await rpc.requestAirdrop(payer.address, lamports(2_000_000_000n)).send();
  await eventually('the airdrop confirmed', async () => (await rpc.getBalance(payer.address, { commitment: 'confirmed' }).send()).value > 0n, DEADLINE_MS);
  const { value: latest } = await rpc.getLatestBlockhash({ commitment: 'confirmed' }).send();
  const tx = await signTx(
    payer,
    [transferIx(payer, address((await generateKeyPairSigner()).address), 5_000_000n)],
    latest.blockhash,
    latest.lastValidBlockHeight,
  );
  t.equal(await rpc.sendTransaction(tx.wire as never, { encoding: 'base64', preflightCommitment: 'confirmed' }).send(), tx.signature);

  const admin = async (): Promise<any> => (await fetch(h.gw.admin!.url + '/admin/landing', { headers: { authorization: `Bearer ${ADMIN}` } })).json();
  await eventually('landed on /admin/landing', async () => (await admin()).tokens?.[tokenId]?.landed === 1, DEADLINE_MS);
  const view = await admin();
  t.match(
    view.tokens[tokenId],
    { sent: 1, landed: 1, expired: 0, failed: 0, landedPct: 100 },
    'the transfer landed (an airdrop is no sendTransaction: not tracked)',
  );
  t.ok(Object.values(view.nodes as Record<string, { landed: number }>).reduce((a, n) => a + n.landed, 0) >= 1, 'credited to the node that took it');

  await h.gw.landingFlush!.flush();
  const panel = await c.get(`/api/v1/stacks/${stack}/landing`);
  t.equal(panel.status, 200);
  t.match(panel.json.tokens[0], { tokenId, label: 'sniper', sent: 1, landed: 1, landedPct: 100 }, "the stack's Transactions panel");
});
