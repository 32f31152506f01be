// A node's answer passing to an HTTP client as it arrives (docs/routing.md "Large answers"):
// memory per request stays at what the two sockets hold plus at most one read, however large
// the answer. The node's connection stops being read while the client is behind and resumes
// when it caught up. A known length goes out with Content-Length (uWS's tryEnd), an unknown
// one chunked (write).

import type { HttpRes } from '../server/types.js';
import type { BodyStream, StreamSource } from '../upstream/transport.js';

/** What the stream tells the request it belongs to. */
export interface StreamOwner {
  /** The answer ended: whole (`broken` '') or cut short; `bytes` is how many went to the client. */
  streamEnded(bytes: number, broken: string): void;
}

/** The chunk `offerInCork` hands to uWS inside cork (no closure per chunk). */
const offer = { to: null as AnswerStream | null, chunk: null as Uint8Array | null };

function offerInCork(): void {
  offer.to!.offerNow(offer.chunk!);
}

function endInCork(): void {
  offer.to!.res.end();
}

export class AnswerStream implements BodyStream {
  /** Bytes a known-length answer's client did not take yet (tryEnd keeps none itself), from `pendingAt` on. */
  private pending: Buffer | null = null;
  private pendingAt = 0;
  /** The client took everything offered so far. */
  private open = true;
  /** The node's body ended (whole or not); the client may still be taking the rest. */
  private upstreamDone = false;
  private finished = false;
  private bytes = 0;
  private cut = '';

  constructor(
    readonly res: HttpRes,
    /** The whole body's length; -1 when the node did not say (the client gets it chunked). */
    private readonly length: number,
    private readonly source: StreamSource,
    private readonly owner: StreamOwner,
  ) {
    res.onWritable((offset) => this.writable(offset));
  }

  data(chunk: Buffer): boolean {
    if (this.finished) return true;
    if (this.pending !== null) {
      // Behind already: the rest of this read waits with what did not go (at most one read).
      this.pending = Buffer.concat([this.pending, chunk]);
      return false;
    }
    this.offerCorked(chunk);
    return this.open;
  }

  /** offerNow inside cork (uWS batches a corked write into one send). */
  private offerCorked(chunk: Uint8Array): void {
    offer.to = this;
    offer.chunk = chunk;
    this.res.cork(offerInCork);
    offer.to = null;
    offer.chunk = null;
  }

  /** Inside cork: hands `chunk` to the client; what it does not take is kept (a copy). */
  offerNow(chunk: Uint8Array): void {
    const res = this.res;
    if (this.length < 0) {
      this.open = res.write(chunk);
      this.bytes += chunk.byteLength;
      return;
    }
    const before = res.getWriteOffset();
    const [ok, done] = res.tryEnd(chunk, this.length);
    if (done) {
      // A response that ended may not be touched again (uWS).
      this.bytes = this.length;
      return this.complete('');
    }
    const took = res.getWriteOffset() - before;
    this.bytes += took;
    this.open = ok;
    if (!ok && took < chunk.byteLength) {
      this.pending = Buffer.from(chunk.subarray(took));
      this.pendingAt = res.getWriteOffset();
    }
  }

  /** The client can take more: the kept bytes first, then the node's connection is read again. */
  private writable(offset: number): boolean {
    if (this.finished) return true;
    const p = this.pending;
    if (p !== null) {
      const rest = p.subarray(offset - this.pendingAt);
      this.pending = null;
      if (rest.length > 0) {
        this.offerCorked(rest);
        if (this.finished) return true;
        if (this.pending !== null) return false;
      }
    }
    this.open = true;
    if (this.upstreamDone) this.endChunked();
    else this.source.resume();
    return true;
  }

  end(): void {
    this.upstreamDone = true;
    if (this.finished) return;
    // A known length completes when its last byte goes (offerNow); a chunked one is ended here.
    if (this.length < 0 && this.pending === null) this.endChunked();
  }

  private endChunked(): void {
    if (this.length >= 0 || this.finished) return;
    offer.to = this;
    this.res.cork(endInCork);
    offer.to = null;
    this.complete('');
  }

  broken(reason: string): void {
    this.upstreamDone = true;
    if (this.finished) return;
    this.cut = reason;
    // The client must not take a cut answer for a whole one: its connection ends mid-body.
    this.complete(reason);
    this.res.close();
  }

  /** The client went away mid-answer: the node's connection is dropped, the rest never read. */
  clientGone(): void {
    if (this.finished) return;
    this.complete('client went away');
    this.source.abort();
  }

  private complete(broken: string): void {
    if (this.finished) return;
    this.finished = true;
    this.pending = null;
    this.owner.streamEnded(this.bytes, broken || this.cut);
  }
}
