// Where a body stops being JSON, for the parse error's `data.offset` (docs/errors.md). Runs
// only after the request scanner refused a body, so it favours being plainly right over speed:
// one pass, an explicit stack (no recursion, however deep the nesting), RFC 8259's grammar.

const WS_SP = 0x20;
const WS_TAB = 0x09;
const WS_LF = 0x0a;
const WS_CR = 0x0d;

function skipWs(b: Uint8Array, i: number): number {
  while (i < b.length) {
    const c = b[i]!;
    if (c !== WS_SP && c !== WS_TAB && c !== WS_LF && c !== WS_CR) break;
    i++;
  }
  return i;
}

/** The end of the UTF-8 sequence whose lead byte (>= 0x80) is at `i`, or -(offset + 1) of its first bad byte. */
function utf8End(b: Uint8Array, i: number): number {
  const c = b[i]!;
  // The second byte's range narrows for lead bytes that would allow overlong forms or surrogates.
  let n: number;
  let lo = 0x80;
  let hi = 0xbf;
  if (c >= 0xc2 && c <= 0xdf) n = 1;
  else if (c >= 0xe0 && c <= 0xef) {
    n = 2;
    if (c === 0xe0) lo = 0xa0;
    else if (c === 0xed) hi = 0x9f;
  } else if (c >= 0xf0 && c <= 0xf4) {
    n = 3;
    if (c === 0xf0) lo = 0x90;
    else if (c === 0xf4) hi = 0x8f;
  } else return -(i + 1);
  for (let k = 1; k <= n; k++) {
    const x = b[i + k];
    if (x === undefined || x < lo || x > hi) return -(Math.min(i + k, b.length) + 1);
    lo = 0x80;
    hi = 0xbf;
  }
  return i + n + 1;
}

/** The end of the string whose opening quote is at `i`, or -(offset + 1) of the first bad byte. */
function stringEnd(b: Uint8Array, i: number): number {
  for (i++; i < b.length; i++) {
    const c = b[i]!;
    if (c === 0x22) return i + 1;
    if (c < 0x20) return -(i + 1);
    if (c >= 0x80) {
      const e = utf8End(b, i);
      if (e < 0) return e;
      i = e - 1;
      continue;
    }
    if (c === 0x5c) {
      const e = b[++i];
      if (e === 0x75) {
        for (let k = 0; k < 4; k++) {
          const h = b[++i];
          const hex = h !== undefined && ((h >= 0x30 && h <= 0x39) || ((h | 0x20) >= 0x61 && (h | 0x20) <= 0x66));
          if (!hex) return -(Math.min(i, b.length) + 1);
        }
      } else if (e === undefined || '"\\/bfnrt'.indexOf(String.fromCharCode(e)) < 0) return -(Math.min(i, b.length) + 1);
    }
  }
  return -(b.length + 1);
}

function digitsEnd(b: Uint8Array, i: number): number {
  while (i < b.length && b[i]! >= 0x30 && b[i]! <= 0x39) i++;
  return i;
}

/** The end of the number starting at `i`, or -(offset + 1) of the first bad byte. */
function numberEnd(b: Uint8Array, i: number): number {
  if (b[i] === 0x2d) i++;
  if (b[i] === 0x30) i++;
  else {
    const d = digitsEnd(b, i);
    if (d === i) return -(i + 1);
    i = d;
  }
  if (b[i] === 0x2e) {
    const d = digitsEnd(b, i + 1);
    if (d === i + 1) return -(d + 1);
    i = d;
  }
  if (b[i] === 0x65 || b[i] === 0x45) {
    i++;
    if (b[i] === 0x2b || b[i] === 0x2d) i++;
    const d = digitsEnd(b, i);
    if (d === i) return -(i + 1);
    i = d;
  }
  return i;
}

function literalEnd(b: Uint8Array, i: number, word: string): number {
  for (let k = 0; k < word.length; k++) if (b[i + k] !== word.charCodeAt(k)) return -(Math.min(i + k, b.length) + 1);
  return i + word.length;
}

/** The end of the scalar value at `i`, or -(offset + 1) of the first bad byte. */
function scalarEnd(b: Uint8Array, i: number): number {
  const c = b[i];
  if (c === 0x22) return stringEnd(b, i);
  if (c === 0x2d || (c !== undefined && c >= 0x30 && c <= 0x39)) return numberEnd(b, i);
  if (c === 0x74) return literalEnd(b, i, 'true');
  if (c === 0x66) return literalEnd(b, i, 'false');
  if (c === 0x6e) return literalEnd(b, i, 'null');
  return -(Math.min(i, b.length) + 1);
}

/** An object member's key at `i`, then its colon: where its value starts, or -(offset + 1) of the first bad byte. */
function memberValue(b: Uint8Array, i: number): number {
  if (b[i] !== 0x22) return -(Math.min(i, b.length) + 1);
  const k = stringEnd(b, i);
  if (k < 0) return k;
  i = skipWs(b, k);
  if (b[i] !== 0x3a) return -(Math.min(i, b.length) + 1);
  return skipWs(b, i + 1);
}

/**
 * The byte offset of the first byte at which `b` is not JSON (b.length when it ends early),
 * or -1 when the whole of it is one JSON value.
 */
export function syntaxErrorOffset(b: Uint8Array): number {
  // Open containers: 0x7b (object) or 0x5b (array).
  const stack: number[] = [];
  let i = skipWs(b, 0);
  // A value is expected at i (true), or a separator/closer after one (false).
  let wantValue = true;
  for (;;) {
    if (wantValue) {
      const c = b[i];
      if (c === 0x7b || c === 0x5b) {
        stack.push(c);
        i = skipWs(b, i + 1);
        if (b[i] === (c === 0x7b ? 0x7d : 0x5d)) {
          stack.pop();
          i++;
          wantValue = false;
        } else if (c === 0x7b) {
          const v = memberValue(b, i);
          if (v < 0) return -v - 1;
          i = v;
        }
        continue;
      }
      const e = scalarEnd(b, i);
      if (e < 0) return -e - 1;
      i = e;
      wantValue = false;
      continue;
    }
    i = skipWs(b, i);
    const top = stack.length === 0 ? 0 : stack[stack.length - 1]!;
    if (top === 0) return i === b.length ? -1 : i;
    const c = b[i];
    if (c === 0x2c) {
      i = skipWs(b, i + 1);
      if (top === 0x7b) {
        const v = memberValue(b, i);
        if (v < 0) return -v - 1;
        i = v;
      }
      wantValue = true;
    } else if (c === (top === 0x7b ? 0x7d : 0x5d)) {
      stack.pop();
      i++;
    } else return Math.min(i, b.length);
  }
}
