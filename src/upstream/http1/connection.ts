// One keep-alive connection to a node: its requests in order, written in batches (flush) and
// answered in order (the parser). It tells its owner, the node's pool, when it has requests to
// write, when it has room again and when it closed; where requests go is the pool's business.

import net from 'node:net';
import tls from 'node:tls';
import {
  F_CONNECT,
  F_OTHER,
  F_PIPELINE_DROPPED,
  F_TOO_LARGE,
  reportInternalError,
  type AttemptSink,
  type BodyStream,
  type StreamSource,
} from '../transport.js';
import type { Flushable } from './flush.js';
import { ProtocolError, ResponseParser, type AnswerSink } from './parser.js';
import { SLAB } from '../../slabs.js';

/**
 * Bodies above this are written as their own buffer instead of copied into the batch. A body
 * up to this size is copied when it is written, so its owner may reuse it once the attempt
 * ended (the gateway recycles request bodies that way: gateway/http-responder.ts).
 */
export const COPY_LIMIT = SLAB;

// Plain TCP sockets read into this one buffer (net's `onread`) instead of a fresh buffer per
// read: every read used to allocate an ArrayBuffer outside the heap, and that external memory
// drove the GC (with ~100 KB answers, concurrent marking doubled). Reads are handled
// synchronously, one at a time, so one buffer serves every connection; whatever outlives a
// read (answers, partial heads) is copied out of it (the parser's contract).
const READ_BUFFER = Buffer.allocUnsafe(64 * 1024);

// Writes are assembled in one buffer kept between flushes for the same reason: a 100-call
// batch is ~10 KB, above Buffer's pool, so a fresh buffer per write was external memory per
// batch. A plain socket write that completes at once leaves the socket nothing to hold
// (writableLength 0), and the buffer is reused; when the kernel takes only part of it, the
// socket keeps it and the next flush starts a new one. Larger writes get their own buffer.
const WRITE_BUFFER_MAX = 64 * 1024;
let writeBuffer = Buffer.allocUnsafe(WRITE_BUFFER_MAX);

export interface Target {
  host: string;
  port: number;
  tls: boolean;
  servername: string | undefined;
}

/** What a connection needs from, and tells, the pool that owns it. */
export interface ConnectionOwner {
  readonly target: Target;
  /** `POST <path> HTTP/1.1` and the fixed headers, up to `content-length: `. */
  readonly prefix: Buffer;
  readonly opts: { readonly connectTimeoutMs: number };
  /** `c` has requests to write: flush it this turn. */
  wantsFlush(c: Connection): void;
  /** `c` has room again (an answer came): hand it requests that wait for one. */
  hasRoom(c: Connection): void;
  /** `c` closed: forget it. Its requests are settled or resent right after. */
  connectionClosed(c: Connection): void;
  /** The node dropped `c` with pipelined requests on it. */
  refusedPipelining(reason: string): void;
  /** A request that was on a dropped connection and may safely go again. */
  resend(a: AttemptSink): void;
}

/** Where the body of an answer nobody waits for any more goes: nowhere, without holding it. */
const DISCARD: BodyStream = { data: () => true, end: () => undefined, broken: () => undefined };

export class Connection implements AnswerSink, Flushable, StreamSource {
  readonly socket: net.Socket;
  ready = false;
  /** Requests on this connection in order; [head, sent) written, [sent, length) not yet. */
  queue: AttemptSink[] = [];
  head = 0;
  sent = 0;
  /** Listed for this turn's flush. */
  dirty = false;
  closed = false;
  /** The node said it closes after the current answer: nothing behind it was processed. */
  closing = false;
  idleSweeps = 0;
  /** Exclusive requests on it: while there is one, nothing is queued behind. */
  exclusive = 0;
  private readonly parser = new ResponseParser();
  /** Where the head request's answer streams to (answers over their attempt's maxBuffered); null when it is collected. */
  private stream: BodyStream | null = null;
  private readonly connectTimer: NodeJS.Timeout;

