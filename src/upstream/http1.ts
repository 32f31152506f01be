// The default upstream client: keep-alive HTTP/1.1 with pipelining and one socket write per
// connection per event-loop turn. Measured against undici's `dispatch` in the same proxy loop
// (bench/README.md), it halves the CPU per request: requests that arrive in one uWS poll
// batch leave in one write, and answers that come back together are parsed from one read.
//
// Pipelining has a cost: a node answers a connection's requests in order, so a slow request
// delays those behind it. A connection therefore takes new requests only while it has fewer
// than `pipelining` unanswered and its oldest is younger than `stallMs`, and only while the
// node's smoothed latency is under `stallMs` (a slow node gets a connection per request, so
// it works on them in parallel; its latency is seeded from the probes); otherwise another
// connection is used or opened (up to `connections`), and past that requests wait in the pool.
// Exclusive requests get a connection to themselves: those that may not be retried
// (`routing.noRetryMethods`; a connection the node drops takes everything on it down) and
// those of methods that usually take longer than `stallMs` (nothing should wait behind them).

import net from 'node:net';
import tls from 'node:tls';
import { F_CONNECT, F_OTHER, reportInternalError, type AttemptSink, type UpstreamClient } from './transport.js';

export interface Http1Options {
  /** Connections per node at most. */
  connections: number;
  /** Unanswered requests per connection at most (1 = no pipelining). */
  pipelining: number;
  /** A connection whose oldest unanswered request is older than this takes no more. */
  stallMs: number;
  connectTimeoutMs: number;
  /** Idle connections are closed after about this long. */
  idleMs: number;
}

const MAX_HEAD = 64 * 1024;
/** Bodies above this are written as their own buffer instead of copied into the batch. */
const COPY_LIMIT = 16 * 1024;
const CRLF2 = Buffer.from('\r\n\r\n');

const P_HEAD = 0;
const P_BODY = 1;
const P_CHUNK_SIZE = 2;
const P_CHUNK_DATA = 3;
const P_CHUNK_CRLF = 4;
const P_TRAILER = 5;
const P_UNTIL_CLOSE = 6;

/** Parse state of one response; reset per response. */
// Plain TCP sockets read into this one buffer (net's `onread`) instead of a fresh buffer per
// read: every read used to allocate an ArrayBuffer outside the heap, and that external memory
// drove the GC (with ~100 KB answers, concurrent marking doubled). Reads are handled
// synchronously, one at a time, so one buffer serves every connection; whatever outlives a
// read (answers, partial heads) is copied out of it.
const READ_BUFFER = Buffer.allocUnsafe(64 * 1024);

class ResponseParser {
  phase = P_HEAD;
  status = 0;
  remaining = 0;
  /** Body of a content-length answer that spans reads, allocated once at its full size. */
  whole: Buffer | null = null;
  parts: Buffer[] = [];
  size = 0;
  close = false;

  reset(): void {
    this.phase = P_HEAD;
    this.status = 0;
    this.remaining = 0;
    this.whole = null;
    if (this.parts.length > 0) this.parts = [];
    this.size = 0;
    this.close = false;
  }

  /** Takes up to `remaining` body bytes from buf at pos (copied); returns the position after them. */
  take(buf: Buffer, pos: number): number {
    const n = Math.min(this.remaining, buf.length - pos);
    if (this.whole !== null) buf.copy(this.whole, this.size, pos, pos + n);
    else this.parts.push(Buffer.from(buf.subarray(pos, pos + n)));
    this.size += n;
    this.remaining -= n;
    return pos + n;
  }

  body(): Buffer {
    if (this.whole !== null) return this.whole;
    const p = this.parts;
    return p.length === 1 ? p[0]! : Buffer.concat(p, this.size);
  }
}

class ProtocolError extends Error {}

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
      if (nameLen === 14 || nameLen === 17 || nameLen === 10) {
        const name = head.slice(at + 2, colon).toLowerCase();
        const value = head.slice(colon + 1, lineEnd).trim().toLowerCase();
        if (name === 'content-length') {
          length = Number(value);
          if (!Number.isSafeInteger(length) || length < 0) throw new ProtocolError('bad content-length');
        } else if (name === 'transfer-encoding') chunked = value.endsWith('chunked');
        else if (name === 'connection') {
          if (value.includes('close')) p.close = true;
          else if (value.includes('keep-alive')) p.close = false;
        }
      }
    }
    at = next;
  }
  if (status < 200 || status === 204 || status === 304) p.phase = P_HEAD; // no body
  else if (chunked) p.phase = P_CHUNK_SIZE;
  else if (length >= 0) {
    p.phase = P_BODY;
    p.remaining = length;
  } else p.phase = P_UNTIL_CLOSE;
}

