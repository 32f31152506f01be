// What the hot path calls to count requests. The Runtime holds one of these: the Prometheus
// exporter when the gateway runs, a no-op otherwise (unit tests, embedded use).

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
}

export const NO_METRICS: RequestRecorder = {
  request() {},
  rateLimited() {},
};
