// The health probes' HTTP client: answers with status and body, keeps at most two connections
// to a node, times out with the timeout's own message, and close() lets in-flight probes finish;
// basic auth from the URL, chunked and close-delimited framing, late and malformed answers.

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

t.test("credentials in the node's URL go as basic auth, with the probe's user agent", async (t) => {
  const seen: (string | undefined)[] = [];
  const s = await server((req, _body, res) => {
    seen.push(req.headers.authorization, req.headers['user-agent']);
    res.end('1');
  });
  t.teardown(() => s.close());
  const c = new ProbeClient(s.url.replace('http://', 'http://user:p%40ss@') + '/rpc');
  t.teardown(() => c.destroy());
  await c.post('/rpc', '{}', 1000);
  t.same(seen, [`Basic ${Buffer.from('user:p@ss').toString('base64')}`, 'jumpgate-health']);
});

t.test('chunked answers, a node that closes after an answer, and a late answer after a timeout', async (t) => {
  let n = 0;
  const s = await server((_req, body, res) => {
    n++;
    if (body === '"slow"') return void setTimeout(() => res.end('late'), 150);
    if (body === '"close"') return void res.writeHead(200, { connection: 'close' }).end('closing');
    res.write('{"a":');
    setTimeout(() => res.end(`${n}}`), 5);
  });
  t.teardown(() => s.close());
  const c = new ProbeClient(s.url);
  t.teardown(() => c.destroy());
  t.same(await c.post('/', '{}', 1000), { status: 200, text: '{"a":1}' }, 'chunked body joined');
  t.same(await c.post('/', '"close"', 1000), { status: 200, text: 'closing' });
  t.same(await c.post('/', '{}', 1000), { status: 200, text: '{"a":3}' }, 'a new connection after the node closed');
  await t.rejects(c.post('/', '"slow"', 50), { name: 'TimeoutError' });
  // The timed-out probe's answer comes later on its connection; the next probe must not take it.
  const next = await c.post('/', '{}', 1000);
  t.same(next, { status: 200, text: '{"a":5}' }, 'the next probe gets its own answer, not the late one');
});

t.test('a malformed answer fails the probe; the next one goes on a new connection', async (t) => {
  const { createServer: rawServer } = await import('node:net');
  let conns = 0;
  const srv = rawServer((sock) => {
    const first = conns++ === 0;
    sock.on('data', () => sock.write(first ? 'garbage\r\n\r\n' : 'HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok'));
  });
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  t.teardown(() => new Promise<void>((r) => srv.close(() => r())));
  const c = new ProbeClient(`http://127.0.0.1:${(srv.address() as { port: number }).port}`);
  t.teardown(() => c.destroy());
  await t.rejects(c.post('/', '{}', 1000), /not an HTTP/);
  t.same(await c.post('/', '{}', 1000), { status: 200, text: 'ok' });
  t.equal(conns, 2);
});
