// Affinity keys as bytes on the wire (docs/interface.md "Public interface", code 7700): what uWS.js hands
// the gateway for header bytes from 0x80, keys that are not UTF-8, multi-byte keys and their
// node, the 40-byte limit, and the non-ASCII characters uWS drops at the ends of a value.
// Requests go over raw sockets: fetch and node:http refuse header values that are not latin1.

import { connect } from 'node:net';
import t from 'tap';
import { KeyMap } from '../../src/routing/keymap.js';
import { serverEngine } from '../../src/server/engine.js';
import { startHarness, TOKEN, type Harness } from '../helpers/gateway.js';

type Test = Parameters<Parameters<typeof t.test>[0]>[0];

const IDENTITY = '{"jsonrpc":"2.0","id":1,"method":"getIdentity"}';

/**
 * uWS trims a header value by comparing each `char` with 33: where `char` is signed every byte
 * from 0x80 goes too. Linux on ARM has an unsigned `char` (the arm64 build compares unsigned,
 * seen in its disassembly); everywhere else this build trims them.
 */
const ENGINE = serverEngine('auto');
const UWS_TRIMS_HIGH_BYTES = ENGINE.name === 'uws' && !(process.platform === 'linux' && (process.arch === 'arm64' || process.arch === 'arm'));

interface Answer {
  status: number;
  /** X-Service-Node of the answer, '' when none. */
  node: string;
  body: any;
}

/** One request over its own connection, the header lines given as bytes; resolves when the server closes. */
function send(port: number, head: string, lines: Buffer[], body: string): Promise<string> {
  const bytes = Buffer.concat([
    Buffer.from(head, 'latin1'),
    ...lines.map((l) => Buffer.concat([l, Buffer.from('\r\n')])),
    Buffer.from(`Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`),
  ]);
  return new Promise((resolve, reject) => {
    const sock = connect(port, '127.0.0.1', () => sock.write(bytes));
    const chunks: Buffer[] = [];
    const timer = setTimeout(() => {
      sock.destroy();
      reject(new Error('no answer within 5 s; got: ' + Buffer.concat(chunks).toString('latin1')));
    }, 5000);
    sock.on('data', (d: Buffer) => chunks.push(d));
    sock.on('error', () => {}); // the close below still reports what was read
    sock.on('close', () => {
      clearTimeout(timer);
      resolve(Buffer.concat(chunks).toString('utf8'));
    });
  });
}

const line = (name: string, value: Buffer | string): Buffer => Buffer.concat([Buffer.from(`${name}: `), Buffer.from(value)]);

/** POST getIdentity to the gateway with the key header `name` carrying exactly `key`. */
async function post(h: Harness, key: Buffer | string, mode: string | null = 'key', name = 'X-Service-Affinity-Key'): Promise<Answer> {
  const lines = [line(name, key)];
  if (mode !== null) lines.unshift(line('X-Service-Affinity', mode));
  const text = await send(h.gw.port, `POST /api-token/${TOKEN} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n`, lines, IDENTITY);
  const end = text.indexOf('\r\n\r\n');
  if (end < 0) throw new Error('no HTTP answer: ' + text);
  const node = /^x-service-node: *(.*)$/im.exec(text.slice(0, end))?.[1] ?? '';
  return { status: Number(text.split(' ')[1]), node: node.trim(), body: JSON.parse(text.slice(end + 4)) };
}

/** The node that owns the key's UTF-8 text while every node is healthy. */
function ownerOf(h: Harness, key: string): string {
  return h.gw.pool.nodes[new KeyMap(h.gw.pool.nodes).primary(h.gw.pool.slot(key))]!.id;
}

function refused(t: Test, a: Answer, reason: RegExp, what: string): void {
  t.equal(a.status, 400, `${what}: HTTP 400`);
  t.equal(a.body.error?.code, 7700, `${what}: 7700`);
  t.match(a.body.error?.data?.reason, reason, `${what}: reason`);
  t.equal(a.body.error?.data?.header, 'x-service-affinity-key', `${what}: header`);
}

function served(t: Test, a: Answer, node: string, what: string): void {
  t.equal(a.status, 200, `${what}: HTTP 200`);
  t.equal(a.body.result?.identity, node, `${what}: served by ${node}`);
  t.equal(a.node, node, `${what}: X-Service-Node`);
}

