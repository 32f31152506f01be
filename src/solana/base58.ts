// Bitcoin-alphabet base58 of whole values: signatures and blockhashes the gateway names in its
// own calls, and every key and hash of the simulator. Quadratic in length, so callers cache or
// keep inputs short (32-byte hashes, 64-byte signatures).

const ALPHABET = '123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz';
const INDEX = new Int8Array(128).fill(-1);
for (let i = 0; i < ALPHABET.length; i++) INDEX[ALPHABET.charCodeAt(i)] = i;

export function encodeBase58(bytes: Uint8Array): string {
  let zeros = 0;
  while (zeros < bytes.length && bytes[zeros] === 0) zeros++;
  // log(256)/log(58) < 1.38 digits per byte.
  const size = (((bytes.length - zeros) * 138) / 100 + 1) | 0;
  const digits = new Uint8Array(size);
  let length = 0;
  for (let i = zeros; i < bytes.length; i++) {
    let carry = bytes[i]!;
    let j = 0;
    for (let k = size - 1; (carry !== 0 || j < length) && k >= 0; k--, j++) {
      carry += 256 * digits[k]!;
      digits[k] = carry % 58;
      carry = (carry / 58) | 0;
    }
    length = j;
  }
  let it = size - length;
  while (it < size && digits[it] === 0) it++;
  let out = '1'.repeat(zeros);
  for (; it < size; it++) out += ALPHABET[digits[it]!];
  return out;
}

/** Bytes of `text`, or null when it holds a character outside the alphabet. */
export function decodeBase58(text: string): Uint8Array | null {
  let zeros = 0;
  while (zeros < text.length && text.charCodeAt(zeros) === 0x31) zeros++;
  // log(58)/log(256) < 0.733 bytes per digit.
  const size = (((text.length - zeros) * 733) / 1000 + 1) | 0;
  const bytes = new Uint8Array(size);
  let length = 0;
  for (let i = zeros; i < text.length; i++) {
    const c = text.charCodeAt(i);
    let carry = c < 128 ? INDEX[c]! : -1;
    if (carry < 0) return null;
    let j = 0;
    for (let k = size - 1; (carry !== 0 || j < length) && k >= 0; k--, j++) {
      carry += 58 * bytes[k]!;
      bytes[k] = carry & 0xff;
      carry >>= 8;
    }
    length = j;
  }
  let it = size - length;
  while (it < size && bytes[it] === 0) it++;
  const out = new Uint8Array(zeros + size - it);
  out.set(bytes.subarray(it), zeros);
  return out;
}
