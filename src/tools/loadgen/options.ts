// `jumpgate bench` flags: parsed and checked up front, every message naming the flag and
// what it accepts (a bad flag is exit 2). The result is one plain options object shared by
// the HTTP and WebSocket load engines.

import { parseArgs } from 'node:util';

export class BenchUsageError extends Error {
  readonly code = 'BENCH_USAGE';
  constructor(
    /** The flag at fault, with its dashes ('--rate'), or '' when no single flag is. */
    readonly flag: string,
    message: string,
  ) {
    super(message);
  }
}

export const BENCH_USAGE = `usage: jumpgate bench --url URL [options]

HTTP load (open loop at --rate unless --closed):
  --url URL             JSON-RPC endpoint (http:// or https://; ws:// with --ws-subscribers);
                        repeat it to spread requests (or WebSocket clients) round-robin
                        over several
  --rate R              requests per second to send, open loop (default 1000)
  --closed              closed loop instead: each connection sends its next request when
                        the previous one is answered (--rate is then not allowed)
  --duration D          how long to measure: 10, 10s, 500ms, 2m (default 10s)
  --warmup D            load sent before measuring, not recorded (default 1s)
  --connections C       HTTP connections (default 50)
  --method M            JSON-RPC method (default getSlot)
  --params JSON         params, a JSON array or object (default: none)
  --batch N             send a batch of N calls per request (default: a single call)
  --affinity MODE       X-Service-Affinity: key | node | default
  --keys K              with --affinity key: cycle X-Service-Affinity-Key over K keys
  --token T             API token, in the path /api-token/T (or see --token-in)
  --token-in WHERE      path (default) or header (X-Service-Api-Token)
  --brand B             header brand, X-<B>-Affinity… (default Service)
  --header 'N: V'       extra request header (repeatable)
  --timeout D           per-request timeout (default 30s)
  --insecure            https:// and wss://: do not verify the server's certificate (for
                        self-signed test certificates; NODE_EXTRA_CA_CERTS=ca.pem trusts
                        a test CA instead)
  --max-pending N       open loop: requests waiting or in flight before new ones are
                        dropped and counted as errors (default 100000)

WebSocket notification delay:
  --ws-subscribers N    open N WebSocket clients, each subscribing once, and measure how
                        late each notification reaches each client
  --ws-method M         subscribe method (default slotSubscribe)
  --ws-params JSON      its params (default: none)
  --ws-reference URL    also subscribe directly to a node (repeatable); the earliest arrival
                        of a notification over all clients and references is the zero
  --ws-procs P          spread the clients over P child processes (default 1: this one)

Output:
  --json                print the result as JSON instead of a table
  --quiet               no progress on stderr
  -h, --help            this text

Latency in open loop is measured from each request's intended send time (corrects for
coordinated omission); service time (from the actual send) is reported beside it.
Exit status: 0 done, 1 no request or subscription succeeded, 2 bad flags.`;

export type AffinityMode = 'key' | 'node' | 'default';

export interface HttpBenchOptions {
  /** One or more endpoints; requests go round-robin over them (each has its own pool). */
  urls: URL[];
  mode: 'open' | 'closed';
  /** Requests per second (open loop). */
  rate: number;
  durationMs: number;
  warmupMs: number;
  connections: number;
  method: string;
  /** Raw JSON text of the params, or null for none. */
  params: string | null;
  /** Calls per request; 0 = a single call (not an array). */
  batch: number;
  affinity: AffinityMode | null;
  keys: number;
  token: string | null;
  tokenIn: 'path' | 'header';
  brand: string;
  headers: [string, string][];
  timeoutMs: number;
  maxPending: number;
  /** Skip TLS certificate verification (--insecure). */
  insecure: boolean;
}

export interface WsBenchOptions {
  /** One or more endpoints; clients go round-robin over them. */
  urls: URL[];
  subscribers: number;
  method: string;
  params: string | null;
  references: URL[];
  procs: number;
  durationMs: number;
  /** Recorded before and after the measured window so no notification is cut off (1000). */
  graceMs: number;
  token: string | null;
  tokenIn: 'path' | 'header';
  brand: string;
  headers: [string, string][];
  timeoutMs: number;
  /** Skip TLS certificate verification (--insecure). */
  insecure: boolean;
}

export type BenchOptions =
  | { kind: 'help' }
  | { kind: 'http'; http: HttpBenchOptions; json: boolean; quiet: boolean }
  | { kind: 'ws'; ws: WsBenchOptions; json: boolean; quiet: boolean };

