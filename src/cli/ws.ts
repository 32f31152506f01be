// `jumpgate ws URL [MESSAGE…]`: a minimal WebSocket client for trying the endpoint. Sends
// each message (default: slotSubscribe), prints every frame received, stops on Ctrl-C or
// after --count frames. Built on `ws` rather than undici's WebSocket: a refused upgrade (a
// wrong token) is answered with an HTTP status and a JSON-RPC error body (docs/errors.md),
// which `ws` hands over and undici reduces to a bare close code 1006.

import { parseArgs } from 'node:util';
import { WebSocket } from 'ws';

const DEFAULT = '{"jsonrpc":"2.0","id":1,"method":"slotSubscribe"}';

export async function runWsCli(argv: string[], out: (line: string) => void = (l) => process.stdout.write(l + '\n')): Promise<number> {
  const { values, positionals } = parseArgs({ args: argv, allowPositionals: true, strict: true, options: { count: { type: 'string' } } });
  const url = positionals[0];
  if (url === undefined || !/^wss?:\/\//.test(url)) throw new Error('usage: jumpgate ws ws://HOST:PORT/api-token/TOKEN/ [MESSAGE…] [--count N]');
  const count = values.count === undefined ? Infinity : Number(values.count);
  const messages = positionals.length > 1 ? positionals.slice(1) : [DEFAULT];
  return new Promise((resolve) => {
    const ws = new WebSocket(url);
    let seen = 0;
    /** Already said why the socket ends: the close that follows adds nothing. */
    let explained = false;
    ws.on('open', () => {
      for (const m of messages) ws.send(m);
    });
    ws.on('message', (data) => {
      out(data.toString());
      if (++seen >= count) ws.close(1000);
    });
    ws.on('unexpected-response', (_req, res) => {
      explained = true;
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (body += chunk));
      res.on('end', () => {
        out(`refused: HTTP ${res.statusCode} ${res.statusMessage ?? ''}`.trimEnd());
        if (body !== '') out(body.trimEnd());
        ws.terminate();
      });
      res.on('error', () => ws.terminate());
    });
    ws.on('error', (err) => {
      if (explained) return;
      explained = true;
      out(`error: ${err.message}`);
    });
    ws.on('close', (code, reason) => {
      const done = code === 1000 || seen >= count;
      if (!done && !explained) out(`closed: ${code} ${reason.toString()}`.trimEnd());
      resolve(done ? 0 : 1);
    });
    // Ctrl-C is a clean end of an open socket (1000, exit 0).
    process.once('SIGINT', () => (ws.readyState === WebSocket.OPEN ? ws.close(1000) : ws.terminate()));
  });
}
