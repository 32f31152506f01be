// The pipelined HTTP/1.1 upstream client against a scripted in-order HTTP server: framing
// (content-length, chunked, close-delimited, no-body statuses, reads split anywhere),
// coalesced writes, pipelining limits, exclusive requests, failures and abandoning.

import { createServer, type Server, type Socket } from 'node:net';
import t from 'tap';
import { Http1Pool, type Http1Options, type PipeliningDropped } from '../../../../src/upstream/http1/pool.js';
import { F_CONNECT, F_NONE, F_OTHER, F_PIPELINE_DROPPED, type AttemptSink } from '../../../../src/upstream/transport.js';
import { eventually } from '../../../helpers/eventually.js';

type Test = Parameters<Parameters<typeof t.test>[0]>[0];
type Reply = (body: string, socket: Socket) => string | null;

interface Scripted {
  url: string;
  /** Every request body, in arrival order. */
  bodies: string[];
  /** Number of 'data' events that carried at least one whole request. */
  reads: number;
  connections: number;
  reply: Reply;
  close(): Promise<void>;
}

/** Answers each request with `reply(body)` (raw response bytes; null = never answer), in order. */
async function scripted(reply: Reply): Promise<Scripted> {
  const sockets = new Set<Socket>();
  const s: Scripted = {
    url: '',
    bodies: [],
    reads: 0,
    connections: 0,
    reply,
    close: () => {
      for (const so of sockets) so.destroy();
      return new Promise((r) => server.close(() => r()));
    },
  };
  const server: Server = createServer((socket) => {
    s.connections++;
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => {});
    let buf = Buffer.alloc(0);
    socket.on('data', (d: Buffer) => {
      buf = Buffer.concat([buf, d]);
      let any = false;
      for (;;) {
        const end = buf.indexOf('\r\n\r\n');
        if (end < 0) break;
        const head = buf.toString('latin1', 0, end);
        const len = Number(/content-length: (\d+)/i.exec(head)?.[1] ?? 0);
        if (buf.length < end + 4 + len) break;
        const body = buf.toString('utf8', end + 4, end + 4 + len);
        buf = buf.subarray(end + 4 + len);
        any = true;
        s.bodies.push(body);
        const out = s.reply(body, socket);
        if (out !== null && !socket.destroyed) socket.write(out);
      }
      if (any) s.reads++;
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const addr = server.address() as { port: number };
  s.url = `http://127.0.0.1:${addr.port}/rpc?x=1`;
  return s;
}

const ok = (body: string): string => `HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;
const echo: Reply = (body) => ok(`{"echo":${body}}`);

interface Outcome {
  kind: number;
  status: number;
  body: string;
  reason: string;
}

class Sink implements AttemptSink {
  written = false;
  retryAfterMs = -1;
  clientRef: unknown = null;
  done = false;
  readonly body: Buffer;
  readonly startedAt = performance.now();
  readonly maxBuffered = 32 * 1024 * 1024;
  outcome: Outcome | null = null;
  readonly settled: Promise<Outcome>;
  private resolve!: (o: Outcome) => void;

  constructor(
    body: string,
    readonly exclusive = false,
  ) {
    this.body = Buffer.from(body);
    this.settled = new Promise((r) => (this.resolve = r));
  }

  answered(status: number, body: Buffer): void {
    this.end({ kind: F_NONE, status, body: body.toString(), reason: '' });
  }

  overLimit(): null {
    return null;
  }

  failed(kind: number, reason: string): void {
    this.end({ kind, status: 0, body: '', reason });
  }

  private end(o: Outcome): void {
    if (this.done) throw new Error('attempt ended twice');
    this.done = true;
    this.outcome = o;
    this.resolve(o);
  }
}

const OPTS: Http1Options = { connections: 8, pipelining: 4, stallMs: 50, connectTimeoutMs: 1000, idleMs: 4000 };

function pool(t: Test, url: string, opts: Partial<Http1Options> = {}, latency = { ewmaMs: 1 }, onPipeliningDropped?: PipeliningDropped): Http1Pool {
  const p = new Http1Pool(url, { ...OPTS, ...opts }, latency, onPipeliningDropped);
  t.teardown(() => p.destroy());
  return p;
}

/** Sends n requests `{"n":i}` in one turn; resolves with their outcomes in order. */
function sendAll(p: Http1Pool, n: number): Promise<Outcome[]> {
  const sinks = Array.from({ length: n }, (_, i) => new Sink(`{"n":${i}}`));
  for (const a of sinks) p.send(a);
  return Promise.all(sinks.map((a) => a.settled));
}

async function server(t: Test, reply: Reply): Promise<Scripted> {
  const s = await scripted(reply);
  t.teardown(() => s.close());
  return s;
}

t.test('requests of one turn leave in one write and are answered in order', async (t) => {
  const s = await server(t, echo);
  const p = pool(t, s.url);
  const sinks = [1, 2, 3, 4].map((i) => new Sink(`{"n":${i}}`));
  for (const a of sinks) p.send(a);
  const out = await Promise.all(sinks.map((a) => a.settled));
  t.same(
    out.map((o) => [o.kind, o.status, o.body]),
    [1, 2, 3, 4].map((i) => [F_NONE, 200, `{"echo":{"n":${i}}}`]),
  );
  t.equal(s.connections, 1, 'one connection');
  t.equal(s.reads, 1, 'the node read all four requests at once');
  t.equal(p.connectionCount, 1);
});

t.test('large bodies between small ones in one turn arrive whole and in order', async (t) => {
  const s = await server(t, (body) => ok(String(body.length)));
  const p = pool(t, s.url, { pipelining: 8 });
  const big = `{"pad":"${'x'.repeat(40_000)}"}`;
  const bodies = ['{"n":1}', big, '{"n":2}', big + ' ', '{"n":3}'];
  const sinks = bodies.map((b) => new Sink(b));
  for (const a of sinks) p.send(a);
  const out = await Promise.all(sinks.map((a) => a.settled));
  t.same(
    out.map((o) => o.body),
    bodies.map((b) => String(b.length)),
  );
  t.same(s.bodies, bodies, 'the node saw every body intact');
  t.equal(s.connections, 1);
});

t.test('the request line, host, content type and basic auth from the URL', async (t) => {
  let head = '';
  const srv = createServer((so) => {
    so.once('data', (d) => {
      head = d.toString('latin1');
      so.end(ok('{}'));
    });
  });
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  t.teardown(() => new Promise<void>((r) => srv.close(() => r())));
  const port = (srv.address() as { port: number }).port;
  const p = pool(t, `http://us%40er:p%3Ass@127.0.0.1:${port}/a/b?k=v`);
  const a = new Sink('{"x":1}');
  p.send(a);
  t.equal((await a.settled).status, 200);
  t.match(head, /^POST \/a\/b\?k=v HTTP\/1\.1\r\n/);
  t.match(head, new RegExp(`\\r\\nhost: 127\\.0\\.0\\.1:${port}\\r\\n`));
  t.match(head, /\r\ncontent-type: application\/json\r\n/);
  t.match(head, new RegExp(`\\r\\nauthorization: Basic ${Buffer.from('us@er:p:ss').toString('base64')}\\r\\n`));
  t.match(head, /\r\ncontent-length: 7\r\n\r\n\{"x":1\}$/);
});

t.test('framing: chunked, empty, no-body statuses, 1xx, split reads', async (t) => {
  const replies: Record<string, string> = {
    chunked: 'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5;ext=1\r\n{"a":\r\n3\r\n12}\r\n0\r\nx-trailer: 1\r\n\r\n',
    empty: 'HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n',
    nocontent: 'HTTP/1.1 204 No Content\r\n\r\n',
    continue: 'HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n{}',
    err: 'HTTP/1.1 503 Service Unavailable\r\nCONTENT-LENGTH: 4\r\n\r\nbusy',
  };
  for (const split of [false, true]) {
    const s = await server(t, (body, so) => {
      const text = replies[JSON.parse(body).r as string]!;
      if (!split) return text;
      // One byte per write, so reads end anywhere: inside the head, a chunk size, the body.
      let i = 0;
      const drip = (): void => {
        if (i < text.length && !so.destroyed) {
          so.write(text[i++]!);
          setImmediate(drip);
        }
      };
      drip();
      return null;
    });
    const p = pool(t, s.url, { pipelining: 1 });
    const got: Record<string, [number, string]> = {};
    for (const r of Object.keys(replies)) {
      const a = new Sink(JSON.stringify({ r }));
      p.send(a);
      const o = await a.settled;
      got[r] = [o.status, o.body];
    }
    t.same(
      got,
      { chunked: [200, '{"a":12}'], empty: [200, ''], nocontent: [204, ''], continue: [200, '{}'], err: [503, 'busy'] },
      split ? 'split into single bytes' : 'whole',
    );
  }
});

t.test('a body delimited by the connection end, then a fresh connection', async (t) => {
  const s = await server(t, (_b, so) => {
    so.end('HTTP/1.0 200 OK\r\n\r\n{"until":"close"}');
    return null;
  });
  const p = pool(t, s.url);
  const a = new Sink('{}');
  const b = new Sink('{}');
  p.send(a);
  p.send(b);
  t.same(await a.settled, { kind: F_NONE, status: 200, body: '{"until":"close"}', reason: '' });
  t.same((await b.settled).body, '{"until":"close"}', 'the request behind it went again on a new connection');
  t.equal(s.connections, 2);
});

t.test('"connection: close" after an answer: requests behind it are sent again, not failed', async (t) => {
  let n = 0;
  const s = await server(t, (body) => (++n === 1 ? `HTTP/1.1 200 OK\r\nconnection: close\r\ncontent-length: ${body.length}\r\n\r\n${body}` : ok(body)));
  const p = pool(t, s.url);
  const sinks = [1, 2, 3].map((i) => new Sink(`{"n":${i}}`));
  for (const a of sinks) p.send(a);
  const out = await Promise.all(sinks.map((a) => a.settled));
  t.same(
    out.map((o) => [o.kind, o.body]),
    [1, 2, 3].map((i) => [F_NONE, `{"n":${i}}`]),
  );
  t.equal(s.connections, 2);
});

t.test('pipelining limits: depth, slow nodes, exclusive requests, stalled heads', async (t) => {
  await t.test('at most `pipelining` per connection', async (t) => {
    const s = await server(t, echo);
    await sendAll(pool(t, s.url, { pipelining: 2 }), 6);
    t.equal(s.connections, 3);
  });
  await t.test('a node slower than stallMs gets a connection per request', async (t) => {
    const s = await server(t, echo);
    await sendAll(pool(t, s.url, {}, { ewmaMs: 80 }), 4);
    t.equal(s.connections, 4);
  });
  await t.test('an exclusive request is alone on its connection, and nothing queues behind it', async (t) => {
    const s = await server(t, echo);
    const p = pool(t, s.url);
    const first = new Sink('{"n":0}');
    const excl = new Sink('{"n":1}', true);
    const after = new Sink('{"n":2}');
    p.send(first);
    p.send(excl);
    p.send(after);
    await Promise.all([first.settled, excl.settled, after.settled]);
    t.equal(s.connections, 2, 'first and after share one; the exclusive one has its own');
  });
  await t.test('a connection whose oldest request is older than stallMs takes no more', async (t) => {
    const s = await server(t, (body) => (body.includes('slow') ? null : ok(body)));
    const p = pool(t, s.url, { stallMs: 20 });
    const slow = new Sink('{"slow":1}');
    p.send(slow);
    await eventually('the slow request reached the node and is older than stallMs', () => s.bodies.length === 1 && performance.now() - slow.startedAt > 20);
    const next = new Sink('{"n":1}');
    p.send(next);
    t.equal((await next.settled).kind, F_NONE, 'answered on another connection');
    t.equal(s.connections, 2);
    t.equal(p.abandon(slow), false, 'the slow one was written');
  });
  await t.test('past `connections`, requests wait for room', async (t) => {
    const s = await server(t, echo);
    const out = await sendAll(pool(t, s.url, { connections: 1, pipelining: 1 }), 5);
    t.same(
      out.map((o) => o.body),
      out.map((_, i) => `{"echo":{"n":${i}}}`),
    );
    t.equal(s.connections, 1);
  });
});

t.test('failures', async (t) => {
  await t.test('refused: every request fails as never sent', async (t) => {
    const s = await scripted(echo);
    const url = s.url;
    await s.close();
    const p = pool(t, url);
    const sinks = [new Sink('{}'), new Sink('{}')];
    for (const a of sinks) p.send(a);
    const out = await Promise.all(sinks.map((a) => a.settled));
    t.same(
      out.map((o) => [o.kind, o.reason]),
      [
        [F_CONNECT, 'ECONNREFUSED'],
        [F_CONNECT, 'ECONNREFUSED'],
      ],
    );
  });
  await t.test('reset mid-response: written requests fail (maybe run on the node)', async (t) => {
    const s = await server(t, (_b, so) => {
      so.write('HTTP/1.1 200 OK\r\ncontent-length: 100\r\n\r\n{"par');
      setTimeout(() => so.resetAndDestroy(), 20);
      return null;
    });
    const p = pool(t, s.url);
    const sinks = [new Sink('{}'), new Sink('{}')];
    for (const a of sinks) p.send(a);
    const out = await Promise.all(sinks.map((a) => a.settled));
    // Dropped with two requests on it: taken as the node refusing pipelining, so the head is
    // not charged to the node's health; the one behind it, sent again alone, fails as a reset.
    t.same(
      out.map((o) => o.kind),
      [F_PIPELINE_DROPPED, F_OTHER],
    );
    t.equal(p.connectionCount, 0);
  });
  await t.test('a malformed answer closes the connection', async (t) => {
    const s = await server(t, () => 'SMTP ready\r\n\r\n');
    const p = pool(t, s.url);
    const a = new Sink('{}');
    p.send(a);
    const o = await a.settled;
    t.equal(o.kind, F_OTHER);
    t.match(o.reason, /^bad response/);
  });
  await t.test('an answer nobody asked for', async (t) => {
    const s = await server(t, (body, so) => {
      so.write(ok(body) + ok(body));
      return null;
    });
    const p = pool(t, s.url);
    const a = new Sink('{}');
    p.send(a);
    t.equal((await a.settled).kind, F_NONE);
    await eventually('the connection is dropped', () => p.connectionCount === 0);
  });
});

t.test('a node that drops a connection with pipelined requests gets one per connection', async (t) => {
  // As uWS does: a request arriving while an answer is still pending closes the connection.
  const pending = new WeakSet<Socket>();
  const s = await server(t, (body, so) => {
    if (pending.has(so)) {
      so.destroy();
      return null;
    }
    pending.add(so);
    setTimeout(() => {
      pending.delete(so);
      if (!so.destroyed) so.write(ok(body));
    }, 10);
    return null;
  });
  const dropped: [string, string][] = [];
  const p = pool(t, s.url, {}, undefined, (node, reason) => dropped.push([node, reason]));
  const burst = (): Sink[] => {
    const sinks = [1, 2, 3].map((i) => new Sink(`{"n":${i}}`));
    for (const a of sinks) p.send(a);
    return sinks;
  };
  const first = await Promise.all(burst().map((a) => a.settled));
  t.equal(first[0]!.kind, F_PIPELINE_DROPPED, 'the head may have run: it fails (the call layer retries it, not charging the node)');
  t.same(
    first.slice(1).map((o) => [o.kind, o.body]),
    [
      [F_NONE, '{"n":2}'],
      [F_NONE, '{"n":3}'],
    ],
    'the ones behind it went again, one per connection',
  );
  const before = s.connections;
  const second = await Promise.all(burst().map((a) => a.settled));
  t.same(
    second.map((o) => o.kind),
    [F_NONE, F_NONE, F_NONE],
    'the next burst is answered',
  );
  t.ok(s.connections - before <= 3 && p.noPipeliningUntil > performance.now(), 'pipelining stays off for this node');
  t.same(
    dropped.map(([node]) => node),
    [new URL(s.url).host],
    'told once for the episode, with the node',
  );
  t.type(dropped[0]?.[1], 'string', 'and the reason');
});

t.test('abandon', async (t) => {
  const s = await server(t, () => null);
  const p = pool(t, s.url);
  const a = new Sink('{"n":1}');
  p.send(a);
  t.equal(p.abandon(a), true, 'not yet written (still connecting or unflushed): never sent');
  const b = new Sink('{"n":2}');
  p.send(b);
  // Both would have left in the same write: once the second is there, the first is not coming.
  await eventually('the second request reached the node', () => s.bodies.length > 0);
  t.same(s.bodies, ['{"n":2}'], 'the abandoned one never reached the node');
  b.done = true; // what the caller does when its deadline passes
  t.equal(p.abandon(b), false, 'written');
  await eventually('nothing live was left on it: closed', () => p.connectionCount === 0);
  t.equal(b.outcome, null, 'and it was not ended by the client');
});

t.test('close waits for in-flight answers; destroy fails what is left', async (t) => {
  const s = await server(t, (body) => (body.includes('never') ? null : ok(body)));
  const p = pool(t, s.url);
  const a = new Sink('{"n":1}');
  p.send(a);
  await p.close();
  t.equal(a.outcome?.kind, F_NONE, 'answered before close resolved');
  const late = new Sink('{}');
  p.send(late);
  t.equal(late.outcome?.kind, F_CONNECT, 'refused once closing');
  const p2 = pool(t, s.url);
  const stuck = new Sink('{"never":1}');
  p2.send(stuck);
  await eventually('the stuck request reached the node', () => s.bodies.includes('{"never":1}'));
  await p2.destroy();
  t.equal(stuck.outcome?.kind, F_OTHER);
});

t.test('withdraw: a request not written yet is taken back; a written one stays and its late answer is read and dropped', async (t) => {
  // The first request is held until the test releases it; the others are answered at once.
  const held0 = { release: (): void => {} };
  const s = await server(t, (body, socket) => {
    if (body !== '{"n":"held"}') return echo(body, socket);
    held0.release = () => socket.write(ok(`{"echo":${body}}`));
    return null;
  });
  const p = pool(t, s.url, { connections: 1 });
  const held = new Sink('{"n":"held"}');
  p.send(held);
  const queued = new Sink('{"n":"queued"}');
  p.send(queued);
  t.equal(p.withdraw(queued), true, 'still queued in this turn: taken back');
  await eventually('the held request was written', () => held.written && s.bodies.length === 1);
  t.equal(p.withdraw(held), false, 'written: it stays on its connection');
  // The call gave up on it (a hedge answered): its answer must be read and ignored.
  held.done = true;
  const behind = [1, 2, 3].map((i) => new Sink(`{"n":${i}}`));
  for (const a of behind) p.send(a);
  held0.release();
  const out = await Promise.all(behind.map((a) => a.settled));
  t.same(
    out.map((o) => o.body),
    ['{"echo":{"n":1}}', '{"echo":{"n":2}}', '{"echo":{"n":3}}'],
    'the requests behind it get their own answers',
  );
  t.equal(held.outcome, null, 'the late answer was dropped');
  t.same(s.bodies, ['{"n":"held"}', '{"n":1}', '{"n":2}', '{"n":3}'], 'the withdrawn request never reached the node');
  t.equal(s.connections, 1, 'one connection throughout');
  t.equal(p.connectionCount, 1);
});
