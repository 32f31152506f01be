// What an upstream client sees of one attempt, and what the call layer sees of a client. Two
// clients implement it: the pipelined HTTP/1.1 client (http1/pool.ts, the default) and undici
// (undici-client.ts, `upstream.client: undici`).

/** Failure kinds, as the retry rules (docs/routing.md "Retries and node health") need them. */
export const F_NONE = 0;
/** The request never reached the node (connect refused/failed, or it was never written). */
export const F_CONNECT = 1;
export const F_TIMEOUT = 2;
/** Written, then no usable answer: reset, closed, bad response. */
export const F_OTHER = 3;
/** Our deadline passed while still connecting or queued: the request was never written. */
export const F_CONNECT_TIMEOUT = 4;
/**
 * Written, then the node dropped the connection because it carried pipelined requests (it
 * does not queue them): retried as F_OTHER is, but no mark against the node's health, or a
 * burst that finds a node before the pool learns it refuses pipelining would eject it
 * (docs/routing.md "Upstream connections and pipelining").
 */
export const F_PIPELINE_DROPPED = 5;

// Error codes raised before any byte of the request could reach the node.
export const CONNECT_ERRORS = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EHOSTUNREACH', 'ENETUNREACH', 'EAI_AGAIN', 'UND_ERR_CONNECT_TIMEOUT']);

export interface AttemptSink {
  /** The JSON-RPC body to POST. */
  readonly body: Buffer;
  /**
   * The request gets a connection to itself: it may not be retried (if the node drops a
   * connection, everything on it fails), or its method is slow (nothing should wait behind it).
   */
  readonly exclusive: boolean;
  /** performance.now() when the attempt began. */
  readonly startedAt: number;
  /** Whatever the client needs to find the attempt again (its connection, its handler). */
  clientRef: unknown;
  /** Set by the client once the request left for the node (a coalesced call written already takes only joiners within its window). */
  written: boolean;
  /** True once the attempt has ended (answered, failed or timed out): late events are ignored. */
  readonly done: boolean;
  /** A whole response (a view into a read buffer that is never reused). */
  answered(status: number, body: Buffer): void;
  failed(kind: number, reason: string): void;
}

export interface UpstreamClient {
  send(a: AttemptSink): void;
  /**
   * Whether the client may still hold a request body of `size` bytes once the attempt that
   * carried it has ended: when false, the body's memory may be reused (gateway/body-memory.ts).
   */
  keepsBody(size: number): boolean;
  /**
   * The attempt's deadline passed: stop waiting for it. Returns true when its request was
   * never written (so any method may be retried), false when the node may have received it.
   */
  abandon(a: AttemptSink): boolean;
  /**
   * The call no longer needs this attempt (a hedge was answered first): drops it when its
   * request was not written yet (true). A written one stays where it is, so a pipelined
   * connection keeps its order: its answer is read and ignored when it comes (false).
   */
  withdraw(a: AttemptSink): boolean;
  /** Stop taking requests; resolves when the in-flight ones are answered. */
  close(): Promise<void>;
  destroy(): Promise<void>;
}

let internalErrorReporter: (err: unknown) => void = (err) => console.error('jumpgate: internal error in an upstream callback', err);

/** Where bugs surfacing in client callbacks are reported (the server passes its logger). */
export function onInternalError(fn: (err: unknown) => void): void {
  internalErrorReporter = fn;
}

export function reportInternalError(err: unknown): void {
  internalErrorReporter(err);
}
