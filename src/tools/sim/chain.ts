// The simulated chain: a slot clock shared by every sim (so `lag` compares across
// processes) and data derived only from inputs, so any sim, even a restarted one, agrees.

import { createHash } from 'node:crypto';
import { decodeBase58, encodeBase58 } from '../../solana/base58.js';

const GENESIS_SLOT = 300_000_000;
const EPOCH_MS = Date.UTC(2026, 0, 1);
const BLOCK_HEIGHT_OFFSET = 20_000_000;
/** How far finalized trails processed by default, as on mainnet. */
export const ROOT_DISTANCE = 32;
/** Mainnet's epoch length (no warm-up epochs). */
export const SLOTS_PER_EPOCH = 432_000;
export const GENESIS_HASH = encodeBase58(createHash('sha256').update('jumpgate-sim-genesis').digest());
/** How many slots a blockhash stays valid, as on Solana. */
export const BLOCKHASH_VALID_SLOTS = 150;

export function trueSlot(slotMs: number, now = Date.now()): number {
  return GENESIS_SLOT + Math.floor((now - EPOCH_MS) / slotMs);
}

/**
 * The processed tip of the cluster: the shared clock names the finalized slot of an up-to-date
 * node, so a node's default (finalized) getSlot equals trueSlot, as other test upstreams answer.
 */
export function tipSlot(slotMs: number, now = Date.now()): number {
  return trueSlot(slotMs, now) + ROOT_DISTANCE;
}

/** The block time (Unix seconds) of a slot: when the clock reached it. */
export function blockTimeOf(slot: number, slotMs: number): number {
  return Math.floor((EPOCH_MS + (slot - ROOT_DISTANCE - GENESIS_SLOT) * slotMs) / 1000);
}

/** Whether the leader of `slot` skipped it; a pure function so every process agrees. */
export function isSkipped(slot: number, skipRate: number): boolean {
  if (skipRate <= 0) return false;
  // Multiplicative hashing of the slot number: uniform enough for a rate.
  const h = Math.imul(slot ^ (slot >>> 16), 0x45d9f3b) >>> 0;
  return Math.imul(h ^ (h >>> 16), 0x45d9f3b) >>> 0 < skipRate * 0x100000000;
}

export function blockHeightOf(slot: number): number {
  return slot - BLOCK_HEIGHT_OFFSET;
}

export function rootOf(slot: number): number {
  return slot - ROOT_DISTANCE;
}

// The slot rides in the last 8 bytes (masked) so validity is checked by decoding and
// recomputing, with no memory of issued hashes; the first 24 bytes authenticate it.
const SLOT_MASK = 0x5a5a5a5a;

export function blockhashOf(slot: number): string {
  const h = createHash('sha256')
    .update('jumpgate-sim-blockhash:' + slot)
    .digest();
  const b = Buffer.allocUnsafe(32);
  h.copy(b, 0, 0, 24);
  b.writeUInt32LE(((slot % 0x100000000) ^ SLOT_MASK) >>> 0, 24);
  b.writeUInt32LE((Math.floor(slot / 0x100000000) ^ SLOT_MASK) >>> 0, 28);
  return encodeBase58(b);
}

/** The slot a blockhash was issued for, or -1 when no sim issued it. */
export function slotOfBlockhash(hash: string): number {
  if (hash.length < 32 || hash.length > 44) return -1;
  const bytes = decodeBase58(hash);
  if (bytes === null || bytes.length !== 32) return -1;
  const b = Buffer.from(bytes.buffer, bytes.byteOffset, 32);
  const slot = ((b.readUInt32LE(28) ^ SLOT_MASK) >>> 0) * 0x100000000 + ((b.readUInt32LE(24) ^ SLOT_MASK) >>> 0);
  return blockhashOf(slot) === hash ? slot : -1;
}

/** An 88-character signature: the top bit set keeps 64 bytes at exactly 88 base58 digits. */
export function signatureOf(tx: string): string {
  const h = createHash('sha512').update(tx).digest();
  h[0] = h[0]! | 0x80;
  return encodeBase58(h);
}

export interface Account {
  lamports: number;
  data: Buffer;
}

export function accountOf(pubkey: string): Account {
  const h = createHash('sha256').update(pubkey).digest();
  const space = h.readUInt16LE(0) % 1024;
  // At least the rent-exempt minimum for an empty account; below 2^53 so a double holds it.
  const lamports = 890_880 + h.readUIntLE(2, 6);
  const data = Buffer.allocUnsafe(space);
  // xorshift32 is plenty for filler bytes and far cheaper than hashing per block.
  let x = h.readUInt32LE(8) | 1;
  for (let i = 0; i < space; i++) {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    data[i] = x & 0xff;
  }
  return { lamports, data };
}
