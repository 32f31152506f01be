// The load generator (`jumpgate bench`): coordinated-omission correction against a server
// that stalls once, percentiles and their output, error kinds, what goes on the wire
// (token, affinity keys, batch), flag validation (exit 2 naming the flag), the WebSocket
// mode against a simulated node (in this process and spread over child processes), and the
// raw WebSocket client's framing.

import { createHash } from 'node:crypto';
import { createServer as createHttpServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createTcpServer, type Socket } from 'node:net';
import t from 'tap';
import { runBenchCli } from '../../../src/cli/bench.js';
import { latencyMs, runHttpLoad, type HttpLoadResult } from '../../../src/tools/loadgen/http-load.js';
import { requestBody } from '../../../src/tools/loadgen/http-request.js';
import { parseBenchArgs, type HttpBenchOptions } from '../../../src/tools/loadgen/options.js';
import { httpTable, wsTable } from '../../../src/tools/loadgen/report.js';
import { connectWs } from '../../../src/tools/loadgen/ws-client.js';
import { runWsLoad, tallyWindow } from '../../../src/tools/loadgen/ws-load.js';
import { monoNow, SubscriberGroup } from '../../../src/tools/loadgen/ws-subscribers.js';
import { LatencyHistogram } from '../../../src/metrics/histogram.js';
import { startSim } from '../../../src/tools/sim/node.js';

type Handler = (req: IncomingMessage, body: string, res: ServerResponse) => void;

async function server(handler: Handler): Promise<{ url: string; close: () => Promise<void>; srv: Server }> {
  const srv = createHttpServer((req, res) => {
    let body = '';
    req.on('data', (d: Buffer) => (body += d.toString()));
    req.on('end', () => handler(req, body, res));
  });
  srv.keepAliveTimeout = 60_000;
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  const port = (srv.address() as { port: number }).port;
  return {
    url: `http://127.0.0.1:${port}`,
    srv,
    close: () =>
      new Promise<void>((r) => {
        srv.closeAllConnections();
        srv.close(() => r());
      }),
  };
}

const OK = '{"jsonrpc":"2.0","result":1,"id":1}';

function opts(url: string, more: Partial<HttpBenchOptions> = {}): HttpBenchOptions {
  const p = parseBenchArgs(['--url', url]);
  if (p.kind !== 'http') throw new Error('expected http options');
  return { ...p.http, warmupMs: 0, ...more };
}

function capture(): { out: string[]; err: { text: string; write(s: string): boolean; isTTY: boolean } } {
  const err = {
    text: '',
    isTTY: false,
    write(s: string) {
      err.text += s;
      return true;
    },
  };
  return { out: [], err };
}

t.test('open loop corrects for coordinated omission: one 500 ms stall shows in p90/p99', async (t) => {
  // Every answer due while the server stalls (500 ms, once, from the 100th request on) waits
  // until the stall ends. A client measuring from the actual send over one connection sees
  // one slow request; measured from the intended send, every request scheduled during the
  // stall is late by the rest of it (~50 of 300 requests, 500 → 0 ms).
  let n = 0;
  let stallUntil = 0;
  const s = await server((_req, _body, res) => {
    n++;
    if (n === 100) stallUntil = Date.now() + 500;
    const wait = stallUntil - Date.now();
    if (wait > 0) setTimeout(() => res.end(OK), wait);
    else res.end(OK);
  });
  t.teardown(s.close);
  const r = await runHttpLoad(opts(s.url, { rate: 100, durationMs: 3000, connections: 1 }));
  t.equal(r.errors, 0, 'no errors');
  t.equal(r.sent, 300, '100 req/s for 3 s');
  t.equal(r.answered, 300);
  t.ok(r.latencyMs.p99 >= 400, `p99 from intended send reflects the stall: ${r.latencyMs.p99} ms`);
  t.ok(r.latencyMs.p90 >= 150, `p90 too (about 50 requests were held up): ${r.latencyMs.p90} ms`);
  const late = LatencyHistogram.decode(r.histogram);
  t.ok(late.percentile(100 - (25 / 300) * 100) >= 100, 'at least 25 requests are 100+ ms late');
  t.ok(r.serviceMs !== null && r.serviceMs.p90 < 50, `from the actual send, the stall hides: service p90 ${r.serviceMs?.p90} ms`);
  t.ok(r.serviceMs !== null && r.serviceMs.max >= 400, 'the one request that met the stall still shows in service max');
});

