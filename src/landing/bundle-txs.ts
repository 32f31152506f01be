// The transactions of a sendBundle a block engine accepted (docs/jito.md "Landing"): each one's
// first signature and recent blockhash, so the tracker follows them as it follows sends. The
// request is parsed whole: a bundle is at most five transactions and comes a few times a second.

import { encodeBase58 } from '../solana/base58.js';
import { lastBlockhash, readRecentBlockhash, TxEncoding, TxRead } from '../solana/transaction-bytes.js';
import { decodeBase58 } from '../solana/base58.js';

export interface BundleTx {
  signature: string;
  /** Base58; null for a durable-nonce or unreadable transaction. */
  blockhash: string | null;
}

/** A sendBundle request's transactions; [] when the body is not one this reader understands. */
export function bundleTxs(body: Buffer): BundleTx[] {
  let req: unknown;
  try {
    req = JSON.parse(body.toString('utf8'));
  } catch {
    return [];
  }
  const params = (req as { params?: unknown }).params;
  if (!Array.isArray(params) || !Array.isArray(params[0])) return [];
  const opts = params[1] as { encoding?: unknown } | undefined;
  const base64 = opts !== null && typeof opts === 'object' && opts.encoding === 'base64';
  const out: BundleTx[] = [];
  for (const tx of params[0] as unknown[]) {
    if (typeof tx !== 'string') return [];
    const bytes = base64 ? Buffer.from(tx, 'base64') : decodeBase58(tx);
    // One signature count byte (fewer than 128 signatures), then the first signature.
    if (bytes === null || bytes.length < 65 || bytes[0]! === 0 || bytes[0]! >= 0x80) return [];
    const text = Buffer.from(tx, 'latin1');
    const read = readRecentBlockhash(text, 0, text.length, base64 ? TxEncoding.Base64 : TxEncoding.Base58);
    out.push({ signature: encodeBase58(bytes.subarray(1, 65)), blockhash: read === TxRead.Ok ? encodeBase58(lastBlockhash) : null });
  }
  return out;
}