const hex = (s: string): number[] => [...s].map((c) => c.charCodeAt(0));

t.test(`what the ${ENGINE.name} listener hands over for header bytes from 0x80`, async (t) => {
  const seen: { header: string; each: string }[] = [];
  const app = ENGINE.app(null).any('/*', (res, req) => {
    let each = '';
    req.forEach((k, v) => {
      if (k === 'x-k') each = v;
    });
    seen.push({ header: req.getHeader('x-k'), each });
    res.end('ok');
  });
  const ls = await ENGINE.listen(app, '127.0.0.1', 0, true);
  if (ls === null) throw new Error('cannot listen');
  t.teardown(() => app.close());
  const port = ENGINE.localPort(ls);
  const probe = async (value: Buffer): Promise<{ header: string; each: string }> => {
    seen.length = 0;
    await send(port, 'POST / HTTP/1.1\r\nHost: 127.0.0.1\r\n', [line('X-K', value)], '');
    t.equal(seen.length, 1, 'the handler ran');
    return seen[0]!;
  };

  // Inside a value: getHeader gives one char per byte (latin1); uWS's forEach decodes UTF-8 with
  // U+FFFD, Node's gives latin1 there too.
  const mid = await probe(Buffer.from([0x61, 0xc3, 0xa9, 0xff, 0xed, 0xa0, 0x80, 0x62]));
  t.same(hex(mid.header), [0x61, 0xc3, 0xa9, 0xff, 0xed, 0xa0, 0x80, 0x62], 'getHeader: latin1, every byte kept');
  if (ENGINE.name === 'uws') t.equal(mid.each, 'aé\uFFFD\uFFFD\uFFFD\uFFFDb', 'forEach: UTF-8 with replacement characters');
  else t.same(hex(mid.each), [0x61, 0xc3, 0xa9, 0xff, 0xed, 0xa0, 0x80, 0x62], 'forEach: latin1, every byte kept');

  // At the ends: both trim spaces, and bytes from 0x80 where char is signed.
  const ends = await probe(Buffer.from(' éééaé '));
  const alone = await probe(Buffer.from('é'.repeat(20)));
  const invalid = await probe(Buffer.from([0xff, 0xfe]));
  if (UWS_TRIMS_HIGH_BYTES) {
    t.equal(ends.header, 'a', 'éééaé arrives as a');
    t.equal(ends.each, 'a', 'forEach sees the same');
    t.equal(alone.header, '', '20 × é arrives empty');
    t.equal(invalid.header, '', 'ff fe arrives empty');
  } else {
    t.equal(ends.header, Buffer.from('éééaé').toString('latin1'), 'éééaé arrives whole');
    t.equal(alone.header, Buffer.from('é'.repeat(20)).toString('latin1'), '20 × é arrives whole');
    t.same(hex(invalid.header), [0xff, 0xfe], 'ff fe arrives whole');
  }
});

t.test('bytes that are not UTF-8 inside a key: 7700 in every mode, under either header name', async (t) => {
  const h = await startHarness({ sims: [{}, {}] });
  t.teardown(() => h.close());
  const cases: [string, number[]][] = [
    ['invalid lead bytes ff fe', [0xff, 0xfe]],
    ['surrogate ed a0 80', [0xed, 0xa0, 0x80]],
    ['lone continuation byte 80', [0x80]],
    ['overlong c0 af', [0xc0, 0xaf]],
    ['overlong e0 80 af', [0xe0, 0x80, 0xaf]],
    ['above U+10FFFF f4 90 80 80', [0xf4, 0x90, 0x80, 0x80]],
    ['truncated e2 82', [0xe2, 0x82]],
    ['truncated f0 9f 98 before a valid character', [0xf0, 0x9f, 0x98, 0xc3, 0xa9]],
    ['latin1 é', [0xe9]],
  ];
  for (const [what, bytes] of cases) {
    const key = Buffer.from([0x61, ...bytes, 0x62]);
    for (const mode of ['key', 'default', 'node', null]) refused(t, await post(h, key, mode), /not valid UTF-8/, `${what} (${mode ?? 'no affinity header'})`);
    refused(t, await post(h, key, 'key', 'Service-Affinity-Key'), /not valid UTF-8/, `${what} (bare header)`);
  }
});