t.test('closed loop keeps C requests in flight and counts each answer', async (t) => {
  let inFlight = 0;
  let most = 0;
  const s = await server((_req, _body, res) => {
    inFlight++;
    most = Math.max(most, inFlight);
    setTimeout(() => {
      inFlight--;
      res.end(OK);
    }, 5);
  });
  t.teardown(s.close);
  const r = await runHttpLoad(opts(s.url, { mode: 'closed', connections: 4, durationMs: 500 }));
  t.equal(most, 4, 'never more than the connections');
  t.equal(r.errors, 0);
  t.ok(r.answered > 100 && r.answered <= 420, `about 4 per 5 ms: ${r.answered}`);
  t.equal(r.rate, null);
  t.equal(r.serviceMs, null, 'no separate service time in closed loop');
  t.ok(r.latencyMs.p50 >= 5 && r.latencyMs.p50 < 50, `p50 ${r.latencyMs.p50}`);
});

t.test('percentiles: summary in ms from the µs histogram, and the table shows each', async (t) => {
  const h = new LatencyHistogram({ digits: 3 });
  let sum = 0;
  for (let v = 1; v <= 1000; v++) {
    h.record(v * 1000);
    sum += v * 1000;
  }
  const l = latencyMs(h.summary(), sum);
  const near = (got: number, want: number): boolean => Math.abs(got - want) <= want * 0.002;
  t.ok(near(l.p50, 500), `p50 ${l.p50}`);
  t.ok(near(l.p90, 900), `p90 ${l.p90}`);
  t.ok(near(l.p99, 990), `p99 ${l.p99}`);
  t.ok(near(l.p999, 999), `p99.9 ${l.p999}`);
  t.ok(near(l.max, 1000), `max ${l.max}`);
  t.ok(near(l.mean, 500.5), `mean ${l.mean}`);
  t.equal(l.count, 1000);

  const r: HttpLoadResult = {
    kind: 'http',
    mode: 'open',
    url: 'http://x/',
    method: 'getSlot',
    batch: 0,
    affinity: null,
    keys: 0,
    connections: 8,
    rate: 1000,
    durationS: 1,
    elapsedS: 1,
    sent: 1000,
    ok: 998,
    answered: 1000,
    allAnswered: 1000,
    errors: 2,
    errorKinds: { 'HTTP 503': 2 },
    throughput: 1000,
    bytesIn: 1e6,
    clientCpuS: 0.1,
    latencyMs: l,
    serviceMs: { ...l, p50: 1.234 },
    histogram: h.encode(),
  };
  const table = httpTable(r);
  const row = table.split('\n').find((x) => x.startsWith('from intended send'))!;
  t.match(row, /500\.\d\s+900\.\d\s+990\.\d\s+999\.\d\s+1,000\s+500\.5$/, 'p50 p90 p99 p99.9 max mean in order');
  t.match(table, /p50\s+p90\s+p99\s+p99\.9\s+max\s+mean/);
  t.match(table, /from actual send\s+1\.23\s/);
  t.match(table, /HTTP 503: 2/, 'errors by kind');
});

t.test('errors are counted by kind: HTTP status, JSON-RPC error code, socket', async (t) => {
  let n = 0;
  const s = await server((_req, _body, res) => {
    const k = n++ % 4;
    if (k === 0) res.end(OK);
    else if (k === 1) res.writeHead(503).end('{"jsonrpc":"2.0","error":{"code":7503,"message":"x"},"id":1}');
    else if (k === 2) res.end('{"jsonrpc":"2.0","error":{"code":-32005,"message":"Node is unhealthy"},"id":1}');
    else res.socket!.destroy();
  });
  t.teardown(s.close);
  const r = await runHttpLoad(opts(s.url, { mode: 'closed', connections: 1, durationMs: 400 }));
  t.ok(r.ok > 0);
  t.ok(r.errorKinds['HTTP 503']! > 0, 'HTTP status');
  t.ok(r.errorKinds['JSON-RPC -32005']! > 0, 'JSON-RPC error code');
  const sock = Object.keys(r.errorKinds).filter((k) => k.startsWith('socket '));
  t.ok(sock.length > 0, `socket errors: ${sock.join(', ')}`);
  t.equal(
    r.errors,
    Object.values(r.errorKinds).reduce((a, b) => a + b, 0),
    'kinds add up',
  );
  t.equal(r.errors + r.ok, r.answered + (r.errorKinds[sock[0]!] ?? 0), 'answered = ok + HTTP/JSON-RPC errors');

  const refused = await runHttpLoad(opts('http://127.0.0.1:1', { rate: 50, durationMs: 200, connections: 1, timeoutMs: 1000 }));
  t.equal(refused.ok, 0);
  t.ok(refused.errorKinds['socket ECONNREFUSED']! >= 5, `refused: ${JSON.stringify(refused.errorKinds)}`);
});

