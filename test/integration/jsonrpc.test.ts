// JSON-RPC handling through the gateway (docs/interface.md "Public interface", docs/routing.md "Affinity and rate limits"): parse errors, invalid requests,
// batch limits, invalid elements in place, notifications, order across split batches, ids
// and u64 results byte-for-byte, node/key affinity keeping a batch whole, large bodies.

import t from 'tap';
import { PLANES, startHarness, TOKEN, type Harness } from '../helpers/gateway.js';
import { arrayElements, ID_KEY, memberSpan, trimmedSpan } from '../../src/rpc/scan.js';

type Test = Parameters<Parameters<typeof t.test>[0]>[0];

const PARSE_ERROR = '{"jsonrpc":"2.0","error":{"code":-32700,"message":"Parse error"},"id":null}';
const invalid = (id: string): string => `{"jsonrpc":"2.0","error":{"code":-32600,"message":"Invalid Request"},"id":${id}}`;
const U64 = '18446744073709551615';
const PUBKEY = 'So11111111111111111111111111111111111111112';
// The slot advances so rarely that answers carrying it are stable for the test's lifetime.
const STILL = { slotMs: 1_000_000_000 };

async function harnessOn(workers: number, t: Test, opts: Parameters<typeof startHarness>[0] = {}): Promise<Harness> {
  const h = await startHarness({ ...opts, workers, config: { health: { intervalMs: 60_000 }, ...(opts.config ?? {}) } });
  t.teardown(() => h.close());
  return h;
}

/** Raw texts of the elements of a JSON array. */
function rawElements(text: string): string[] {
  const buf = Buffer.from(text);
  const [s, e] = trimmedSpan(buf);
  if (buf[s] !== 0x5b) throw new Error('not an array: ' + text.slice(0, 200));
  const spans: number[] = [];
  const n = arrayElements(buf, s, e, spans);
  return Array.from({ length: n }, (_, i) => buf.toString('utf8', spans[2 * i], spans[2 * i + 1]));
}

/** Raw text of the top-level id of one response object. */
function rawIdOf(text: string): string | null {
  const buf = Buffer.from(text);
  const [s, e] = trimmedSpan(buf);
  const out = new Int32Array(2);
  return memberSpan(buf, s, e, ID_KEY, out) ? buf.toString('utf8', out[0], out[1]) : null;
}

const totalOf = (h: Harness, k: 'requests' | 'calls'): number => h.sims.reduce((n, s) => n + s.stats[k], 0);

async function direct(url: string, body: string): Promise<string> {
  const r = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
  return r.text();
}

const req = (id: string, method: string, params?: string): string =>
  `{"jsonrpc":"2.0","id":${id},"method":"${method}"${params === undefined ? '' : ',"params":' + params}}`;
const note = (method: string): string => `{"jsonrpc":"2.0","method":"${method}"}`;

/** Run with the shipped default of one worker thread too (each start costs a thread): the request path's main shapes. */
const ON_WORKERS = new Set([
  'invalid JSON: HTTP 200 with the exact parse-error body and the offset',
  'invalid requests: -32600 with the id echoed when readable, else null',
  'a batch of 120 mixed calls split over 3 nodes keeps request order',
  'ids come back byte-for-byte through single requests and split batches',
  'large bodies (~600 KB) are served, batch and single',
]);

