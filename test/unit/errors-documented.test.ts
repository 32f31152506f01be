// Every error the gateway produces is in the README's error table with the right HTTP status,
// and the table lists nothing the code does not know.

import { readFileSync } from 'node:fs';
import t from 'tap';
import { Errors, RpcErrors } from '../../src/errors.js';

const readme = readFileSync(new URL('../../../README.md', import.meta.url), 'utf8');
const section = readme.slice(readme.indexOf('### Errors'), readme.indexOf('### Retries'));
const rows = new Map<number, string>();
for (const m of section.matchAll(/^\| (-?\d+) \| ([^|]+) \|/gm)) rows.set(Number(m[1]), m[2]!.trim());

t.test('every gateway error code is documented with its HTTP status', async (t) => {
  for (const [name, e] of Object.entries(Errors)) {
    t.ok(rows.has(e.code), `${name} (${e.code}) is in the README`);
    const http = rows.get(e.code);
    if (e.code === 7702 || e.code === 7703) t.equal(http, '—', `${e.code} is a WebSocket-only error`);
    else t.equal(http, String(e.http), `${e.code} documented as HTTP ${e.http}`);
  }
  for (const e of Object.values(RpcErrors)) t.equal(rows.get(e.code), '200', `${e.code} documented as HTTP 200`);
});

t.test('the README documents no unknown code', async (t) => {
  const known = new Set([...Object.values(Errors).map((e) => e.code), ...Object.values(RpcErrors).map((e) => e.code)]);
  for (const code of rows.keys()) t.ok(known.has(code), `${code} exists in src/errors.ts`);
});

t.test('codes are unique and outside the Solana -32001..-32019 range', async (t) => {
  const codes = Object.values(Errors).map((e) => e.code);
  t.equal(new Set(codes).size, codes.length);
  for (const c of codes) t.notOk(c >= -32019 && c <= -32001, `${c} avoids Solana's range`);
});
