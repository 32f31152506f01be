// A simulated cluster's own events as Yellowstone updates (docs/grpc.md "Simulated sources"):
// each produced slot's account writes (the ledger's state of every account a landed transaction
// wrote, as of that slot), its transactions and its block meta; slot statuses at the node's
// confirm and finalize depths. Everything comes from the ledger and the slot number, never
// from the clock or the node: two sources of one cluster (nodes at different lags included)
// send the same bytes for the same update, which first-arrival dedup needs.

import { decodeBase58 } from '../../solana/base58.js';
import { blockhashOf, blockHeightOf, blockTimeOf } from '../sim/chain.js';
import type { Cluster } from '../sim/cluster.js';
import type { AccountState, TxRecord } from '../sim/ledger.js';
import { encodeAs, geyserType } from '../../grpc/proto.js';
import { readUpdate, type Update } from '../../grpc/update.js';
import { SLOT_CONFIRMED, SLOT_FINALIZED, SLOT_PROCESSED, type UpdateFeed } from './feed.js';

/** Write versions: slot × this + the account's position among the slot's writes (ordered across slots, below 2^53). */
export const WRITES_PER_SLOT = 100_000;
const CACHE_SLOTS = 256;
const SYSTEM_OWNER = Buffer.alloc(32);

/** What the feed reads of its node: how far confirmed and finalized trail processed. */
export interface FeedDepths {
  confirmDepth: number;
  finalizeDepth: number;
}

/** A uint64 for protobufjs: a number when exact, else its two halves (lamports above 2^53, rent epoch u64::MAX). */
function u64(v: bigint): number | { low: number; high: number; unsigned: true } {
  if (v <= BigInt(Number.MAX_SAFE_INTEGER)) return Number(v);
  return { low: Number(v & 0xffffffffn) | 0, high: Number((v >> 32n) & 0xffffffffn) | 0, unsigned: true };
}

function key(text: string): Buffer {
  return Buffer.from(decodeBase58(text) ?? new Uint8Array(32));
}

