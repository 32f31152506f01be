// Request validation (src/rpc/analyze.ts) and raw-byte batch split/merge (src/rpc/batch.ts):
// every -32700/-32600 case of docs/interface.md "Public interface", batch plans, sub-batches that rewrite only the id,
// and merged answers that keep order and splice the client's id bytes back. A seeded
// property test runs random batches through a simulated node that answers out of order.

import t from 'tap';
import { planOf } from '../../helpers/batch-plan.js';
import {
  A_BATCH,
  A_BATCH_TOO_LARGE,
  A_PARSE_ERROR,
  A_REPLY,
  A_SINGLE,
  analyze,
  KIND_INVALID,
  KIND_NOTIFICATION,
  KIND_REQUEST,
  rawId,
} from '../../../src/rpc/analyze.js';
import { syntaxErrorOffset } from '../../../src/rpc/syntax-offset.js';
import { assembleBatch, buildSubBatch, forwardable, type SubOutcome } from '../../../src/rpc/batch.js';
import { Errors } from '../../../src/errors.js';
import { arrayElements, ID_KEY, memberSpan, trimmedSpan } from '../../../src/rpc/scan.js';
import { rng } from '../../../src/tools/rng.js';

const PARSE_ERROR = '{"jsonrpc":"2.0","error":{"code":-32700,"message":"Parse error"},"id":null}';
const invalid = (id: string): string => `{"jsonrpc":"2.0","error":{"code":-32600,"message":"Invalid Request"},"id":${id}}`;
const U64 = '18446744073709551615';

const b = (s: string): Buffer => Buffer.from(s, 'utf8');

/** Texts of the top-level elements of a JSON array text. */
function rawElements(text: string | Buffer): string[] {
  const buf = typeof text === 'string' ? b(text) : text;
  const [s, e] = trimmedSpan(buf);
  const spans: number[] = [];
  const n = arrayElements(buf, s, e, spans);
  return Array.from({ length: n }, (_, i) => buf.toString('utf8', spans[2 * i], spans[2 * i + 1]));
}

/** Raw text of the top-level `id` of an object text, or null. */
function rawIdText(text: string): string | null {
  const buf = b(text);
  const out = new Int32Array(2);
  const [s, e] = trimmedSpan(buf);
  return memberSpan(buf, s, e, ID_KEY, out) ? buf.toString('utf8', out[0], out[1]) : null;
}

// ---- analyze -------------------------------------------------------------------------------

t.test('analyze: invalid JSON is a -32700 reply with id null and where the body stops being JSON', async (t) => {
  // [body, offset of the first byte that is not JSON (the length when it ends early)]
  const bodies: [string, number][] = [
    ['', 0],
    [' ', 1],
    ['{', 1],
    ['[', 1],
    ['[1,]', 3],
    ['{"a":1,}', 7],
    ['{"a":1}x', 7],
    ['{"a":1}{"b":2}', 7],
    ['nul', 3],
    ["{'id':1}", 1],
    ['{"id":01}', 7],
    ['{"id":1 "method":"m"}', 8],
    ['[{"jsonrpc":"2.0","id":1,"method":"m"}', 38],
    ['undefined', 0],
    ['NaN', 0],
    ['{"a":"\\x"}', 7],
    ['{"a":"\n"}', 6],
    ['{"a":1.}', 7],
  ];
  for (const [body, offset] of bodies) {
    const a = analyze(b(body), 1000);
    t.equal(a.type, A_PARSE_ERROR, JSON.stringify(body));
    t.same(
      JSON.parse(a.reply),
      { ...(JSON.parse(PARSE_ERROR) as object), error: { code: -32700, message: 'Parse error', data: { offset } } },
      JSON.stringify(body),
    );
  }
  // a byte that is not UTF-8 outside a string cannot be JSON text
  const a = analyze(Buffer.from([0x7b, 0x22, 0x69, 0x64, 0x22, 0x3a, 0x31, 0xff, 0x7d]), 1000);
  t.match(JSON.parse(a.reply), { error: { code: -32700, data: { offset: 7 } } }, 'invalid UTF-8');
  // inside a string, the offset finder points at the first byte that is not UTF-8
  for (const [bytes, offset] of [
    [[0x22, 0xc3, 0x28, 0x22], 2],
    [[0x22, 0xed, 0xa0, 0x80, 0x22], 2],
    [[0x22, 0xc0, 0x80, 0x22], 1],
    [[0x22, 0xf0, 0x9f, 0x98], 4],
  ] as [number[], number][])
    t.equal(syntaxErrorOffset(Buffer.from(bytes)), offset, 'not UTF-8 at ' + offset);
  t.equal(syntaxErrorOffset(b('{"a":"é€😀","b":[1,-2.5e+3,true,false,null,{}]}')), -1, 'valid JSON has no offset');
});