t.test('on the wire: token in path or header, affinity keys cycle, batch bodies', async (t) => {
  const seen: { path: string; headers: IncomingMessage['headers']; body: string }[] = [];
  const s = await server((req, body, res) => {
    seen.push({ path: req.url!, headers: req.headers, body });
    res.end(OK);
  });
  t.teardown(s.close);
  const path = await runHttpLoad(
    opts(s.url + '/base/', { rate: 200, durationMs: 100, token: 'tok-1', affinity: 'key', keys: 3, batch: 5, method: 'getBalance', params: '["abc"]' }),
  );
  t.equal(path.ok, 20);
  t.equal(seen[0]!.path, '/base/api-token/tok-1');
  t.equal(seen[0]!.headers['x-service-affinity'], 'key');
  t.same(
    seen.slice(0, 6).map((x) => x.headers['x-service-affinity-key']),
    ['key-0', 'key-1', 'key-2', 'key-0', 'key-1', 'key-2'],
    'keys cycle over K',
  );
  const batch = JSON.parse(seen[0]!.body) as { id: number; method: string; params: unknown }[];
  t.equal(batch.length, 5);
  t.same(
    batch.map((c) => c.id),
    [1, 2, 3, 4, 5],
  );
  t.same(batch[0], { jsonrpc: '2.0', id: 1, method: 'getBalance', params: ['abc'] });
  t.equal(seen[0]!.headers['content-type'], 'application/json');

  seen.length = 0;
  await runHttpLoad(
    opts(s.url, { rate: 100, durationMs: 50, token: 'tok-2', tokenIn: 'header', brand: 'Acme', affinity: 'node', headers: [['X-Extra', 'y']] }),
  );
  t.equal(seen[0]!.path, '/');
  t.equal(seen[0]!.headers['x-acme-api-token'], 'tok-2');
  t.equal(seen[0]!.headers['x-acme-affinity'], 'node');
  t.equal(seen[0]!.headers['x-extra'], 'y');
  t.equal(seen[0]!.body, '{"jsonrpc":"2.0","id":1,"method":"getSlot"}');
  t.equal(requestBody('m', null, 0).toString(), '{"jsonrpc":"2.0","id":1,"method":"m"}');

  // Several --url: round-robin, each with its own pool.
  let other = 0;
  const s2 = await server((_req, _body, res) => {
    other++;
    res.end(OK);
  });
  t.teardown(s2.close);
  seen.length = 0;
  const p = parseBenchArgs(['--url', s.url, '--url', s2.url, '--rate', '100', '--duration', '200ms', '--warmup', '0']);
  if (p.kind !== 'http') throw new Error('expected http options');
  const two = await runHttpLoad(p.http);
  t.equal(two.ok, 20);
  t.same([seen.length, other], [10, 10], 'requests alternate between the URLs');
  t.equal(two.url, `${s.url}/ ${s2.url}/`);
});

