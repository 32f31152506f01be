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

/**
 * The answer grew past the attempt's maxBuffered and could not be streamed (a batch's part, a
 * coalesced or hedged call, a WebSocket): never retried, another node's answer is as large.
 */
export const F_TOO_LARGE = 6;

/** The node's connection an answer streams from: it stops reading while the client is behind. */
export interface StreamSource {
  pause(): void;
  resume(): void;
  /** The client went away: drops the connection (the rest of the answer is not read). */
  abort(): void;
}

/** Where a streamed answer's body goes (docs/routing.md "Large answers"). */
export interface BodyStream {
  /** Body bytes: a view valid only during the call. False: the client is behind (pause the source). */
  data(chunk: Buffer): boolean;
  /** The body is whole. */
  end(): void;
  /** The body broke off (the node closed or reset): the client's answer is cut short. */
  broken(reason: string): void;
}

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
  /** A 429 answer's Retry-After in ms (-1: none); the client sets it before answered(). */
  retryAfterMs: number;
  /** Whatever the client needs to find the attempt again (its connection, its handler). */
  clientRef: unknown;
  /** Set by the client once the request left for the node (a coalesced call written already takes only joiners within its window). */
  written: boolean;
  /** True once the attempt has ended (answered, failed or timed out): late events are ignored. */
  readonly done: boolean;
  /**
   * The most body bytes the client collects for this attempt: beyond them it asks
   * overLimit() whether the rest streams, and fails the attempt with F_TOO_LARGE if not.
   */
  readonly maxBuffered: number;
  /** A whole response (a view into a read buffer that is never reused). */
  answered(status: number, body: Buffer): void;
  /**
   * The answer outgrew maxBuffered: the stream its body continues into (from `first`, the bytes
   * read so far), or null when it cannot stream. `length` is the whole body's, -1 when unknown.
   */
  overLimit(status: number, length: number, first: Buffer, source: StreamSource): BodyStream | null;
  failed(kind: number, reason: string): void;
}

export interface UpstreamClient {
  /** Whether answers over an attempt's maxBuffered can stream (AttemptSink.overLimit); else they fail. */
  readonly streams: boolean;
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
