// Simulated gRPC sources fed by the simulated cluster (docs/grpc.md "Simulated sources"): a real
// transfer sent through the gateway's JSON-RPC reaches the official Yellowstone client through
// the gateway's gRPC listener exactly once (account write and transaction), with two jittery
// cluster-fed sources behind it, one of them on a lagging node; both sources send the same bytes;
// from_slot replays the transfer once, from a source's ledger and from the gateway's window.

import * as grpc from '@grpc/grpc-js';
import { address, createSolanaRpc, generateKeyPairSigner, lamports } from '@solana/kit';
import type { SubscribeUpdate } from '@triton-one/yellowstone-grpc';
import t from 'tap';
import { resolveConfig } from '../../src/config/load.js';
import { encodeAs, geyserType } from '../../src/grpc/proto.js';
import { KIND_TRANSACTION, readUpdate } from '../../src/grpc/update.js';
import { startGateway } from '../../src/lifecycle/start-gateway.js';
import { silentLogger } from '../../src/log.js';
import { decodeBase58 } from '../../src/solana/base58.js';
import { Cluster, startSim } from '../../src/tools/sim/node.js';
import { startClusterGrpcSource } from '../../src/tools/sim-grpc/cluster-source.js';
import { eventually, eventuallyValue } from '../helpers/eventually.js';
import { subscribe, TOKEN } from '../helpers/grpc.js';
import { signTx, transferIx } from '../helpers/kit-tx.js';

const SLOT_MS = 100;

type Test = Parameters<Parameters<typeof t.test>[0]>[0];
const DEADLINE_MS = 15_000;

/** Raw upstream bytes of every transaction update a source streams, by signature (latin1). */
function rawTransactions(url: string, t: Test): Map<string, Buffer[]> {
  const seen = new Map<string, Buffer[]>();
  const client = new grpc.Client(url.replace('http://', ''), grpc.credentials.createInsecure());
  const id = (b: Buffer): Buffer => b;
  const call = client.makeBidiStreamRequest('/geyser.Geyser/Subscribe', id, id, new grpc.Metadata());
  call.on('error', () => {});
  call.on('data', (b: Buffer) => {
    const u = readUpdate(b);
    if (u.kind !== KIND_TRANSACTION) return;
    const list = seen.get(u.key) ?? [];
    list.push(b);
    seen.set(u.key, list);
  });
  call.write(encodeAs(geyserType('SubscribeRequest'), { transactions: { t: {} }, commitment: 0 }));
  t.teardown(() => {
    call.cancel();
    client.close();
  });
  return seen;
}

