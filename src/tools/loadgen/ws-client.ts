// A minimal WebSocket client (RFC 6455) for holding thousands of subscribers in one process:
// a raw TCP/TLS socket, the upgrade written by hand, frames parsed in place. Every frame that
// arrives in one socket read gets the same arrival time, taken once when the read is handed
// over. No extensions (no permessage-deflate), text and binary messages, fragmented messages
// reassembled, pings answered, close echoed.

import { randomBytes } from 'node:crypto';
import { isIP, connect as tcpConnect, type Socket } from 'node:net';
import { connect as tlsConnect } from 'node:tls';

export class WsConnectError extends Error {
  constructor(
    /** "HTTP 429", "socket ECONNREFUSED", "timeout", "bad handshake". */
    readonly kind: string,
    message: string,
  ) {
    super(message);
  }
}

export interface WsHandlers {
  /** One complete text or binary message; `at` is the arrival time (performance.now()). */
  message(data: Buffer, at: number): void;
  close(code: number, reason: string): void;
}

const CRLF2 = Buffer.from('\r\n\r\n');

/** One masked client frame. */
function frame(opcode: number, payload: Buffer): Buffer {
  const len = payload.length;
  const ext = len < 126 ? 0 : len < 65536 ? 2 : 8;
  const out = Buffer.allocUnsafe(2 + ext + 4 + len);
  out[0] = 0x80 | opcode;
  if (ext === 0) out[1] = 0x80 | len;
  else if (ext === 2) {
    out[1] = 0x80 | 126;
    out.writeUInt16BE(len, 2);
  } else {
    out[1] = 0x80 | 127;
    out.writeUInt32BE(Math.floor(len / 2 ** 32), 2);
    out.writeUInt32BE(len >>> 0, 6);
  }
  const m = 2 + ext;
  randomBytes(4).copy(out, m);
  for (let i = 0; i < len; i++) out[m + 4 + i] = payload[i]! ^ out[m + (i & 3)]!;
  return out;
}

export class RawWebSocket {
  private buf: Buffer | null = null;
  private parts: Buffer[] | null = null;
  private closed = false;

  constructor(
    private readonly socket: Socket,
    private readonly h: WsHandlers,
    rest: Buffer,
  ) {
    socket.on('data', (chunk: Buffer) => this.onData(chunk, performance.now()));
    socket.on('close', () => this.onClosed(1006, ''));
    socket.on('error', () => undefined);
    if (rest.length > 0) this.onData(rest, performance.now());
  }

  send(text: string): void {
    if (!this.closed) this.socket.write(frame(0x1, Buffer.from(text)));
  }

  /** Sends a close frame and ends the socket. */
  close(code = 1000): void {
    if (this.closed) return;
    const p = Buffer.allocUnsafe(2);
    p.writeUInt16BE(code, 0);
    this.socket.end(frame(0x8, p));
    setTimeout(() => this.socket.destroy(), 1000).unref();
    this.onClosed(code, '');
  }

  destroy(): void {
    this.socket.destroy();
  }

  private onClosed(code: number, reason: string): void {
    if (this.closed) return;
    this.closed = true;
    this.h.close(code, reason);
  }

  private onData(chunk: Buffer, at: number): void {
    let b = this.buf === null ? chunk : Buffer.concat([this.buf, chunk]);
    this.buf = null;
    let i = 0;
    while (b.length - i >= 2) {
      const b0 = b[i]!;
      const b1 = b[i + 1]!;
      let len = b1 & 0x7f;
      let p = i + 2;
      if (len === 126) {
        if (b.length - p < 2) break;
        len = b.readUInt16BE(p);
        p += 2;
      } else if (len === 127) {
        if (b.length - p < 8) break;
        len = b.readUInt32BE(p) * 2 ** 32 + b.readUInt32BE(p + 4);
        p += 8;
      }
      const masked = (b1 & 0x80) !== 0;
      if (masked) p += 4;
      if (b.length - p < len) break;
      let payload = b.subarray(p, p + len);
      if (masked) {
        payload = Buffer.from(payload);
        for (let k = 0; k < len; k++) payload[k]! ^= b[p - 4 + (k & 3)]!;
      }
      i = p + len;
      this.onFrame(b0 & 0x80, b0 & 0x0f, payload, at);
      if (this.closed) return;
    }
    if (i < b.length) {
      // Keep the partial frame; copy so the socket's big read buffer is not retained.
      b = b.subarray(i);
      this.buf = Buffer.from(b);
    }
  }