  constructor(readonly owner: ConnectionOwner) {
    const t = owner.target;
    if (t.tls) {
      this.socket = tls.connect({ host: t.host, port: t.port, servername: t.servername });
      this.socket.on('data', (d: Buffer) => this.onData(d));
    } else {
      const onread = {
        buffer: READ_BUFFER,
        callback: (n: number, buf: Uint8Array): boolean => {
          this.onData((buf as Buffer).subarray(0, n));
          return true; // keep reading
        },
      };
      this.socket = net.connect({ host: t.host, port: t.port, onread });
    }
    this.socket.setNoDelay(true);
    this.connectTimer = setTimeout(onConnectTimeout, owner.opts.connectTimeoutMs, this);
    this.socket.once(t.tls ? 'secureConnect' : 'connect', () => this.onConnect());
    this.socket.on('error', (err: NodeJS.ErrnoException) => this.onClose(err.code ?? err.message, true));
    this.socket.on('close', () => this.onClose('socket closed', true));
  }

  get unanswered(): number {
    return this.queue.length - this.head;
  }

  add(a: AttemptSink): void {
    a.clientRef = this;
    if (a.exclusive) this.exclusive++;
    this.queue.push(a);
    this.idleSweeps = 0;
    if (this.ready && !this.dirty) this.markDirty();
  }

  private markDirty(): void {
    this.dirty = true;
    this.owner.wantsFlush(this);
  }

  private onConnect(): void {
    clearTimeout(this.connectTimer);
    this.ready = true;
    if (this.sent < this.queue.length && !this.dirty) this.markDirty();
  }

  /**
   * Writes every request added since the last flush in one socket write: heads and small
   * bodies are copied into one buffer; a large body is written as it is, between two
   * regions of that buffer, under cork so the whole still leaves in one writev.
   */
  flush(): void {
    this.dirty = false;
    if (this.closed) return;
    const q = this.queue;
    const from = this.sent;
    const to = q.length;
    if (from === to) return;
    const prefix = this.owner.prefix;
    let total = 0;
    for (let i = from; i < to; i++) {
      const n = q[i]!.body.length;
      total += prefix.length + 24 + (n > COPY_LIMIT ? 0 : n);
    }
    const socket = this.socket;
    const reuse = total <= WRITE_BUFFER_MAX && !this.owner.target.tls;
    const out = reuse ? writeBuffer : Buffer.allocUnsafe(total);
    let at = 0;
    let start = 0;
    let corked = false;
    for (let i = from; i < to; i++) {
      const a = q[i]!;
      a.written = true;
      const body = a.body;
      at += prefix.copy(out, at);
      at += out.write(body.length + '\r\n\r\n', at, 'latin1');
      if (body.length <= COPY_LIMIT) {
        at += body.copy(out, at);
        continue;
      }
      if (!corked) {
        socket.cork();
        corked = true;
      }
      socket.write(out.subarray(start, at));
      socket.write(body);
      start = at;
    }
    this.sent = to;
    if (at > start) socket.write(start === 0 && at === out.length ? out : out.subarray(start, at));
    if (corked) socket.uncork();
    if (reuse && socket.writableLength !== 0) writeBuffer = Buffer.allocUnsafe(WRITE_BUFFER_MAX);
  }

  /** `data` may be READ_BUFFER: nothing may keep a view of it past this call. */
  private onData(data: Buffer): void {
    try {
      this.parser.feed(data, this);
    } catch (err) {
      if (err instanceof ProtocolError) return this.destroy('bad response: ' + err.message);
      // A bug of ours: the socket's state is unknown now. Settle its requests, keep serving.
      reportInternalError(err);
      this.destroy('internal error');
    }
  }

  get bufferLimit(): number {
    const a = this.queue[this.head]!;
    // An answer nobody waits for is read and dropped, never collected.
    return a.done ? 0 : a.maxBuffered;
  }

  streamFrom(status: number, length: number, first: Buffer): boolean {
    const a = this.queue[this.head]!;
    const s = a.done ? DISCARD : a.overLimit(status, length, first, this);
    if (s === null) {
      // Nothing can take the rest: the attempt fails and the connection goes (its body is not read).
      a.failed(F_TOO_LARGE, `answer over ${a.maxBuffered} bytes`);
      this.destroy('answer too large');
      return false;
    }
    this.stream = s;
    // Nothing else is queued behind an answer that may take long to pass (pool.ts picks).
    this.exclusive++;
    return true;
  }

