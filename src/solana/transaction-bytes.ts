// Reads a signed transaction's recent blockhash straight from the bytes of a
// `sendTransaction` request (docs/solana-routing.md "Blockhash-aware sends"), without decoding
// the whole transaction into a new buffer: base64 is read byte by byte in place, base58 (a
// single big number, so it must be decoded whole) into one scratch buffer reused by every
// call. A transaction is at most 1232 bytes (Solana's packet size), so both are bounded.
//
// Wire layout (legacy and v0): compact-u16 signature count, 64 bytes per signature, then the
// message: [0x80|version if v0], 3 header bytes, compact-u16 account count, 32 bytes per
// account, the 32-byte recent blockhash, compact-u16 instruction count, instructions.

/** Solana's PACKET_DATA_SIZE minus the IP/UDP headers. */
export const MAX_TRANSACTION_BYTES = 1232;
/** Agave's limits on the encoded forms (MAX_BASE58_SIZE, MAX_BASE64_SIZE). */
const MAX_BASE58_CHARS = 1683;
const MAX_BASE64_CHARS = 1644;

export const enum TxEncoding {
  Base58 = 0,
  Base64 = 1,
}

/** Why no blockhash was read: the call then goes as any other call does. */
export const enum TxRead {
  Ok = 0,
  /** Not a transaction this reader understands (bad characters, truncated, too long). */
  Unparsable = 1,
  /** Its first instruction advances a durable nonce: the "blockhash" is the nonce value. */
  DurableNonce = 2,
}

const B58 = '123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz';
const B58_INDEX = new Int8Array(256).fill(-1);
for (let i = 0; i < B58.length; i++) B58_INDEX[B58.charCodeAt(i)] = i;
const B64_INDEX = new Int8Array(256).fill(-1);
{
  const b64 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
  for (let i = 0; i < b64.length; i++) B64_INDEX[b64.charCodeAt(i)] = i;
}

// The decoded transaction (base58) or nothing (base64 reads in place).
const scratch = new Uint8Array(MAX_TRANSACTION_BYTES);
// Base58 decoding works on 16-bit limbs, little-endian: 58^5 × 2^16 stays below 2^53.
const limbs = new Float64Array(MAX_TRANSACTION_BYTES / 2 + 2);
const B58_POW = [1, 58, 58 * 58, 58 ** 3, 58 ** 4, 58 ** 5];

/**
 * Decodes base58 `src[start,end)` into the front of `out`; returns the byte length, or -1 on
 * a character outside the alphabet or when it does not fit `out`. Blockhashes and pubkeys
 * (32 bytes) and transactions (≤ 1232) use it; nothing is allocated.
 */
export function decodeBase58Into(src: Uint8Array, start: number, end: number, out: Uint8Array): number {
  if (end - start > MAX_BASE58_CHARS) return -1;
  let zeros = 0;
  while (start + zeros < end && src[start + zeros] === 0x31) zeros++;
  let used = 0;
  let i = start + zeros;
  while (i < end) {
    const take = Math.min(5, end - i);
    let chunk = 0;
    for (let k = 0; k < take; k++) {
      const d = B58_INDEX[src[i + k]!]!;
      if (d < 0) return -1;
      chunk = chunk * 58 + d;
    }
    i += take;
    const mul = B58_POW[take]!;
    let carry = chunk;
    for (let l = 0; l < used; l++) {
      const v = limbs[l]! * mul + carry;
      const lo = v % 65536;
      limbs[l] = lo;
      carry = (v - lo) / 65536;
    }
    while (carry > 0) {
      if (used >= limbs.length) return -1;
      const lo = carry % 65536;
      limbs[used++] = lo;
      carry = (carry - lo) / 65536;
    }
  }
  // Big-endian bytes of the number, after `zeros` leading zero bytes.
  let bytes = used * 2;
  if (used > 0 && limbs[used - 1]! < 256) bytes--;
  const total = zeros + bytes;
  if (total > out.length) return -1;
  out.fill(0, 0, zeros);
  for (let b = 0; b < bytes; b++) {
    const limb = limbs[b >> 1]!;
    out[total - 1 - b] = (b & 1) === 0 ? limb % 256 : Math.floor(limb / 256);
  }
  return total;
}

