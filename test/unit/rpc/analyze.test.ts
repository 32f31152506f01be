// What analyze() tells a transport about a single call without decoding it
// (docs/internals-json.md "The WebSocket frame path"): the method, whether it is a
// notification, and where its id and params sit, so that a WebSocket frame is read once.

import t from 'tap';
import { A_BATCH, A_PARSE_ERROR, A_REPLY, A_SINGLE, analyze, type Analysis } from '../../../src/rpc/analyze.js';

const spanText = (body: Buffer, s: number, e: number): string | null => (s < 0 ? null : body.toString('utf8', s, e));

function single(text: string): { a: Analysis; id: string | null; params: string | null } {
  const body = Buffer.from(text);
  const a = analyze(body, 100);
  return { a, id: spanText(body, a.idStart, a.idEnd), params: spanText(body, a.paramsStart, a.paramsEnd) };
}

t.test('a single call: method, id and params spans as written', async (t) => {
  const r = single(' {"jsonrpc":"2.0","id":12345678901234567890,"method":"accountSubscribe","params":[ "Acct1", {"encoding":"base64"} ]} ');
  t.equal(r.a.type, A_SINGLE);
  t.equal(r.a.method, 'accountSubscribe');
  t.equal(r.a.notification, false);
  t.equal(r.id, '12345678901234567890', 'the id bytes, not a number');
  t.equal(r.params, '[ "Acct1", {"encoding":"base64"} ]');
  const escaped = single('{"jsonrpc":"2.0","id":"a\\"b","method":"slot\\u0053ubscribe"}');
  t.equal(escaped.a.method, 'slotSubscribe', 'an escaped method name is decoded');
  t.equal(escaped.id, '"a\\"b"');
  t.equal(escaped.params, null, 'no params: -1, -1');
  t.same([escaped.a.paramsStart, escaped.a.paramsEnd], [-1, -1]);
  const repeated = single('{"jsonrpc":"2.0","id":1,"params":[1],"method":"m","params":{"b":2}}');
  t.equal(repeated.params, '{"b":2}', 'a repeated member: the last one counts, as in JSON.parse');
});

t.test('a notification has no id span', async (t) => {
  const r = single('{"jsonrpc":"2.0","method":"ping"}');
  t.equal(r.a.type, A_SINGLE);
  t.equal(r.a.notification, true);
  t.same([r.a.idStart, r.a.idEnd], [-1, -1]);
  const nullId = single('{"jsonrpc":"2.0","method":"ping","id":null}');
  t.equal(nullId.a.notification, false, 'an id of null is an id');
  t.equal(nullId.id, 'null');
});

t.test('batches and replies carry no call spans; a parse error is always -32700 with an offset', async (t) => {
  const batch = analyze(Buffer.from('[{"jsonrpc":"2.0","id":1,"method":"getSlot","params":[]}]'), 100);
  t.equal(batch.type, A_BATCH);
  t.same([batch.idStart, batch.idEnd, batch.paramsStart, batch.paramsEnd], [-1, -1, -1, -1]);
  for (const text of ['{"jsonrpc":', '', ' ', '{"a":1}x', '\u00a0{}']) {
    const a = analyze(Buffer.from(text), 100);
    t.equal(a.type, A_PARSE_ERROR, JSON.stringify(text));
    t.match(JSON.parse(a.reply), { jsonrpc: '2.0', error: { code: -32700, message: 'Parse error', data: { offset: Number } }, id: null });
  }
  const invalid = analyze(Buffer.from('{"jsonrpc":"2.0","id":1,"method":"slotSubscribe","params":5}'), 100);
  t.equal(invalid.type, A_REPLY, 'params neither array nor object: invalid request');
  t.match(JSON.parse(invalid.reply), { error: { code: -32600 }, id: 1 });
});
