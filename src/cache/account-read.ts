// Which account reads the cache may answer: a single getAccountInfo, getMultipleAccounts or
// getBalance call whose every part Agave would accept, read into the few parameters an answer
// depends on. Anything else (a batch, an error Agave would give, a form whose reading we are
// not sure of) is null, and a node answers it with its own exact error.
//
// Agave reads the body with serde_json, stricter than JSON.parse in ways that matter here: a
// number written `1.0`, `1e3` or `-0` is no u64, a member given twice is an error, invalid
// UTF-8 is a parse error. One pass over the bytes outside strings catches those forms.

import { isUtf8 } from 'node:buffer';
import { decodeBase58 } from '../solana/base58.js';

export const GET_ACCOUNT_INFO = 0;
export const GET_MULTIPLE_ACCOUNTS = 1;
export const GET_BALANCE = 2;

export const PROCESSED = 0;
export const CONFIRMED = 1;
export const FINALIZED = 2;

export type AccountEncoding = 'base64' | 'base58' | 'binary';

export interface AccountRead {
  /** getAccountInfo, getMultipleAccounts, getBalance. */
  method: 0 | 1 | 2;
  /** base58, as given. */
  keys: string[];
  /** processed, confirmed, finalized. */
  commitment: 0 | 1 | 2;
  /** binary is Agave's legacy form: the bare base58 string. getBalance has none (base64 here). */
  encoding: AccountEncoding;
  sliceOffset: number;
  /** -1: no dataSlice. */
  sliceLength: number;
  /** -1: none. */
  minContextSlot: number;
}

/** Agave's max_multiple_accounts default. */
export const MAX_MULTIPLE_ACCOUNTS = 100;

const METHODS: Record<string, 0 | 1 | 2> = { getAccountInfo: 0, getMultipleAccounts: 1, getBalance: 2 };
const COMMITMENTS: Record<string, 0 | 1 | 2> = { processed: 0, confirmed: 1, finalized: 2 };
const ENCODINGS: Record<string, AccountEncoding> = { base64: 'base64', base58: 'base58', binary: 'binary' };
const U64_MAX = '18446744073709551615';
const hasOwn = Object.prototype.hasOwnProperty;

/**
 * Members (colons) in the body's objects, or -1 when a number is written in a form serde_json
 * does not read as a u64 (a sign, a fraction, an exponent), so JSON.parse's value would lie.
 */
function memberCount(body: Buffer): number {
  let members = 0;
  const n = body.length;
  for (let i = 0; i < n; i++) {
    const c = body[i]!;
    if (c === 0x22) {
      // Skip the string; an escaped quote has a backslash before it.
      for (i++; i < n; i++) {
        const d = body[i]!;
        if (d === 0x5c) i++;
        else if (d === 0x22) break;
      }
    } else if (c === 0x3a) members++;
    else if (c === 0x2d || c === 0x2e || c === 0x45 || (c === 0x65 && i > 0 && body[i - 1]! >= 0x30 && body[i - 1]! <= 0x39)) return -1;
  }
  return members;
}

/** Keys already decoded to 32 bytes: a bot reads the same few hundred keys again and again, and a base58 decode costs more than the rest of the read. Forgotten all at once when full. */
const validKeys = new Set<string>();
const MAX_VALID_KEYS = 65_536;

function isKey(k: unknown): k is string {
  if (typeof k !== 'string' || k.length < 32 || k.length > 44) return false;
  if (validKeys.has(k)) return true;
  const b = decodeBase58(k);
  if (b === null || b.length !== 32) return false;
  if (validKeys.size >= MAX_VALID_KEYS) validKeys.clear();
  validKeys.add(k);
  return true;
}

function isU64(v: unknown): v is number {
  return typeof v === 'number' && Number.isSafeInteger(v) && v >= 0;
}

