// `upstream.client: undici`: the same attempts over an undici keep-alive Pool (no pipelining).
// Kept as the conservative choice for nodes behind proxies that mishandle pipelined requests.

import { Pool, type Dispatcher } from 'undici';
import { retryAfterMs } from './http1/parser.js';
import { CONNECT_ERRORS, F_CONNECT, F_OTHER, F_TOO_LARGE, type AttemptSink, type UpstreamClient } from './transport.js';

const HEADERS = { 'content-type': 'application/json' };

class Abandoned extends Error {
  readonly code = 'JUMPGATE_ABANDONED';
}
const ABANDONED = new Abandoned('attempt abandoned');

/** undici dispatch handler for one attempt. */
class UndiciHandler implements Dispatcher.DispatchHandler {
  controller: Dispatcher.DispatchController | null = null;
  status = 0;
  chunks: Buffer[] = [];
  size = 0;

  constructor(readonly attempt: AttemptSink) {}

  onRequestStart(controller: Dispatcher.DispatchController): void {
    this.controller = controller;
    this.attempt.written = true;
    if (this.attempt.done) controller.abort(ABANDONED);
  }

  onResponseStart(_c: Dispatcher.DispatchController, statusCode: number, headers: Record<string, string | string[] | undefined>): void {
    this.status = statusCode;
    if (statusCode === 429) {
      const v = headers['retry-after'];
      if (typeof v === 'string') this.attempt.retryAfterMs = retryAfterMs(v.trim().toLowerCase(), Date.now());
    }
  }

  onResponseData(c: Dispatcher.DispatchController, chunk: Buffer): void {
    this.size += chunk.length;
    // undici's answers are collected whole (they never stream): past the limit the attempt fails.
    if (this.size > this.attempt.maxBuffered) {
      if (!this.attempt.done) this.attempt.failed(F_TOO_LARGE, `answer over ${this.attempt.maxBuffered} bytes`);
      this.chunks = [];
      c.abort(ABANDONED);
      return;
    }
    this.chunks.push(chunk);
  }

  onResponseEnd(): void {
    if (this.attempt.done) return;
    const c = this.chunks;
    this.attempt.answered(this.status, c.length === 1 ? c[0]! : Buffer.concat(c, this.size));
  }

  onResponseError(_c: Dispatcher.DispatchController, err: Error): void {
    if (this.attempt.done) return;
    const code = (err as { code?: string }).code ?? '';
    this.attempt.failed(CONNECT_ERRORS.has(code) ? F_CONNECT : F_OTHER, code || err.message);
  }
}

export class UndiciClient implements UpstreamClient {
  readonly streams = false;
  readonly pool: Pool;
  private readonly origin: string;
  private readonly path: string;

  constructor(url: string, connections: number, connectTimeoutMs: number) {
    const u = new URL(url);
    this.origin = u.origin;
    this.path = (u.pathname || '/') + u.search;
    this.pool = new Pool(this.origin, {
      connections,
      pipelining: 1,
      keepAliveTimeout: 4_000,
      keepAliveMaxTimeout: 600_000,
      // Per-attempt deadlines are ours (per method); undici's own would cut long calls.
      headersTimeout: 0,
      bodyTimeout: 0,
      connectTimeout: connectTimeoutMs,
    });
  }

  send(a: AttemptSink): void {
    const h = new UndiciHandler(a);
    a.clientRef = h;
    this.pool.dispatch({ path: this.path, method: 'POST', headers: HEADERS, body: a.body }, h);
  }

  /** undici hands over the controller only when it writes the request (after connecting). */
  abandon(a: AttemptSink): boolean {
    const h = a.clientRef as UndiciHandler | null;
    if (h === null || h.controller === null) return true;
    h.controller.abort(ABANDONED);
    return false;
  }

  /** undici gives no way to take a queued request back: it runs, and its answer is ignored. */
  /** undici keeps a reference to a body until its write completes, which may be after the answer. */
  keepsBody(): boolean {
    return true;
  }

  withdraw(): boolean {
    return false;
  }

  close(): Promise<void> {
    return this.pool.close();
  }

  destroy(): Promise<void> {
    return this.pool.destroy();
  }
}
