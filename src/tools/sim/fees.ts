// Fees as Agave charges them: 5000 lamports per signature plus the prioritization fee,
// ceil(compute unit price (micro-lamports) × compute unit limit / 1e6), both read from the
// Compute Budget program's instructions.

import type { ParsedTx } from './wire.js';

export const LAMPORTS_PER_SIGNATURE = 5000;
const COMPUTE_BUDGET = 'ComputeBudget111111111111111111111111111111';
const DEFAULT_UNITS_PER_INSTRUCTION = 200_000;
const MAX_UNITS = 1_400_000;

export interface Budget {
  unitLimit: number;
  /** Micro-lamports per compute unit. */
  unitPrice: bigint;
}

export function budgetOf(tx: ParsedTx): Budget {
  let limit = -1;
  let price = 0n;
  let others = 0;
  for (const ix of tx.instructions) {
    if (tx.keys[ix.programIndex] !== COMPUTE_BUDGET) {
      others++;
      continue;
    }
    const d = ix.data;
    if (d[0] === 2 && d.length >= 5) limit = d.readUInt32LE(1);
    else if (d[0] === 3 && d.length >= 9) price = d.readBigUInt64LE(1);
  }
  const unitLimit = limit >= 0 ? Math.min(limit, MAX_UNITS) : Math.min(others * DEFAULT_UNITS_PER_INSTRUCTION, MAX_UNITS);
  return { unitLimit, unitPrice: price };
}

export function feeOf(tx: ParsedTx): bigint {
  const { unitLimit, unitPrice } = budgetOf(tx);
  const priority = (unitPrice * BigInt(unitLimit) + 999_999n) / 1_000_000n;
  return BigInt(tx.numRequiredSignatures * LAMPORTS_PER_SIGNATURE) + priority;
}
