// The layers of src/ (docs/architecture.md "Limits"): a file imports only from its own layer or
// those below it, so the tree has no import that runs back up (the shared-state sync once
// reached up into the gateway for the limiter). Every top-level folder and file of src/ must be
// placed here: a new one fails this test until it is.

import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import t from 'tap';

/** Bottom first; a name is a folder of src/ or a file at its root (without .ts). */
const LAYERS: readonly (readonly string[])[] = [
  ['errors', 'log', 'slabs', 'stop-list', 'token-format'],
  ['config', 'rpc', 'server'],
  ['routing', 'solana'],
  ['metrics'],
  ['store'],
  ['usage', 'limits'],
  ['shared'],
  ['upstream'],
  ['landing', 'cache', 'fees'],
  ['gateway', 'grpc'],
  ['accounts'],
  ['console', 'admin'],
  ['planes'],
  ['lifecycle'],
  ['tools'],
  ['cli'],
];

const SRC = resolve(dirname(fileURLToPath(import.meta.url)), '../../../src');

function walk(dir: string): string[] {
  return readdirSync(dir).flatMap((f) => {
    const p = join(dir, f);
    return statSync(p).isDirectory() ? walk(p) : p.endsWith('.ts') ? [p] : [];
  });
}

/** The top-level part of src/ a path belongs to. */
function partOf(path: string): string {
  const parts = relative(SRC, path).split('/');
  return parts.length === 1 ? parts[0]!.replace(/\.(ts|js)$/, '') : parts[0]!;
}

const layerOf = new Map<string, number>();
LAYERS.forEach((names, i) => names.forEach((n) => layerOf.set(n, i)));

t.test('every import in src/ stays in its layer or goes down', async (t) => {
  const files = walk(SRC);
  t.ok(files.length > 100, `${files.length} files read`);
  const unplaced = new Set<string>();
  const upward: string[] = [];
  for (const f of files) {
    const from = partOf(f);
    const own = layerOf.get(from);
    if (own === undefined) unplaced.add(from);
    for (const m of readFileSync(f, 'utf8').matchAll(/from '(\.{1,2}\/[^']+)'/g)) {
      const to = partOf(resolve(dirname(f), m[1]!));
      const layer = layerOf.get(to);
      if (layer === undefined) unplaced.add(to);
      else if (own !== undefined && layer > own) upward.push(`${relative(SRC, f)} imports ${m[1]} (${from} → ${to})`);
    }
  }
  t.same([...unplaced], [], 'every part of src/ has a layer');
  t.same(upward, [], 'no import runs up a layer');
});

t.test('no file in src/ is over 400 lines', async (t) => {
  const long = walk(SRC)
    .map((f) => ({ f: relative(SRC, f), lines: readFileSync(f, 'utf8').split('\n').length - 1 }))
    .filter((x) => x.lines > 400);
  t.same(long, []);
});
