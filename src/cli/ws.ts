// `jumpgate ws URL [MESSAGE…]`: a minimal WebSocket client for trying the endpoint. Sends
// each message (default: slotSubscribe), prints every frame received, stops on Ctrl-C or
// after --count frames.

import { parseArgs } from 'node:util';
import { WebSocket } from 'undici';

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
    ws.addEventListener('open', () => {
      for (const m of messages) ws.send(m);
    });
    ws.addEventListener('message', (ev) => {
      out(String(ev.data));
      if (++seen >= count) ws.close();
    });
    ws.addEventListener('close', (ev) => {
      if (seen < count && ev.code !== 1000) out(`closed: ${ev.code} ${ev.reason}`);
      resolve(ev.code === 1000 || seen >= count ? 0 : 1);
    });
    ws.addEventListener('error', () => undefined);
    process.once('SIGINT', () => ws.close());
  });
}
