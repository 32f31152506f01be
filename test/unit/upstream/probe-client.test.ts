// The health probes' HTTP client: answers with status and body, keeps at most two connections
// to a node, times out with the timeout's own message, and close() lets in-flight probes finish.

import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import t from 'tap';
import { ProbeClient } from '../../../src/upstream/probe-client.js';

async function server(
  handle: (req: IncomingMessage, body: string, res: ServerResponse) => void,
): Promise<{ url: string; sockets: () => number; close(): Promise<void> }> {
  let sockets = 0;
  const srv = createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (c: string) => (body += c));
    req.on('end', () => handle(req, body, res));
  });
  srv.on('connection', () => sockets++);
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  const port = (srv.address() as { port: number }).port;
  return {
    url: `http://127.0.0.1:${port}`,
    sockets: () => sockets,
    close: () => {
      srv.closeAllConnections();
      return new Promise((r) => srv.close(() => r()));
    },
  };
}

t.test('POSTs the body to the path and returns status and text', async (t) => {
  const seen: string[] = [];
  const s = await server((req, body, res) => {
    seen.push(`${req.method} ${req.url} ${req.headers['content-type']} ${body}`);
    res.writeHead(req.url === '/rpc?x=1' ? 200 : 503).end('{"result":"ok"}');
  });
  t.teardown(() => s.close());
  const c = new ProbeClient(s.url);
  t.teardown(() => c.destroy());
  t.same(await c.post('/rpc?x=1', '{"id":1}', 1000), { status: 200, text: '{"result":"ok"}' });
  t.same(await c.post('/', '{}', 1000), { status: 503, text: '{"result":"ok"}' });
  t.same(seen, ['POST /rpc?x=1 application/json {"id":1}', 'POST / application/json {}']);
});

t.test('two connections at most, kept alive between probes', async (t) => {
  const s = await server((_req, _body, res) => setTimeout(() => res.end('1'), 20));
  t.teardown(() => s.close());
  const c = new ProbeClient(s.url);
  t.teardown(() => c.destroy());
  await Promise.all(Array.from({ length: 6 }, () => c.post('/', '{}', 2000)));
  await c.post('/', '{}', 2000);
  t.equal(s.sockets(), 2);
});

t.test('a probe that gets no answer fails after its timeout', async (t) => {
  const s = await server(() => undefined);
  t.teardown(() => s.close());
  const c = new ProbeClient(s.url);
  t.teardown(() => c.destroy());
  // Ordering against a timer fifty times longer on the same event loop: however loaded the
  // machine, the probe's 100 ms timeout must fire first.
  const later = new Promise<'later'>((resolve) => setTimeout(() => resolve('later'), 5000).unref());
  const first = await Promise.race([
    c.post('/', '{}', 100).then(
      () => 'answered',
      (e: Error) => e.name,
    ),
    later,
  ]);
  t.equal(first, 'TimeoutError', 'failed by its own timeout, before a timer 50 times longer');
});

t.test('a refused connection fails at once', async (t) => {
  const s = await server(() => undefined);
  const url = s.url;
  await s.close();
  const c = new ProbeClient(url);
  await t.rejects(c.post('/', '{}', 2000), { code: 'ECONNREFUSED' });
  await c.destroy();
});

t.test('close() waits for the probes in flight', async (t) => {
  const s = await server((_req, _body, res) => setTimeout(() => res.end('late'), 100));
  t.teardown(() => s.close());
  const c = new ProbeClient(s.url);
  const p = c.post('/', '{}', 2000);
  await new Promise((r) => setTimeout(r, 20));
  await c.close();
  t.same(await p, { status: 200, text: 'late' });
});
