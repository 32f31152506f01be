// Fresh-state routing (docs/solana-routing.md): a call that carries `minContextSlot`, and a
// `sendTransaction` whose blockhash the gateway knows, go only to nodes known to have
// reached what they need; when none has, the call waits a bounded time for one and then goes
// to the freshest node, whose answer reaches the client unchanged.
//
// The router asks `excluded()` on every pick: a bitmask of nodes that must not take the call
// (those known to be behind), the same shape as a call's tried-nodes mask, so the existing
// pickers need no other change. What the call needs is read from its bytes once, on its first
// pick, into fields the call carries from its constructor on.

import { Byte, COMMITMENT_KEY, PARAMS_KEY } from '../rpc/bytes.js';
import { routable, type NodeView } from '../routing/node-view.js';
import { bytesAt, skipValue, skipWs } from '../rpc/json-bytes.js';
import { memberSpan } from '../rpc/scan.js';
import { BlockhashBook } from './blockhash-book.js';
import { Commitment, DEFAULT_COMMITMENT, type ChainView } from './chain-view.js';
import { readCallFields, readFields, SolanaFields } from './request-fields.js';
import { lastBlockhash, readRecentBlockhash, TxRead } from './transaction-bytes.js';

/** What the router reads of a node. */
export interface FreshNode extends NodeView {
  readonly chain: ChainView;
}

/** What a call carries for fresh routing; every field set in the call's constructor. */
export interface FreshCall {
  readonly body: Buffer;
  readonly method: string;
  /** A single request's params value in `body`, as the request scan found it; -1, -1 when not given (sub-batches, shared calls). */
  paramsStart: number;
  paramsEnd: number;
  /** Bits of what was read from the body (READ_NEEDS: need/hash fields final; READ_COMMITMENT: needCommitment final). */
  freshRead: number;
  /** minContextSlot, -1 when none. */
  needSlot: number;
  /** Its commitment (chain-view.ts Commitment): minContextSlot's, and the level of its monotonic reads. */
  needCommitment: number;
  /**
   * A batch asking minContextSlot at several commitments, where the highest one does not imply
   * the others: the slot needed at each level (indexed by Commitment, -1 none); null otherwise.
   */
  needByLevel: Float64Array | null;
  /** The blockhash's slot (a processed slot the node must have reached); -1 none, -2 not known yet. */
  hashSlot: number;
  /** The commitment of the send's preflight, at which the node must have the blockhash (Agave's default: finalized). */
  hashCommitment: number;
  /** The blockhash while its slot is not known yet (looked up again on every pick). */
  hash: Uint8Array | null;
  /** The wait is over: the call goes to the freshest node. */
  freshExpired: boolean;
  /** An answer of the node was retried elsewhere already (each kind of retry happens once). */
  freshRetried: boolean;
  /** Only nodes labelled `history: archive` may take it (a "not available" answer is being retried). */
  archiveOnly: boolean;
}

export const enum FreshCause {
  /** Waited for a node to reach minContextSlot. */
  WaitedContextSlot = 0,
  /** Routed a send to nodes known to have its blockhash. */
  RoutedByBlockhash = 1,
  /** Waited for a node known to have the blockhash. */
  WaitedBlockhash = 2,
  /** Gave up waiting and sent to the freshest node. */
  SentToFreshest = 3,
  /** Routed a read away from nodes behind its minContextSlot. */
  RoutedByContextSlot = 4,
  /** A -32016 from a node believed to have reached the slot, retried on another. */
  RetriedContextSlot = 5,
  /** A preflight BlockhashNotFound, retried on a node that has the blockhash. */
  RetriedBlockhash = 6,
  /** A node error of the retry class, retried on another node. */
  RetriedErrorClass = 7,
  /** A "not available" answer retried on a node labelled history: archive. */
  RetriedOnArchive = 8,
}
export const FRESH_CAUSES = [
  'waited_context_slot',
  'routed_by_blockhash',
  'waited_blockhash',
  'sent_to_freshest',
  'routed_by_context_slot',
  'retried_context_slot',
  'retried_blockhash',
  'retried_error_class',
  'retried_on_archive',
] as const;

/** FreshCall.freshRead bits. */
const READ_NEEDS = 1;
const READ_COMMITMENT = 2;

