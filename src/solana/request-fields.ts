// What Solana routing reads from a call's params (docs/solana-routing.md): the config
// object's `commitment` and `minContextSlot`, and for `sendTransaction` where the encoded
// transaction sits and its encoding. Read from the raw bytes the request scan already
// validated, into one reusable object: no allocation, no JSON.parse.

import { Byte, COMMITMENT_KEY, PARAMS_KEY } from '../rpc/bytes.js';
import { bytesAt, skipValue, skipWs, uintOf } from '../rpc/json-bytes.js';
import { memberSpan } from '../rpc/scan.js';
import { commitmentOf } from './chain-view.js';
import { TxEncoding } from './transaction-bytes.js';

const PREFLIGHT_COMMITMENT_KEY = Buffer.from('"preflightCommitment"');
const MIN_CONTEXT_SLOT_KEY = Buffer.from('"minContextSlot"');
const ENCODING_KEY = Buffer.from('"encoding"');
const BASE64 = Buffer.from('"base64"');
const BASE58 = Buffer.from('"base58"');
const span = new Int32Array(2);

/** The fields, or -1 where a call does not give them. Filled by `readFields`. */
export class SolanaFields {
  /** Commitment (chain-view.ts Commitment) named by the config, -1 when none. */
  commitment = -1;
  /** `minContextSlot`, -1 when absent (or not a non-negative integer below 2^53). */
  minContextSlot = -1;
  /** sendTransaction: the encoded transaction between its quotes, -1 when not a plain string. */
  txStart = -1;
  txEnd = -1;
  txEncoding: TxEncoding = TxEncoding.Base58;

  reset(): void {
    this.commitment = -1;
    this.minContextSlot = -1;
    this.txStart = -1;
    this.txEnd = -1;
    this.txEncoding = TxEncoding.Base58;
  }
}

function hasEscape(buf: Buffer, s: number, e: number): boolean {
  const b = buf.indexOf(Byte.BACKSLASH, s);
  return b >= 0 && b < e;
}

function isString(buf: Buffer, s: number, e: number): boolean {
  return e - s >= 2 && buf[s] === Byte.QUOTE && buf[e - 1] === Byte.QUOTE;
}

/**
 * Reads `body[paramsStart, paramsEnd)` (the params value) of a call of `method` into `out`.
 * The config object is the last object among the params, as in every Solana method.
 */
export function readFields(method: string, body: Buffer, paramsStart: number, paramsEnd: number, out: SolanaFields): void {
  out.reset();
  if (paramsStart < 0 || body[paramsStart] !== Byte.LBRACKET) return;
  const send = method === 'sendTransaction';
  let i = skipWs(body, paramsStart + 1, paramsEnd);
  let index = 0;
  let configStart = -1;
  let configEnd = -1;
  while (i < paramsEnd && body[i] !== Byte.RBRACKET) {
    const e = skipValue(body, i, paramsEnd);
    if (e < 0) return; // cut short: the node answers it
    if (body[i] === Byte.LBRACE) {
      configStart = i;
      configEnd = e;
    } else if (send && index === 0 && isString(body, i, e) && !hasEscape(body, i, e)) {
      out.txStart = i + 1;
      out.txEnd = e - 1;
    }
    index++;
    i = skipWs(body, e, paramsEnd);
    if (body[i] !== Byte.COMMA) break;
    i = skipWs(body, i + 1, paramsEnd);
  }
  if (configStart < 0) return;
  // sendTransaction's preflight runs at preflightCommitment; other methods read at commitment.
  if (memberSpan(body, configStart, configEnd, send ? PREFLIGHT_COMMITMENT_KEY : COMMITMENT_KEY, span) && isString(body, span[0]!, span[1]!)) {
    out.commitment = commitmentOf(body, span[0]! + 1, span[1]! - 1);
  }
  if (memberSpan(body, configStart, configEnd, MIN_CONTEXT_SLOT_KEY, span)) out.minContextSlot = uintOf(body, span[0]!, span[1]!);
  if (send && memberSpan(body, configStart, configEnd, ENCODING_KEY, span)) {
    const n = span[1]! - span[0]!;
    if (n === BASE64.length && bytesAt(body, span[0]!, span[1]!, BASE64)) out.txEncoding = TxEncoding.Base64;
    else if (!(n === BASE58.length && bytesAt(body, span[0]!, span[1]!, BASE58))) {
      // An encoding the node will refuse: nothing to route by.
      out.txStart = -1;
      out.txEnd = -1;
    }
  }
}

/**
 * readFields for a single call's body: its params at [paramsStart, paramsEnd) where the request
 * scan found them (UpstreamCall.paramsStart), or found here when not given (-1: a sub-batch's or
 * a shared call). False, with `out` reset, when the call has no params.
 */
export function readCallFields(method: string, body: Buffer, paramsStart: number, paramsEnd: number, out: SolanaFields): boolean {
  if (paramsStart < 0) {
    const start = skipWs(body, 0, body.length);
    if (body[start] !== Byte.LBRACE || !memberSpan(body, start, body.length, PARAMS_KEY, span)) {
      out.reset();
      return false;
    }
    paramsStart = span[0]!;
    paramsEnd = span[1]!;
  }
  readFields(method, body, paramsStart, paramsEnd, out);
  return true;
}
