// Request parameters as Agave reads them: the config object's commitment, minContextSlot,
// encoding and dataSlice, and Agave's exact -32602 messages for what does not parse. Results
// are error fragments ('"error":{…}') or null, so handlers return them as they are.

import { pubkeyBytes } from './wire.js';

export const METHOD_NOT_FOUND = '"error":{"code":-32601,"message":"Method not found"}';
export const INVALID_PARAMS = '"error":{"code":-32602,"message":"Invalid params"}';

export const enum Commitment {
  Processed = 0,
  Confirmed = 1,
  Finalized = 2,
}
export const COMMITMENT_NAMES = ['processed', 'confirmed', 'finalized'] as const;

export function invalidParams(message: string): string {
  return '"error":{"code":-32602,"message":' + JSON.stringify(message) + '}';
}

export function serverError(code: number, message: string, data?: string): string {
  return '"error":{"code":' + code + ',"message":' + JSON.stringify(message) + (data === undefined ? '' : ',"data":' + data) + '}';
}

export function minContextSlotError(contextSlot: number): string {
  return serverError(-32016, 'Minimum context slot has not been reached', '{"contextSlot":' + contextSlot + '}');
}

/** Agave's -32005: "Node is behind by N slots" when it knows by how much. */
export function unhealthyError(slotsBehind: number | null): string {
  const message = slotsBehind === null ? 'Node is unhealthy' : 'Node is behind by ' + slotsBehind + ' slots';
  return serverError(-32005, message, '{"numSlotsBehind":' + slotsBehind + '}');
}

const ENCODINGS = ['binary', 'base58', 'base64', 'jsonParsed', 'base64+zstd'];
/** Transaction encodings (UiTransactionEncoding). */
export const TX_ENCODINGS = ['binary', 'base64', 'base58', 'json', 'jsonParsed'];

function unknownVariant(v: unknown, expected: readonly string[]): string {
  const got =
    typeof v === 'string'
      ? 'unknown variant `' + v + '`, expected one of ' + expected.map((e) => '`' + e + '`').join(', ')
      : 'invalid type: ' + typeName(v) + ', expected a string';
  return invalidParams('Invalid params: ' + got + '.');
}

function typeName(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'sequence';
  if (typeof v === 'object') return 'map';
  if (typeof v === 'number') return Number.isInteger(v) ? 'integer `' + v + '`' : 'floating point `' + v + '`';
  if (typeof v === 'boolean') return 'boolean `' + v + '`';
  return typeof v;
}

export interface Slice {
  offset: number;
  length: number;
}

/** A parsed config object; `error` is set when it did not parse. */
export class Cfg {
  commitment: Commitment = Commitment.Finalized;
  /** -1: none given. */
  minContextSlot = -1;
  encoding: string | null = null;
  slice: Slice | null = null;
  error: string | null = null;
  raw: Record<string, unknown> | null = null;
}

const EMPTY = new Cfg();

/**
 * Reads a config object (undefined/null: the defaults, shared and never written). `commitmentKey`
 * is 'preflightCommitment' for sendTransaction.
 */
export function readCfg(c: unknown, commitmentKey = 'commitment', encodings: readonly string[] = ENCODINGS): Cfg {
  if (c === undefined || c === null) return EMPTY;
  const cfg = new Cfg();
  if (typeof c !== 'object' || Array.isArray(c)) {
    cfg.error = invalidParams('Invalid params: invalid type: ' + typeName(c) + ', expected a map.');
    return cfg;
  }
  const o = c as Record<string, unknown>;
  cfg.raw = o;
  const cm = o[commitmentKey];
  if (cm !== undefined && cm !== null) {
    const i = COMMITMENT_NAMES.indexOf(cm as (typeof COMMITMENT_NAMES)[number]);
    if (i < 0) {
      cfg.error = unknownVariant(cm, COMMITMENT_NAMES);
      return cfg;
    }
    cfg.commitment = i;
  }
  const m = o.minContextSlot;
  if (m !== undefined && m !== null) {
    if (typeof m !== 'number' || !Number.isInteger(m) || m < 0) {
      cfg.error = invalidParams('Invalid params: invalid type: ' + typeName(m) + ', expected u64.');
      return cfg;
    }
    cfg.minContextSlot = m;
  }
  const e = o.encoding;
  if (e !== undefined && e !== null) {
    if (typeof e !== 'string' || !encodings.includes(e)) {
      cfg.error = unknownVariant(e, encodings);
      return cfg;
    }
    cfg.encoding = e;
  }
  const s = o.dataSlice;
  if (s !== undefined && s !== null) {
    const { offset, length } = s as { offset?: unknown; length?: unknown };
    const ok = (v: unknown): v is number => typeof v === 'number' && Number.isInteger(v) && v >= 0;
    if (typeof s !== 'object' || !ok(offset) || !ok(length)) {
      cfg.error = invalidParams('Invalid params: invalid type: ' + typeName(s) + ', expected struct UiDataSliceConfig.');
      return cfg;
    }
    cfg.slice = { offset, length };
  }
  return cfg;
}

/** Agave's message for a string that is not a pubkey, or null when it is one. */
export function pubkeyError(text: unknown): string | null {
  if (typeof text !== 'string') return invalidParams('Invalid params: invalid type: ' + typeName(text) + ', expected a string.');
  if (pubkeyBytes(text) !== null) return null;
  return invalidParams(text.length > 44 || /^[1-9A-HJ-NP-Za-km-z]*$/.test(text) ? 'Invalid param: WrongSize' : 'Invalid param: Invalid');
}

export function tooMany(max: number): string {
  return invalidParams('Too many inputs provided; max ' + max);
}
