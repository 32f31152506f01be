// Account methods: getBalance, getAccountInfo, getMultipleAccounts, getProgramAccounts.
// A key the ledger touched answers its state at the node's slot for the asked commitment;
// one it never touched answers what the runtime holds at genesis (programs, sysvars) or null,
// or, in synthetic mode, the deterministic account of chain.ts.

import { decodeBase58 } from '../../solana/base58.js';
import { accountJson, BASE58_TOO_LARGE, stateJson, syntheticAccount, syntheticJson } from './encode.js';
import type { MethodEnv } from './env.js';
import { parsedToken } from './methods-token.js';
import type { AccountState } from './ledger.js';
import { Commitment, INVALID_PARAMS, invalidParams, pubkeyError, readCfg, tooMany, type Cfg } from './params.js';
import { pubkeyBytes } from './wire.js';

type Handler = (params: unknown, env: MethodEnv) => string;

export const MAX_MULTIPLE_ACCOUNTS = 100;
const MAX_FILTERS = 4;
const NULL = 'null';

function arg(p: unknown, i: number): unknown {
  return Array.isArray(p) ? p[i] : undefined;
}

/** The state of a key the ledger never touched (not synthetic). */
function genesisState(key: string, env: MethodEnv): AccountState | null {
  const bytes = pubkeyBytes(key);
  return bytes === null ? null : env.cluster.ledger.genesis(bytes);
}

/** Lamports of `key` at `slot` as JSON digits. */
function lamportsAt(key: string, slot: number, env: MethodEnv): string {
  const s = env.cluster.ledger.accountAt(key, slot);
  if (s !== undefined) return s === null ? '0' : String(s.lamports);
  if (env.knobs.synthetic) return String(syntheticAccount(key).lamports);
  const g = genesisState(key, env);
  return g === null ? '0' : String(g.lamports);
}

/** UiAccount JSON of `key` at `slot`, 'null', or null when base58 would be too long. */
function accountAt(key: string, slot: number, env: MethodEnv, encoding: string, cfg: Cfg): string | null {
  const s = env.cluster.ledger.accountAt(key, slot);
  if (s === undefined && env.knobs.synthetic) return syntheticJson(key, encoding, cfg.slice);
  const state = s === undefined ? genesisState(key, env) : s;
  if (state === null) return NULL;
  if (encoding === 'jsonParsed') {
    const parsed = parsedToken(state, slot, env);
    if (parsed !== null) return parsed;
  }
  if (cfg.slice === null && (encoding === 'base64' || encoding === 'jsonParsed')) return stateJson(state);
  return accountJson(state, encoding, cfg.slice);
}

/** Synthetic mode keeps the old default (base64) and takes any key string; else Agave's binary. */
function defaults(env: MethodEnv, cfg: Cfg): string {
  return cfg.encoding ?? (env.knobs.synthetic ? 'base64' : 'binary');
}

/** getMultipleAccounts: Agave's default is base64 (getAccountInfo's is binary). */
function multipleDefaults(cfg: Cfg): string {
  return cfg.encoding ?? 'base64';
}

function keyError(key: unknown, env: MethodEnv): string | null {
  if (env.knobs.synthetic) return typeof key === 'string' && key.length > 0 ? null : INVALID_PARAMS;
  return pubkeyError(key);
}

const getBalance: Handler = (p, env) => {
  // The benchmarks' hot path (S4): one key, no config, synthetic mode.
  if (env.knobs.synthetic && Array.isArray(p) && p.length === 1) {
    const k: unknown = p[0];
    if (typeof k === 'string' && k.length > 0) {
      const s = env.cluster.ledger.accountAt(k, env.views[Commitment.Finalized]!);
      return env.ctx[Commitment.Finalized] + (s === undefined ? syntheticAccount(k).lamports : s === null ? 0 : s.lamports) + '}';
    }
  }
  const key = arg(p, 0);
  const bad = keyError(key, env);
  if (bad !== null) return bad;
  const cfg = readCfg(arg(p, 1));
  if (cfg.error !== null) return cfg.error;
  const slot = env.slotFor(cfg);
  if (typeof slot === 'string') return slot;
  return env.ctx[cfg.commitment] + lamportsAt(key as string, slot, env) + '}';
};

