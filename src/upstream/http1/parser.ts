// HTTP/1.1 response framing for the pipelined client: heads, content-length, chunked and
// close-delimited bodies, answers split across reads or several in one read. Whole answers go
// to an AnswerSink (the connection) in order; a malformed stream throws ProtocolError.

import { slabSized, takeSlab } from '../../slabs.js';

const MAX_HEAD = 64 * 1024;
const CRLF2 = Buffer.from('\r\n\r\n');
const EMPTY = Buffer.alloc(0);

const P_HEAD = 0;
const P_BODY = 1;
const P_CHUNK_SIZE = 2;
const P_CHUNK_DATA = 3;
const P_CHUNK_CRLF = 4;
const P_TRAILER = 5;
const P_UNTIL_CLOSE = 6;

export class ProtocolError extends Error {}

/** Where the parser hands whole answers. */
export interface AnswerSink {
  /** Requests waiting for an answer: an answer arriving while there are none is a protocol error. */
  readonly unanswered: number;
  /** Parsing stops once this is true (an answer's handling closed the connection). */
  readonly closed: boolean;
  /** Body bytes the oldest waiting request's answer may be collected up to (AttemptSink.maxBuffered). */
  readonly bufferLimit: number;
  /**
   * The answer outgrew bufferLimit (`length`: the whole body's, -1 when unknown; `first`: the
   * bytes collected so far): true when its body streams on through streamData, false when
   * the sink gave up on it (it closes the connection).
   */
  streamFrom(status: number, length: number, first: Buffer): boolean;
  /** A streamed answer's body bytes: a view valid only during the call. */
  streamData(chunk: Buffer): void;
  /** The oldest waiting request's answer is whole (`body` null: it was streamed). `close`: the node closes after it. */
  answer(status: number, close: boolean, body: Buffer | null): void;
}

/** Parse state of one connection's response stream; the per-response part is reset per answer. */
export class ResponseParser {
  phase = P_HEAD;
  status = 0;
  remaining = 0;
  /** Body of a content-length answer that spans reads, allocated once at its full size. */
  whole: Buffer | null = null;
  parts: Buffer[] = [];
  size = 0;
  close = false;
  /** Bytes of an unfinished head, chunk-size or trailer line from the previous read. */
  leftover: Buffer | null = null;
  /** The current answer's body goes to the sink as it arrives (AnswerSink.streamFrom). */
  streaming = false;
  /** A 429's Retry-After in ms, -1 when absent (read only on 429s). */
  retryAfterMs = -1;
  /** retryAfterMs of the answer last handed to the sink (reset() clears the other first). */
  answerRetryAfterMs = -1;

  /** True while the current answer's body runs until the node closes the connection. */
  get untilClose(): boolean {
    return this.phase === P_UNTIL_CLOSE;
  }

  reset(): void {
    this.phase = P_HEAD;
    this.status = 0;
    this.remaining = 0;
    this.whole = null;
    if (this.parts.length > 0) this.parts = [];
    this.size = 0;
    this.close = false;
    this.streaming = false;
    this.retryAfterMs = -1;
  }

  /**
   * Parses one read, handing every answer it completes to `sink`. `data` may be a view of a
   * read buffer that the next read reuses: nothing may keep a view of it past this call, so
   * bodies and partial lines are copied out.
   */
  feed(data: Buffer, sink: AnswerSink): void {
    let buf = data;
    if (this.leftover !== null) {
      buf = Buffer.concat([this.leftover, data]);
      this.leftover = null;
    }
    this.parse(buf, sink);
  }

  /** The connection ended: a body delimited by its end is whole now. */
  endOfStream(sink: AnswerSink): void {
    this.close = true;
    this.finish(sink, this.streaming ? null : this.body());
  }

  private parse(buf: Buffer, sink: AnswerSink): void {
    let pos = 0;
    const len = buf.length;
    while (pos < len && !sink.closed) {
      switch (this.phase) {
        case P_HEAD: {
          const end = buf.indexOf(CRLF2, pos);
          if (end === -1) {
            if (len - pos > MAX_HEAD) throw new ProtocolError('response head too large');
            this.leftover = Buffer.from(buf.subarray(pos));
            return;
          }
          if (sink.unanswered === 0) throw new ProtocolError('answer without a request');
          parseHead(this, buf, pos, end);
          pos = end + 4;
          if (this.phase === P_HEAD) {
            if (this.status >= 200) this.finish(sink, EMPTY);
            continue;
          }
          if (this.phase === P_BODY) {
            if (this.remaining > sink.bufferLimit) {
              if (!sink.streamFrom(this.status, this.remaining, EMPTY)) return;
              this.streaming = true;
            } else if (len - pos >= this.remaining) {
              const n = this.remaining;
              let body: Buffer;
              if (slabSized(n)) buf.copy((body = takeSlab(n)), 0, pos, pos + n);
              else body = Buffer.from(buf.subarray(pos, pos + n));
              pos += n;
              this.finish(sink, body);
            } else this.whole = slabSized(this.remaining) ? takeSlab(this.remaining) : Buffer.allocUnsafe(this.remaining); // the loop goes on to P_BODY with what there is
          }
          continue;
        }
        case P_BODY: {
          pos = this.take(buf, pos, sink);
          if (sink.closed) return;
          if (this.remaining === 0) this.finish(sink, this.streaming ? null : this.body());
          continue;
        }
        case P_CHUNK_SIZE: {
          const eol = buf.indexOf(0x0a, pos);
          if (eol === -1) {
            if (len - pos > 1024) throw new ProtocolError('chunk size line too long');
            this.leftover = Buffer.from(buf.subarray(pos));
            return;
          }
          const line = buf.toString('latin1', pos, eol);
          const semi = line.indexOf(';');
          const size = Number.parseInt(semi === -1 ? line : line.slice(0, semi), 16);
          if (!Number.isSafeInteger(size) || size < 0) throw new ProtocolError('bad chunk size');
          pos = eol + 1;
          if (size === 0) this.phase = P_TRAILER;
          else {
            this.phase = P_CHUNK_DATA;
            this.remaining = size;
          }
          continue;
        }
        case P_CHUNK_DATA: {
          pos = this.take(buf, pos, sink);
          if (sink.closed) return;
          if (this.remaining === 0) {
            this.phase = P_CHUNK_CRLF;
            this.remaining = 2;
          }
          continue;
        }
        case P_CHUNK_CRLF: {
          const n = Math.min(this.remaining, len - pos);
          pos += n;
          this.remaining -= n;
          if (this.remaining === 0) this.phase = P_CHUNK_SIZE;
          continue;
        }
        case P_TRAILER: {
          // Trailer lines until an empty one.
          const eol = buf.indexOf(0x0a, pos);
          if (eol === -1) {
            if (len - pos > MAX_HEAD) throw new ProtocolError('trailer too large');
            this.leftover = Buffer.from(buf.subarray(pos));
            return;
          }
          const empty = eol === pos || (eol === pos + 1 && buf[pos] === 0x0d);
          pos = eol + 1;
          if (empty) this.finish(sink, this.streaming ? null : this.body());
          continue;
        }
        case P_UNTIL_CLOSE: {
          this.remaining = len - pos;
          this.take(buf, pos, sink);
          return;
        }
      }
    }
  }

