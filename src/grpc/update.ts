// One upstream SubscribeUpdate, read once on arrival: the kind, the fields filters and dedup
// look at, and the message's bytes without field 1 (`filters`, which names the upstream
// subscription's filters, not the client's). Clients receive `filters for them` + `body`:
// protobuf allows fields in any order, so nothing is decoded or re-encoded per client.
// Public keys and signatures are kept as latin1 strings of their raw bytes: one short string
// each, usable as Map keys and compared with the compiled filters' keys (./filters.ts).

import { WireError, WireReader } from './wire.js';

export const KIND_OTHER = 0;
export const KIND_ACCOUNT = 2;
export const KIND_SLOT = 3;
export const KIND_TRANSACTION = 4;
export const KIND_PING = 6;
export const KIND_BLOCK_META = 7;
export const KIND_PONG = 9;

export class Update {
  kind = KIND_OTHER;
  slot = 0;
  /** Slot updates: the SlotStatus number. */
  status = 0;
  /** Slot updates: the parent slot, -1 when not given; pongs: the ping's id. */
  parent = -1;
  /** Accounts: pubkey; transactions: signature (latin1 of the raw bytes). */
  key = '';
  owner = '';
  lamports = 0;
  writeVersion = 0;
  /** Accounts: [dataStart, dataEnd) in `raw`. */
  dataStart = 0;
  dataEnd = 0;
  isVote = false;
  failed = false;
  /** Transactions: static and loaded account keys (latin1). */
  accountKeys: string[] = [];
  /** The message's bytes without field 1. */
  body: Buffer;
  /** When it first arrived (performance.now()), set by the dedup. */
  arrivedAt = 0;
  constructor(readonly raw: Buffer) {
    this.body = raw;
  }

  /** A key naming the same event from any source (docs/grpc.md "Several sources: dedup"); '' for kinds not deduplicated. */
  dedupKey(): string {
    switch (this.kind) {
      case KIND_SLOT:
        return 's' + this.status;
      case KIND_ACCOUNT:
        return 'a' + this.key + this.writeVersion;
      case KIND_TRANSACTION:
        return 't' + this.key;
      case KIND_BLOCK_META:
        return 'b';
      default:
        return '';
    }
  }
}

function latin1(buf: Buffer, start: number, end: number): string {
  return buf.toString('latin1', start, end);
}

function readAccountInfo(u: Update, r: WireReader): void {
  const buf = u.raw;
  while (r.next()) {
    switch (r.field) {
      case 1: {
        const s = r.len();
        u.key = latin1(buf, s, r.pos);
        break;
      }
      case 2:
        u.lamports = r.varint();
        break;
      case 3: {
        const s = r.len();
        u.owner = latin1(buf, s, r.pos);
        break;
      }
      case 6:
        u.dataStart = r.len();
        u.dataEnd = r.pos;
        break;
      case 7:
        u.writeVersion = r.varint();
        break;
      default:
        r.skip();
    }
  }
}

function readMessageKeys(u: Update, r: WireReader): void {
  while (r.next()) {
    if (r.field === 2) {
      const s = r.len();
      u.accountKeys.push(latin1(u.raw, s, r.pos));
    } else r.skip();
  }
}

function readTransaction(u: Update, r: WireReader): void {
  while (r.next()) {
    if (r.field === 2) {
      const s = r.len();
      readMessageKeys(u, new WireReader(u.raw, s, r.pos));
    } else r.skip();
  }
}

function readMeta(u: Update, r: WireReader): void {
  while (r.next()) {
    if (r.field === 1) {
      r.skip();
      u.failed = true;
    } else if (r.field === 12 || r.field === 13) {
      const s = r.len();
      u.accountKeys.push(latin1(u.raw, s, r.pos));
    } else r.skip();
  }
}

function readTransactionInfo(u: Update, r: WireReader): void {
  while (r.next()) {
    switch (r.field) {
      case 1: {
        const s = r.len();
        u.key = latin1(u.raw, s, r.pos);
        break;
      }
      case 2:
        u.isVote = r.varint() !== 0;
        break;
      case 3: {
        const s = r.len();
        readTransaction(u, new WireReader(u.raw, s, r.pos));
        break;
      }
      case 4: {
        const s = r.len();
        readMeta(u, new WireReader(u.raw, s, r.pos));
        break;
      }
      default:
        r.skip();
    }
  }
}

/** Reads the oneof member at [start, end) of kind `kind`. */
function readMember(u: Update, start: number, end: number): void {
  const r = new WireReader(u.raw, start, end);
  while (r.next()) {
    if (u.kind === KIND_SLOT) {
      if (r.field === 1) u.slot = r.varint();
      else if (r.field === 2) u.parent = r.varint();
      else if (r.field === 3) u.status = r.varint();
      else r.skip();
    } else if (u.kind === KIND_PONG) {
      if (r.field === 1) u.parent = r.varint();
      else r.skip();
    } else if (u.kind === KIND_ACCOUNT || u.kind === KIND_TRANSACTION) {
      if (r.field === 2) u.slot = r.varint();
      else if (r.field === 1) {
        const s = r.len();
        const inner = new WireReader(u.raw, s, r.pos);
        if (u.kind === KIND_ACCOUNT) readAccountInfo(u, inner);
        else readTransactionInfo(u, inner);
      } else r.skip();
    } else if (u.kind === KIND_BLOCK_META) {
      if (r.field === 1) u.slot = r.varint();
      else r.skip();
    } else r.skip();
  }
}

/** Reads an upstream update; throws WireError on malformed bytes. */
export function readUpdate(raw: Buffer): Update {
  const u = new Update(raw);
  const r = new WireReader(raw, 0, raw.length);
  // Ranges of the fields other than 1, to cut `filters` out of the body.
  let keepFrom = 0;
  let cuts: Buffer[] | null = null;
  let memberStart = -1;
  let memberEnd = -1;
  let fieldStart = 0;
  for (; r.next(); fieldStart = r.pos) {
    if (r.field === 1) {
      r.len();
      if (fieldStart > keepFrom) (cuts ??= []).push(raw.subarray(keepFrom, fieldStart));
      keepFrom = r.pos;
      continue;
    }
    if (r.field >= 2 && r.field <= 10 && r.wire === 2) {
      memberStart = r.len();
      memberEnd = r.pos;
      u.kind =
        r.field === KIND_ACCOUNT ||
        r.field === KIND_SLOT ||
        r.field === KIND_TRANSACTION ||
        r.field === KIND_PING ||
        r.field === KIND_BLOCK_META ||
        r.field === KIND_PONG
          ? r.field
          : KIND_OTHER;
      continue;
    }
    r.skip();
  }
  if (memberStart >= 0) readMember(u, memberStart, memberEnd);
  if (cuts === null) u.body = keepFrom === 0 ? raw : raw.subarray(keepFrom);
  else {
    if (keepFrom < raw.length) cuts.push(raw.subarray(keepFrom));
    u.body = Buffer.concat(cuts);
  }
  return u;
}

export { WireError };