/** Whether the id is one jsonrpc-core takes: a u64, a string, null. */
function idOk(id: unknown, body: Buffer): boolean {
  if (id === null) return true;
  if (typeof id === 'string') return !/\p{Cs}/u.test(id); // serde_json refuses a lone surrogate
  if (typeof id !== 'number') return false;
  if (Number.isSafeInteger(id)) return id >= 0;
  // Beyond 2^53 JSON.parse rounds: the digits decide whether it is still a u64.
  const m = /"id"\s*:\s*(\d+)/.exec(body.toString('latin1'));
  if (m === null) return false;
  const d = m[1]!;
  return d.length < 20 || (d.length === 20 && d <= U64_MAX);
}

/**
 * The parameters of a single account read the cache may answer, or null to let a node answer.
 * `method` is the call's method name as the caller read it; it must match the body's.
 */
export function readAccountRequest(body: Buffer, method: string): AccountRead | null {
  const m = METHODS[method];
  if (m === undefined || !isUtf8(body)) return null;
  let v: unknown;
  try {
    v = JSON.parse(body.toString('utf8'));
  } catch {
    return null;
  }
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return null;
  const req = v as Record<string, unknown>;
  // jsonrpc-core's MethodCall denies unknown members; without an id it is a notification,
  // which Agave does not answer.
  let top = 0;
  for (const k in req) {
    if (k !== 'jsonrpc' && k !== 'method' && k !== 'params' && k !== 'id') return null;
    top++;
  }
  if (req.jsonrpc !== '2.0' || req.method !== method || !hasOwn.call(req, 'id') || !idOk(req.id, body)) return null;
  const p = req.params;
  if (!Array.isArray(p) || p.length < 1 || p.length > 2) return null;
  let members = top;

  let keys: string[];
  if (m === GET_MULTIPLE_ACCOUNTS) {
    const list: unknown = p[0];
    if (!Array.isArray(list) || list.length > MAX_MULTIPLE_ACCOUNTS) return null;
    for (let i = 0; i < list.length; i++) if (!isKey(list[i])) return null;
    keys = list as string[];
  } else {
    if (!isKey(p[0])) return null;
    keys = [p[0]];
  }

  const read: AccountRead = {
    method: m,
    keys,
    commitment: FINALIZED,
    // Agave: getAccountInfo falls back to binary, getMultipleAccounts to base64.
    encoding: m === GET_ACCOUNT_INFO ? 'binary' : 'base64',
    sliceOffset: 0,
    sliceLength: -1,
    minContextSlot: -1,
  };
  const cfg: unknown = p[1];
  if (cfg !== undefined && cfg !== null) {
    if (typeof cfg !== 'object' || Array.isArray(cfg)) return null;
    for (const k in cfg) {
      members++;
      const x = (cfg as Record<string, unknown>)[k];
      // Agave's Option fields read null as absent.
      if (x === null) {
        if (k !== 'commitment' && k !== 'minContextSlot' && (m === GET_BALANCE || (k !== 'encoding' && k !== 'dataSlice'))) return null;
        continue;
      }
      switch (k) {
        case 'commitment': {
          const c = typeof x === 'string' && hasOwn.call(COMMITMENTS, x) ? COMMITMENTS[x] : undefined;
          if (c === undefined) return null;
          read.commitment = c;
          break;
        }
        case 'minContextSlot':
          if (!isU64(x)) return null;
          read.minContextSlot = x;
          break;
        case 'encoding': {
          const e = m !== GET_BALANCE && typeof x === 'string' && hasOwn.call(ENCODINGS, x) ? ENCODINGS[x] : undefined;
          if (e === undefined) return null;
          read.encoding = e;
          break;
        }
        case 'dataSlice': {
          if (m === GET_BALANCE || typeof x !== 'object' || Array.isArray(x)) return null;
          const s = x as Record<string, unknown>;
          let n = 0;
          for (const sk in s) {
            if (sk !== 'offset' && sk !== 'length') return null;
            n++;
          }
          if (!isU64(s.offset) || !isU64(s.length)) return null;
          members += n;
          read.sliceOffset = s.offset;
          read.sliceLength = s.length;
          break;
        }
        default:
          // Agave ignores unknown members here; refusing them keeps a misspelt option from
          // being answered as if absent without a node confirming that reading.
          return null;
      }
    }
  }
  // Fewer members parsed than written: one was given twice, which serde refuses.
  return memberCount(body) === members ? read : null;
}
