// The simulated cluster node by node (docs/simulator.md): commitments, minContextSlot, sends
// with preflight, landing once, statuses walking to finalized, Agave's errors and limits.

import t from 'tap';
import { AccountRole, address, generateKeyPairSigner, getAddressEncoder, type KeyPairSigner } from '@solana/kit';
import { WebSocket } from 'undici';
import { Cluster, startSim, type SimNode, type SimOptions } from '../../src/tools/sim/node.js';
import { eventually, eventuallyValue } from '../helpers/eventually.js';
import { createAccountIx, signTx, transferIx } from '../helpers/kit-tx.js';

const SLOT_MS = 50;
const DEADLINE_MS = 15_000;
type Test = Parameters<Parameters<typeof t.test>[0]>[0];

interface Answer {
  result?: any;
  error?: { code: number; message: string; data?: any };
}

async function call(node: SimNode, method: string, params?: unknown[]): Promise<Answer> {
  const r = await fetch(node.url, { method: 'POST', body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, ...(params ? { params } : {}) }) });
  return (await r.json()) as Answer;
}

async function nodes(t: Test, opts: Partial<SimOptions>[], clusterOpts: { skipRate?: number } = {}): Promise<SimNode[]> {
  const cluster = new Cluster({ slotMs: SLOT_MS, ...clusterOpts });
  const list = await Promise.all(opts.map((o, i) => startSim({ id: `c${i}`, port: 0, cluster, ...o })));
  t.teardown(() => Promise.all(list.map((n) => n.close())));
  return list;
}

/** A key with `sol` SOL at confirmed on `node`. */
async function funded(node: SimNode, sol = 2): Promise<KeyPairSigner> {
  const payer = await generateKeyPairSigner();
  const lamports = sol * 1_000_000_000;
  t.match((await call(node, 'requestAirdrop', [payer.address, lamports])).result, /^[1-9A-HJ-NP-Za-km-z]{86,88}$/);
  await eventually(
    'the airdrop',
    async () => (await call(node, 'getBalance', [payer.address, { commitment: 'confirmed' }])).result.value === lamports,
    DEADLINE_MS,
  );
  return payer;
}

async function latest(node: SimNode, commitment = 'finalized'): Promise<{ blockhash: string; lastValidBlockHeight: bigint }> {
  const v = (await call(node, 'getLatestBlockhash', [{ commitment }])).result.value;
  return { blockhash: v.blockhash, lastValidBlockHeight: BigInt(v.lastValidBlockHeight) };
}

t.test('commitments: each method answers per commitment; minContextSlot; -32016 from a lagging node', async (t) => {
  const [fast, lagging] = await nodes(t, [{}, { lag: 20 }]);
  const slots = async (n: SimNode, method: string): Promise<number[]> =>
    Promise.all(
      ['processed', 'confirmed', 'finalized'].map(async (c) => {
        const r = (await call(n, method, [{ commitment: c }])).result;
        return typeof r === 'number' ? r : method === 'getEpochInfo' ? r.absoluteSlot : r.context.slot;
      }),
    );
  for (const m of ['getSlot', 'getBlockHeight', 'getLatestBlockhash', 'getEpochInfo']) {
    // The three reads run together; one that straddles a slot tick is read again (a few times at most).
    let [p, c, f] = await slots(fast, m);
    for (let k = 0; k < 5 && !(p! >= c! && c! > f! && p! - f! >= 30 && p! - f! <= 34); k++) [p, c, f] = await slots(fast, m);
    t.ok(p! >= c! && c! > f!, `${m}: processed ${p} >= confirmed ${c} > finalized ${f}`);
    t.ok(p! - f! >= 30 && p! - f! <= 34, `${m}: finalized about 32 behind`);
  }
  const [fp] = fast.views();
  const [lp] = lagging.views();
  t.ok(fp - lp >= 19 && fp - lp <= 21, 'the lagging node is 20 slots behind');
  t.equal((await call(fast, 'getSlot', [{ commitment: 'processed', minContextSlot: lp }])).error, undefined);
  const refused = await call(lagging, 'getBalance', ['11111111111111111111111111111111', { commitment: 'processed', minContextSlot: fp + 5 }]);
  t.equal(refused.error?.code, -32016);
  t.equal(refused.error?.message, 'Minimum context slot has not been reached');
  t.ok(refused.error?.data.contextSlot < fp + 5, `data.contextSlot ${refused.error?.data.contextSlot}`);
  t.same((await call(fast, 'getSlot', [{ commitment: 'recent' }])).error, {
    code: -32602,
    message: 'Invalid params: unknown variant `recent`, expected one of `processed`, `confirmed`, `finalized`.',
  });
});

