// A node that answers `getProgramAccounts` with as many bytes as the call asks for, made as they
// are written (its own memory stays small): params [size, "length" | "chunked"]. Run as a child
// process (`node big-answer-node.js`), so a test measuring the gateway's memory does not count
// the node's. Prints its port on stdout; health probes are answered as a healthy node at the tip.

import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { trueSlot } from '../../src/tools/sim/chain.js';
import { bigAnswerHead, fillerByte } from './big-answer.js';

const PIECE = 64 * 1024;

function filler(from: number, n: number): Buffer {
  const b = Buffer.allocUnsafe(n);
  for (let k = 0; k < n; k++) b[k] = fillerByte(from + k);
  return b;
}

type Call = { id?: unknown; method: string; params?: [number, string] };

/** Writes `b`, waiting while the client is behind. */
async function put(res: ServerResponse, b: Buffer | string): Promise<void> {
  if (!res.write(b)) await new Promise((r) => res.once('drain', r));
}

function smallAnswer(call: Call): string {
  const id = JSON.stringify(call.id ?? null);
  const result = call.method === 'getHealth' ? '"ok"' : call.method === 'getSlot' ? String(trueSlot(400)) : 'null';
  return `{"jsonrpc":"2.0","result":${result},"id":${id}}`;
}

/** A getProgramAccounts answer of exactly `size` bytes, made as it is written. */
async function bigAnswer(res: ServerResponse, call: Call): Promise<void> {
  const size = call.params![0];
  const head = Buffer.from(bigAnswerHead(JSON.stringify(call.id ?? null)));
  const fill = size - head.length - 2;
  await put(res, head);
  for (let at = 0; at < fill; at += PIECE) await put(res, filler(at, Math.min(PIECE, fill - at)));
  await put(res, '"}');
}

const isBig = (c: Call): boolean => c.method === 'getProgramAccounts' && c.params !== undefined;

async function answer(res: ServerResponse, body: Call | Call[]): Promise<void> {
  const calls = Array.isArray(body) ? body : [body];
  const chunked = calls.some((c) => isBig(c) && c.params![1] === 'chunked');
  // A single call's length is known before it is written; a batch's is left to chunking.
  const length = !Array.isArray(body) && isBig(body) && !chunked ? body.params![0] : -1;
  const small = !calls.some(isBig);
  if (small) {
    const text = Array.isArray(body) ? `[${calls.map(smallAnswer).join(',')}]` : smallAnswer(body);
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(text)) }).end(text);
    return;
  }
  res.writeHead(200, length < 0 ? { 'content-type': 'application/json' } : { 'content-type': 'application/json', 'content-length': String(length) });
  if (Array.isArray(body)) await put(res, '[');
  for (let i = 0; i < calls.length; i++) {
    if (i > 0) await put(res, ',');
    if (isBig(calls[i]!)) await bigAnswer(res, calls[i]!);
    else await put(res, smallAnswer(calls[i]!));
  }
  res.end(Array.isArray(body) ? ']' : '');
}

const server = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    if (req.method !== 'POST') return void res.writeHead(405).end();
    // A client that left mid-answer: the writes fail and are dropped.
    answer(res, JSON.parse(Buffer.concat(chunks).toString()) as Call | Call[]).catch(() => res.destroy());
  });
});
server.keepAliveTimeout = 10_000;
server.listen(0, '127.0.0.1', () => console.log(String((server.address() as AddressInfo).port)));
process.on('SIGTERM', () => process.exit(0));
