// The pg connection pool behind a `postgres://` store.url: a few connections (the store's
// callers are background tasks and the console, never the request path), numbers read back as
// numbers, and a first connection made at once so a wrong host, port, user, password or
// database fails the start with a message naming it (never the password).

import pg from 'pg';
import { StoreConnectError, StoreUrlError } from '../errors.js';

/** Connections per store instance (docs/configuration.md "Configuration": `store.url`). */
export const POOL_SIZE = 5;
/** A host that answers nothing (dropped packets) fails the connect after this long. */
export const CONNECT_TIMEOUT_MS = 10_000;

const INT8_OID = 20;
const NUMERIC_OID = 1700;

/**
 * bigint columns (epoch ms, counts) and sum() (numeric) come back from pg as strings; the
 * values the store keeps are integers far below 2^53, so they are read as numbers. Only this
 * pool's clients are affected (pg's global parsers stay as they are).
 */
const types = {
  getTypeParser(oid: number, format?: 'text' | 'binary'): (value: string) => unknown {
    if (oid === INT8_OID || oid === NUMERIC_OID) return Number;
    return (pg.types.getTypeParser as (oid: number, format?: 'text' | 'binary') => (value: string) => unknown)(oid, format);
  },
} as unknown as pg.CustomTypesConfig;

/** The URL as logs may show it: `postgres://user@host:port/db`, the password left out. */
export function redactUrl(url: string): string {
  try {
    const u = new URL(url);
    u.password = '';
    return u.toString();
  } catch {
    return 'postgres://…';
  }
}

/** Where a URL points, for messages: `host:port` (5432 when the URL names none). */
function target(u: URL): string {
  return `${u.hostname || 'localhost'}:${u.port || '5432'}`;
}

/** The pg settings of one connection to the database `url` names (the pool and the change listener use them). */
export function clientConfig(url: string): pg.ClientConfig {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    throw new StoreUrlError(`store.url ${redactUrl(url)}: expected postgres://USER:PASSWORD@HOST:PORT/DATABASE`);
  }
  if (u.pathname.length <= 1) throw new StoreUrlError(`store.url ${redactUrl(url)}: name the database (postgres://USER:PASSWORD@HOST:PORT/DATABASE)`);
  // keepAlive: a server that vanished without closing (network partition) fails the
  // connection instead of leaving a query waiting forever. application_name shows the
  // gateways in pg_stat_activity (a `?application_name=` in the URL wins).
  return { connectionString: url, connectionTimeoutMillis: CONNECT_TIMEOUT_MS, keepAlive: true, application_name: 'jumpgate', types };
}

/** A pool on `url`, its first connection made (StoreConnectError when the server is unreachable or refuses us). */
export async function connectPool(url: string): Promise<pg.Pool> {
  const config = clientConfig(url);
  const pool = new pg.Pool({ ...config, max: POOL_SIZE });
  // An idle connection the server drops (restart, failover) is reported here; without a
  // listener pg would crash the process. The next query opens a new one or fails, and its
  // caller (usage flush, token sync, console) reports that.
  pool.on('error', () => {});
  try {
    const client = await pool.connect();
    client.release();
  } catch (err) {
    await pool.end().catch(() => {});
    throw connectError(url, err);
  }
  return pool;
}

/** What went wrong reaching `url`, in words an operator can act on, the password never included. */
export function connectError(url: string, err: unknown): StoreConnectError {
  const u = new URL(url);
  const password = decodeURIComponent(u.password);
  const e = err as { code?: string; message?: string } | null;
  const code = e?.code;
  let why: string;
  if (code === '28P01' || code === '28000') why = `authentication failed for user "${decodeURIComponent(u.username)}"`;
  else if (code === '3D000') why = `database "${decodeURIComponent(u.pathname.slice(1))}" does not exist`;
  else if (code === 'ECONNREFUSED') why = 'connection refused (is PostgreSQL running and listening there?)';
  else if (code === 'ENOTFOUND' || code === 'EAI_AGAIN') why = `cannot resolve host "${u.hostname}"`;
  else why = e?.message ?? String(err);
  let detail = e?.message !== undefined && e.message !== why ? `${why} (${code !== undefined ? code + ': ' : ''}${e.message})` : why;
  if (password !== '') detail = detail.split(password).join('***');
  return new StoreConnectError(`store.url ${redactUrl(url)}: cannot open the PostgreSQL store at ${target(u)}: ${detail}`, { cause: err });
}
