// Span finding over raw JSON bytes (src/rpc/scan.ts; its primitives: json-bytes.test.ts): every span must cover exactly the
// value's bytes, whatever the strings contain (escaped quotes, backslash runs, unicode,
// brackets and braces) and wherever whitespace sits. A seeded property test generates
// tricky JSON texts and checks every span against the text it was built from.

import t from 'tap';
import { arrayElements, ID_KEY, memberSpan, rawIdOf, trimmedSpan } from '../../../src/rpc/scan.js';
import { rng } from '../../../src/tools/rng.js';

const b = (s: string): Buffer => Buffer.from(s, 'utf8');

/** Texts of the elements of the (whitespace-trimmed) array in `text`. */
function elements(text: string): string[] {
  const buf = b(text);
  const [s, e] = trimmedSpan(buf);
  const out: number[] = [];
  const n = arrayElements(buf, s, e, out);
  if (out.length !== 2 * n) throw new Error('arrayElements: count and offsets disagree');
  const texts: string[] = [];
  for (let i = 0; i < n; i++) texts.push(buf.toString('utf8', out[2 * i], out[2 * i + 1]));
  return texts;
}

/** Text of member `key` of the object in `text`, or null when absent. */
function member(text: string, key: string): string | null {
  const buf = b(text);
  const [s, e] = trimmedSpan(buf);
  const out = new Int32Array(2);
  const found = memberSpan(buf, s, e, b(JSON.stringify(key)), out);
  if (!found) {
    if (out[0] !== -1 || out[1] !== -1) throw new Error('absent member must leave [-1,-1]');
    return null;
  }
  return buf.toString('utf8', out[0], out[1]);
}

t.test('trimmedSpan', async (t) => {
  const buf = b(' \t\r\n{"a":1} \n\t\r ');
  const [s, e] = trimmedSpan(buf);
  t.equal(buf.toString('utf8', s, e), '{"a":1}');
  t.same(trimmedSpan(b('')), [0, 0]);
  t.same(trimmedSpan(b(' \n ')).length, 2);
  const [ws, we] = trimmedSpan(b(' \n '));
  t.equal(ws, we, 'all whitespace is empty');
});

t.test('arrayElements: whitespace everywhere, nesting, tricky strings, unicode', async (t) => {
  t.same(elements('[]'), []);
  t.same(elements('[ \n\t ]'), []);
  t.same(elements('[1]'), ['1']);
  t.same(elements(' [ 1 , 2 ,3 ] '), ['1', '2', '3']);
  t.same(elements('[\n\t{"a" : [1, 2]} ,\r\n[ [ ] ] ,"s,t" , null\n]'), ['{"a" : [1, 2]}', '[ [ ] ]', '"s,t"', 'null']);
  t.same(elements('["a\\"],[", "\\\\", "\\\\\\"]"]'), ['"a\\"],["', '"\\\\"', '"\\\\\\"]"']);
  t.same(elements('[{"é":"€"},"😀",{"k":"\\u00e9\\ud83d\\ude00"}]'), ['{"é":"€"}', '"😀"', '{"k":"\\u00e9\\ud83d\\ude00"}']);
  t.same(elements('[12345678901234567890,-0.5e-7,18446744073709551615]'), ['12345678901234567890', '-0.5e-7', '18446744073709551615']);
  const batch = '[{"jsonrpc":"2.0","id":1,"method":"a","params":[{"id":"]"}]} , {"jsonrpc":"2.0","id":"}","method":"b"}]';
  const els = elements(batch);
  t.equal(els.length, 2);
  t.same(
    els.map((e) => JSON.parse(e)),
    JSON.parse(batch),
  );
});

