// Agave's RPC server errors (-32001 … -32019) and what the gateway does with each
// (docs/solana-routing.md "Agave error classes"). A node's answer is classified by its code
// alone, so the decision costs one table lookup and never a parse of the node's body.

import { Byte, ERROR_KEY } from '../rpc/bytes.js';
import { skipWs, uintOf } from '../rpc/json-bytes.js';
import { memberSpan } from '../rpc/scan.js';

/** What a node's error answer means for routing. */
export const enum ErrorClass {
  /** The answer is the client's: pass it through unchanged. */
  Final = 0,
  /** Another node may answer it (stale or not yet caught up): retry there, for retry-safe methods. */
  Retry = 1,
  /** The node is not fit to serve: mark it (its chain view or health) and retry elsewhere. */
  MarkNode = 2,
  /** The node lacks this history: retry on a node labelled `history: archive` when one exists. */
  Archive = 3,
}

export interface AgaveError {
  readonly code: number;
  readonly name: string;
  readonly cls: ErrorClass;
  /** Why it is classed so, for the docs table. */
  readonly why: string;
}

export const AGAVE_ERRORS: readonly AgaveError[] = [
  { code: -32001, name: 'BlockCleanedUp', cls: ErrorClass.Archive, why: "the block is below this node's first available block; an archive node has it" },
  {
    code: -32002,
    name: 'SendTransactionPreflightFailure',
    cls: ErrorClass.Final,
    why: 'the transaction failed simulation; only `BlockhashNotFound` is retried, on a node that has the blockhash',
  },
  { code: -32003, name: 'TransactionSignatureVerificationFailure', cls: ErrorClass.Final, why: 'the transaction itself is wrong on every node' },
  { code: -32004, name: 'BlockNotAvailable', cls: ErrorClass.Retry, why: 'this node has not stored the block yet; a fresher node may have it' },
  { code: -32005, name: 'NodeUnhealthy', cls: ErrorClass.MarkNode, why: 'the node is behind (`numSlotsBehind` feeds its chain view)' },
  { code: -32006, name: 'TransactionPrecompileVerificationFailure', cls: ErrorClass.Final, why: 'the transaction itself is wrong on every node' },
  { code: -32007, name: 'SlotSkipped', cls: ErrorClass.Archive, why: 'skipped, or missing after a snapshot jump on this node; an archive node knows which' },
  { code: -32008, name: 'NoSnapshot', cls: ErrorClass.MarkNode, why: 'the node has no snapshot to serve from' },
  { code: -32009, name: 'LongTermStorageSlotSkipped', cls: ErrorClass.Archive, why: "missing in this node's long-term storage" },
  { code: -32010, name: 'KeyExcludedFromSecondaryIndex', cls: ErrorClass.Retry, why: 'this node was started without the index; another may have it' },
  { code: -32011, name: 'TransactionHistoryNotAvailable', cls: ErrorClass.Archive, why: 'this node keeps no transaction history' },
  { code: -32012, name: 'ScanError', cls: ErrorClass.Final, why: 'the scan is too large or malformed for any node' },
  { code: -32013, name: 'TransactionSignatureLenMismatch', cls: ErrorClass.Final, why: 'the transaction itself is wrong on every node' },
  { code: -32014, name: 'BlockStatusNotAvailableYet', cls: ErrorClass.Retry, why: 'this node has not confirmed the block yet; a fresher node may have' },
  { code: -32015, name: 'UnsupportedTransactionVersion', cls: ErrorClass.Final, why: 'the client must ask with `maxSupportedTransactionVersion`' },
  {
    code: -32016,
    name: 'MinContextSlotNotReached',
    cls: ErrorClass.Retry,
    why: 'this node is behind the asked slot; retried once on a node believed to have reached it',
  },
  { code: -32017, name: 'EpochRewardsPeriodActive', cls: ErrorClass.Final, why: 'the same on every node until the rewards period ends' },
  { code: -32018, name: 'SlotNotEpochBoundary', cls: ErrorClass.Final, why: 'the asked slot is wrong on every node' },
  { code: -32019, name: 'LongTermStorageUnreachable', cls: ErrorClass.Retry, why: 'this node could not reach its long-term storage; another may' },
];

const FIRST = -32019;
const BY_CODE: (AgaveError | undefined)[] = [];
for (const e of AGAVE_ERRORS) BY_CODE[e.code - FIRST] = e;

/** The class of an error code; codes outside Agave's server range are final. */
export function classOf(code: number): ErrorClass {
  if (code < FIRST || code > -32001) return ErrorClass.Final;
  return BY_CODE[code - FIRST]?.cls ?? ErrorClass.Final;
}

export function agaveError(code: number): AgaveError | undefined {
  return code < FIRST || code > -32001 ? undefined : BY_CODE[code - FIRST];
}

const CODE_KEY = Buffer.from('"code"');
const DATA_KEY = Buffer.from('"data"');
const NUM_SLOTS_BEHIND_KEY = Buffer.from('"numSlotsBehind"');
const BLOCKHASH_NOT_FOUND = Buffer.from('"BlockhashNotFound"');
const span = new Int32Array(2);

/** Integer at `buf[s,e)` (an optional minus sign, at most 15 digits), NaN otherwise. */
function intAt(buf: Buffer, s: number, e: number): number {
  const neg = buf[s] === 0x2d;
  const v = uintOf(buf, neg ? s + 1 : s, e);
  return v < 0 ? NaN : neg ? -v : v;
}

/** Where the error object of a single answer sits: span[0..1], or false when it has none. */
function errorSpan(body: Buffer): boolean {
  const start = skipWs(body, 0, body.length);
  return body[start] === Byte.LBRACE && memberSpan(body, start, body.length, ERROR_KEY, span) && body[span[0]!] === Byte.LBRACE;
}

/** The `error.code` of a single JSON-RPC answer, or NaN when it is not an error answer. */
export function errorCodeOf(body: Buffer): number {
  if (!errorSpan(body)) return NaN;
  const es = span[0]!;
  const ee = span[1]!;
  return memberSpan(body, es, ee, CODE_KEY, span) ? intAt(body, span[0]!, span[1]!) : NaN;
}

/** -32005's `data.numSlotsBehind`, or -1 when absent or null. */
export function numSlotsBehindOf(body: Buffer): number {
  if (!errorSpan(body) || !memberSpan(body, span[0]!, span[1]!, DATA_KEY, span) || body[span[0]!] !== Byte.LBRACE) return -1;
  if (!memberSpan(body, span[0]!, span[1]!, NUM_SLOTS_BEHIND_KEY, span)) return -1;
  const v = intAt(body, span[0]!, span[1]!);
  return v >= 0 ? v : -1;
}

/** A -32002 preflight failure whose simulation error is BlockhashNotFound (`data.err`). */
export function isBlockhashNotFound(body: Buffer): boolean {
  if (!errorSpan(body) || !memberSpan(body, span[0]!, span[1]!, DATA_KEY, span)) return false;
  const i = body.indexOf(BLOCKHASH_NOT_FOUND, span[0]!);
  return i >= 0 && i < span[1]!;
}