  private onFrame(fin: number, op: number, payload: Buffer, at: number): void {
    switch (op) {
      case 0x0: // continuation
        if (this.parts === null) return;
        this.parts.push(Buffer.from(payload));
        if (fin) {
          const whole = Buffer.concat(this.parts);
          this.parts = null;
          this.h.message(whole, at);
        }
        return;
      case 0x1:
      case 0x2:
        if (fin) this.h.message(payload, at);
        else this.parts = [Buffer.from(payload)];
        return;
      case 0x8: {
        const code = payload.length >= 2 ? payload.readUInt16BE(0) : 1005;
        const reason = payload.length > 2 ? payload.toString('utf8', 2) : '';
        if (!this.socket.destroyed) this.socket.end(frame(0x8, payload.subarray(0, 2)));
        this.onClosed(code, reason);
        return;
      }
      case 0x9:
        this.socket.write(frame(0xa, payload));
        return;
      default:
        return; // pong or reserved
    }
  }
}

/**
 * Opens a WebSocket: resolves once the server answered 101, rejects with a WsConnectError.
 * `insecure`: wss:// without verifying the server's certificate.
 */
export function connectWs(url: URL, headers: [string, string][], h: WsHandlers, timeoutMs: number, insecure = false): Promise<RawWebSocket> {
  return new Promise((resolve, reject) => {
    const tls = url.protocol === 'wss:' || url.protocol === 'https:';
    const port = Number(url.port) || (tls ? 443 : 80);
    const host = url.hostname.replace(/^\[|\]$/g, '');
    // TLS server names are host names only (RFC 6066); an address is verified without one.
    const servername = isIP(host) === 0 ? host : undefined;
    const socket = tls ? tlsConnect({ host, port, servername, ALPNProtocols: ['http/1.1'], rejectUnauthorized: !insecure }) : tcpConnect({ host, port });
    socket.setNoDelay(true);
    let head: Buffer = Buffer.alloc(0);
    let done = false;
    const fail = (kind: string, msg: string): void => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      socket.destroy();
      reject(new WsConnectError(kind, msg));
    };
    const timer = setTimeout(() => fail('timeout', `no WebSocket upgrade within ${timeoutMs} ms`), timeoutMs);
    socket.once(tls ? 'secureConnect' : 'connect', () => {
      const lines = [
        `GET ${url.pathname}${url.search} HTTP/1.1`,
        `Host: ${url.host}`,
        'Upgrade: websocket',
        'Connection: Upgrade',
        `Sec-WebSocket-Key: ${randomBytes(16).toString('base64')}`,
        'Sec-WebSocket-Version: 13',
        ...headers.map(([k, v]) => `${k}: ${v}`),
      ];
      socket.write(lines.join('\r\n') + '\r\n\r\n');
    });
    socket.on('error', (e: Error & { code?: string }) => fail('socket ' + (e.code ?? e.name), e.message));
    socket.on('close', () => fail('socket closed', 'closed before the upgrade'));
    const onHead = (chunk: Buffer): void => {
      head = head.length === 0 ? chunk : Buffer.concat([head, chunk]);
      const end = head.indexOf(CRLF2);
      if (end < 0) {
        if (head.length > 16384) fail('bad handshake', 'upgrade answer headers over 16 KiB');
        return;
      }
      const status = /^HTTP\/1\.[01] (\d{3})/.exec(head.toString('latin1', 0, Math.min(end, 64)));
      if (status === null) return fail('bad handshake', 'not an HTTP answer');
      if (status[1] !== '101') return fail('HTTP ' + status[1], `upgrade refused: HTTP ${status[1]}`);
      done = true;
      clearTimeout(timer);
      socket.removeListener('data', onHead);
      socket.removeAllListeners('close');
      socket.removeAllListeners('error');
      resolve(new RawWebSocket(socket, h, head.subarray(end + 4)));
    };
    socket.on('data', onHead);
  });
}
