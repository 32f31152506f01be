// The JSON byte primitives every scanner steps with (src/rpc/json-bytes.ts,
// docs/internals-json.md "Byte primitives"): the index just past what was stepped over, -1
// when the input ends first, never a byte read at or past `end`.

import t from 'tap';
import { bytesAt, digitsEnd, skipString, skipValue, skipWs, trimEnd, uintOf } from '../../../src/rpc/json-bytes.js';

const b = (s: string): Buffer => Buffer.from(s, 'utf8');

t.test('skipString: escaped quotes and backslash runs', async (t) => {
  const cases: [string, string][] = [
    ['"plain"', ',rest'],
    ['""', ']'],
    ['"a\\"b"', ','],
    ['"\\\\"', ','], // one escaped backslash, then the closing quote
    ['"\\\\\\""', '}'], // \\ then \" then close
    ['"\\\\\\\\"', ' '], // two escaped backslashes
    ['"ends with \\\\\\\\\\""', ','],
    ['"\\u0022 is a quote, \\/ a slash"', ','],
    ['"é€😀 \\ud83d\\ude00"', ':'],
    ['"[{not structure}]"', ','],
    // Past the byte-by-byte stretch: found with indexOf, escapes still counted.
    ['"' + 'x'.repeat(100) + '\\"' + 'y'.repeat(100) + '\\\\"', ','],
    ['"' + 'x'.repeat(47) + '\\"' + '"', ','],
  ];
  for (const [str, tail] of cases) {
    const buf = b(str + tail);
    t.equal(skipString(buf, 0, buf.length), b(str).length, str.length > 60 ? `${str.length}-byte string` : str);
    t.equal(JSON.parse(buf.toString('utf8', 0, skipString(buf, 0, buf.length))), JSON.parse(str), 'span parses to the same string');
    t.equal(skipString(Uint8Array.from(buf), 0, buf.length), b(str).length, 'a plain Uint8Array too');
  }
});

t.test('skipString: -1 when the string does not end before `end`', async (t) => {
  for (const open of ['"never closed \\"', '"', '"\\', '"' + 'x'.repeat(200), '"' + 'x'.repeat(200) + '\\"', '"' + 'x'.repeat(47) + '\\']) {
    const buf = b(open);
    t.equal(skipString(buf, 0, buf.length), -1, `${open.length} bytes`);
  }
  const bounded = b('"abc"');
  t.equal(skipString(bounded, 0, 4), -1, 'a quote at `end` is not seen');
  const long = b('"' + 'x'.repeat(100) + '"');
  t.equal(skipString(long, 0, long.length - 1), -1, 'nor one indexOf finds past `end`');
  t.equal(skipString(long, 0, long.length), long.length);
});

t.test('skipValue: scalars, nested containers, strings holding brackets', async (t) => {
  const values = [
    '0',
    '-12.5e+3',
    '12345678901234567890',
    '18446744073709551615',
    'true',
    'false',
    'null',
    '"x"',
    '[]',
    '{}',
    '[1,[2,[3,[4]]],{"a":[{}]}]',
    '{"a":"]","b":"}","c":"[{","d":{"e":["\\"]"]}}',
    '[ "\\\\", "\\\\\\"", { "k" : [ ] } ]',
    '{"deep":[[[[[[[[[[{"x":"y"}]]]]]]]]]]}',
    '{"data":["' + 'QUJD'.repeat(50) + '","base64"],"s":"' + 'x'.repeat(60) + '\\"]}"}',
  ];
  for (const v of values) {
    for (const tail of [',', ']', '}', ' ', '\n', '\t,', '']) {
      const buf = b(v + tail);
      t.equal(buf.toString('utf8', 0, skipValue(buf, 0, buf.length)), v, `${v.slice(0, 40)} followed by ${JSON.stringify(tail)}`);
    }
  }
});

t.test('skipValue: -1 when a string or container does not end before `end`', async (t) => {
  for (const cut of ['"abc', '[1,2', '{"a":1', '{"a":"}', '[[[]]', '{"a":["' + 'x'.repeat(100)]) {
    const buf = b(cut);
    t.equal(skipValue(buf, 0, buf.length), -1, cut.slice(0, 20));
  }
  const buf = b('[1,2]');
  t.equal(skipValue(buf, 0, 4), -1, 'the closing bracket at `end` is not seen');
  t.equal(skipValue(b('123'), 0, 3), 3, 'a number may end at `end`');
  t.equal(skipValue(b('12345'), 0, 3), 3, 'and is cut there');
});

t.test('skipWs, trimEnd: the four JSON whitespace bytes only', async (t) => {
  t.equal(skipWs(b('  \n\tx'), 0, 5), 4);
  t.equal(skipWs(b('   '), 0, 3), 3);
  t.equal(skipWs(b('   x'), 0, 2), 2, 'stops at `end`');
  t.equal(skipWs(b('\u00a0x'), 0, 3), 0, 'NBSP is not JSON whitespace');
  t.equal(skipWs(b('\fx'), 0, 2), 0, 'nor form feed');
  t.equal(trimEnd(b('{} \r\n\t'), 0, 6), 2);
  t.equal(trimEnd(b('   '), 1, 3), 1, 'all whitespace trims to `start`');
  t.equal(trimEnd(b('ab  '), 0, 3), 2, 'reads below `end` only');
  let wrong = 0;
  for (let c = 0; c < 256; c++) {
    const ws = c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;
    const one = Uint8Array.of(c, 0x31);
    if (skipWs(one, 0, 2) !== (ws ? 1 : 0) || trimEnd(Uint8Array.of(0x31, c), 0, 2) !== (ws ? 1 : 2)) wrong++;
  }
  t.equal(wrong, 0, 'every byte value: whitespace exactly when space, LF, CR or tab');
});

t.test('digitsEnd, uintOf: unsigned decimal integers exact in a double', async (t) => {
  const u = (s: string): number => uintOf(b(s), 0, s.length);
  t.equal(u('0'), 0);
  t.equal(u('7'), 7);
  t.equal(u('123456789'), 123456789);
  t.equal(u('999999999999999'), 999999999999999, '15 digits');
  t.equal(u('1234567890123456'), -1, '16 digits may not be exact');
  for (const bad of ['', '-1', '1.0', '"1"', 'null', '1e2', ' 1']) t.equal(u(bad), -1, JSON.stringify(bad));
  t.equal(digitsEnd(b('12345,'), 0, 6), 5);
  t.equal(digitsEnd(b('12345'), 0, 3), 3, 'stops at `end`');
  t.equal(digitsEnd(b('x1'), 0, 2), 0);
});

t.test('bytesAt: a byte pattern at a position, within `end`', async (t) => {
  const buf = b('{"slot":5}');
  t.ok(bytesAt(buf, 1, buf.length, b('"slot"')));
  t.notOk(bytesAt(buf, 1, 6, b('"slot"')), 'not when it would cross `end`');
  t.notOk(bytesAt(buf, 0, buf.length, b('"slot"')));
  t.notOk(bytesAt(buf, -1, buf.length, b('{')));
});
