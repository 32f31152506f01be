// What a client's calls book in the usage meter: calls and errors per token and method, bytes
// in and out, latency. The rules (docs/usage.md) live here, once, for HTTP, WebSocket and
// batches alike: every call the gateway answers is one call of its method, and an error when
// its answer is a JSON-RPC error (from a node or from the gateway) or a failed HTTP status.
// Bytes that belong to no single call (a batch's, notifications, keep-alive frames) are booked
// under labels that carry no calls.

import { KIND_INVALID, type BatchPlan } from '../rpc/analyze.js';
import { isErrorAnswer } from '../rpc/scan.js';
import type { UsageMeter } from './meter.js';

/** Method label for a request that made no call: unreadable, invalid, or refused before routing. */
export const INVALID = '(invalid)';
/** Method label for a batch's bytes (its calls are booked under their methods). */
export const BATCH = '(batch)';
/** Method label for WebSocket notifications the gateway delivered (bytes out only). */
export const WS_NOTIFICATIONS = '(ws notifications)';
/** Method label for a WebSocket frame that was not a readable call. */
export const WS_OTHER = '(ws other)';
/** Label for keep-alive frames (`ping` notifications): bytes in only, never calls. */
export const WS_KEEPALIVE = '(ws keep-alive)';

/**
 * The one place calls are counted: `calls` calls of `method`, `errors` of them failed, with
 * the bytes they moved and, when `us` >= 0, each call's latency in µs.
 */
export function bookCalls(meter: UsageMeter, tokenId: string, method: string, calls: number, errors: number, bytesIn: number, bytesOut: number, us = -1): void {
  meter.record(tokenId, method, calls, errors, bytesIn, bytesOut, us);
}

/** One call of `method`, failed or not. */
export function bookCall(meter: UsageMeter, tokenId: string, method: string, failed: boolean, bytesIn: number, bytesOut: number, us = -1): void {
  bookCalls(meter, tokenId, method, 1, failed ? 1 : 0, bytesIn, bytesOut, us);
}

/** Bytes that belong to no call (a batch's framing, notifications, keep-alive frames). */
export function bookBytes(meter: UsageMeter, tokenId: string, label: string, bytesIn: number, bytesOut: number): void {
  meter.record(tokenId, label, 0, 0, bytesIn, bytesOut);
}

/** What booking reads of an answered request (gateway/exchange.ts). */
export interface BookedRequest {
  readonly token: { readonly id: string };
  /** The single call's method; null when no call was made. */
  readonly method: string | null;
  /** The batch's layout; null for a single call. */
  readonly plan: BatchPlan | null;
  /** 1 at each batch request answered with a JSON-RPC error (rpc/batch.ts Assembled.errors); null when none was. */
  readonly elementErrors: Uint8Array | null;
  /** A single call answered by a node: 1 when the answer is a JSON-RPC error, 0 when not (the call read it: UpstreamCall.rpcError); -1 for an answer the gateway made. */
  readonly answerError: number;
  /** Request body bytes received. */
  readonly received: number;
}

/**
 * A request the gateway answered over HTTP or WebSocket. A single call is an error when the
 * status is not 2xx or its answer is a JSON-RPC error object; each batch element is a call
 * of its method (invalid elements under '(invalid)'), an error when the whole batch failed,
 * the element was invalid, or its answer is an error object; the batch's bytes go under
 * '(batch)'. Latency (`us`, first body byte to answer) is the request's: every element of a
 * batch gets the whole batch's time.
 */
export function bookUsage(meter: UsageMeter, r: BookedRequest, status: string, body: string | Buffer, us: number): void {
  const id = r.token.id;
  const out = typeof body === 'string' ? Buffer.byteLength(body) : body.length;
  const failed = status.charCodeAt(0) !== 0x32 ? 1 : 0; // not 2xx
  const plan = r.plan;
  if (plan === null) {
    const rpcError = failed === 0 && out > 0 && (r.answerError >= 0 ? r.answerError === 1 : isErrorAnswer(typeof body === 'string' ? Buffer.from(body) : body));
    bookCall(meter, id, r.method ?? INVALID, failed === 1 || rpcError, r.received, out, us);
    return;
  }
  const errs = r.elementErrors;
  if (plan.method !== '') {
    // Every element a valid call of one method (analyze.ts): one record.
    bookCalls(meter, id, plan.method, plan.count, failed === 1 ? plan.count : countMarked(errs), 0, 0, us);
  } else bookRuns(meter, id, plan, failed, errs, us);
  bookBytes(meter, id, BATCH, r.received, out);
}

function countMarked(errs: Uint8Array | null): number {
  if (errs === null) return 0;
  let n = 0;
  for (let i = 0; i < errs.length; i++) n += errs[i]!;
  return n;
}

/** A mixed batch: each run of equal methods (invalid elements as INVALID) in one record. */
function bookRuns(meter: UsageMeter, id: string, plan: BatchPlan, failed: number, errs: Uint8Array | null, us: number): void {
  let runMethod: string | null = null;
  let runCalls = 0;
  let runErrors = 0;
  for (let i = 0; i <= plan.count; i++) {
    const invalid = i < plan.count && plan.kinds[i] === KIND_INVALID;
    const method = i === plan.count ? null : invalid ? INVALID : plan.methods[i]!;
    if (method !== runMethod) {
      if (runCalls > 0) bookCalls(meter, id, runMethod!, runCalls, runErrors, 0, 0, us);
      runMethod = method;
      runCalls = 0;
      runErrors = 0;
    }
    runCalls++;
    if (invalid || failed === 1 || (errs !== null && errs[i] === 1)) runErrors++;
  }
}
