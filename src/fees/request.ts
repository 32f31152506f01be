// A getPriorityFeeEstimate request in Helius's shape (docs/priority-fees.md "Request"):
// params [{ transaction?, accountKeys?, options? }]. Either names the accounts whose
// write-locking transactions are sampled; neither asks for the estimate over every transaction.

import { decodeBase58 } from '../solana/base58.js';
import { LEVEL_NAMES, MEDIUM } from './levels.js';
import { readTxFees } from './tx-fees.js';

export const MAX_ACCOUNT_KEYS = 128;
export const MAX_LOOKBACK_SLOTS = 150;
/** A serialized transaction is at most 1232 bytes (base58 ~1683 characters, base64 1644). */
const MAX_TX_TEXT = 1700;
const TX_BYTES = 1232;

export interface FeeQuery {
  /** The accounts (write-locked ones of a transaction), deduplicated; empty: every transaction. */
  accounts: string[];
  /** Index into LEVEL_NAMES. */
  level: number;
  allLevels: boolean;
  /** null: the whole window held. */
  lookbackSlots: number | null;
  recommended: boolean;
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function isPubkey(s: unknown): s is string {
  if (typeof s !== 'string' || s.length < 32 || s.length > 44) return false;
  const b = decodeBase58(s);
  return b !== null && b.length === 32;
}

/** The request's query, or the message of a -32602 answer. `params` is the parsed params member (undefined when absent). */
export function readFeeQuery(params: unknown): FeeQuery | string {
  if (!Array.isArray(params) || params.length !== 1 || !isObject(params[0])) return 'params must be [{ transaction?, accountKeys?, options? }]';
  const p = params[0];
  const o = p.options ?? {};
  if (!isObject(o)) return 'options must be an object';
  const q: FeeQuery = { accounts: [], level: MEDIUM, allLevels: false, lookbackSlots: null, recommended: false };
  if (o.priorityLevel !== undefined) {
    q.level = LEVEL_NAMES.indexOf(o.priorityLevel as (typeof LEVEL_NAMES)[number]);
    if (q.level < 0) return 'options.priorityLevel must be one of ' + LEVEL_NAMES.join(', ');
  }
  for (const k of ['includeAllPriorityFeeLevels', 'recommended', 'includeVote', 'evaluateEmptySlotAsZero'] as const) {
    if (o[k] !== undefined && typeof o[k] !== 'boolean') return `options.${k} must be true or false`;
  }
  q.allLevels = o.includeAllPriorityFeeLevels === true;
  q.recommended = o.recommended === true;
  const look = o.lookbackSlots;
  if (look !== undefined) {
    if (typeof look !== 'number' || !Number.isInteger(look) || look < 1 || look > MAX_LOOKBACK_SLOTS)
      return `options.lookbackSlots must be an integer from 1 to ${MAX_LOOKBACK_SLOTS}`;
    q.lookbackSlots = look;
  }
  const enc = o.transactionEncoding ?? 'Base58';
  if (enc !== 'Base58' && enc !== 'Base64') return 'options.transactionEncoding must be Base58 or Base64';
  if (p.transaction !== undefined && p.accountKeys !== undefined) return 'give transaction or accountKeys, not both';
  if (p.accountKeys !== undefined) {
    const keys = p.accountKeys;
    if (!Array.isArray(keys) || keys.length > MAX_ACCOUNT_KEYS) return `accountKeys must be a list of at most ${MAX_ACCOUNT_KEYS} pubkeys`;
    for (const k of keys) if (!isPubkey(k)) return 'accountKeys: not a base58 pubkey: ' + JSON.stringify(k).slice(0, 60);
    q.accounts = [...new Set(keys as string[])];
  } else if (p.transaction !== undefined) {
    const tx = p.transaction;
    if (typeof tx !== 'string' || tx.length > MAX_TX_TEXT) return 'transaction must be a serialized transaction (' + enc + ')';
    const bytes = enc === 'Base64' ? (/^[A-Za-z0-9+/]*={0,2}$/.test(tx) ? Buffer.from(tx, 'base64') : null) : decodeBase58(tx);
    const read = bytes === null || bytes.length > TX_BYTES ? null : readTxFees(bytes);
    if (read === null) return 'transaction: not a serialized transaction in ' + enc;
    q.accounts = [...new Set(read.writes)];
  }
  return q;
}
