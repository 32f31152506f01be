// The request and response of the Node engine (node-engine.ts) in the shape of types.ts:
// HttpReq over an IncomingMessage (one object per app, valid during the handler, as in uWS),
// HttpRes over a ServerResponse, and over the raw socket of a WebSocket upgrade request.
// Event handlers are module functions that find their response through the request's
// `owner` field (a subclass, so no property is added per request and no closure made).

import { IncomingMessage, ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import type { BodyChunk, HttpReq, HttpRes, UpgradeContext } from './types.js';

const METHODS: Record<string, string> = { POST: 'post', GET: 'get', HEAD: 'head', OPTIONS: 'options', PUT: 'put', DELETE: 'delete', PATCH: 'patch' };
const EMPTY = Buffer.alloc(0);
/** Answers up to this many bytes go out in one write with their head (NodeResponse.end). */
const ONE_WRITE_MAX = 2048;

/** The address as uWS gives it: its own ArrayBuffer of text. */
export function addressText(address: string | undefined): ArrayBuffer {
  const a = address ?? '';
  // A dual-stack socket reports IPv4 peers as ::ffff:a.b.c.d; uWS and the trust lists use a.b.c.d.
  const text = a.startsWith('::ffff:') && a.includes('.') ? a.slice(7) : a;
  return new TextEncoder().encode(text).buffer as ArrayBuffer;
}

/** Header names the gateway keeps as Buffers (for uWS), as the strings Node's header object is keyed by. */
const names = new WeakMap<Buffer, string>();

function nameOf(b: Buffer): string {
  let n = names.get(b);
  if (n === undefined) names.set(b, (n = b.toString('latin1')));
  return n;
}

export class NodeRequest implements HttpReq {
  raw: IncomingMessage | null = null;
  private url = '';

  set(raw: IncomingMessage): void {
    this.raw = raw;
    const u = raw.url ?? '/';
    const q = u.indexOf('?');
    this.url = q < 0 ? u : u.slice(0, q);
  }

  getHeader(name: string | Buffer): string {
    const v = this.raw!.headers[typeof name === 'string' ? name : nameOf(name)];
    return v === undefined ? '' : typeof v === 'string' ? v : v.join(', ');
  }

  getUrl(): string {
    return this.url;
  }

  getMethod(): string {
    const m = this.raw!.method ?? '';
    return METHODS[m] ?? m.toLowerCase();
  }

  forEach(cb: (key: string, value: string) => void): void {
    const h = this.raw!.rawHeaders;
    for (let i = 0; i + 1 < h.length; i += 2) cb(h[i]!.toLowerCase(), h[i + 1]!);
  }
}

/** The request as the Node engine's servers build it: knows its response. */
export class OwnedRequest extends IncomingMessage {
  owner: NodeResponse | null = null;
}

/** The response as the Node engine's servers build it: knows its wrapper. */
export class OwnedResponse extends ServerResponse<OwnedRequest> {
  owner: NodeResponse | null = null;
}

/** A header value that carries further lines (gateway/response-heads.ts) as [value, name, value, …]. */
const splitHeads = new WeakMap<Buffer, string[]>();

function split(value: string): string[] {
  const lines = value.split('\r\n');
  const out = [lines[0]!];
  for (let i = 1; i < lines.length; i++) {
    const l = lines[i]!;
    const c = l.indexOf(':');
    out.push(l.slice(0, c), l.slice(c + 1).trim());
  }
  return out;
}

/** Status line and header lines as written, for either response kind. */
class Head {
  status = 200;
  message = 'OK';
  /** Flat [name, value, …] as node's writeHead takes it. */
  readonly lines: string[] = [];

  writeStatus(s: string | Buffer): void {
    const t = typeof s === 'string' ? s : s.toString('latin1');
    if (t === '200 OK') return;
    this.status = Number(t.slice(0, 3));
    this.message = t.slice(4);
  }

  writeHeader(k: string | Buffer, v: string | Buffer): void {
    const key = typeof k === 'string' ? k : k.toString('latin1');
    let parts: string[] | undefined;
    if (typeof v !== 'string') {
      parts = splitHeads.get(v);
      if (parts === undefined) {
        parts = split(v.toString('latin1'));
        splitHeads.set(v, parts);
      }
    } else if (v.includes('\r\n')) parts = split(v);
    else {
      this.lines.push(key, v);
      return;
    }
    this.lines.push(key, parts[0]!);
    for (let i = 1; i < parts.length; i += 2) this.lines.push(parts[i]!, parts[i + 1]!);
  }
}

/** What both response kinds write the same way: status, headers, corking (nothing to batch). */
abstract class HeadWriter {
  protected readonly head = new Head();

  cork(cb: () => void): this {
    cb();
    return this;
  }

  writeStatus(s: string | Buffer): this {
    this.head.writeStatus(s);
    return this;
  }

  writeHeader(k: string | Buffer, v: string | Buffer): this {
    this.head.writeHeader(k, v);
    return this;
  }
}

function onRequestData(this: OwnedRequest, chunk: Buffer): void {
  this.owner?.chunk(chunk);
}

function onRequestEnd(this: OwnedRequest): void {
  this.owner?.last();
}

function onResponseClose(this: OwnedResponse): void {
  this.owner?.closed();
}

function onResponseDrain(this: OwnedResponse): void {
  this.owner?.drained();
}

export class NodeResponse extends HeadWriter implements HttpRes {
  private abortHandler: (() => void) | null = null;
  private dataHandler: ((chunk: BodyChunk, isLast: boolean) => void) | null = null;
  // `#` fields: the simulated node marks its responses with plain `done` and `aborted`.
  /** Answered, closed or aborted: nothing more is written. */
  #done = false;
  #aborted = false;
  /** Head sent and body bytes going out in parts (write, tryEnd); how many went. */
  #streaming = false;
  #offset = 0;
  #writable: ((offset: number) => boolean) | null = null;

  constructor(
    private readonly req: OwnedRequest,
    private readonly res: OwnedResponse,
  ) {
    super();
    req.owner = this;
    res.owner = this;
  }

  onAborted(handler: () => void): this {
    if (this.abortHandler === null) this.res.on('close', onResponseClose);
    this.abortHandler = handler;
    return this;
  }

  onData(handler: (chunk: BodyChunk, isLast: boolean) => void): this {
    this.dataHandler = handler;
    this.req.on('data', onRequestData);
    this.req.on('end', onRequestEnd);
    return this;
  }

  chunk(c: Buffer): void {
    if (!this.#aborted) this.dataHandler!(c, false);
  }

  /** The end of the body: an empty last chunk (a chunk held back for the end would not reach a size check before it). */
  last(): void {
    if (!this.#aborted) this.dataHandler!(EMPTY, true);
  }

  closed(): void {
    if (this.#done) return;
    this.#done = true;
    this.#aborted = true;
    this.abortHandler?.();
  }

  drained(): void {
    if (!this.#done && this.#writable !== null) this.#writable(this.#offset);
  }

  /** Status and headers of an answer whose body goes out in parts (`length` -1: chunked). */
  private begin(length: number): void {
    this.#streaming = true;
    const h = this.head;
    if (length >= 0) h.lines.push('content-length', String(length));
    this.res.writeHead(h.status, h.message, h.lines);
  }

  write(chunk: Uint8Array): boolean {
    if (this.#done) return true;
    if (!this.#streaming) this.begin(-1);
    this.#offset += chunk.byteLength;
    // As uWS: the caller's bytes may be reused once this returns.
    return this.res.write(Buffer.from(chunk));
  }

  tryEnd(chunk: Uint8Array, totalSize: number): [boolean, boolean] {
    if (this.#done) return [true, true];
    if (!this.#streaming) this.begin(totalSize);
    // Node keeps whatever it cannot send now: every byte is taken, ok tells whether to wait.
    this.#offset += chunk.byteLength;
    if (this.#offset >= totalSize) {
      this.#done = true;
      this.res.end(Buffer.from(chunk));
      return [true, true];
    }
    return [this.res.write(Buffer.from(chunk)), false];
  }

  getWriteOffset(): number {
    return this.#offset;
  }

  onWritable(handler: (offset: number) => boolean): this {
    if (this.#writable === null) this.res.on('drain', onResponseDrain);
    this.#writable = handler;
    return this;
  }

  end(body: string | Buffer = '', closeConnection = false): this {
    if (this.#done) return this;
    this.#done = true;
    if (this.#streaming) {
      // The end of a body sent in parts: its head went out already.
      this.res.end(body);
      return this;
    }
    const h = this.head;
    h.lines.push('content-length', String(typeof body === 'string' ? Buffer.byteLength(body) : body.length));
    if (closeConnection) h.lines.push('connection', 'close');
    this.res.writeHead(h.status, h.message, h.lines);
    // Node writes a Buffer body after its header string as a second chunk (a writev per
    // answer); a string is appended to the header and written at once. Latin-1 carries every
    // byte unchanged, and small answers are the common ones.
    if (typeof body !== 'string' && body.length <= ONE_WRITE_MAX) this.res.end(body.toString('latin1'), 'latin1');
    else this.res.end(body);
    return this;
  }

  endWithoutBody(): this {
    if (this.#done) return this;
    this.#done = true;
    this.res.writeHead(this.head.status, this.head.message, this.head.lines);
    this.res.end();
    return this;
  }

  close(): this {
    const was = this.#done;
    this.#done = true;
    this.#aborted = true;
    this.req.socket.destroy();
    if (!was) this.abortHandler?.();
    return this;
  }

  getRemoteAddressAsText(): ArrayBuffer {
    return addressText(this.req.socket.remoteAddress);
  }

  upgrade(): void {
    throw new Error('upgrade() on a request that is not a WebSocket upgrade');
  }
}

/** Takes an upgrade request's socket for a WebSocket connection with `userData`. */
export interface UpgradeTarget {
  accept(req: IncomingMessage, socket: Duplex, head: Buffer, userData: unknown): void;
}

/** The response to a WebSocket upgrade request: a refusal written raw, or the upgrade. */
export class UpgradeResponse extends HeadWriter implements HttpRes {
  #done = false;

  constructor(
    private readonly req: IncomingMessage,
    private readonly socket: Duplex,
    private readonly first: Buffer,
    private readonly target: UpgradeTarget,
  ) {
    super();
  }

  onAborted(handler: () => void): this {
    this.socket.once('close', () => {
      if (!this.#done) handler();
    });
    return this;
  }

  onData(handler: (chunk: BodyChunk, isLast: boolean) => void): this {
    handler(EMPTY, true);
    return this;
  }

  /** A refused upgrade: the answer, then the connection ends (whatever `closeConnection` says). */
  end(body: string | Buffer = ''): this {
    if (this.#done) return this;
    this.#done = true;
    const h = this.head;
    let text = `HTTP/1.1 ${h.status} ${h.message}\r\n`;
    for (let i = 0; i < h.lines.length; i += 2) text += `${h.lines[i]}: ${h.lines[i + 1]}\r\n`;
    const bytes = typeof body === 'string' ? Buffer.from(body) : body;
    text += `content-length: ${bytes.length}\r\nconnection: close\r\n\r\n`;
    this.socket.end(Buffer.concat([Buffer.from(text, 'latin1'), bytes]));
    return this;
  }

  write(): boolean {
    throw new Error('an upgrade request is answered whole');
  }

  tryEnd(): [boolean, boolean] {
    throw new Error('an upgrade request is answered whole');
  }

  getWriteOffset(): number {
    return 0;
  }

  onWritable(): this {
    return this;
  }

  endWithoutBody(): this {
    return this.end();
  }

  close(): this {
    this.#done = true;
    this.socket.destroy();
    return this;
  }

  getRemoteAddressAsText(): ArrayBuffer {
    return addressText(this.req.socket.remoteAddress);
  }

  upgrade<U>(userData: U, _key: string, _protocol: string, _extensions: string, _context: UpgradeContext): void {
    if (this.#done) return;
    this.#done = true;
    this.target.accept(this.req, this.socket, this.first, userData);
  }
}
