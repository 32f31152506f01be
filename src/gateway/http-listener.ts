// The RPC listener (docs/interface.md "Public interface"): routing, CORS, token and header checks in the
// synchronous part of the request handler (either server engine, src/server/types.ts), then the body streams into an Exchange through an
// HttpResponder, which also writes the answer.

import { errorBody, Errors, statusLine, type GatewayErrorSpec } from '../errors.js';
import { Exchange } from './exchange.js';
import {
  H_CONTENT_LENGTH,
  H_CONTENT_TYPE,
  H_FORWARDED_FOR,
  H_ORIGIN,
  isJsonContentType,
  KEY_EMPTY,
  KEY_NOT_UTF8,
  keyProblem,
  MODE_INVALID,
  MODE_KEY,
  parseAffinity,
  utf8Header,
} from './headers.js';
import { HttpResponder } from './http-responder.js';
import type { RequestState } from './request-state.js';
import type { Serving } from './serving.js';
import type { Settings } from './settings.js';
import type { HttpApp, HttpReq as HttpRequest, HttpRes as HttpResponse } from '../server/types.js';

const PATH_PREFIXES = ['/api-token/', '/api-key/'];

/** Token from the path; '' for `/`; null when the path is not an RPC endpoint. */
export function pathToken(url: string): string | null {
  if (url === '/') return '';
  for (const p of PATH_PREFIXES) {
    if (!url.startsWith(p)) continue;
    let t = url.slice(p.length);
    if (t.endsWith('/')) t = t.slice(0, -1);
    if (t === '' || t.includes('/')) return null;
    return t;
  }
  return null;
}

function hasHeader(req: HttpRequest, a: string, b: string): boolean {
  let found = false;
  req.forEach((k) => {
    if (k === a || k === b) found = true;
  });
  return found;
}

function corsOriginFor(rt: Settings, req: HttpRequest): string {
  if (rt.corsAny) return '*';
  const origin = req.getHeader(H_ORIGIN);
  return origin !== '' && rt.corsOrigins.has(origin) ? origin : '';
}

/** Answers within the synchronous handler (already corked). */
function replyNow(
  res: HttpResponse,
  state: RequestState,
  e: GatewayErrorSpec,
  cors: string,
  data: Record<string, unknown> | undefined,
  close: boolean,
  extra?: [string, string],
): void {
  res.writeStatus(statusLine(e.http));
  res.writeHeader('content-type', 'application/json');
  if (cors !== '') res.writeHeader('access-control-allow-origin', cors);
  if (extra) res.writeHeader(extra[0], extra[1]);
  res.end(errorBody(e, null, data), close || state.draining);
}

/**
 * Rejects a request that may still be sending its body: reads and discards it so the
 * connection stays usable, unless it is larger than we accept at all.
 */
function rejectRequest(
  res: HttpResponse,
  req: HttpRequest,
  sv: Serving,
  e: GatewayErrorSpec,
  cors: string,
  data?: Record<string, unknown>,
  extra?: [string, string],
): void {
  const cl = req.getHeader('content-length');
  const len = cl === '' ? -1 : Number(cl);
  const state = sv.state;
  if (len === 0 || (cl === '' && req.getHeader('transfer-encoding') === '')) return replyNow(res, state, e, cors, data, false, extra);
  if (!(len > 0 && len <= sv.settings.maxBodyBytes)) return replyNow(res, state, e, cors, data, true, extra);
  let aborted = false;
  res.onAborted(() => {
    aborted = true;
  });
  res.onData((_chunk, isLast) => {
    if (isLast && !aborted) res.cork(() => replyNow(res, state, e, cors, data, false, extra));
  });
}

/** HEAD: the status and headers a GET would get, never a body (RFC 9110 §9.3.2). */
function headReply(res: HttpResponse, state: RequestState, e: GatewayErrorSpec, cors: string): void {
  res.writeStatus(statusLine(e.http));
  res.writeHeader('content-type', 'application/json');
  if (cors !== '') res.writeHeader('access-control-allow-origin', cors);
  if (e === Errors.methodNotAllowed) res.writeHeader('allow', 'POST, OPTIONS');
  // uws-pack 20.0.8 aborts the process when endWithoutBody gets arguments.
  if (state.draining) res.end('', true);
  else res.endWithoutBody();
}

