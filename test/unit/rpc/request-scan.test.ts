// The WebAssembly request scanner (src/rpc/request-scan.ts) against the JavaScript one: the
// same verdict and the same layout (counts, spans, members, flags) on seeded requests, and
// the JavaScript scanner for what it leaves. validate.test.ts checks both against JSON.parse.
import t, { type Test } from 'tap';
import { scanRequestFast } from '../../../src/rpc/request-scan.js';
import { RequestLayout, scanRequest, scanRequestByBytes } from '../../../src/rpc/validate.js';
import { rng } from '../../../src/tools/rng.js';

function same(t: Test, text: string, limit: number): boolean | null {
  const buf = Buffer.from(text);
  const a = new RequestLayout();
  const b = new RequestLayout();
  const fast = scanRequestFast(buf, limit, a);
  const slow = scanRequestByBytes(buf, limit, b);
  if (fast === null) return null;
  if (fast !== slow) {
    t.fail(`verdict ${fast} against ${slow}: ${text}`);
    return fast;
  }
  if (!fast) return fast;
  const n = b.recorded;
  const layout = (l: RequestLayout): unknown => [
    l.batch,
    l.count,
    l.recorded,
    [...l.spans.subarray(0, 2 * n)],
    [...l.members.subarray(0, 8 * n)],
    [...l.flags.subarray(0, n)],
  ];
  if (JSON.stringify(layout(a)) !== JSON.stringify(layout(b)))
    t.fail(`layout differs for ${text}: ${JSON.stringify(layout(a))} against ${JSON.stringify(layout(b))}`);
  return fast;
}

const ELEMENTS = [
  '{"jsonrpc":"2.0","id":1,"method":"getBalance","params":["83astBRguLMdt2h5U1Tpdq5tjFoJ6noeGwaY3mDLVcri"]}',
  '{"jsonrpc":"2.0","id":"a-b","method":"getBalance","params":["83astBRguLMdt2h5U1Tpdq5tjFoJ6noeGwaY3mDLVcri",{"commitment":"finalized"}]}',
  '{"method":"getSlot","id":null,"jsonrpc":"2.0"}',
  '{"jsonrpc":"2.1","id":2,"method":"getSlot"}',
  '{"jsonrpc":"2.0","id":3,"method":"get\\u0053lot"}',
  '{"jsonrpc":"2.0","id":4,"method":"getSlot","method":"getHealth"}',
  '{"jsonrpc":"2.0","id":5,"method":"getSlot","params":[1,-2.5e+3,true,false,null,{},[],{"a":[{"b":"\\"x\\n"}]}]}',
  '{"jsonrpc":"2.0","id":6,"method":"getSlot","extra":{"id":9},"params":[]}',
  '{}',
  '{"jsonrpc":"2.0","method":"notify"}',
  '1',
  '"text"',
  '[1,2]',
  '{"jsonrpc":"2.0","id":7,"method":5}',
  '{"id":8,"method":"getBalance","params":{"a":"é\\t"}}',
  '{"jsonrpc":"2.0","id":1e5,"method":"getSlot","params":["a","b"]}',
  '{"jsonrpc":"2.0","id":123 ,"method":"getSlot","params":["a"] }',
  '{"jsonrpc":"2.0","id":9.25,"method":"getSlot","params":[ "a"]}',
];
const BROKEN = [
  '{"id":1,}',
  '{"id":01}',
  '{"id":1.}',
  '{"id":"\\x"}',
  '{"id":tru}',
  '{"id" 1}',
  '{"a":"\u0001"}',
  '[1,]',
  '{"id":-}',
  '{"id":1e}',
  '{"id":"\\u12g4"}',
  '{"id":12.}',
  '{"id":12a}',
  '{"params":["a"}',
  '{"params":["a",]}',
  '{"params":["a"]]}',
  '{"params":["a\u0002"]}',
];

t.test('seeded: the same verdict and layout as the JavaScript scanner', async (t) => {
  const r = rng(42);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(r() * xs.length)]!;
  const ws = (): string => pick([' ', '', '', '\n', '\t', '']);
  let valid = 0;
  let invalid = 0;
  let left = 0;
  for (let round = 0; round < 4000; round++) {
    const n = Math.floor(r() * 12);
    const els = Array.from({ length: n }, () => (r() < 0.05 ? pick(BROKEN) : pick(ELEMENTS)).replace(/,/g, () => ws() + ',' + ws()));
    let text = r() < 0.15 && n > 0 ? els[0]! : ws() + '[' + ws() + els.join(ws() + ',' + ws()) + ws() + ']' + ws();
    if (r() < 0.05) text = text.slice(0, Math.floor(r() * text.length));
    // Bodies under 80 bytes go to the JavaScript scanner: whitespace brings them over.
    if (text.length < 80) text = r() < 0.5 ? text.padEnd(80, pick([' ', '\n'])) : text.padStart(80, pick([' ', '\t']));
    const v = same(t, text, r() < 0.2 ? Math.floor(r() * 4) : 1000);
    if (v === null) left++;
    else if (v) valid++;
    else invalid++;
  }
  t.ok(valid > 1000 && invalid > 500, `${valid} valid, ${invalid} invalid`);
  t.equal(left, 0, 'none left to the JavaScript scanner');
});

t.test('left to the JavaScript scanner: escaped member names, deep nesting', async (t) => {
  const l = new RequestLayout();
  const escaped = '[{"jsonrpc":"2.0","id":1,"\\u006dethod":"getSlot"}]';
  t.equal(scanRequestFast(Buffer.from(escaped), 10, l), null);
  t.equal(scanRequest(Buffer.from(escaped), 10, l), true);
  t.equal(l.members[2]! > 0, true, 'the escaped "method" is recorded by the JavaScript scanner');
  const deep = '{"jsonrpc":"2.0","id":1,"method":"m","params":' + '['.repeat(2000) + ']'.repeat(2000) + '}';
  t.equal(scanRequestFast(Buffer.from(deep), 10, l), null);
  t.equal(scanRequest(Buffer.from(deep), 10, l), true);
  t.equal(scanRequest(Buffer.from(deep.slice(0, -2) + '}'), 10, l), false);
  const big = Buffer.from('[' + Array.from({ length: 40_000 }, (_, i) => `{"jsonrpc":"2.0","id":${i},"method":"getSlot"}`).join(',') + ']');
  t.equal(scanRequestFast(big, 50_000, l), true, `${big.length} bytes: the memory grows`);
  t.equal(l.recorded, 40_000);
  t.equal(same(t, '[{"jsonrpc":"2.0","id":1,"method":"getSlot","params":[{"commitment":"processed"}]}]', 10), true, 'a small one after it');
  t.equal(scanRequestFast(Buffer.from('{"jsonrpc":"2.0","id":1,"method":"getSlot"}'), 10, l), null, 'below 80 bytes: the JavaScript scanner');
});
