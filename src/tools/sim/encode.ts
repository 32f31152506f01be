// Accounts as Agave's UiAccount JSON (data, executable, lamports, owner, rentEpoch, space) in
// each encoding, built by concatenation so u64 fields keep their digits. Synthetic accounts
// (the syntheticAccounts knob) are pure functions of the key and cached for every node.

import { encodeBase58 } from '../../solana/base58.js';
import { accountOf } from './chain.js';
import type { AccountState } from './ledger.js';
import { serverError, type Slice } from './params.js';

const MAX_BASE58_BYTES = 128;
// Agave answers it as an invalid request (-32600), not invalid params (rpc.rs encode_account).
export const BASE58_TOO_LARGE = serverError(-32600, 'Encoded binary (base 58) data should be less than 128 bytes, please use Base64 encoding.');
const SYSTEM = '11111111111111111111111111111111';
const U64_MAX = '18446744073709551615';

// Node 20's zlib has no zstd: base64+zstd data is a zstd frame of raw (stored) blocks, which
// every zstd decoder reads.
const ZSTD_MAGIC = 0xfd2fb528;
const ZSTD_BLOCK = 128 * 1024;

export function zstdStored(data: Buffer): Buffer {
  const parts: Buffer[] = [];
  const head = Buffer.alloc(9);
  head.writeUInt32LE(ZSTD_MAGIC, 0);
  head[4] = 0xa0; // single segment, 4-byte content size
  head.writeUInt32LE(data.length, 5);
  parts.push(head);
  let off = 0;
  do {
    const n = Math.min(ZSTD_BLOCK, data.length - off);
    const last = off + n >= data.length ? 1 : 0;
    const bh = Buffer.alloc(3);
    bh.writeUIntLE(last | (n << 3), 0, 3); // block type 0: raw
    parts.push(bh, data.subarray(off, off + n));
    off += n;
  } while (off < data.length);
  return Buffer.concat(parts);
}

/** The `data` member in `encoding`, or null when base58 would be too long. */
function dataJson(data: Buffer, encoding: string): string | null {
  switch (encoding) {
    case 'binary':
      return data.length > MAX_BASE58_BYTES ? null : '"' + encodeBase58(data) + '"';
    case 'base58':
      return data.length > MAX_BASE58_BYTES ? null : '["' + encodeBase58(data) + '","base58"]';
    case 'base64+zstd':
      return '["' + zstdStored(data).toString('base64') + '","base64+zstd"]';
    default:
      // jsonParsed of a system or unknown account falls back to base64, as on Agave.
      return '["' + data.toString('base64') + '","base64"]';
  }
}

export interface Encodable {
  lamports: bigint | number;
  owner: string;
  executable: boolean;
  data: Buffer;
  rentEpoch: bigint | string;
}

/** UiAccount JSON, or BASE58_TOO_LARGE's condition as null. */
export function accountJson(a: Encodable, encoding: string, slice: Slice | null): string | null {
  const data = slice === null ? a.data : a.data.subarray(slice.offset, slice.offset + slice.length);
  const d = dataJson(data, encoding);
  if (d === null) return null;
  return (
    '{"data":' +
    d +
    ',"executable":' +
    a.executable +
    ',"lamports":' +
    a.lamports +
    ',"owner":"' +
    a.owner +
    '","rentEpoch":' +
    a.rentEpoch +
    ',"space":' +
    a.data.length +
    '}'
  );
}

const base64Cache = new WeakMap<AccountState, string>();

/** The base64, unsliced JSON of a ledger state, built once per state. */
export function stateJson(s: AccountState): string {
  let j = base64Cache.get(s);
  if (j === undefined) base64Cache.set(s, (j = accountJson(s, 'base64', null)!));
  return j;
}

// Synthetic accounts: the bound keeps a benchmark with random keys from growing without limit.
const SYNTHETIC_MAX = 20_000;
const synthetic = new Map<string, { lamports: number; json: string; data: Buffer }>();

export function syntheticAccount(key: string): { lamports: number; json: string; data: Buffer } {
  let hit = synthetic.get(key);
  if (hit === undefined) {
    const a = accountOf(key);
    hit = { lamports: a.lamports, data: a.data, json: accountJson({ ...a, owner: SYSTEM, executable: false, rentEpoch: U64_MAX }, 'base64', null)! };
    if (synthetic.size >= SYNTHETIC_MAX) synthetic.delete(synthetic.keys().next().value!);
    synthetic.set(key, hit);
  }
  return hit;
}

/** A synthetic account in any encoding. */
export function syntheticJson(key: string, encoding: string, slice: Slice | null): string | null {
  const a = syntheticAccount(key);
  if (slice === null && (encoding === 'base64' || encoding === 'jsonParsed')) return a.json;
  return accountJson({ lamports: a.lamports, data: a.data, owner: SYSTEM, executable: false, rentEpoch: U64_MAX }, encoding, slice);
}
