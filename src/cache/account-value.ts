// An account's state as the cache keeps it: what Agave's UiAccount prints, with the u64
// fields kept as their decimal digits (lamports and rent epoch may pass 2^53: a rent-exempt
// account's rent epoch is u64::MAX) and the owner already in base58, so that answering
// copies text instead of converting numbers.

export interface AccountValue {
  /** Decimal u64. */
  readonly lamports: string;
  /** base58 public key. */
  readonly owner: string;
  readonly executable: boolean;
  /** Decimal u64. */
  readonly rentEpoch: string;
  readonly data: Buffer;
}

/** What a read of a key answers at a slot: the account, or null when it does not exist there. */
export type AccountState = AccountValue | null;

/** Bytes a state costs in memory beyond its data (the object, its strings, its place in a list). */
export const STATE_OVERHEAD_BYTES = 160;

export function stateBytes(s: AccountState): number {
  return s === null ? STATE_OVERHEAD_BYTES : STATE_OVERHEAD_BYTES + s.data.length;
}
