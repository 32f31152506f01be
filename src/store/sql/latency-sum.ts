// Latency histograms summed over usage rows, in HdrHistogram's standard V2 encoding.
//
// Minute rows hold the compressed form the usage meter writes (src/metrics/histogram.ts).
// Through the HDR library each row costs ~20 µs to decode and add (a whole counts array
// allocated, inflated and walked) and ~100 µs to re-encode: what made a week of analytics take
// seconds. Roll-up rows therefore hold the same encoding uncompressed (base64 of the V2
// cookie, header and ZigZag LEB128 counts; no zlib call either way), and rows are read
// straight into the sum's counts, bucket by bucket. A sum takes the layout (significant
// digits, lowest and highest value) of its first row, as LatencyHistogram.decode(first).add(…)
// did, and holds the counts the library's own decode and add give, so the same percentiles
// (the tests compare them); a row of another layout is added through the library.

import { deflateSync, inflateSync } from 'node:zlib';
import * as hdr from 'hdr-histogram-js';
import { useIntegerIndex } from '../../metrics/histogram.js';

/** V2 encoding cookies, without the word-size bits (0xf0). */
const V2_COOKIE = 0x1c849303;
const V2_COMPRESSED_COOKIE = 0x1c849304;
/** With the word-size bits the library writes (LEB128 words). */
const V2_COOKIE_OUT = V2_COOKIE | 0x10;
const V2_COMPRESSED_COOKIE_OUT = V2_COMPRESSED_COOKIE | 0x10;
/** cookie, payload length, normalizing offset, digits (4 bytes each); lowest, highest, ratio (8 each). */
const V2_HEADER_BYTES = 40;

/** The uncompressed V2 bytes of an encoded histogram, compressed or not (decode once, add into several sums). */
export function v2Bytes(encoded: string): Buffer {
  const outer = Buffer.from(encoded, 'base64');
  const cookie = outer.length >= 8 ? outer.readInt32BE(0) & ~0xf0 : 0;
  const raw = cookie === V2_COMPRESSED_COOKIE ? inflateSync(outer.subarray(8, 8 + outer.readInt32BE(4))) : outer;
  if (raw.length < V2_HEADER_BYTES || (raw.readInt32BE(0) & ~0xf0) !== V2_COOKIE) throw new Error('latency histogram: not an HdrHistogram V2 encoding');
  return raw;
}

/** A histogram of the layout `raw`'s header names, as the library's decode builds it. */
function emptyLike(raw: Buffer): hdr.JsHistogram {
  const h = new hdr.Int32Histogram(Number(raw.readBigInt64BE(16)), Number(raw.readBigInt64BE(24)), raw.readInt32BE(12));
  useIntegerIndex(h);
  return h;
}

function sameLayout(h: hdr.JsHistogram, raw: Buffer): boolean {
  return (
    raw.readInt32BE(12) === h.numberOfSignificantValueDigits &&
    Number(raw.readBigInt64BE(16)) === h.lowestDiscernibleValue &&
    Number(raw.readBigInt64BE(24)) === h.highestTrackableValue
  );
}

/** Adds the counts of `raw` (its layout is `h`'s) into `h`. */
function addCounts(h: hdr.JsHistogram, raw: Buffer): void {
  const end = Math.min(raw.length, V2_HEADER_BYTES + raw.readInt32BE(4));
  const length = h.countsArrayLength;
  let pos = V2_HEADER_BYTES;
  let index = 0;
  let total = 0;
  let first = -1;
  let last = -1;
  // ZigZag LEB128 words of up to 9 bytes, read as the library reads them: a count, or minus a
  // run of zero counts.
  while (pos < end) {
    let b = raw[pos++]!;
    let v = b & 0x7f;
    let scale = 128;
    for (let n = 1; n < 9 && (b & 0x80) !== 0 && pos < end; n++) {
      b = raw[pos++]!;
      v += (b & 0x7f) * scale;
      scale *= 128;
    }
    const word = v % 2 === 0 ? v / 2 : -(v + 1) / 2;
    if (word < 0) {
      index -= word;
      continue;
    }
    // Like the library's decode, counts past the end of the array are dropped.
    if (word > 0 && index < length) {
      h.addToCountAtIndex(index, word);
      total += word;
      if (first < 0) first = index;
      last = index;
    }
    index++;
  }
  if (total === 0) return;
  h.addToTotalCount(total);
  // Recording a value zero times moves only the minimum and maximum (what encode() and add() read).
  h.recordValueWithCount(h.valueFromIndex(first), 0);
  h.recordValueWithCount(h.valueFromIndex(last), 0);
}