t.test('memberSpan: finds only top-level keys, raw bytes of the value', async (t) => {
  t.equal(member('{"id":7}', 'id'), '7');
  t.equal(member('{ "id" : "7" }', 'id'), '"7"');
  t.equal(member('{\n\t"jsonrpc" : "2.0" ,\n\t"id"\n:\n12345678901234567890\n}', 'id'), '12345678901234567890');
  t.equal(member('{"method":"m","id":null}', 'id'), 'null');
  t.equal(member('{"params":{"id":1},"id":2}', 'id'), '2', 'nested id is skipped');
  t.equal(member('{"params":[{"id":1}],"x":"\\"id\\":3"}', 'id'), null, 'id only nested or inside strings');
  t.equal(member('{"a":"\\\\","id":"x\\"y"}', 'id'), '"x\\"y"');
  t.equal(member('{"ids":1,"i":2,"id ":3}', 'id'), null, 'similar keys do not match');
  t.equal(member('{"é":{"€":"]}"},"id":"😀"}', 'id'), '"😀"');
  t.equal(member('{"id":{"a":[1,{"b":"}"}]}}', 'id'), '{"a":[1,{"b":"}"}]}', 'structured values span whole');
  t.equal(member('{}', 'id'), null);
  t.equal(member('{ }', 'id'), null);
  t.equal(member('{"result":{"context":{"slot":5},"value":{"rentEpoch":18446744073709551615}},"id":3}', 'id'), '3');
  t.equal(member('{"result":{"rentEpoch":18446744073709551615}}', 'result'), '{"rentEpoch":18446744073709551615}');
});

t.test('a value cut short ends the walk: nothing is recorded for it', async (t) => {
  t.same(elements('[1,"two",{"three":"'), ['1', '"two"'], 'an unterminated element is left out');
  t.equal(member('{"a":1,"id":"cut', 'id'), null, 'an unterminated member value is not a span');
  t.equal(member('{"a":{"b":"c"', 'a'), null, 'nor an unclosed object');
  t.equal(rawIdOf(b('{"id":[1,2')), null);
});

t.test('memberSpan works inside a larger buffer (element of a batch)', async (t) => {
  const buf = b('[{"id":"first"}, {"x":1,"id":"second"}]');
  const spans: number[] = [];
  arrayElements(buf, 0, buf.length, spans);
  const out = new Int32Array(2);
  t.ok(memberSpan(buf, spans[2]!, spans[3]!, ID_KEY, out));
  t.equal(buf.toString('utf8', out[0], out[1]), '"second"');
  t.ok(memberSpan(buf, spans[0]!, spans[1]!, ID_KEY, out));
  t.equal(buf.toString('utf8', out[0], out[1]), '"first"');
});

t.test('rawIdOf: raw id text of a single request', async (t) => {
  t.equal(rawIdOf(b('{"jsonrpc":"2.0","id":12345678901234567890,"method":"m"}')), '12345678901234567890');
  t.equal(rawIdOf(b('  {"id" :\t"7" }\n')), '"7"');
  t.equal(rawIdOf(b('{"id":null}')), 'null');
  t.equal(rawIdOf(b('{"method":"m"}')), null);
  t.equal(rawIdOf(b('[{"id":1}]')), null, 'not for batches');
  t.equal(rawIdOf(b('')), null);
});

// ---- property test ------------------------------------------------------------------------

const STRING_PIECES = ['a', 'id', '"', '\\', '\\\\', ']', '[', '}', '{', ',', ':', ' ', 'é', '€', '😀', '\n', '\u0000', '\u2028', '"id":1'];

