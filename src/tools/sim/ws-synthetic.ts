// Synthetic-mode account subscriptions (a key the ledger never touched): the deterministic
// account of chain.ts, notified every few slots with lamports moving so that load tests see
// traffic. Subscriptions sharing a pubkey and encoding share one notification text.

import { encodeBase58 } from '../../solana/base58.js';
import { accountOf } from './chain.js';

const ENCODINGS = new Set(['binary', 'base58', 'base64', 'jsonParsed']);
/** As on Solana, base58 data longer than this is replaced by an error string. */
const MAX_BASE58_BYTES = 128;
const BS58_TOO_LARGE = 'error: data too large for bs58 encoding';
const COMMITMENTS = new Set(['processed', 'confirmed', 'finalized']);

export interface SyntheticGroup {
  /** '{"data":…,"executable":false,"lamports":' */
  head: string;
  lamports: number;
  /** ',"owner":…,"space":N}' */
  tail: string;
}

/** The group key of accountSubscribe params, or null when malformed. */
export function accountKey(p: unknown): { pubkey: string; encoding: string } | null {
  if (!Array.isArray(p) || p.length < 1 || p.length > 2) return null;
  const pubkey: unknown = p[0];
  if (typeof pubkey !== 'string' || pubkey.length === 0) return null;
  const cfg: unknown = p[1];
  // Solana's PubSub default is the legacy 'binary': data as a bare base58 string.
  let encoding = 'binary';
  if (cfg !== undefined && cfg !== null) {
    if (typeof cfg !== 'object' || Array.isArray(cfg)) return null;
    const { encoding: e, commitment: c } = cfg as { encoding?: unknown; commitment?: unknown };
    if (e !== undefined && e !== null) {
      if (typeof e !== 'string' || !ENCODINGS.has(e)) return null;
      // System-owned data does not parse, so jsonParsed falls back to base64 as on Solana.
      encoding = e === 'jsonParsed' ? 'base64' : e;
    }
    if (c !== undefined && c !== null && (typeof c !== 'string' || !COMMITMENTS.has(c))) return null;
  }
  return { pubkey, encoding };
}

export function syntheticGroup(pubkey: string, encoding: string): SyntheticGroup {
  const a = accountOf(pubkey);
  let data: string;
  if (encoding === 'base64') data = '["' + a.data.toString('base64') + '","base64"]';
  else {
    const b58 = a.data.length <= MAX_BASE58_BYTES ? encodeBase58(a.data) : BS58_TOO_LARGE;
    data = encoding === 'base58' ? '["' + b58 + '","base58"]' : '"' + b58 + '"';
  }
  return {
    head: '{"data":' + data + ',"executable":false,"lamports":',
    lamports: a.lamports,
    tail: ',"owner":"11111111111111111111111111111111","rentEpoch":18446744073709551615,"space":' + a.data.length + '}',
  };
}
