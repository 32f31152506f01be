// Where an Exchange's answer goes. The request core (exchange.ts) is the same for both
// transports; only this differs: an HTTP response (http-responder.ts) or a client's
// WebSocket (ws-responder.ts).

import type { StreamSource } from '../upstream/transport.js';
import type { AnswerStream, StreamOwner } from './answer-stream.js';

export interface Responder {
  /**
   * Sends the answer; called at most once, never after the client went away. `status` is the
   * HTTP status line, `nodeIds` the serving node(s) ('' for none), `close` ends the
   * connection after the answer, `retryAfter` is a Retry-After value ('' for none), `tried`
   * every node asked when more than one was (retries, hedges, broadcasts; '' otherwise).
   */
  answer(status: string, body: string | Buffer, nodeIds: string, close: boolean, retryAfter: string, tried: string): void;
  /** Whether a node's answer can pass to this client as it arrives (HTTP: yes; a WebSocket message is sent whole). */
  readonly streams: boolean;
  /**
   * Sends status and headers of an answer whose body follows as it arrives (`length` -1:
   * unknown); the same rules as answer() otherwise. Only when `streams`.
   */
  stream(status: string, nodeIds: string, tried: string, length: number, source: StreamSource, owner: StreamOwner): AnswerStream;
  /** The client's IP, trusted proxies considered (docs/routing.md "Affinity and rate limits"). */
  clientIp(): string;
}
