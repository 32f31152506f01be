// Affinity key decoding (src/gateway/headers.ts, docs/interface.md "Public interface"): header values
// arrive from uWS.js as one char per byte; keys are 1..40 bytes of UTF-8, and non-ASCII bytes
// at either end are dropped the way uWS drops them on x86-64.

import t from 'tap';
import { KEY_EMPTY, keyProblem, MAX_KEY_BYTES, utf8Header } from '../../../src/gateway/headers.js';

/** The header value uWS.js's getHeader returns for these bytes before any trimming. */
const asUws = (bytes: Buffer | number[]): string => Buffer.from(bytes).toString('latin1');
const utf8 = (s: string): string => asUws(Buffer.from(s, 'utf8'));

t.test('ASCII values come back as they are', async (t) => {
  for (const v of ['a', 'user-7', 'k'.repeat(100), '~!"#$%&\'()*+,-./:;<=>?@[\\]^_`{|}', 'a b\tc', 'a\x7f']) t.equal(utf8Header(v), v, JSON.stringify(v));
  t.equal(utf8Header(''), '');
});

t.test('multi-byte UTF-8 inside a value is decoded', async (t) => {
  for (const s of ['aéb', 'a漢b', 'bot-😀-1', 'a\uFFFDb', 'a' + 'é'.repeat(19) + 'b', 'x€€€y', 'a\u07FFb\u0800c\uFFFFd\u{10FFFF}e']) {
    t.equal(utf8Header(utf8(s)), s, s);
  }
});

t.test('bytes that are not UTF-8 inside a value: null', async (t) => {
  const cases: [string, number[]][] = [
    ['lone continuation byte', [0x80]],
    ['lone continuation byte 0xBF', [0xbf]],
    ['invalid lead byte 0xFF', [0xff]],
    ['invalid lead byte 0xFE', [0xfe]],
    ['lead byte 0xF5 (beyond U+10FFFF)', [0xf5, 0x80, 0x80, 0x80]],
    ['latin1 é', [0xe9]],
    ['overlong slash (2 bytes)', [0xc0, 0xaf]],
    ['overlong 0x7F (2 bytes)', [0xc1, 0xbf]],
    ['overlong slash (3 bytes)', [0xe0, 0x80, 0xaf]],
    ['overlong slash (4 bytes)', [0xf0, 0x80, 0x80, 0xaf]],
    ['high surrogate', [0xed, 0xa0, 0x80]],
    ['low surrogate', [0xed, 0xbf, 0xbf]],
    ['surrogate pair encoded separately (CESU-8)', [0xed, 0xa0, 0xbd, 0xed, 0xb8, 0x80]],
    ['above U+10FFFF', [0xf4, 0x90, 0x80, 0x80]],
    ['truncated 2-byte sequence', [0xc3]],
    ['truncated 3-byte sequence', [0xe2, 0x82]],
    ['truncated 4-byte sequence', [0xf0, 0x9f, 0x98]],
    ['lead byte followed by a lead byte', [0xc3, 0xc3, 0xa9]],
    ['two continuation bytes after a 2-byte lead', [0xc3, 0xa9, 0xa9]],
  ];
  for (const [what, bytes] of cases) {
    t.equal(utf8Header(asUws([0x61, ...bytes, 0x62])), null, what);
    t.equal(utf8Header(asUws([0x61, 0xc3, 0xa9, ...bytes, 0x20, 0x62])), null, `${what}, after a valid character`);
  }
});

t.test('non-ASCII bytes at either end are dropped, as uWS does on x86-64', async (t) => {
  // On x86-64 uWS has already dropped them; where it keeps them (Linux on ARM) the decoder
  // must drop the same bytes, or a key would map to another node there.
  t.equal(utf8Header(utf8('éééaé')), 'a', 'éééaé is the key a');
  t.equal(utf8Header(utf8('éa')), 'a');
  t.equal(utf8Header(utf8('aé')), 'a');
  t.equal(utf8Header(utf8('漢a漢b漢')), 'a漢b', 'only the ends go');
  t.equal(utf8Header(utf8('é'.repeat(20))), '', '20 × é (40 valid bytes) is empty');
  t.equal(utf8Header(utf8('é a é')), 'a', 'spaces next to the dropped bytes go too');
  t.equal(utf8Header(utf8('é\ta')), 'a', 'and tabs');
  t.equal(utf8Header(asUws([0xff, 0x61, 0xfe])), 'a', 'invalid bytes at the ends are dropped, not refused');
  t.equal(utf8Header(asUws([0xed, 0xa0, 0x80])), '', 'a value of only invalid bytes is empty');
  t.equal(utf8Header(asUws([0xc3, 0x61, 0xa9])), 'a', 'a character split by the trim leaves nothing behind');
  t.equal(utf8Header(asUws([0x7f, 0xc3, 0xa9, 0x7f])), '\x7fé\x7f', 'DEL (0x7F) is ASCII and stays');
});

t.test('keyProblem: 1..40 bytes', async (t) => {
  t.equal(MAX_KEY_BYTES, 40);
  t.equal(keyProblem(''), KEY_EMPTY);
  t.match(KEY_EMPTY, /empty/);
  t.equal(keyProblem('k'), null);
  t.equal(keyProblem('k'.repeat(40)), null);
  t.equal(keyProblem('k'.repeat(41)), 'affinity key is 41 bytes; at most 40 are allowed');
  t.equal(keyProblem('a' + 'é'.repeat(19) + 'b'), null, '40 bytes in 21 characters');
  t.equal(keyProblem('a' + '漢'.repeat(12) + 'bcd'), null, '40 bytes with 3-byte characters');
  t.equal(keyProblem('a' + '€'.repeat(13) + 'b'), 'affinity key is 41 bytes; at most 40 are allowed', 'bytes are counted, not characters');
  t.equal(keyProblem('a\uFFFDb'), null, 'U+FFFD sent as its UTF-8 bytes is a valid character');
});
