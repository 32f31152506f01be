// nginx and HAProxy in front of jumpgate, started from deploy/nginx/jumpgate.conf and
// deploy/haproxy/jumpgate.cfg (docs/http-compatibility.md "HTTP compatibility"): what each front does with the
// framing cases jumpgate's own listener gets wrong (test/integration/http-compat.test.ts),
// whether a refused request reaches jumpgate (a wiretap between the front and jumpgate keeps
// every byte the front sent), and that calls, pipelining and WebSockets work through it.

import t from 'tap';
import { serverEngine } from '../../src/server/engine.js';
import { frontMissing, startFront, startWiretap, type Front, type FrontName, type Wiretap } from '../helpers/fronts.js';
import { startHarness, TOKEN } from '../helpers/gateway.js';
import { RawConnection, rawChunkedHead, rawPost, LAST_CHUNK } from '../helpers/raw-http.js';
import { openWs } from '../helpers/ws-client.js';

type Test = Parameters<Parameters<typeof t.test>[0]>[0];

const PATH = `/api-token/${TOKEN}`;
/** A call whose id doubles as a marker to look for in the bytes that reached jumpgate. */
const body = (marker: string): string => `{"jsonrpc":"2.0","id":"${marker}","method":"getHealth"}`;
const ok = (marker: string): string => `{"jsonrpc":"2.0","result":"ok","id":"${marker}"}`;

const h = await startHarness({ sims: [{ slotMs: 50 }], config: { health: { intervalMs: 60_000 }, trustedProxies: ['127.0.0.1/32'] } });
t.teardown(() => h.close());

/** Requests jumpgate has answered (its jumpgate_requests_total, all labels). */
async function answered(): Promise<number> {
  let n = 0;
  for (const line of (await h.gw.metrics.text()).split('\n'))
    if (line.startsWith('jumpgate_requests_total{')) n += Number(line.slice(line.lastIndexOf(' ') + 1));
  return n;
}

interface Case {
  name: string;
  /** The request, in writes made one after another. */
  parts: (marker: string) => string[];
  /** What the client gets from each front. */
  expect: Record<FrontName, number>;
}

const delay = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** A marked call with one Content-Length header per `extra`: the body's length plus that many bytes (spaces sent). */
function withLengths(marker: string, extra: number[]): string {
  const b = body(marker);
  const len = Buffer.byteLength(b);
  const lines = [
    `POST ${PATH} HTTP/1.1`,
    'Host: 127.0.0.1',
    'Content-Type: application/json',
    `X-Probe: ${marker}`,
    ...extra.map((n) => `Content-Length: ${len + n}`),
  ];
  return [...lines, '', b + ' '.repeat(Math.max(...extra))].join('\r\n');
}

// Marked with a header and the body's id, so that neither a forwarded head nor a forwarded
// body goes unnoticed. A 200 also shows the marker is seen when a request does get through.
const CASES: Case[] = [
  {
    name: 'two different Content-Length headers',
    parts: (m) => [withLengths(m, [0, 5])],
    expect: { nginx: 400, haproxy: 400 },
  },
  {
    // Harmless to jumpgate; pinned because the two fronts differ.
    name: 'two equal Content-Length headers',
    parts: (m) => [withLengths(m, [0, 0])],
    expect: { nginx: 400, haproxy: 200 },
  },
  {
    // In two writes: a front that streamed bodies would have forwarded the first already.
    name: 'chunk data not followed by CRLF',
    parts: (m) => [rawChunkedHead(PATH, [`X-Probe: ${m}`]) + Buffer.byteLength(body(m)).toString(16) + '\r\n' + body(m), 'XX' + LAST_CHUNK],
    expect: { nginx: 400, haproxy: 400 },
  },
  {
    name: 'a NUL byte in a header value',
    parts: (m) => [rawPost(PATH, body(m), [`X-Probe: ${m}`, 'X-Nul: a\0b'])],
    expect: { nginx: 400, haproxy: 400 },
  },
  {
    // nginx refuses the continuation line; HAProxy joins it to the previous line (RFC 9112 §5.2).
    name: 'an obs-fold continuation line',
    parts: (m) => [rawPost(PATH, body(m), [`X-Probe: ${m}`, 'X-Folded: a', ' continued'])],
    expect: { nginx: 400, haproxy: 200 },
  },
  {
    // nginx forwards it as an empty header ("X-No-Colon: "); HAProxy refuses it.
    name: 'a header line without a colon',
    parts: (m) => [rawPost(PATH, body(m), [`X-Probe: ${m}`, 'X-No-Colon'])],
    expect: { nginx: 200, haproxy: 400 },
  },
  {
    // Both fronts read the whole request before forwarding it in one piece.
    name: 'a request line split after "POST "',
    parts: (m) => {
      const req = rawPost(PATH, body(m), [`X-Probe: ${m}`]);
      return [req.slice(0, 5), req.slice(5)];
    },
    expect: { nginx: 200, haproxy: 200 },
  },
];

/** The head of the forwarded request with header `X-Probe: marker`, from its request line on. */
function forwardedHead(tap: Wiretap, marker: string): string | undefined {
  // Pieces between blank lines: a head, or the previous request's body followed by a head.
  const piece = tap
    .sent()
    .split('\r\n\r\n')
    .find((p) => p.toLowerCase().includes(`\r\nx-probe: ${marker}`));
  return piece?.slice(piece.lastIndexOf('POST /'));
}

