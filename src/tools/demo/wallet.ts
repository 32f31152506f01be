// The demo's funded key: DATA_DIR/demo-wallet.json in the Solana CLI's keypair format (a JSON
// array of 64 bytes, secret seed then public key, mode 600), so restarts keep the address. The
// simulated chain lives in memory: each demo start airdrops the key again (start-demo.ts).

import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { signerFromSeed, type Signer } from '../sim/wire.js';

export const WALLET_FILE = 'demo-wallet.json';
/** What each demo start airdrops to the demo key. */
export const DEMO_AIRDROP_LAMPORTS = 100n * 1_000_000_000n;

/** The 64 bytes of a keypair file, or null when it is missing or not one. */
export function readKeypairFile(file: string): Uint8Array | null {
  try {
    const j = JSON.parse(readFileSync(file, 'utf8')) as unknown;
    if (Array.isArray(j) && j.length === 64 && j.every((b) => Number.isInteger(b) && b >= 0 && b <= 255)) return Uint8Array.from(j as number[]);
  } catch {
    // missing or unreadable: the caller decides
  }
  return null;
}

/** Loads the demo key from `dataDir`, creating it on first use. */
export function ensureDemoWallet(dataDir: string): Signer {
  mkdirSync(dataDir, { recursive: true });
  const file = join(dataDir, WALLET_FILE);
  const saved = readKeypairFile(file);
  if (saved !== null) return signerFromSeed(Buffer.from(saved.subarray(0, 32)));
  const signer = signerFromSeed(randomBytes(32));
  const seed = (signer.key.export({ format: 'der', type: 'pkcs8' }) as Buffer).subarray(-32);
  const tmp = file + '.tmp';
  writeFileSync(tmp, JSON.stringify([...seed, ...signer.pubkey]) + '\n', { mode: 0o600 });
  renameSync(tmp, file);
  return signer;
}
