// The floor under any Node gRPC fan-out (docs/grpc.md "Measured"): a bare node:http2 server
// (no gRPC, no gateway) writing one message to each of N client streams, one stream per
// connection as the grpc scenario's subscribers have, in passes like the gateway's. Reports the
// server's CPU per write and how long one pass over the N streams takes. The N clients run in
// another process (niced, as the grpc scenario's are) and only read.
//   node http2-floor.js server N PASSES BYTES   (started by runHttp2Floor)
//   node http2-floor.js client PORT N

import { fork } from 'node:child_process';
import http2 from 'node:http2';
import os from 'node:os';
import { median } from './stats.js';

export interface Http2FloorResult {
  streams: number;
  passes: number;
  bytes: number;
  /** Server CPU (user + system) per stream write, µs. */
  cpuUsPerWrite: number;
  /** Wall time of one pass over every stream (the writes and their hand-over to the sockets), ms, median. */
  passMs: number;
}

const ENTRY = new URL(import.meta.url).pathname;
const PASS_GAP_MS = 20;

function server(n: number, passes: number, bytes: number): void {
  const streams: http2.ServerHttp2Stream[] = [];
  const srv = http2.createServer();
  const message = Buffer.alloc(bytes, 1);
  const passMs: number[] = [];
  const run = (): void => {
    const c0 = process.cpuUsage();
    let pass = 0;
    const step = (): void => {
      const t0 = performance.now();
      for (const s of streams) s.write(message);
      // The writes reach the sockets on the next turn: the pass ends when that turn ran.
      setImmediate(() => {
        passMs.push(performance.now() - t0);
        if (++pass < passes) setTimeout(step, PASS_GAP_MS);
        else {
          const c = process.cpuUsage(c0);
          process.send!({ cpuUsPerWrite: (c.user + c.system) / (n * passes), passMs: median(passMs) });
        }
      });
    };
    step();
  };
  srv.on('stream', (s) => {
    s.respond({ ':status': 200 });
    streams.push(s);
    if (streams.length === n) setTimeout(run, 200);
  });
  srv.listen(0, '127.0.0.1', () => process.send!({ port: (srv.address() as { port: number }).port }));
}

function client(port: number, n: number): void {
  for (let i = 0; i < n; i++) {
    const session = http2.connect(`http://127.0.0.1:${port}`);
    session.on('error', () => {});
    const req = session.request({ ':path': '/' });
    req.on('error', () => {});
    // Read and dropped: the open sessions keep the process up until it is killed.
    req.resume();
    req.end();
  }
}

/** Runs the server and its clients in two processes; the server's CPU covers only the passes. */
export async function runHttp2Floor(o: { streams: number; passes: number; bytes: number }): Promise<Http2FloorResult> {
  const srv = fork(ENTRY, ['server', String(o.streams), String(o.passes), String(o.bytes)], { execArgv: [] });
  const clients: ReturnType<typeof fork>[] = [];
  try {
    const result = await new Promise<{ cpuUsPerWrite: number; passMs: number }>((resolve, reject) => {
      srv.on('exit', (code) => reject(new Error(`http2 floor server exited with ${code}`)));
      srv.on('message', (m: { port?: number; cpuUsPerWrite?: number; passMs?: number }) => {
        if (m.port !== undefined) {
          const cli = fork(ENTRY, ['client', String(m.port), String(o.streams)], { execArgv: [] });
          clients.push(cli);
          if (cli.pid !== undefined) os.setPriority(cli.pid, 10);
        } else resolve(m as { cpuUsPerWrite: number; passMs: number });
      });
    });
    return { ...o, ...result };
  } finally {
    srv.removeAllListeners('exit');
    srv.kill();
    for (const c of clients) c.kill();
  }
}

const [role, a, b, c] = process.argv.slice(2);
if (role === 'server' && process.send !== undefined) server(Number(a), Number(b), Number(c));
else if (role === 'client') client(Number(a), Number(b));
