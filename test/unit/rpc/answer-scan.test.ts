// The 16-byte answer walk (src/rpc/answer-scan.ts) against the byte-by-byte one: the same
// verdict on every answer it reads, the byte walk for the ones it leaves.
import t from 'tap';
import { planOf } from '../../helpers/batch-plan.js';
import { answerInOrder, answerInOrderByBytes } from '../../../src/rpc/answer.js';
import { answerInOrderFast } from '../../../src/rpc/answer-scan.js';
import { rng } from '../../../src/tools/rng.js';

const b = (s: string): Buffer => Buffer.from(s, 'utf8');

/** A random JSON value without backslashes: strings full of brackets, commas, quotes' neighbours and "id". */
function value(r: () => number, depth: number): string {
  const x = r();
  const ws = (): string => [' ', '', '', '\n', '\t ', ''][Math.floor(r() * 6)]!;
  if (depth > 3 || x < 0.35) {
    const s = ['0', '-1', '18446744073709551615', '1.5e-7', 'true', 'false', 'null'][Math.floor(r() * 7)]!;
    return s;
  }
  if (x < 0.65) {
    const parts = ['{', '}', '[', ']', ',', ':', 'id', 'id:', 'a', 'é', ' ', 'xxxxxxxxxxxxxxx'];
    let s = '';
    const n = Math.floor(r() * 8);
    for (let i = 0; i < n; i++) s += parts[Math.floor(r() * parts.length)]!;
    return JSON.stringify(s);
  }
  const n = Math.floor(r() * 4);
  if (x < 0.8) return '[' + ws() + Array.from({ length: n }, () => value(r, depth + 1)).join(ws() + ',' + ws()) + ws() + ']';
  const keys = ['id', 'result', 'a', 'context', '{', 'i"d'.replace('"', '')];
  return (
    '{' +
    ws() +
    Array.from({ length: n }, (_, i) => JSON.stringify(keys[(i + Math.floor(r() * 6)) % 6]! + (i > 0 ? i : '')) + ws() + ':' + ws() + value(r, depth + 1)).join(
      ws() + ',' + ws(),
    ) +
    ws() +
    '}'
  );
}

t.test('seeded: the same verdict as the byte walk on answers in order, out of order, short, long, with ids twice or nested', async (t) => {
  const r = rng(20261124);
  let read = 0;
  let inOrder = 0;
  let unread = 0;
  for (let round = 0; round < 3000; round++) {
    const n = 1 + Math.floor(r() * 12);
    const ids = Array.from({ length: n }, (_, i) => (r() < 0.5 ? String(i * 7 + 1) : JSON.stringify('k-' + i + '.' + Math.floor(r() * 99))));
    const body = b('[' + ids.map((id) => `{"jsonrpc":"2.0","id":${id},"method":"getBalance","params":["Acc1"]}`).join(',') + ']');
    const plan = planOf(body);
    const ws = (): string => [' ', '', '', '\n', '  ', ''][Math.floor(r() * 6)]!;
    // a range of the batch (a sub-batch) or all of it
    const from = r() < 0.8 ? 0 : Math.floor(r() * n);
    const to = from === 0 ? n : from + 1 + Math.floor(r() * (n - from));
    const elements = ids.slice(from, to).map((id) => {
      const members = [`"jsonrpc"${ws()}:${ws()}"2.0"`, `"result"${ws()}:${ws()}${value(r, 0)}`];
      members.splice(Math.floor(r() * 3), 0, `"id"${ws()}:${ws()}${id}`);
      return '{' + ws() + members.join(ws() + ',' + ws()) + ws() + '}';
    });
    const m = r();
    const last = elements.length - 1;
    if (m < 0.1 && last > 0) elements.reverse();
    else if (m < 0.15) elements.pop();
    else if (m < 0.2) elements.push(elements[0]!);
    else if (m < 0.25) elements[Math.floor(r() * elements.length)] = '{"result":{"id":1},"jsonrpc":"2.0"}';
    else if (m < 0.3) elements[last] = elements[last]!.replace(/}$/, ',"id":1}');
    else if (m < 0.33) elements[0] = '"not an object"';
    let text = ws() + '[' + ws() + elements.join(ws() + ',' + ws()) + ws() + ']' + ws();
    if (m > 0.97) text += 'x';
    else if (m > 0.94) text = text.slice(0, Math.floor(r() * text.length));
    const resp = b(text);
    const fast = answerInOrderFast(resp, body, plan.idSpans, from, to);
    const bytes = answerInOrderByBytes(resp, body, plan.idSpans, from, to);
    if (fast === null) unread++;
    else if (fast !== bytes) t.fail(`round ${round}: ${fast} against ${bytes} for ${text} (from ${from})`);
    read++;
    if (fast === true) inOrder++;
  }
  t.equal(unread, 0, 'no backslash: every answer read by the 16-byte walk');
  t.ok(inOrder > 1000 && read - inOrder > 500, `both verdicts seen: ${inOrder} in order of ${read}`);
  t.end();
});