/** Byte `i` of the base64 text `src[start,end)`, or -1 past its end or on a bad character. */
function base64Byte(src: Uint8Array, start: number, end: number, i: number): number {
  const group = start + Math.floor(i / 3) * 4;
  const r = i % 3;
  const a = group + r;
  if (a + 1 >= end) return -1;
  const c0 = B64_INDEX[src[a]!]!;
  const c1 = B64_INDEX[src[a + 1]!]!;
  if (c0 < 0 || c1 < 0) return -1;
  if (r === 0) return ((c0 << 2) | (c1 >> 4)) & 0xff;
  if (r === 1) return ((c0 << 4) | (c1 >> 2)) & 0xff;
  return ((c0 << 6) | c1) & 0xff;
}

/** Random access over the decoded transaction: the scratch buffer or the base64 text. */
class TxBytes {
  src: Uint8Array = scratch;
  start = 0;
  end = 0;
  length = 0;
  base64 = false;

  at(i: number): number {
    if (i >= this.length) return -1;
    return this.base64 ? base64Byte(this.src, this.start, this.end, i) : scratch[i]!;
  }

  /** A compact-u16 at `i`: value in the low 16 bits, its size in bytes above (×65536); -1 if bad. */
  compactU16(i: number): number {
    let value = 0;
    for (let k = 0; k < 3; k++) {
      const b = this.at(i + k);
      if (b < 0) return -1;
      value |= (b & 0x7f) << (7 * k);
      if ((b & 0x80) === 0) return value > 0xffff ? -1 : value + (k + 1) * 65536;
    }
    return -1;
  }
}

const tx = new TxBytes();
const SYSTEM_PROGRAM = new Uint8Array(32);
/** SystemInstruction::AdvanceNonceAccount's tag (u32 little-endian). */
const ADVANCE_NONCE = 4;

/** The blockhash the last `readRecentBlockhash` read (when it answered Ok); overwritten by the next. */
export const lastBlockhash = new Uint8Array(32);

/**
 * Reads the recent blockhash of the transaction encoded in `body[start,end)` (the characters
 * between the JSON string's quotes) into `lastBlockhash`. Durable-nonce transactions
 * and anything unparsable are reported, not guessed at.
 */
export function readRecentBlockhash(body: Uint8Array, start: number, end: number, encoding: TxEncoding): TxRead {
  if (encoding === TxEncoding.Base64) {
    const chars = end - start;
    if (chars === 0 || chars > MAX_BASE64_CHARS || chars % 4 !== 0) return TxRead.Unparsable;
    let pad = 0;
    if (body[end - 1] === 0x3d) pad++;
    if (body[end - 2] === 0x3d) pad++;
    tx.src = body;
    tx.start = start;
    tx.end = end;
    tx.length = (chars / 4) * 3 - pad;
    tx.base64 = true;
  } else {
    const n = decodeBase58Into(body, start, end, scratch);
    if (n <= 0) return TxRead.Unparsable;
    tx.length = n;
    tx.base64 = false;
  }
  const sigs = tx.compactU16(0);
  if (sigs < 0 || (sigs & 0xffff) === 0) return TxRead.Unparsable;
  let i = (sigs >>> 16) + 64 * (sigs & 0xffff);
  const first = tx.at(i);
  if (first < 0) return TxRead.Unparsable;
  if ((first & 0x80) !== 0) i++; // versioned message prefix
  i += 3; // header
  const accounts = tx.compactU16(i);
  if (accounts < 0) return TxRead.Unparsable;
  const accountsAt = i + (accounts >>> 16);
  const accountCount = accounts & 0xffff;
  i = accountsAt + 32 * accountCount;
  for (let k = 0; k < 32; k++) {
    const b = tx.at(i + k);
    if (b < 0) return TxRead.Unparsable;
    lastBlockhash[k] = b;
  }
  return isDurableNonce(i + 32, accountsAt, accountCount) ? TxRead.DurableNonce : TxRead.Ok;
}

/** The first instruction is the system program's AdvanceNonceAccount. */
function isDurableNonce(i: number, accountsAt: number, accountCount: number): boolean {
  const ixs = tx.compactU16(i);
  if (ixs < 0 || (ixs & 0xffff) === 0) return false;
  i += ixs >>> 16;
  const program = tx.at(i);
  if (program < 0 || program >= accountCount) return false;
  for (let k = 0; k < 32; k++) if (tx.at(accountsAt + 32 * program + k) !== SYSTEM_PROGRAM[k]) return false;
  const metas = tx.compactU16(i + 1);
  if (metas < 0) return false;
  i += 1 + (metas >>> 16) + (metas & 0xffff);
  const data = tx.compactU16(i);
  if (data < 0 || (data & 0xffff) < 4) return false;
  i += data >>> 16;
  return tx.at(i) === ADVANCE_NONCE && tx.at(i + 1) === 0 && tx.at(i + 2) === 0 && tx.at(i + 3) === 0;
}