t.test('analyze: single -32600 cases, id echoed byte-for-byte when readable', async (t) => {
  const cases: [string, string][] = [
    ['5', 'null'],
    ['"str"', 'null'],
    ['null', 'null'],
    ['true', 'null'],
    ['{}', 'null'],
    ['{"jsonrpc":"2.0","id":1}', '1'],
    ['{"jsonrpc":"2.0","id":"x","method":5}', '"x"'],
    ['{"jsonrpc":"2.0","id":"x","method":null}', '"x"'],
    ['{"jsonrpc":"2.0","id":"x","method":["getSlot"]}', '"x"'],
    ['{"jsonrpc":"1.0","id":7,"method":"getSlot"}', '7'],
    ['{"id":"7","method":"getSlot"}', '"7"'],
    ['{"jsonrpc":2.0,"id":7,"method":"getSlot"}', '7'],
    ['{"jsonrpc":"2.0 ","id":7,"method":"getSlot"}', '7'],
    ['{"jsonrpc":"1.0","id":12345678901234567890,"method":"getSlot"}', '12345678901234567890'],
    ['{"jsonrpc":"1.0","id":1.50,"method":"getSlot"}', '1.50'],
    ['{"jsonrpc":"1.0","id":"a\\"b\\\\","method":"getSlot"}', '"a\\"b\\\\"'],
    ['{"jsonrpc":"1.0","id":"é😀","method":"getSlot"}', '"é😀"'],
    ['{"jsonrpc":"1.0","id":null,"method":"getSlot"}', 'null'],
    ['  {\n "jsonrpc" : "1.0" ,\n "id" :\t"spaced" }  ', '"spaced"'],
    ['{"jsonrpc":"2.0","id":{"a":1},"method":"getSlot"}', 'null'],
    ['{"jsonrpc":"2.0","id":[1],"method":"getSlot"}', 'null'],
    ['{"jsonrpc":"2.0","id":true,"method":"getSlot"}', 'null'],
    ['{"jsonrpc":"2.0","id":3,"method":"getSlot","params":5}', '3'],
    ['{"jsonrpc":"2.0","id":3,"method":"getSlot","params":"x"}', '3'],
    ['{"jsonrpc":"2.0","id":3,"method":"getSlot","params":null}', '3'],
  ];
  for (const [body, id] of cases) {
    const a = analyze(b(body), 1000);
    t.equal(a.type, A_REPLY, body);
    t.equal(a.reply, invalid(id), body);
  }
});

t.test('analyze: empty batch is one -32600 object, not an array', async (t) => {
  for (const body of ['[]', ' [ \n\t ] ']) {
    const a = analyze(b(body), 1000);
    t.equal(a.type, A_REPLY);
    t.equal(a.reply, invalid('null'));
    t.notOk(a.reply.startsWith('['));
  }
});

t.test('analyze: valid single requests and notifications', async (t) => {
  const one = analyze(b('{"jsonrpc":"2.0","id":1,"method":"getSlot"}'), 1000);
  t.equal(one.type, A_SINGLE);
  t.equal(one.method, 'getSlot');
  t.equal(one.notification, false);
  const withParams = analyze(b('{"method":"getBalance","params":{"a":[1]},"jsonrpc":"2.0","id":"q"}'), 1000);
  t.equal(withParams.type, A_SINGLE);
  t.equal(withParams.method, 'getBalance');
  const nullId = analyze(b('{"jsonrpc":"2.0","id":null,"method":"getSlot"}'), 1000);
  t.equal(nullId.notification, false, 'id null is a request, not a notification');
  const note = analyze(b('{"jsonrpc":"2.0","method":"getSlot","params":[]}'), 1000);
  t.equal(note.type, A_SINGLE);
  t.equal(note.notification, true);
});