t.test('flag validation: a bad flag exits 2 with a message naming it', async (t) => {
  const cases: [string[], string][] = [
    [['--url', 'http://x', '--rate', '0'], '--rate'],
    [['--url', 'http://x', '--rate', 'fast'], '--rate'],
    [['--url', 'http://x', '--duration', '-3'], '--duration'],
    [['--url', 'http://x', '--duration', '5h'], '--duration'],
    [['--url', 'http://x', '--connections', '1.5'], '--connections'],
    [['--url', 'http://x', '--params', '{oops'], '--params'],
    [['--url', 'http://x', '--params', '42'], '--params'],
    [['--url', 'http://x', '--batch', '0'], '--batch'],
    [['--url', 'http://x', '--affinity', 'sticky'], '--affinity'],
    [['--url', 'http://x', '--affinity', 'key'], '--keys'],
    [['--url', 'http://x', '--keys', '10'], '--keys'],
    [['--url', 'http://x', '--closed', '--rate', '10'], '--rate'],
    [['--url', 'http://x', '--token-in', 'cookie', '--token', 't'], '--token-in'],
    [['--url', 'http://x', '--token', 'a b'], '--token'],
    [['--url', 'http://x', '--header', 'no colon'], '--header'],
    [['--url', 'http://x', '--timeout', 'soon'], '--timeout'],
    [['--url', 'ftp://x'], '--url'],
    [['--url', 'not a url'], '--url'],
    [['--rate', '10'], '--url'],
    [['--url', 'http://x', '--bogus'], '--bogus'],
    [['--url', 'http://x', '--rate'], '--rate'],
    [['--url', 'ws://x', '--ws-subscribers', 'many'], '--ws-subscribers'],
    [['--url', 'ws://x', '--ws-subscribers', '10', '--rate', '5'], '--rate'],
    [['--url', 'ws://x', '--ws-subscribers', '2', '--ws-procs', '3'], '--ws-procs'],
    [['--url', 'http://x', '--ws-method', 'slotSubscribe'], '--ws-method'],
    [['--url', 'ws://x', '--ws-subscribers', '1', '--ws-reference', 'nope'], '--ws-reference'],
    [['--url', 'ws://x', '--url', 'ftp://y', '--ws-subscribers', '1'], '--url'],
    [['--url', 'http://x', '--url', 'ftp://y'], '--url'],
    [['--url', 'http://x', '--insecure'], '--insecure'],
  ];
  for (const [argv, flag] of cases) {
    const io = capture();
    const code = await runBenchCli(argv, { out: (s) => io.out.push(s), err: io.err });
    const first = io.err.text.split('\n')[0]!;
    t.equal(code, 2, `${argv.join(' ')} ⇒ exit 2`);
    t.ok(first.startsWith('jumpgate bench: ') && first.includes(flag), `message names ${flag}: ${first}`);
    t.match(io.err.text, /usage: jumpgate bench/, 'usage follows');
    t.same(io.out, [], 'nothing on stdout');
  }
  const help = capture();
  t.equal(await runBenchCli(['--help'], { out: (s) => help.out.push(s), err: help.err }), 0);
  t.match(help.out.join(''), /--ws-subscribers N/);
});

t.test('CLI prints JSON with --json, a table otherwise, progress lines on a non-TTY', async (t) => {
  const s = await server((_req, _body, res) => res.end(OK));
  t.teardown(s.close);
  const io = capture();
  const code = await runBenchCli(['--url', s.url, '--rate', '500', '--duration', '2.2s', '--warmup', '0', '--connections', '2', '--json'], {
    out: (x) => io.out.push(x),
    err: io.err,
  });
  t.equal(code, 0);
  const r = JSON.parse(io.out.join('')) as HttpLoadResult;
  t.equal(r.kind, 'http');
  t.equal(r.sent, 1100);
  t.equal(r.ok, 1100);
  t.match(io.err.text, /^bench 2\.\d\/2 s {2}sent [\d,]+ {2}answered [\d,]+ {2}[\d,]+ req\/s {2}p99 [\d.]+ ms {2}errors 0\n/m, 'a progress line');
  const io2 = capture();
  t.equal(
    await runBenchCli(['--url', s.url, '--closed', '--duration', '200ms', '--warmup', '0', '--connections', '2', '--quiet'], {
      out: (x) => io2.out.push(x),
      err: io2.err,
    }),
    0,
  );
  t.match(io2.out.join(''), /closed loop, 2 connections/);
  t.equal(io2.err.text, '', '--quiet: no progress');
  const dead = capture();
  t.equal(
    await runBenchCli(['--url', 'http://127.0.0.1:1', '--rate', '20', '--duration', '200ms', '--warmup', '0', '--quiet'], {
      out: (x) => dead.out.push(x),
      err: dead.err,
    }),
    1,
    'nothing answered ⇒ exit 1',
  );
});

