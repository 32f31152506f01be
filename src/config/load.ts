// Config loading: load YAML → expand env → reject unknown keys → defaults from
// defaults.ts → validate → read the `tls` files (tls.ts). Every failure is a ConfigError
// whose lines each name the field's path and what was expected.

import { readFileSync } from 'node:fs';
import YAML from 'yaml';
import { z } from 'zod';
import { DEFAULTS, ENTRY_DEFAULTS } from './defaults.js';
import { coerce, expandEnv, pathKey, protectRefs, type Path } from './env.js';
import { ConfigSchema, type Config, type TlsConfig } from './schema.js';
import { readTls, type TlsMaterial } from './tls.js';

export class ConfigError extends Error {
  readonly code = 'JG_CONFIG';
  /** One entry per problem, without the `config: ` prefix. */
  readonly problems: readonly string[];
  /** The file (or other source) the config came from, when known. */
  readonly source: string | undefined;

  constructor(problems: readonly string[], source?: string) {
    super(problems.map((p) => `config: ${p}`).join('\n'));
    this.name = 'ConfigError';
    this.problems = problems;
    this.source = source;
  }
}

export function loadConfig(path: string, env: NodeJS.ProcessEnv = process.env): Config {
  return parseConfig(readConfigFile(path), env, path);
}

export function parseConfig(yamlText: string, env: NodeJS.ProcessEnv = process.env, source?: string): Config {
  return resolve(parseTree(yamlText, source), env, source);
}

/**
 * `store.url` of a config file, and nothing else: the commands that only open the store
 * (`jumpgate tokens`, `jumpgate accounts`) neither need the other keys nor the variables
 * they reference. Default: DEFAULTS.store.url.
 */
export function loadStoreUrl(path: string, env: NodeJS.ProcessEnv = process.env): string {
  const tree = parseTree(readConfigFile(path), path);
  const store = isMapping(tree) ? tree.store : undefined;
  const given = isMapping(store) ? store.url : undefined;
  if (given === undefined || given === null) return DEFAULTS.store.url;
  const { value, problems } = expandEnv({ store: { url: given } }, env);
  if (problems.length > 0)
    throw new ConfigError(
      problems.map((p) => `${fieldName(p.path)}: ${p.message}`),
      path,
    );
  const url = (value as { store: { url: unknown } }).store.url;
  const checked = ConfigSchema.shape.store.shape.url.safeParse(url, { reportInput: true });
  if (!checked.success)
    throw new ConfigError(
      checked.error.issues.flatMap((i) => formatIssue({ ...i, path: ['store', 'url'] }, new Map())),
      path,
    );
  return checked.data;
}

function readConfigFile(path: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch (err) {
    const e = err as NodeJS.ErrnoException;
    throw new ConfigError([e.code === 'ENOENT' ? `file not found: ${path}` : `cannot read ${path}: ${e.message}`], path);
  }
}

/** The YAML text as a plain tree, every syntax error reported. */
function parseTree(yamlText: string, source: string | undefined): unknown {
  const doc = YAML.parseDocument(protectRefs(yamlText), { prettyErrors: true });
  if (doc.errors.length > 0) {
    const where = source === undefined ? '' : ` in ${source}`;
    throw new ConfigError(
      doc.errors.map((e) => {
        const pos = e.linePos?.[0];
        const at = pos === undefined ? '' : ` at line ${pos.line}, column ${pos.col}`;
        const what = (e.message.split('\n')[0] ?? '').replace(/ at line \d+, column \d+:?$/, '');
        return `invalid YAML${where}${at}: ${what}`;
      }),
      source,
    );
  }
  try {
    return doc.toJS() as unknown; // throws on alias bombs (more than 100 aliases)
  } catch (err) {
    throw new ConfigError([`invalid YAML${source === undefined ? '' : ` in ${source}`}: ${(err as Error).message}`], source);
  }
}

/** Same rules as a file, for an object built in code (tests, demo mode). */
export function resolveConfig(partial: unknown, env: NodeJS.ProcessEnv = process.env): Config {
  return resolve(partial, env, undefined);
}

