// The admin listener (docs/admin-api.md "Admin API"): node view and live weight/drain changes, config reload,
// Prometheus metrics, health and readiness probes. node:http is enough: this is off the hot
// path. /healthz and /readyz answer anyone (orchestrators probe them); every other route
// needs `Authorization: Bearer <admin.token>`, and with no token configured answers 401.

import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Logger } from 'pino';
import type { LandingFigures } from '../landing/figures.js';
import { landingJsonById } from '../landing/view.js';
import type { GatewayMetrics } from '../metrics/prometheus.js';
import { usable } from '../routing/node-view.js';
import type { NodePool } from '../upstream/pool.js';
import { AUTH_DISABLED, AUTH_MISSING, AUTH_OK, type AdminAuth } from './auth.js';
import { AdminErrors } from './errors.js';
import { ReloadError, type ReloadSummary } from './reload.js';
import { nodesJson, parsePatch } from './views.js';

const MAX_BODY = 64 * 1024;
const NODE_PATH = /^\/admin\/nodes\/([^/]+)$/;
/** The authenticated routes besides /admin/nodes/:id. */
const ROUTES = new Set(['/metrics', '/admin/status', '/admin/nodes', '/admin/engines', '/admin/reload', '/admin/ws', '/admin/landing', '/admin/cache']);

export interface AdminDeps {
  pool: NodePool;
  metrics: GatewayMetrics;
  auth: AdminAuth;
  reload(): Promise<ReloadSummary>;
  /** True while the gateway drains for shutdown (readiness fails). */
  draining(): boolean;
  /** WebSocket figures: client connections, shared subscriptions, upstream ones per node. */
  ws(): {
    connections: number;
    sharedSubscriptions: number;
    upstreamSubscriptions: Record<string, number>;
    redundancy: Record<string, { first: number; dropped: number }>;
  };
  /** Transaction landing since start (docs/landing.md "Where they show"). */
  landing: LandingFigures;
  /** GET /admin/cache: the account cache's figures (docs/account-cache.md "Seen"); `{ enabled: false }` when it is off. */
  cache(): object;
  /** GET /admin/status: the runtime, which listener serves and why, the data-plane threads. */
  status(): { node: string; listener: { engine: string; reason: string }; workers: number; draining: boolean };
  /** GET /admin/engines: the Jito block engines configured now (docs/jito.md), never their headers. */
  engines(): { id: string; url: string; rateLimit: number }[];
  log: Logger;
}

export interface AdminServer {
  readonly port: number;
  /** http://host:port */
  readonly url: string;
  close(): Promise<void>;
}

class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
  }
}

function send(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const text = JSON.stringify(body) + '\n';
  res.writeHead(status, { 'content-type': 'application/json', 'cache-control': 'no-store', 'content-length': Buffer.byteLength(text), ...headers });
  res.end(text);
}

/** The request body as text; an oversized body is read to its end (so the client sees the 413)
 * unless it goes on far beyond the limit. */
function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size <= MAX_BODY) chunks.push(c);
      else if (size > 16 * MAX_BODY) req.destroy();
    });
    req.on('end', () =>
      size > MAX_BODY ? reject(new HttpError(AdminErrors.tooLarge.status, `body over ${MAX_BODY} bytes`)) : resolve(Buffer.concat(chunks).toString('utf8')),
    );
    req.on('error', reject);
  });
}

function allow(req: IncomingMessage, methods: string[]): void {
  const m = req.method ?? 'GET';
  if (methods.includes(m) || (m === 'HEAD' && methods.includes('GET'))) return;
  throw new HttpError(AdminErrors.methodNotAllowed.status, `method ${m} not allowed here; use ${methods.join(' or ')}`, { allow: methods.join(', ') });
}

const UNAUTHORIZED = { 'www-authenticate': 'Bearer realm="jumpgate-admin"' };

function authorize(deps: AdminDeps, req: IncomingMessage): void {
  const r = deps.auth.check(req.headers.authorization);
  if (r === AUTH_OK) return;
  if (r === AUTH_DISABLED)
    throw new HttpError(
      AdminErrors.disabled.status,
      'admin API disabled: set admin.token in the config (e.g. admin: { token: ${JUMPGATE_ADMIN_TOKEN} }) to use it',
      UNAUTHORIZED,
    );
  if (r === AUTH_MISSING) throw new HttpError(AdminErrors.unauthorized.status, 'missing admin token: send "Authorization: Bearer <admin.token>"', UNAUTHORIZED);
  throw new HttpError(AdminErrors.unauthorized.status, 'wrong admin token', UNAUTHORIZED);
}