t.test('analyze: batch limit counts every element', async (t) => {
  const el = '{"jsonrpc":"2.0","id":1,"method":"m"}';
  t.equal(analyze(b(`[${Array(5).fill(el).join(',')}]`), 5).type, A_BATCH, 'at the limit');
  t.equal(analyze(b(`[${Array(6).fill(el).join(',')}]`), 5).type, A_BATCH_TOO_LARGE, 'one over');
  t.equal(analyze(b(`[${Array(6).fill('1').join(',')}]`), 5).type, A_BATCH_TOO_LARGE, 'invalid elements count too');
});

t.test('analyze: batch plan kinds, methods, spans and id spans', async (t) => {
  const els = [
    '{"jsonrpc":"2.0","id":"7","method":"getSlot"}',
    ' { "jsonrpc" : "2.0" , "method" : "getHealth" } ',
    '5',
    '{"jsonrpc":"2.0","id":12345678901234567890,"method":"getBalance","params":["k",{"id":3}]}',
    '{"jsonrpc":"1.0","id":"bad-version","method":"x"}',
    '{"jsonrpc":"2.0","id":{"o":1},"method":"x"}',
    '{"jsonrpc":"2.0","id":null,"method":"getIdentity"}',
    '[]',
    '{"jsonrpc":"2.0","id":"a\\"]b","method":"é"}',
  ];
  const body = b('[' + els.join(',') + '\n]');
  const plan = planOf(body);
  t.equal(plan.count, els.length);
  t.same([...plan.kinds], [KIND_REQUEST, KIND_NOTIFICATION, KIND_INVALID, KIND_REQUEST, KIND_INVALID, KIND_INVALID, KIND_REQUEST, KIND_INVALID, KIND_REQUEST]);
  t.same(plan.methods, ['getSlot', 'getHealth', '', 'getBalance', '', '', 'getIdentity', '', 'é']);
  for (let i = 0; i < els.length; i++) t.equal(body.toString('utf8', plan.spans[2 * i], plan.spans[2 * i + 1]), els[i]!.trim(), `span ${i}`);
  const ids = Array.from({ length: els.length }, (_, i) => rawId(body, plan, i));
  t.same(ids, ['"7"', 'null', 'null', '12345678901234567890', '"bad-version"', 'null', 'null', 'null', '"a\\"]b"']);
  t.equal(plan.idSpans[2], -1, 'notification has no id span');
  t.equal(plan.idSpans[10], -1, 'unusable id type has no id span');
  t.ok(plan.idSpans[12]! >= 0, 'null id has a span');
  t.same([...forwardable(plan)], [0, 1, 3, 6, 8], 'requests and notifications go upstream, invalid elements do not');
});

// ---- buildSubBatch -------------------------------------------------------------------------

t.test('buildSubBatch: ids become positions, everything else is byte-for-byte', async (t) => {
  const els = [
    '{"jsonrpc":"2.0","id":"7","method":"getSlot","params":[{"commitment":"processed"}]}',
    '1',
    '{ "params" : [ "id", {"id":"nested"} , "\\"id\\":9" ] , "id" : 12345678901234567890 , "jsonrpc":"2.0","method":"getBalance"}',
    '{"jsonrpc":"2.0","method":"notify","params":{"id":1,"big":' + U64 + '}}',
    '{"jsonrpc":"2.0","method":"getAccountInfo","id":null,"params":["So1111",{"encoding":"base64","x":"é😀\\u00e9"}]}',
  ];
  const body = b('[' + els.join(' ,\n ') + ']');
  const plan = planOf(body);
  const order = forwardable(plan);
  t.same([...order], [0, 2, 3, 4]);

  const whole = buildSubBatch(body, plan, order, 0, order.length).toString('utf8');
  const expected = [
    els[0]!.replace('"id":"7"', '"id":0'),
    els[2]!.replace('"id" : 12345678901234567890', '"id" : 2'),
    els[3]!,
    els[4]!.replace('"id":null', '"id":4'),
  ];
  t.equal(whole, '[' + expected.join(',') + ']');
  t.same(
    JSON.parse(whole).map((e: { id?: unknown }) => e.id),
    [0, 2, undefined, 4],
  );

  // params bytes are the same bytes as in the client's body
  const paramsOf = (text: string): string => {
    const buf = b(text);
    const out = new Int32Array(2);
    if (!memberSpan(buf, 0, buf.length, b('"params"'), out)) throw new Error('no params');
    return buf.toString('utf8', out[0], out[1]);
  };
  const sent = rawElements(whole);
  t.equal(paramsOf(sent[1]!), paramsOf(els[2]!));
  t.equal(paramsOf(sent[2]!), paramsOf(els[3]!));
  t.ok(sent[2]!.includes(U64), 'u64 in params kept');
  t.equal(paramsOf(sent[3]!), paramsOf(els[4]!));

  const part = buildSubBatch(body, plan, order, 1, 3).toString('utf8');
  t.equal(part, '[' + expected[1] + ',' + expected[2] + ']', 'a range of the order');
  t.equal(buildSubBatch(body, plan, order, 3, 4).toString('utf8'), '[' + expected[3] + ']', 'one element stays an array');
});

