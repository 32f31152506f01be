// Account states from a node's answers in base64 encoding. JSON.parse rounds u64s above 2^53,
// and a rent-exempt account's rentEpoch is u64::MAX, so a whole answer body is read by a small
// reader that keeps every number as its digits; accountFromRpc takes an already parsed value.

import { Byte } from '../rpc/bytes.js';
import { skipString, skipValue, skipWs, trimEnd } from '../rpc/json-bytes.js';
import { decodeBase58 } from '../solana/base58.js';
import type { AccountState, AccountValue } from './account-value.js';

const U64_MAX = '18446744073709551615';
/** The double JSON.parse makes of u64::MAX (and of any u64 within 2^10 of it). */
const U64_MAX_ROUNDED = 2 ** 64;

/** A number kept as the text a node wrote. */
class Digits {
  constructor(readonly text: string) {}
}

function u64Text(v: unknown): string | undefined {
  if (v instanceof Digits) {
    const d = v.text;
    if (!/^(0|[1-9][0-9]{0,19})$/.test(d)) return undefined;
    return d.length < 20 || d <= U64_MAX ? d : undefined;
  }
  if (typeof v !== 'number') return undefined;
  if (Number.isSafeInteger(v)) return v >= 0 ? String(v) : undefined;
  // Only u64::MAX is in use up there (the rent epoch of every rent-exempt account).
  return v === U64_MAX_ROUNDED ? U64_MAX : undefined;
}

function isKey(k: unknown): k is string {
  if (typeof k !== 'string' || k.length < 32 || k.length > 44) return false;
  const b = decodeBase58(k);
  return b !== null && b.length === 32;
}

const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

function base64Data(d: unknown): Buffer | undefined {
  if (!Array.isArray(d) || d.length !== 2 || d[1] !== 'base64' || typeof d[0] !== 'string') return undefined;
  const text = d[0];
  if (text.length % 4 !== 0 || !BASE64.test(text)) return undefined;
  return Buffer.from(text, 'base64');
}

/** A UiAccount (base64) or null; undefined when it is neither. */
function stateOf(v: unknown): AccountState | undefined {
  if (v === null) return null;
  if (typeof v !== 'object' || Array.isArray(v) || v instanceof Digits) return undefined;
  const a = v as Record<string, unknown>;
  const lamports = u64Text(a.lamports);
  const rentEpoch = u64Text(a.rentEpoch);
  const data = base64Data(a.data);
  if (lamports === undefined || rentEpoch === undefined || data === undefined) return undefined;
  if (typeof a.executable !== 'boolean' || !isKey(a.owner)) return undefined;
  // space is the full data length; a node that sliced the data would break that.
  if (a.space !== undefined && u64Text(a.space) !== String(data.length)) return undefined;
  const out: AccountValue = { lamports, owner: a.owner, executable: a.executable, rentEpoch, data };
  return out;
}

/**
 * The state in a node's getAccountInfo `result.value` (base64 encoding), as JSON.parse gives it:
 * null for no account, undefined for anything malformed. A u64 beyond 2^53 is rounded by then;
 * the one such value in use, u64::MAX, is recovered; others are undefined (accountsFromRpcBody
 * reads the digits themselves).
 */
export function accountFromRpc(value: unknown): AccountState | undefined {
  return stateOf(value);
}

// A JSON reader for a node's answer: numbers stay Digits, strings without escapes are copied.
// It trusts the node to have written JSON, and gives undefined where it finds it did not.

const FAIL = Symbol('fail');

function readValue(buf: Buffer, at: { i: number }, end: number): unknown {
  const i = skipWs(buf, at.i, end);
  if (i >= end) return FAIL;
  const c = buf[i]!;
  if (c === Byte.QUOTE) {
    const e = skipString(buf, i, end);
    if (e < 0) return FAIL;
    at.i = e;
    const raw = buf.toString('utf8', i + 1, e - 1);
    if (!raw.includes('\\')) return raw;
    try {
      return JSON.parse(buf.toString('utf8', i, e)) as string;
    } catch {
      return FAIL;
    }
  }
  if (c === Byte.LBRACE) {
    const o = Object.create(null) as Record<string, unknown>; // a key such as __proto__ stays a member
    let j = skipWs(buf, i + 1, end);
    if (buf[j] === Byte.RBRACE) {
      at.i = j + 1;
      return o;
    }
    for (;;) {
      at.i = j;
      const k = readValue(buf, at, end);
      if (typeof k !== 'string') return FAIL;
      j = skipWs(buf, at.i, end);
      if (buf[j] !== Byte.COLON) return FAIL;
      at.i = j + 1;
      const v = readValue(buf, at, end);
      if (v === FAIL) return FAIL;
      o[k] = v;
      j = skipWs(buf, at.i, end);
      if (buf[j] === Byte.RBRACE) {
        at.i = j + 1;
        return o;
      }
      if (buf[j] !== Byte.COMMA) return FAIL;
      j++;
    }
  }
  if (c === Byte.LBRACKET) {
    const a: unknown[] = [];
    let j = skipWs(buf, i + 1, end);
    if (buf[j] === Byte.RBRACKET) {
      at.i = j + 1;
      return a;
    }
    for (;;) {
      at.i = j;
      const v = readValue(buf, at, end);
      if (v === FAIL) return FAIL;
      a.push(v);
      j = skipWs(buf, at.i, end);
      if (buf[j] === Byte.RBRACKET) {
        at.i = j + 1;
        return a;
      }
      if (buf[j] !== Byte.COMMA) return FAIL;
      j++;
    }
  }
  const e = skipValue(buf, i, end);
  if (e <= i) return FAIL;
  at.i = e;
  const word = buf.toString('latin1', i, e);
  if (word === 'null') return null;
  if (word === 'true') return true;
  if (word === 'false') return false;
  return /^-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?$/.test(word) ? new Digits(word) : FAIL;
}

/**
 * Slot, apiVersion and states of a node's getAccountInfo or getMultipleAccounts answer body
 * (a single answer, base64 encoding), with lamports and rentEpoch exactly as written; undefined
 * for an error answer or anything else.
 */
export function accountsFromRpcBody(body: Buffer): { slot: number; apiVersion: string; states: AccountState[] } | undefined {
  const end = trimEnd(body, 0, body.length);
  const at = { i: 0 };
  const v = readValue(body, at, end);
  if (v === FAIL || skipWs(body, at.i, end) !== end || typeof v !== 'object' || v === null || Array.isArray(v)) return undefined;
  const r = (v as Record<string, unknown>).result;
  if (typeof r !== 'object' || r === null || Array.isArray(r)) return undefined;
  const { context, value } = r as Record<string, unknown>;
  if (typeof context !== 'object' || context === null) return undefined;
  const { slot, apiVersion } = context as Record<string, unknown>;
  const slotText = u64Text(slot);
  if (slotText === undefined || slotText.length > 15 || typeof apiVersion !== 'string') return undefined;
  const states: AccountState[] = [];
  if (Array.isArray(value)) {
    for (const x of value) {
      const s = stateOf(x);
      if (s === undefined) return undefined;
      states.push(s);
    }
  } else {
    const s = stateOf(value);
    if (s === undefined) return undefined;
    states.push(s);
  }
  return { slot: Number(slotText), apiVersion, states };
}
