// A TCP pass-through in front of an upstream that can be stopped (refusing and resetting
// connections, like a dead node) and started again on the same port. uWS listeners cannot
// re-bind a port with connections in TIME_WAIT; node's net server can.

import { createServer, connect, type Server, type Socket } from 'node:net';

export interface TcpProxy {
  readonly port: number;
  readonly url: string;
  stop(): Promise<void>;
  start(): Promise<void>;
  close(): Promise<void>;
}

export async function startTcpProxy(targetPort: number): Promise<TcpProxy> {
  const sockets = new Set<Socket>();
  let server: Server | null = null;
  let port = 0;
  const listen = (): Promise<void> =>
    new Promise((resolve, reject) => {
      const s = createServer((client) => {
        const upstream = connect(targetPort, '127.0.0.1');
        sockets.add(client).add(upstream);
        const drop = (): void => {
          client.destroy();
          upstream.destroy();
          sockets.delete(client);
          sockets.delete(upstream);
        };
        client.on('error', drop).on('close', drop);
        upstream.on('error', drop).on('close', drop);
        client.pipe(upstream).pipe(client);
      });
      s.once('error', reject);
      s.listen(port, '127.0.0.1', () => {
        port = (s.address() as { port: number }).port;
        server = s;
        resolve();
      });
    });
  const stop = (): Promise<void> =>
    new Promise((resolve) => {
      for (const s of sockets) s.resetAndDestroy();
      sockets.clear();
      if (server === null) return resolve();
      server.close(() => resolve());
      server = null;
    });
  await listen();
  return {
    get port() {
      return port;
    },
    get url() {
      return `http://127.0.0.1:${port}`;
    },
    stop,
    start: listen,
    close: stop,
  };
}
