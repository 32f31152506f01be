// A JSON-RPC node whose answers a test scripts per method: node:http on 127.0.0.1 (keep-alive,
// pipelined requests answered in order), health probes answered as a healthy Solana node.
// Records every call it gets, so a test can count what reached it.

import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { trueSlot } from '../../src/tools/sim/chain.js';

export interface Scripted {
  /** Answer body, or null for the default `"result":"<node id>"` answer. */
  body?: string | null;
  status?: number;
  /** Answer this much later. */
  delayMs?: number;
}

/** What a node answers a call: method, the id's JSON text, the call's position among this node's calls. */
export type Script = (method: string, id: string, n: number) => Scripted;

export interface ScriptNode {
  readonly id: string;
  readonly url: string;
  /** Calls of each method received, in order (probes excluded). */
  readonly calls: { method: string; at: number; body: string }[];
  count(method: string): number;
  /** TCP connections that carried calls (the gateway's traffic; probes have their own). */
  readonly connections: number;
  script: Script;
  close(): Promise<void>;
}

const OK: Script = () => ({});

export async function startScriptNode(id: string, script: Script = OK): Promise<ScriptNode> {
  const calls: ScriptNode['calls'] = [];
  const node: { script: Script } = { script };
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      // An HTTP-only node: WebSocket upgrades (the gateway's slot stream) are refused.
      if (req.method !== 'POST') return void res.writeHead(405).end();
      const text = Buffer.concat(chunks).toString();
      const parsed = JSON.parse(text) as { id?: unknown; method: string };
      const idText = JSON.stringify(parsed.id ?? null);
      const send = (status: number, body: string): void => {
        res.writeHead(status, { 'content-type': 'application/json' }).end(body);
      };
      if (parsed.method === 'getHealth') return send(200, `{"jsonrpc":"2.0","result":"ok","id":${idText}}`);
      // The gateway's own probes and chain watch (not client traffic): a node at the tip.
      if (req.headers['user-agent'] === 'jumpgate-health') {
        const result = parsed.method === 'getSlot' ? String(trueSlot(400)) : 'null';
        return send(200, `{"jsonrpc":"2.0","result":${result},"id":${idText}}`);
      }
      calls.push({ method: parsed.method, at: performance.now(), body: text });
      if (!sockets.has(req.socket)) {
        sockets.add(req.socket);
        connections++;
      }
      const s = node.script(parsed.method, idText, calls.filter((c) => c.method === parsed.method).length);
      const body = s.body ?? `{"jsonrpc":"2.0","result":"${id}","id":${idText}}`;
      if ((s.delayMs ?? 0) > 0) setTimeout(() => send(s.status ?? 200, body), s.delayMs);
      else send(s.status ?? 200, body);
    });
  });
  server.keepAliveTimeout = 10_000;
  const sockets = new WeakSet<object>();
  let connections = 0;
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as AddressInfo).port;
  return {
    id,
    url: `http://127.0.0.1:${port}`,
    calls,
    count: (m) => calls.filter((c) => c.method === m).length,
    get connections() {
      return connections;
    },
    get script() {
      return node.script;
    },
    set script(s: Script) {
      node.script = s;
    },
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}
