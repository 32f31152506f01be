// Account answers as Agave prints them. jsonrpc-core writes the envelope from its struct
// (jsonrpc, result or error, id) but the result through a serde_json Value, whose maps sort
// their keys: hence context's apiVersion before slot, and UiAccount's data, executable,
// lamports, owner, rentEpoch, space. u64 fields are copied from their digits.

import { encodeBase58 } from '../solana/base58.js';
import type { AccountState, AccountValue } from './account-value.js';
import { GET_BALANCE, GET_MULTIPLE_ACCOUNTS, type AccountRead } from './account-read.js';

/** Agave's MAX_BASE58_BYTES: base58 and binary data (after dataSlice) may not be longer. */
export const MAX_BASE58_BYTES = 128;

const HEAD = '{"jsonrpc":"2.0","result":{"context":{"apiVersion":"';
// encode_account answers this with ErrorCode::InvalidRequest (-32600), not invalid_params.
const BASE58_TOO_LARGE =
  '{"jsonrpc":"2.0","error":{"code":-32600,"message":"Encoded binary (base 58) data should be less than 128 bytes, please use Base64 encoding."},"id":';

/** What a state prints the same way whatever the encoding and slice. */
interface Pieces {
  /** ',"executable":…,"space":N}' */
  tail: string;
  /** The whole UiAccount in base64 without a slice (the common read), built on first use. */
  base64: string | undefined;
}

// States are immutable and shared by every read of their key at their slot: their text is
// built once and dropped with them.
const pieces = new WeakMap<AccountValue, Pieces>();

function piecesOf(a: AccountValue): Pieces {
  let p = pieces.get(a);
  if (p === undefined) {
    const tail =
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
      '}';
    pieces.set(a, (p = { tail, base64: undefined }));
  }
  return p;
}

/** The bytes dataSlice selects, as Agave's slice_data: an offset past the end selects none. */
function sliced(data: Buffer, read: AccountRead): Buffer {
  if (read.sliceLength < 0) return data;
  const start = read.sliceOffset;
  if (start >= data.length) return data.subarray(0, 0);
  return data.subarray(start, read.sliceLength > data.length - start ? data.length : start + read.sliceLength);
}

/** UiAccount JSON, or null when base58 would be too long. */
function accountJson(a: AccountValue, read: AccountRead): string | null {
  const p = piecesOf(a);
  const encoding = read.encoding;
  if (encoding === 'base64') {
    if (read.sliceLength < 0) return (p.base64 ??= '{"data":["' + a.data.toString('base64') + '","base64"]' + p.tail);
    return '{"data":["' + sliced(a.data, read).toString('base64') + '","base64"]' + p.tail;
  }
  const data = sliced(a.data, read);
  if (data.length > MAX_BASE58_BYTES) return null;
  const text = encodeBase58(data);
  return (encoding === 'binary' ? '{"data":"' + text + '"' : '{"data":["' + text + '","base58"]') + p.tail;
}

function withId(text: string, rawId: string | Buffer): Buffer {
  if (typeof rawId === 'string') return Buffer.from(text + rawId + '}');
  const n = Buffer.byteLength(text);
  const out = Buffer.allocUnsafe(n + rawId.length + 1);
  out.write(text, 0, 'utf8');
  rawId.copy(out, n);
  out[n + rawId.length] = 0x7d; // }
  return out;
}

/**
 * The whole response body for `read` answered from `states` (one per key, in order) at
 * `slot`, as an Agave node of `apiVersion` prints it. `rawId` is the request's id as JSON text,
 * written as it is: the bytes rawIdOf (src/rpc/scan.ts) returns, or their Buffer. Agave
 * re-encodes an id, which gives the same bytes for every u64 and for strings without escapes.
 * The caller has checked read.minContextSlot against `slot` (Agave's -32016 is a node's to
 * give: it may have reached the slot when the cache has not).
 */
export function accountAnswer(read: AccountRead, slot: number, states: readonly AccountState[], apiVersion: string, rawId: string | Buffer): Buffer {
  let value: string;
  if (read.method === GET_BALANCE) {
    const s = states[0];
    value = s === null || s === undefined ? '0' : s.lamports;
  } else if (read.method === GET_MULTIPLE_ACCOUNTS) {
    value = '[';
    for (let i = 0; i < states.length; i++) {
      const s = states[i]!;
      const json = s === null ? 'null' : accountJson(s, read);
      if (json === null) return withId(BASE58_TOO_LARGE, rawId);
      value += i === 0 ? json : ',' + json;
    }
    value += ']';
  } else {
    const s = states[0];
    const json = s === null || s === undefined ? 'null' : accountJson(s, read);
    if (json === null) return withId(BASE58_TOO_LARGE, rawId);
    value = json;
  }
  return withId(HEAD + apiVersion + '","slot":' + slot + '},"value":' + value + '},"id":', rawId);
}