// ---- assembleBatch -------------------------------------------------------------------------

/** A node's answer element for position `pos` (ids upstream are positions). */
const answer = (pos: number, result: string): string => `{"jsonrpc":"2.0","result":${result},"id":${pos}}`;

function ok(from: number, to: number, response: string): SubOutcome {
  return { from, to, response: b(response), error: null, errorData: null };
}

t.test('assembleBatch: keeps request order and splices the raw client ids', async (t) => {
  const ids = ['"7"', '7', '12345678901234567890', 'null', '"7"', '7', '"é\\"😀"', '-0.0', '1e3'];
  const body = b('[' + ids.map((id, i) => `{"jsonrpc":"2.0","id":${id},"method":"m${i}"}`).join(',') + ']');
  const plan = planOf(body);
  const order = forwardable(plan);
  // two sub-batches, each answered in reverse order
  const r1 = '[' + [3, 2, 1, 0].map((p) => answer(p, `{"p":${p},"rentEpoch":${U64}}`)).join(',') + ']';
  const r2 = ' [\n' + [8, 7, 6, 5, 4].map((p) => answer(p, `{"p":${p}}`)).join(' ,\n') + ' ]\n';
  for (const outcomes of [
    [ok(0, 4, r1), ok(4, 9, r2)],
    [ok(4, 9, r2), ok(0, 4, r1)],
  ]) {
    const { merged, answered, errors } = assembleBatch(body, plan, order, outcomes);
    t.equal(answered, true);
    t.equal(errors, null, 'no element answered with an error');
    const text = merged!.toString('utf8');
    const entries = rawElements(text);
    t.equal(entries.length, ids.length);
    for (let i = 0; i < ids.length; i++) {
      t.equal(rawIdText(entries[i]!), ids[i], `position ${i} carries the client's raw id`);
      t.match(entries[i]!, new RegExp(`"result":\\{"p":${i}[,}]`), `position ${i} carries its own result`);
    }
    t.equal((text.match(new RegExp(U64, 'g')) ?? []).length, 4, 'u64 results kept byte-for-byte');
    t.equal(JSON.parse(text)[0].id, '7', 'string "7" stays a string');
    t.equal(JSON.parse(text)[1].id, 7, 'number 7 stays a number');
    t.ok(text.includes('"id":12345678901234567890}'), '20-digit id keeps every digit');
  }
});

t.test('assembleBatch: one error object for a whole sub-batch answers each of its calls', async (t) => {
  const body = b(
    '[{"jsonrpc":"2.0","id":"a","method":"m"},{"jsonrpc":"2.0","id":2,"method":"m"},{"jsonrpc":"2.0","method":"note"},{"jsonrpc":"2.0","id":"c","method":"m"}]',
  );
  const plan = planOf(body);
  const order = forwardable(plan);
  const unhealthy = '{"jsonrpc":"2.0","error":{"code":-32005,"message":"Node is unhealthy","data":{}},"id":null}';
  const { merged, answered, errors } = assembleBatch(body, plan, order, [ok(0, 3, unhealthy), ok(3, 4, '[' + answer(3, '"fine"') + ']')]);
  t.equal(answered, true);
  t.same([...errors!], [1, 1, 0, 0], "the node's error answers both requests; the notification is no answer");
  const text = merged!.toString('utf8');
  t.equal(
    text,
    '[' +
      '{"jsonrpc":"2.0","error":{"code":-32005,"message":"Node is unhealthy","data":{}},"id":"a"},' +
      '{"jsonrpc":"2.0","error":{"code":-32005,"message":"Node is unhealthy","data":{}},"id":2},' +
      '{"jsonrpc":"2.0","result":"fine","id":"c"}' +
      ']',
  );
});

