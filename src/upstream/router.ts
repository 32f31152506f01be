// What the call layer asks of whoever picks nodes (the node pool, or a test's fake): the next
// node for a typed request, what to do when none is left, and the smoothed answer time per
// method.

import type { UpstreamCall } from './call.js';
import type { UpstreamNode } from './node.js';

/** What routing reads of a call: its affinity slot (-1: none), the nodes it already tried (a bit mask), its (first) method. */
export interface RouteRequest {
  readonly slot: number;
  readonly tried: number;
  readonly method: string;
  /** A send's first pick explored a node other than the best (docs/landing.md "Sends go where they land"). */
  explored?: boolean;
}

export interface Router {
  /** Next node for this call, excluding the nodes it tried; null when none is left. */
  route(req: RouteRequest): UpstreamNode | null;
  /** route() gave null: true when the router took the call over (parked it, or refused it itself). */
  onNoNode?(call: UpstreamCall): boolean;
  /** A node answered the call (before its owner hears of it). */
  answered?(call: UpstreamCall): void;
  /** A node's error answer (call.rpcError): true when the call should go to another node instead (start() routes it again). */
  retryAnswer?(call: UpstreamCall, node: UpstreamNode, body: Buffer): boolean;
  readonly maxAttempts: number;
  readonly methodLatency: MethodLatency;
}

/**
 * Smoothed answer time per method over all nodes (a sub-batch counts under its first
 * method): calls of usually slow methods get an upstream connection to themselves.
 */
export class MethodLatency {
  private readonly ms = new Map<string, number>();
  /** Methods tracked at most (the names come from clients). */
  private static readonly MAX = 4096;

  constructor(public slowMs: number) {}

  record(method: string, ms: number): void {
    const m = this.ms;
    const prev = m.get(method);
    if (prev !== undefined) m.set(method, prev + 0.2 * (ms - prev));
    else if (m.size < MethodLatency.MAX) m.set(method, ms);
  }

  isSlow(method: string): boolean {
    const v = this.ms.get(method);
    return v !== undefined && v >= this.slowMs;
  }
}
