// A port of 127.0.0.1 that nothing listens on right now: the OS picks it (listen on 0) and it
// is freed again for the caller, who binds it next (a process started with it on its command
// line, say). Another process may take it in between; the window is short.

import { createServer } from 'node:net';

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.on('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}