t.test('a transfer through the gateway reaches a gRPC client once, from two cluster-fed sources', async (t) => {
  const cluster = new Cluster({ slotMs: SLOT_MS });
  const nodes = [await startSim({ id: 'n0', port: 0, cluster }), await startSim({ id: 'n1', port: 0, cluster, lag: 2 })];
  const sources = [
    await startClusterGrpcSource(nodes[0]!, { seed: 1, knobs: { jitterMs: 10 } }),
    await startClusterGrpcSource(nodes[1]!, { seed: 2, knobs: { jitterMs: 10 } }),
  ];
  const config = resolveConfig({
    rpc: { host: '127.0.0.1', port: 0, wsPort: 0, workers: 0 },
    console: { port: 0 },
    admin: { port: 0 },
    store: { url: 'sqlite://:memory:' },
    nodes: nodes.map((n) => ({ id: n.id, url: n.url })),
    tokens: [{ token: TOKEN, stack: 'test' }],
    offload: { threads: 0 },
    health: { chainWatch: false },
    log: { level: 'silent' },
    grpc: { sources: sources.map((s, i) => ({ id: `src${i}`, url: s.url })) },
  });
  const gw = await startGateway(config, { log: silentLogger(), store: null, grpcEphemeral: true });
  t.teardown(async () => {
    await gw.close();
    await Promise.all([...sources.map((s) => s.close()), ...nodes.map((n) => n.close())]);
  });
  const rpc = createSolanaRpc(`${gw.url}/api-token/${TOKEN}`);
  const payer = await generateKeyPairSigner();
  const to = address((await generateKeyPairSigner()).address);
  const direct = sources.map((s) => rawTransactions(s.url, t));

  const sub = await subscribe(gw.grpc!.url, TOKEN, {
    accounts: { payer: { account: [payer.address], owner: [], filters: [] } },
    transactions: { mine: { accountInclude: [payer.address], accountExclude: [], accountRequired: [] } },
    commitment: 0,
  });
  t.teardown(() => sub.close());

  await rpc.requestAirdrop(payer.address, lamports(2_000_000_000n), { commitment: 'processed' }).send();
  await eventually(
    'the airdrop to land',
    async () => (await rpc.getBalance(payer.address, { commitment: 'processed' }).send()).value === 2_000_000_000n,
    DEADLINE_MS,
  );
  const { value: latest } = await rpc.getLatestBlockhash({ commitment: 'finalized' }).send();
  const ok = await signTx(payer, [transferIx(payer, to, 1_234_567n)], latest.blockhash, latest.lastValidBlockHeight);
  await rpc.sendTransaction(ok.wire as never, { encoding: 'base64', preflightCommitment: 'processed' }).send();
  // More than the payer holds: lands with InstructionError (the fee is paid), unchecked by preflight.
  const failing = await signTx(payer, [transferIx(payer, to, 50_000_000_000n)], latest.blockhash, latest.lastValidBlockHeight);
  await rpc.sendTransaction(failing.wire as never, { encoding: 'base64', skipPreflight: true }).send();

  const sigOf = (u: SubscribeUpdate): string => Buffer.from(u.transaction!.transaction!.signature).toString('latin1');
  const okSig = Buffer.from(decodeBase58(ok.signature)!).toString('latin1');
  const failSig = Buffer.from(decodeBase58(failing.signature)!).toString('latin1');
  const status = await eventuallyValue(
    'both transactions to show as transaction updates',
    () => {
      const txs = sub.updates.filter((u) => u.transaction !== undefined);
      return txs.some((u) => sigOf(u) === okSig) && txs.some((u) => sigOf(u) === failSig) ? txs : undefined;
    },
    DEADLINE_MS,
  );
  const landed = await eventuallyValue(
    'the transfer to be final for both nodes',
    async () => {
      const st = (await rpc.getSignatureStatuses([ok.signature as never]).send()).value[0];
      return st !== null && st.confirmationStatus === 'finalized' ? st : undefined;
    },
    DEADLINE_MS,
  );
  // Both sources (the lagging one included) have streamed the transfer by now: anything doubled would be here.
  await eventually('both sources to have streamed the transfer', () => direct.every((d) => d.has(okSig)), DEADLINE_MS);
  const [a, b] = [direct[0]!.get(okSig)![0]!, direct[1]!.get(okSig)![0]!];
  t.ok(a.equals(b), 'the two sources sent the same bytes for the transfer');

  const txs = sub.updates.filter((u) => u.transaction !== undefined);
  t.equal(txs.filter((u) => sigOf(u) === okSig).length, 1, 'the transfer arrived once');
  t.equal(txs.filter((u) => sigOf(u) === failSig).length, 1, 'the failing transfer arrived once');
  t.ok(status.length >= 2);
  const okTx = txs.find((u) => sigOf(u) === okSig)!.transaction!;
  t.equal(Number(okTx.slot), Number(landed.slot), 'in the slot getSignatureStatuses names');
  t.equal(okTx.transaction!.isVote, false);
  t.equal(okTx.transaction!.meta!.err, undefined, 'no error');
  t.equal(Number(okTx.transaction!.meta!.fee), 5000);
  const failTx = txs.find((u) => sigOf(u) === failSig)!.transaction!;
  t.not(failTx.transaction!.meta!.err, undefined, 'the failing transfer carries its error');
  t.match(Buffer.from(failTx.transaction!.meta!.err!.err).toString(), /InstructionError/);

  // The payer's account: written by the airdrop, the transfer and the failing one (its fee); each write once.
  const writes = sub.updates.filter((u) => u.account !== undefined).map((u) => u.account!);
  const versions = writes.map((w) => `${w.account!.writeVersion}`);
  t.equal(new Set(versions).size, versions.length, 'no account write doubled');
  const atTransfer = writes.filter((w) => Number(w.slot) === Number(landed.slot));
  t.equal(atTransfer.length, 1, 'one write of the payer in the transfer slot');
  const balance = (await rpc.getBalance(payer.address, { commitment: 'processed' }).send()).value;
  const last = writes[writes.length - 1]!;
  t.equal(BigInt(last.account!.lamports), balance, 'the last write carries the balance the node answers');
  t.ok(
    writes.every((w, i) => i === 0 || Number(w.slot) >= Number(writes[i - 1]!.slot)),
    'writes in slot order',
  );
  t.same(Buffer.from(last.account!.pubkey), Buffer.from(decodeBase58(payer.address)!), 'the payer');
  t.ok(Number(last.account!.writeVersion) > 0);

  // from_slot: a cluster-fed source replays the transfer from the cluster's ledger, the gateway
  // from the window it kept; once each, in the slot it landed in.
  const from = Number(landed.slot) - 2;
  const mine = { mine: { accountInclude: [payer.address], accountExclude: [], accountRequired: [] } };
  const targets: [string, string, string | undefined][] = [
    ['a cluster-fed source', sources[0]!.url, undefined],
    ['the gateway', gw.grpc!.url, TOKEN],
  ];
  for (const [what, url, token] of targets) {
    const replay = await subscribe(url, token, { transactions: mine, slots: { s: {} }, commitment: 0, fromSlot: String(from) });
    t.teardown(() => replay.close());
    // Until the stream is live past the transfer's slot: a doubled replay would have come by then.
    await eventually(
      `${what}: live past the transfer's slot`,
      () => replay.updates.some((u) => u.slot !== undefined && Number(u.slot.slot) >= Number(landed.slot) + 5),
      DEADLINE_MS,
    );
    const replayed = replay.updates.filter((u) => u.transaction !== undefined && sigOf(u) === okSig);
    t.equal(replayed.length, 1, `${what}: the transfer replayed once`);
    t.equal(Number(replayed[0]?.transaction!.slot), Number(landed.slot), `${what}: in its slot`);
    // The first processed slot (a confirmed or finalized status names a slot further back).
    const firstSlot = replay.updates.find((u) => u.slot !== undefined && u.slot.status === 0)!.slot!;
    t.ok(Number(firstSlot.slot) >= from && Number(firstSlot.slot) <= from + 1, `${what}: starts at from_slot`);
    replay.close();
  }
});
