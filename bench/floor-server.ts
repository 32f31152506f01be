// The floor under jumpgate's front half: a uWebSockets.js server that answers every POST
// with a fixed JSON body and does nothing else. `bare` makes only the calls any uWS.js
// handler needs to read a body and answer (onAborted, onData, cork, writeStatus, writeHeader,
// end); `reads` adds the request reads the gateway makes on every request (method, url and
// its seven header reads, with the gateway's own header keys). With a thread count above 1,
// that many threads each run the app on the same port (SO_REUSEPORT, as jumpgate's data-plane
// workers share theirs): the floor under S7's two workers. Run by floor.ts.
//   node floor-server.js PORT bare|reads [THREADS]

import { isMainThread, parentPort, Worker } from 'node:worker_threads';
import * as uWS from 'uWebSockets.js';
import type { HttpRequest, HttpResponse } from 'uWebSockets.js';
import { H_CONTENT_LENGTH, H_CONTENT_TYPE, headerKeys, headerNames } from '../src/gateway/headers.js';

const [portArg, mode, threadsArg] = process.argv.slice(2);
const threads = isMainThread ? Number(threadsArg ?? '1') : 1;
const BODY = Buffer.from('{"jsonrpc":"2.0","result":123456789,"id":1}');
const keys = headerKeys(headerNames('Service'));
const READS = [keys.token, keys.apiKey, keys.affinity, keys.affinityKey, keys.affinityKeyBare, H_CONTENT_TYPE, H_CONTENT_LENGTH];
let sink = 0;

function reads(req: HttpRequest): void {
  sink += req.getMethod().length + req.getUrl().length;
  for (let i = 0; i < READS.length; i++) sink += req.getHeader(READS[i]!).length;
}

function serve(res: HttpResponse, req: HttpRequest): void {
  if (mode === 'reads') reads(req);
  let aborted = false;
  res.onAborted(() => {
    aborted = true;
  });
  res.onData((_chunk, last) => {
    if (!last || aborted) return;
    res.cork(() => {
      res.writeStatus('200 OK');
      res.writeHeader('content-type', 'application/json');
      res.end(BODY);
    });
  });
}

function listen(): void {
  uWS
    .App()
    .any('/*', serve)
    .listen('127.0.0.1', Number(portArg), (socket) => {
      if (!socket) {
        console.error(`floor server: cannot listen on ${portArg}`);
        process.exit(1);
      }
      if (parentPort !== null) parentPort.postMessage('listening');
      else console.log(`floor server (${mode}) listening; ${sink}`);
    });
}

if (threads > 1) {
  // Listening is said once every thread listens: connections made before would all go to one.
  let up = 0;
  for (let i = 0; i < threads; i++) {
    const w = new Worker(new URL(import.meta.url), { argv: [portArg!, mode!, '1'] });
    w.on('message', () => {
      if (++up === threads) console.log(`floor server (${mode}, ${threads} threads) listening`);
    });
    w.on('error', (err) => {
      console.error(`floor server thread: ${err.message}`);
      process.exit(1);
    });
    // A thread that could not listen ends itself only: end the server, or its caller waits forever.
    w.on('exit', (code) => {
      if (code !== 0) process.exit(code);
    });
  }
} else listen();