async function send(front: Front, parts: string[]): Promise<{ status: number; body: string }> {
  const c = await RawConnection.open(front.port);
  try {
    for (const [i, p] of parts.entries()) {
      // Lets the front read the first piece on its own before the rest arrives.
      if (i > 0) await delay(30);
      c.write(p);
    }
    const r = await c.response(0);
    return { status: r.status, body: r.body };
  } finally {
    c.close();
  }
}

async function withFront(t: Test, name: FrontName): Promise<{ front: Front; tap: Wiretap }> {
  const tap = await startWiretap(h.gw.port);
  t.teardown(() => tap.close());
  const front = await startFront(name, tap.port);
  t.teardown(() => front.stop());
  return { front, tap };
}

for (const name of ['nginx', 'haproxy'] as const) {
  const missing = await frontMissing(name);
  t.test(`${name} in front of jumpgate`, { skip: missing ?? false }, async (t) => {
    const { front, tap } = await withFront(t, name);

    t.test('a JSON-RPC call, with X-Forwarded-For set by the front', async (t) => {
      const r = await fetch(front.url + PATH, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-probe': 'call', 'x-forwarded-for': '203.0.113.9' },
        body: body('call'),
      });
      t.equal(r.status, 200);
      t.equal(await r.text(), ok('call'));
      t.equal(r.headers.get('x-service-node'), 'n0', "jumpgate's headers come through");
      const xff = (forwardedHead(tap, 'call') ?? '')
        .split('\r\n')
        .filter((l) => /^x-forwarded-for:/i.test(l))
        .map((l) => l.slice(l.indexOf(':') + 1).trim());
      // jumpgate reads the first X-Forwarded-For line and uses its right-most hop it does not
      // trust (docs/routing.md "Affinity and rate limits"): the client's own value must not be first alone.
      t.same(xff, [name === 'nginx' ? '203.0.113.9, 127.0.0.1' : '127.0.0.1'], 'one X-Forwarded-For line, ending with the real peer');
    });

    t.test('malformed framing: refused by the front, never reaching jumpgate', async (t) => {
      for (const c of CASES) {
        const marker = `probe-${name}-${CASES.indexOf(c)}`;
        const before = await answered();
        const r = await send(front, c.parts(marker));
        const want = c.expect[name];
        t.equal(r.status, want, `${c.name}: ${want}`);
        const reached = tap.sent().includes(marker);
        if (want === 200) {
          t.equal(r.body, ok(marker), `${c.name}: answered by jumpgate`);
          t.ok(reached, `${c.name}: forwarded`);
        } else {
          t.notOk(reached, `${c.name}: not a byte of it reached jumpgate`);
          t.equal(await answered(), before, `${c.name}: jumpgate answered nothing`);
        }
      }
    });

    t.test('HTTP/1.0 from the client', async (t) => {
      const c = await RawConnection.open(front.port);
      t.teardown(() => c.close());
      c.write(rawPost(PATH, body('http10'), ['X-Probe: http10'], 'HTTP/1.0'));
      const r = await c.response(0);
      const line = forwardedHead(tap, 'http10')?.split('\r\n')[0];
      if (name === 'nginx') {
        t.equal(r.status, 200, 'nginx speaks HTTP/1.1 to jumpgate: a working call');
        t.equal(r.body, ok('http10'));
        t.equal(line, `POST ${PATH} HTTP/1.1`, 'forwarded as HTTP/1.1');
      } else {
        // HAProxy forwards the request's version as it came, and 2.6 has no directive to
        // change it; on uWS jumpgate's 505 reaches the client, Node's listener serves HTTP/1.0
        // (docs/http-compatibility.md "HTTP compatibility").
        if (serverEngine('auto').name === 'uws') t.equal(r.status, 505, "HAProxy forwards HTTP/1.0: jumpgate's 505");
        else t.equal(r.status, 200, "HAProxy forwards HTTP/1.0: Node's listener serves it");
        t.equal(line, `POST ${PATH} HTTP/1.0`, 'forwarded as HTTP/1.0');
      }
    });

    t.test('pipelined calls: all answered, in order (jumpgate alone closes the connection)', async (t) => {
      const c = await RawConnection.open(front.port);
      t.teardown(() => c.close());
      c.write(['p1', 'p2', 'p3'].map((m) => rawPost(PATH, body(m))).join(''));
      for (const [i, m] of ['p1', 'p2', 'p3'].entries()) t.equal((await c.response(i)).body, ok(m), `answer ${i + 1}`);
    });

    t.test('a WebSocket slotSubscribe', async (t) => {
      const ws = await openWs(`${front.url.replace('http', 'ws')}${PATH}/`);
      t.teardown(() => ws.close());
      ws.send({ jsonrpc: '2.0', id: 1, method: 'slotSubscribe' });
      const sub = (await ws.next((f) => f.id === 1)).result;
      t.type(sub, 'number', 'subscribed');
      const n = await ws.next((f) => f.method === 'slotNotification' && f.params?.subscription === sub);
      t.type(n.params.result.slot, 'number', 'slots arrive through the front');
    });
  });
}
