// The one-pass request scanner (src/rpc/validate.ts) must accept exactly what JSON.parse
// accepts, and its spans must cover exactly each call and each jsonrpc/method/id/params
// value. Checked on hand-picked edge cases and on seeded random documents, valid and mutated.

import t from 'tap';
import { M_ID, M_JSONRPC, M_METHOD, M_PARAMS, RequestLayout, scanRequest } from '../../../src/rpc/validate.js';
import { rng } from '../../../src/tools/rng.js';

const layout = new RequestLayout();

function parses(text: Buffer): boolean {
  try {
    JSON.parse(text.toString('utf8'));
    return true;
  } catch {
    return false;
  }
}

const EDGE = [
  '',
  ' ',
  '\t\n\r ',
  '\ufeff{}',
  '{}',
  '[]',
  '[ ]',
  '{ }',
  'null',
  'true',
  'false',
  'nul',
  'tru',
  'fals',
  'nulll',
  'truex',
  '0',
  '-0',
  '01',
  '-01',
  '1.',
  '.5',
  '1.5',
  '-',
  '1e',
  '1e+',
  '1e-2',
  '1E5',
  '1e05',
  '+1',
  '0x10',
  '1.5e+10',
  '123456789012345678901234567890',
  '""',
  '"a"',
  '"\\"',
  '"\\\\"',
  '"\\u00e9"',
  '"\\u00G9"',
  '"\\u00e"',
  '"\\x"',
  '"\\/"',
  '"\\b\\f\\n\\r\\t"',
  '"tab\there"',
  '"nl\nhere"',
  '"\u007f"',
  '"é😀"',
  '[1,]',
  '[,1]',
  '[1 2]',
  '[1,,2]',
  '{"a":1,}',
  '{,}',
  '{"a"}',
  '{"a":}',
  '{"a" 1}',
  '{a:1}',
  "{'a':1}",
  '{"a":1 "b":2}',
  '[1]]',
  '[[1]',
  '{"a":{"b":[1,{"c":null}]}}',
  '[] []',
  '{} x',
  '1 2',
  '[1] ',
  ' [1]',
  '[\n1\n,\n2\n]',
  '{"":""}',
  '{"a":1,"a":2}',
  '{"jsonrpc":"2.0","method":"getSlot","id":1}',
  '[{"jsonrpc":"2.0","method":"getSlot","id":1},{"jsonrpc":"2.0","method":"x"}]',
  '{"jsonrpc":"2.0","method":"getSlot","id":1',
  '[{"jsonrpc":"2.0","method":"getSlot","id":1}',
  '[{"jsonrpc":"2.0","method":"getSlot","id":1},]',
];

t.test('edge cases: accepted exactly when JSON.parse accepts', async (t) => {
  for (const text of EDGE) {
    const buf = Buffer.from(text, 'utf8');
    t.equal(scanRequest(buf, 1000, layout), parses(buf), JSON.stringify(text));
  }
  // Invalid UTF-8 decodes to U+FFFD for JSON.parse, which accepts it inside a string.
  const bad = Buffer.from([0x22, 0xff, 0xfe, 0x22]);
  t.equal(scanRequest(bad, 1000, layout), parses(bad), 'invalid UTF-8 inside a string');
  t.equal(scanRequest(Buffer.from([0xff]), 1000, layout), false, 'invalid UTF-8 outside a string');
});

t.test('deep nesting is validated without recursion', async (t) => {
  const depth = 200_000;
  const ok = Buffer.from('['.repeat(depth) + ']'.repeat(depth));
  t.equal(scanRequest(ok, 1000, layout), true, 'balanced');
  const bad = Buffer.from('['.repeat(depth) + ']'.repeat(depth - 1));
  t.equal(scanRequest(bad, 1000, layout), false, 'one bracket short');
  const mixed = Buffer.from('[{"a":'.repeat(1000) + '1' + '}]'.repeat(1000));
  t.equal(scanRequest(mixed, 1000, layout), true, 'objects in arrays');
});

type Gen = () => string;

function generators(r: () => number): { value: Gen; call: Gen; ws: Gen } {
  const int = (n: number): number => Math.floor(r() * n);
  const pick = <T>(xs: readonly T[]): T => xs[int(xs.length)]!;
  const ws = (): string => (r() < 0.6 ? '' : pick([' ', '\n', '\t ', ' \r\n ']));
  const str = (): string =>
    '"' +
    Array.from({ length: int(6) }, () => pick(['a', 'é', '😀', '\\"', '\\\\', '\\n', '\\u00e9', '\\/', ']', '}', ',', ':', '"id"'.slice(1, 3), ' '])).join('') +
    '"';
  const num = (): string => pick(['0', '-0', '7', '-12', '3.25', '1e3', '-2.5E-7', '18446744073709551615', '1E+2']);
  const value = (depth = 0): string => {
    const k = depth > 3 ? int(4) : int(6);
    if (k === 0) return str();
    if (k === 1) return num();
    if (k === 2) return pick(['true', 'false', 'null']);
    if (k === 3) return pick(['[]', '{}']);
    if (k === 4) return '[' + ws() + Array.from({ length: 1 + int(3) }, () => value(depth + 1)).join(ws() + ',' + ws()) + ws() + ']';
    return '{' + ws() + Array.from({ length: 1 + int(3) }, () => str() + ws() + ':' + ws() + value(depth + 1)).join(',' + ws()) + ws() + '}';
  };
  const call = (): string => {
    const members: string[] = [];
    if (r() < 0.9) members.push(`"jsonrpc"${ws()}:${ws()}${pick(['"2.0"', '"2\\u002e0"', '"1.0"', '2', 'null'])}`);
    if (r() < 0.9) members.push(`"method":${ws()}${pick(['"getSlot"', '"a\\"b"', '"é"', '7', 'null', '{}'])}`);
    if (r() < 0.7) members.push(`"id":${ws()}${pick(['1', '"x"', 'null', '-3.5', 'true', '[1]', '{}', '"\\""'])}`);
    if (r() < 0.6) members.push(`"params":${ws()}${pick(['[]', '{}', '[1,{"id":2}]', '7', '"s"', 'null'])}`);
    if (r() < 0.3) members.push(`${str()}:${value(2)}`);
    if (r() < 0.1) members.push(`"i\\u0064":${pick(['5', '"y"'])}`);
    for (let i = members.length - 1; i > 0; i--) {
      const j = int(i + 1);
      [members[i], members[j]] = [members[j]!, members[i]!];
    }
    return '{' + ws() + members.join(',' + ws()) + ws() + '}';
  };
  return { value: () => value(), call, ws };
}

