// Real transactions through the gateway to a simulated cluster of three nodes (one lagging):
// @solana/kit and @solana/web3.js v1 send transfers, confirm them over the gateway's
// WebSocket, and every node shows the new balance once its lag has passed.

import t from 'tap';
import { address, createSolanaRpc, createSolanaRpcSubscriptions, generateKeyPairSigner, lamports } from '@solana/kit';
import { Connection, Keypair, LAMPORTS_PER_SOL, SystemProgram, Transaction, sendAndConfirmTransaction } from '@solana/web3.js';
import { Cluster } from '../../src/tools/sim/node.js';
import { startHarness, TOKEN, type Harness } from '../helpers/gateway.js';
import { eventually, eventuallyValue } from '../helpers/eventually.js';
import { signTx, transferIx } from '../helpers/kit-tx.js';

const SLOT_MS = 50;
const LAG = 6;
const DEADLINE_MS = 15_000;

type Test = Parameters<Parameters<typeof t.test>[0]>[0];

async function cluster(t: Test): Promise<Harness> {
  const c = new Cluster({ slotMs: SLOT_MS });
  const h = await startHarness({
    sims: [
      { cluster: c, synthetic: false },
      { cluster: c, synthetic: false, latencyMs: [5, 15] },
      { cluster: c, synthetic: false, lag: LAG },
    ],
  });
  t.teardown(() => h.close());
  return h;
}

async function nodeBalance(url: string, key: string): Promise<{ value: number; slot: number }> {
  const r = await fetch(url, {
    method: 'POST',
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'getBalance', params: [key, { commitment: 'processed' }] }),
  });
  const j = (await r.json()) as { result: { context: { slot: number }; value: number } };
  return { value: j.result.value, slot: j.result.context.slot };
}

t.test('@solana/kit: airdrop, transfer through the gateway, signatureSubscribe, statuses, every node', async (t) => {
  const h = await cluster(t);
  const port = new URL(h.url).port;
  const rpc = createSolanaRpc(`${h.url}/api-token/${TOKEN}`);
  const subs = createSolanaRpcSubscriptions(`ws://127.0.0.1:${port}/api-token/${TOKEN}/`);
  const payer = await generateKeyPairSigner();
  const to = address((await generateKeyPairSigner()).address);

  t.equal((await rpc.getBalance(payer.address, { commitment: 'processed' }).send()).value, 0n, 'a fresh key has nothing');
  await rpc.requestAirdrop(payer.address, lamports(2_000_000_000n), { commitment: 'confirmed' }).send();
  await eventually(
    'the airdrop to show at confirmed',
    async () => (await rpc.getBalance(payer.address, { commitment: 'confirmed' }).send()).value === 2_000_000_000n,
    DEADLINE_MS,
  );

  // A finalized blockhash is known to every node, the lagging one included (its lag is < 32).
  const { value: latest } = await rpc.getLatestBlockhash({ commitment: 'finalized' }).send();
  const tx = await signTx(payer, [transferIx(payer, to, 1_234_567n)], latest.blockhash, latest.lastValidBlockHeight);
  const ac = new AbortController();
  t.teardown(() => ac.abort());
  const notes = await subs.signatureNotifications(tx.signature as never, { commitment: 'confirmed' }).subscribe({ abortSignal: ac.signal });
  const sent = await rpc.sendTransaction(tx.wire as never, { encoding: 'base64', preflightCommitment: 'processed' }).send();
  t.equal(sent, tx.signature, 'the node answers the transaction signature');

  const timer = setTimeout(() => ac.abort(new Error('no signatureNotification')), DEADLINE_MS);
  for await (const n of notes) {
    t.equal(n.value.err, null, 'signatureNotification: no error');
    t.ok(n.context.slot > 0n);
    break;
  }
  clearTimeout(timer);
  // The notification came from one node; the status call may reach another a slot or two behind
  // it (default routing), so it is polled as a client confirming a transaction polls.
  const status = await eventuallyValue(
    'getSignatureStatuses to say confirmed',
    async () => {
      const st = (await rpc.getSignatureStatuses([tx.signature as never]).send()).value[0];
      return st !== null && ['confirmed', 'finalized'].includes(st.confirmationStatus!) ? st : undefined;
    },
    DEADLINE_MS,
  );
  t.ok(['confirmed', 'finalized'].includes(status.confirmationStatus!), `status ${status.confirmationStatus}`);
  t.equal(status.err, null);

  // Every node shows the new balance once its view reaches the landing slot.
  for (const sim of h.sims) {
    const seen = await eventuallyValue(
      `${sim.id} to show the transfer`,
      async () => {
        const b = await nodeBalance(sim.url, to);
        return b.value === 1_234_567 ? b : undefined;
      },
      DEADLINE_MS,
    );
    t.ok(seen.slot >= status!.slot, `${sim.id} shows it from slot ${seen.slot} (landed ${status!.slot})`);
  }
  const fee = 5000;
  const left = 2_000_000_000n - 1_234_567n - BigInt(fee);
  await eventually(
    'the payer to have paid amount and fee',
    async () => (await rpc.getBalance(payer.address, { commitment: 'confirmed' }).send()).value === left,
    DEADLINE_MS,
  );

  const got = await eventuallyValue(
    'getTransaction',
    async () =>
      (await rpc.getTransaction(tx.signature as never, { commitment: 'confirmed', maxSupportedTransactionVersion: 0, encoding: 'json' }).send()) ?? undefined,
    DEADLINE_MS,
  );
  t.equal(got.meta?.fee, BigInt(fee));
  t.equal(got.version, 0);
  t.same(got.transaction.signatures, [tx.signature]);
});

