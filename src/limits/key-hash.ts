// The 64-bit key hash of the shared bucket tables (shared-bucket-table.ts): two 32-bit lanes
// over a key's UTF-16 units, seeded per table. Fast, not cryptographic: the random seeds keep
// which keys collide from being worked out in advance.

export const M1 = 0x9e3779b1;
const M2 = 0x85ebca77;

export function randomSeed(): number {
  return (Math.random() * 0x1_0000_0000) | 0;
}

// The two hash lanes have different shapes (multiply-rotate, multiply-xorshift), so a pair of
// keys that collides in one is not thereby likely to collide in the other.
export function stepA(a: number, c: number): number {
  a = Math.imul(a ^ c, M1);
  return (a << 15) | (a >>> 17);
}

export function stepB(b: number, c: number): number {
  b = Math.imul(b ^ c, M2);
  return b ^ (b >>> 13);
}

/** murmur3's finaliser: spreads every input bit over the word. */
export function avalanche(h: number): number {
  h = Math.imul(h ^ (h >>> 16), 0x85ebca6b);
  h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35);
  return (h ^ (h >>> 16)) | 0;
}