t.test('multi-byte keys: 200, the node of their UTF-8 text, every time', async (t) => {
  const h = await startHarness({ sims: [{}, {}, {}] });
  t.teardown(() => h.close());
  const keys = ['aéb', 'a漢b', 'bot-😀-1', 'a' + 'é'.repeat(19) + 'b', 'a' + '漢'.repeat(12) + 'bcd', 'k-€-€-k', 'a\uFFFDb'];
  const owners = new Set<string>();
  for (const key of keys) {
    const owner = ownerOf(h, key);
    owners.add(owner);
    for (let i = 0; i < 5; i++) served(t, await post(h, Buffer.from(key)), owner, `${key} #${i}`);
    served(t, await post(h, Buffer.from(key), 'key', 'Service-Affinity-Key'), owner, `${key} (bare header)`);
  }
  t.ok(owners.size > 1, `the keys spread over ${owners.size} nodes (the check can tell nodes apart)`);
});

t.test('40 bytes are a key, 41 are not', async (t) => {
  const h = await startHarness({ sims: [{}, {}] });
  t.teardown(() => h.close());
  const fits = ['k'.repeat(40), 'a' + 'é'.repeat(19) + 'b', 'a' + '漢'.repeat(12) + 'bcd', 'a' + '😀'.repeat(9) + 'bcd'];
  for (const key of fits) {
    t.equal(Buffer.byteLength(key), 40);
    served(t, await post(h, Buffer.from(key)), ownerOf(h, key), `40 bytes: ${key}`);
  }
  const over = ['k'.repeat(41), 'a' + 'é'.repeat(19) + 'bc', 'a' + '漢'.repeat(13) + 'b', 'a' + '😀'.repeat(9) + 'bcde'];
  for (const key of over) {
    t.equal(Buffer.byteLength(key), 41);
    for (const mode of ['key', 'default'])
      refused(t, await post(h, Buffer.from(key), mode), /^affinity key is 41 bytes; at most 40 are allowed$/, `41 bytes (${mode}): ${key}`);
  }
});

t.test('non-ASCII characters at the ends of a key are not part of it', async (t) => {
  const h = await startHarness({ sims: [{}, {}, {}], config: { affinity: { keyRate: 0.001, keyBurst: 3 } } });
  t.teardown(() => h.close());
  const a = ownerOf(h, 'a');

  // éééaé is the key "a": the same node and the same hot-key bucket.
  served(t, await post(h, 'a'), a, 'a');
  served(t, await post(h, Buffer.from('éééaé')), a, 'éééaé');
  served(t, await post(h, Buffer.from('éa')), a, 'éa');
  const hot = await post(h, Buffer.from('aé'));
  t.equal(hot.status, 429, "aé takes from a's bucket, now empty");
  t.equal(hot.body.error?.data?.scope, 'affinity-key');
  served(t, await post(h, Buffer.from('漢b漢c漢')), ownerOf(h, 'b漢c'), 'only the ends go: 漢b漢c漢 is b漢c');

  // A key of only non-ASCII characters (valid or not) is empty: refused where the key is used,
  // ignored where it is not.
  const empties: [string, Buffer][] = [
    ['20 × é (40 valid bytes)', Buffer.from('é'.repeat(20))],
    ['漢', Buffer.from('漢')],
    ['ff fe', Buffer.from([0xff, 0xfe])],
    ['ed a0 80', Buffer.from([0xed, 0xa0, 0x80])],
    ['80', Buffer.from([0x80])],
    ['c0 af', Buffer.from([0xc0, 0xaf])],
    ['spaces around é', Buffer.from(' é ')],
  ];
  for (const [what, key] of empties) {
    refused(t, await post(h, key, 'key'), /^affinity key is empty/, `${what} (key)`);
    refused(t, await post(h, key, 'key', 'Service-Affinity-Key'), /^affinity key is empty/, `${what} (key, bare header)`);
    for (const mode of ['default', 'node', null]) t.equal((await post(h, key, mode)).status, 200, `${what} (${mode ?? 'no affinity header'}): ignored`);
  }
});
