// Request header rules of docs/interface.md "Public interface": names carry the operator's brand, affinity values are
// case-insensitive and may be quoted, keys are 1..40 UTF-8 bytes that start and end with an ASCII character.

import { isUtf8 } from 'node:buffer';
import { MODE_DEFAULT, MODE_INVALID, MODE_KEY, MODE_NODE } from '../routing/affinity-mode.js';

export { MODE_DEFAULT, MODE_INVALID, MODE_KEY, MODE_NODE };

export const MAX_KEY_BYTES = 40;

export interface HeaderNames {
  token: string;
  apiKey: string;
  affinity: string;
  affinityKey: string;
  /** The key header without the `x-` prefix, also accepted. */
  affinityKeyBare: string;
  /** Response header naming the serving node (original case, for display). */
  node: string;
  /** Response header listing every node asked when there was more than one (original case). */
  nodesTried: string;
  /** For CORS allow/expose lists. */
  allowList: string;
}

export function headerNames(brand: string): HeaderNames {
  const b = brand.toLowerCase();
  return {
    token: `x-${b}-api-token`,
    apiKey: `x-${b}-api-key`,
    affinity: `x-${b}-affinity`,
    affinityKey: `x-${b}-affinity-key`,
    affinityKeyBare: `${b}-affinity-key`,
    node: `X-${brand}-Node`,
    nodesTried: `X-${brand}-Nodes-Tried`,
    allowList: `Content-Type, X-${brand}-Api-Token, X-${brand}-Api-Key, X-${brand}-Affinity, X-${brand}-Affinity-Key, ${brand}-Affinity-Key`,
  };
}

/**
 * Header names the hot path reads and writes, as bytes: uWS takes typed arrays as they are,
 * while a string is UTF-8 encoded again on every call.
 */
export interface HeaderKeys {
  token: Buffer;
  apiKey: Buffer;
  affinity: Buffer;
  affinityKey: Buffer;
  affinityKeyBare: Buffer;
  node: Buffer;
  nodesTried: Buffer;
}

export function headerKeys(names: HeaderNames): HeaderKeys {
  return {
    token: Buffer.from(names.token),
    apiKey: Buffer.from(names.apiKey),
    affinity: Buffer.from(names.affinity),
    affinityKey: Buffer.from(names.affinityKey),
    affinityKeyBare: Buffer.from(names.affinityKeyBare),
    node: Buffer.from(names.node),
    nodesTried: Buffer.from(names.nodesTried),
  };
}

export const H_ORIGIN = Buffer.from('origin');
export const H_CONTENT_TYPE = Buffer.from('content-type');
export const H_CONTENT_LENGTH = Buffer.from('content-length');
export const H_FORWARDED_FOR = Buffer.from('x-forwarded-for');
export const V_JSON = Buffer.from('application/json');

function unquote(v: string): string {
  const t = v.trim();
  if (t.length >= 2 && ((t[0] === '"' && t[t.length - 1] === '"') || (t[0] === "'" && t[t.length - 1] === "'"))) return t.slice(1, -1).trim();
  return t;
}

/** Affinity mode from the header value ('' when absent). */
export function parseAffinity(value: string): number {
  if (value === '') return MODE_DEFAULT;
  switch (unquote(value).toLowerCase()) {
    case 'default':
    case '':
      return MODE_DEFAULT;
    case 'key':
      return MODE_KEY;
    case 'node':
      return MODE_NODE;
    default:
      return MODE_INVALID;
  }
}

export const KEY_EMPTY = 'affinity key is empty (spaces and non-ASCII characters at either end are not part of a key)';
export const KEY_NOT_UTF8 = 'affinity key is not valid UTF-8';

/**
 * Whether uWS keeps this byte (given as a char code 0..255) at an end of a header value. uWS
 * trims "whitespace" from both ends by comparing each `char` with 33; where `char` is signed
 * (x86-64, macOS, Windows) every byte from 0x80 is negative and is trimmed too, where it is
 * unsigned (Linux on ARM) it stays. See docs/interface.md "Public interface".
 */
function keptAtEnd(code: number): boolean {
  return code > 0x20 && code < 0x80;
}

/**
 * The text of a header value as uWS.js hands it over (`getHeader` returns one char per byte,
 * i.e. latin1), decoded as UTF-8; null when the bytes are not valid UTF-8 (Node's `isUtf8`
 * also refuses overlong forms, surrogates and code points above U+10FFFF). Non-ASCII bytes
 * at either end are dropped as uWS drops them on x86-64, so that a key maps to the same node
 * on every platform the gateway runs on; what is left may be ''.
 */
export function utf8Header(raw: string): string | null {
  for (let i = 0; i < raw.length; i++) {
    if (raw.charCodeAt(i) > 0x7f) return decodeTrimmed(raw);
  }
  return raw;
}

function decodeTrimmed(raw: string): string | null {
  let start = 0;
  let end = raw.length;
  while (start < end && !keptAtEnd(raw.charCodeAt(start))) start++;
  while (end > start && !keptAtEnd(raw.charCodeAt(end - 1))) end--;
  const bytes = Buffer.from(start === 0 && end === raw.length ? raw : raw.slice(start, end), 'latin1');
  return isUtf8(bytes) ? bytes.toString('utf8') : null;
}

/** Null when the key (already decoded, see utf8Header) is acceptable, else the reason. */
export function keyProblem(key: string): string | null {
  if (key.length === 0) return KEY_EMPTY;
  const bytes = Buffer.byteLength(key, 'utf8');
  if (bytes > MAX_KEY_BYTES) return `affinity key is ${bytes} bytes; at most ${MAX_KEY_BYTES} are allowed`;
  return null;
}

/** application/json with an optional utf-8 charset, any case. */
export function isJsonContentType(value: string): boolean {
  if (value === 'application/json') return true; // what nearly every client sends
  const semi = value.indexOf(';');
  const type = (semi < 0 ? value : value.slice(0, semi)).trim().toLowerCase();
  if (type !== 'application/json') return false;
  if (semi < 0) return true;
  const params = value.slice(semi + 1).split(';');
  for (const p of params) {
    const [k, v] = p.split('=');
    if (k === undefined || k.trim() === '') continue;
    if (k.trim().toLowerCase() !== 'charset') continue;
    const cs = (v ?? '').trim().replace(/^"|"$/g, '').toLowerCase();
    if (cs !== 'utf-8' && cs !== 'utf8') return false;
  }
  return true;
}