t.test('WebSocket mode: delay over the earliest arrival, in-process and over 2 processes', async (t) => {
  const sim = await startSim({ id: 'ws-a', port: 0, slotMs: 50 });
  t.teardown(() => sim.close());
  for (const procs of [1, 2]) {
    const p = parseBenchArgs(['--url', sim.url, '--ws-subscribers', '20', '--ws-procs', String(procs), '--duration', '1s', '--ws-reference', sim.wsUrl]);
    if (p.kind !== 'ws') throw new Error('expected ws options');
    let measuring = 0;
    const r = await runWsLoad({ ...p.ws, graceMs: 300 }, { onMeasuring: () => measuring++ });
    t.equal(measuring, 1, 'onMeasuring once');
    t.equal(r.subscribed, 20, `${procs} process(es): all subscribed`);
    t.equal(r.failed, 0);
    t.ok(r.notifications >= 10 && r.notifications <= 30, `about 20 slots in 1 s: ${r.notifications}`);
    t.equal(r.missing, 0, 'every client got every slot');
    t.equal(r.arrivals, r.notifications * 20);
    t.ok(r.delayMs.p99 < 500, `delay p99 ${r.delayMs.p99} ms`);
    t.ok(r.overReferenceMs !== null && r.overReferenceMs.count === r.arrivals);
    t.match(wsTable(r), /over earliest arrival/);
  }
  const p = parseBenchArgs(['--url', sim.url, '--ws-subscribers', '3', '--ws-method', 'nopeSubscribe', '--duration', '100ms']);
  if (p.kind !== 'ws') throw new Error('expected ws options');
  const bad = await runWsLoad(p.ws);
  t.equal(bad.subscribed, 0);
  t.same(bad.failKinds, { 'JSON-RPC -32601': 3 }, 'subscribe errors counted by JSON-RPC code');
  const refused = parseBenchArgs(['--url', 'ws://127.0.0.1:1', '--ws-subscribers', '2', '--duration', '100ms']);
  if (refused.kind !== 'ws') throw new Error('expected ws options');
  t.same((await runWsLoad(refused.ws)).failKinds, { 'socket ECONNREFUSED': 2 });
});

