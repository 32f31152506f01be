// ws.redundancy through the gateway with the real @solana/kit client and simulated nodes of one
// cluster: every slot and account notification exactly once and in order, also while a node
// holding the subscription drops its WebSockets; a transfer's signatureSubscribe fires once.

import t from 'tap';
import { address, createSolanaRpc, createSolanaRpcSubscriptions, generateKeyPairSigner, lamports } from '@solana/kit';
import { WebSocket } from 'undici';
import { parseConfig } from '../../src/config/load.js';
import { Cluster } from '../../src/tools/sim/node.js';
import { startHarness, TOKEN, type Harness } from '../helpers/gateway.js';
import { eventually, eventuallyValue } from '../helpers/eventually.js';
import { signTx, transferIx } from '../helpers/kit-tx.js';

const SLOT_MS = 50;
const DEADLINE_MS = 15_000;
/** Slots streamed before a node drops, and after. */
const BEFORE = 10;
const AFTER = 30;
/** Synthetic accounts are notified every 4 slots (docs/simulator.md "Synthetic mode"). */
const ACCOUNT_EVERY = 4;
const ACCOUNTS_AFTER = 5;

type Test = Parameters<Parameters<typeof t.test>[0]>[0];

async function cluster(t: Test, count: number, synthetic: boolean, redundancy = 2): Promise<Harness> {
  const c = new Cluster({ slotMs: SLOT_MS });
  const h = await startHarness({ sims: Array.from({ length: count }, () => ({ cluster: c, synthetic })), config: { ws: { redundancy } } });
  t.teardown(() => h.close());
  return h;
}

const wsUrl = (h: Harness): string => `ws://127.0.0.1:${new URL(h.url).port}/api-token/${TOKEN}/`;

/** Node ids holding an upstream subscription now. */
const holders = (h: Harness): string[] =>
  Object.entries(h.gw.ws().upstreamSubscriptions)
    .filter(([, n]) => n > 0)
    .map(([id]) => id)
    .sort();

/** Collects a kit notification stream's slots in the background until aborted. */
function collect<T>(stream: AsyncIterable<T>, slotOf: (n: T) => bigint): number[] {
  const out: number[] = [];
  void (async () => {
    try {
      for await (const n of stream) out.push(Number(slotOf(n)));
    } catch {
      // aborted at the end of the test
    }
  })();
  return out;
}

function assertConsecutive(t: Test, slots: number[], step: number, what: string): void {
  const gaps = slots.slice(1).filter((s, i) => s !== slots[i]! + step);
  t.same(
    gaps,
    [],
    `${what}: ${slots.length} notifications from ${slots[0]} to ${slots.at(-1)}, each ${step} after the one before (none missing, twice or out of order)`,
  );
}

t.test('ws.redundancy outside 1..5 is a config error naming the key', async (t) => {
  t.throws(() => parseConfig('ws: { redundancy: 6 }\n', {}), { message: 'config: ws.redundancy: expected an integer from 1 to 5, got 6' });
  t.throws(() => parseConfig('ws: { redundancy: 0 }\n', {}), /ws\.redundancy: expected an integer from 1 to 5/);
  t.equal(parseConfig('', {}).ws.redundancy, 1, 'default 1');
});

t.test('redundancy 2: slots and account states exactly once, in order, while a node holding them drops', async (t) => {
  const h = await cluster(t, 3, true);
  const subs = createSolanaRpcSubscriptions(wsUrl(h));
  const ac = new AbortController();
  t.teardown(() => ac.abort());
  const key = address((await generateKeyPairSigner()).address);
  const slots = collect(await subs.slotNotifications().subscribe({ abortSignal: ac.signal }), (n) => n.slot);
  const accounts = collect(
    await subs.accountNotifications(key, { commitment: 'processed', encoding: 'base64' }).subscribe({ abortSignal: ac.signal }),
    (n) => n.context.slot,
  );

  const placed = await eventuallyValue('both subscriptions on two nodes', () => {
    const ws = h.gw.ws().upstreamSubscriptions;
    const on = Object.entries(ws).filter(([, n]) => n === 2);
    return on.length === 2 ? on.map(([id]) => id).sort() : undefined;
  });
  await eventually(`${BEFORE} slots`, () => slots.length >= BEFORE, DEADLINE_MS);

  // One node holding both drops every WebSocket and refuses new ones.
  const victim = h.sims.find((s) => s.id === placed[0])!;
  const atDrop = slots.length;
  const accountsAtDrop = accounts.length;
  victim.set({ wsDrop: true });
  await eventually(`${AFTER} slots after the drop`, () => slots.length >= atDrop + AFTER, DEADLINE_MS);
  await eventually(`${ACCOUNTS_AFTER} account states after the drop`, () => accounts.length >= accountsAtDrop + ACCOUNTS_AFTER, DEADLINE_MS);
  const replaced = await eventuallyValue('the lost placements on the third node', () => {
    const on = holders(h);
    return on.length === 2 && !on.includes(victim.id) ? on : undefined;
  });
  t.same(
    replaced,
    h.sims
      .map((s) => s.id)
      .filter((id) => id !== victim.id)
      .sort(),
    'placed on the two nodes left',
  );

  assertConsecutive(t, slots, 1, 'slotNotifications');
  t.ok(accounts.every((s) => s % ACCOUNT_EVERY === 0));
  assertConsecutive(t, accounts, ACCOUNT_EVERY, 'accountNotifications');
  const counts = h.gw.ws().redundancy;
  const dropped = Object.values(counts).reduce((n, c) => n + c.dropped, 0);
  t.ok(dropped > 0, `${dropped} copies dropped: both nodes sent them`);
  ac.abort();
});