/** First index of a slot-ordered list with slot >= `slot`. */
function firstAt<T extends { slot: number }>(list: readonly T[], slot: number): number {
  let lo = 0;
  let hi = list.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (list[mid]!.slot < slot) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

export class ClusterFeed implements UpdateFeed {
  private readonly slotCache = new Map<string, Update>();
  private readonly blockCache = new Map<number, Update[]>();
  private readonly update = geyserType('SubscribeUpdate');

  /** `depths` is read at each slot (a node's knobs change live). */
  constructor(
    private readonly cluster: Cluster,
    private readonly depths: () => FeedDepths,
  ) {}

  depth(commitment: number): number {
    const d = this.depths();
    return commitment === 2 ? d.finalizeDepth : commitment === 1 ? d.confirmDepth : 0;
  }

  private encode(value: Record<string, unknown>): Update {
    return readUpdate(encodeAs(this.update, value));
  }

  /** The produced slot before `slot`. */
  private parentOf(slot: number): number {
    return this.cluster.produced(slot - 1);
  }

  slotUpdates(tip: number): readonly Update[] {
    const out: Update[] = [];
    const d = this.depths();
    const statuses: [number, number][] = [
      [tip, SLOT_PROCESSED],
      [tip - d.confirmDepth, SLOT_CONFIRMED],
      [tip - d.finalizeDepth, SLOT_FINALIZED],
    ];
    for (const [slot, status] of statuses) {
      if (this.cluster.skipped(slot)) continue;
      const k = `${slot}:${status}`;
      let u = this.slotCache.get(k);
      if (u === undefined) {
        u = this.encode({ slot: { slot, parent: this.parentOf(slot), status } });
        this.slotCache.set(k, u);
        if (this.slotCache.size > CACHE_SLOTS * 3) this.slotCache.delete(this.slotCache.keys().next().value!);
      }
      out.push(u);
    }
    return out;
  }

  /**
   * The block of `slot`: asked for once the cluster's tip reached it, when no transaction can
   * land in it any more (the ledger lands in the slot after the tip).
   */
  blockUpdates(slot: number): readonly Update[] {
    if (this.cluster.skipped(slot)) return [];
    let v = this.blockCache.get(slot);
    if (v === undefined) {
      v = this.makeBlock(slot);
      this.blockCache.set(slot, v);
      if (this.blockCache.size > CACHE_SLOTS) this.blockCache.delete(this.blockCache.keys().next().value!);
    }
    return v;
  }

  private makeBlock(slot: number): Update[] {
    const ledger = this.cluster.ledger;
    const out: Update[] = [];
    const txs: TxRecord[] = [];
    for (let i = firstAt(ledger.landed, slot); i < ledger.landed.length && ledger.landed[i]!.slot === slot; i++) txs.push(ledger.landed[i]!);
    // Which transaction of the slot wrote each account last (its txn_signature).
    const writer = new Map<string, string>();
    txs.forEach((rec, index) => {
      out.push(this.transaction(rec, slot, index));
      for (const k of rec.tx.keys) writer.set(k, rec.signature);
    });
    const written: string[] = [];
    const seen = new Set<string>();
    for (let i = firstAt(ledger.changes, slot); i < ledger.changes.length && ledger.changes[i]!.slot === slot; i++) {
      const k = ledger.changes[i]!.key;
      if (seen.has(k)) continue;
      seen.add(k);
      written.push(k);
    }
    written.forEach((k, i) => out.push(this.account(k, ledger.accountAt(k, slot) ?? null, slot, slot * WRITES_PER_SLOT + i, writer.get(k))));
    const parent = this.parentOf(slot);
    out.push(
      this.encode({
        blockMeta: {
          slot,
          blockhash: blockhashOf(slot),
          parentSlot: parent,
          parentBlockhash: blockhashOf(parent),
          blockTime: { timestamp: blockTimeOf(slot, this.cluster.slotMs) },
          blockHeight: { blockHeight: blockHeightOf(slot) },
          executedTransactionCount: txs.length,
          entriesCount: 1,
        },
      }),
    );
    return out;
  }

  private account(pubkey: string, s: AccountState | null, slot: number, writeVersion: number, sig: string | undefined): Update {
    return this.encode({
      account: {
        slot,
        isStartup: false,
        account: {
          pubkey: key(pubkey),
          // A drained account: what geyser streams for one (no lamports, no data, the system program).
          lamports: s === null ? 0 : u64(s.lamports),
          owner: s === null ? SYSTEM_OWNER : key(s.owner),
          executable: s?.executable ?? false,
          rentEpoch: s === null ? 0 : u64(s.rentEpoch),
          data: s?.data ?? Buffer.alloc(0),
          writeVersion,
          ...(sig === undefined ? {} : { txnSignature: key(sig) }),
        },
      },
    });
  }

  private transaction(rec: TxRecord, slot: number, index: number): Update {
    const tx = rec.tx;
    return this.encode({
      transaction: {
        slot,
        transaction: {
          signature: tx.sigBytes[0],
          isVote: false,
          index,
          transaction: {
            signatures: tx.sigBytes,
            message: {
              header: {
                numRequiredSignatures: tx.numRequiredSignatures,
                numReadonlySignedAccounts: tx.numReadonlySigned,
                numReadonlyUnsignedAccounts: tx.numReadonlyUnsigned,
              },
              accountKeys: tx.keyBytes,
              recentBlockhash: key(tx.blockhash),
              instructions: tx.instructions.map((ix) => ({ programIdIndex: ix.programIndex, accounts: Buffer.from(ix.accounts), data: ix.data })),
              versioned: tx.version !== 'legacy',
            },
          },
          meta: {
            // The error's JSON (as getTransaction answers it), not Agave's bincode: a client
            // reads `failed` from its presence.
            ...(rec.err === null ? {} : { err: { err: Buffer.from(rec.err.json) } }),
            fee: u64(rec.fee),
            preBalances: rec.preBalances.map(u64),
            postBalances: rec.postBalances.map(u64),
            logMessages: rec.logs,
            computeUnitsConsumed: u64(rec.units),
          },
        },
      },
    });
  }
}
