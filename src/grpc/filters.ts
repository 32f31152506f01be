// A client's SubscribeRequest compiled into matchers (Yellowstone's filter semantics,
// docs/grpc.md "Filters"), checked against the documented limits first. Keys are compared as
// latin1 strings of their raw bytes, like ./update.ts reads them. `match()` answers the
// `filters` field for this client (the names of its filters the update matches), already
// encoded, or null.

import { getBase58Encoder } from '@solana/kit';
import type { AccountFilterObject, SubscribeRequestObject, TransactionFilterObject } from './proto.js';
import { KIND_ACCOUNT, KIND_BLOCK_META, KIND_SLOT, KIND_TRANSACTION, type Update } from './update.js';
import { encodeFilterNames } from './wire.js';

/** `grpc.limits` (docs/grpc.md "Configuration"). */
export interface GrpcLimits {
  maxStreamsPerToken: number;
  maxFiltersPerStream: number;
  maxAccountsPerFilter: number;
  maxOwnersPerFilter: number;
  maxDataFiltersPerFilter: number;
  maxQueuedMessages: number;
  maxRequestBytes: number;
}

export const COMMITMENT_PROCESSED = 0;
export const COMMITMENT_CONFIRMED = 1;
export const COMMITMENT_FINALIZED = 2;
const MAX_MEMCMP_BYTES = 128;
const MAX_FILTER_NAME = 128;

/** A request the listener refuses with INVALID_ARGUMENT; the message names the rule or limit. */
export class FilterError extends Error {}

const base58 = getBase58Encoder();

function keyBytes(s: unknown, size: number, what: string): string {
  if (typeof s !== 'string' || s.length > 90) throw new FilterError(`${what}: expected a base58 string`);
  let b: Buffer;
  try {
    b = Buffer.from(base58.encode(s));
  } catch {
    throw new FilterError(`${what}: "${s.slice(0, 60)}" is not base58`);
  }
  if (b.length !== size) throw new FilterError(`${what}: "${s}" is not ${size} bytes`);
  return b.toString('latin1');
}

function keySet(list: string[] | undefined, max: number, limit: string, what: string): Set<string> | null {
  if (list === undefined || list.length === 0) return null;
  if (list.length > max) throw new FilterError(`${what}: ${list.length} keys, more than ${limit} (${max})`);
  return new Set(list.map((k) => keyBytes(k, 32, what)));
}

/**
 * One encoding per filter name, shared by every client that uses the name: the fan-out frames an
 * update once per distinct encoding and tells them apart by identity first (./feed.ts). Bounded:
 * past INTERNED_MAX names, a name gets an encoding of its own (compared by content).
 */
const interned = new Map<string, Buffer>();
const INTERNED_MAX = 4096;

function encodedName(name: string): Buffer {
  let b = interned.get(name);
  if (b === undefined) {
    b = encodeFilterNames([name]);
    if (interned.size < INTERNED_MAX) interned.set(name, b);
  }
  return b;
}

class Named {
  readonly encoded: Buffer;
  constructor(readonly name: string) {
    this.encoded = encodedName(name);
  }
}

class SlotFilter extends Named {
  constructor(
    name: string,
    readonly byCommitment: boolean,
    readonly interslot: boolean,
  ) {
    super(name);
  }
}

interface DataCheck {
  offset: number;
  bytes: Buffer | null;
  size: number;
  lamports: ((n: number) => boolean) | null;
}

class AccountFilter extends Named {
  constructor(
    name: string,
    readonly accounts: Set<string> | null,
    readonly owners: Set<string> | null,
    readonly checks: DataCheck[],
    /** The original lists in base58, for the upstream request (./union.ts). */
    readonly accountList: readonly string[],
    readonly ownerList: readonly string[],
  ) {
    super(name);
  }

  matches(u: Update): boolean {
    if (this.accounts !== null && !this.accounts.has(u.key)) return false;
    if (this.owners !== null && !this.owners.has(u.owner)) return false;
    for (const c of this.checks) {
      if (c.lamports !== null) {
        if (!c.lamports(u.lamports)) return false;
      } else if (c.bytes !== null) {
        const at = u.dataStart + c.offset;
        if (at + c.bytes.length > u.dataEnd || u.raw.compare(c.bytes, 0, c.bytes.length, at, at + c.bytes.length) !== 0) return false;
      } else if (u.dataEnd - u.dataStart !== c.size) return false;
    }
    return true;
  }
}

