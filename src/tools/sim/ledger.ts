// One cluster's ledger: the transaction runtime (litesvm, Agave's own) executes each
// transaction once, when it lands, and the ledger keeps what nodes at other slots must see:
// every touched account's state per slot, and each landed transaction's record. Reads go to
// these maps, never through the runtime per call (docs/simulator.md "State and lag").

import { createHash } from 'node:crypto';
import { createRequire } from 'node:module';
import type { Account, LiteSvm } from 'litesvm/dist/internal.js';
import { encodeBase58 } from '../../solana/base58.js';
import { BLOCKHASH_VALID_SLOTS, slotOfBlockhash } from './chain.js';
import { budgetOf, feeOf } from './fees.js';
import { runtimeError, type TxError } from './tx-errors.js';
import { isWritable, signerFromSeed, transferTx, type ParsedTx, type Signer, parseTx } from './wire.js';

type Runtime = typeof import('litesvm/dist/internal.js');
let loaded: Runtime | null = null;

/**
 * The runtime's raw-bytes API (its typed entry point takes @solana/kit objects). Loaded on first
 * use: a node in synthetic mode that never sees a transaction does not carry the native module.
 */
function runtime(): Runtime {
  return (loaded ??= createRequire(import.meta.url)('litesvm/dist/internal.js') as Runtime);
}

export interface AccountState {
  lamports: bigint;
  owner: string;
  executable: boolean;
  data: Buffer;
  rentEpoch: bigint;
}

interface Version {
  slot: number;
  state: AccountState | null;
}

export interface TxRecord {
  signature: string;
  slot: number;
  tx: ParsedTx;
  /** null when it succeeded. */
  err: TxError | null;
  logs: string[];
  fee: bigint;
  units: bigint;
  preBalances: bigint[];
  postBalances: bigint[];
  /** Micro-lamports per compute unit it offered. */
  unitPrice: bigint;
}

export interface Simulation {
  err: TxError | null;
  logs: string[];
  units: bigint;
}

/** What the ledger needs from its cluster's clock. */
export interface LedgerClock {
  /** The slot the next landed transaction goes into. */
  nextSlot(): number;
}

/** Per account, versions beyond this many are forgotten (the oldest first). */
const MAX_VERSIONS = 64;
/** Landed transactions remembered; past this the oldest are forgotten. */
const MAX_RECORDS = 200_000;
const FAUCET_LAMPORTS = 500_000_000n * 1_000_000_000n;
const ZERO_OWNER = '11111111111111111111111111111111';

export class Ledger {
  private svmInstance: LiteSvm | null = null;
  private readonly versions = new Map<string, Version[]>();
  private readonly records = new Map<string, TxRecord>();
  /** Landed transactions in slot order (for logs, statuses by slot and WS). */
  readonly landed: TxRecord[] = [];
  /** Account changes in slot order: the slot and the key. */
  readonly changes: { slot: number; key: string }[] = [];
  /** By address: signatures of landed transactions that named it, oldest first. */
  private readonly byAddress = new Map<string, TxRecord[]>();
  readonly faucet: Signer = signerFromSeed(createHash('sha256').update('jumpgate-sim-faucet').digest());

  constructor(private readonly clock: LedgerClock) {}

  private get svm(): LiteSvm {
    if (this.svmInstance === null) {
      const svm = new (runtime().LiteSvm)();
      // Blockhash age is judged per node view (node.ts), against the cluster's own hashes.
      svm.setBlockhashCheck(false);
      svm.setAccount(this.faucet.pubkey, new (runtime().Account)(FAUCET_LAMPORTS, new Uint8Array(0), new Uint8Array(32), false, 0n));
      this.svmInstance = svm;
    }
    return this.svmInstance;
  }

  /** Creates the runtime now (tens of ms) rather than inside the first request that needs it. */
  warm(): void {
    void this.svm;
  }

  /** Whether the ledger has a history for `key` (else it is as at genesis). */
  knows(key: string): boolean {
    return this.versions.has(key);
  }

  /** The account at `slot`; undefined when the ledger never touched it (see `genesis`). */
  accountAt(key: string, slot: number): AccountState | null | undefined {
    const vs = this.versions.get(key);
    if (vs === undefined) return undefined;
    for (let i = vs.length - 1; i >= 0; i--) if (vs[i]!.slot <= slot) return vs[i]!.state;
    return vs[0]!.state;
  }

  /** An account the ledger never touched, as the runtime holds it (programs, sysvars) or null. */
  genesis(keyBytes: Uint8Array): AccountState | null {
    return stateOf(this.svm.getAccount(keyBytes));
  }

  /** Keys with a history whose state at `slot` is owned by `owner`. */
  ownedBy(owner: string, slot: number): { key: string; state: AccountState }[] {
    const out: { key: string; state: AccountState }[] = [];
    for (const key of this.versions.keys()) {
      const s = this.accountAt(key, slot);
      if (s !== null && s !== undefined && s.owner === owner) out.push({ key, state: s });
    }
    return out;
  }

  rentExempt(space: number): bigint {
    return this.svm.minimumBalanceForRentExemption(BigInt(space));
  }

  record(signature: string): TxRecord | undefined {
    return this.records.get(signature);
  }

