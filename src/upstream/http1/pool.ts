// The default upstream client: keep-alive HTTP/1.1 with pipelining and one socket write per
// connection per event-loop turn. Measured against undici's `dispatch` in the same proxy loop
// (bench/README.md), it halves the CPU per request: requests that arrive in one uWS poll
// batch leave in one write (flush.ts), and answers that come back together are parsed from
// one read (parser.ts). See docs/routing.md "Upstream connections and pipelining".
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
import { F_CONNECT, type AttemptSink, type UpstreamClient } from '../transport.js';
import { Connection, COPY_LIMIT, type ConnectionOwner, type Target } from './connection.js';
import { flushThisTurn } from './flush.js';

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

/** Told, once per episode, that a node (`host:port`) dropped a connection carrying pipelined requests. */
export type PipeliningDropped = (node: string, reason: string) => void;

/** How long a node that dropped a pipelining connection gets one request per connection. */
const NO_PIPELINING_MS = 300_000;

function ignorePipeliningDropped(): void {}

export class Http1Pool implements UpstreamClient, ConnectionOwner {
  readonly streams = true;
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
    /** The gateway logs it (docs/routing.md "Upstream connections and pipelining"). */
    private readonly onPipeliningDropped: PipeliningDropped = ignorePipeliningDropped,
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

  /** Bodies up to COPY_LIMIT are copied into the write; larger ones are written by reference. */
  keepsBody(size: number): boolean {
    return size > COPY_LIMIT;
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

  refusedPipelining(reason: string): void {
    if (this.opts.pipelining > 1 && performance.now() >= this.noPipeliningUntil) this.onPipeliningDropped(this.target.host + ':' + this.target.port, reason);
    this.noPipeliningUntil = performance.now() + NO_PIPELINING_MS;
  }

  wantsFlush(c: Connection): void {
    flushThisTurn(c);
  }

  hasRoom(c: Connection): void {
    const w = this.waiting;
    const depth = this.latency.ewmaMs >= this.opts.stallMs || performance.now() < this.noPipeliningUntil ? 1 : this.opts.pipelining;
    while (w.length > 0 && c.unanswered < depth && !c.closing && (c.unanswered === 0 || (c.exclusive === 0 && !w[0]!.exclusive))) c.add(w.shift()!);
    if (this.closingResolve !== null) this.checkClosed();
  }

  connectionClosed(c: Connection): void {
    const i = this.conns.indexOf(c);
    if (i !== -1) this.conns.splice(i, 1);
    if (this.closingResolve !== null) this.checkClosed();
    // Requests waiting for room get a fresh connection.
    else if (this.waiting.length > 0) {
      const w = this.waiting.splice(0);
      for (const a of w) this.send(a);
    }
  }

  resend(a: AttemptSink): void {
    this.send(a);
  }

  abandon(a: AttemptSink): boolean {
    const c = a.clientRef as Connection | null;
    if (c !== null) return c.remove(a);
    const i = this.waiting.indexOf(a);
    if (i !== -1) this.waiting.splice(i, 1);
    return true;
  }

  withdraw(a: AttemptSink): boolean {
    const c = a.clientRef as Connection | null;
    if (c !== null) return c.withdraw(a);
    const i = this.waiting.indexOf(a);
    if (i === -1) return false;
    this.waiting.splice(i, 1);
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