function anyIn(keys: readonly string[], set: Set<string>): boolean {
  for (const k of keys) if (set.has(k)) return true;
  return false;
}

class TransactionFilter extends Named {
  constructor(
    name: string,
    readonly vote: boolean | undefined,
    readonly failed: boolean | undefined,
    readonly signature: string | null,
    readonly include: Set<string> | null,
    readonly exclude: Set<string> | null,
    readonly required: Set<string> | null,
    readonly includeList: readonly string[],
  ) {
    super(name);
  }

  matches(u: Update): boolean {
    if (this.vote !== undefined && u.isVote !== this.vote) return false;
    if (this.failed !== undefined && u.failed !== this.failed) return false;
    if (this.signature !== null && u.key !== this.signature) return false;
    const keys = u.accountKeys;
    if (this.include !== null && !anyIn(keys, this.include)) return false;
    if (this.exclude !== null && anyIn(keys, this.exclude)) return false;
    if (this.required !== null) {
      for (const r of this.required) if (!keys.includes(r)) return false;
    }
    return true;
  }
}

function entries<T>(m: Record<string, T> | undefined): [string, T][] {
  return m === undefined ? [] : Object.entries(m);
}

function dataChecks(name: string, f: AccountFilterObject, limits: GrpcLimits): DataCheck[] {
  const list = f.filters ?? [];
  const what = `accounts["${name}"].filters`;
  if (list.length > limits.maxDataFiltersPerFilter)
    throw new FilterError(`${what}: ${list.length} filters, more than grpc.limits.maxDataFiltersPerFilter (${limits.maxDataFiltersPerFilter})`);
  return list.map((d) => {
    if (d.memcmp !== undefined) {
      const m = d.memcmp;
      let bytes: Buffer;
      if (m.bytes !== undefined) bytes = Buffer.from(m.bytes);
      else if (m.base64 !== undefined) bytes = Buffer.from(m.base64, 'base64');
      else if (m.base58 !== undefined) {
        try {
          bytes = Buffer.from(base58.encode(m.base58));
        } catch {
          throw new FilterError(`${what}.memcmp.base58: not base58`);
        }
      } else throw new FilterError(`${what}.memcmp: no data`);
      if (bytes.length > MAX_MEMCMP_BYTES) throw new FilterError(`${what}.memcmp: more than ${MAX_MEMCMP_BYTES} bytes`);
      return { offset: m.offset ?? 0, bytes, size: 0, lamports: null };
    }
    if (d.datasize !== undefined) return { offset: 0, bytes: null, size: d.datasize, lamports: null };
    if (d.lamports !== undefined) {
      const l = d.lamports;
      const cmp =
        l.eq !== undefined
          ? (n: number) => n === l.eq
          : l.ne !== undefined
            ? (n: number) => n !== l.ne
            : l.lt !== undefined
              ? (n: number) => n < l.lt!
              : l.gt !== undefined
                ? (n: number) => n > l.gt!
                : null;
      if (cmp === null) throw new FilterError(`${what}.lamports: no comparison`);
      return { offset: 0, bytes: null, size: 0, lamports: cmp };
    }
    throw new FilterError(`${what}: only memcmp, datasize and lamports are served`);
  });
}

function accountFilter(name: string, f: AccountFilterObject, limits: GrpcLimits): AccountFilter {
  if (f.cuckooAccountsFilter !== undefined) throw new FilterError(`accounts["${name}"]: cuckoo filters are not served`);
  if (f.nonemptyTxnSignature !== undefined) throw new FilterError(`accounts["${name}"]: nonempty_txn_signature is not served`);
  const accounts = keySet(f.account, limits.maxAccountsPerFilter, 'grpc.limits.maxAccountsPerFilter', `accounts["${name}"].account`);
  const owners = keySet(f.owner, limits.maxOwnersPerFilter, 'grpc.limits.maxOwnersPerFilter', `accounts["${name}"].owner`);
  return new AccountFilter(name, accounts, owners, dataChecks(name, f, limits), f.account ?? [], f.owner ?? []);
}