t.test('assembleBatch: an element the node left out becomes 7502 in its place', async (t) => {
  const body = b('[{"jsonrpc":"2.0","id":"x","method":"m"},{"jsonrpc":"2.0","id":12345678901234567890,"method":"m"},{"jsonrpc":"2.0","id":null,"method":"m"}]');
  const plan = planOf(body);
  const order = forwardable(plan);
  const { merged, answered, errors } = assembleBatch(body, plan, order, [ok(0, 3, '[' + answer(2, '3') + ',' + answer(0, '1') + ']')]);
  t.equal(answered, true);
  t.same([...errors!], [0, 1, 0], 'the 7502 in its place is an error');
  const text = merged!.toString('utf8');
  const entries = rawElements(text);
  t.equal(entries[0], '{"jsonrpc":"2.0","result":1,"id":"x"}');
  t.equal(entries[2], '{"jsonrpc":"2.0","result":3,"id":null}');
  t.equal(rawIdText(entries[1]!), '12345678901234567890');
  const missing = JSON.parse(entries[1]!);
  t.equal(missing.jsonrpc, '2.0');
  t.equal(missing.error.code, 7502);
  t.equal(missing.error.message, Errors.upstreamFailed.message);
});

t.test('assembleBatch: unusable answers (duplicates, unknown ids, empty body) do not shift positions', async (t) => {
  const body = b('[{"jsonrpc":"2.0","id":"a","method":"m"},{"jsonrpc":"2.0","id":"b","method":"m"}]');
  const plan = planOf(body);
  const order = forwardable(plan);
  const resp = '[' + [answer(1, '"first"'), answer(1, '"dup"'), answer(9, '"unknown"'), answer(0, '"zero"')].join(',') + ']';
  const r = assembleBatch(body, plan, order, [ok(0, 2, resp)]);
  t.equal(r.merged!.toString(), '[{"jsonrpc":"2.0","result":"zero","id":"a"},{"jsonrpc":"2.0","result":"first","id":"b"}]');

  const empty = assembleBatch(body, plan, order, [ok(0, 2, '')]);
  t.equal(empty.answered, false);
  const parsed = JSON.parse(empty.merged!.toString());
  t.same(
    parsed.map((e: { id: unknown; error: { code: number } }) => [e.id, e.error.code]),
    [
      ['a', 7502],
      ['b', 7502],
    ],
  );
});

t.test('assembleBatch: gateway errors for a failed sub-batch, invalid elements in place', async (t) => {
  const body = b('[{"jsonrpc":"2.0","id":1,"method":"m"},{"id":"no-version","method":"m"},{"jsonrpc":"2.0","id":"t","method":"m"},42]');
  const plan = planOf(body);
  const order = forwardable(plan);
  t.same([...order], [0, 2]);
  const failed: SubOutcome = { from: 1, to: 2, response: null, error: Errors.upstreamTimeout, errorData: { attempts: 1 } };
  const r = assembleBatch(body, plan, order, [ok(0, 1, '[' + answer(0, '"one"') + ']'), failed]);
  t.equal(r.answered, true);
  const entries = rawElements(r.merged!);
  t.equal(entries.length, 4);
  t.equal(entries[0], '{"jsonrpc":"2.0","result":"one","id":1}');
  t.equal(entries[1], invalid('"no-version"'));
  t.equal(entries[2], '{"jsonrpc":"2.0","error":{"code":7504,"message":"Node timed out","data":{"attempts":1}},"id":"t"}');
  t.equal(entries[3], invalid('null'));
  t.same([...r.errors!], [0, 0, 1, 0], 'the failed request is marked; invalid elements are counted by their kind');

  const none = assembleBatch(body, plan, order, [{ ...failed, from: 0, to: 2, error: Errors.noNode }]);
  t.equal(none.answered, false, 'no node answered anything');
  t.same(
    JSON.parse(none.merged!.toString()).map((e: { error: { code: number } }) => e.error.code),
    [7503, -32600, 7503, -32600],
  );
});

