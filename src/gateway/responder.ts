// Where an Exchange's answer goes. The request core (exchange.ts) is the same for both
// transports; only this differs: an HTTP response (http-responder.ts) or a client's
// WebSocket (ws-responder.ts).

export interface Responder {
  /**
   * Sends the answer; called at most once, never after the client went away. `status` is the
   * HTTP status line, `nodeIds` the serving node(s) ('' for none), `close` ends the
   * connection after the answer, `retryAfter` is a Retry-After value ('' for none), `tried`
   * every node asked when more than one was (retries, hedges, broadcasts; '' otherwise).
   */
  answer(status: string, body: string | Buffer, nodeIds: string, close: boolean, retryAfter: string, tried: string): void;
  /** The client's IP, trusted proxies considered (docs/routing.md "Affinity and rate limits"). */
  clientIp(): string;
}