const MUTATIONS = ['"', '\\', '{', '}', '[', ']', ',', ':', '0', '1', '-', '.', 'e', '+', 'n', 't', 'u', ' ', '\n', '\u0001', '\u00e9', 'x'];

t.test('property: random documents and mutations agree with JSON.parse', async (t) => {
  const r = rng(424242);
  const g = generators(r);
  let checked = 0;
  let valid = 0;
  for (let round = 0; round < 4000; round++) {
    const doc =
      r() < 0.5
        ? g.ws() + g.value() + g.ws()
        : g.ws() + '[' + Array.from({ length: 1 + Math.floor(r() * 5) }, () => (r() < 0.8 ? g.call() : g.value())).join(',' + g.ws()) + ']';
    const texts = [doc];
    for (let m = 0; m < 3; m++) {
      const at = Math.floor(r() * (doc.length + 1));
      const ch = MUTATIONS[Math.floor(r() * MUTATIONS.length)]!;
      const kind = Math.floor(r() * 3);
      texts.push(
        kind === 0 ? doc.slice(0, at) + ch + doc.slice(at) : kind === 1 ? doc.slice(0, at) + doc.slice(at + 1) : doc.slice(0, at) + ch + doc.slice(at + 1),
      );
    }
    texts.push(doc.slice(0, Math.floor(r() * doc.length)));
    for (const text of texts) {
      const buf = Buffer.from(text, 'utf8');
      const want = parses(buf);
      checked++;
      if (scanRequest(buf, 1000, layout) !== want) {
        t.fail('disagrees with JSON.parse', { text, want });
        return;
      }
      if (want) {
        valid++;
        const problem = checkLayout(buf);
        if (problem !== null) {
          t.fail(problem, { text });
          return;
        }
      }
    }
  }
  t.pass(`${checked} texts agree with JSON.parse (${valid} valid), spans exact`);
});

const SLOTS: [number, string][] = [
  [M_JSONRPC, 'jsonrpc'],
  [M_METHOD, 'method'],
  [M_ID, 'id'],
  [M_PARAMS, 'params'],
];

/** Null when every recorded span re-parses to the value JSON.parse found there. */
function checkLayout(buf: Buffer): string | null {
  const parsed = JSON.parse(buf.toString('utf8')) as unknown;
  const calls = layout.batch ? (parsed as unknown[]) : [parsed];
  if (layout.count !== calls.length) return `count ${layout.count}, want ${calls.length}`;
  for (let i = 0; i < layout.count; i++) {
    const text = buf.toString('utf8', layout.spans[2 * i], layout.spans[2 * i + 1]);
    if (JSON.stringify(JSON.parse(text)) !== JSON.stringify(calls[i])) return `call ${i} span covers ${text}`;
    const call = calls[i];
    const isObject = typeof call === 'object' && call !== null && !Array.isArray(call);
    for (const [slot, name] of SLOTS) {
      const s = layout.members[8 * i + 2 * slot]!;
      const present = isObject && Object.prototype.hasOwnProperty.call(call, name);
      if (s >= 0 !== present) return `call ${i} member ${name}: recorded ${s >= 0}, present ${present}`;
      if (!present) continue;
      const value = buf.toString('utf8', s, layout.members[8 * i + 2 * slot + 1]);
      if (JSON.stringify(JSON.parse(value)) !== JSON.stringify((call as Record<string, unknown>)[name])) return `call ${i} member ${name} span covers ${value}`;
    }
  }
  return null;
}

t.test('calls past the limit are counted and validated, not recorded', async (t) => {
  const body = Buffer.from('[' + Array.from({ length: 10 }, (_, i) => `{"jsonrpc":"2.0","method":"m","id":${i}}`).join(',') + ']');
  t.equal(scanRequest(body, 4, layout), true);
  t.equal(layout.count, 10);
  t.equal(layout.recorded, 4);
  t.equal(scanRequest(Buffer.from(body.toString().slice(0, -1) + ',}]'), 4, layout), false, 'a syntax error after the limit is still found');
});

t.test('large batches grow the layout', async (t) => {
  const n = 3000;
  const body = Buffer.from('[' + Array.from({ length: n }, (_, i) => `{"jsonrpc":"2.0","method":"m","id":${i}}`).join(',') + ']');
  t.equal(scanRequest(body, 5000, layout), true);
  t.equal(layout.count, n);
  t.equal(checkLayout(body), null);
});