for (const plane of PLANES) {
  const harness = (t: Test, opts: Parameters<typeof startHarness>[0] = {}): Promise<Harness> => harnessOn(plane.workers, t, opts);
  const check = (name: string, fn: (t: Test) => Promise<void>): void => {
    if (plane.workers === 0 || ON_WORKERS.has(name)) t.test(`${plane.name}: ${name}`, fn);
  };

  check('invalid JSON: HTTP 200 with the exact parse-error body and the offset', async (t) => {
    const h = await harness(t);
    const before = totalOf(h, 'requests');
    const bodies: [string, number][] = [
      ['{', 1],
      ['[', 1],
      ['nul', 3],
      ['{"jsonrpc":"2.0","id":1,"method":"getSlot"', 42],
      ['[1,]', 3],
      ["{'a':1}", 1],
      ['{"a":1}{"b":2}', 7],
      ['', 0],
    ];
    for (const [body, offset] of bodies) {
      const r = await h.post(body);
      t.equal(r.status, 200, JSON.stringify(body));
      // Agave's parse error, with where the body stops being JSON (docs/errors.md).
      t.equal(r.text, PARSE_ERROR.replace('"Parse error"', `"Parse error","data":{"offset":${offset}}`), JSON.stringify(body));
      t.equal(r.headers.get('content-type'), 'application/json');
      t.equal(r.headers.get('x-service-node'), null, 'answered by the gateway');
    }
    t.equal(totalOf(h, 'requests'), before, 'nothing reached a node');
  });

  check('invalid requests: -32600 with the id echoed when readable, else null', async (t) => {
    const h = await harness(t);
    const before = totalOf(h, 'requests');
    const cases: [string, string][] = [
      ['42', 'null'],
      ['"getSlot"', 'null'],
      ['null', 'null'],
      ['true', 'null'],
      ['{}', 'null'],
      ['{"jsonrpc":"2.0","id":"x"}', '"x"'],
      ['{"jsonrpc":"2.0","id":5,"method":5}', '5'],
      ['{"jsonrpc":"1.0","id":12345678901234567890,"method":"getSlot"}', '12345678901234567890'],
      ['{"id":"no-version","method":"getSlot"}', '"no-version"'],
      ['{"jsonrpc":"2.0","id":{"a":1},"method":"getSlot"}', 'null'],
      ['{"jsonrpc":"2.0","id":[7],"method":"getSlot"}', 'null'],
      ['{"jsonrpc":"2.0","id":false,"method":"getSlot"}', 'null'],
    ];
    for (const [body, id] of cases) {
      const r = await h.post(body);
      t.equal(r.status, 200, body);
      t.equal(r.text, invalid(id), body);
    }
    const empty = await h.post('[]');
    t.equal(empty.status, 200);
    t.equal(empty.text, invalid('null'), '[] is one -32600 object, not an array');
    t.equal(totalOf(h, 'requests'), before, 'nothing reached a node');
  });

  check('batch over limits.maxBatch is 413 with code 7701; at the limit it is served', async (t) => {
    const h = await harness(t, { config: { limits: { maxBatch: 5 } } });
    const batch = (n: number): string => '[' + Array.from({ length: n }, (_, i) => req(String(i), 'getSlot')).join(',') + ']';
    const before = totalOf(h, 'requests');
    const over = await h.post(batch(6));
    t.equal(over.status, 413);
    const body = JSON.parse(over.text);
    t.equal(body.jsonrpc, '2.0');
    t.equal(body.error.code, 7701);
    t.type(body.error.message, 'string');
    t.equal(body.id, null);
    t.equal(totalOf(h, 'requests'), before, 'not forwarded');
    const at = await h.post(batch(5));
    t.equal(at.status, 200);
    t.equal(JSON.parse(at.text).length, 5);
  });

  check('invalid batch elements are answered in place; notifications are forwarded without an entry', async (t) => {
    const h = await harness(t, { sims: [STILL] });
    const calls0 = totalOf(h, 'calls');
    const getVersion0 = h.sims[0]!.stats.byMethod.get('getVersion') ?? 0;
    const els = [
      req('"a"', 'getIdentity'),
      '17',
      note('getVersion'),
      '{"jsonrpc":"2.0","id":"b"}',
      req('"c"', 'getIdentity'),
      '{"jsonrpc":"1.0","id":"d","method":"getSlot"}',
      '[]',
      req('"e"', 'getIdentity'),
    ];
    const r = await h.post('[' + els.join(',') + ']');
    t.equal(r.status, 200);
    const entries = rawElements(r.text);
    t.equal(entries.length, 7, 'one entry per element except the notification');
    const identity = '{"jsonrpc":"2.0","result":{"identity":"n0"},"id":';
    t.same(entries, [identity + '"a"}', invalid('null'), invalid('"b"'), identity + '"c"}', invalid('"d"'), invalid('null'), identity + '"e"}']);
    t.equal(totalOf(h, 'calls') - calls0, 4, 'three requests and the notification reached the node, invalid elements did not');
    t.equal((h.sims[0]!.stats.byMethod.get('getVersion') ?? 0) - getVersion0, 1, 'the notification was forwarded once');
  });

  check('all-notification batch and single notification: HTTP 200, empty body, forwarded once', async (t) => {
    const h = await harness(t, { sims: [{}, {}] });
    for (const body of [note('getVersion'), '[' + note('getVersion') + ',' + note('getVersion') + ']']) {
      const calls0 = totalOf(h, 'calls');
      const r = await h.post(body);
      t.equal(r.status, 200, body);
      t.equal(r.text, '', 'empty body');
      t.equal(totalOf(h, 'calls') - calls0, body.startsWith('[') ? 2 : 1, 'forwarded exactly once');
    }
  });

  check('a batch of 120 mixed calls split over 3 nodes keeps request order', async (t) => {
    const h = await harness(t, { sims: [STILL, STILL, STILL], config: { routing: { upstreamBatch: 7 } } });
    const els: string[] = [];
    const want: ({ id: string; method: string } | { invalid: string } | null)[] = [];
    const methods = ['getIdentity', 'getSlot', 'getBalance', 'getAccountInfo', 'getVersion', 'getBlockHeight', 'noSuchMethod'];
    for (let i = 0; i < 120; i++) {
      if (i % 12 === 5) {
        els.push(note('getHealth'));
        want.push(null);
      } else if (i % 12 === 9) {
        els.push(`{"jsonrpc":"2.0","id":"bad-${i}"}`);
        want.push({ invalid: `"bad-${i}"` });
      } else {
        const method = methods[i % methods.length]!;
        const id = i % 3 === 0 ? `"${i}"` : String(1000 + i);
        els.push(req(id, method, method === 'getBalance' || method === 'getAccountInfo' ? `["${PUBKEY}"]` : undefined));
        want.push({ id, method });
      }
    }
    const calls0 = totalOf(h, 'calls');
    const r = await h.post('[' + els.join(',') + ']');
    t.equal(r.status, 200);
    const entries = rawElements(r.text);
    const expected = want.filter((w) => w !== null);
    t.equal(entries.length, expected.length);
    for (let k = 0; k < expected.length; k++) {
      const w = expected[k]!;
      const e = entries[k]!;
      if ('invalid' in w) {
        t.equal(e, invalid(w.invalid), `entry ${k}: invalid element in place`);
        continue;
      }
      t.equal(rawIdOf(e), w.id, `entry ${k}: id`);
      const parsed = JSON.parse(e);
      if (w.method === 'getIdentity') t.match(parsed.result, { identity: /^n[012]$/ });
      else if (w.method === 'getSlot' || w.method === 'getBlockHeight') t.type(parsed.result, 'number');
      else if (w.method === 'getBalance') t.type(parsed.result.value, 'number');
      else if (w.method === 'getAccountInfo') t.ok(e.includes(`"rentEpoch":${U64}`), `entry ${k}: u64 kept`);
      else if (w.method === 'getVersion') t.ok('solana-core' in parsed.result);
      else t.equal(parsed.error.code, -32601, `entry ${k}: the node's own error passes through`);
    }
    t.equal(totalOf(h, 'calls') - calls0, 110, 'requests and notifications forwarded, invalid elements not');
    const nodes = (r.headers.get('x-service-node') ?? '').split(',').filter((s) => s !== '');
    t.ok(nodes.length >= 2, `served by several nodes: ${nodes.join(',')}`);
    t.same(new Set(nodes).size, nodes.length, 'each node listed once');
    for (const n of nodes) t.match(n, /^n[012]$/);
  });

  check('ids come back byte-for-byte through single requests and split batches', async (t) => {
    const h = await harness(t, { sims: [{}, {}, {}], config: { routing: { upstreamBatch: 2 } } });
    const ids = ['"7"', '7', '12345678901234567890', 'null', '"é\\"😀\\\\"', '-0.0', '1E3', '"7"', '7'];
    for (const id of ids) {
      const r = await h.post(`{"method":"getSlot","id":${id},"jsonrpc":"2.0"}`);
      t.equal(r.status, 200);
      t.equal(rawIdOf(r.text), id, `single ${id}`);
    }
    const r = await h.post('[' + ids.map((id) => req(id, 'getSlot')).join(',') + ']');
    const entries = rawElements(r.text);
    t.same(entries.map(rawIdOf), ids, 'batch ids in order, duplicates included');
    for (const id of ids) t.ok(r.text.includes(`"id":${id}}`), `raw text has ${id}`);
    const parsed = JSON.parse(r.text);
    t.equal(parsed[0].id, '7');
    t.equal(parsed[1].id, 7);
  });

  check('rentEpoch u64 survives single and batch answers', async (t) => {
    const h = await harness(t, { sims: [{}, {}], config: { routing: { upstreamBatch: 1 } } });
    const single = await h.post(req('1', 'getAccountInfo', `["${PUBKEY}"]`));
    t.match(single.text, new RegExp(`"rentEpoch":${U64}[,}]`));
    const batch = await h.post('[' + [1, 2, 3].map((i) => req(String(i), 'getAccountInfo', `["${PUBKEY}"]`)).join(',') + ']');
    t.equal((batch.text.match(new RegExp(`"rentEpoch":${U64}[,}]`, 'g')) ?? []).length, 3);
    t.notOk(batch.text.includes('18446744073709552000'), 'never re-encoded as a double');
  });

  check('a single request is answered byte-for-byte as the node answered it', async (t) => {
    const h = await harness(t, { sims: [STILL, STILL] });
    const bodies = [
      req('"x"', 'getIdentity'),
      ' {  "id" : 12345678901234567890 ,\n "jsonrpc":"2.0", "method" : "getAccountInfo", "params":["' + PUBKEY + '",{"encoding":"base64"}] } ',
      req('null', 'getVersion'),
      req('3', 'noSuchMethod'),
      req('"\\u00e9"', 'getBalance', '[]'),
    ];
    for (const body of bodies) {
      const r = await h.post(body);
      const node = r.headers.get('x-service-node');
      t.match(node, /^n[01]$/, 'one node named');
      const sim = h.sims.find((s) => s.id === node)!;
      t.equal(r.text, await direct(sim.url, body), body.slice(0, 60));
    }
  });

  check('node affinity sends a batch to one node, unsplit; key affinity is accepted', async (t) => {
    const h = await harness(t, { sims: [{}, {}, {}], config: { routing: { upstreamBatch: 2 } } });
    const batch = '[' + Array.from({ length: 12 }, (_, i) => req(String(i), 'getIdentity')).join(',') + ']';
    for (const affinity of ['node', 'NODE', '"node"']) {
      const before = totalOf(h, 'requests');
      const r = await h.post(batch, { headers: { 'x-service-affinity': affinity } });
      t.equal(r.status, 200);
      t.equal(totalOf(h, 'requests') - before, 1, `${affinity}: one upstream request`);
      const node = r.headers.get('x-service-node')!;
      t.match(node, /^n[012]$/, 'exactly one node named');
      const parsed = JSON.parse(r.text) as { id: number; result: { identity: string } }[];
      t.same(
        parsed.map((e) => e.id),
        Array.from({ length: 12 }, (_, i) => i),
      );
      t.ok(
        parsed.every((e) => e.result.identity === node),
        'every call answered by that node',
      );
    }

    // default affinity does split (the contrast that makes the checks above meaningful)
    const before = totalOf(h, 'requests');
    await h.post(batch);
    t.equal(totalOf(h, 'requests') - before, 6, 'default routing: 12 calls in sub-batches of 2');

    const key = await h.post(batch, { headers: { 'x-service-affinity': 'key', 'x-service-affinity-key': 'bot-42' } });
    t.equal(key.status, 200);
    t.match(key.headers.get('x-service-node'), /^n[012]$/, 'a keyed batch goes to one node');
    const single = await h.post(req('1', 'getIdentity'), { headers: { 'x-service-affinity': 'key', 'x-service-affinity-key': 'bot-42' } });
    t.equal(single.status, 200);
    t.match(JSON.parse(single.text).result.identity, /^n[012]$/);
    const byIp = await h.post(req('1', 'getIdentity'), { headers: { 'x-service-affinity': 'Key' } });
    t.equal(byIp.status, 200, 'key mode without a key (IP affinity) is accepted');
  });

  check('large bodies (~600 KB) are served, batch and single', async (t) => {
    const h = await harness(t, { sims: [{}, {}, {}], config: { routing: { upstreamBatch: 50 } } });
    const pad = 'x'.repeat(1100);
    const els = Array.from({ length: 500 }, (_, i) => req(String(i), 'getBalance', `["${PUBKEY}",{"pad":"${pad}"}]`));
    const body = '[' + els.join(',') + ']';
    t.ok(body.length > 580_000 && body.length < 1_048_576, `${body.length} bytes`);
    const r = await h.post(body);
    t.equal(r.status, 200);
    const parsed = JSON.parse(r.text) as { id: number; result: { value: number } }[];
    t.equal(parsed.length, 500);
    t.ok(
      parsed.every((e, i) => e.id === i && typeof e.result.value === 'number'),
      'all answered, in order',
    );

    const single = await h.post(req('"big"', 'getIdentity', `["${'y'.repeat(600_000)}"]`));
    t.equal(single.status, 200);
    t.equal(JSON.parse(single.text).id, 'big');
    t.match(JSON.parse(single.text).result, { identity: /^n[012]$/ });
  });

  check('the token in the path works with every RPC shape', async (t) => {
    const h = await harness(t);
    const r = await h.post(req('1', 'getHealth'), { path: `/api-key/${TOKEN}/` });
    t.equal(r.text, '{"jsonrpc":"2.0","result":"ok","id":1}');
  });
}