class Connection {
  readonly socket: net.Socket;
  ready = false;
  /** Requests on this connection in order; [head, sent) written, [sent, length) not yet. */
  queue: AttemptSink[] = [];
  head = 0;
  sent = 0;
  /** In the pool's flush list. */
  dirty = false;
  closed = false;
  /** The node said it closes after the current answer: nothing behind it was processed. */
  closing = false;
  idleSweeps = 0;
  /** Exclusive requests on it: while there is one, nothing is queued behind. */
  exclusive = 0;
  /** Bytes of an unfinished head or chunk-size line from the previous read. */
  leftover: Buffer | null = null;
  readonly parser = new ResponseParser();
  private readonly connectTimer: NodeJS.Timeout;

  constructor(readonly pool: Http1Pool) {
    const t = pool.target;
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
    this.connectTimer = setTimeout(onConnectTimeout, pool.opts.connectTimeoutMs, this);
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
    if (this.ready && !this.dirty) this.pool.markDirty(this);
  }

  private onConnect(): void {
    clearTimeout(this.connectTimer);
    this.ready = true;
    if (this.sent < this.queue.length && !this.dirty) this.pool.markDirty(this);
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
    const prefix = this.pool.prefix;
    let total = 0;
    for (let i = from; i < to; i++) {
      const n = q[i]!.body.length;
      total += prefix.length + 24 + (n > COPY_LIMIT ? 0 : n);
    }
    const out = Buffer.allocUnsafe(total);
    const socket = this.socket;
    let at = 0;
    let start = 0;
    let corked = false;
    for (let i = from; i < to; i++) {
      const body = q[i]!.body;
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
  }

  /** `data` may be READ_BUFFER: nothing may keep a view of it past this call. */
  private onData(data: Buffer): void {
    let buf = data;
    if (this.leftover !== null) {
      buf = Buffer.concat([this.leftover, data]);
      this.leftover = null;
    }
    try {
      this.parse(buf);
    } catch (err) {
      if (err instanceof ProtocolError) return this.destroy('bad response: ' + err.message);
      // A bug of ours: the socket's state is unknown now. Settle its requests, keep serving.
      reportInternalError(err);
      this.destroy('internal error');
    }
  }

  private parse(buf: Buffer): void {
    const p = this.parser;
    let pos = 0;
    const len = buf.length;
    while (pos < len && !this.closed) {
      switch (p.phase) {
        case P_HEAD: {
          const end = buf.indexOf(CRLF2, pos);
          if (end === -1) {
            if (len - pos > MAX_HEAD) throw new ProtocolError('response head too large');
            this.leftover = Buffer.from(buf.subarray(pos));
            return;
          }
          if (this.head === this.queue.length) throw new ProtocolError('answer without a request');
          parseHead(p, buf, pos, end);
          pos = end + 4;
          if (p.phase === P_HEAD) {
            if (p.status >= 200) this.complete(EMPTY);
            continue;
          }
          if (p.phase === P_BODY) {
            if (len - pos >= p.remaining) {
              const body = Buffer.from(buf.subarray(pos, pos + p.remaining));
              pos += p.remaining;
              this.complete(body);
            } else p.whole = Buffer.allocUnsafe(p.remaining); // the loop goes on to P_BODY with what there is
          }
          continue;
        }
        case P_BODY: {
          pos = p.take(buf, pos);
          if (p.remaining === 0) this.complete(p.body());
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
          if (size === 0) p.phase = P_TRAILER;
          else {
            p.phase = P_CHUNK_DATA;
            p.remaining = size;
          }
          continue;
        }
        case P_CHUNK_DATA: {
          pos = p.take(buf, pos);
          if (p.remaining === 0) {
            p.phase = P_CHUNK_CRLF;
            p.remaining = 2;
          }
          continue;
        }
        case P_CHUNK_CRLF: {
          const n = Math.min(p.remaining, len - pos);
          pos += n;
          p.remaining -= n;
          if (p.remaining === 0) p.phase = P_CHUNK_SIZE;
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
          if (empty) this.complete(p.body());
          continue;
        }
        case P_UNTIL_CLOSE: {
          p.remaining = len - pos;
          p.take(buf, pos);
          return;
        }
      }
    }
  }

  /** The head request's answer is whole. */
  private complete(body: Buffer): void {
    const p = this.parser;
    const status = p.status;
    const close = p.close;
    p.reset();
    const a = this.queue[this.head]!;
    this.queue[this.head++] = undefined as unknown as AttemptSink; // let it be collected
    if (a.exclusive) this.exclusive--;
    if (this.head === this.queue.length) {
      this.queue.length = 0;
      this.head = 0;
      this.sent = 0;
    }
    if (close) this.closing = true;
    if (!a.done) a.answered(status, body);
    if (close) this.destroy('closed by node');
    else this.pool.pullWaiting(this);
  }

  private onClose(reason: string, byPeer: boolean): void {
    if (this.closed) return;
    const p = this.parser;
    if (p.phase === P_UNTIL_CLOSE && reason === 'socket closed' && this.head < this.queue.length) {
      // A body delimited by the connection's end is whole now.
      p.close = true;
      this.complete(p.body());
      if (this.closed) return;
    }
    this.closed = true;
    clearTimeout(this.connectTimer);
    this.pool.removed(this);
    const q = this.queue;
    const head = this.head;
    const sent = this.ready ? this.sent : head;
    this.queue = [];
    this.head = this.sent = 0;
    // Some servers (uWS among them) drop a connection that sends a request while an answer is
    // still pending instead of queueing it: stop pipelining to this node for a while.
    if (byPeer && !this.closing && sent - head >= 2) this.pool.pipeliningFailed(reason);
    // The head may have run on the node: it fails (the call layer retries it when safe).
    // Requests behind it are never exclusive, so safe to repeat: they go again, on another
    // connection. If this one never connected the node is likely down: all fail as unsent.
    for (let i = head; i < q.length; i++) {
      const a = q[i]!;
      if (a.done) continue;
      if (!this.ready) a.failed(F_CONNECT, reason);
      else if (i === head && i < sent && !this.closing) a.failed(F_OTHER, reason);
      else this.pool.send(a);
    }
  }

  /** Drops the connection and settles what is on it. */
  destroy(reason: string): void {
    if (this.closed) return;
    this.socket.destroy();
    this.onClose(reason, false);
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

const EMPTY = Buffer.alloc(0);

/** How long a node that dropped a pipelining connection gets one request per connection. */
const NO_PIPELINING_MS = 300_000;

let onPipeliningRefused: (node: string, reason: string) => void = () => {};

/** Told when a node drops a connection with pipelined requests on it (the server logs it). */
export function onPipeliningDropped(fn: (node: string, reason: string) => void): void {
  onPipeliningRefused = fn;
}

function onConnectTimeout(c: Connection): void {
  if (!c.ready) c.destroy('UND_ERR_CONNECT_TIMEOUT');
}

interface Target {
  host: string;
  port: number;
  tls: boolean;
  servername: string | undefined;
}

let flushList: Connection[] = [];
let flushScheduled = false;

/** Once per event-loop turn, after the poll phase has delivered everything it had. */
function flushAll(): void {
  flushScheduled = false;
  const list = flushList;
  flushList = [];
  for (let i = 0; i < list.length; i++) list[i]!.flush();
}

export class Http1Pool implements UpstreamClient {
  readonly target: Target;
  /** `POST <path> HTTP/1.1` and the fixed headers, up to `content-length: `. */
  readonly prefix: Buffer;
  private conns: Connection[] = [];
  private readonly waiting: AttemptSink[] = [];
  private closingResolve: (() => void) | null = null;
  private closingPromise: Promise<void> | null = null;
  private readonly sweeper: NodeJS.Timeout;
  /** performance.now() until which this node gets no pipelined requests (it refused them). */
  noPipeliningUntil = 0;

  constructor(
    url: string,
    readonly opts: Http1Options,
    /** The node's smoothed latency: pipelining is for nodes that answer within `stallMs`. */
    private readonly latency: { readonly ewmaMs: number },
  ) {
    const u = new URL(url);
    const secure = u.protocol === 'https:';
    const host = u.hostname.startsWith('[') ? u.hostname.slice(1, -1) : u.hostname;
    this.target = { host, port: Number(u.port) || (secure ? 443 : 80), tls: secure, servername: secure && net.isIP(host) === 0 ? host : undefined };
    let head = `POST ${u.pathname || '/'}${u.search} HTTP/1.1\r\nhost: ${u.host}\r\ncontent-type: application/json\r\n`;
    if (u.username !== '' || u.password !== '') {
      const creds = decodeURIComponent(u.username) + ':' + decodeURIComponent(u.password);
      head += `authorization: Basic ${Buffer.from(creds).toString('base64')}\r\n`;
    }
    this.prefix = Buffer.from(head + 'content-length: ', 'latin1');
    const sweepMs = Math.max(250, Math.floor(opts.idleMs / 4));
    this.sweeper = setInterval(() => this.sweep(), sweepMs);
    this.sweeper.unref();
  }

  /** Open connections (for tests and the admin view). */
  get connectionCount(): number {
    return this.conns.length;
  }

  send(a: AttemptSink): void {
    if (this.closingPromise !== null) return a.failed(F_CONNECT, 'node is closing');
    const c = this.pick(a.startedAt, a.exclusive);
    if (c !== null) c.add(a);
    else {
      a.clientRef = null;
      this.waiting.push(a);
    }
  }

  /**
   * Where a request goes, best first: a connection already taking requests this turn (they
   * leave in the same write), an idle one, the least loaded one with room, a new one.
   */
  private pick(now: number, exclusive: boolean): Connection | null {
    const conns = this.conns;
    const stall = this.opts.stallMs;
    const depth = exclusive || this.latency.ewmaMs >= stall || now < this.noPipeliningUntil ? 1 : this.opts.pipelining;
    let idle: Connection | null = null;
    let best: Connection | null = null;
    let bestN = depth;
    for (let i = 0; i < conns.length; i++) {
      const c = conns[i]!;
      if (c.closing) continue;
      const n = c.queue.length - c.head;
      if (n === 0) {
        if (depth === 1) return c;
        idle ??= c;
      } else if (n < bestN && c.exclusive === 0 && now - c.queue[c.head]!.startedAt < stall) {
        if (c.dirty) return c;
        best = c;
        bestN = n;
      }
    }
    if (idle !== null) return idle;
    if (best !== null) return best;
    if (conns.length < this.opts.connections) {
      const c = new Connection(this);
      conns.push(c);
      return c;
    }
    return null;
  }

  pipeliningFailed(reason: string): void {
    if (this.opts.pipelining > 1 && performance.now() >= this.noPipeliningUntil) onPipeliningRefused(this.target.host + ':' + this.target.port, reason);
    this.noPipeliningUntil = performance.now() + NO_PIPELINING_MS;
  }

  markDirty(c: Connection): void {
    c.dirty = true;
    flushList.push(c);
    if (!flushScheduled) {
      flushScheduled = true;
      setImmediate(flushAll);
    }
  }

  /** A connection has room again: hand it requests that were waiting for one. */
  pullWaiting(c: Connection): void {
    const w = this.waiting;
    const depth = this.latency.ewmaMs >= this.opts.stallMs || performance.now() < this.noPipeliningUntil ? 1 : this.opts.pipelining;
    while (w.length > 0 && c.unanswered < depth && !c.closing && (c.unanswered === 0 || (c.exclusive === 0 && !w[0]!.exclusive))) c.add(w.shift()!);
    if (this.closingResolve !== null) this.checkClosed();
  }

  removed(c: Connection): void {
    const i = this.conns.indexOf(c);
    if (i !== -1) this.conns.splice(i, 1);
    if (this.closingResolve !== null) this.checkClosed();
    // Requests waiting for room get a fresh connection.
    else if (this.waiting.length > 0) {
      const w = this.waiting.splice(0);
      for (const a of w) this.send(a);
    }
  }

  abandon(a: AttemptSink): boolean {
    const c = a.clientRef as Connection | null;
    if (c !== null) return c.remove(a);
    const i = this.waiting.indexOf(a);
    if (i !== -1) this.waiting.splice(i, 1);
    return true;
  }

  private sweep(): void {
    for (const c of [...this.conns]) {
      if (c.unanswered > 0) continue;
      if (++c.idleSweeps > 4) c.destroy('idle');
    }
  }

  private checkClosed(): void {
    if (this.waiting.length > 0) return;
    for (const c of [...this.conns]) if (c.unanswered === 0) c.destroy('closing');
    if (this.conns.length === 0 && this.closingResolve !== null) {
      this.closingResolve();
      this.closingResolve = null;
    }
  }

  close(): Promise<void> {
    if (this.closingPromise === null) {
      clearInterval(this.sweeper);
      this.closingPromise = new Promise((resolve) => {
        this.closingResolve = resolve;
      });
      this.checkClosed();
    }
    return this.closingPromise;
  }

  destroy(): Promise<void> {
    clearInterval(this.sweeper);
    for (const a of this.waiting.splice(0)) a.failed(F_CONNECT, 'node destroyed');
    for (const c of [...this.conns]) c.destroy('destroyed');
    if (this.closingResolve !== null) {
      this.closingResolve();
      this.closingResolve = null;
    }
    this.closingPromise ??= Promise.resolve();
    return Promise.resolve();
  }
}