function resolve(input: unknown, env: NodeJS.ProcessEnv, source: string | undefined): Config {
  if (input === null || input === undefined) input = {};
  if (!isMapping(input)) throw new ConfigError([`expected a mapping at top level, got ${describe(input, false)}`], source);

  const { value: tree, fromEnv, problems: envProblems } = expandEnv(input, env);
  const problems = envProblems.map((p) => `${fieldName(p.path)}: ${p.message}`);
  // Unknown keys and invalid values are reported together: a file with several mistakes
  // shows them all in one run (docs/configuration.md).
  unknownKeys(tree, ConfigSchema, [], problems);
  const envPaths = new Set(envProblems.map((p) => pathKey(p.path)));

  const merged = withDefaults(DEFAULTS, tree) as Record<string, unknown>;
  for (const list of ['nodes', 'tokens'] as const) {
    const entries = merged[list];
    if (Array.isArray(entries)) merged[list] = entries.map((e) => (isMapping(e) ? withDefaults(ENTRY_DEFAULTS[list], e) : e));
  }

  let result = ConfigSchema.safeParse(merged, { reportInput: true });
  // Strings that came from `${ENV}` become numbers/booleans where the schema wants one.
  if (!result.success && fromEnv.size > 0) {
    let coerced = false;
    for (const issue of result.error.issues) {
      if (issue.code !== 'invalid_type' || typeof issue.input !== 'string' || !fromEnv.has(pathKey(issue.path as Path))) continue;
      const v = coerce(issue.input, issue.expected);
      if (v === undefined) continue;
      setAt(merged, issue.path as Path, v);
      coerced = true;
    }
    if (coerced) result = ConfigSchema.safeParse(merged, { reportInput: true });
  }
  if (result.success && problems.length === 0) {
    if (result.data.tls !== null) loadTls(result.data.tls, source);
    return result.data;
  }
  if (!result.success) {
    for (const issue of result.error.issues) {
      // unknownKeys() named these with a hint; a bad ${…} reference is reported once, as such.
      if (issue.code === 'unrecognized_keys' && problems.length > 0) continue;
      if (envPaths.has(pathKey(issue.path as Path))) continue;
      problems.push(...formatIssue(issue, fromEnv));
    }
  }
  throw new ConfigError([...new Set(problems)], source);
}

/** Reads and checks the `tls` files (at start, and again on each reload); throws a ConfigError naming the field. */
export function loadTls(files: TlsConfig, source?: string): TlsMaterial {
  const read = readTls(files);
  if (read.problems !== null) throw new ConfigError(read.problems, source);
  return read.material;
}

// ----------------------------------------------------------------------------------------------