  /** The answer is whole: the parser is ready for the next one before the sink sees this one. */
  private finish(sink: AnswerSink, body: Buffer | null): void {
    const status = this.status;
    const close = this.close;
    this.answerRetryAfterMs = this.retryAfterMs;
    this.reset();
    sink.answer(status, close, body);
  }

  /**
   * Takes up to `remaining` body bytes from buf at pos: copied, or handed to the sink when the
   * answer streams (a body of unknown length starts to once it outgrows the sink's limit).
   * Returns the position after them; the sink may have closed the connection.
   */
  private take(buf: Buffer, pos: number, sink: AnswerSink): number {
    const n = Math.min(this.remaining, buf.length - pos);
    this.remaining -= n;
    if (!this.streaming && this.whole === null && this.size + n > sink.bufferLimit) {
      const first = this.body();
      this.parts = [];
      this.size = 0;
      if (!sink.streamFrom(this.status, -1, first)) return pos + n;
      this.streaming = true;
    }
    if (this.streaming) {
      if (n > 0) sink.streamData(buf.subarray(pos, pos + n));
      return pos + n;
    }
    if (this.whole !== null) buf.copy(this.whole, this.size, pos, pos + n);
    else this.parts.push(Buffer.from(buf.subarray(pos, pos + n)));
    this.size += n;
    return pos + n;
  }

  private body(): Buffer {
    if (this.whole !== null) return this.whole;
    const p = this.parts;
    return p.length === 1 ? p[0]! : p.length === 0 ? EMPTY : Buffer.concat(p, this.size);
  }
}

/** A Retry-After value (seconds, or an HTTP date) in ms from `now`; -1 when unreadable. */
export function retryAfterMs(value: string, now: number): number {
  if (/^\d+(\.\d+)?$/.test(value)) return Math.round(Number(value) * 1000);
  const t = Date.parse(value);
  return Number.isNaN(t) ? -1 : Math.max(0, t - now);
}

/** Reads the head in [start, end) (end at the blank line); sets status, framing and close. */
function parseHead(p: ResponseParser, buf: Buffer, start: number, end: number): void {
  const head = buf.toString('latin1', start, end);
  if (!head.startsWith('HTTP/1.')) throw new ProtocolError('not an HTTP/1.x response');
  const status = Number(head.slice(9, 12));
  if (!(status >= 100 && status <= 999)) throw new ProtocolError('bad status line');
  p.status = status;
  p.close = head.charCodeAt(7) === 0x30; // HTTP/1.0 closes unless told otherwise
  let length = -1;
  let chunked = false;
  let at = head.indexOf('\r\n');
  while (at !== -1 && at < head.length) {
    const next = head.indexOf('\r\n', at + 2);
    const lineEnd = next === -1 ? head.length : next;
    const colon = head.indexOf(':', at + 2);
    if (colon !== -1 && colon < lineEnd) {
      const nameLen = colon - at - 2;
      if (nameLen === 14 || nameLen === 17 || nameLen === 10 || (nameLen === 11 && status === 429)) {
        const name = head.slice(at + 2, colon).toLowerCase();
        const value = head
          .slice(colon + 1, lineEnd)
          .trim()
          .toLowerCase();
        if (name === 'content-length') {
          length = Number(value);
          if (!Number.isSafeInteger(length) || length < 0) throw new ProtocolError('bad content-length');
        } else if (name === 'transfer-encoding') chunked = value.endsWith('chunked');
        else if (name === 'retry-after') p.retryAfterMs = retryAfterMs(value, Date.now());
        else if (name === 'connection') {
          if (value.includes('close')) p.close = true;
          else if (value.includes('keep-alive')) p.close = false;
        }
      }
    }
    at = next;
  }
  if (status < 200 || status === 204 || status === 304)
    p.phase = P_HEAD; // no body
  else if (chunked) p.phase = P_CHUNK_SIZE;
  else if (length >= 0) {
    p.phase = P_BODY;
    p.remaining = length;
  } else p.phase = P_UNTIL_CLOSE;
}