  streamData(chunk: Buffer): void {
    if (!this.stream!.data(chunk)) this.socket.pause();
  }

  pause(): void {
    this.socket.pause();
  }

  resume(): void {
    if (!this.closed) this.socket.resume();
  }

  abort(): void {
    this.stream = DISCARD;
    this.destroy('client went away');
  }

  /** The head request's answer is whole (called by the parser); `body` null when it streamed. */
  answer(status: number, close: boolean, body: Buffer | null): void {
    const a = this.queue[this.head]!;
    this.queue[this.head++] = undefined as unknown as AttemptSink; // let it be collected
    if (a.exclusive) this.exclusive--;
    if (this.head === this.queue.length) {
      this.queue.length = 0;
      this.head = 0;
      this.sent = 0;
    }
    if (close) this.closing = true;
    if (body === null) {
      const stream = this.stream!;
      this.stream = null;
      this.exclusive--;
      stream.end();
      // Its last bytes may have found the client behind: the answers after it must be read.
      this.socket.resume();
    } else if (!a.done) {
      if (status === 429) a.retryAfterMs = this.parser.answerRetryAfterMs;
      a.answered(status, body);
    }
    if (close) this.destroy('closed by node');
    else this.owner.hasRoom(this);
  }

  private onClose(reason: string, byPeer: boolean): void {
    if (this.closed) return;
    if (this.parser.untilClose && reason === 'socket closed' && this.head < this.queue.length) {
      // A body delimited by the connection's end is whole now.
      this.parser.endOfStream(this);
      if (this.closed) return;
    }
    this.closed = true;
    clearTimeout(this.connectTimer);
    if (this.stream !== null) {
      // The answer streaming to a client broke off: its attempt ended when it began to stream.
      const stream = this.stream;
      this.stream = null;
      stream.broken(reason);
    }
    this.owner.connectionClosed(this);
    const q = this.queue;
    const head = this.head;
    const sent = this.ready ? this.sent : head;
    this.queue = [];
    this.head = this.sent = 0;
    // Some servers (uWS among them) drop a connection that sends a request while an answer is
    // still pending instead of queueing it: stop pipelining to this node for a while.
    const refused = byPeer && !this.closing && sent - head >= 2;
    if (refused) this.owner.refusedPipelining(reason);
    // The head may have run on the node: it fails (the call layer retries it when safe).
    // Requests behind it are never exclusive, so safe to repeat: they go again, on another
    // connection. If this one never connected the node is likely down: all fail as unsent.
    for (let i = head; i < q.length; i++) {
      const a = q[i]!;
      if (a.done) continue;
      if (!this.ready) a.failed(F_CONNECT, reason);
      else if (i === head && i < sent && !this.closing) a.failed(refused ? F_PIPELINE_DROPPED : F_OTHER, reason);
      else {
        // It goes out again: until then its body is still needed (call.ts bodyInUse).
        a.written = false;
        this.owner.resend(a);
      }
    }
  }

  /** Drops the connection and settles what is on it. */
  destroy(reason: string): void {
    if (this.closed) return;
    this.socket.destroy();
    this.onClose(reason, false);
  }

  /** Takes back a request not written yet (true); a written one stays and its answer will be ignored. */
  withdraw(a: AttemptSink): boolean {
    const q = this.queue;
    const i = q.indexOf(a, this.head);
    if (i === -1 || (i < this.sent && this.ready)) return false;
    q.splice(i, 1);
    if (a.exclusive) this.exclusive--;
    return true;
  }

  /** True when its request is removed before being written; false when it was written. */
  remove(a: AttemptSink): boolean {
    const q = this.queue;
    const i = q.indexOf(a, this.head);
    if (i === -1) return false;
    if (i >= this.sent || !this.ready) {
      q.splice(i, 1);
      if (a.exclusive) this.exclusive--;
      return true;
    }
    // Written: its answer will be ignored (a.done). With nothing live left on it, close.
    let live = false;
    for (let k = this.head; k < q.length; k++) if (q[k] !== a && !q[k]!.done) live = true;
    if (!live) this.destroy('abandoned');
    return false;
  }
}

function onConnectTimeout(c: Connection): void {
  if (!c.ready) c.destroy('UND_ERR_CONNECT_TIMEOUT');
}