const FLAGS = {
  url: { type: 'string', multiple: true },
  rate: { type: 'string' },
  closed: { type: 'boolean' },
  duration: { type: 'string' },
  warmup: { type: 'string' },
  connections: { type: 'string' },
  method: { type: 'string' },
  params: { type: 'string' },
  batch: { type: 'string' },
  affinity: { type: 'string' },
  keys: { type: 'string' },
  token: { type: 'string' },
  'token-in': { type: 'string' },
  brand: { type: 'string' },
  header: { type: 'string', multiple: true },
  timeout: { type: 'string' },
  'max-pending': { type: 'string' },
  insecure: { type: 'boolean' },
  'ws-subscribers': { type: 'string' },
  'ws-method': { type: 'string' },
  'ws-params': { type: 'string' },
  'ws-reference': { type: 'string', multiple: true },
  'ws-procs': { type: 'string' },
  json: { type: 'boolean' },
  quiet: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
} as const;

/** Integer flag in [min, max]. */
function int(flag: string, text: string, min: number, max: number): number {
  const v = Number(text);
  if (text.trim() === '' || !Number.isInteger(v) || v < min || v > max) {
    throw new BenchUsageError(`--${flag}`, `--${flag} must be an integer from ${min} to ${max}, got "${text}"`);
  }
  return v;
}

/** A duration: plain seconds, or a number with ms / s / m. Returns milliseconds. */
export function parseDuration(flag: string, text: string, minMs: number): number {
  const m = /^\s*(\d+(?:\.\d+)?)\s*(ms|s|m)?\s*$/.exec(text);
  const ms = m ? Number(m[1]) * (m[2] === 'ms' ? 1 : m[2] === 'm' ? 60_000 : 1000) : NaN;
  if (!m || !(ms >= minMs) || ms > 86_400_000) {
    throw new BenchUsageError(`--${flag}`, `--${flag} must be a duration such as 10, 10s, 500ms or 2m (at least ${minMs} ms, at most a day), got "${text}"`);
  }
  return Math.round(ms);
}

function json(flag: string, text: string): string {
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch (e) {
    throw new BenchUsageError(`--${flag}`, `--${flag} must be JSON (an array or object): ${(e as Error).message}`);
  }
  if (v === null || typeof v !== 'object') throw new BenchUsageError(`--${flag}`, `--${flag} must be a JSON array or object, got ${text}`);
  return JSON.stringify(v);
}

function url(flag: string, text: string, schemes: string[]): URL {
  let u: URL;
  try {
    u = new URL(text);
  } catch {
    throw new BenchUsageError(`--${flag}`, `--${flag} must be an absolute URL such as http://127.0.0.1:8899, got "${text}"`);
  }
  if (!schemes.includes(u.protocol)) {
    throw new BenchUsageError(`--${flag}`, `--${flag} must use ${schemes.map((s) => s.slice(0, -1)).join(' or ')}, got "${u.protocol.slice(0, -1)}"`);
  }
  return u;
}

