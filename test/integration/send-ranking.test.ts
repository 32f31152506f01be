// Landing-aware send routing (docs/landing.md "Sends go where they land") against simulated
// nodes of one cluster that land 95%, 60% and 20% of what they accept: one client IP's sends,
// with no affinity configured, go mostly to the node that lands after a warm-up; when that node
// degrades mid-run it loses its share; /admin/landing says why each node is where it is. Inline
// and with a data-plane worker (the worker reads the control plane's scores from shared memory).

import t from 'tap';
import { generateKeyPairSigner, type KeyPairSigner } from '@solana/kit';
import { Cluster } from '../../src/tools/sim/cluster.js';
import { eventually } from '../helpers/eventually.js';
import { PLANES, startHarness, type Harness } from '../helpers/gateway.js';
import { signTx, transferIx } from '../helpers/kit-tx.js';

const SLOT_MS = 50;
const ADMIN = 'send-ranking-admin-token-0123456789';
const LANDING = [
  { txDropRate: 0.05, landingMs: 0 },
  { txDropRate: 0.4, landingMs: 100 },
  { txDropRate: 0.8, landingMs: 200 },
];

type Test = Parameters<Parameters<typeof t.test>[0]>[0];

async function setup(t: Test, workers: number): Promise<Harness> {
  const cluster = new Cluster({ slotMs: SLOT_MS });
  const h = await startHarness({
    workers,
    admin: true,
    sims: LANDING.map(() => ({ cluster, synthetic: false })),
    config: {
      admin: { token: ADMIN },
      health: { intervalMs: 200, chainWatch: true },
      // Slots of 50 ms: ten slots overdue is half a second; a 3 s half-life keeps the test short.
      routing: { landing: { ranking: { halfLifeMs: 3000, overdueSlots: 10, minSamples: 8, exploreShare: 0.1 } } },
    },
  });
  t.teardown(() => h.close());
  return h;
}

async function funded(h: Harness): Promise<KeyPairSigner> {
  const payer = await generateKeyPairSigner();
  await h.call('requestAirdrop', [payer.address, 100_000_000_000]);
  await eventually(
    'the airdrop confirmed',
    async () => (await h.call('getBalance', [payer.address, { commitment: 'confirmed' }])).json.result?.value > 0,
    30_000,
  );
  h.sims.forEach((sim, i) => sim.set(LANDING[i]!));
  return payer;
}

class Sender {
  private n = 0;
  private readonly to = generateKeyPairSigner();
  private hash: { blockhash: string; lastValidBlockHeight: number } | null = null;
  private hashAt = 0;
  /** Node of each send, in order. */
  readonly nodes: string[] = [];

  constructor(
    private readonly h: Harness,
    private readonly payer: KeyPairSigner,
  ) {}

  /** One transfer through the gateway from the harness's one client address; a fresh blockhash every 2 s. */
  async send(): Promise<string> {
    if (this.hash === null || Date.now() - this.hashAt > 2000) {
      this.hash = (await this.h.call('getLatestBlockhash', [{ commitment: 'confirmed' }])).json.result.value;
      this.hashAt = Date.now();
    }
    const tx = await signTx(
      this.payer,
      [transferIx(this.payer, (await this.to).address, BigInt(1_000_000 + this.n++))],
      this.hash!.blockhash,
      BigInt(this.hash!.lastValidBlockHeight),
    );
    const r = await this.h.call('sendTransaction', [tx.wire, { encoding: 'base64', preflightCommitment: 'confirmed' }]);
    if (r.json.result !== tx.signature) throw new Error('send refused: ' + JSON.stringify(r.json));
    this.nodes.push(r.node!);
    return r.node!;
  }

  /** Share of `node` among the last `n` sends. */
  share(node: string, n: number): number {
    const last = this.nodes.slice(-n);
    return last.filter((x) => x === node).length / last.length;
  }

  /** Sends at about `perSecond` for `ms`. */
  async run(ms: number, perSecond: number): Promise<void> {
    const end = Date.now() + ms;
    while (Date.now() < end) {
      const at = Date.now();
      await this.send();
      const wait = 1000 / perSecond - (Date.now() - at);
      if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    }
  }
}

for (const plane of PLANES) {
  t.test(`${plane.name}: one IP's sends go to the node that lands, and leave it when it degrades`, async (t) => {
    const h = await setup(t, plane.workers);
    const payer = await funded(h);
    const s = new Sender(h, payer);
    // Warm-up: every node gets figures (latency first, then the explored share).
    await s.run(4000, 40);
    await eventually(
      'n0 ranks first',
      async () => {
        await s.run(500, 40);
        const r = await fetch(h.gw.admin!.url + '/admin/landing', { headers: { authorization: `Bearer ${ADMIN}` } });
        return (await r.json()).ranking.n0?.position === 1;
      },
      30_000,
    );
    const before = s.nodes.length;
    await s.run(3000, 40);
    const after = s.nodes.slice(before);
    const best = after.filter((n) => n === 'n0').length / after.length;
    t.ok(best >= 0.75, `after warm-up the best node takes ${(best * 100).toFixed(0)}% of ${after.length} sends`);
    t.ok(
      after.some((n) => n !== 'n0'),
      'the others are still explored',
    );

    const admin = await (await fetch(h.gw.admin!.url + '/admin/landing', { headers: { authorization: `Bearer ${ADMIN}` } })).json();
    t.match(admin.ranking.n0, { position: 1, reason: /% of recent sends in a block within 10 slots/ });
    t.ok(admin.ranking.n0.includedPct > admin.ranking.n2.includedPct, 'n0 lands more than n2');
    // Explored sends that were not in a block within fallbackSlots went to the best node too (no rebroadcast is configured).
    t.ok(admin.nodes.n0.resent > 0, `${admin.nodes.n0.resent} explored sends fell back to n0`);

    // n0 degrades: it lands nothing from now on; within a minute most sends go elsewhere.
    h.sims[0]!.set({ txDropRate: 1 });
    const degradedAt = Date.now();
    await eventually(
      'n0 lost its share',
      async () => {
        await s.run(1000, 40);
        return s.share('n0', 40) <= 0.25;
      },
      60_000,
    );
    t.ok(Date.now() - degradedAt < 60_000, `n0 lost its share ${((Date.now() - degradedAt) / 1000).toFixed(1)} s after it degraded`);
  });
}

t.test('configured IP affinity pins sends again', async (t) => {
  const cluster = new Cluster({ slotMs: SLOT_MS });
  const h = await startHarness({
    sims: LANDING.map(() => ({ cluster, synthetic: false })),
    config: {
      health: { intervalMs: 200, chainWatch: true },
      routing: { autoAffinityMethods: ['sendTransaction'] },
    },
  });
  t.teardown(() => h.close());
  const payer = await funded(h);
  const s = new Sender(h, payer);
  for (let i = 0; i < 30; i++) await s.send();
  // Blockhash-aware routing may still move a send whose blockhash the IP's node is not known to have yet.
  const counts = new Map<string, number>();
  for (const n of s.nodes) counts.set(n, (counts.get(n) ?? 0) + 1);
  const most = Math.max(...counts.values());
  t.ok(most >= 27, `the one client address's sends stay on its node (${most} of 30)`);
});