t.test('assembleBatch: all-notification batches have nothing to answer', async (t) => {
  const body = b('[{"jsonrpc":"2.0","method":"a"},{"jsonrpc":"2.0","method":"b","params":[1]}]');
  const plan = planOf(body);
  const order = forwardable(plan);
  t.equal(order.length, 2, 'notifications are forwarded');
  t.equal(assembleBatch(body, plan, order, [ok(0, 2, '')]).merged, null);
  t.equal(assembleBatch(body, plan, order, []).merged, null);
  // notifications mixed with requests: only the requests get entries
  const mixed = b('[{"jsonrpc":"2.0","method":"a"},{"jsonrpc":"2.0","id":5,"method":"b"},{"jsonrpc":"2.0","method":"c"}]');
  const mp = planOf(mixed);
  const r = assembleBatch(mixed, mp, forwardable(mp), [ok(0, 3, '[' + answer(1, 'true') + ']')]);
  t.equal(r.merged!.toString(), '[{"jsonrpc":"2.0","result":true,"id":5}]');
});

// ---- property test -------------------------------------------------------------------------

interface Spec {
  kind: number;
  text: string;
  /** Raw id text the client should get back; for invalid elements 'null' unless readable. */
  id: string;
  method: string;
}

const STRING_IDS = ['"7"', '""', '"a\\"b"', '"\\\\"', '"é€😀"', '"\\u00e9"', '"]},{"', '"id"'];
const NUMBER_IDS = ['7', '0', '-1', '12345678901234567890', '1.5', '1e3', '-0', '99999999999999999999999'];
const METHODS = ['getSlot', 'getBalance', 'getAccountInfo', 'é-method', 'a"b', 'id'];
const PARAMS = ['[]', '[1,2,3]', '["id",{"id":5}]', '{"id":"x","nested":[[{}]]}', `[${U64}]`, '["\\"]", "\\\\"]', '[" é 😀 "]'];

function shuffle<T>(xs: T[], r: () => number): T[] {
  for (let i = xs.length - 1; i > 0; i--) {
    const j = Math.floor(r() * (i + 1));
    [xs[i], xs[j]] = [xs[j]!, xs[i]!];
  }
  return xs;
}

