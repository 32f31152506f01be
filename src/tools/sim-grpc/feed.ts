// What a simulated Yellowstone source streams, behind `UpdateFeed` so a real event source (a
// simulated cluster's ledger) can replace the generator. `GeneratedFeed` derives every slot's
// account writes, transactions and block meta from the slot number and a seed alone: two sims
// with the same seed agree byte for byte, whenever and however often they are asked, which is
// what first-arrival dedup across sources needs (docs/grpc.md "Simulated sources").

import { createHash } from 'node:crypto';
import { encodeAs, geyserType } from '../../grpc/proto.js';
import { readUpdate, type Update } from '../../grpc/update.js';
import { blockhashOf, blockHeightOf } from '../sim/chain.js';

/** Slot statuses (geyser SlotStatus). */
export const SLOT_PROCESSED = 0;
export const SLOT_CONFIRMED = 1;
export const SLOT_FINALIZED = 2;
/** How far behind the tip each commitment's blocks are (CommitmentLevel → slots). */
export const COMMITMENT_DEPTH = [0, 1, 32] as const;

export interface UpdateFeed {
  /** Slot status updates announced when `tip` becomes the newest slot. */
  slotUpdates(tip: number): readonly Update[];
  /** The account writes, transactions and block meta of `slot`, in the order they are streamed. */
  blockUpdates(slot: number): readonly Update[];
  /** How far behind the tip a stream of this commitment receives blocks. */
  depth(commitment: number): number;
}

export interface GeneratedFeedOptions {
  seed: number;
  accountsPerSlot: number;
  transactionsPerSlot: number;
  /** Distinct accounts written (chosen per slot from this many). */
  accountPool: number;
}

export const DEFAULT_FEED: GeneratedFeedOptions = { seed: 1, accountsPerSlot: 8, transactionsPerSlot: 4, accountPool: 64 };
const OWNERS = 4;
const CACHE_SLOTS = 256;

function hash(text: string, algo = 'sha256'): Buffer {
  return createHash(algo).update(text).digest();
}

/** Pubkeys and owners of a seed: public so tests and the bench can subscribe to them. */
export function poolAccount(seed: number, i: number): Buffer {
  return hash(`sim-grpc:${seed}:account:${i}`);
}

export function poolOwner(seed: number, i: number): Buffer {
  return hash(`sim-grpc:${seed}:owner:${i}`);
}

export class GeneratedFeed implements UpdateFeed {
  private readonly slotCache = new Map<number, Update[]>();
  private readonly blockCache = new Map<number, Update[]>();
  private readonly update = geyserType('SubscribeUpdate');
  private readonly accounts: Buffer[];
  private readonly owners: Buffer[];

  constructor(private readonly o: GeneratedFeedOptions = DEFAULT_FEED) {
    this.accounts = Array.from({ length: o.accountPool }, (_, i) => poolAccount(o.seed, i));
    this.owners = Array.from({ length: OWNERS }, (_, i) => poolOwner(o.seed, i));
  }

  private encode(value: Record<string, unknown>): Update {
    return readUpdate(encodeAs(this.update, value));
  }

  depth(commitment: number): number {
    return COMMITMENT_DEPTH[Math.min(2, Math.max(0, commitment)) as 0 | 1 | 2];
  }

  slotUpdates(tip: number): readonly Update[] {
    return cached(this.slotCache, tip, () => [
      this.encode({ slot: { slot: tip, parent: tip - 1, status: SLOT_PROCESSED } }),
      this.encode({ slot: { slot: tip - 1, parent: tip - 2, status: SLOT_CONFIRMED } }),
      this.encode({ slot: { slot: tip - 32, parent: tip - 33, status: SLOT_FINALIZED } }),
    ]);
  }

  blockUpdates(slot: number): readonly Update[] {
    return cached(this.blockCache, slot, () => this.makeBlock(slot));
  }

  private makeBlock(slot: number): Update[] {
    const o = this.o;
    const out: Update[] = [];
    const sigs: Buffer[] = [];
    for (let i = 0; i < o.transactionsPerSlot; i++) {
      const sig = hash(`sim-grpc:${o.seed}:tx:${slot}:${i}`, 'sha512');
      sigs.push(sig);
      const h = hash(`sim-grpc:${o.seed}:txkeys:${slot}:${i}`);
      const keys = [
        hash(`sim-grpc:${o.seed}:payer:${h[0]! % 16}`),
        this.accounts[h[1]! % o.accountPool]!,
        this.accounts[h[2]! % o.accountPool]!,
        this.owners[h[3]! % OWNERS]!,
      ];
      const isVote = i === 0;
      const failed = i % 4 === 3;
      out.push(
        this.encode({
          transaction: {
            slot,
            transaction: {
              signature: sig,
              isVote,
              index: i,
              transaction: {
                signatures: [sig],
                message: {
                  header: { numRequiredSignatures: 1 },
                  accountKeys: keys,
                  recentBlockhash: hash(`bh:${slot}`),
                  instructions: [{ programIdIndex: 3, accounts: Buffer.from([1, 2]), data: h.subarray(4, 12) }],
                },
              },
              meta: {
                ...(failed ? { err: { err: Buffer.from([1, 0, 0, 0]) } } : {}),
                fee: 5000,
                preBalances: [1e9, 0, 0, 1],
                postBalances: [1e9 - 5000, 0, 0, 1],
                logMessages: [`Program log: sim ${slot}:${i}`],
              },
            },
          },
        }),
      );
    }
    // Distinct accounts within a slot (consecutive from a per-slot start): one write each.
    const start = hash(`sim-grpc:${o.seed}:writes:${slot}`).readUInt16LE(0);
    for (let i = 0; i < Math.min(o.accountsPerSlot, o.accountPool); i++) {
      const h = hash(`sim-grpc:${o.seed}:write:${slot}:${i}`);
      const pick = (start + i) % o.accountPool;
      const ownerIdx = pick % OWNERS;
      const size = 16 + (h[2]! % 112);
      const data = Buffer.alloc(size);
      data.writeUInt32LE(ownerIdx, 0); // a discriminator per owner, for memcmp filters
      h.copy(data, 4, 0, Math.min(28, size - 4));
      out.push(
        this.encode({
          account: {
            slot,
            isStartup: false,
            account: {
              pubkey: this.accounts[pick],
              lamports: 1_000_000 + h.readUInt32LE(4),
              owner: this.owners[ownerIdx],
              executable: false,
              rentEpoch: 0,
              data,
              writeVersion: slot * 1000 + i,
              txnSignature: sigs[i % Math.max(1, sigs.length)],
            },
          },
        }),
      );
    }
    out.push(
      this.encode({
        blockMeta: {
          slot,
          blockhash: blockhashOf(slot),
          parentSlot: slot - 1,
          parentBlockhash: blockhashOf(slot - 1),
          blockHeight: { blockHeight: blockHeightOf(slot) },
          executedTransactionCount: o.transactionsPerSlot,
          entriesCount: 1,
        },
      }),
    );
    return out;
  }
}

function cached(cache: Map<number, Update[]>, slot: number, make: () => Update[]): Update[] {
  let v = cache.get(slot);
  if (v === undefined) {
    v = make();
    cache.set(slot, v);
    // Maps iterate in insertion order: the first key is the oldest.
    if (cache.size > CACHE_SLOTS) cache.delete(cache.keys().next().value!);
  }
  return v;
}
