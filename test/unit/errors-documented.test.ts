// Every error the gateway produces is in docs/errors.md's table with the right HTTP status,
// and the table lists nothing the code does not know; the same for the console's and the
// admin API's error codes and their tables (same page).

import { readdirSync, readFileSync } from 'node:fs';
import t from 'tap';
import { AdminErrors } from '../../src/admin/errors.js';
import { ApiErrors, HTTP_CODES } from '../../src/console/errors.js';
import { Errors, RpcErrors } from '../../src/errors.js';

const doc = readFileSync(new URL('../../../docs/errors.md', import.meta.url), 'utf8');

/** The text of the section under `## heading`, up to the next `## `; empty when there is none. */
function section(heading: string): string {
  const start = doc.indexOf(`\n## ${heading}\n`);
  if (start < 0) return '';
  const end = doc.indexOf('\n## ', start + 1);
  return doc.slice(start, end < 0 ? undefined : end);
}

const gateway = section('Gateway errors');
const rows = new Map<number, string>();
for (const m of gateway.matchAll(/^\| (-?\d+) \| ([^|]+) \|/gm)) rows.set(Number(m[1]), m[2]!.trim());

t.test('every gateway error code is documented with its HTTP status', async (t) => {
  t.ok(rows.size > 10, 'the "Gateway errors" table is found');
  for (const [name, e] of Object.entries(Errors)) {
    t.ok(rows.has(e.code), `${name} (${e.code}) is in docs/errors.md`);
    const http = rows.get(e.code);
    if (e.code === 7702 || e.code === 7703) t.equal(http, '—', `${e.code} is a WebSocket-only error`);
    else t.equal(http, String(e.http), `${e.code} documented as HTTP ${e.http}`);
  }
  for (const e of Object.values(RpcErrors)) t.equal(rows.get(e.code), '200', `${e.code} documented as HTTP 200`);
});

t.test('docs/errors.md documents no unknown code', async (t) => {
  const known = new Set([...Object.values(Errors).map((e) => e.code), ...Object.values(RpcErrors).map((e) => e.code)]);
  for (const code of rows.keys()) t.ok(known.has(code), `${code} exists in src/errors.ts`);
});

t.test('codes are unique and outside the Solana -32001..-32019 range', async (t) => {
  const codes = Object.values(Errors).map((e) => e.code);
  t.equal(new Set(codes).size, codes.length);
  for (const c of codes) t.notOk(c >= -32019 && c <= -32001, `${c} avoids Solana's range`);
});

/** `code` → HTTP status of the table in the section under `## heading`. */
function codeTable(heading: string): Map<string, string> {
  const table = new Map<string, string>();
  const lines = section(heading).split('\n').slice(1);
  let inTable = false;
  for (const line of lines) {
    if (!line.startsWith('|')) {
      if (inTable) break;
      continue;
    }
    inTable = true;
    const m = /^\| `([a-z_]+)` \| (\d{3}) \|/.exec(line);
    if (m) table.set(m[1]!, m[2]!);
  }
  return table;
}

/** Every (code, status) the console API answers: its own errors and those fastify raises. */
const consoleCodes: [string, number][] = [
  ...Object.values(ApiErrors).map((e): [string, number] => [e.code, e.status]),
  ...Object.entries(HTTP_CODES).map(([status, code]): [string, number] => [code, Number(status)]),
];

t.test('every console API error code is documented with its HTTP status', async (t) => {
  const documented = codeTable('Console API errors');
  t.ok(documented.size > 0, 'the "Console API errors" table is found');
  for (const [code, status] of consoleCodes) t.equal(documented.get(code), String(status), `${code} documented as HTTP ${status}`);
  const known = new Set(consoleCodes.map(([code]) => code));
  for (const code of documented.keys()) t.ok(known.has(code), `${code} exists in src/console/errors.ts`);
});

t.test('every admin API error code is documented with its HTTP status', async (t) => {
  const documented = codeTable('Admin API errors');
  t.ok(documented.size > 0, 'the "Admin API errors" table is found');
  for (const e of Object.values(AdminErrors)) t.equal(documented.get(e.code), String(e.status), `${e.code} documented as HTTP ${e.status}`);
  const known = new Set<string>(Object.values(AdminErrors).map((e) => e.code));
  for (const code of documented.keys()) t.ok(known.has(code), `${code} exists in src/admin/errors.ts`);
  const codes = Object.values(AdminErrors).map((e) => e.code);
  t.equal(new Set(codes).size, codes.length, 'admin codes are unique');
});

t.test('the admin listener answers errors from its registry, not ad-hoc statuses', async (t) => {
  const dir = new URL('../../../src/admin/', import.meta.url);
  for (const file of readdirSync(dir).filter((f) => f.endsWith('.ts'))) {
    const source = readFileSync(new URL(file, dir), 'utf8');
    t.notMatch(source, /new HttpError\(\s*\d/, `${file}: HttpError statuses come from AdminErrors`);
    t.notMatch(source, /\bsend\(res, [45]\d\d, \{ error:/, `${file}: error answers take their status from AdminErrors`);
  }
});