function transactionFilter(name: string, f: TransactionFilterObject, limits: GrpcLimits): TransactionFilter {
  const what = `transactions["${name}"]`;
  if (f.cuckooAccountInclude !== undefined || f.tokenAccounts !== undefined)
    throw new FilterError(`${what}: cuckoo filters and token account expansion are not served`);
  const max = limits.maxAccountsPerFilter;
  const lim = 'grpc.limits.maxAccountsPerFilter';
  const include = keySet(f.accountInclude, max, lim, `${what}.account_include`);
  const exclude = keySet(f.accountExclude, max, lim, `${what}.account_exclude`);
  const required = keySet(f.accountRequired, max, lim, `${what}.account_required`);
  const signature = f.signature === undefined ? null : keyBytes(f.signature, 64, `${what}.signature`);
  return new TransactionFilter(name, f.vote, f.failed, signature, include, exclude, required, f.accountInclude ?? []);
}

export class ClientFilters {
  constructor(
    readonly commitment: number,
    readonly slots: readonly SlotFilter[],
    readonly accounts: readonly AccountFilter[],
    readonly transactions: readonly TransactionFilter[],
    readonly blocksMeta: readonly Named[],
  ) {}

  get empty(): boolean {
    return this.slots.length + this.accounts.length + this.transactions.length + this.blocksMeta.length === 0;
  }

  /** The encoded `filters` field naming this client's filters that match, or null. */
  match(u: Update): Buffer | null {
    // One loop per kind, no closure: this runs for every client on every update.
    let first: Named | null = null;
    let more: string[] | null = null;
    switch (u.kind) {
      case KIND_SLOT:
        for (const f of this.slots) {
          if ((f.byCommitment && u.status !== this.commitment) || (!f.interslot && u.status > 2 && u.status !== 6)) continue;
          if (first === null) first = f;
          else (more ??= [first.name]).push(f.name);
        }
        break;
      case KIND_ACCOUNT:
        for (const f of this.accounts) {
          if (!f.matches(u)) continue;
          if (first === null) first = f;
          else (more ??= [first.name]).push(f.name);
        }
        break;
      case KIND_TRANSACTION:
        for (const f of this.transactions) {
          if (!f.matches(u)) continue;
          if (first === null) first = f;
          else (more ??= [first.name]).push(f.name);
        }
        break;
      case KIND_BLOCK_META:
        for (const f of this.blocksMeta) {
          if (first === null) first = f;
          else (more ??= [first.name]).push(f.name);
        }
        break;
      default:
        return null;
    }
    if (first === null) return null;
    return more === null ? first.encoded : encodeFilterNames(more);
  }
}

function checkName(name: string): void {
  if (name.length > MAX_FILTER_NAME) throw new FilterError(`a filter name is longer than ${MAX_FILTER_NAME} characters`);
}

/** Compiles a request's filters; throws FilterError naming the broken rule or limit. */
export function compileFilters(req: SubscribeRequestObject, limits: GrpcLimits): ClientFilters {
  for (const [field, label] of [
    ['transactionsStatus', 'transactions_status'],
    ['blocks', 'blocks'],
    ['entry', 'entry'],
  ] as const) {
    if (Object.keys(req[field] ?? {}).length > 0) throw new FilterError(`${label} subscriptions are not served (docs/grpc.md "Filters")`);
  }
  if ((req.accountsDataSlice ?? []).length > 0) throw new FilterError('accounts_data_slice is not served: updates pass through as the source sent them');
  const commitment = req.commitment ?? COMMITMENT_PROCESSED;
  if (commitment !== COMMITMENT_PROCESSED && commitment !== COMMITMENT_CONFIRMED && commitment !== COMMITMENT_FINALIZED)
    throw new FilterError(`commitment ${commitment} is not a CommitmentLevel`);
  const slots = entries(req.slots);
  const accounts = entries(req.accounts);
  const txs = entries(req.transactions);
  const metas = entries(req.blocksMeta);
  const total = slots.length + accounts.length + txs.length + metas.length;
  if (total > limits.maxFiltersPerStream) throw new FilterError(`${total} filters, more than grpc.limits.maxFiltersPerStream (${limits.maxFiltersPerStream})`);
  for (const [n] of [...slots, ...accounts, ...txs, ...metas]) checkName(n);
  return new ClientFilters(
    commitment,
    slots.map(([n, f]) => new SlotFilter(n, f.filterByCommitment === true, f.interslotUpdates === true)),
    accounts.map(([n, f]) => accountFilter(n, f, limits)),
    txs.map(([n, f]) => transactionFilter(n, f, limits)),
    metas.map(([n]) => new Named(n)),
  );
}

export type { AccountFilter, TransactionFilter };
