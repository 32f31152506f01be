// getPriorityFeeEstimate through the gateway against two simulated nodes with the fee market on
// (docs/priority-fees.md): every answer equals the percentiles this test recomputes from the
// blocks it reads from a node itself with getBlock, exactly. Helius's request shape verbatim.

import t from 'tap';
import { createHash } from 'node:crypto';
import { decodeBase58, encodeBase58 } from '../../src/solana/base58.js';
import { Cluster } from '../../src/tools/sim/node.js';
import { eventually } from '../helpers/eventually.js';
import { PLANES, startHarness, type Harness } from '../helpers/gateway.js';

const SLOT_MS = 100;
const WINDOW = 30;
/** The answer's newest slot is one of this many confirmed slots. */
const SPAN = 40;
const key = (s: string): string => encodeBase58(createHash('sha256').update(s).digest());
const ACCOUNTS = Array.from({ length: 5 }, (_, i) => key('fee-account-' + i));
const FEE_MARKET = { txPerSlot: 12, accounts: ACCOUNTS, writablePerTx: 3, prices: { min: 0, max: 2_000_000 }, seed: 7 };
const PCT = [0, 25, 50, 75, 95, 100];
const KEYS = ['min', 'low', 'medium', 'high', 'veryHigh', 'unsafeMax'];
const LEVELS = ['Min', 'Low', 'Medium', 'High', 'VeryHigh', 'UnsafeMax'];

interface Tx {
  price: number;
  writes: string[];
}

async function rpc(url: string, method: string, params: unknown): Promise<any> {
  const r = await fetch(url, { method: 'POST', body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }) });
  return ((await r.json()) as { result: unknown }).result;
}

/** A block's transactions read from its JSON encoding: the Compute Budget price and the writable keys by the header. */
async function blockTxs(url: string, slot: number): Promise<Tx[]> {
  const b = await rpc(url, 'getBlock', [slot, { commitment: 'confirmed', maxSupportedTransactionVersion: 0, rewards: false }]);
  return (b?.transactions ?? []).map((t: any) => {
    const m = t.transaction.message;
    const keys: string[] = m.accountKeys;
    const h = m.header;
    let price = 0;
    for (const ix of m.instructions) {
      const data = Buffer.from(decodeBase58(ix.data)!);
      if (keys[ix.programIdIndex] === 'ComputeBudget111111111111111111111111111111' && data[0] === 3) price = Number(data.readBigUInt64LE(1));
    }
    const writes = keys.filter((_, i) =>
      i < h.numRequiredSignatures ? i < h.numRequiredSignatures - h.numReadonlySignedAccounts : i < keys.length - h.numReadonlyUnsignedAccounts,
    );
    return { price, writes };
  });
}

const pct = (sorted: number[], p: number): number => (sorted.length === 0 ? 0 : sorted[p === 0 ? 0 : Math.ceil((p / 100) * sorted.length) - 1]!);

/** Every level over the blocks of (top − lookback, top], as docs/priority-fees.md defines it. */
function expected(blocks: Map<number, Tx[]>, top: number, lookback: number, accounts: string[]): number[] {
  const txs: Tx[] = [];
  for (let s = top - lookback + 1; s <= top; s++) txs.push(...(blocks.get(s) ?? []));
  const sorted = (list: Tx[]): number[] => list.map((x) => x.price).sort((a, b) => a - b);
  if (accounts.length === 0) return PCT.map((p) => pct(sorted(txs), p));
  return PCT.map((p) => Math.max(...accounts.map((a) => pct(sorted(txs.filter((x) => x.writes.includes(a))), p))));
}

/** A legacy transaction (unsigned) whose writable static keys are the payer and `writes`. */
function serializedTx(payer: string, writes: string[]): Buffer {
  const keys = [payer, ...writes, '11111111111111111111111111111111'].map((k) => Buffer.from(decodeBase58(k)!));
  return Buffer.concat([Buffer.from([1]), Buffer.alloc(64), Buffer.from([1, 0, 1, keys.length]), ...keys, Buffer.alloc(32), Buffer.from([0])]);
}

type Test = Parameters<Parameters<typeof t.test>[0]>[0];

async function start(t: Test, workers: number): Promise<Harness> {
  const c = new Cluster({ slotMs: SLOT_MS });
  const h = await startHarness({
    workers,
    sims: [
      { cluster: c, feeMarket: FEE_MARKET },
      { cluster: c, feeMarket: FEE_MARKET, lag: 1 },
    ],
    config: { health: { chainWatch: true }, fees: { estimates: { enabled: true, lookbackSlots: WINDOW } } },
  });
  t.teardown(() => h.close());
  return h;
}