function isMapping(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

/** Defaults under the user's values: mappings merge, anything else (arrays too) replaces; a null
 * value counts as not given. Always returns fresh objects (DEFAULTS is frozen). */
function withDefaults(defaults: unknown, user: unknown): unknown {
  if (user === undefined || user === null) return structuredClone(defaults);
  if (!isMapping(defaults) || !isMapping(user)) return user;
  const out: Record<string, unknown> = {};
  for (const k of Object.keys(defaults)) out[k] = withDefaults(defaults[k], Object.hasOwn(user, k) ? user[k] : undefined);
  for (const [k, v] of Object.entries(user)) {
    if (!Object.hasOwn(defaults, k) && v !== null) out[k] = v;
  }
  return out;
}

function setAt(root: unknown, path: Path, value: unknown): void {
  let node = root as Record<string | number, unknown>;
  for (let i = 0; i < path.length - 1; i++) node = node[path[i] as string | number] as Record<string | number, unknown>;
  node[path[path.length - 1] as string | number] = value;
}

/** Top-level keys that were renamed: the old name is refused with a message naming the new one. */
const RENAMED: Readonly<Record<string, string>> = {
  workers:
    'offload (the piscina pool for large bodies: offload.threads, offload.parseThresholdBytes, offload.mergeThresholdBytes; data-plane threads are rpc.workers)',
};

/** Walks the value along the schema; every key the schema doesn't know is a problem. */
function unknownKeys(value: unknown, schema: unknown, path: Path, problems: string[]): void {
  if (schema instanceof z.ZodOptional || schema instanceof z.ZodNullable) schema = schema.unwrap();
  if (schema instanceof z.ZodObject && isMapping(value)) {
    const shape = schema.shape as Record<string, unknown>;
    const known = Object.keys(shape);
    for (const [k, v] of Object.entries(value)) {
      if (Object.hasOwn(shape, k)) {
        unknownKeys(v, shape[k], [...path, k], problems);
        continue;
      }
      if (path.length === 0 && Object.hasOwn(RENAMED, k)) {
        problems.push(`${JSON.stringify(k)} was renamed: use ${RENAMED[k]}`);
        continue;
      }
      const near = closest(k, known);
      const hint = near === undefined ? `; known keys: ${known.join(', ')}` : ` (did you mean "${near}"?)`;
      problems.push(path.length === 0 ? `unknown key ${JSON.stringify(k)} at top level${hint}` : `${fieldName(path)}: unknown key ${JSON.stringify(k)}${hint}`);
    }
  } else if (schema instanceof z.ZodArray && Array.isArray(value)) {
    value.forEach((v, i) => unknownKeys(v, schema.element, [...path, i], problems));
  } else if (schema instanceof z.ZodRecord && isMapping(value)) {
    for (const [k, v] of Object.entries(value)) unknownKeys(v, schema.valueType, [...path, k], problems);
  }
}

/** The known key nearest to `key` (case-insensitive, adjacent swaps count 1), if near enough. */
export function closest(key: string, known: readonly string[]): string | undefined {
  let best: string | undefined;
  let bestD = Math.min(3, Math.max(1, Math.floor(key.length / 3)));
  for (const k of known) {
    const d = distance(key.toLowerCase(), k.toLowerCase());
    if (d <= bestD) {
      best = k;
      bestD = d - 1;
      if (d === 0) break;
    }
  }
  return best;
}

/** Optimal-string-alignment edit distance. */
function distance(a: string, b: string): number {
  const d: number[][] = Array.from({ length: a.length + 1 }, (_, i) => [i]);
  for (let j = 1; j <= b.length; j++) (d[0] as number[])[j] = j;
  for (let i = 1; i <= a.length; i++) {
    const row = d[i] as number[];
    const prev = d[i - 1] as number[];
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let v = Math.min((prev[j] as number) + 1, (row[j - 1] as number) + 1, (prev[j - 1] as number) + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) v = Math.min(v, ((d[i - 2] as number[])[j - 2] as number) + 1);
      row[j] = v;
    }
  }
  return (d[a.length] as number[])[b.length] as number;
}

const IDENT = /^[A-Za-z_$][A-Za-z0-9_$]*$/;

/** `nodes[1].weight`, `limits.methodTimeoutMs["getBlock"]` for keys that aren't identifiers. */
export function fieldName(path: readonly PropertyKey[]): string {
  let s = '';
  for (const p of path) {
    if (typeof p === 'number') s += `[${p}]`;
    else if (typeof p === 'string' && IDENT.test(p)) s += s === '' ? p : `.${p}`;
    else s += `[${JSON.stringify(String(p))}]`;
  }
  return s === '' ? '(top level)' : s;
}

/** Token values never appear in messages. */
const isSecret = (path: readonly PropertyKey[]): boolean => path[path.length - 1] === 'token';

function describe(v: unknown, secret: boolean): string {
  if (v === undefined) return 'nothing';
  if (v === null) return 'null (an empty value)';
  if (typeof v === 'string') {
    if (secret) return v === '' ? 'an empty string' : `a ${v.length}-character string`;
    return JSON.stringify(v.length > 80 ? v.slice(0, 77) + '...' : v);
  }
  if (Array.isArray(v)) return 'a list';
  if (typeof v === 'object') return 'a mapping';
  return String(v);
}

function formatIssue(issue: z.core.$ZodIssue, fromEnv: Map<string, string[]>): string[] {
  const where = fieldName(issue.path);
  if (issue.code === 'unrecognized_keys') {
    // unknownKeys() reports these first; kept as a safety net.
    return issue.keys.map((k) => `${where}: unknown key ${JSON.stringify(k)}`);
  }
  if (issue.code === 'invalid_key') {
    const inner = issue.issues[0]?.message ?? 'a valid key';
    return [`${where}: invalid key, ${inner.startsWith('expected ') ? inner : `expected ${inner}`}`];
  }
  if (!issue.message.startsWith('expected ')) return [`${where}: ${issue.message}`];
  if (issue.code === 'invalid_type' && issue.input === undefined) return [`${where}: missing, ${issue.message}`];
  const vars = fromEnv.get(pathKey(issue.path as Path));
  const origin = vars === undefined ? '' : ` (from ${vars.map((n) => `\${${n}}`).join(', ')})`;
  return [`${where}: ${issue.message}, got ${describe(issue.input, isSecret(issue.path))}${origin}`];
}