t.test('@solana/web3.js v1: sendAndConfirmTransaction over the gateway HTTP and WS URLs', async (t) => {
  const h = await cluster(t);
  const port = new URL(h.url).port;
  const conn = new Connection(`${h.url}/api-token/${TOKEN}`, { commitment: 'confirmed', wsEndpoint: `ws://127.0.0.1:${port}/api-token/${TOKEN}/` });
  const payer = Keypair.generate();
  const to = Keypair.generate().publicKey;
  const airdrop = await conn.requestAirdrop(payer.publicKey, LAMPORTS_PER_SOL);
  const bh = await conn.getLatestBlockhash('finalized');
  const confirmed = await conn.confirmTransaction({ signature: airdrop, ...bh }, 'confirmed');
  t.equal(confirmed.value.err, null, 'airdrop confirmed');
  const tx = new Transaction().add(SystemProgram.transfer({ fromPubkey: payer.publicKey, toPubkey: to, lamports: 5_000_000 }));
  const sig = await sendAndConfirmTransaction(conn, tx, [payer], { commitment: 'confirmed', preflightCommitment: 'processed' });
  t.match(sig, /^[1-9A-HJ-NP-Za-km-z]{86,88}$/);
  // The gateway may ask the lagging node, which sees it a few slots later.
  await eventually('the transfer at confirmed', async () => (await conn.getBalance(to, 'confirmed')) === 5_000_000, DEADLINE_MS);
  const parsed = await eventuallyValue(
    'getTransaction',
    async () => (await conn.getTransaction(sig, { commitment: 'confirmed', maxSupportedTransactionVersion: 0 })) ?? undefined,
    DEADLINE_MS,
  );
  t.equal(parsed.meta?.err, null);
  t.same(parsed.meta?.postBalances.slice(1, 2), [5_000_000]);
  // web3.js closes its idle socket (1000) 500 ms after its last subscription; before the
  // gateway stops, or it would reconnect for ever.
  const rpcWs = (conn as unknown as { _rpcWebSocket: { socket?: unknown; once(e: string, f: () => void): void; close(code: number): void } })._rpcWebSocket;
  if (rpcWs.socket !== undefined) {
    const closed = await Promise.race([
      new Promise<boolean>((r) => rpcWs.once('close', () => r(true))),
      new Promise<boolean>((r) => setTimeout(() => r(false), 3000)),
    ]);
    if (!closed) rpcWs.close(1000);
  }
});