  /** Landed transactions naming `address`, newest first. */
  signaturesFor(address: string): readonly TxRecord[] {
    return this.byAddress.get(address) ?? [];
  }

  /** Runs a transaction without landing it (state as it is now, latest). */
  simulate(tx: ParsedTx, sigVerify: boolean): Simulation {
    const svm = this.svm;
    if (!sigVerify) svm.setSigverify(false);
    try {
      const r = tx.version === 'legacy' ? svm.simulateLegacyTransaction(tx.bytes) : svm.simulateVersionedTransaction(tx.bytes);
      if (r instanceof runtime().FailedTransactionMetadata) {
        const m = r.meta();
        return { err: runtimeError(r.err()), logs: m.logs(), units: m.computeUnitsConsumed() };
      }
      const m = r.meta();
      return { err: null, logs: m.logs(), units: m.computeUnitsConsumed() };
    } finally {
      if (!sigVerify) svm.setSigverify(true);
    }
  }

  /**
   * Lands a transaction in the next slot, once: a copy of a landed one, one whose blockhash
   * expired by then, or one that fails before paying its fee (bad signature, no funds) is
   * dropped, as a leader drops it. Returns the record, or null when dropped.
   */
  land(tx: ParsedTx): TxRecord | null {
    const sig = tx.signatures[0]!;
    if (this.records.has(sig)) return null;
    const slot = this.clock.nextSlot();
    const made = slotOfBlockhash(tx.blockhash);
    if (made < 0 || made > slot || slot - made > BLOCKHASH_VALID_SLOTS) return null;
    const svm = this.svm;
    for (let i = 0; i < tx.keys.length; i++) {
      if (!this.versions.has(tx.keys[i]!)) this.versions.set(tx.keys[i]!, [{ slot: -1, state: stateOf(svm.getAccount(tx.keyBytes[i]!)) }]);
    }
    const preBalances = tx.keys.map((k) => this.accountAt(k, slot)?.lamports ?? 0n);
    const r = tx.version === 'legacy' ? svm.sendLegacyTransaction(tx.bytes) : svm.sendVersionedTransaction(tx.bytes);
    let err: TxError | null = null;
    if (r instanceof runtime().FailedTransactionMetadata) {
      err = runtimeError(r.err());
      if (!err.landed) return null;
    }
    const meta = r instanceof runtime().FailedTransactionMetadata ? r.meta() : r;
    for (let i = 0; i < tx.keys.length; i++) {
      if (isWritable(tx, i)) this.put(tx.keys[i]!, slot, stateOf(svm.getAccount(tx.keyBytes[i]!)));
    }
    const rec: TxRecord = {
      signature: sig,
      slot,
      tx,
      err,
      logs: meta.logs(),
      fee: feeOf(tx),
      units: meta.computeUnitsConsumed(),
      preBalances,
      postBalances: tx.keys.map((k) => this.accountAt(k, slot)?.lamports ?? 0n),
      unitPrice: budgetOf(tx).unitPrice,
    };
    this.records.set(sig, rec);
    this.landed.push(rec);
    for (const k of new Set(tx.keys)) {
      let list = this.byAddress.get(k);
      if (list === undefined) this.byAddress.set(k, (list = []));
      list.push(rec);
    }
    this.prune();
    return rec;
  }

  /** A faucet transfer to `to` (requestAirdrop), signed over `blockhash`. */
  airdropTx(to: Buffer, lamports: bigint, blockhash: string): ParsedTx {
    return parseTx(transferTx(this.faucet, to, lamports, blockhash));
  }

  private put(key: string, slot: number, state: AccountState | null): void {
    const vs = this.versions.get(key)!;
    const last = vs[vs.length - 1]!;
    if (same(last.state, state)) return;
    if (last.slot === slot) last.state = state;
    else vs.push({ slot, state });
    if (vs.length > MAX_VERSIONS) vs.splice(0, vs.length - MAX_VERSIONS);
    this.changes.push({ slot, key });
  }

  private prune(): void {
    if (this.landed.length <= MAX_RECORDS) return;
    const gone = this.landed.splice(0, this.landed.length - MAX_RECORDS / 2);
    for (const rec of gone) {
      this.records.delete(rec.signature);
      for (const k of rec.tx.keys) this.byAddress.get(k)?.shift();
    }
    const keepFrom = this.landed[0]!.slot;
    let i = 0;
    while (i < this.changes.length && this.changes[i]!.slot < keepFrom) i++;
    this.changes.splice(0, i);
  }
}

function stateOf(a: Account | null): AccountState | null {
  if (a === null) return null;
  const lamports = a.lamports();
  // The runtime answers a drained account with zero lamports; a node answers null.
  if (lamports === 0n) return null;
  const owner = a.owner();
  return {
    lamports,
    owner: owner.every((b) => b === 0) ? ZERO_OWNER : encodeBase58(owner),
    executable: a.executable(),
    data: Buffer.from(a.data()),
    rentEpoch: a.rentEpoch(),
  };
}

function same(a: AccountState | null, b: AccountState | null): boolean {
  if (a === null || b === null) return a === b;
  return a.lamports === b.lamports && a.owner === b.owner && a.executable === b.executable && a.data.equals(b.data);
}
