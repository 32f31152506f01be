// config/reload-classes.ts: every key of the config schema is classed live or restart (a new key
// without a class fails here), the diff finds every change at the table's granularity, reverts
// what waits for a restart, and never shows a secret.

import { readFileSync } from 'node:fs';
import t from 'tap';
import type { z } from 'zod';
import { resolveConfig } from '../../../src/config/load.js';
import { configDiff, redactUrl, RELOAD_CLASSES, revertChange, shownChange } from '../../../src/config/reload-classes.js';
import { ConfigSchema, type Config } from '../../../src/config/schema.js';

type Def = { type: string; innerType?: z.ZodType; element?: z.ZodType; shape?: Record<string, z.ZodType> };
const defOf = (s: z.ZodType): Def => (s as unknown as { _zod: { def: Def } })._zod.def;

/**
 * The schema's leaves as the table names them: objects are walked, a nullable object (`tls`) is
 * a leaf too (on or off), a list of entries with an `id` is `list` (order), `list.*` (an entry)
 * and `list.*.field`; records, other lists and values are leaves.
 */
function schemaLeaves(s: z.ZodType, path: string, out: string[]): void {
  const d = defOf(s);
  if (d.type === 'optional' || d.type === 'nullable') {
    out.push(path);
    // An optional mapping is walked when the table has rows under it (`tls`), else compared whole.
    if (defOf(d.innerType!).type === 'object' && Object.keys(RELOAD_CLASSES).some((k) => k.startsWith(path + '.'))) schemaLeaves(d.innerType!, path, out);
    return;
  }
  if (d.type === 'object') {
    for (const [k, v] of Object.entries(d.shape!)) {
      if (k === 'id' && path.endsWith('*')) continue;
      schemaLeaves(v, path === '' ? k : `${path}.${k}`, out);
    }
    return;
  }
  if (d.type === 'array' && defOf(d.element!).type === 'object' && 'id' in defOf(d.element!).shape!) {
    out.push(path, `${path}.*`);
    schemaLeaves(d.element!, `${path}.*`, out);
    return;
  }
  out.push(path);
}

/** Classed before the schema has them (per-node budgets and method lists); gone from here once it does. */
const AHEAD: string[] = [];

t.test('every key of the config schema has a reload class, and every class a key', async (t) => {
  const leaves: string[] = [];
  schemaLeaves(ConfigSchema as unknown as z.ZodType, '', leaves);
  t.ok(leaves.length > 100, `${leaves.length} schema keys`);
  t.same(
    leaves.filter((k) => !Object.hasOwn(RELOAD_CLASSES, k)),
    [],
    'schema keys without a class in RELOAD_CLASSES',
  );
  t.same(
    Object.keys(RELOAD_CLASSES).filter((k) => !leaves.includes(k) && !AHEAD.includes(k)),
    [],
    'classes of keys the schema no longer has',
  );
  t.same(
    AHEAD.filter((k) => leaves.includes(k)),
    [],
    'keys classed ahead that the schema now has: take them out of AHEAD (and document them in docs/configuration.md "Reload")',
  );
});

