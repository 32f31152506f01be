// What a serialized transaction (legacy or v0) says about fees: the static account keys it
// write-locks (by its header) and the compute-unit price its Compute Budget instruction sets.
// Accounts loaded from lookup tables are not here (a block's meta lists them).

import { encodeBase58 } from '../solana/base58.js';

export interface TxFees {
  /** Micro-lamports per compute unit; 0 when it sets none. */
  price: number;
  writes: string[];
  /** It calls the vote program. */
  vote: boolean;
}

const COMPUTE_BUDGET = 'ComputeBudget111111111111111111111111111111';
const VOTE = 'Vote111111111111111111111111111111111111111';
const SET_COMPUTE_UNIT_PRICE = 3;

/** The transaction's fee facts, or null when the bytes are no transaction. */
export function readTxFees(b: Uint8Array): TxFees | null {
  let pos = 0;
  const shortvec = (): number => {
    let v = 0;
    for (let shift = 0; shift < 21; shift += 7) {
      if (pos >= b.length) return -1;
      const x = b[pos++]!;
      v |= (x & 0x7f) << shift;
      if ((x & 0x80) === 0) return v;
    }
    return -1;
  };
  const sigs = shortvec();
  if (sigs < 1) return null;
  pos += 64 * sigs;
  if (pos + 3 > b.length) return null;
  if ((b[pos]! & 0x80) !== 0) pos++;
  const required = b[pos]!;
  const roSigned = b[pos + 1]!;
  const roUnsigned = b[pos + 2]!;
  pos += 3;
  const n = shortvec();
  if (n < required || n < 1 || pos + 32 * n + 32 > b.length || roUnsigned + required > n || roSigned >= Math.max(required, 1)) return null;
  const keys: string[] = [];
  const writes: string[] = [];
  for (let i = 0; i < n; i++) {
    const k = encodeBase58(b.subarray(pos + 32 * i, pos + 32 * i + 32));
    keys.push(k);
    if (i < required ? i < required - roSigned : i < n - roUnsigned) writes.push(k);
  }
  pos += 32 * n + 32;
  const ixs = shortvec();
  if (ixs < 0) return null;
  let price = 0;
  let vote = false;
  for (let i = 0; i < ixs; i++) {
    if (pos >= b.length) return null;
    const program = keys[b[pos++]!];
    const accounts = shortvec();
    if (accounts < 0) return null;
    pos += accounts;
    const len = shortvec();
    if (len < 0 || pos + len > b.length) return null;
    if (program === COMPUTE_BUDGET && len >= 9 && b[pos] === SET_COMPUTE_UNIT_PRICE) {
      price = Number(Buffer.from(b.buffer, b.byteOffset + pos + 1, 8).readBigUInt64LE(0));
    } else if (program === VOTE) vote = true;
    pos += len;
  }
  return { price, writes, vote };
}