t.test('property: random batches through an out-of-order node come back in order, ids exact', async (t) => {
  const r = rng(20240611);
  const int = (n: number): number => Math.floor(r() * n);
  const pick = <T>(xs: readonly T[]): T => xs[int(xs.length)]!;
  const ws = (): string => (r() < 0.6 ? '' : pick([' ', '\n', '\t ', ' \r\n ']));
  let failures = 0;
  let entriesChecked = 0;

  for (let round = 0; round < 300; round++) {
    const n = 1 + int(40);
    const specs: Spec[] = [];
    const used: string[] = [];
    for (let i = 0; i < n; i++) {
      const method = pick(METHODS);
      const m = JSON.stringify(method);
      const params = r() < 0.7 ? `,${ws()}"params"${ws()}:${ws()}${pick(PARAMS)}` : '';
      const roll = r();
      if (roll < 0.6) {
        const id = used.length > 0 && r() < 0.2 ? pick(used) : r() < 0.15 ? 'null' : r() < 0.5 ? pick(STRING_IDS) : pick(NUMBER_IDS);
        used.push(id);
        const members = shuffle([`"jsonrpc":${ws()}"2.0"`, `"id"${ws()}:${ws()}${id}`, `"method":${m}${params}`], r);
        specs.push({ kind: KIND_REQUEST, text: `{${ws()}${members.join(`,${ws()}`)}${ws()}}`, id, method });
      } else if (roll < 0.75) {
        specs.push({ kind: KIND_NOTIFICATION, text: `{"method":${m},${ws()}"jsonrpc":"2.0"${params}}`, id: '', method });
      } else {
        const bad = int(6);
        const id = pick(STRING_IDS);
        if (bad === 0)
          specs.push({ kind: KIND_INVALID, text: pick(['1', '"s"', 'null', 'true', '[]', '[{"jsonrpc":"2.0","id":1,"method":"m"}]']), id: 'null', method: '' });
        else if (bad === 1) specs.push({ kind: KIND_INVALID, text: `{"jsonrpc":"2.0","id":${id}}`, id, method: '' });
        else if (bad === 2) specs.push({ kind: KIND_INVALID, text: `{"jsonrpc":"1.0","id":${id},"method":${m}}`, id, method: '' });
        else if (bad === 3)
          specs.push({ kind: KIND_INVALID, text: `{"jsonrpc":"2.0","id":${pick(['{}', '[1]', 'false'])},"method":${m}}`, id: 'null', method: '' });
        else if (bad === 4) specs.push({ kind: KIND_INVALID, text: `{"jsonrpc":"2.0","id":${id},"method":7}`, id, method: '' });
        else specs.push({ kind: KIND_INVALID, text: `{"jsonrpc":"2.0","id":${id},"method":${m},"params":7}`, id, method: '' });
      }
    }
    const body = b(ws() + '[' + ws() + specs.map((s) => s.text + ws()).join(',' + ws()) + ']' + ws());
    JSON.parse(body.toString()); // generator sanity

    const a = analyze(body, 1000);
    if (a.type !== A_BATCH) {
      failures++;
      t.fail(`round ${round}: not analyzed as a batch`);
      continue;
    }
    const plan = a.plan!;
    if (specs.some((s, i) => plan.kinds[i] !== s.kind)) {
      failures++;
      t.fail(`round ${round}: kinds differ`, { body: body.toString(), kinds: [...plan.kinds] });
      continue;
    }
    const order = forwardable(plan);

    // Split into random sub-batches; the node answers each request in shuffled order,
    // sometimes drops one answer, sometimes rejects a whole sub-batch with one object.
    const outcomes: SubOutcome[] = [];
    const expectError = new Map<number, number>();
    for (let from = 0; from < order.length;) {
      const to = Math.min(order.length, from + 1 + int(8));
      const sub = buildSubBatch(body, plan, order, from, to);
      const sent = JSON.parse(sub.toString()) as { id?: number; method: string }[];
      const answers: string[] = [];
      for (const el of sent) {
        if (el.id === undefined) continue;
        answers.push(`{"jsonrpc":"2.0",${ws()}"result":{"pos":${el.id},"method":${JSON.stringify(el.method)},"rentEpoch":${U64}},${ws()}"id":${ws()}${el.id}}`);
      }
      const mode = r();
      let response: string;
      if (mode < 0.05 && answers.length > 0) {
        response = '{"jsonrpc":"2.0","error":{"code":-32005,"message":"Node is unhealthy"},"id":null}';
        for (const el of sent) if (el.id !== undefined) expectError.set(el.id, -32005);
      } else {
        shuffle(answers, r);
        if (mode < 0.15 && answers.length > 0) {
          const dropped = answers.splice(int(answers.length), 1)[0]!;
          expectError.set(Number(/"id":\s*(\d+)\}$/.exec(dropped)![1]), 7502);
        }
        response = answers.length === 0 ? '' : ws() + '[' + answers.join(',' + ws()) + ']' + ws();
      }
      outcomes.push(ok(from, to, response));
      from = to;
    }
    shuffle(outcomes, r); // sub-batches finish in any order

    const { merged } = assembleBatch(body, plan, order, outcomes);
    const expected = specs.map((s, i) => ({ ...s, pos: i })).filter((s) => s.kind !== KIND_NOTIFICATION);
    if (expected.length === 0) {
      if (merged !== null) {
        failures++;
        t.fail(`round ${round}: all notifications but an answer was made`);
      }
      continue;
    }
    const text = merged!.toString('utf8');
    let parsed: { id: unknown; result?: { pos: number; method: string }; error?: { code: number } }[];
    try {
      parsed = JSON.parse(text);
    } catch {
      failures++;
      t.fail(`round ${round}: merged answer is not JSON`, { text });
      continue;
    }
    const entries = rawElements(text);
    if (parsed.length !== expected.length || entries.length !== expected.length) {
      failures++;
      t.fail(`round ${round}: ${parsed.length} entries for ${expected.length} expected`);
      continue;
    }
    for (let k = 0; k < expected.length; k++) {
      const want = expected[k]!;
      const got = parsed[k]!;
      entriesChecked++;
      const problems: string[] = [];
      if (rawIdText(entries[k]!) !== want.id) problems.push(`raw id ${rawIdText(entries[k]!)} != ${want.id}`);
      if (!text.includes(want.id)) problems.push(`raw text lacks ${want.id}`);
      if (JSON.stringify(got.id) !== JSON.stringify(JSON.parse(want.id))) problems.push('parsed id differs');
      if (want.kind === KIND_INVALID) {
        if (got.error?.code !== -32600) problems.push('invalid element not answered with -32600');
      } else if (expectError.has(want.pos)) {
        if (got.error?.code !== expectError.get(want.pos)) problems.push(`expected error ${expectError.get(want.pos)}, got ${JSON.stringify(got)}`);
      } else if (got.result?.pos !== want.pos || got.result.method !== want.method) problems.push(`wrong result ${JSON.stringify(got.result)}`);
      else if (!entries[k]!.includes(`"rentEpoch":${U64}`)) problems.push('u64 result re-encoded');
      if (problems.length > 0) {
        failures++;
        t.fail(`round ${round}, entry ${k} (element ${want.pos})`, { problems, body: body.toString(), text });
      }
    }
  }
  t.equal(failures, 0, 'no failing rounds');
  t.ok(entriesChecked > 3000, `${entriesChecked} entries checked`);
});

