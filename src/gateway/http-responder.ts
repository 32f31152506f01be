// The HTTP side of one client request: streams the body in from the server engine and writes
// the answer. The response must not be touched after onAborted (the Exchange never answers then).

import type { StreamSource } from '../upstream/transport.js';
import { AnswerStream, type StreamOwner } from './answer-stream.js';
import { MEM_SLAB, type BodyMemory } from './body-memory.js';
import type { Exchange } from './exchange.js';
import { H_CONTENT_TYPE, V_JSON } from './headers.js';
import type { RequestState } from './request-state.js';
import type { Responder } from './responder.js';
import type { Serving } from './serving.js';
import type { Settings } from './settings.js';
import { viewOf } from '../server/chunk.js';
import type { BodyChunk, HttpRes as HttpResponse } from '../server/types.js';

const EMPTY = '';
const OK = '200 OK';
const OK_BYTES = Buffer.from(OK);

// Where a body is received (slab, shared or plain memory) is body-memory.ts's choice; a slab
// goes back once its request is answered when Exchange.bodyReusable() says nothing else can
// hold the bytes.

/** The answer `writeAnswer` writes: uWS runs it synchronously inside cork, so no closure per response. */
const toWrite = { to: null as HttpResponder | null, status: '', body: EMPTY as string | Buffer, nodeIds: '', close: false, retryAfter: '', tried: '' };

/** The header lines of an answer that is not the common one: content type, CORS, node ids. */
function writeHeaderLines(res: HttpResponse, rt: Settings, cors: string, json: boolean, nodeIds: string, tried: string): void {
  if (json) res.writeHeader(H_CONTENT_TYPE, V_JSON);
  if (cors !== '') {
    res.writeHeader('access-control-allow-origin', cors);
    res.writeHeader('access-control-expose-headers', rt.names.node + ', ' + rt.names.nodesTried);
    if (!rt.corsAny) res.writeHeader('vary', 'Origin');
  }
  if (nodeIds !== '' && rt.exposeNode) res.writeHeader(rt.keys.node, nodeIds);
  if (tried !== '' && rt.exposeNode) res.writeHeader(rt.keys.nodesTried, tried);
}

/** Status and headers of an answer whose body follows (AnswerStream): the same lines as writeAnswer's. */
function writeHead(): void {
  const { to, status, nodeIds, tried } = toWrite;
  const res = to!.res;
  const rt = to!.settings;
  const cors = to!.corsOrigin;
  res.writeStatus(status === OK ? OK_BYTES : status);
  if (rt.corsAny ? cors !== '' : cors === '') res.writeHeader(H_CONTENT_TYPE, rt.heads.get(nodeIds, tried));
  else writeHeaderLines(res, rt, cors, true, nodeIds, tried);
}

function writeAnswer(): void {
  const { to, status, body, nodeIds, close, retryAfter, tried } = toWrite;
  const res = to!.res;
  const rt = to!.settings;
  const draining = to!.state.draining;
  const cors = to!.corsOrigin;
  res.writeStatus(status === OK ? OK_BYTES : status);
  if (body.length > 0 && (rt.corsAny ? cors !== '' : cors === '') && retryAfter === '') {
    // The common answer: all its header lines in one prebuilt value (see response-heads.ts).
    res.writeHeader(H_CONTENT_TYPE, rt.heads.get(nodeIds, tried));
    res.end(body, close || draining);
    return;
  }
  writeHeaderLines(res, rt, cors, body.length > 0, nodeIds, tried);
  if (retryAfter !== '') res.writeHeader('retry-after', retryAfter);
  res.end(body, close || draining);
}

export class HttpResponder implements Responder {
  /** Set by receive(), before uWS delivers any body byte. */
  private exchange: Exchange | null = null;
  /** Sized from Content-Length; null while a chunked body arrives in `parts`. */
  private body: Buffer | null = null;
  private parts: Buffer[] | null = null;
  private received = 0;
  private answered = false;
  /** The body when it was cut from a slab (../slabs.ts); null when it has its own memory. */
  private slab: Buffer | null = null;
  readonly settings: Settings;
  readonly state: RequestState;
  private readonly memory: BodyMemory;

  constructor(
    readonly res: HttpResponse,
    serving: Serving,
    /** Value for Access-Control-Allow-Origin, '' for none. */
    readonly corsOrigin: string,
    /** Content-Length, or -1 when the body is chunked. */
    expected: number,
    /** X-Forwarded-For when a proxy is trusted, else ''. Read now: uWS's request dies with the handler. */
    private readonly forwardedFor: string,
  ) {
    this.settings = serving.settings;
    this.state = serving.state;
    this.memory = serving.services.memory;
    if (expected >= 0) {
      const kind = this.memory.kindFor(expected);
      this.body = this.memory.alloc(kind, expected);
      if (kind === MEM_SLAB) this.slab = this.body;
    } else this.parts = [];
  }

  /** Streams the request body into `ex`, which answers through this responder. */
  receive(ex: Exchange): void {
    this.exchange = ex;
    this.res.onAborted(() => this.onAborted());
    this.res.onData((chunk, isLast) => this.onChunk(chunk, isLast));
  }

  private onAborted(): void {
    this.exchange!.abort();
  }

  private onChunk(chunk: BodyChunk, isLast: boolean): void {
    if (this.answered) return;
    const n = chunk.byteLength;
    if (this.received + n > this.settings.maxBodyBytes || (this.body !== null && this.received + n > this.body.length)) {
      this.exchange!.bodyTooLarge(this.received);
      return;
    }
    // uWS reuses the chunk's memory after this callback returns: copy now.
    if (this.body !== null) this.body.set(viewOf(chunk), this.received);
    else this.parts!.push(Buffer.from(viewOf(chunk)));
    this.received += n;
    if (!isLast) return;
    let body = this.body;
    if (body === null) body = this.memory.join(this.parts!, this.received);
    else if (this.received < body.length) body = body.subarray(0, this.received);
    // The Exchange holds the body from here on.
    this.body = null;
    this.parts = null;
    this.exchange!.start(body);
  }

  answer(status: string, body: string | Buffer, nodeIds: string, close: boolean, retryAfter: string, tried = ''): void {
    toWrite.body = body;
    toWrite.close = close;
    toWrite.retryAfter = retryAfter;
    this.write(writeAnswer, status, nodeIds, tried);
    toWrite.body = EMPTY;
  }

  readonly streams = true;

  stream(status: string, nodeIds: string, tried: string, length: number, source: StreamSource, owner: StreamOwner): AnswerStream {
    this.write(writeHead, status, nodeIds, tried);
    return new AnswerStream(this.res, length, source, owner);
  }

  /** Runs `writer` in cork over `toWrite` (no closure per response), then lets the request body go. */
  private write(writer: () => void, status: string, nodeIds: string, tried: string): void {
    this.answered = true;
    toWrite.to = this;
    toWrite.status = status;
    toWrite.nodeIds = nodeIds;
    toWrite.tried = tried;
    this.res.cork(writer);
    toWrite.to = null;
    toWrite.tried = '';
    this.releaseBody();
  }

  /** Every call of the request has ended by now (an answer never comes before them). */
  private releaseBody(): void {
    if (this.slab !== null) {
      this.memory.release(this.slab, this.exchange!.bodyReusable());
      this.slab = null;
    }
  }

  /** Only while the response is open. */
  clientIp(): string {
    return this.settings.clientIp.resolve(Buffer.from(this.res.getRemoteAddressAsText()).toString(), this.forwardedFor);
  }
}
