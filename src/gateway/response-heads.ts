// The headers of a JSON answer, written with one uWS call. uWS writes `name: value\r\n` as
// given, so a value may carry the following header lines too: `content-type` gets
// "application/json\r\naccess-control-allow-origin: *\r\n…\r\nX-Service-Node: a" as one
// prebuilt Buffer. Three writeHeader calls with string arguments (each UTF-8 encoded into a
// fresh allocation) were a visible share of a small request's CPU. Every part is ours: the
// brand and node ids are validated config words, the origin is the literal '*'.

import type { HeaderNames } from './headers.js';

/** Distinct node-id lists kept (a batch over several nodes names them all; orders vary). */
const MAX_ENTRIES = 256;

export class ResponseHeads {
  private readonly byNodes = new Map<string, Buffer>();
  private readonly prefix: string;

  constructor(
    private readonly names: HeaderNames,
    /** CORS allows any origin: every answer carries the two CORS lines. */
    corsAny: boolean,
    /** Answers name their node(s). */
    private readonly exposeNode: boolean,
  ) {
    this.prefix = corsAny
      ? `application/json\r\naccess-control-allow-origin: *\r\naccess-control-expose-headers: ${names.node}, ${names.nodesTried}`
      : 'application/json';
  }

  /** The content-type value with the CORS and node lines that follow it; `tried`: every node asked when more than one was. */
  get(nodeIds: string, tried = ''): Buffer {
    const key = tried === '' ? nodeIds : nodeIds + '\n' + tried;
    let b = this.byNodes.get(key);
    if (b !== undefined) return b;
    let v = nodeIds === '' || !this.exposeNode ? this.prefix : `${this.prefix}\r\n${this.names.node}: ${nodeIds}`;
    if (tried !== '' && this.exposeNode) v += `\r\n${this.names.nodesTried}: ${tried}`;
    b = Buffer.from(v, 'latin1');
    if (this.byNodes.size < MAX_ENTRIES) this.byNodes.set(key, b);
    return b;
  }
}
