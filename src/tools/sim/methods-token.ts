// SPL Token reads over the ledger's accounts (the runtime carries the token program):
// getTokenAccountBalance, getTokenAccountsByOwner, and jsonParsed token accounts, in Agave's
// shapes. Token-2022 accounts are read alike (their base layout is the same).

import { encodeBase58 } from '../../solana/base58.js';
import { accountJson } from './encode.js';
import type { MethodEnv } from './env.js';
import type { AccountState } from './ledger.js';
import { INVALID_PARAMS, invalidParams, pubkeyError, readCfg } from './params.js';

type Handler = (params: unknown, env: MethodEnv) => string;

const TOKEN = 'TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA';
const TOKEN_2022 = 'TokenzQdBNbLqP5VEhdkAS6EPFLC1PWnBqCkEEuDE8M';
const ACCOUNT_LEN = 165;
const MINT_LEN = 82;
const STATES = ['uninitialized', 'initialized', 'frozen'];

function arg(p: unknown, i: number): unknown {
  return Array.isArray(p) ? p[i] : undefined;
}

function isTokenProgram(owner: string): boolean {
  return owner === TOKEN || owner === TOKEN_2022;
}

function decimalsOf(mint: string, slot: number, env: MethodEnv): number | null {
  const m = env.cluster.ledger.accountAt(mint, slot);
  if (m === null || m === undefined || !isTokenProgram(m.owner) || m.data.length < MINT_LEN) return null;
  return m.data[44]!;
}

/** Agave's UiTokenAmount. */
function amountJson(raw: bigint, decimals: number): string {
  const s = raw.toString().padStart(decimals + 1, '0');
  const whole = s.slice(0, s.length - decimals);
  const frac = decimals > 0 ? s.slice(s.length - decimals).replace(/0+$/, '') : '';
  const ui = frac === '' ? whole : whole + '.' + frac;
  return '{"amount":"' + raw + '","decimals":' + decimals + ',"uiAmount":' + Number(ui) + ',"uiAmountString":"' + ui + '"}';
}

function isTokenAccount(s: AccountState | null | undefined): s is AccountState {
  return s !== null && s !== undefined && isTokenProgram(s.owner) && s.data.length >= ACCOUNT_LEN && s.data[108] !== 0;
}

/** A token account in jsonParsed (program "spl-token"). */
function parsedJson(s: AccountState, decimals: number): string {
  const d = s.data;
  const isNative = d.readUInt32LE(109) === 1;
  const info =
    '{"isNative":' +
    isNative +
    ',"mint":"' +
    encodeBase58(d.subarray(0, 32)) +
    '","owner":"' +
    encodeBase58(d.subarray(32, 64)) +
    '","state":"' +
    STATES[d[108]!] +
    '","tokenAmount":' +
    amountJson(d.readBigUInt64LE(64), decimals) +
    '}';
  const program = s.owner === TOKEN ? 'spl-token' : 'spl-token-2022';
  return (
    '{"data":{"parsed":{"info":' +
    info +
    ',"type":"account"},"program":"' +
    program +
    '","space":' +
    d.length +
    '},"executable":false,"lamports":' +
    s.lamports +
    ',"owner":"' +
    s.owner +
    '","rentEpoch":' +
    s.rentEpoch +
    ',"space":' +
    d.length +
    '}'
  );
}

/** jsonParsed of a token account at `slot`, or null when `s` is none (then base64 applies). */
export function parsedToken(s: AccountState, slot: number, env: MethodEnv): string | null {
  if (!isTokenAccount(s)) return null;
  const decimals = decimalsOf(encodeBase58(s.data.subarray(0, 32)), slot, env);
  return decimals === null ? null : parsedJson(s, decimals);
}

const getTokenAccountBalance: Handler = (p, env) => {
  const key = arg(p, 0);
  const bad = pubkeyError(key);
  if (bad !== null) return bad;
  const cfg = readCfg(arg(p, 1));
  if (cfg.error !== null) return cfg.error;
  const slot = env.slotFor(cfg);
  if (typeof slot === 'string') return slot;
  const s = env.cluster.ledger.accountAt(key as string, slot);
  if (!isTokenAccount(s)) return invalidParams('Invalid param: not a Token account');
  const decimals = decimalsOf(encodeBase58(s.data.subarray(0, 32)), slot, env);
  if (decimals === null) return invalidParams('Invalid param: could not find mint');
  return env.ctx[cfg.commitment] + amountJson(s.data.readBigUInt64LE(64), decimals) + '}';
};

const getTokenAccountsByOwner: Handler = (p, env) => {
  const owner = arg(p, 0);
  const bad = pubkeyError(owner);
  if (bad !== null) return bad;
  const filter = arg(p, 1) as { mint?: unknown; programId?: unknown } | undefined;
  if (typeof filter !== 'object' || filter === null) return INVALID_PARAMS;
  const mint = typeof filter.mint === 'string' ? filter.mint : null;
  const program = typeof filter.programId === 'string' ? filter.programId : null;
  if ((mint === null) === (program === null)) return INVALID_PARAMS;
  const badKey = pubkeyError(mint ?? program);
  if (badKey !== null) return badKey;
  if (program !== null && !isTokenProgram(program)) return invalidParams('Invalid param: unrecognized Token program id');
  const cfg = readCfg(arg(p, 2));
  if (cfg.error !== null) return cfg.error;
  const slot = env.slotFor(cfg);
  if (typeof slot === 'string') return slot;
  const encoding = cfg.encoding ?? 'binary';
  const out: string[] = [];
  for (const tokenProgram of program === null ? [TOKEN, TOKEN_2022] : [program]) {
    for (const { key, state } of env.cluster.ledger.ownedBy(tokenProgram, slot)) {
      if (!isTokenAccount(state) || encodeBase58(state.data.subarray(32, 64)) !== owner) continue;
      const m = encodeBase58(state.data.subarray(0, 32));
      if (mint !== null && m !== mint) continue;
      const decimals = decimalsOf(m, slot, env);
      const json = encoding === 'jsonParsed' && decimals !== null ? parsedJson(state, decimals) : accountJson(state, encoding, cfg.slice);
      if (json === null) return invalidParams('Encoded binary (base 58) data should be less than 128 bytes, please use Base64 encoding.');
      out.push('{"account":' + json + ',"pubkey":"' + key + '"}');
    }
  }
  return env.ctx[cfg.commitment] + '[' + out.join(',') + ']}';
};

export const TOKEN_METHODS: [string, Handler][] = [
  ['getTokenAccountBalance', getTokenAccountBalance],
  ['getTokenAccountsByOwner', getTokenAccountsByOwner],
];
