// The floor under a JavaScript proxy on uWS.js: a server that passes each POST body unchanged
// to a node through jumpgate's own upstream client (pipelined HTTP/1.1, one write per turn)
// and answers with the node's bytes unchanged. No validation, no ids, no routing, no usage:
// the socket work any proxy written this way pays, so jumpgate's CPU over it is what its
// JSON-RPC work costs (bench/README.md "Batches"). Run by http-scenarios.ts (S1, S4).
// With --work-us N it also spins N µs per request before passing it on: S4's "byte pump + N
// µs" rows, which show what each µs of CPU per batch costs in batches/s on the same machine.
//   node pump-server.js PORT [--work-us N] NODE_URL...

import { viewOf } from '../src/server/chunk.js';
import { serverEngine } from '../src/server/engine.js';
import type { BodyChunk, HttpRes as HttpResponse } from '../src/server/types.js';
import { Http1Pool } from '../src/upstream/http1/pool.js';
import type { AttemptSink } from '../src/upstream/transport.js';

const [portArg, ...rest] = process.argv.slice(2);
const workAt = rest.indexOf('--work-us');
const workMs = workAt < 0 ? 0 : Number(rest.splice(workAt, 2)[1]) / 1000;
const urls = rest;

/** Busy for `workMs`: CPU a proxy spends on a request, as JSON-RPC work would. */
function work(): void {
  if (workMs === 0) return;
  const until = performance.now() + workMs;
  while (performance.now() < until);
}
const latency = { ewmaMs: 1 };
const pools = urls.map((u) => new Http1Pool(u, { connections: 64, pipelining: 4, stallMs: 5, connectTimeoutMs: 2000, idleMs: 4000 }, latency));
let next = 0;

class Pumped implements AttemptSink {
  readonly exclusive = false;
  retryAfterMs = -1;
  readonly startedAt = 0;
  /** The bench's answers are small: anything over this fails as too large. */
  readonly maxBuffered = 32 * 1024 * 1024;
  clientRef: unknown = null;
  written = false;
  done = false;
  aborted = false;
  constructor(
    readonly res: HttpResponse,
    readonly body: Buffer,
  ) {}

  answered(_status: number, body: Buffer): void {
    this.done = true;
    if (this.aborted) return;
    toWrite.res = this.res;
    toWrite.body = body;
    this.res.cork(writeAnswer);
  }

  overLimit(): null {
    return null;
  }

  failed(_kind: number, reason: string): void {
    this.done = true;
    if (this.aborted) return;
    toWrite.res = this.res;
    toWrite.body = Buffer.from(JSON.stringify({ jsonrpc: '2.0', error: { code: -32000, message: reason }, id: null }));
    this.res.cork(writeAnswer);
  }
}

const toWrite: { res: HttpResponse | null; body: Buffer } = { res: null, body: Buffer.alloc(0) };
function writeAnswer(): void {
  const res = toWrite.res!;
  res.writeStatus('200 OK');
  res.writeHeader('content-type', 'application/json');
  res.end(toWrite.body);
}

class Intake {
  body: Buffer;
  received = 0;
  pumped: Pumped | null = null;
  constructor(
    readonly res: HttpResponse,
    length: number,
  ) {
    this.body = Buffer.allocUnsafe(length);
  }

  onChunk(chunk: BodyChunk, last: boolean): void {
    this.body.set(viewOf(chunk), this.received);
    this.received += chunk.byteLength;
    if (!last) return;
    work();
    this.pumped = new Pumped(this.res, this.body.subarray(0, this.received));
    pools[next++ % pools.length]!.send(this.pumped);
  }

  onAborted(): void {
    if (this.pumped !== null) this.pumped.aborted = true;
  }
}

// The runtime's server engine (uWS where a binary loads), as the gateway's.
const engine = serverEngine('auto');
const app = engine.app(null).post('/*', (res, req) => {
  const intake = new Intake(res, Number(req.getHeader('content-length')) || 0);
  res.onAborted(() => intake.onAborted());
  res.onData((chunk, last) => intake.onChunk(chunk, last));
});
if ((await engine.listen(app, '127.0.0.1', Number(portArg), true)) === null) {
  console.error(`pump server: cannot listen on ${portArg}`);
  process.exit(1);
}
console.log(`pump server listening (${engine.name})`);
