// A scripted raw-TCP upstream for failure tests: a node:net server on 127.0.0.1 that parses
// just enough HTTP/1.1 (headers + Content-Length body, keep-alive) to misbehave on purpose.
// The behaviour is chosen per server and can be changed at runtime with `set()`.

import { spawn } from 'node:child_process';
import { createServer, Socket, type Server } from 'node:net';
import { trueSlot } from '../../src/tools/sim/chain.js';

export type RawBehaviour =
  /** Nothing listens on the port: connections are refused. */
  | 'refuse'
  /** Status line, headers (Content-Length larger than sent) and a few body bytes, then a TCP RST. */
  | 'reset'
  /** The request is read and never answered. */
  | 'stall'
  /** HTTP 500 with a small text body (connection kept alive). */
  | 'http500'
  /** Bytes that are not HTTP at all, then the connection is closed. */
  | 'garbage'
  /** A valid 200 JSON-RPC answer: headers at once, then the body one byte every `dripMs`. */
  | 'drip'
  /** A valid 200 JSON-RPC answer. */
  | 'ok';

export interface RawSetOptions {
  /**
   * Misbehave only for requests that carry one of these methods (any element of a batch);
   * other requests are answered as `ok`. Lets a node pass health probes (getHealth, getSlot)
   * while failing live traffic.
   */
  methods?: string[];
}

export interface RawUpstreamOptions extends RawSetOptions {
  /** Delay between body bytes in `drip` mode (default 50 ms). */
  dripMs?: number;
  /** What `ok` answers to getSlot (default: the simulated chain's current slot, so the node is not lagging). */
  slot?: () => number;
  /** What `ok` answers to getIdentity's `identity` (default "raw"). */
  identity?: string;
}

export interface RawStats {
  /** TCP connections accepted. */
  connections: number;
  /** Complete HTTP requests received (whatever the behaviour did with them). */
  requests: number;
  /** JSON-RPC calls received per method (batch elements counted one by one). */
  byMethod: Record<string, number>;
}

export interface RawUpstream {
  readonly url: string;
  readonly port: number;
  readonly behaviour: RawBehaviour;
  /** Switches behaviour; resolves once the change is in effect (for `refuse`: port closed, open connections ended). */
  set(b: RawBehaviour, opts?: RawSetOptions): Promise<void>;
  readonly stats: RawStats;
  /** Calls of `method` received so far. */
  calls(method: string): number;
  close(): Promise<void>;
}

const HEADER_END = Buffer.from('\r\n\r\n');
const GARBAGE = Buffer.from('\x00\xffNOT HTTP\r\n\r\n', 'latin1');
const BODY_500 = 'Internal Server Error';

const delay = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

interface ParsedBody {
  methods: string[];
  /** Parsed JSON body, or undefined when it is not JSON. */
  json: unknown;
}

function parseBody(body: Buffer): ParsedBody {
  let json: unknown;
  try {
    json = JSON.parse(body.toString('utf8'));
  } catch {
    return { methods: [], json: undefined };
  }
  const calls = Array.isArray(json) ? json : [json];
  const methods: string[] = [];
  for (const c of calls) {
    const m = c !== null && typeof c === 'object' ? (c as { method?: unknown }).method : undefined;
    if (typeof m === 'string') methods.push(m);
  }
  return { methods, json };
}

function okResponse(body: string): Buffer {
  return Buffer.from(`HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`);
}

class Raw implements RawUpstream {
  port = 0;
  url = '';
  behaviour: RawBehaviour;
  readonly stats: RawStats = { connections: 0, requests: 0, byMethod: {} };
  private server: Server | null = null;
  private readonly sockets = new Set<Socket>();
  private readonly timers = new Set<NodeJS.Timeout>();
  private methods: Set<string> | null;
  private counter = 0;
  private closed = false;
  private readonly dripMs: number;
  private readonly slot: () => number;
  private readonly identity: string;