t.test('a transfer: statuses walk processed → confirmed → finalized; balances by view; getTransaction; lands once', async (t) => {
  const [fast, lagging] = await nodes(t, [{}, { lag: 10 }]);
  const payer = await funded(fast);
  const to = address((await generateKeyPairSigner()).address);
  const tx = await signTx(payer, [transferIx(payer, to, 1_000_000n)], (await latest(fast)).blockhash, 0n, 'legacy');
  t.equal((await call(fast, 'sendTransaction', [tx.wire, { encoding: 'base64' }])).result, tx.signature);
  t.equal(
    (await call(lagging, 'sendTransaction', [tx.wire, { encoding: 'base64', preflightCommitment: 'processed' }])).result,
    tx.signature,
    'a copy to another node is accepted',
  );
  const seen = new Set<string>();
  await eventually(
    'the status to reach finalized',
    async () => {
      const v = (await call(fast, 'getSignatureStatuses', [[tx.signature]])).result.value[0];
      if (v !== null) seen.add(v.confirmationStatus);
      return v?.confirmationStatus === 'finalized' && v.confirmations === null;
    },
    DEADLINE_MS,
  );
  t.ok(seen.has('confirmed') || seen.has('processed'), `walked through ${[...seen].join(', ')}`);
  t.equal((await call(fast, 'getBalance', [to])).result.value, 1_000_000, 'finalized balance');
  const again = await call(fast, 'sendTransaction', [tx.wire, { encoding: 'base64' }]);
  t.equal(again.error?.code, -32002);
  t.equal(again.error?.message, 'Transaction simulation failed: This transaction has already been processed');
  t.equal(again.error?.data.err, 'AlreadyProcessed');
  const skip = await call(fast, 'sendTransaction', [tx.wire, { encoding: 'base64', skipPreflight: true }]);
  t.equal(skip.result, tx.signature, 'skipPreflight accepts it');
  const sigs = (await call(fast, 'getSignaturesForAddress', [to])).result;
  t.equal(sigs.length, 1, 'landed once');
  t.equal(sigs[0].signature, tx.signature);
  t.equal((await call(fast, 'getBalance', [payer.address])).result.value, 2_000_000_000 - 1_000_000 - 5000, 'paid once');
  const got = (await call(fast, 'getTransaction', [tx.signature])).result;
  t.equal(got.meta.fee, 5000);
  t.same(got.meta.status, { Ok: null });
  t.equal(got.transaction.message.recentBlockhash.length > 30, true);
  t.equal(
    (await call(fast, 'getTransaction', [tx.signature, { commitment: 'processed' }])).error?.message,
    'Method does not support commitment below `confirmed`',
  );
  const b64 = (await call(fast, 'getTransaction', [tx.signature, { encoding: 'base64' }])).result.transaction;
  t.same(b64, [tx.wire, 'base64']);
});

