// docs/configuration.md's table and src/config/defaults.ts say the same thing: every
// documented default is the real one, and every default is documented.

import { readFileSync } from 'node:fs';
import t from 'tap';
import { parse } from 'yaml';
import { DEFAULTS, ENTRY_DEFAULTS } from '../../../src/config/defaults.js';

const doc = readFileSync(new URL('../../../../docs/configuration.md', import.meta.url), 'utf8');

interface Row {
  /** The key cell as written, for messages. */
  cell: string;
  keys: string[];
  /** The default cell's values, YAML-parsed. */
  defaults: unknown[];
  meaning: string;
}

/** The backticked pieces of a table cell, in order. */
function codes(cell: string): string[] {
  return [...cell.matchAll(/`([^`]*)`/g)].map((m) => m[1]!);
}

/**
 * Dotted paths of a key cell. The table groups keys three ways: `rpc.host`, `rpc.port`;
 * `console.host/port/registration`; and `health.ejectBackoffMs`, `ejectBackoffMaxMs` (a
 * later key without a dot is a sibling of the one before). `nodes[]` is the list `nodes`.
 */
function keysOf(cell: string): string[] {
  const keys: string[] = [];
  for (const [i, code] of codes(cell).entries()) {
    const name = code.replace(/\[\]$/, '');
    const dot = name.lastIndexOf('.');
    const parent = dot < 0 ? '' : name.slice(0, dot + 1);
    const leaves = name.slice(dot + 1).split('/');
    if (i > 0 && dot < 0 && keys.length > 0) {
      const prev = keys[keys.length - 1]!;
      const sibling = prev.slice(0, prev.lastIndexOf('.') + 1);
      for (const leaf of leaves) keys.push(sibling + leaf);
    } else {
      for (const leaf of leaves) keys.push(parent + leaf);
    }
  }
  return keys;
}

function configRows(): Row[] {
  // The table of keys, before the page's first section (TLS).
  const start = doc.indexOf('# Configuration');
  const end = doc.indexOf('\n## ', start + 1);
  const rows: Row[] = [];
  for (const line of doc.slice(start, end).split('\n')) {
    // Cells split on pipes not escaped as `\|` (the meaning column uses them in code spans).
    const cells = line.split(/(?<!\\)\|/).map((c) => c.trim());
    if (cells.length < 5 || !cells[1]!.startsWith('`')) continue;
    rows.push({ cell: cells[1]!, keys: keysOf(cells[1]!), defaults: codes(cells[2]!).map((c) => parse(c) as unknown), meaning: cells[3]! });
  }
  return rows;
}

/** The value at a dotted path of DEFAULTS, or undefined when there is no such key. */
function at(path: string): unknown {
  let v: unknown = DEFAULTS;
  for (const part of path.split('.')) {
    if (v === null || typeof v !== 'object' || Array.isArray(v) || !Object.hasOwn(v, part)) return undefined;
    v = (v as Record<string, unknown>)[part];
  }
  return v;
}

/** Dotted paths of DEFAULTS' leaves: arrays, empty objects and plain values. */
function leaves(v: unknown, prefix = ''): string[] {
  if (v === null || typeof v !== 'object' || Array.isArray(v) || Object.keys(v).length === 0) return [prefix];
  return Object.entries(v).flatMap(([k, child]) => leaves(child, prefix === '' ? k : `${prefix}.${k}`));
}

const rows = configRows();

t.test('the key cells are read the way the table groups them', async (t) => {
  t.same(keysOf('`rpc.host`, `rpc.port`'), ['rpc.host', 'rpc.port']);
  t.same(keysOf('`console.host/port/registration`'), ['console.host', 'console.port', 'console.registration']);
  t.same(keysOf('`health.ejectBackoffMs`, `ejectBackoffMaxMs`'), ['health.ejectBackoffMs', 'health.ejectBackoffMaxMs']);
  t.same(keysOf('`nodes[]`'), ['nodes']);
  t.same(keysOf('`chain`'), ['chain']);
});

t.test('the docs table is found', async (t) => {
  t.ok(rows.length > 30, `${rows.length} rows`);
});

t.test('every documented default is the one in src/config/defaults.ts', async (t) => {
  for (const row of rows) {
    t.equal(row.defaults.length, row.keys.length, `${row.cell}: one default per key (${row.keys.join(', ')})`);
    for (const [i, key] of row.keys.entries()) {
      const actual = at(key);
      t.not(actual, undefined, `${key} exists in DEFAULTS`);
      t.same(row.defaults[i], actual, `${key}: docs/configuration.md says ${JSON.stringify(row.defaults[i])}`);
    }
  }
});

t.test('every default is documented', async (t) => {
  const documented = rows.flatMap((r) => r.keys);
  for (const leaf of leaves(DEFAULTS)) {
    // A row may document an object as a whole, e.g. `rateLimits.token` as `{ rate: 0, burst: 1 }`.
    const row = documented.find((k) => leaf === k || leaf.startsWith(k + '.'));
    t.ok(row !== undefined, `${leaf} is in docs/configuration.md's table`);
  }
});

t.test('list entries document their defaults in the meaning column', async (t) => {
  for (const [list, entry] of Object.entries(ENTRY_DEFAULTS)) {
    const row = rows.find((r) => r.keys.length === 1 && r.keys[0] === list);
    t.ok(row, `${list}[] has a row`);
    for (const [key, value] of Object.entries(entry)) {
      t.match(row?.meaning ?? '', `${key}: ${JSON.stringify(value)}`, `${list}[].${key} documented as ${JSON.stringify(value)}`);
    }
  }
});