t.test('answers with a backslash, and very large ones, go to the byte walk; memory grows for large answers', async (t) => {
  const ids = ['1', '"b"'];
  const body = b('[' + ids.map((id) => `{"jsonrpc":"2.0","id":${id},"method":"m"}`).join(',') + ']');
  const plan = planOf(body);
  const escaped = b('[{"result":"a\\"],{\\"id\\":2}","id":1},{"id":"b","result":0}]');
  t.equal(answerInOrderFast(escaped, body, plan.idSpans, 0, 2), null, 'a backslash: not read here');
  t.equal(answerInOrder(escaped, body, plan.idSpans, 0, 2), true, 'the byte walk reads it');
  const big = (bytes: number): Buffer => b(`[{"result":"${'x'.repeat(bytes)}","id":1},{"id":"b","result":[${'1,'.repeat(100)}1]}]`);
  t.equal(answerInOrderFast(big(300_000), body, plan.idSpans, 0, 2), true, '300 KB: read after the memory grew');
  t.equal(answerInOrderFast(big(5 << 20), body, plan.idSpans, 0, 2), null, 'over 4 MB: left to the byte walk');
  t.equal(answerInOrder(big(5 << 20), body, plan.idSpans, 0, 2), true);
  const small = b('[{"id":1,"result":0},{"result":1,"id":"b"}]');
  t.equal(answerInOrderFast(small, body, plan.idSpans, 0, 2), true, 'a small answer after a large one: the zeroed slack is where it ends');
  t.equal(
    answerInOrderFast(b('[{"id":1,"result":0},{"result":1,"id":"b"}'), body, plan.idSpans, 0, 2),
    false,
    'cut short after a large answer left bytes in memory',
  );
});

t.test('seeded: both walks mark the same elements as error answers, and only top-level "error" members', async (t) => {
  const r = rng(20261126);
  for (let round = 0; round < 500; round++) {
    const n = 1 + Math.floor(r() * 10);
    const body = b('[' + Array.from({ length: n }, (_, i) => `{"jsonrpc":"2.0","id":${i + 1},"method":"getSlot"}`).join(',') + ']');
    const plan = planOf(body);
    const want = new Uint8Array(n);
    const elements = Array.from({ length: n }, (_, i) => {
      const error = r() < 0.3;
      want[i] = error ? 1 : 0;
      const member = error ? '"error" : {"code":-32601,"message":"Method not found"}' : `"result":${value(r, 0)}`;
      const members = ['"jsonrpc":"2.0"', member];
      // `"errors"` and a nested `"error"` are not the answer's error member
      if (r() < 0.3) members.push('"errors":1', '"data":{"error":2}');
      members.splice(Math.floor(r() * (members.length + 1)), 0, `"id":${i + 1}`);
      return '{' + members.join(',') + '}';
    });
    const resp = b('[' + elements.join(',') + ']');
    const fast = new Uint8Array(n);
    const slow = new Uint8Array(n);
    t.equal(answerInOrderFast(resp, body, plan.idSpans, 0, n, fast), true);
    t.equal(answerInOrderByBytes(resp, body, plan.idSpans, 0, n, slow), true);
    t.same(fast, want, 'the 16-byte walk');
    t.same(slow, want, 'the byte walk');
  }
});