t.test('analyze: escapes in member names and values are decoded like JSON.parse would', async (t) => {
  const a = analyze(
    b(
      '[{"jsonrpc":"2\\u002e0","m\\u0065thod":"get\\u0053lot","i\\u0064":7},{"jsonrpc":"2.0","method":"a\\"b","id":1},{"jsonrpc":"2.0","method":"getSlot","id":1,"id":{}}]',
    ),
    1000,
  );
  t.equal(a.type, A_BATCH);
  t.same([...a.plan!.kinds], [KIND_REQUEST, KIND_REQUEST, KIND_INVALID], 'a repeated member counts with its last value, as in JSON.parse');
  t.same(a.plan!.methods, ['getSlot', 'a"b', '']);
  t.equal(b('[{"jsonrpc":"2\\u002e0","m\\u0065thod":"get\\u0053lot","i\\u0064":7}').toString('utf8', a.plan!.idSpans[0], a.plan!.idSpans[1]), '7');
  const single = analyze(b('{"jsonrpc":"2.0","method":"get\\u0053lot"}'), 1000);
  t.equal(single.type, A_SINGLE);
  t.equal(single.method, 'getSlot');
  t.equal(single.notification, true);
});

t.test('assembleBatch: node error answers are marked on both paths, ids kept (in order) and ids rewritten', async (t) => {
  const body = b('[{"jsonrpc":"2.0","id":1,"method":"getSlot"},{"jsonrpc":"2.0","id":2,"method":"nope"},{"jsonrpc":"2.0","id":3,"method":"getSlot"}]');
  const plan = planOf(body);
  t.ok(plan.idsKept);
  const notFound = (id: number): string => `{"jsonrpc":"2.0","error":{"code":-32601,"message":"Method not found"},"id":${id}}`;
  const kept = assembleBatch(body, plan, null, [
    ok(0, 3, `[{"jsonrpc":"2.0","result":5,"id":1},${notFound(2)},{"jsonrpc":"2.0","result":{"error":0},"id":3}]`),
  ]);
  t.same([...kept.errors!], [0, 1, 0], 'in order: the walk that checks the ids marks the error');
  const shuffled = assembleBatch(body, plan, null, [
    ok(0, 3, `[${notFound(2)},{"jsonrpc":"2.0","result":5,"id":1},{"jsonrpc":"2.0","result":{"error":0},"id":3}]`),
  ]);
  t.same([...shuffled.errors!], [0, 1, 0], 'out of order: matched by id, then marked');
  const order = forwardable(plan);
  const rewritten = assembleBatch(body, plan, order, [ok(0, 3, `[${notFound(1)},{"jsonrpc":"2.0","result":5,"id":0},{"jsonrpc":"2.0","result":6,"id":2}]`)]);
  t.same([...rewritten.errors!], [0, 1, 0]);
});
