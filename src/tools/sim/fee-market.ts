// The fee market knob (docs/simulator.md "Fee market"): every produced slot's block carries
// `txPerSlot` synthetic transactions, each paying a compute-unit price drawn from the knob's
// distribution and write-locking some of its accounts. They are a pure function of the knob and
// the slot (seeded, docs/simulator.md), so every node given the same knob shows the same blocks,
// and a fee estimate has a ground truth to be checked against. They change no account state.

import { createHash } from 'node:crypto';
import { decodeBase58 } from '../../solana/base58.js';
import { rng } from '../rng.js';
import { blockhashOf } from './chain.js';
import { budgetOf, feeOf } from './fees.js';
import type { TxRecord } from './ledger.js';
import { parseTx, pubkeyBytes } from './wire.js';

export interface FeeMarket {
  /** Synthetic transactions in every produced slot (0..1000). */
  txPerSlot: number;
  /** The accounts they write-lock (1..64 pubkeys). */
  accounts: string[];
  /** Each write-locks between 1 and this many distinct accounts of `accounts` (1..30). */
  writablePerTx: number;
  /** Compute-unit prices (micro-lamports): uniform integers in [min, max], or one of a list, uniformly. */
  prices: { min: number; max: number } | { list: number[] };
  /** Seeds the draws: the same seed gives the same blocks in any process. */
  seed: number;
}

const COMPUTE_BUDGET = decodeBase58('ComputeBudget111111111111111111111111111111')!;
/** The SetComputeUnitLimit every synthetic transaction carries. */
const UNIT_LIMIT = 200_000;
/** Two compute budget instructions, 150 units each, as Agave counts them. */
const UNITS = 300n;
const PAYER_LAMPORTS = 1_000_000_000n;
/** Blocks kept built, per knob. */
const MAX_CACHED_SLOTS = 600;
const MAX_PRICE = Number.MAX_SAFE_INTEGER;

/** Checks the knob; returns the error message or null. */
export function feeMarketError(v: unknown): string | null {
  if (v === null) return null;
  const m = v as Partial<FeeMarket>;
  const int = (x: unknown, min: number, max: number): boolean => typeof x === 'number' && Number.isInteger(x) && x >= min && x <= max;
  if (typeof v !== 'object' || Array.isArray(v)) return 'feeMarket must be null or { txPerSlot, accounts, writablePerTx, prices, seed }';
  for (const k of Object.keys(m)) if (!['txPerSlot', 'accounts', 'writablePerTx', 'prices', 'seed'].includes(k)) return `feeMarket: unknown member ${k}`;
  if (!int(m.txPerSlot, 0, 1000)) return 'feeMarket.txPerSlot must be an integer from 0 to 1000';
  const accounts = m.accounts;
  if (!Array.isArray(accounts) || accounts.length < 1 || accounts.length > 64 || !accounts.every((a) => typeof a === 'string' && pubkeyBytes(a) !== null))
    return 'feeMarket.accounts must be 1 to 64 base58 pubkeys';
  if (!int(m.writablePerTx, 1, 30)) return 'feeMarket.writablePerTx must be an integer from 1 to 30';
  if (!int(m.seed, 0, 0xffffffff)) return 'feeMarket.seed must be an integer from 0 to 2^32-1';
  const p = m.prices as { min?: unknown; max?: unknown; list?: unknown } | undefined;
  if (typeof p !== 'object' || p === null) return 'feeMarket.prices must be { min, max } or { list }';
  if ('list' in p) {
    const list = p.list;
    if (!Array.isArray(list) || list.length < 1 || list.length > 1000 || !list.every((x) => int(x, 0, MAX_PRICE)))
      return 'feeMarket.prices.list must be 1 to 1000 integers >= 0';
  } else if (!int(p.min, 0, MAX_PRICE) || !int(p.max, 0, MAX_PRICE) || (p.min as number) > (p.max as number)) {
    return 'feeMarket.prices must be { min, max } with integers 0 <= min <= max';
  }
  return null;
}

