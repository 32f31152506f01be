// Exact HTTP/1.x bytes over a plain socket, for tests of framing that fetch and node:http
// refuse to send (duplicate Content-Length, broken chunks, HTTP/1.0, pipelining, split
// request lines). Responses are parsed from everything received, in order.

import { connect, type Socket } from 'node:net';
import { eventually, eventuallyValue } from './eventually.js';

export interface RawResponse {
  status: number;
  /** Lower-case names; a repeated header keeps its last value. */
  headers: Record<string, string>;
  body: string;
}

const HEAD_END = Buffer.from('\r\n\r\n');
const CRLF = Buffer.from('\r\n');

/** Content-Length, chunked, or read-until-close body; null when not complete yet. */
function bodyEnd(buf: Buffer, start: number, status: number, headers: Record<string, string>, closed: boolean): { end: number; body: Buffer } | null {
  if (status < 200 || status === 204 || status === 304) return { end: start, body: Buffer.alloc(0) };
  if (headers['transfer-encoding']?.toLowerCase() === 'chunked') {
    const parts: Buffer[] = [];
    let at = start;
    for (;;) {
      const lineEnd = buf.indexOf(CRLF, at);
      if (lineEnd < 0) return null;
      const size = parseInt(buf.toString('latin1', at, lineEnd), 16);
      if (size === 0) {
        const trailerEnd = buf.indexOf(CRLF, lineEnd + 2);
        return trailerEnd < 0 ? null : { end: trailerEnd + 2, body: Buffer.concat(parts) };
      }
      if (buf.length < lineEnd + 2 + size + 2) return null;
      parts.push(buf.subarray(lineEnd + 2, lineEnd + 2 + size));
      at = lineEnd + 2 + size + 2;
    }
  }
  const cl = headers['content-length'];
  if (cl !== undefined) {
    const end = start + Number(cl);
    return buf.length < end ? null : { end, body: buf.subarray(start, end) };
  }
  // No length: the body runs to the end of the connection (uWS's own error pages).
  return closed ? { end: buf.length, body: buf.subarray(start) } : null;
}

/** The complete responses in `buf`, in order. */
export function parseResponses(buf: Buffer, closed: boolean): RawResponse[] {
  const out: RawResponse[] = [];
  let at = 0;
  while (at < buf.length) {
    const headEnd = buf.indexOf(HEAD_END, at);
    if (headEnd < 0) break;
    const lines = buf.toString('latin1', at, headEnd).split('\r\n');
    const status = Number(lines[0]!.split(' ')[1]);
    const headers: Record<string, string> = {};
    for (const line of lines.slice(1)) {
      const colon = line.indexOf(':');
      if (colon > 0) headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
    }
    const b = bodyEnd(buf, headEnd + 4, status, headers, closed);
    if (b === null) break;
    out.push({ status, headers, body: b.body.toString('utf8') });
    at = b.end;
  }
  return out;
}

export class RawConnection {
  private chunks: Buffer[] = [];
  private readonly openedAt = Date.now();
  /** Milliseconds from `open()` to the close; null while open. */
  closedAfterMs: number | null = null;

  private constructor(readonly socket: Socket) {
    socket.on('data', (d: Buffer) => this.chunks.push(d));
    // A reset after the server's close is expected in several tests; the close event follows.
    socket.on('error', () => {});
    socket.on('close', () => {
      this.closedAfterMs = Date.now() - this.openedAt;
    });
  }

  static open(port: number, host = '127.0.0.1'): Promise<RawConnection> {
    return new Promise((resolve, reject) => {
      const socket = connect(port, host);
      // Each write leaves as its own segment: tests that split a request depend on it.
      socket.setNoDelay(true);
      const conn = new RawConnection(socket);
      socket.once('error', reject);
      socket.once('connect', () => {
        socket.off('error', reject);
        resolve(conn);
      });
    });
  }

  get closed(): boolean {
    return this.closedAfterMs !== null;
  }

  /** Every byte received so far. */
  get received(): Buffer {
    if (this.chunks.length > 1) this.chunks = [Buffer.concat(this.chunks)];
    return this.chunks[0] ?? Buffer.alloc(0);
  }

  write(data: string | Buffer): void {
    this.socket.write(data);
  }

  responses(): RawResponse[] {
    return parseResponses(this.received, this.closed);
  }

  /** Resolves with response number `n` (0 = the first) once it is complete. */
  response(n = 0, ms = 3000): Promise<RawResponse> {
    return eventuallyValue(
      () => `response #${n}; received: ${JSON.stringify(this.received.toString('latin1').slice(0, 400))}${this.closed ? ' (closed)' : ''}`,
      () => this.responses()[n],
      ms,
    );
  }

  waitClosed(ms = 3000): Promise<void> {
    return eventually('the server to close the connection', () => this.closed, ms);
  }

  close(): void {
    this.socket.destroy();
  }
}

/** A POST whose body has a Content-Length; `headers` are extra raw lines. */
export function rawPost(path: string, body: string, headers: string[] = [], version = 'HTTP/1.1'): string {
  return [
    `POST ${path} ${version}`,
    'Host: 127.0.0.1',
    'Content-Type: application/json',
    ...headers,
    `Content-Length: ${Buffer.byteLength(body)}`,
    '',
    body,
  ].join('\r\n');
}

/** The head of a chunked POST (`headers`: extra raw lines); the chunks follow. */
export function rawChunkedHead(path: string, headers: string[] = []): string {
  return [`POST ${path} HTTP/1.1`, 'Host: 127.0.0.1', 'Content-Type: application/json', ...headers, 'Transfer-Encoding: chunked', '', ''].join('\r\n');
}

/** One chunk of a chunked body. */
export const chunk = (s: string): string => Buffer.byteLength(s).toString(16) + '\r\n' + s + '\r\n';
export const LAST_CHUNK = '0\r\n\r\n';

/** A JSON-RPC call's body (the framing tests' requests). */
export const rpcBody = (id: number, method = 'getHealth'): string => `{"jsonrpc":"2.0","id":${id},"method":"${method}"}`;
/** A simulated node's getHealth answer to `id`. */
export const healthAnswer = (id: number): string => `{"jsonrpc":"2.0","result":"ok","id":${id}}`;

/** A pause that is followed by a poll phase of the event loop, where a server in this process reads. */
export async function afterARead(): Promise<void> {
  await new Promise((r) => setTimeout(r, 30));
  await new Promise((r) => setImmediate(r));
}