for (const plane of PLANES) {
  t.test(`getPriorityFeeEstimate equals the percentiles of the blocks (${plane.name})`, async (t) => {
    const h = await start(t, plane.workers);
    const node = h.sims[0]!.url;
    const ask = async (arg: unknown): Promise<any> => (await h.call('getPriorityFeeEstimate', [arg])).json;
    await eventually('the gateway holds blocks', async () => (await ask({ options: { lookbackSlots: 5 } })).result !== undefined, 15_000);

    // The answer is over the blocks up to the newest the gateway holds: one of the last confirmed
    // slots (at first the watcher is still fetching the window, oldest first).
    const blocks = new Map<number, Tx[]>();
    const check = async (what: string, arg: unknown, accounts: string[], lookback: number, pick: (levels: number[]) => unknown): Promise<void> => {
      const got = await ask(arg);
      const confirmed = (await rpc(node, 'getSlot', [{ commitment: 'confirmed' }])) as number;
      for (let s = confirmed - lookback - SPAN; s <= confirmed; s++) if (!blocks.has(s)) blocks.set(s, await blockTxs(node, s));
      const tops = Array.from({ length: SPAN + 1 }, (_, i) => confirmed - SPAN + i);
      const match = tops.find((top) => JSON.stringify(pick(expected(blocks, top, lookback, accounts))) === JSON.stringify(got.result));
      t.ok(match !== undefined, `${what}: ${JSON.stringify(got.result)} is the recomputed answer at one of slots ${tops[0]}..${confirmed}`);
    };

    const all = (levels: number[]): unknown => ({ priorityFeeLevels: Object.fromEntries(KEYS.map((k, i) => [k, levels[i]])) });
    await check('every transaction, all levels', { options: { includeAllPriorityFeeLevels: true, lookbackSlots: 10 } }, [], 10, all);
    for (let l = 0; l < LEVELS.length; l++) {
      await check(
        `accountKeys, ${LEVELS[l]}`,
        { accountKeys: [ACCOUNTS[0], ACCOUNTS[1]], options: { priorityLevel: LEVELS[l], lookbackSlots: 20 } },
        [ACCOUNTS[0]!, ACCOUNTS[1]!],
        20,
        (v) => ({
          priorityFeeEstimate: v[l],
        }),
      );
    }
    await check('default level (Medium), whole window', { accountKeys: [ACCOUNTS[2]] }, [ACCOUNTS[2]!], WINDOW, (v) => ({ priorityFeeEstimate: v[2] }));
    const payer = key('payer');
    const tx = serializedTx(payer, [ACCOUNTS[3]!, ACCOUNTS[4]!]);
    await check(
      'a serialized transaction (Base58)',
      { transaction: encodeBase58(tx), options: { includeAllPriorityFeeLevels: true } },
      [payer, ACCOUNTS[3]!, ACCOUNTS[4]!],
      WINDOW,
      all,
    );
    await check(
      'a serialized transaction (Base64)',
      { transaction: tx.toString('base64'), options: { transactionEncoding: 'Base64', priorityLevel: 'High' } },
      [payer, ACCOUNTS[3]!, ACCOUNTS[4]!],
      WINDOW,
      (v) => ({ priorityFeeEstimate: v[3] }),
    );
    await check('recommended', { accountKeys: [ACCOUNTS[0]], options: { recommended: true } }, [ACCOUNTS[0]!], WINDOW, (v) => ({
      priorityFeeEstimate: Math.max(v[2]!, 10_000),
    }));

    // Helius's request, verbatim (the shape clients send).
    const helius = await h.post(
      JSON.stringify({
        jsonrpc: '2.0',
        id: '1',
        method: 'getPriorityFeeEstimate',
        params: [{ accountKeys: [ACCOUNTS[0]], options: { includeAllPriorityFeeLevels: true, lookbackSlots: 150 } }],
      }),
    );
    t.equal(helius.status, 200);
    t.same(Object.keys(JSON.parse(helius.text).result.priorityFeeLevels), KEYS, 'Helius answer shape');
    t.equal(helius.headers.get('x-service-node'), 'fees', 'answered by the gateway');

    for (const [what, arg] of [
      ['an unknown level', { options: { priorityLevel: 'Fast' } }],
      ['lookbackSlots 0', { options: { lookbackSlots: 0 } }],
      ['a bad key', { accountKeys: ['nope'] }],
      ['both transaction and accountKeys', { accountKeys: [], transaction: 'abc' }],
      ['a transaction that is none', { transaction: 'abc' }],
    ] as const) {
      const r = await ask(arg);
      t.equal(r.error?.code, -32602, `${what}: -32602 (${r.error?.message})`);
    }
    const none = await h.call('getPriorityFeeEstimate', []);
    t.equal(none.json.error.code, -32602, 'no params object: -32602');
  });
}

t.test("the sim's getRecentPrioritizationFees follows Agave's cache rule over its blocks", async (t) => {
  const h = await start(t, 0);
  const node = h.sims[0]!.url;
  const wanted = [ACCOUNTS[0]!, ACCOUNTS[1]!];
  const fees = (await rpc(node, 'getRecentPrioritizationFees', [wanted])) as { slot: number; prioritizationFee: number }[];
  t.equal(fees.length, 150, '150 slots');
  for (const f of fees.slice(-20)) {
    const txs = await blockTxs(node, f.slot).catch(() => []);
    if (txs.length === 0) continue; // not confirmed yet: getBlock does not show it
    let fee = Math.min(...txs.map((x) => x.price));
    for (const a of wanted) {
      const w = txs.filter((x) => x.writes.includes(a)).map((x) => x.price);
      if (w.length > 0) fee = Math.max(fee, Math.min(...w));
    }
    t.equal(f.prioritizationFee, fee, `slot ${f.slot}`);
  }
});
