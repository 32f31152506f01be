// Solana method results as JSON fragments ('"result":…' or '"error":{…}') that the
// envelope splices between the jsonrpc head and the raw id. Built by concatenation so
// u64 values such as rentEpoch keep their exact digits and hot paths stay cheap.

import {
  accountOf,
  BLOCKHASH_VALID_SLOTS,
  blockHeightOf,
  blockhashOf,
  signatureOf,
  slotOfBlockhash,
} from './chain.js';

export const METHOD_NOT_FOUND = '"error":{"code":-32601,"message":"Method not found"}';
export const INVALID_PARAMS = '"error":{"code":-32602,"message":"Invalid params"}';

export function unhealthyError(slotsBehind: number | null): string {
  return '"error":{"code":-32005,"message":"Node is unhealthy","data":{"numSlotsBehind":' + slotsBehind + '}}';
}

const VERSION = '"result":{"feature-set":3294202862,"solana-core":"2.1.0"}';
const HEALTH_OK = '"result":"ok"';
const SIMULATE_VALUE =
  '{"accounts":null,"err":null,"logs":["Program 11111111111111111111111111111111 invoke [1]",' +
  '"Program 11111111111111111111111111111111 success"],"returnData":null,"unitsConsumed":150}}';

/** What one node knows while answering one request; slot strings are cached per slot. */
export class MethodEnv {
  slot = -1;
  lag = 0;
  unhealthy = false;
  /** '"result":{"context":{…},"value":' for the current slot. */
  ctx = '';
  private latest = '';
  readonly identity: string;

  constructor(id: string) {
    this.identity = '"result":{"identity":' + JSON.stringify(id) + '}';
  }

  at(slot: number): void {
    if (slot === this.slot) return;
    this.slot = slot;
    this.ctx = '"result":{"context":{"apiVersion":"2.1.0","slot":' + slot + '},"value":';
    this.latest = '';
  }

  latestBlockhash(): string {
    if (this.latest === '') {
      const value = '{"blockhash":"' + blockhashOf(this.slot) + '","lastValidBlockHeight":' + (blockHeightOf(this.slot) + BLOCKHASH_VALID_SLOTS) + '}}';
      this.latest = this.ctx + value;
    }
    return this.latest;
  }
}

// Encoded accounts are pure functions of the pubkey, so one cache serves every sim in the
// process; the bound keeps a benchmark with random keys from growing without limit.
const ACCOUNT_CACHE_MAX = 20_000;
const accountCache = new Map<string, { lamports: number; json: string }>();

function accountJson(lamports: number, data: Buffer, space: number): string {
  return (
    '{"data":["' +
    data.toString('base64') +
    '","base64"],"executable":false,"lamports":' +
    lamports +
    ',"owner":"11111111111111111111111111111111","rentEpoch":18446744073709551615,"space":' +
    space +
    '}'
  );
}

function cachedAccount(pubkey: string): { lamports: number; json: string } {
  let hit = accountCache.get(pubkey);
  if (hit === undefined) {
    const a = accountOf(pubkey);
    hit = { lamports: a.lamports, json: accountJson(a.lamports, a.data, a.data.length) };
    if (accountCache.size >= ACCOUNT_CACHE_MAX) accountCache.delete(accountCache.keys().next().value!);
    accountCache.set(pubkey, hit);
  }
  return hit;
}

interface Slice {
  offset: number;
  length: number;
}

/** The dataSlice of a config object: null when absent, undefined when malformed. */
function sliceOf(config: unknown): Slice | null | undefined {
  if (config === undefined || config === null) return null;
  if (typeof config !== 'object') return undefined;
  const s = (config as { dataSlice?: unknown }).dataSlice;
  if (s === undefined || s === null) return null;
  if (typeof s !== 'object') return undefined;
  const { offset, length } = s as { offset?: unknown; length?: unknown };
  const ok = (v: unknown): v is number => typeof v === 'number' && Number.isInteger(v) && v >= 0;
  return ok(offset) && ok(length) ? { offset, length } : undefined;
}

function accountFor(pubkey: string, slice: Slice | null): string {
  if (slice === null) return cachedAccount(pubkey).json;
  const a = accountOf(pubkey);
  return accountJson(a.lamports, a.data.subarray(slice.offset, slice.offset + slice.length), a.data.length);
}

function firstString(params: unknown): string | undefined {
  if (!Array.isArray(params)) return undefined;
  const p = params[0];
  return typeof p === 'string' && p.length > 0 ? p : undefined;
}

type Handler = (params: unknown, env: MethodEnv) => string;

const handlers = new Map<string, Handler>([
  ['getHealth', (_p, env) => (env.unhealthy ? unhealthyError(env.lag > 0 ? env.lag : null) : HEALTH_OK)],
  ['getSlot', (_p, env) => '"result":' + env.slot],
  ['getBlockHeight', (_p, env) => '"result":' + blockHeightOf(env.slot)],
  ['getIdentity', (_p, env) => env.identity],
  ['getVersion', () => VERSION],
  ['getLatestBlockhash', (_p, env) => env.latestBlockhash()],
  [
    'isBlockhashValid',
    (p, env) => {
      const hash = firstString(p);
      if (hash === undefined) return INVALID_PARAMS;
      const s = slotOfBlockhash(hash);
      const valid = s >= 0 && s <= env.slot && env.slot - s <= BLOCKHASH_VALID_SLOTS;
      return env.ctx + valid + '}';
    },
  ],
  [
    'getBalance',
    (p, env) => {
      const key = firstString(p);
      return key === undefined ? INVALID_PARAMS : env.ctx + cachedAccount(key).lamports + '}';
    },
  ],
  [
    'getAccountInfo',
    (p, env) => {
      const key = firstString(p);
      const slice = sliceOf((p as unknown[] | undefined)?.[1]);
      if (key === undefined || slice === undefined) return INVALID_PARAMS;
      return env.ctx + accountFor(key, slice) + '}';
    },
  ],
  [
    'getMultipleAccounts',
    (p, env) => {
      const keys: unknown = Array.isArray(p) ? p[0] : undefined;
      const slice = sliceOf((p as unknown[] | undefined)?.[1]);
      if (!Array.isArray(keys) || slice === undefined) return INVALID_PARAMS;
      let out = env.ctx + '[';
      for (let i = 0; i < keys.length; i++) {
        const k: unknown = keys[i];
        if (typeof k !== 'string' || k.length === 0) return INVALID_PARAMS;
        out += (i === 0 ? '' : ',') + accountFor(k, slice);
      }
      return out + ']}';
    },
  ],
  [
    'sendTransaction',
    (p) => {
      const tx = firstString(p);
      return tx === undefined ? INVALID_PARAMS : '"result":"' + signatureOf(tx) + '"';
    },
  ],
  ['simulateTransaction', (p, env) => (firstString(p) === undefined ? INVALID_PARAMS : env.ctx + SIMULATE_VALUE)],
]);

export const METHOD_NAMES: readonly string[] = [...handlers.keys()];

export function callMethod(method: string, params: unknown, env: MethodEnv): string {
  const h = handlers.get(method);
  return h === undefined ? METHOD_NOT_FOUND : h(params, env);
}
