// Redundant subscriptions (docs/reliability.md "Redundant WebSocket subscriptions"): the same
// subscription held on several nodes sends every notification once per node. A DeliveryWindow
// lets the first copy through and drops the others, reading the node's bytes (no JSON.parse:
// the hub forwards those bytes with the client's id spliced in), within a bounded memory.

import { PARAMS_KEY, RESULT_KEY, SLOT_KEY } from '../../rpc/bytes.js';
import { createHash } from 'node:crypto';
import { memberSpan, trimmedSpan } from '../../rpc/scan.js';

/** How a subscription's notifications are told apart (docs/reliability.md lists the rules). */
export type DedupRule = 'slot' | 'slotsUpdates' | 'account' | 'program' | 'logs' | 'signature' | 'none';

/** The rule of a Solana subscription method's base name (`slot` for slotSubscribe); `none` = not deduplicated. */
export function dedupRule(base: string): DedupRule {
  switch (base) {
    case 'slot':
    case 'root':
    case 'block':
      return 'slot';
    case 'slotsUpdates':
      return 'slotsUpdates';
    case 'account':
      return 'account';
    case 'program':
      return 'program';
    case 'logs':
      return 'logs';
    case 'signature':
      return 'signature';
    default:
      return 'none';
  }
}

/** What to do with one node's copy of a notification. */
export const DELIVER = 0;
/** Already delivered from another node. */
export const DUPLICATE = 1;
/** Older than what was delivered (a slower node): dropped so the stream stays in order. */
export const LATE = 2;
/** Delivered, and it ends a one-shot subscription (signatureSubscribe) on every node. */
export const FINAL = 3;
export type Verdict = typeof DELIVER | typeof DUPLICATE | typeof LATE | typeof FINAL;

/** Notifications remembered per subscription (their identities), oldest forgotten first. */
export const SEEN_MAX = 4096;
/** Streams with their own slot order per subscription (accounts of a programSubscribe, slotsUpdates types). */
export const STREAMS_MAX = 4096;

const CONTEXT_KEY = Buffer.from('"context"');
const VALUE_KEY = Buffer.from('"value"');
const TYPE_KEY = Buffer.from('"type"');
const PUBKEY_KEY = Buffer.from('"pubkey"');
const SIGNATURE_KEY = Buffer.from('"signature"');
const RECEIVED = Buffer.from('"receivedSignature"');
const span = new Int32Array(2);

/** Byte ranges of one notification, filled by `read` (one object reused for every frame). */
class Parts {
  /** params.result */
  rs = -1;
  re = -1;
  /** result.value (-1 when absent) */
  vs = -1;
  ve = -1;
  slot = -1;
}

function slotAt(frame: Buffer, s: number, e: number): number {
  if (!memberSpan(frame, s, e, SLOT_KEY, span)) return -1;
  const n = Number(frame.toString('latin1', span[0], span[1]));
  return Number.isSafeInteger(n) ? n : -1;
}

/** Reads params.result, its context slot (or own slot, or the number it is) and its value. */
function read(frame: Buffer, p: Parts): boolean {
  const [s, e] = trimmedSpan(frame);
  if (!memberSpan(frame, s, e, PARAMS_KEY, span) || !memberSpan(frame, span[0]!, span[1]!, RESULT_KEY, span)) return false;
  const rs = (p.rs = span[0]!);
  const re = (p.re = span[1]!);
  p.vs = p.ve = p.slot = -1;
  if (frame[rs] !== 0x7b) {
    // rootNotification: the result is the slot.
    const n = Number(frame.toString('latin1', rs, re));
    p.slot = Number.isSafeInteger(n) ? n : -1;
    return true;
  }
  if (memberSpan(frame, rs, re, CONTEXT_KEY, span)) p.slot = slotAt(frame, span[0]!, span[1]!);
  else p.slot = slotAt(frame, rs, re);
  if (memberSpan(frame, rs, re, VALUE_KEY, span)) {
    p.vs = span[0]!;
    p.ve = span[1]!;
  }
  return true;
}

function text(frame: Buffer, s: number, e: number, key: Buffer): string {
  return s >= 0 && memberSpan(frame, s, e, key, span) ? frame.toString('latin1', span[0], span[1]) : '';
}

/** A digest of the value's bytes: two nodes' copies of one account state are byte-identical. */
function digest(frame: Buffer, s: number, e: number): string {
  return createHash('sha1').update(frame.subarray(s, e)).digest('base64');
}

const parts = new Parts();

/** One shared subscription's delivered notifications, as far as the bounds reach. */
export class DeliveryWindow {
  /** Last delivered slot per stream ('' = the subscription's only stream). */
  private readonly lastSlot = new Map<string, number>();
  /** Identities of delivered notifications, in delivery order. */
  private readonly seen = new Set<string>();
  private ended = false;

  constructor(readonly rule: DedupRule) {}

  /** The verdict on one node's notification; a frame of unknown shape is delivered. */
  admit(frame: Buffer): Verdict {
    if (this.ended) return DUPLICATE;
    if (!read(frame, parts)) return DELIVER;
    const slot = parts.slot;
    switch (this.rule) {
      case 'slot':
        return this.ordered('', slot, null);
      case 'slotsUpdates':
        return this.ordered(text(frame, parts.rs, parts.re, TYPE_KEY), slot, null);
      case 'account':
        return parts.vs < 0 ? DELIVER : this.ordered('', slot, `${slot}:${digest(frame, parts.vs, parts.ve)}`);
      case 'program':
        return parts.vs < 0 ? DELIVER : this.ordered(text(frame, parts.vs, parts.ve, PUBKEY_KEY), slot, `${slot}:${digest(frame, parts.vs, parts.ve)}`);
      case 'logs':
        return this.once(`${text(frame, parts.vs, parts.ve, SIGNATURE_KEY)}:${slot}`);
      case 'signature':
        if (parts.ve - parts.vs === RECEIVED.length && frame.compare(RECEIVED, 0, RECEIVED.length, parts.vs, parts.ve) === 0) return this.once('received');
        this.ended = true;
        return FINAL;
      default:
        return DELIVER;
    }
  }

  /**
   * Slot order per stream: an older slot is late. Without `id` a slot is delivered once;
   * with it (account states) one slot may carry several different states, each once.
   */
  private ordered(stream: string, slot: number, id: string | null): Verdict {
    if (slot < 0) return id === null ? DELIVER : this.once(id);
    const last = this.lastSlot.get(stream);
    if (last !== undefined) {
      if (slot < last) return LATE;
      if (id === null && slot === last) return DUPLICATE;
    }
    if (id !== null && this.seen.has(id + stream)) return DUPLICATE;
    if (last !== slot) {
      // Re-inserted so the least recently moved stream is the one forgotten first.
      this.lastSlot.delete(stream);
      if (this.lastSlot.size >= STREAMS_MAX) this.lastSlot.delete(this.lastSlot.keys().next().value!);
      this.lastSlot.set(stream, slot);
    }
    if (id !== null) this.remember(id + stream);
    return DELIVER;
  }

  private once(id: string): Verdict {
    if (this.seen.has(id)) return DUPLICATE;
    this.remember(id);
    return DELIVER;
  }

  private remember(id: string): void {
    if (this.seen.size >= SEEN_MAX) this.seen.delete(this.seen.values().next().value!);
    this.seen.add(id);
  }

  /** Entries held (for tests of the bound). */
  get size(): number {
    return this.lastSlot.size + this.seen.size;
  }
}