  constructor(behaviour: RawBehaviour, opts: RawUpstreamOptions) {
    this.behaviour = behaviour;
    this.methods = opts.methods ? new Set(opts.methods) : null;
    this.dripMs = opts.dripMs ?? 50;
    this.slot = opts.slot ?? (() => trueSlot(400));
    this.identity = opts.identity ?? 'raw';
  }

  calls(method: string): number {
    return this.stats.byMethod[method] ?? 0;
  }

  /** Listens on `port` (0: any free port). */
  private listen(port: number): Promise<void> {
    const server = createServer((s) => this.onConnection(s));
    this.server = server;
    return new Promise((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, '127.0.0.1', () => {
        server.off('error', reject);
        const addr = server.address();
        if (addr === null || typeof addr === 'string') return reject(new Error('no address'));
        this.port = addr.port;
        this.url = `http://127.0.0.1:${addr.port}`;
        resolve();
      });
    });
  }

  private async stopListening(): Promise<void> {
    const server = this.server;
    this.server = null;
    for (const s of this.sockets) s.destroy();
    this.sockets.clear();
    for (const t of this.timers) clearTimeout(t);
    this.timers.clear();
    if (server !== null) await new Promise<void>((r) => server.close(() => r()));
  }

  async start(): Promise<this> {
    await this.listen(0);
    // `refuse` from the start: a port that was just free, with nothing listening.
    if (this.behaviour === 'refuse') await this.stopListening();
    return this;
  }

  async set(b: RawBehaviour, opts: RawSetOptions = {}): Promise<void> {
    if (this.closed) throw new Error('raw upstream closed');
    const was = this.behaviour;
    this.behaviour = b;
    this.methods = opts.methods ? new Set(opts.methods) : null;
    if (b === 'refuse' && was !== 'refuse') {
      await this.stopListening();
      // Let clients in this process see their keep-alive connections end before the next request.
      await delay(30);
    } else if (b !== 'refuse' && was === 'refuse') {
      await this.listen(this.port);
    }
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.stopListening();
  }

  private later(ms: number, fn: () => void): void {
    const t = setTimeout(() => {
      this.timers.delete(t);
      fn();
    }, ms);
    this.timers.add(t);
  }

  private onConnection(socket: Socket): void {
    this.stats.connections++;
    this.sockets.add(socket);
    socket.on('close', () => this.sockets.delete(socket));
    socket.on('error', () => {});
    let buf: Buffer = Buffer.alloc(0);
    socket.on('data', (chunk: Buffer) => {
      buf = buf.length === 0 ? chunk : Buffer.concat([buf, chunk]);
      for (;;) {
        const end = buf.indexOf(HEADER_END);
        if (end < 0) return;
        const head = buf.toString('latin1', 0, end);
        const m = /\r\ncontent-length:\s*(\d+)/i.exec(head);
        const len = m ? Number(m[1]) : 0;
        const total = end + 4 + len;
        if (buf.length < total) return;
        const body = buf.subarray(end + 4, total);
        buf = buf.subarray(total);
        this.onRequest(socket, body);
      }
    });
  }

  private onRequest(socket: Socket, body: Buffer): void {
    this.stats.requests++;
    const parsed = parseBody(body);
    for (const m of parsed.methods) this.stats.byMethod[m] = (this.stats.byMethod[m] ?? 0) + 1;
    let b = this.behaviour;
    if (this.methods !== null && !parsed.methods.some((m) => this.methods!.has(m))) b = 'ok';
    switch (b) {
      case 'ok':
      case 'refuse': // a request that raced the switch to refuse
        socket.write(okResponse(this.answer(parsed.json)));
        return;
      case 'stall':
        return;
      case 'http500':
        socket.write(`HTTP/1.1 500 Internal Server Error\r\nContent-Type: text/plain\r\nContent-Length: ${BODY_500.length}\r\n\r\n${BODY_500}`);
        return;
      case 'garbage':
        socket.end(GARBAGE);
        return;
      case 'reset': {
        const partial = '{"jsonrpc":"2.0","result":';
        socket.write(`HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 200\r\n\r\n${partial}`);
        // Give the bytes time to reach the client before the RST, so it is truly mid-response.
        this.later(20, () => {
          if (!socket.destroyed) socket.resetAndDestroy();
        });
        return;
      }
      case 'drip': {
        const text = Buffer.from(this.answer(parsed.json));
        socket.write(`HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: ${text.length}\r\n\r\n`);
        let i = 0;
        const next = (): void => {
          if (socket.destroyed || i >= text.length) return;
          socket.write(text.subarray(i, i + 1));
          i++;
          this.later(this.dripMs, next);
        };
        this.later(this.dripMs, next);
        return;
      }
    }
  }

  private result(method: unknown): string {
    if (method === 'getHealth') return '"ok"';
    if (method === 'getSlot') return String(this.slot());
    if (method === 'getIdentity') return JSON.stringify({ identity: this.identity });
    return String(++this.counter);
  }

  private one(call: unknown): string | null {
    if (call === null || typeof call !== 'object') return null;
    const c = call as { id?: unknown; method?: unknown };
    if (!('id' in c)) return null; // notification
    return `{"jsonrpc":"2.0","result":${this.result(c.method)},"id":${JSON.stringify(c.id)}}`;
  }

  /** The `ok` body: one answer, or an array with one answer per (non-notification) element. */
  private answer(json: unknown): string {
    if (Array.isArray(json))
      return (
        '[' +
        json
          .map((c) => this.one(c))
          .filter((s) => s !== null)
          .join(',') +
        ']'
      );
    return this.one(json) ?? `{"jsonrpc":"2.0","error":{"code":-32600,"message":"Invalid Request"},"id":null}`;
  }
}