t.test('redundancy 1: one placement, slots in order as before', async (t) => {
  const h = await cluster(t, 2, true, 1);
  const ac = new AbortController();
  t.teardown(() => ac.abort());
  const subs = createSolanaRpcSubscriptions(wsUrl(h));
  const slots = collect(await subs.slotNotifications().subscribe({ abortSignal: ac.signal }), (n) => n.slot);
  await eventually(`${BEFORE} slots`, () => slots.length >= BEFORE, DEADLINE_MS);
  t.equal(holders(h).length, 1, 'on one node');
  t.same(h.gw.ws().redundancy, {}, 'no redundant copies counted');
  assertConsecutive(t, slots, 1, 'slotNotifications');
  ac.abort();
});

/** A raw client counting signatureNotification frames; `roundTrip` proves every earlier frame arrived. */
class RawClient {
  readonly notes: string[] = [];
  private readonly answers = new Map<number, () => void>();
  private constructor(private readonly ws: WebSocket) {
    ws.addEventListener('message', (e) => {
      const text = String(e.data);
      if (text.includes('"signatureNotification"')) this.notes.push(text);
      const id = /"id":(\d+)\}$/.exec(text);
      if (id !== null) this.answers.get(Number(id[1]))?.();
    });
  }

  static async open(url: string): Promise<RawClient> {
    const ws = new WebSocket(url);
    await new Promise((resolve, reject) => {
      ws.addEventListener('open', resolve);
      ws.addEventListener('error', reject);
    });
    return new RawClient(ws);
  }

  call(id: number, method: string, params: unknown): Promise<void> {
    return new Promise((resolve) => {
      this.answers.set(id, resolve);
      this.ws.send(JSON.stringify({ jsonrpc: '2.0', id, method, params }));
    });
  }

  close(): void {
    this.ws.close();
  }
}

t.test('redundancy 2: a real transfer notifies signatureSubscribe exactly once', async (t) => {
  const h = await cluster(t, 2, false);
  const rpc = createSolanaRpc(`${h.url}/api-token/${TOKEN}`);
  const subs = createSolanaRpcSubscriptions(wsUrl(h));
  const payer = await generateKeyPairSigner();
  const to = address((await generateKeyPairSigner()).address);
  await rpc.requestAirdrop(payer.address, lamports(1_000_000_000n), { commitment: 'confirmed' }).send();
  await eventually(
    'the airdrop at confirmed',
    async () => (await rpc.getBalance(payer.address, { commitment: 'confirmed' }).send()).value === 1_000_000_000n,
    DEADLINE_MS,
  );
  const { value: latest } = await rpc.getLatestBlockhash({ commitment: 'finalized' }).send();
  const tx = await signTx(payer, [transferIx(payer, to, 1_234_567n)], latest.blockhash, latest.lastValidBlockHeight);

  const ac = new AbortController();
  t.teardown(() => ac.abort());
  const kitNotes = collect(
    await subs.signatureNotifications(tx.signature as never, { commitment: 'confirmed' }).subscribe({ abortSignal: ac.signal }),
    (n) => n.context.slot,
  );
  const raw = await RawClient.open(wsUrl(h));
  t.teardown(() => raw.close());
  await raw.call(1, 'signatureSubscribe', [tx.signature, { commitment: 'confirmed' }]);
  await eventually('the signature subscription on both nodes', () => holders(h).length === 2);

  await rpc.sendTransaction(tx.wire as never, { encoding: 'base64', preflightCommitment: 'processed' }).send();
  await eventually('the kit notification', () => kitNotes.length >= 1, DEADLINE_MS);
  // Both nodes see the transaction confirmed, so both would have notified; a round trip on the
  // raw socket afterwards proves any copy the gateway forwarded has arrived.
  for (const sim of h.sims) {
    await eventually(
      `${sim.id} to see it confirmed`,
      async () => {
        const r = await fetch(sim.url, {
          method: 'POST',
          body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'getSignatureStatuses', params: [[tx.signature]] }),
        });
        const st = ((await r.json()) as { result: { value: ({ confirmationStatus: string } | null)[] } }).result.value[0];
        return st !== null && st !== undefined && st.confirmationStatus !== 'processed';
      },
      DEADLINE_MS,
    );
  }
  await raw.call(2, 'getSlot', []);
  t.equal(raw.notes.length, 1, 'the raw client got one signatureNotification');
  t.equal(kitNotes.length, 1, 'kit got one');
  t.same(holders(h), [], 'ended on every node: the first one by the notification, the other unsubscribed');
  ac.abort();
});