class Gen {
  constructor(readonly r: () => number) {}
  int(n: number): number {
    return Math.floor(this.r() * n);
  }
  pick<T>(xs: readonly T[]): T {
    return xs[this.int(xs.length)]!;
  }
  ws(): string {
    if (this.r() < 0.5) return '';
    let s = '';
    const n = 1 + this.int(3);
    for (let i = 0; i < n; i++) s += this.pick([' ', '\n', '\t', '\r']);
    return s;
  }
  /** A JSON string literal whose content mixes raw and \u-escaped characters. */
  str(): string {
    let out = '"';
    const n = this.int(6);
    for (let i = 0; i < n; i++) {
      const piece = this.pick(STRING_PIECES);
      for (const ch of piece) {
        const cp = ch.codePointAt(0)!;
        if (ch === '"' || ch === '\\' || cp < 0x20) out += this.r() < 0.5 ? JSON.stringify(ch).slice(1, -1) : '\\u' + cp.toString(16).padStart(4, '0');
        else if (this.r() < 0.15 && cp < 0x10000) out += '\\u' + cp.toString(16).padStart(4, '0');
        else if (this.r() < 0.1 && ch === '/') out += '\\/';
        else out += ch;
      }
    }
    return out + '"';
  }
  num(): string {
    return this.pick(['0', '-1', '7', '3.25', '-0.5e-7', '1E+9', '12345678901234567890', '18446744073709551615']);
  }
  value(depth: number): string {
    const k = depth <= 0 ? this.int(3) : this.int(5);
    if (k === 0) return this.str();
    if (k === 1) return this.num();
    if (k === 2) return this.pick(['true', 'false', 'null']);
    if (k === 3) return this.array(depth - 1).text;
    return this.object(depth - 1).text;
  }
  array(depth: number): { text: string; items: string[] } {
    const n = this.int(5);
    const items: string[] = [];
    for (let i = 0; i < n; i++) items.push(this.value(depth));
    return { text: '[' + this.ws() + items.map((v) => v + this.ws()).join(',' + this.ws()) + ']', items };
  }
  object(depth: number): { text: string; members: Map<string, string> } {
    const n = this.int(5);
    const members = new Map<string, string>();
    const parts: string[] = [];
    for (let i = 0; i < n; i++) {
      const key = this.r() < 0.3 ? this.pick(['"id"', '"method"', '"params"']) : this.str();
      if (members.has(key)) continue; // duplicate keys are out of scope here
      const v = this.value(depth);
      members.set(key, v);
      parts.push(key + this.ws() + ':' + this.ws() + v + this.ws());
    }
    return { text: '{' + this.ws() + parts.join(',' + this.ws()) + '}', members };
  }
}

t.test('property: spans of random tricky JSON cover exactly the generated bytes', async (t) => {
  const g = new Gen(rng(0x5eed));
  let members = 0;
  let failures = 0;
  for (let round = 0; round < 500; round++) {
    const els: { text: string; members: Map<string, string> | null }[] = [];
    const n = g.int(7);
    for (let i = 0; i < n; i++) {
      if (g.r() < 0.5) {
        const o = g.object(2);
        els.push({ text: o.text, members: o.members });
      } else els.push({ text: g.value(2), members: null });
    }
    const text = g.ws() + '[' + g.ws() + els.map((e) => e.text + g.ws()).join(',' + g.ws()) + ']' + g.ws();
    JSON.parse(text); // the generator must produce JSON
    const got = elements(text);
    if (got.length !== els.length || got.some((s, i) => s !== els[i]!.text)) {
      failures++;
      t.fail(`round ${round}: element spans differ`, { text, got });
      continue;
    }
    for (const el of els) {
      if (el.members === null) continue;
      const buf = b(el.text);
      const out = new Int32Array(2);
      for (const [rawKey, rawValue] of el.members) {
        members++;
        if (!memberSpan(buf, 0, buf.length, b(rawKey), out) || buf.toString('utf8', out[0], out[1]) !== rawValue) {
          failures++;
          t.fail(`round ${round}: member ${rawKey}`, { object: el.text, want: rawValue });
        }
      }
      if (memberSpan(buf, 0, buf.length, b('"absent key"'), out)) t.fail('found a key that is not there');
    }
  }
  t.equal(failures, 0);
  t.ok(members > 300, `${members} member spans checked`);
});

t.test('isErrorAnswer stops at result or error', async (t) => {
  const { isErrorAnswer } = await import('../../../src/rpc/scan.js');
  t.equal(isErrorAnswer(Buffer.from('{"jsonrpc":"2.0","result":{"error":1},"id":1}')), false, 'an "error" inside the result is not an error');
  t.equal(isErrorAnswer(Buffer.from('{"jsonrpc":"2.0","error":{"code":-32601,"message":"x"},"id":1}')), true);
  t.equal(isErrorAnswer(Buffer.from(' { "id" : "a\\"b" , "error" : {} } ')), true, 'key order and whitespace do not matter');
  t.equal(isErrorAnswer(Buffer.from('[{"error":1}]')), false, 'not an object');
  t.equal(isErrorAnswer(Buffer.from('{"jsonrpc":"2.0","result":"' + 'x'.repeat(100000) + '","id":1}')), false);
});
