// `jumpgate nodes …` and `jumpgate reload`: clients of a running gateway's admin API.
// Exit codes: 0 done, 2 usage error, 1 the API refused or could not be reached.

import { parseArgs } from 'node:util';

export const DEFAULT_ADMIN_URL = 'http://127.0.0.1:9464';

export const NODES_USAGE = `usage:
  jumpgate nodes [--json]                 list nodes: state, weight, slot, lag, in-flight, p50/p99
  jumpgate nodes set-weight ID WEIGHT     change a node's weight (>= 0) live
  jumpgate nodes drain ID                 stop sending new requests to a node (in-flight ones finish)
  jumpgate nodes undrain ID               let it take traffic again
  jumpgate reload                         re-read the config file (like SIGHUP)
options:
  --admin URL    admin API (default $JUMPGATE_ADMIN_URL or ${DEFAULT_ADMIN_URL})
  --token T      admin token (default $JUMPGATE_ADMIN_TOKEN)`;

class UsageError extends Error {}
class ApiError extends Error {}

interface NodeRow {
  id: string;
  state: string;
  weight: number;
  drained: boolean;
  slot: number | null;
  lag: number | null;
  inflight: number;
  rps: number;
  latency: { count: number; p50: number | null; p99: number | null };
}

interface Target {
  base: string;
  token: string;
}

function parse(argv: string[], extra: Record<string, { type: 'boolean' }> = {}): { positionals: string[]; target: Target; json: boolean } {
  let parsed;
  try {
    parsed = parseArgs({
      args: argv,
      strict: true,
      allowPositionals: true,
      options: { admin: { type: 'string' }, token: { type: 'string' }, ...extra },
    });
  } catch (e) {
    throw new UsageError((e as Error).message.split('\n')[0]!);
  }
  const v = parsed.values as { admin?: string; token?: string; json?: boolean };
  const raw = v.admin ?? process.env.JUMPGATE_ADMIN_URL ?? DEFAULT_ADMIN_URL;
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new UsageError(`--admin must be a URL like ${DEFAULT_ADMIN_URL}, got "${raw}"`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new UsageError(`--admin must be an http:// or https:// URL, got "${raw}"`);
  return {
    positionals: parsed.positionals,
    target: { base: url.href.replace(/\/+$/, ''), token: v.token ?? process.env.JUMPGATE_ADMIN_TOKEN ?? '' },
    json: v.json === true,
  };
}

async function api(t: Target, method: string, path: string, body?: unknown): Promise<unknown> {
  const headers: Record<string, string> = {};
  if (t.token !== '') headers.authorization = `Bearer ${t.token}`;
  if (body !== undefined) headers['content-type'] = 'application/json';
  let res: Response;
  try {
    res = await fetch(t.base + path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body), signal: AbortSignal.timeout(30_000) });
  } catch (err) {
    const e = err as Error & { cause?: { code?: string; message?: string } };
    const why = e.name === 'TimeoutError' ? 'timed out' : (e.cause?.code ?? e.cause?.message ?? e.message);
    throw new ApiError(`admin API not reachable at ${t.base} (${why}); is jumpgate running with admin.port set?`);
  }
  const text = await res.text();
  let json: unknown = null;
  try {
    json = JSON.parse(text);
  } catch {
    // not JSON: reported below
  }
  if (!res.ok) {
    const msg = (json as { error?: unknown } | null)?.error;
    let line = `admin API: HTTP ${res.status}: ${typeof msg === 'string' ? msg : text.trim().slice(0, 200)}`;
    if (res.status === 401 && t.token === '') line += ' (pass --token or set JUMPGATE_ADMIN_TOKEN)';
    throw new ApiError(line);
  }
  if (json === null) throw new ApiError(`admin API: expected JSON from ${path}, got: ${text.slice(0, 200)}`);
  return json;
}

const dash = (v: number | null | undefined): string => (v === null || v === undefined ? '-' : String(v));

export function nodesTable(rows: readonly NodeRow[]): string {
  const head = ['ID', 'STATE', 'WEIGHT', 'DRAINED', 'SLOT', 'LAG', 'REQ/S', 'INFLIGHT', 'P50 MS', 'P99 MS'];
  const body = rows.map((n) => [
    n.id,
    n.state,
    String(n.weight),
    n.drained ? 'yes' : 'no',
    dash(n.slot),
    dash(n.lag),
    String(Math.round(n.rps)),
    String(n.inflight),
    n.latency.count === 0 ? '-' : dash(n.latency.p50),
    n.latency.count === 0 ? '-' : dash(n.latency.p99),
  ]);
  const widths = head.map((h, i) => Math.max(h.length, ...body.map((r) => r[i]!.length)));
  return [head, ...body].map((r) => r.map((c, i) => (i === r.length - 1 ? c : c.padEnd(widths[i]!))).join('  ')).join('\n');
}

function oneNode(n: NodeRow): string {
  return `node ${n.id}: weight ${n.weight}, ${n.drained ? 'drained' : 'not drained'}, state ${n.state}`;
}

function wantArgs(pos: string[], n: number, usage: string): void {
  if (pos.length !== n) throw new UsageError(`expected: ${usage}`);
}

async function nodes(argv: string[]): Promise<void> {
  const { positionals: pos, target, json } = parse(argv, { json: { type: 'boolean' } });
  const [sub, ...args] = pos;
  if (sub === undefined || sub === 'list') {
    if (sub === 'list') wantArgs(args, 0, 'jumpgate nodes list');
    const rows = (await api(target, 'GET', '/admin/nodes')) as NodeRow[];
    process.stdout.write((json ? JSON.stringify(rows, null, 2) : nodesTable(rows)) + '\n');
    return;
  }
  let patch: { weight?: number; drained?: boolean };
  switch (sub) {
    case 'set-weight': {
      wantArgs(args, 2, 'jumpgate nodes set-weight ID WEIGHT');
      const w = Number(args[1]);
      if (args[1]!.trim() === '' || !Number.isFinite(w) || w < 0) throw new UsageError(`WEIGHT must be a number >= 0, got "${args[1]}"`);
      patch = { weight: w };
      break;
    }
    case 'drain':
    case 'undrain':
      wantArgs(args, 1, `jumpgate nodes ${sub} ID`);
      patch = { drained: sub === 'drain' };
      break;
    default:
      throw new UsageError(`unknown nodes command "${sub}"`);
  }
  const row = (await api(target, 'PATCH', '/admin/nodes/' + encodeURIComponent(args[0]!), patch)) as NodeRow;
  process.stdout.write((json ? JSON.stringify(row, null, 2) : oneNode(row)) + '\n');
}

async function reload(argv: string[]): Promise<void> {
  const { positionals, target } = parse(argv);
  if (positionals.length > 0) throw new UsageError(`unexpected argument "${positionals[0]}"`);
  const summary = await api(target, 'POST', '/admin/reload');
  process.stdout.write(JSON.stringify(summary, null, 2) + '\n');
}

async function run(name: string, fn: (argv: string[]) => Promise<void>, argv: string[]): Promise<void> {
  try {
    await fn(argv);
  } catch (err) {
    if (err instanceof UsageError) {
      process.stderr.write(`jumpgate ${name}: ${err.message}\n\n${NODES_USAGE}\n`);
      process.exitCode = 2;
    } else if (err instanceof ApiError) {
      process.stderr.write(`jumpgate ${name}: ${err.message}\n`);
      process.exitCode = 1;
    } else throw err;
  }
}

export const runNodesCli = (argv: string[]): Promise<void> => run('nodes', nodes, argv);
export const runReloadCli = (argv: string[]): Promise<void> => run('reload', reload, argv);