function preflight(res: HttpResponse, req: HttpRequest, rt: Settings): void {
  const cors = corsOriginFor(rt, req);
  res.writeStatus('204 No Content');
  if (cors !== '') {
    res.writeHeader('access-control-allow-origin', cors);
    res.writeHeader('access-control-allow-methods', 'POST, OPTIONS');
    res.writeHeader('access-control-allow-headers', req.getHeader('access-control-request-headers') || rt.names.allowList);
    res.writeHeader('access-control-max-age', '86400');
    if (!rt.corsAny) res.writeHeader('vary', 'Origin');
  }
  res.end();
}

const DIFFERENT_TOKENS = { reason: 'different API tokens in path and headers' };

function handle(res: HttpResponse, req: HttpRequest, sv: Serving): void {
  const rt = sv.settings;
  const method = req.getMethod();
  if (method === 'options') return preflight(res, req, rt);
  const cors = corsOriginFor(rt, req);
  const fromPath = pathToken(req.getUrl());
  if (method === 'head') return headReply(res, sv.state, fromPath === null ? Errors.notFound : Errors.methodNotAllowed, cors);
  if (fromPath === null) return rejectRequest(res, req, sv, Errors.notFound, cors);
  if (method !== 'post') return rejectRequest(res, req, sv, Errors.methodNotAllowed, cors, undefined, ['allow', 'POST, OPTIONS']);

  const names = rt.names;
  const keys = rt.keys;
  const fromHeader = req.getHeader(keys.token);
  const fromKey = req.getHeader(keys.apiKey);
  let token = fromPath;
  if (fromHeader !== '') {
    if (token !== '' && fromHeader !== token) return rejectRequest(res, req, sv, Errors.badHeaders, cors, DIFFERENT_TOKENS);
    token = fromHeader;
  }
  if (fromKey !== '') {
    if (token !== '' && fromKey !== token) return rejectRequest(res, req, sv, Errors.badHeaders, cors, DIFFERENT_TOKENS);
    token = fromKey;
  }
  if (token === '') return rejectRequest(res, req, sv, Errors.unauthorized, cors, { reason: 'no API token' });
  const record = sv.services.tokens.find(token);
  if (record === null) return rejectRequest(res, req, sv, Errors.unauthorized, cors, { reason: 'unknown API token' });
  if (!record.active) return rejectRequest(res, req, sv, Errors.forbidden, cors, { token: record.prefix });

  const affinity = req.getHeader(keys.affinity);
  const mode = parseAffinity(affinity);
  if (mode === MODE_INVALID)
    return rejectRequest(res, req, sv, Errors.badHeaders, cors, { reason: 'affinity must be default, key or node', header: names.affinity });
  let key = utf8Header(req.getHeader(keys.affinityKey));
  if (key === '') key = utf8Header(req.getHeader(keys.affinityKeyBare));
  if (key === null) return rejectRequest(res, req, sv, Errors.badHeaders, cors, { reason: KEY_NOT_UTF8, header: names.affinityKey });
  if (key !== '') {
    const problem = keyProblem(key);
    if (problem !== null) return rejectRequest(res, req, sv, Errors.badHeaders, cors, { reason: problem, header: names.affinityKey });
  } else if (mode === MODE_KEY && hasHeader(req, names.affinityKey, names.affinityKeyBare)) {
    // A key of only spaces and non-ASCII characters arrives empty (docs/interface.md "Public interface").
    // Absent and empty look alike through getHeader; telling them apart walks every header, so
    // it is done only where the key is used.
    return rejectRequest(res, req, sv, Errors.badHeaders, cors, { reason: KEY_EMPTY, header: names.affinityKey });
  }

  if (!isJsonContentType(req.getHeader(H_CONTENT_TYPE))) return rejectRequest(res, req, sv, Errors.unsupportedMediaType, cors);
  const cl = req.getHeader(H_CONTENT_LENGTH);
  const expected = cl === '' ? -1 : Number(cl);
  if (expected > rt.maxBodyBytes) return replyNow(res, sv.state, Errors.bodyTooLarge, cors, { maxBodyBytes: rt.maxBodyBytes }, true);
  if (Number.isNaN(expected)) return replyNow(res, sv.state, Errors.badHeaders, cors, { reason: 'invalid Content-Length' }, true);

  const xff = rt.clientIp.enabled ? req.getHeader(H_FORWARDED_FOR) : '';
  const http = new HttpResponder(res, sv, cors, expected, xff);
  http.receive(new Exchange(sv, record, http, mode, mode === MODE_KEY ? key : ''));
}

export function attachRpcRoutes(app: HttpApp, serving: Serving): HttpApp {
  return app.any('/*', (res, req) => handle(res, req, serving));
}