const METHOD_KEY = Buffer.from('"method"');
const SEND_METHOD = Buffer.from('"sendTransaction"');
const MIN_CONTEXT_SLOT = Buffer.from('minContextSlot');
const PROCESSED = Buffer.from('"processed"');
const CONFIRMED = Buffer.from('"confirmed"');
const span = new Int32Array(2);
const fields = new SolanaFields();

export class FreshRouting {
  /** Counters per FreshCause, shared by every worker with the book (Prometheus reads them). */
  counts = new Uint32Array(new SharedArrayBuffer(FRESH_CAUSES.length * 4));

  constructor(
    public book: BlockhashBook,
    public minContextSlotWaitMs: number,
    public blockhashWaitMs: number,
  ) {}

  /** A worker takes the control plane's book (what it learned before is dropped: it is at start). */
  attachBook(buffer: SharedArrayBuffer, counts: SharedArrayBuffer): void {
    if (buffer !== this.book.buffer) this.book = new BlockhashBook(buffer);
    if (counts !== this.counts.buffer) this.counts = new Uint32Array(counts);
  }

  /** How often each FreshCause happened, over every worker. */
  count(cause: FreshCause): number {
    return Atomics.load(this.counts, cause);
  }

  /**
   * Nodes that must not take `call` now: a mask of node bits, 0 when any may (the call needs
   * nothing, or no node's chain is known, so there is nothing to go by).
   */
  excluded(nodes: readonly FreshNode[], call: FreshCall): number {
    if ((call.freshRead & READ_NEEDS) === 0) this.read(call);
    if (call.needSlot < 0 && call.hashSlot === -1) return 0;
    if (call.hashSlot === -2) {
      const s = this.book.slotOf(call.hash!, 0);
      if (s >= 0) {
        call.hashSlot = s;
        call.hash = null;
      }
    }
    let known = false;
    let mask = 0;
    for (let i = 0; i < nodes.length; i++) {
      const n = nodes[i]!;
      const processed = n.chain.slot(Commitment.Processed);
      if (processed === 0) {
        mask |= n.bit;
        continue;
      }
      known = true;
      if (call.needSlot >= 0 && n.chain.slot(call.needCommitment) < call.needSlot) mask |= n.bit;
      else if (call.needByLevel !== null && behindAtSomeLevel(n.chain, call.needByLevel)) mask |= n.bit;
      else if (call.hashSlot === -2 || (call.hashSlot >= 0 && n.chain.slot(call.hashCommitment) < call.hashSlot)) mask |= n.bit;
    }
    return known ? mask : 0;
  }

  /** How long the call may wait for a node that qualifies. */
  waitMs(call: FreshCall): number {
    return call.needSlot >= 0 ? this.minContextSlotWaitMs : this.blockhashWaitMs;
  }

  /** The routable node the call has not tried with the highest slot at its commitment; -1 when none. */
  freshest(nodes: readonly FreshNode[], call: FreshCall & { readonly tried: number }): number {
    const c = call.needSlot >= 0 ? call.needCommitment : call.hashCommitment;
    let best = -1;
    let bestSlot = -1;
    for (let i = 0; i < nodes.length; i++) {
      const n = nodes[i]!;
      if (!routable(n) || (n.bit & call.tried) !== 0) continue;
      const s = n.chain.slot(c);
      if (s > bestSlot) {
        bestSlot = s;
        best = i;
      }
    }
    return best;
  }

  /**
   * The call's commitment, the level its key's monotonic reads are kept at (docs/solana-routing.md
   * "Monotonic reads per commitment"); Agave's default, finalized, when it names none.
   */
  commitment(call: FreshCall): number {
    if ((call.freshRead & READ_COMMITMENT) !== 0) return call.needCommitment;
    const body = call.body;
    const start = skipWs(body, 0, body.length);
    // A batch's level is found again each time (keyed batches only): needCommitment is its minContextSlot's.
    if (body[start] === Byte.LBRACKET) return lowestNamed(body);
    call.freshRead |= READ_COMMITMENT;
    call.needCommitment = DEFAULT_COMMITMENT;
    if (body.indexOf(COMMITMENT_KEY) >= 0) this.readOne(call);
    return call.needCommitment;
  }

  tally(cause: FreshCause): void {
    Atomics.add(this.counts, cause, 1);
  }