t.test('sends refused as Agave refuses them: tampered signature, unseen and expired blockhash, behind', async (t) => {
  const [fast, lagging, behind] = await nodes(t, [{}, { lag: 20 }, { lag: 200 }]);
  const payer = await funded(fast);
  const to = address((await generateKeyPairSigner()).address);
  const tx = await signTx(payer, [transferIx(payer, to, 1_000_000n)], (await latest(fast, 'processed')).blockhash, 0n);
  const bytes = Buffer.from(tx.wire, 'base64');
  bytes[5] ^= 0xff;
  const tampered = bytes.toString('base64');
  t.same((await call(fast, 'sendTransaction', [tampered, { encoding: 'base64' }])).error, {
    code: -32003,
    message: 'Transaction signature verification failure',
  });
  const badSig = (await call(fast, 'sendTransaction', [tampered, { encoding: 'base64', skipPreflight: true }])).result as string;
  t.match(badSig, /^[1-9A-HJ-NP-Za-km-z]{86,88}$/, 'skipPreflight: accepted, as a node forwards it');
  // A blockhash from the fast node's processed slot is 20 slots in the lagging node's future.
  const unseen = await call(lagging, 'sendTransaction', [tx.wire, { encoding: 'base64', preflightCommitment: 'processed' }]);
  t.equal(unseen.error?.code, -32002);
  t.equal(unseen.error?.message, 'Transaction simulation failed: Blockhash not found');
  t.equal(unseen.error?.data.err, 'BlockhashNotFound');
  t.equal((await call(lagging, 'isBlockhashValid', [(await latest(fast, 'processed')).blockhash, { commitment: 'processed' }])).result.value, false);
  const h = await call(behind, 'sendTransaction', [tx.wire, { encoding: 'base64' }]);
  t.same(h.error, { code: -32005, message: 'Node is behind by 200 slots', data: { numSlotsBehind: 200 } });
  t.same((await call(behind, 'getHealth')).error, { code: -32005, message: 'Node is behind by 200 slots', data: { numSlotsBehind: 200 } });
  // The tampered copy never lands; the good one does.
  t.equal((await call(fast, 'sendTransaction', [tx.wire, { encoding: 'base64', preflightCommitment: 'processed' }])).result, tx.signature);
  await eventually(
    'the good copy to land',
    async () => (await call(fast, 'getBalance', [to, { commitment: 'processed' }])).result.value === 1_000_000,
    DEADLINE_MS,
  );
  t.same((await call(fast, 'getSignatureStatuses', [[badSig]])).result.value, [null], 'the tampered copy never landed');
  t.equal((await call(fast, 'sendTransaction', ['not base58 0OIl'])).error?.message, "invalid base58 encoding: InvalidCharacter { character: ' ', index: 3 }");
  t.match((await call(fast, 'sendTransaction', ['AQID', { encoding: 'base64' }])).error, { code: -32602, message: /^failed to deserialize/ });
});

t.test('errors and limits: pubkeys, encodings, 100 keys, blocks, skipped and cleaned-up slots', async (t) => {
  const [node, pruned] = await nodes(t, [{}, { archiveSlots: 100 }], { skipRate: 0.3 });
  t.same((await call(node, 'getBalance', ['not-a-key'])).error, { code: -32602, message: 'Invalid param: Invalid' });
  t.same((await call(node, 'getAccountInfo', ['1111'])).error, { code: -32602, message: 'Invalid param: WrongSize' });
  t.same((await call(node, 'getAccountInfo', ['11111111111111111111111111111111', { encoding: 'hex' }])).error, {
    code: -32602,
    message: 'Invalid params: unknown variant `hex`, expected one of `binary`, `base58`, `base64`, `jsonParsed`, `base64+zstd`.',
  });
  const keys = Array.from({ length: 101 }, () => '11111111111111111111111111111111');
  t.same((await call(node, 'getMultipleAccounts', [keys])).error, { code: -32602, message: 'Too many inputs provided; max 100' });
  const fresh = (await generateKeyPairSigner()).address;
  t.equal((await call(node, 'getBalance', [fresh])).result.value, 0, 'a fresh key: 0');
  t.equal((await call(node, 'getAccountInfo', [fresh])).result.value, null, 'a fresh key: null');
  const system = (await call(node, 'getAccountInfo', ['11111111111111111111111111111111', { encoding: 'jsonParsed' }])).result.value;
  t.equal(system.executable, true, 'a program account is executable');
  t.equal(system.data[1], 'base64', 'jsonParsed falls back to base64');
  const zstd = (await call(node, 'getAccountInfo', ['11111111111111111111111111111111', { encoding: 'base64+zstd' }])).result.value.data;
  t.equal(zstd[1], 'base64+zstd');
  t.equal(Buffer.from(zstd[0], 'base64').readUInt32LE(0), 0xfd2fb528, 'a zstd frame');
  t.equal((await call(node, 'getMinimumBalanceForRentExemption', [0])).result, 890880);
  t.match((await call(node, 'getIdentity')).result.identity, /^[1-9A-HJ-NP-Za-km-z]{32,44}$/);
  t.match((await call(node, 'getGenesisHash')).result, /^[1-9A-HJ-NP-Za-km-z]{32,44}$/);
  t.same((await call(node, 'getNoSuchThing')).error, { code: -32601, message: 'Method not found' });

  const [processed, , finalized] = node.views();
  t.equal((await call(node, 'getBlockTime', [processed + 50])).error?.code, -32004);
  let skipped = finalized - 1;
  let produced = finalized - 1;
  while (!node.cluster.skipped(skipped)) skipped--;
  while (node.cluster.skipped(produced)) produced--;
  t.same((await call(node, 'getBlockTime', [skipped])).error, {
    code: -32007,
    message: `Slot ${skipped} was skipped, or missing due to ledger jump to recent snapshot`,
  });
  t.type((await call(node, 'getBlockTime', [produced])).result, 'number');
  const first = (await call(pruned, 'getFirstAvailableBlock')).result as number;
  t.ok(first > 0);
  const cleaned = (await call(pruned, 'getBlockTime', [first - 10])).error as { code: number; message: string };
  t.equal(cleaned.code, -32001);
  // The window moves on with the slots: the first available block may be a later one by now.
  const named = /^Block (\d+) cleaned up, does not exist on node\. First available block: (\d+)$/.exec(cleaned.message);
  t.ok(named !== null && Number(named[1]) === first - 10 && Number(named[2]) >= first, cleaned.message);
  // With long-term storage, old blocks are found there; a skipped one answers -32009.
  pruned.set({ longTermStorage: true });
  let oldSkipped = first - 10;
  while (!pruned.cluster.skipped(oldSkipped)) oldSkipped--;
  let oldProduced = first - 10;
  while (pruned.cluster.skipped(oldProduced)) oldProduced--;
  t.same((await call(pruned, 'getBlockTime', [oldSkipped])).error, {
    code: -32009,
    message: `Slot ${oldSkipped} was skipped, or missing in long-term storage`,
  });
  t.type((await call(pruned, 'getBlockTime', [oldProduced])).result, 'number');
});

