// The few protobuf wire primitives the update path needs: reading varints and walking the
// fields of a message without building objects, and writing the `filters` field. Updates are
// read once per arrival through these (./update.ts), never decoded into full messages.

export const WIRE_VARINT = 0;
export const WIRE_I64 = 1;
export const WIRE_LEN = 2;
export const WIRE_I32 = 5;

/** Thrown on bytes that are not a well-formed message; callers treat the update as unreadable. */
export class WireError extends Error {}

/**
 * A cursor over one message's bytes. `next()` reads a field's key and leaves the cursor on its
 * value: `varint()` reads it, `len()` returns [start, end) of a length-delimited value (and
 * steps over it), `skip()` steps over any value.
 */
export class WireReader {
  pos: number;
  field = 0;
  wire = 0;
  constructor(
    readonly buf: Uint8Array,
    start: number,
    readonly end: number,
  ) {
    this.pos = start;
  }

  /** False at the end of the message. */
  next(): boolean {
    if (this.pos >= this.end) return false;
    const key = this.varint();
    this.field = Math.floor(key / 8);
    this.wire = key & 7;
    if (this.field === 0) throw new WireError('field number 0');
    return true;
  }

  /** A varint as a double: exact up to 2^53, which slots, lamports and write versions stay below. */
  varint(): number {
    let result = 0;
    let mul = 1;
    for (let i = 0; i < 10; i++) {
      if (this.pos >= this.end) throw new WireError('truncated varint');
      const b = this.buf[this.pos++]!;
      result += (b & 0x7f) * mul;
      if (b < 0x80) return result;
      mul *= 128;
    }
    throw new WireError('varint longer than 10 bytes');
  }

  /** The value's start; the cursor moves to its end (`this.pos`). */
  len(): number {
    if (this.wire !== WIRE_LEN) throw new WireError(`field ${this.field}: expected length-delimited`);
    const n = this.varint();
    const start = this.pos;
    if (n > this.end - start) throw new WireError('length beyond the message');
    this.pos = start + n;
    return start;
  }

  skip(): void {
    switch (this.wire) {
      case WIRE_VARINT:
        this.varint();
        return;
      case WIRE_I64:
        this.pos += 8;
        break;
      case WIRE_LEN:
        this.len();
        return;
      case WIRE_I32:
        this.pos += 4;
        break;
      default:
        throw new WireError(`wire type ${this.wire} not supported`);
    }
    if (this.pos > this.end) throw new WireError('truncated fixed-size field');
  }
}

function varintSize(n: number): number {
  let size = 1;
  while (n >= 128) {
    n = Math.floor(n / 128);
    size++;
  }
  return size;
}

function writeVarint(out: Buffer, pos: number, n: number): number {
  while (n >= 128) {
    out[pos++] = (n & 0x7f) | 0x80;
    n = Math.floor(n / 128);
  }
  out[pos++] = n;
  return pos;
}

/** `repeated string filters = 1` for these names, ready to put before an update's other fields. */
export function encodeFilterNames(names: readonly string[]): Buffer {
  let size = 0;
  const bytes = names.map((n) => Buffer.from(n, 'utf8'));
  for (const b of bytes) size += 1 + varintSize(b.length) + b.length;
  const out = Buffer.allocUnsafe(size);
  let pos = 0;
  for (const b of bytes) {
    out[pos++] = 0x0a; // field 1, length-delimited
    pos = writeVarint(out, pos, b.length);
    b.copy(out, pos);
    pos += b.length;
  }
  return out;
}