const getAccountInfo: Handler = (p, env) => {
  const key = arg(p, 0);
  const bad = keyError(key, env);
  if (bad !== null) return bad;
  const cfg = readCfg(arg(p, 1));
  if (cfg.error !== null) return cfg.error;
  const slot = env.slotFor(cfg);
  if (typeof slot === 'string') return slot;
  const json = accountAt(key as string, slot, env, defaults(env, cfg), cfg);
  return json === null ? BASE58_TOO_LARGE : env.ctx[cfg.commitment] + json + '}';
};

const getMultipleAccounts: Handler = (p, env) => {
  const keys = arg(p, 0);
  if (!Array.isArray(keys)) return INVALID_PARAMS;
  if (keys.length > MAX_MULTIPLE_ACCOUNTS) return tooMany(MAX_MULTIPLE_ACCOUNTS);
  for (let i = 0; i < keys.length; i++) {
    const bad = keyError(keys[i], env);
    if (bad !== null) return bad;
  }
  const cfg = readCfg(arg(p, 1));
  if (cfg.error !== null) return cfg.error;
  const slot = env.slotFor(cfg);
  if (typeof slot === 'string') return slot;
  const encoding = multipleDefaults(cfg);
  let out = env.ctx[cfg.commitment] + '[';
  for (let i = 0; i < keys.length; i++) {
    const json = accountAt(keys[i] as string, slot, env, encoding, cfg);
    if (json === null) return BASE58_TOO_LARGE;
    out += (i === 0 ? '' : ',') + json;
  }
  return out + ']}';
};

type Filter = { dataSize: number } | { offset: number; bytes: Buffer };

/** getProgramAccounts filters, or an error fragment. */
function readFilters(f: unknown): Filter[] | string {
  if (f === undefined || f === null) return [];
  if (!Array.isArray(f)) return INVALID_PARAMS;
  if (f.length > MAX_FILTERS) return invalidParams('Too many filters provided; max ' + MAX_FILTERS);
  const out: Filter[] = [];
  for (const x of f as unknown[]) {
    const o = x as { dataSize?: unknown; memcmp?: { offset?: unknown; bytes?: unknown; encoding?: unknown } };
    if (typeof o !== 'object' || o === null) return INVALID_PARAMS;
    if (typeof o.dataSize === 'number') out.push({ dataSize: o.dataSize });
    else if (typeof o.memcmp === 'object' && o.memcmp !== null && typeof o.memcmp.offset === 'number' && typeof o.memcmp.bytes === 'string') {
      const m = o.memcmp as { offset: number; bytes: string; encoding?: unknown };
      const bytes = m.encoding === 'base64' ? Buffer.from(m.bytes, 'base64') : decodeBase58(m.bytes);
      if (bytes === null || m.bytes.length > 175) return invalidParams('Invalid param: Base58DataTooLarge');
      out.push({ offset: m.offset, bytes: Buffer.from(bytes) });
    } else return INVALID_PARAMS;
  }
  return out;
}

function matches(data: Buffer, filters: Filter[]): boolean {
  for (const f of filters) {
    if ('dataSize' in f) {
      if (data.length !== f.dataSize) return false;
    } else if (f.offset + f.bytes.length > data.length || !data.subarray(f.offset, f.offset + f.bytes.length).equals(f.bytes)) return false;
  }
  return true;
}

/** Accounts the ledger holds (touched by transactions), owned by the program at the node's slot. */
const getProgramAccounts: Handler = (p, env) => {
  const program = arg(p, 0);
  const bad = pubkeyError(program);
  if (bad !== null) return bad;
  const cfg = readCfg(arg(p, 1));
  if (cfg.error !== null) return cfg.error;
  const filters = readFilters(cfg.raw?.filters);
  if (typeof filters === 'string') return filters;
  const slot = env.slotFor(cfg);
  if (typeof slot === 'string') return slot;
  const encoding = cfg.encoding ?? 'binary';
  let list = '[';
  for (const { key, state } of env.cluster.ledger.ownedBy(program as string, slot)) {
    if (!matches(state.data, filters)) continue;
    const json = accountJson(state, encoding, cfg.slice);
    if (json === null) return BASE58_TOO_LARGE;
    list += (list === '[' ? '' : ',') + '{"account":' + json + ',"pubkey":"' + key + '"}';
  }
  list += ']';
  return cfg.raw?.withContext === true ? env.ctx[cfg.commitment] + list + '}' : '"result":' + list;
};

export const ACCOUNT_METHODS: [string, Handler][] = [
  ['getBalance', getBalance],
  ['getAccountInfo', getAccountInfo],
  ['getMultipleAccounts', getMultipleAccounts],
  ['getProgramAccounts', getProgramAccounts],
];