t.test('getProgramAccounts with dataSize and memcmp; WS account, program, logs and signature notifications', async (t) => {
  const [node] = await nodes(t, [{}]);
  const payer = await funded(node);
  const owner = await generateKeyPairSigner();
  const account = await generateKeyPairSigner();
  const ws = new WebSocket(node.wsUrl);
  const frames: any[] = [];
  ws.addEventListener('message', (e) => frames.push(JSON.parse(String(e.data))));
  await new Promise((r) => ws.addEventListener('open', r));
  t.teardown(() => ws.close());
  const subscribe = (id: number, method: string, params: unknown[]): void => ws.send(JSON.stringify({ jsonrpc: '2.0', id, method, params }));
  subscribe(1, 'accountSubscribe', [account.address, { encoding: 'base64', commitment: 'confirmed' }]);
  subscribe(2, 'programSubscribe', [owner.address, { encoding: 'base64', commitment: 'processed' }]);
  subscribe(3, 'logsSubscribe', [{ mentions: [account.address] }, { commitment: 'processed' }]);
  await eventually('three subscriptions', () => frames.filter((f) => typeof f.result === 'number').length === 3);
  const ownerBytes = new Uint8Array(getAddressEncoder().encode(owner.address));
  const tx = await signTx(payer, [createAccountIx(payer, account, 2_000_000n, 16n, ownerBytes)], (await latest(node)).blockhash, 0n);
  subscribe(4, 'signatureSubscribe', [tx.signature, { commitment: 'finalized' }]);
  t.equal((await call(node, 'sendTransaction', [tx.wire, { encoding: 'base64' }])).result, tx.signature);
  const methods = ['accountNotification', 'programNotification', 'logsNotification', 'signatureNotification'];
  await eventually(
    () => `all four notifications (${frames.map((f) => f.method).join(',')})`,
    () => methods.every((m) => frames.some((f) => f.method === m)),
    DEADLINE_MS,
  );
  const acct = frames.find((f) => f.method === 'accountNotification').params.result;
  t.equal(acct.value.owner, owner.address);
  t.equal(acct.value.space, 16);
  t.equal(frames.find((f) => f.method === 'programNotification').params.result.value.pubkey, account.address);
  t.equal(frames.find((f) => f.method === 'logsNotification').params.result.value.signature, tx.signature);
  t.same(frames.find((f) => f.method === 'signatureNotification').params.result.value, { err: null });
  t.equal(node.stats.wsSubscriptionsByMethod.get('signatureSubscribe'), undefined, 'a signature subscription ends once notified');

  const list = async (filters: unknown[]): Promise<string[]> =>
    ((await call(node, 'getProgramAccounts', [owner.address, { encoding: 'base64', filters }])).result as { pubkey: string }[]).map((a) => a.pubkey);
  t.same(await list([{ dataSize: 16 }]), [account.address]);
  t.same(await list([{ dataSize: 17 }]), []);
  t.same(await list([{ memcmp: { offset: 0, bytes: '11' } }]), [account.address]);
  t.same(await list([{ memcmp: { offset: 0, bytes: '2' } }]), []);
  const withCtx = (await call(node, 'getProgramAccounts', [owner.address, { withContext: true, encoding: 'base64' }])).result;
  t.ok(withCtx.context.slot > 0);
  t.ok(await eventuallyValue('fees', async () => ((await call(node, 'getRecentPrioritizationFees', [])).result as unknown[]).length > 0 || undefined));
  const message = Buffer.from(tx.wire, 'base64')
    .subarray(1 + 64 * 2)
    .toString('base64');
  t.equal((await call(node, 'getFeeForMessage', [message, { commitment: 'processed' }])).result.value, 10_000, 'two signatures');
});

