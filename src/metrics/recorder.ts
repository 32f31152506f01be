// What the hot path calls to count requests. The request path's services hold one of these:
// the Prometheus exporter when the gateway runs, a no-op otherwise (unit tests, embedded use).

export interface RequestRecorder {
  /**
   * One client HTTP request answered (counted once per HTTP response, a batch included).
   * `method`: the single call's method, '' when not known (unparsable body, refused before
   * routing); `batch`: the body was a batch; `status`: the status line sent; `nodeIds`: the
   * node(s) that served it, comma-separated, '' for none; `ms`: time since the request began.
   */
  request(method: string, batch: boolean, status: string, nodeIds: string, ms: number): void;
  /** A request refused by a rate limit; `scope` as in the 7429 error's `data.scope`. */
  rateLimited(scope: string): void;
  /** How a call reached nodes (docs/routing.md "Broadcast sends", "Hedged reads", "Coalescing"): one of the CALL_EVENTS. */
  callEvent(kind: CallEvent): void;
}

/** Counted routing events: a hedge sent, a hedge that answered first, a broadcast call, a caller that joined an identical call. */
export const CALL_EVENTS = ['hedge_fired', 'hedge_won', 'broadcast', 'coalesced'] as const;
export type CallEvent = (typeof CALL_EVENTS)[number];

export const NO_METRICS: RequestRecorder = {
  request() {},
  rateLimited() {},
  callEvent() {},
};