/** Starts a scripted upstream on 127.0.0.1 (port chosen by the OS). */
export function startRawUpstream(behaviour: RawBehaviour = 'ok', opts: RawUpstreamOptions = {}): Promise<RawUpstream> {
  return new Raw(behaviour, opts).start();
}

export interface Blackhole {
  readonly url: string;
  readonly port: number;
  close(): Promise<void>;
}

// A child process listens with a tiny backlog and then blocks its event loop forever, so it
// never accepts; the kernel completes handshakes only until the accept queue is full.
const BLACKHOLE_CHILD = `const s=require('net').createServer();s.listen({port:0,host:'127.0.0.1',backlog:1},()=>{process.stdout.write(s.address().port+'\\n');Atomics.wait(new Int32Array(new SharedArrayBuffer(4)),0,0);});`;

/**
 * An address where TCP connects hang (SYNs are dropped), like a dead host whose packets are
 * black-holed: a request to it never gets past connecting. Needs no network: a blocked child
 * process's full accept queue on 127.0.0.1.
 */
export async function startBlackhole(): Promise<Blackhole> {
  const child = spawn(process.execPath, ['-e', BLACKHOLE_CHILD], { stdio: ['ignore', 'pipe', 'ignore'] });
  const port = await new Promise<number>((resolve, reject) => {
    child.once('error', reject);
    child.once('exit', (code) => reject(new Error('blackhole child exited with ' + code)));
    child.stdout!.once('data', (d: Buffer) => resolve(Number(String(d).trim())));
  });
  child.removeAllListeners('exit');
  // Fill the accept queue until a connect hangs.
  const fillers: Socket[] = [];
  for (let i = 0; i < 16; i++) {
    const s = new Socket();
    s.on('error', () => {});
    fillers.push(s);
    const connected = await new Promise<boolean>((resolve) => {
      const timer = setTimeout(() => resolve(false), 150);
      s.connect(port, '127.0.0.1', () => {
        clearTimeout(timer);
        resolve(true);
      });
    });
    if (!connected) break;
  }
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    async close() {
      for (const s of fillers) s.destroy();
      if (child.exitCode === null && child.signalCode === null) {
        const exited = new Promise<void>((r) => child.once('exit', () => r()));
        child.kill('SIGKILL');
        await exited;
      }
    },
  };
}
