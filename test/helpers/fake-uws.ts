// A stand-in for uWS's HttpResponse that records what is written, and hands the test the
// onAborted/onData callbacks to drive.

import type { HttpRes as HttpResponse } from '../../src/server/types.js';

export class FakeResponse {
  status = '';
  readonly headers: [string, string][] = [];
  /** The answer's body and whether the connection closes after it; null until end(). */
  ended: { body: string; close: boolean } | null = null;
  corks = 0;
  writesOutsideCork = 0;
  aborted: (() => void) | null = null;
  data: ((chunk: ArrayBuffer, isLast: boolean) => void) | null = null;
  private inCork = false;

  constructor(readonly peer = '192.0.2.10') {}

  asUws(): HttpResponse {
    return this as unknown as HttpResponse;
  }

  cork(fn: () => void): this {
    this.corks++;
    this.inCork = true;
    fn();
    this.inCork = false;
    return this;
  }

  writeStatus(s: string | Buffer): this {
    this.wrote();
    this.status = s.toString();
    return this;
  }

  writeHeader(k: string | Buffer, v: string | Buffer): this {
    this.wrote();
    this.headers.push([k.toString(), v.toString()]);
    return this;
  }

  end(body: string | Buffer, close: boolean): this {
    this.wrote();
    if (this.ended !== null) throw new Error('end() twice');
    this.ended = { body: body.toString(), close };
    return this;
  }

  getRemoteAddressAsText(): ArrayBuffer {
    const b = Buffer.from(this.peer);
    return b.buffer.slice(b.byteOffset, b.byteOffset + b.length);
  }

  onAborted(fn: () => void): this {
    this.aborted = fn;
    return this;
  }

  onData(fn: (chunk: ArrayBuffer, isLast: boolean) => void): this {
    this.data = fn;
    return this;
  }

  /** Delivers `text` as body chunks of `size` bytes. */
  stream(text: string, size: number): void {
    const b = Buffer.from(text);
    for (let i = 0; i < b.length || i === 0; i += size) {
      const part = b.subarray(i, Math.min(i + size, b.length));
      this.data!(part.buffer.slice(part.byteOffset, part.byteOffset + part.length), i + size >= b.length);
    }
  }

  private wrote(): void {
    if (!this.inCork) this.writesOutsideCork++;
  }
}