/** Appends one ZigZag LEB128 word (|value| < 2^52) at `pos`; returns the new position. */
function putWord(out: Buffer, pos: number, value: number): number {
  let v = value >= 0 ? value * 2 : -value * 2 - 1;
  for (let n = 1; n < 9 && v >= 128; n++) {
    out[pos++] = (v % 128) | 0x80;
    v = Math.floor(v / 128);
  }
  out[pos++] = v;
  return pos;
}

/** The uncompressed V2 bytes of `h`, word for word what the library writes before compressing. */
function encodeV2(h: hdr.JsHistogram): Buffer {
  const limit = h.countsArrayIndex(h.maxValue) + 1;
  const out = Buffer.alloc(V2_HEADER_BYTES + limit * 9);
  out.writeInt32BE(V2_COOKIE_OUT, 0);
  out.writeInt32BE(1, 8); // normalizing index offset, as the library writes it
  out.writeInt32BE(h.numberOfSignificantValueDigits, 12);
  out.writeBigInt64BE(BigInt(h.lowestDiscernibleValue), 16);
  out.writeBigInt64BE(BigInt(h.highestTrackableValue), 24);
  out.writeBigInt64BE(1n, 32); // integer-to-double ratio, as the library writes it
  let pos = V2_HEADER_BYTES;
  let i = 0;
  while (i < limit) {
    const count = h.getCountAtIndex(i++);
    if (count !== 0) {
      pos = putWord(out, pos, count);
      continue;
    }
    let zeros = 1;
    while (i < limit && h.getCountAtIndex(i) === 0) {
      zeros++;
      i++;
    }
    pos = putWord(out, pos, zeros > 1 ? -zeros : 0);
  }
  out.writeInt32BE(pos - V2_HEADER_BYTES, 4);
  return out.subarray(0, pos);
}

export class LatencySum {
  private h: hdr.JsHistogram | null = null;

  /** Recorded values (0 before anything was added). */
  get count(): number {
    return this.h === null ? 0 : this.h.totalCount;
  }

  /** Adds one encoded histogram, compressed (LatencyHistogram.encode()) or not (encode()). */
  add(encoded: string): void {
    this.addBytes(v2Bytes(encoded));
  }

  /** Adds a histogram given as v2Bytes(encoded). */
  addBytes(raw: Buffer): void {
    if (this.h === null) this.h = emptyLike(raw);
    if (sameLayout(this.h, raw)) {
      addCounts(this.h, raw);
      return;
    }
    const other = emptyLike(raw);
    addCounts(other, raw);
    if (other.totalCount > 0) this.h.add(other);
  }

  /** Value at a percentile (0..100) in the recorded unit; 0 when empty (as LatencyHistogram.percentile). */
  percentile(p: number): number {
    return this.h === null || this.h.totalCount === 0 ? 0 : this.h.getValueAtPercentile(p);
  }

  /** The sum in the uncompressed V2 encoding (roll-up rows); null before anything was added. */
  encode(): string | null {
    return this.h === null ? null : encodeV2(this.h).toString('base64');
  }

  /** The sum in the compressed V2 encoding the meter writes (minute rows); null before anything was added. */
  encodeCompressed(): string | null {
    if (this.h === null) return null;
    const packed = deflateSync(encodeV2(this.h));
    const out = Buffer.alloc(8 + packed.length);
    out.writeInt32BE(V2_COMPRESSED_COOKIE_OUT, 0);
    out.writeInt32BE(packed.length, 4);
    packed.copy(out, 8);
    return out.toString('base64');
  }
}