  /** Reads what the call needs from its bytes, once: only sends and calls that carry minContextSlot are scanned. */
  private read(call: FreshCall): void {
    call.freshRead |= READ_NEEDS;
    const body = call.body;
    const send = call.method === 'sendTransaction';
    if (!send && body.indexOf(MIN_CONTEXT_SLOT, call.paramsStart < 0 ? 0 : call.paramsStart) < 0) return;
    const start = skipWs(body, 0, body.length);
    if (body[start] === Byte.LBRACKET) return readBatch(call, start);
    if (!this.readOne(call)) return;
    if (fields.minContextSlot >= 0) call.needSlot = fields.minContextSlot;
    if (!send || fields.txStart < 0) return;
    // Preflight checks the blockhash against the bank at preflightCommitment (Agave's default: finalized).
    call.hashCommitment = call.needCommitment;
    if (readRecentBlockhash(body, fields.txStart, fields.txEnd, fields.txEncoding) !== TxRead.Ok) return;
    const s = this.book.slotOf(lastBlockhash, 0);
    if (s >= 0) call.hashSlot = s;
    else {
      call.hashSlot = -2;
      call.hash = lastBlockhash.slice();
    }
  }

  /** Reads a single call's params into `fields` and its commitment into the call; false when it has none to read. */
  private readOne(call: FreshCall): boolean {
    call.freshRead |= READ_COMMITMENT;
    call.needCommitment = DEFAULT_COMMITMENT;
    if (!readCallFields(call.method, call.body, call.paramsStart, call.paramsEnd, fields)) return false;
    if (fields.commitment >= 0) call.needCommitment = fields.commitment;
    return true;
  }
}

/** The highest minContextSlot a batch asks at each commitment (scratch of readBatch). */
const batchNeeds = new Float64Array(3);

/**
 * A (sub-)batch that carries minContextSlot (docs/solana-routing.md "minContextSlot routing"):
 * the one node it goes to must have reached, at each commitment, the highest minContextSlot its
 * calls ask at that commitment. The highest slot (the higher commitment on a tie) is the call's
 * need; the other levels are kept only when it does not imply them (a node's processed slot is
 * at least its confirmed slot, which is at least its finalized slot).
 */
function readBatch(call: FreshCall, start: number): void {
  const body = call.body;
  const end = body.length;
  batchNeeds.fill(-1);
  let i = skipWs(body, start + 1, end);
  while (i < end && body[i] !== Byte.RBRACKET) {
    const e = skipValue(body, i, end);
    if (e < 0) break;
    if (body[i] === Byte.LBRACE) {
      const send = memberSpan(body, i, e, METHOD_KEY, span) && span[1]! - span[0]! === SEND_METHOD.length && bytesAt(body, span[0]!, span[1]!, SEND_METHOD);
      if (memberSpan(body, i, e, PARAMS_KEY, span)) {
        readFields(send ? 'sendTransaction' : '', body, span[0]!, span[1]!, fields);
        const s = fields.minContextSlot;
        const c = fields.commitment >= 0 ? fields.commitment : DEFAULT_COMMITMENT;
        if (s > batchNeeds[c]!) batchNeeds[c] = s;
        if (s > call.needSlot || (s === call.needSlot && s >= 0 && c > call.needCommitment)) {
          call.needSlot = s;
          call.needCommitment = c;
        }
      }
    }
    i = skipWs(body, e, end);
    if (body[i] !== Byte.COMMA) break;
    i = skipWs(body, i + 1, end);
  }
  if (call.needSlot < 0) return;
  // Levels above the need's are not implied by it (a lower slot asked at a higher commitment).
  for (let c = call.needCommitment + 1; c < 3; c++) {
    if (batchNeeds[c]! >= 0) {
      call.needByLevel = batchNeeds.slice();
      return;
    }
  }
}

/** Whether the node is behind any level's need. */
function behindAtSomeLevel(chain: ChainView, need: Float64Array): boolean {
  for (let c = 0; c < 3; c++) if (need[c]! >= 0 && chain.slot(c) < need[c]!) return true;
  return false;
}

/** A (sub-)batch's monotonic level: the lowest commitment it names, so that none of its calls goes back. */
function lowestNamed(body: Buffer): number {
  return body.indexOf(PROCESSED) >= 0 ? Commitment.Processed : body.indexOf(CONFIRMED) >= 0 ? Commitment.Confirmed : DEFAULT_COMMITMENT;
}
