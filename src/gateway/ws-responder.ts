// Answers to calls forwarded from a client's WebSocket (docs/interface.md "WebSocket"): only the JSON-RPC
// body travels back on the socket; status, node ids and HTTP headers have nowhere to go.

import type { Responder } from './responder.js';

/** The connection a WebSocket call came in on. */
export interface WsPeer {
  /** Resolved once at the upgrade. */
  readonly ip: string;
  deliver(body: string | Buffer): void;
}

/** One per connection, shared by every call made on it. */
export class WsResponder implements Responder {
  /** A WebSocket message goes whole: large answers are held up to limits.maxBufferedAnswerBytes. */
  readonly streams = false;

  constructor(private readonly peer: WsPeer) {}

  stream(): never {
    throw new Error('WebSocket answers are sent whole');
  }

  answer(_status: string, body: string | Buffer): void {
    // Notifications get nothing back.
    if (body.length > 0) this.peer.deliver(body);
  }

  clientIp(): string {
    return this.peer.ip;
  }
}