/** A 32-bit seed for transaction `i` of `slot`. */
function seedOf(seed: number, slot: number, i: number): number {
  return createHash('sha256').update(`jumpgate-sim-fee:${seed}:${slot}:${i}`).digest().readUInt32LE(0);
}

/** The synthetic transaction `i` of `slot`: a fee payer, its write-locked accounts, two compute budget instructions. */
function syntheticTx(m: FeeMarket, slot: number, i: number): TxRecord {
  const r = rng(seedOf(m.seed, slot, i));
  const p = m.prices;
  const price = 'list' in p ? p.list[Math.floor(r() * p.list.length)]! : p.min + Math.floor(r() * (p.max - p.min + 1));
  // k distinct accounts: a partial Fisher-Yates shuffle of the indices.
  const n = m.accounts.length;
  const k = 1 + Math.floor(r() * Math.min(m.writablePerTx, n));
  const idx = Array.from({ length: n }, (_, j) => j);
  for (let j = 0; j < k; j++) {
    const pick = j + Math.floor(r() * (n - j));
    [idx[j], idx[pick]] = [idx[pick]!, idx[j]!];
  }
  const payer = createHash('sha256').update(`jumpgate-sim-fee-payer:${m.seed}:${i}`).digest();
  const keys = [payer, ...idx.slice(0, k).map((j) => pubkeyBytes(m.accounts[j]!)!), Buffer.from(COMPUTE_BUDGET)];
  const program = keys.length - 1;
  const limit = Buffer.alloc(5);
  limit[0] = 2;
  limit.writeUInt32LE(UNIT_LIMIT, 1);
  const unitPrice = Buffer.alloc(9);
  unitPrice[0] = 3;
  unitPrice.writeBigUInt64LE(BigInt(price), 1);
  const message = Buffer.concat([
    Buffer.from([1, 0, 1, keys.length]),
    ...keys,
    Buffer.from(decodeBase58(blockhashOf(slot - 1))!),
    Buffer.from([2, program, 0, 5]),
    limit,
    Buffer.from([program, 0, 9]),
    unitPrice,
  ]);
  const sig = createHash('sha512').update(message).digest();
  sig[0] = sig[0]! | 0x80;
  const tx = parseTx(Buffer.concat([Buffer.from([1]), sig, message]));
  const fee = feeOf(tx);
  const pre = tx.keys.map((_, j) => (j === 0 ? PAYER_LAMPORTS : 0n));
  return {
    signature: tx.signatures[0]!,
    slot,
    tx,
    err: null,
    logs: [
      'Program ComputeBudget111111111111111111111111111111 invoke [1]',
      'Program ComputeBudget111111111111111111111111111111 success',
      'Program ComputeBudget111111111111111111111111111111 invoke [1]',
      'Program ComputeBudget111111111111111111111111111111 success',
    ],
    fee,
    units: UNITS,
    preBalances: pre,
    postBalances: pre.map((b, j) => (j === 0 ? b - fee : b)),
    unitPrice: budgetOf(tx).unitPrice,
  };
}

const built = new WeakMap<FeeMarket, Map<number, TxRecord[]>>();

/** The synthetic transactions of a produced slot under knob `m` (null: none). */
export function syntheticTxs(m: FeeMarket | null, slot: number): readonly TxRecord[] {
  if (m === null || m.txPerSlot === 0) return [];
  let cache = built.get(m);
  if (cache === undefined) built.set(m, (cache = new Map()));
  let txs = cache.get(slot);
  if (txs === undefined) {
    txs = Array.from({ length: m.txPerSlot }, (_, i) => syntheticTx(m, slot, i));
    cache.set(slot, txs);
    if (cache.size > MAX_CACHED_SLOTS) cache.delete(cache.keys().next().value!);
  }
  return txs;
}