function methodName(flag: string, text: string): string {
  if (text === '' || text.length > 128 || /[\u0000-\u001f"\\]/.test(text)) {
    throw new BenchUsageError(
      `--${flag}`,
      `--${flag} must be a method name (1-128 characters, no quotes, backslashes or control characters), got ${JSON.stringify(text)}`,
    );
  }
  return text;
}

function header(text: string): [string, string] {
  const i = text.indexOf(':');
  const name = i > 0 ? text.slice(0, i).trim() : '';
  if (!/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(name) || /[\r\n]/.test(text)) {
    throw new BenchUsageError('--header', `--header must be "Name: value", got ${JSON.stringify(text)}`);
  }
  return [name, text.slice(i + 1).trim()];
}

function parseFlags(argv: string[]) {
  try {
    return parseArgs({ args: argv, options: FLAGS, strict: true, allowPositionals: false }).values;
  } catch (e) {
    const msg = (e as Error).message.split('\n')[0]!;
    const flag = /'(--?[\w-]+)/.exec(msg)?.[1] ?? '';
    throw new BenchUsageError(flag, msg);
  }
}

/** Parses `jumpgate bench` arguments (argv excludes the `bench` word); throws BenchUsageError. */
export function parseBenchArgs(argv: string[]): BenchOptions {
  const values = parseFlags(argv);
  if (values.help === true) return { kind: 'help' };
  const out = { json: values.json === true, quiet: values.quiet === true };
  if (values.url === undefined) throw new BenchUsageError('--url', '--url is required (the JSON-RPC endpoint to load)');
  const urls = values.url;

  const tokenIn = values['token-in'] ?? 'path';
  if (tokenIn !== 'path' && tokenIn !== 'header') throw new BenchUsageError('--token-in', `--token-in must be path or header, got "${tokenIn}"`);
  if (values['token-in'] !== undefined && values.token === undefined) throw new BenchUsageError('--token-in', '--token-in needs --token');
  const token = values.token ?? null;
  if (token !== null && (token === '' || /[\s/?#]/.test(token)))
    throw new BenchUsageError('--token', `--token must be non-empty without spaces, "/", "?" or "#", got ${JSON.stringify(token)}`);
  const brand = values.brand ?? 'Service';
  if (!/^[A-Za-z0-9][A-Za-z0-9-]{0,31}$/.test(brand)) throw new BenchUsageError('--brand', `--brand must be 1-32 letters, digits or dashes, got "${brand}"`);
  const headers = (values.header ?? []).map(header);
  const timeoutMs = values.timeout === undefined ? 30_000 : parseDuration('timeout', values.timeout, 1);
  const durationMs = values.duration === undefined ? 10_000 : parseDuration('duration', values.duration, 100);
  const insecure = values.insecure === true;
  if (insecure && ![...urls, ...(values['ws-reference'] ?? [])].some((u) => /^(https|wss):/i.test(u))) {
    throw new BenchUsageError('--insecure', '--insecure needs an https:// or wss:// URL (it skips TLS certificate verification)');
  }

  if (values['ws-subscribers'] !== undefined) {
    for (const f of ['rate', 'closed', 'connections', 'method', 'params', 'batch', 'affinity', 'keys', 'warmup', 'max-pending'] as const) {
      if (values[f] !== undefined) throw new BenchUsageError(`--${f}`, `--${f} is for HTTP load; it cannot be combined with --ws-subscribers`);
    }
    const ws: WsBenchOptions = {
      urls: urls.map((u) => url('url', u, ['ws:', 'wss:', 'http:', 'https:'])),
      subscribers: int('ws-subscribers', values['ws-subscribers'], 1, 1_000_000),
      method: methodName('ws-method', values['ws-method'] ?? 'slotSubscribe'),
      params: values['ws-params'] === undefined ? null : json('ws-params', values['ws-params']),
      references: (values['ws-reference'] ?? []).map((r) => url('ws-reference', r, ['ws:', 'wss:', 'http:', 'https:'])),
      procs: values['ws-procs'] === undefined ? 1 : int('ws-procs', values['ws-procs'], 1, 64),
      durationMs,
      graceMs: 1000,
      token,
      tokenIn,
      brand,
      headers,
      timeoutMs,
      insecure,
    };
    if (ws.procs > ws.subscribers) throw new BenchUsageError('--ws-procs', `--ws-procs (${ws.procs}) must not exceed --ws-subscribers (${ws.subscribers})`);
    return { kind: 'ws', ws, ...out };
  }
  for (const f of ['ws-method', 'ws-params', 'ws-reference', 'ws-procs'] as const) {
    if (values[f] !== undefined) throw new BenchUsageError(`--${f}`, `--${f} needs --ws-subscribers`);
  }

  const closed = values.closed === true;
  if (closed && values.rate !== undefined) throw new BenchUsageError('--rate', '--rate sets the open-loop rate; it cannot be combined with --closed');
  if (closed && values['max-pending'] !== undefined)
    throw new BenchUsageError('--max-pending', '--max-pending is for the open loop; it cannot be combined with --closed');
  const affinityText = values.affinity;
  let affinity: AffinityMode | null = null;
  if (affinityText !== undefined) {
    const a = affinityText.toLowerCase();
    if (a !== 'key' && a !== 'node' && a !== 'default')
      throw new BenchUsageError('--affinity', `--affinity must be key, node or default, got "${affinityText}"`);
    affinity = a;
  }
  const keys = values.keys === undefined ? 0 : int('keys', values.keys, 1, 10_000_000);
  if (values.keys !== undefined && affinity !== 'key') throw new BenchUsageError('--keys', '--keys needs --affinity key');
  if (affinity === 'key' && values.keys === undefined)
    throw new BenchUsageError('--keys', '--affinity key needs --keys K (the number of distinct affinity keys to cycle over)');
  const http: HttpBenchOptions = {
    urls: urls.map((u) => url('url', u, ['http:', 'https:'])),
    mode: closed ? 'closed' : 'open',
    rate: values.rate === undefined ? 1000 : int('rate', values.rate, 1, 10_000_000),
    durationMs,
    warmupMs: values.warmup === undefined ? 1000 : parseDuration('warmup', values.warmup, 0),
    connections: values.connections === undefined ? 50 : int('connections', values.connections, 1, 100_000),
    method: methodName('method', values.method ?? 'getSlot'),
    params: values.params === undefined ? null : json('params', values.params),
    batch: values.batch === undefined ? 0 : int('batch', values.batch, 1, 100_000),
    affinity,
    keys,
    token,
    tokenIn,
    brand,
    headers,
    timeoutMs,
    maxPending: values['max-pending'] === undefined ? 100_000 : int('max-pending', values['max-pending'], 1, 100_000_000),
    insecure,
  };
  return { kind: 'http', http, ...out };
}

/** Request path with the token applied (`/api-token/T` after the URL's own path). */
export function requestPath(u: URL, token: string | null, tokenIn: 'path' | 'header', trailingSlash = false): string {
  let path = u.pathname;
  if (token !== null && tokenIn === 'path') path = path.replace(/\/+$/, '') + '/api-token/' + encodeURIComponent(token) + (trailingSlash ? '/' : '');
  return path + u.search;
}
