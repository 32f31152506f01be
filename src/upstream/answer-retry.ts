// What a Solana node's answer teaches routing, and whether it sends the call on to another
// node (docs/solana-routing.md "Agave error classes", "Blockhash-aware sends"). Read from the
// answer's bytes: only an error answer (UpstreamCall.rpcError) is scanned, and never re-encoded.

import { answerSlot } from '../routing/answer-slot.js';
import { routable } from '../routing/node-view.js';
import { classOf, errorCodeOf, ErrorClass, isBlockhashNotFound, numSlotsBehindOf } from '../solana/agave-errors.js';
import { FreshCause, type FreshRouting } from '../solana/fresh-routing.js';
import type { UpstreamCall } from './call.js';
import type { UpstreamNode } from './node.js';

const BLOCKHASH_KEY = Buffer.from('"blockhash":"');

/** Bits of the nodes labelled `history: archive`: "not available" answers are retried there. */
export function archiveBitsOf(nodes: readonly UpstreamNode[]): number {
  let bits = 0;
  for (const n of nodes) if (n.labels?.['history'] === 'archive') bits |= n.bit;
  return bits;
}

/**
 * A getLatestBlockhash answer passing through teaches the book its blockhash (context slot as
 * an upper bound), and the node's chain view that it reached that slot at the call's commitment
 * (Agave answers from the bank at that commitment): a send signed over it may go to that node at
 * once, without waiting for the chain watch's next poll. Returns the context slot, 0 without one.
 */
export function learnBlockhash(call: UpstreamCall, node: UpstreamNode, fresh: FreshRouting): number {
  const body = call.response!;
  const at = body.indexOf(BLOCKHASH_KEY);
  if (at < 0) return 0;
  const start = at + BLOCKHASH_KEY.length;
  const end = body.indexOf(0x22, start);
  const slot = answerSlot(body, false);
  if (end <= start || slot <= 0) return 0;
  fresh.book.learnBase58(body, start, end, slot);
  node.chain.raise(fresh.commitment(call), slot);
  return slot;
}

/**
 * A node's error answer that another node may not give: true when the call goes on to another
 * node. Each call is retried so at most once, within routing.maxAttempts; a write method only
 * when the node ran nothing (a failed preflight).
 */
export function retryOnAnotherNode(
  fresh: FreshRouting,
  nodes: readonly UpstreamNode[],
  archiveBits: number,
  maxAttempts: number,
  call: UpstreamCall,
  node: UpstreamNode,
  body: Buffer,
): boolean {
  if (call.freshRetried || call.attempts >= maxAttempts || !call.rpcError) return false;
  const code = errorCodeOf(body);
  let cause: FreshCause;
  if (code === -32016) {
    // Only when the node was believed to have reached the slot: else the freshest node's answer stands.
    if (call.needSlot < 0 || node.chain.slot(call.needCommitment) < call.needSlot) return false;
    cause = FreshCause.RetriedContextSlot;
  } else if (code === -32002) {
    if (call.method !== 'sendTransaction' || !isBlockhashNotFound(body) || call.hashSlot < 0) return false;
    cause = FreshCause.RetriedBlockhash;
  } else {
    const cls = classOf(code);
    if (!call.retrySafe || cls === ErrorClass.Final) return false;
    if (cls === ErrorClass.MarkNode) {
      const behind = numSlotsBehindOf(body);
      if (behind >= 0) node.chain.sayBehind(behind, Date.now());
    }
    if (cls === ErrorClass.Archive) {
      if ((archiveBits & ~call.tried) === 0) return false;
      call.archiveOnly = true;
      cause = FreshCause.RetriedOnArchive;
    } else cause = FreshCause.RetriedErrorClass;
  }
  // Another node must be there to ask, or the answer stands.
  if (!nodes.some((n) => n !== node && (n.bit & call.tried) === 0 && routable(n))) return false;
  call.freshRetried = true;
  fresh.tally(cause);
  return true;
}
