// Solana's transaction wire format, read far enough to route, verify and record a transaction
// (signatures, header, static keys, blockhash, instructions), and a system transfer written
// and signed for the faucet. Execution itself is the runtime's (ledger.ts).

import { createPrivateKey, createPublicKey, sign, verify, type KeyObject } from 'node:crypto';
import { decodeBase58, encodeBase58 } from '../../solana/base58.js';

export interface Instruction {
  programIndex: number;
  accounts: number[];
  data: Buffer;
}

export interface ParsedTx {
  bytes: Buffer;
  /** Base58 of each signature; [0] is the transaction's id. */
  signatures: string[];
  sigBytes: Buffer[];
  message: Buffer;
  /** 'legacy' or the version number. */
  version: 'legacy' | number;
  numRequiredSignatures: number;
  numReadonlySigned: number;
  numReadonlyUnsigned: number;
  /** Static account keys, base58. */
  keys: string[];
  keyBytes: Buffer[];
  blockhash: string;
  /** Where the blockhash starts in `message`. */
  blockhashOffset: number;
  instructions: Instruction[];
  /** Address-table lookups (v0): their accounts are not among `keys`. */
  lookups: number;
}

export const DESERIALIZE_FAILED = 'failed to deserialize solana_transaction::versioned::VersionedTransaction: io error: failed to fill whole buffer';
export const SANITIZE_FAILED = 'invalid transaction: Transaction failed to sanitize accounts offsets correctly';

class Reader {
  pos = 0;
  constructor(readonly b: Buffer) {}
  u8(): number {
    if (this.pos >= this.b.length) throw new Error(DESERIALIZE_FAILED);
    return this.b[this.pos++]!;
  }
  /** compact-u16 (shortvec). */
  len(): number {
    let v = 0;
    for (let shift = 0; shift < 21; shift += 7) {
      const x = this.u8();
      v |= (x & 0x7f) << shift;
      if ((x & 0x80) === 0) return v;
    }
    throw new Error(DESERIALIZE_FAILED);
  }
  take(n: number): Buffer {
    if (this.pos + n > this.b.length) throw new Error(DESERIALIZE_FAILED);
    const out = this.b.subarray(this.pos, this.pos + n);
    this.pos += n;
    return out;
  }
}

/** Parses a serialized transaction; throws Error with Agave's -32602 message. */
export function parseTx(bytes: Buffer): ParsedTx {
  const r = new Reader(bytes);
  const nSigs = r.len();
  const sigBytes: Buffer[] = [];
  for (let i = 0; i < nSigs; i++) sigBytes.push(r.take(64));
  const msgStart = r.pos;
  const first = r.u8();
  let version: 'legacy' | number = 'legacy';
  let numRequiredSignatures = first;
  if ((first & 0x80) !== 0) {
    version = first & 0x7f;
    numRequiredSignatures = r.u8();
  }
  const numReadonlySigned = r.u8();
  const numReadonlyUnsigned = r.u8();
  const nKeys = r.len();
  const keyBytes: Buffer[] = [];
  for (let i = 0; i < nKeys; i++) keyBytes.push(r.take(32));
  const blockhashOffset = r.pos - msgStart;
  const blockhash = encodeBase58(r.take(32));
  const nIx = r.len();
  const instructions: Instruction[] = [];
  for (let i = 0; i < nIx; i++) {
    const programIndex = r.u8();
    const nAcc = r.len();
    const accounts = [...r.take(nAcc)];
    const data = r.take(r.len());
    instructions.push({ programIndex, accounts, data });
  }
  let lookups = 0;
  let lookupKeys = 0;
  if (version !== 'legacy') {
    lookups = r.len();
    for (let i = 0; i < lookups; i++) {
      r.take(32);
      lookupKeys += r.take(r.len()).length;
      lookupKeys += r.take(r.len()).length;
    }
  }
  if (r.pos !== bytes.length) throw new Error(DESERIALIZE_FAILED);
  const total = nKeys + lookupKeys;
  const sane =
    nSigs === numRequiredSignatures &&
    numRequiredSignatures <= nKeys &&
    numReadonlySigned < Math.max(numRequiredSignatures, 1) &&
    numReadonlyUnsigned + numRequiredSignatures <= nKeys &&
    instructions.every((ix) => ix.programIndex > 0 && ix.programIndex < nKeys && ix.accounts.every((a) => a < total));
  if (!sane) throw new Error(SANITIZE_FAILED);
  return {
    bytes,
    signatures: sigBytes.map((s) => encodeBase58(s)),
    sigBytes,
    message: bytes.subarray(msgStart),
    version,
    numRequiredSignatures,
    numReadonlySigned,
    numReadonlyUnsigned,
    keys: keyBytes.map((k) => encodeBase58(k)),
    keyBytes,
    blockhash,
    blockhashOffset,
    instructions,
    lookups,
  };
}

/** Whether static key `i` is writable (header rules; lookups are not static keys). */
export function isWritable(tx: ParsedTx, i: number): boolean {
  if (i < tx.numRequiredSignatures) return i < tx.numRequiredSignatures - tx.numReadonlySigned;
  return i < tx.keys.length - tx.numReadonlyUnsigned;
}

const SPKI_ED25519 = Buffer.from('302a300506032b6570032100', 'hex');
const PKCS8_ED25519 = Buffer.from('302e020100300506032b657004220420', 'hex');

function publicKeyOf(raw: Buffer): KeyObject {
  return createPublicKey({ key: Buffer.concat([SPKI_ED25519, raw]), format: 'der', type: 'spki' });
}

/** ed25519 over the message by every required signer. */
export function verifySignatures(tx: ParsedTx): boolean {
  for (let i = 0; i < tx.numRequiredSignatures; i++) {
    try {
      if (!verify(null, tx.message, publicKeyOf(tx.keyBytes[i]!), tx.sigBytes[i]!)) return false;
    } catch {
      return false;
    }
  }
  return true;
}

export interface Signer {
  pubkey: Buffer;
  address: string;
  key: KeyObject;
}

/** A keypair from a 32-byte seed (the faucet's is derived from a fixed string). */
export function signerFromSeed(seed: Buffer): Signer {
  const key = createPrivateKey({ key: Buffer.concat([PKCS8_ED25519, seed]), format: 'der', type: 'pkcs8' });
  const spki = createPublicKey(key).export({ format: 'der', type: 'spki' });
  const pubkey = Buffer.from(spki.subarray(spki.length - 32));
  return { pubkey, address: encodeBase58(pubkey), key };
}

const SYSTEM_PROGRAM = Buffer.alloc(32);

/** A signed legacy system transfer (instruction 2) from `from` to `to`. */
export function transferTx(from: Signer, to: Buffer, lamports: bigint, blockhash: string): Buffer {
  const data = Buffer.alloc(12);
  data.writeUInt32LE(2, 0);
  data.writeBigUInt64LE(lamports, 4);
  const hash = decodeBase58(blockhash)!;
  const message = Buffer.concat([Buffer.from([1, 0, 1, 3]), from.pubkey, to, SYSTEM_PROGRAM, hash, Buffer.from([1, 2, 2, 0, 1, 12]), data]);
  return Buffer.concat([Buffer.from([1]), sign(null, message, from.key), message]);
}

/** A 32-byte public key from base58, or null when it is not one. */
export function pubkeyBytes(text: string): Buffer | null {
  if (text.length < 32 || text.length > 44) return null;
  const b = decodeBase58(text);
  return b !== null && b.length === 32 ? Buffer.from(b) : null;
}
