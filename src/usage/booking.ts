// What one answered client request books in the usage meter (docs/accounts.md "Accounts, tokens and the
// console", usage): calls and errors per token and method, bytes in and out, latency.

import { KIND_INVALID, type BatchPlan } from '../rpc/analyze.js';
import type { SubOutcome } from '../rpc/batch.js';
import { isErrorAnswer } from '../rpc/scan.js';
import type { UsageMeter } from './meter.js';

/** Method label for a request that made no call: unreadable, invalid, or refused before routing. */
export const INVALID = '(invalid)';
/** Method label for a batch's bytes and its failed sub-batches. */
export const BATCH = '(batch)';

/** What booking reads of an answered request. */
export interface BookedRequest {
  readonly token: { readonly id: string };
  /** The single call's method; null when no call was made. */
  readonly method: string | null;
  /** The batch's layout; null for a single call. */
  readonly plan: BatchPlan | null;
  /** How each sub-batch ended (from/to index the batch's forwarded elements); null before any was sent. */
  readonly outcomes: readonly SubOutcome[] | null;
  /** Request body bytes received. */
  readonly received: number;
}

function hasTopLevelError(body: string | Buffer): boolean {
  return isErrorAnswer(typeof body === 'string' ? Buffer.from(body) : body);
}

/**
 * Each batch element is a call (bytes are booked under '(batch)'); a call counts as an error
 * when the gateway refused or failed it, or when a single call's answer carries a JSON-RPC
 * error. `status` is the HTTP status line answered; latency (`us`, first body byte to answer)
 * is the request's: every element of a batch gets the whole batch's time.
 */
export function bookUsage(meter: UsageMeter, r: BookedRequest, status: string, body: string | Buffer, us: number): void {
  const id = r.token.id;
  const out = typeof body === 'string' ? Buffer.byteLength(body) : body.length;
  const failed = status.charCodeAt(0) !== 0x32 ? 1 : 0; // not 2xx
  const plan = r.plan;
  if (plan === null) {
    const rpcError = failed === 0 && out > 0 && hasTopLevelError(body);
    meter.record(id, r.method ?? INVALID, 1, failed === 1 || rpcError ? 1 : 0, r.received, out, us);
    return;
  }
  if (plan.method !== '') {
    // Every element a valid call of one method (analyze.ts): one record.
    meter.record(id, plan.method, plan.count, failed === 1 ? plan.count : 0, 0, 0, us);
  } else bookRuns(meter, id, plan, failed, us);
  const outcomes = r.outcomes;
  if (outcomes !== null) for (const o of outcomes) if (o.error !== null && failed === 0) meter.record(id, BATCH, 0, o.to - o.from, 0, 0);
  meter.record(id, BATCH, 0, 0, r.received, out);
}

/** A mixed batch: each run of equal methods (invalid elements as INVALID) in one record. */
function bookRuns(meter: UsageMeter, id: string, plan: BatchPlan, failed: number, us: number): void {
  let runMethod: string | null = null;
  let runCalls = 0;
  let runErrors = 0;
  for (let i = 0; i <= plan.count; i++) {
    const invalid = i < plan.count && plan.kinds[i] === KIND_INVALID;
    const method = i === plan.count ? null : invalid ? INVALID : plan.methods[i]!;
    if (method !== runMethod) {
      if (runCalls > 0) meter.record(id, runMethod!, runCalls, runErrors, 0, 0, us);
      runMethod = method;
      runCalls = 0;
      runErrors = 0;
    }
    runCalls++;
    if (invalid || failed === 1) runErrors++;
  }
}