t.test('docs/configuration.md "Reload" lists every key with its class', async (t) => {
  const doc = readFileSync(new URL('../../../../docs/configuration.md', import.meta.url), 'utf8');
  const start = doc.indexOf('\n## Reload\n');
  t.ok(start > 0, 'the section exists');
  const section = doc.slice(start + 1, doc.indexOf('\n## ', start + 1));
  const documented: Record<string, string> = {};
  for (const line of section.split('\n')) {
    const cells = line.split('|').map((c) => c.trim());
    if (cells.length < 5 || !cells[1]!.startsWith('`')) continue;
    for (const m of cells[1]!.matchAll(/`([^`]+)`/g)) documented[m[1]!.replaceAll('<id>', '*')] = cells[2]!;
  }
  t.same(documented, Object.fromEntries(Object.entries(RELOAD_CLASSES).filter(([k]) => !AHEAD.includes(k))));
});

const base = (): Config =>
  resolveConfig({
    nodes: [
      { id: 'a', url: 'http://10.0.0.1:8899/?api-key=SECRET', labels: { tier: 'x' } },
      { id: 'b', url: 'https://user:pw@rpc.example/v2/KEY' },
    ],
    tokens: [{ token: 'static-token-0123456789', stack: 's' }],
    admin: { token: 'admin-secret-0123456789' },
  });

t.test('the diff: leaf paths with node ids, classes, values', async (t) => {
  const a = base();
  t.same(configDiff(a, base()), [], 'identical configs: no change');
  const b = base();
  b.nodes[0]!.labels = undefined;
  b.nodes[1]!.labels = { tier: 'x' };
  b.nodes[1]!.weight = 3;
  b.limits.maxBatch = 5;
  b.limits.methodTimeoutMs = { getBlock: 9 };
  b.rpc.port = 9000;
  b.rateLimits.token.rate = 7;
  const d = configDiff(a, b);
  t.same(
    d.map((c) => [c.path, c.pattern, c.live]),
    [
      ['rpc.port', 'rpc.port', false],
      ['nodes.a.labels', 'nodes.*.labels', true],
      ['nodes.b.weight', 'nodes.*.weight', true],
      ['nodes.b.labels', 'nodes.*.labels', true],
      ['limits.maxBatch', 'limits.maxBatch', true],
      ['limits.methodTimeoutMs', 'limits.methodTimeoutMs', true],
      ['rateLimits.token.rate', 'rateLimits.token.rate', true],
    ],
  );
  t.same(shownChange(d.find((c) => c.path === 'nodes.a.labels')!), { from: { tier: 'x' }, to: null });
  t.same(shownChange(d.find((c) => c.path === 'limits.methodTimeoutMs')!), { from: {}, to: { getBlock: 9 } }, 'a record is one leaf');
});

t.test('the diff: nodes added, removed, reordered; tls on and off; optional keys', async (t) => {
  const a = base();
  const b = base();
  b.nodes = [b.nodes[1]!, { id: 'c', url: 'http://10.0.0.3:8899/', weight: 1 }];
  b.tls = { cert: 'c.pem', key: 'k.pem' };
  const d = configDiff(a, b);
  t.same(
    d.map((c) => [c.path, c.live]),
    [
      ['tls', false],
      ['nodes.a', true],
      ['nodes.c', true],
    ],
  );
  const c = base();
  c.nodes.reverse();
  t.same(
    configDiff(a, c).map((x) => [x.path, shownChange(x)]),
    [['nodes', { from: ['a', 'b'], to: ['b', 'a'] }]],
    'an order change is one change, ids only',
  );
  const e = base();
  e.tls = { cert: 'c.pem', key: 'k.pem' };
  const f = base();
  f.tls = { cert: 'd.pem', key: 'k.pem', ca: 'ca.pem' };
  t.same(
    configDiff(e, f).map((x) => [x.path, x.live]),
    [
      ['tls.cert', true],
      ['tls.ca', true],
    ],
  );
});

t.test('a node budget or method list is one live key, compared whole', async (t) => {
  const a = { nodes: [{ id: 'a', url: 'http://h/', weight: 1, budget: { rate: 1, burst: 2 } }] };
  const b = { nodes: [{ id: 'a', url: 'http://h/', weight: 1, budget: { rate: 5, burst: 2 }, methods: { only: ['getSlot'] } }] };
  t.same(
    configDiff(a, b).map((c) => [c.path, c.live]),
    [
      ['nodes.a.budget', true],
      ['nodes.a.methods', true],
    ],
  );
});

t.test('secrets never show: tokens, admin token, node urls, passwords, x-tokens', async (t) => {
  const a = base();
  const b = base();
  b.tokens = [{ token: 'other-token-0123456789ab', stack: 's', active: true }];
  b.admin.token = 'admin-other-0123456789';
  b.nodes[0]!.url = 'http://10.0.0.1:8899/?api-key=OTHER';
  b.nodes[1]!.ws = 'wss://rpc.example/ws/KEY';
  b.nodes.push({ id: 'c', url: 'https://rpc.example/key/SECRET3', weight: 1 });
  b.store.url = 'postgres://jg:PASSWORD@db:5432/jumpgate';
  b.redis.url = 'redis://:RPASS@cache:6379/0';
  b.grpc.sources = [{ id: 'g', url: 'https://grpc.example/KEY4', xToken: 'XTOKEN' }];
  const shown = JSON.stringify(Object.fromEntries(configDiff(a, b).map((c) => [c.path, shownChange(c)])));
  t.notMatch(shown, /SECRET|OTHER|KEY|PASSWORD|RPASS|XTOKEN|token-0123|admin-/);
  t.match(shown, /"tokens":\{"from":"1 token","to":"1 token"\}/);
  t.match(shown, /"nodes\.a\.url":\{"from":"http:\/\/10\.0\.0\.1:8899\/\*\*\*","to":"http:\/\/10\.0\.0\.1:8899\/\*\*\*"\}/);
  t.match(shown, /"store\.url":\{"from":"sqlite:\/\/\.\/data\/jumpgate\.db","to":"postgres:\/\/jg:\*\*\*@db:5432\/jumpgate"\}/);
  t.equal(redactUrl('http://127.0.0.1:8899'), 'http://127.0.0.1:8899/', 'nothing to hide');
  t.equal(redactUrl('https://u:p@h.example/'), 'https://***@h.example/');
  t.equal(redactUrl('not a url'), '***');
});

t.test('revertChange puts back what waits for a restart, and only that', async (t) => {
  const a = base();
  const b = base();
  b.rpc.port = 9000;
  b.limits.maxBatch = 5;
  b.tls = { cert: 'c.pem', key: 'k.pem' };
  b.grpc.sources = [{ id: 'g', url: 'https://grpc.example/' }];
  b.nodes[0]!.labels = { tier: 'y' };
  for (const c of configDiff(a, b)) if (!c.live) revertChange(b, a, c);
  t.equal(b.rpc.port, a.rpc.port);
  t.equal(b.tls, null);
  t.same(b.grpc.sources, []);
  t.equal(b.limits.maxBatch, 5, 'a live change stays');
  t.same(b.nodes[0]!.labels, { tier: 'y' });
  t.same(
    configDiff(a, b).map((c) => c.path),
    ['nodes.a.labels', 'limits.maxBatch'],
    'only live changes are left',
  );
  const c = base();
  const d = base();
  d.grpc.sources = [{ id: 'g', url: 'https://grpc.example/' }];
  c.grpc.sources = [
    { id: 'h', url: 'https://grpc.example/' },
    { id: 'g', url: 'https://grpc2.example/' },
  ];
  for (const x of configDiff(c, d)) if (!x.live) revertChange(d, c, x);
  t.same(d.grpc.sources, c.grpc.sources, 'entries removed, changed and reordered come back');
});
