// The one upstream call per poll that tells the tracker where its transactions stand
// (docs/landing.md "Tracking"): a JSON-RPC batch with the node's processed slot,
// getSignatureStatuses over every tracked signature (256 per element, Agave's limit) and
// isBlockhashValid for each blockhash whose transactions have no status yet. One HTTP request
// however many transactions are tracked; its answer is parsed once (it is the gateway's own
// call, not a client's answer passing through).

import { COMMITMENT_NAMES } from '../solana/chain-view.js';

/** Agave's MAX_GET_SIGNATURE_STATUSES_QUERY_ITEMS. */
export const STATUSES_PER_CALL = 256;
/** Blockhashes checked per poll at most (bots sign with a handful at a time). */
export const MAX_HASHES_PER_POLL = 64;

/** A signature's status as Agave reports it; null when the node knows none. */
export interface SignatureStatus {
  slot: number;
  /** 0 processed, 1 confirmed, 2 finalized (chain-view.ts Commitment). */
  level: number;
  failed: boolean;
}

export interface PollAnswer {
  /** The node's processed slot (-1 when its answer lacked it). */
  slot: number;
  /** In the order of the signatures asked. */
  statuses: (SignatureStatus | null)[];
  /** Per blockhash asked: true valid, false expired, null unknown (the element failed). */
  valid: Map<string, boolean>;
}

/** The batch body for `signatures` and `hashes`; ids: 0 the slot, 1… the status chunks, then the hashes. */
export function pollBody(signatures: readonly string[], hashes: readonly string[]): string {
  let body = '[{"jsonrpc":"2.0","id":0,"method":"getSlot","params":[{"commitment":"processed"}]}';
  let id = 1;
  for (let i = 0; i < signatures.length; i += STATUSES_PER_CALL) {
    const chunk = signatures.slice(i, i + STATUSES_PER_CALL);
    body += ',{"jsonrpc":"2.0","id":' + id++ + ',"method":"getSignatureStatuses","params":[' + JSON.stringify(chunk) + ']}';
  }
  for (const h of hashes) body += ',{"jsonrpc":"2.0","id":' + id++ + ',"method":"isBlockhashValid","params":["' + h + '",{"commitment":"processed"}]}';
  return body + ']';
}

interface Element {
  id?: unknown;
  result?: unknown;
}

function statusOf(v: unknown): SignatureStatus | null {
  if (v === null || typeof v !== 'object') return null;
  const s = v as { slot?: unknown; err?: unknown; confirmationStatus?: unknown };
  if (typeof s.slot !== 'number') return null;
  const level = COMMITMENT_NAMES.indexOf(s.confirmationStatus as (typeof COMMITMENT_NAMES)[number]);
  return { slot: s.slot, level: level < 0 ? 0 : level, failed: s.err !== null && s.err !== undefined };
}

/**
 * Reads the node's answer to `pollBody(signatures, hashes)`; null when it is no batch answer.
 * A status chunk that failed reads as unknown (null statuses): nothing is concluded from it.
 */
export function readPollAnswer(text: string, signatures: readonly string[], hashes: readonly string[]): PollAnswer | null {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return null;
  }
  if (!Array.isArray(parsed)) return null;
  const byId = new Map<number, unknown>();
  for (const e of parsed as Element[]) if (e !== null && typeof e === 'object' && typeof e.id === 'number' && 'result' in e) byId.set(e.id, e.result);
  const slot = byId.get(0);
  const chunks = Math.ceil(signatures.length / STATUSES_PER_CALL);
  // A signature whose chunk failed reads as UNKNOWN, not as "no status" (null) next to an expired blockhash.
  const statuses = new Array<SignatureStatus | null>(signatures.length).fill(UNKNOWN);
  for (let c = 0; c < chunks; c++) {
    const value = (byId.get(1 + c) as { value?: unknown } | undefined)?.value;
    if (!Array.isArray(value)) continue;
    for (let i = 0; i < value.length && c * STATUSES_PER_CALL + i < signatures.length; i++) statuses[c * STATUSES_PER_CALL + i] = statusOf(value[i]);
  }
  const valid = new Map<string, boolean>();
  hashes.forEach((h, i) => {
    const v = (byId.get(1 + chunks + i) as { value?: unknown } | undefined)?.value;
    if (typeof v === 'boolean') valid.set(h, v);
  });
  return { slot: typeof slot === 'number' ? slot : -1, statuses, valid };
}

/** A status the answer did not give (its chunk failed): level -1, never an outcome. */
export const UNKNOWN: SignatureStatus = Object.freeze({ slot: -1, level: -1, failed: false });