t.test('token program: getTokenAccountBalance, getTokenAccountsByOwner, jsonParsed', async (t) => {
  const [node] = await nodes(t, [{}]);
  const payer = await funded(node);
  const mint = await generateKeyPairSigner();
  const account = await generateKeyPairSigner();
  const TOKEN = address('TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA');
  const enc = getAddressEncoder();
  const tokenBytes = new Uint8Array(enc.encode(TOKEN));
  const payerBytes = new Uint8Array(enc.encode(payer.address));
  const initMint = new Uint8Array([20, 6, ...payerBytes, 0]);
  const initAccount = new Uint8Array([18, ...payerBytes]);
  const mintTo = new Uint8Array(9);
  mintTo[0] = 7;
  new DataView(mintTo.buffer).setBigUint64(1, 1_500_000n, true);
  const ixs = [
    createAccountIx(payer, mint, 1_461_600n, 82n, tokenBytes),
    { programAddress: TOKEN, accounts: [{ address: mint.address, role: AccountRole.WRITABLE }], data: initMint },
    createAccountIx(payer, account, 2_039_280n, 165n, tokenBytes),
    {
      programAddress: TOKEN,
      accounts: [
        { address: account.address, role: AccountRole.WRITABLE },
        { address: mint.address, role: AccountRole.READONLY },
      ],
      data: initAccount,
    },
    {
      programAddress: TOKEN,
      accounts: [
        { address: mint.address, role: AccountRole.WRITABLE },
        { address: account.address, role: AccountRole.WRITABLE },
        { address: payer.address, role: AccountRole.READONLY_SIGNER },
      ],
      data: mintTo,
    },
  ];
  const tx = await signTx(payer, ixs, (await latest(node)).blockhash, 0n);
  const sent = await call(node, 'sendTransaction', [tx.wire, { encoding: 'base64' }]);
  t.equal(sent.result, tx.signature, JSON.stringify(sent.error));
  const balance = await eventuallyValue(
    'the token balance',
    async () => (await call(node, 'getTokenAccountBalance', [account.address, { commitment: 'processed' }])).result?.value,
    DEADLINE_MS,
  );
  t.same(balance, { amount: '1500000', decimals: 6, uiAmount: 1.5, uiAmountString: '1.5' });
  const list = (await call(node, 'getTokenAccountsByOwner', [payer.address, { mint: mint.address }, { encoding: 'jsonParsed', commitment: 'processed' }]))
    .result.value;
  t.equal(list.length, 1);
  t.equal(list[0].pubkey, account.address);
  t.same(list[0].account.data.parsed.info.tokenAmount.amount, '1500000');
  t.equal(list[0].account.data.program, 'spl-token');
  t.same((await call(node, 'getTokenAccountBalance', [payer.address, { commitment: 'processed' }])).error, {
    code: -32602,
    message: 'Invalid param: not a Token account',
  });
  const info = (await call(node, 'getAccountInfo', [account.address, { encoding: 'jsonParsed', commitment: 'processed' }])).result.value;
  t.equal(info.data.parsed.type, 'account');
});