t.test("WebSocket mode: a process told late that the window started still has the window's first notifications", async (t) => {
  // A busy child process reads "start measuring" after the window began; the notifications
  // it got in between are in the window and must not be lost (they would count as missing).
  const sim = await startSim({ id: 'ws-a', port: 0, slotMs: 20 });
  t.teardown(() => sim.close());
  const g = new SubscriberGroup({
    urls: [sim.wsUrl],
    headers: [],
    subscribe: '{"jsonrpc":"2.0","id":1,"method":"slotSubscribe"}',
    timeoutMs: 2000,
    insecure: false,
  });
  t.teardown(() => g.close());
  await g.connect(2);
  t.equal(g.counts.subscribed, 2);
  const deadline = Date.now() + 5000;
  while (g.arrivals < 20 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
  const from = monoNow() - 100;
  g.startRecording(from);
  const a = g.stopRecording();
  const inWindow = a.times.filter((ts) => ts.every((x) => x >= from));
  t.ok(inWindow.length >= 2, `notifications of the 100 ms before being told are kept: ${inWindow.length}`);
  t.ok(
    inWindow.every((ts) => ts.length === 2),
    "each with both clients' arrivals",
  );
  const before = a.times.filter((ts) => ts.some((x) => x < from));
  t.ok(before.length > 0 && before.every((ts) => ts.length === 1), 'earlier ones only mark their notification');
});

t.test('WebSocket mode: clients spread round-robin over several --url, across processes too', async (t) => {
  const sims = await Promise.all([startSim({ id: 'ws-a', port: 0, slotMs: 50 }), startSim({ id: 'ws-b', port: 0, slotMs: 50 })]);
  t.teardown(() => Promise.all(sims.map((s) => s.close())));
  for (const procs of [1, 2]) {
    const p = parseBenchArgs(['--url', sims[0]!.url, '--url', sims[1]!.wsUrl, '--ws-subscribers', '11', '--ws-procs', String(procs), '--duration', '300ms']);
    if (p.kind !== 'ws') throw new Error('expected ws options');
    let held: number[] = [];
    const r = await runWsLoad({ ...p.ws, graceMs: 200 }, { beforeClose: () => void (held = sims.map((s) => s.stats.wsSubscriptions)) });
    t.equal(r.subscribed, 11, `${procs} process(es): all subscribed`);
    t.same(held, [6, 5], `${procs} process(es): 6 clients on the first node, 5 on the second`);
    t.equal(r.url, `${sims[0]!.url}/ ${sims[1]!.wsUrl}/`, 'both endpoints in the result');
    t.equal(r.missing, 0);
  }
});

t.test('raw WebSocket client: fragments, ping/pong, 16-bit lengths, close, refused upgrade', async (t) => {
  const pongs: Buffer[] = [];
  const srv = createTcpServer((sock: Socket) => {
    let buf = Buffer.alloc(0);
    let upgraded = false;
    sock.on('data', (d: Buffer) => {
      buf = Buffer.concat([buf, d]);
      if (!upgraded) {
        const text = buf.toString('latin1');
        const end = text.indexOf('\r\n\r\n');
        if (end < 0) return;
        if (text.startsWith('GET /deny')) return void sock.end('HTTP/1.1 429 Too Many Requests\r\nContent-Length: 0\r\n\r\n');
        const key = /Sec-WebSocket-Key: (.+)\r\n/.exec(text)![1]!;
        const accept = createHash('sha1')
          .update(key + '258EAFA5-E914-47DA-95CA-C5AB0DC85B11')
          .digest('base64');
        upgraded = true;
        buf = buf.subarray(end + 4);
        const big = Buffer.alloc(300, 0x61);
        const frames = Buffer.concat([
          Buffer.from([0x01, 3]),
          Buffer.from('hel'),
          Buffer.from([0x89, 2]),
          Buffer.from('pi'),
          Buffer.from([0x80, 2]),
          Buffer.from('lo'),
          Buffer.from([0x81, 126, 1, 44]),
          big,
        ]);
        sock.write(`HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: ${accept}\r\n\r\n`);
        // Split mid-frame so the client must keep a partial frame.
        sock.write(frames.subarray(0, 9));
        setTimeout(() => sock.write(frames.subarray(9)), 20);
        setTimeout(() => sock.write(Buffer.from([0x88, 2, 0x03, 0xf1])), 60);
      }
      // Client frames: masked; decode pongs.
      while (buf.length >= 6) {
        const len = buf[1]! & 0x7f;
        if (buf.length < 6 + len) break;
        const mask = buf.subarray(2, 6);
        const payload = Buffer.from(buf.subarray(6, 6 + len).map((b, i) => b ^ mask[i & 3]!));
        if ((buf[0]! & 0x0f) === 0xa) pongs.push(payload);
        buf = buf.subarray(6 + len);
      }
    });
  });
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  t.teardown(() => srv.close());
  const port = (srv.address() as { port: number }).port;
  const messages: string[] = [];
  let closed = 0;
  await connectWs(new URL(`ws://127.0.0.1:${port}/`), [], { message: (d) => messages.push(d.toString()), close: (code) => (closed = code) }, 2000);
  await new Promise((r) => setTimeout(r, 200));
  t.same(messages, ['hello', 'a'.repeat(300)], 'fragmented message reassembled around a ping; 16-bit length');
  t.same(pongs.map(String), ['pi'], 'ping answered with its payload');
  t.equal(closed, 1009, 'close code from the server');
  const denied = await connectWs(new URL(`ws://127.0.0.1:${port}/deny`), [], { message: () => undefined, close: () => undefined }, 2000).then(
    () => null,
    (e: { kind?: string }) => e.kind,
  );
  t.equal(denied, 'HTTP 429', 'a refused upgrade fails with its HTTP status');
});

t.test('the window holds a notification by its earliest arrival over every path, the reference included', async (t) => {
  // 'edge' reached the subscriber just before the window and the reference just inside it: it
  // is not the window's (it used to be counted by the reference's time, as missing for every
  // subscriber). 'lost' reached only the reference, inside the window: one missing arrival.
  const refs = [{ keys: ['edge', 'lost', 'both'], times: [[1001], [1500], [1200]] }];
  const subs = { keys: ['edge', 'both'], times: [[999], [1203]] };
  const w = tallyWindow(refs, subs, 1000, 2000);
  t.equal(w.notifications, 2, "'both' and 'lost'");
  t.equal(w.arrivals, 1);
  t.equal(w.overReferenceMs?.count, 1);
  t.equal(tallyWindow([], subs, 1000, 2000).overReferenceMs, null);
});
