// The admin API client behind `jumpgate nodes` and `jumpgate reload`: the --admin/--token
// flags (or $JUMPGATE_ADMIN_URL / $JUMPGATE_ADMIN_TOKEN), one JSON request, and the exit codes
// both commands share: 0 done, 2 usage error, 1 the API refused or could not be reached.

import { parseArgs } from 'node:util';
import { asksHelp, helpFor } from './help.js';
import { UsageError } from './usage-error.js';

export const DEFAULT_ADMIN_URL = 'http://127.0.0.1:9464';

/** The API refused, or could not be reached: exit status 1. */
export class ApiError extends Error {}

export interface Target {
  base: string;
  token: string;
}

export function parseAdminArgs(argv: string[], extra: Record<string, { type: 'boolean' }> = {}): { positionals: string[]; target: Target; json: boolean } {
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

export async function adminApi(t: Target, method: string, path: string, body?: unknown): Promise<unknown> {
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

/** Runs one admin command, turning its errors into a message and an exit status. */
export async function runAdminCommand(name: string, fn: (argv: string[]) => Promise<void>, argv: string[]): Promise<void> {
  if (asksHelp(argv)) {
    process.stdout.write(helpFor(name, argv)! + '\n');
    return;
  }
  try {
    await fn(argv);
  } catch (err) {
    if (err instanceof UsageError) {
      process.stderr.write(`jumpgate ${name}: ${err.message}\n\n${helpFor(name, argv)!}\n`);
      process.exitCode = 2;
    } else if (err instanceof ApiError) {
      process.stderr.write(`jumpgate ${name}: ${err.message}\n`);
      process.exitCode = 1;
    } else throw err;
  }
}