async function route(deps: AdminDeps, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const url = new URL(req.url ?? '/', 'http://admin.invalid');
  const path = url.pathname.length > 1 ? url.pathname.replace(/\/+$/, '') : url.pathname;
  const pool = deps.pool;

  if (path === '/healthz') {
    allow(req, ['GET']);
    return send(res, 200, { status: 'ok' });
  }
  if (path === '/readyz') {
    allow(req, ['GET']);
    const usableNodes = pool.nodes.filter(usable).length;
    if (deps.draining()) return send(res, 503, { status: 'draining', usableNodes });
    if (usableNodes === 0) return send(res, 503, { status: 'no usable node', usableNodes: 0 });
    return send(res, 200, { status: 'ready', usableNodes });
  }

  const nodeMatch = NODE_PATH.exec(path);
  if (!ROUTES.has(path) && nodeMatch === null) {
    throw new HttpError(
      AdminErrors.notFound.status,
      `no route ${path}; see GET /admin/status, GET /admin/nodes, GET /admin/engines, PATCH /admin/nodes/:id, POST /admin/reload, GET /admin/ws, GET /admin/landing, GET /admin/cache, GET /metrics, /healthz, /readyz`,
    );
  }
  authorize(deps, req);

  if (path === '/metrics') {
    allow(req, ['GET']);
    const text = await deps.metrics.text();
    res.writeHead(200, { 'content-type': deps.metrics.contentType, 'cache-control': 'no-store' });
    res.end(text);
    return;
  }
  if (path === '/admin/nodes') {
    allow(req, ['GET']);
    return send(
      res,
      200,
      nodesJson(pool.nodes, performance.now(), (i) => pool.gate.support.learnedOf(i, performance.now())),
    );
  }
  if (path === '/admin/engines') {
    allow(req, ['GET']);
    return send(res, 200, deps.engines());
  }
  if (path === '/admin/status') {
    allow(req, ['GET']);
    return send(res, 200, deps.status());
  }
  if (path === '/admin/ws') {
    allow(req, ['GET']);
    return send(res, 200, deps.ws());
  }
  if (path === '/admin/landing') {
    allow(req, ['GET']);
    return send(res, 200, {
      nodes: landingJsonById(deps.landing.nodes()),
      tokens: landingJsonById(deps.landing.tokens()),
      ranking: deps.landing.ranking?.view() ?? {},
    });
  }
  if (path === '/admin/cache') {
    allow(req, ['GET']);
    return send(res, 200, deps.cache());
  }
  if (path === '/admin/reload') {
    allow(req, ['POST']);
    try {
      return send(res, 200, await deps.reload());
    } catch (err) {
      if (err instanceof ReloadError) throw new HttpError(err.status, err.message);
      throw err;
    }
  }
  // /admin/nodes/:id
  allow(req, ['GET', 'PATCH']);
  let id: string;
  try {
    id = decodeURIComponent(nodeMatch![1]!);
  } catch {
    throw new HttpError(AdminErrors.invalid.status, 'node id is not valid percent-encoding');
  }
  if (pool.byId(id) === undefined)
    throw new HttpError(AdminErrors.notFound.status, `no node ${JSON.stringify(id)}; nodes: ${pool.nodes.map((n) => n.id).join(', ')}`);
  if (req.method === 'PATCH') {
    const patch = parsePatch(await readBody(req));
    if (typeof patch === 'string') throw new HttpError(AdminErrors.invalid.status, patch);
    const node = pool.byId(id)!;
    const before = { weight: node.weight, drained: node.drained };
    if (patch.weight !== undefined) pool.setWeight(id, patch.weight);
    if (patch.drained !== undefined) pool.setDrained(id, patch.drained);
    deps.log.info({ node: id, before, after: { weight: node.weight, drained: node.drained } }, 'node changed through the admin API');
  }
  const view = nodesJson(pool.nodes, performance.now(), (i) => pool.gate.support.learnedOf(i, performance.now())).find((v) => v.id === id)!;
  return send(res, 200, view);
}

export function startAdminServer(host: string, port: number, deps: AdminDeps): Promise<AdminServer> {
  const server: Server = createServer((req, res) => {
    route(deps, req, res).catch((err: unknown) => {
      if (res.headersSent) {
        res.destroy();
        return;
      }
      if (err instanceof HttpError) return send(res, err.status, { error: err.message }, err.headers);
      deps.log.error({ err }, 'admin request failed');
      send(res, AdminErrors.internal.status, { error: 'internal error: ' + (err as Error).message });
    });
  });
  server.keepAliveTimeout = 5_000;
  return new Promise((resolve, reject) => {
    server.once('error', (err: NodeJS.ErrnoException) => reject(new Error(`cannot listen on ${host}:${port} for the admin API: ${err.code ?? err.message}`)));
    server.listen(port, host, () => {
      const actual = (server.address() as AddressInfo).port;
      const shownHost = host.includes(':') ? `[${host}]` : host;
      resolve({
        port: actual,
        url: `http://${shownHost}:${actual}`,
        close: () =>
          new Promise<void>((done) => {
            server.close(() => done());
            server.closeAllConnections();
          }),
      });
    });
  });
}
