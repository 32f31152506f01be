// The account console (docs/accounts.md "Accounts, tokens and the console"): a fastify app with the JSON account API under /api/v1
// (OpenAPI document at /api/v1/openapi.json) and the pages that use it. It never touches the
// gateway's hot path: it writes to the store and calls `onTokensChanged` so the gateway
// resyncs its token table at once, and answers that write only once the gateway applied it.
// listener.ts listens and builds it on the first request.

import { randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import fastifyCookie from '@fastify/cookie';
import fastifyStatic from '@fastify/static';
import fastifySwagger from '@fastify/swagger';
import Fastify, { type FastifyError, type FastifyInstance, type FastifyServerFactory } from 'fastify';
import type { Logger } from 'pino';
import { StoreError } from '../store/types.js';
import { chartDir, publicDir } from './assets.js';
import type { ConsoleContext, ConsoleOptions } from './context.js';
import { ApiError, errorBody, HTTP_CODES, validationMessage } from './errors.js';
import { html, pageRoutes } from './pages.js';
import { hashPassword } from '../accounts/password.js';
import { accountRoutes } from './routes/account.js';
import { landingRoutes } from './routes/landing.js';
import { stackRoutes } from './routes/stacks.js';
import { tokenRoutes } from './routes/tokens.js';
import { guard, SESSION_COOKIE, Sessions } from './session.js';
import { ClientIpResolver } from '../gateway/client-ip.js';
import { DEFAULT_LOGIN_LIMITS, LoginThrottle, RegisterThrottle } from './throttle.js';
import { messagePage } from './views.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** How many token changes had been made when this request came in (the read-your-writes hook). */
    tokenChangesSeen: number;
  }
}

const API = '/api/v1';
const BODY_LIMIT = 64 * 1024;
const CSP =
  "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; " +
  "object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'";

/** `serverFactory`: serve through a server the caller made (fastify's option of that name). */
export async function buildConsole(opts: ConsoleOptions, log: Logger, serverFactory?: FastifyServerFactory): Promise<FastifyInstance> {
  const app = Fastify({
    ...(serverFactory === undefined ? {} : { serverFactory }),
    logger: false,
    bodyLimit: BODY_LIMIT,
    forceCloseConnections: true,
    return503OnClosing: true,
    // Strict types: {"description": 7} is a 400, not the string "7".
    ajv: { customOptions: { coerceTypes: false } },
  });
  const sessions = new Sessions(opts.store, opts.secureCookies ?? false);
  // Token changes so far, and the gateway applying the latest: every sync reads the store after
  // the writes before it, so waiting for the latest covers a request's own change.
  let changes = 0;
  let applied: Promise<unknown> = Promise.resolve();
  const proxies = new ClientIpResolver(opts.trustedProxies ?? []);
  const ctx: ConsoleContext = {
    store: opts.store,
    sessions,
    throttle: new LoginThrottle(opts.loginLimits ?? DEFAULT_LOGIN_LIMITS),
    registrations: new RegisterThrottle(opts.registerLimit),
    clientIp(req) {
      const xff = req.headers['x-forwarded-for'];
      return proxies.resolve(req.socket.remoteAddress ?? '', Array.isArray(xff) ? xff.join(',') : (xff ?? ''));
    },
    registration: opts.registration,
    endpoints: opts.endpoints,
    sendRanking: () => opts.sendRanking?.() ?? {},
    tokensChanged() {
      changes++;
      try {
        applied = Promise.resolve(opts.onTokensChanged?.()).catch((err: unknown) => log.error({ err }, 'applying a token change failed'));
      } catch (err) {
        log.error({ err }, 'onTokensChanged failed');
      }
    },
    dummyHash: hashPassword(randomBytes(18).toString('base64url')),
    log,
    guard: guard(sessions),
  };
  ctx.dummyHash.catch((err: unknown) => log.error({ err }, 'could not prepare the dummy password hash'));

  app.decorateRequest('auth', null);
  app.decorateRequest('tokenChangesSeen', 0);
  // Read your writes: a request that changed tokens or stacks is answered once the change is in
  // effect (the routes only call tokensChanged()). A write that overlapped another's change
  // waits for that one too (bounded); reads never change tokens and never wait.
  app.addHook('onRequest', async (req) => {
    req.tokenChangesSeen = changes;
  });
  app.addHook('onSend', async (req) => {
    if (req.tokenChangesSeen !== changes && req.method !== 'GET' && req.method !== 'HEAD') await applied;
  });
  await app.register(fastifyCookie);
  await app.register(fastifySwagger, {
    openapi: {
      info: { title: 'jumpgate console API', version: '1', description: 'The account API behind the jumpgate console pages.' },
      components: {
        securitySchemes: {
          session: { type: 'apiKey', in: 'cookie', name: SESSION_COOKIE },
          csrf: { type: 'apiKey', in: 'header', name: 'X-CSRF-Token', description: 'The csrfToken from /register, /login or /me' },
        },
      },
      tags: [
        { name: 'account', description: 'Registration and sessions' },
        { name: 'stacks', description: 'Stacks, their overview and RPC analytics' },
        { name: 'tokens', description: 'API tokens of a stack' },
        { name: 'landing', description: 'Transaction landing per token and per node' },
      ],
    },
  });

  app.addHook('onSend', async (req, reply) => {
    reply.header('x-content-type-options', 'nosniff');
    reply.header('referrer-policy', 'same-origin');
    reply.header('x-frame-options', 'DENY');
    reply.header('content-security-policy', CSP);
    if (req.url.startsWith(API)) reply.header('cache-control', 'no-store');
  });

  app.setErrorHandler((err: FastifyError | ApiError | StoreError, req, reply) => {
    const api = req.url.startsWith(API);
    let status: number;
    let code: string;
    let message: string;
    if (err instanceof ApiError) {
      [status, code, message] = [err.status, err.code, err.message];
      reply.headers(err.headers);
    } else if (err instanceof StoreError) {
      // The routes map the expected cases; these are the store's own checks as a backstop.
      status = err.code === 'conflict' ? 409 : err.code === 'not_found' ? 404 : 400;
      [code, message] = [err.code, err.message];
    } else if (err.validation) {
      [status, code, message] = [400, 'invalid', validationMessage(err.validation, err.validationContext ?? 'body')];
    } else if (err.statusCode && err.statusCode >= 400 && err.statusCode < 500) {
      [status, code, message] = [err.statusCode, HTTP_CODES[err.statusCode] ?? 'bad_request', err.message];
    } else {
      log.error({ err, method: req.method, url: req.url.replace(/\?.*/, '') }, 'console request failed');
      [status, code, message] = [500, 'internal', 'Internal error'];
    }
    if (api) return reply.code(status).send(errorBody(code, message));
    return html(reply, messagePage(status === 500 ? 'Something went wrong' : 'Error', message), status);
  });

  app.setNotFoundHandler((req, reply) => {
    if (req.url.startsWith(API) || req.url.startsWith('/assets/')) return reply.code(404).send(errorBody('not_found', 'Not found'));
    return html(reply, messagePage('Not found', 'There is nothing at this address.'), 404);
  });

  await app.register(
    async (api) => {
      api.get('/openapi.json', { schema: { summary: 'This OpenAPI document', tags: ['meta'] } }, async () => app.swagger());
      await accountRoutes(api, ctx);
      await stackRoutes(api, ctx);
      await tokenRoutes(api, ctx);
      await landingRoutes(api, ctx);
    },
    { prefix: API },
  );

  await app.register(fastifyStatic, { root: publicDir(), prefix: '/assets/', index: false, cacheControl: true, maxAge: 0 });
  const chartFile = join(chartDir(), 'chart.umd.js');
  let chart: Promise<Buffer> | null = null;
  app.get('/assets/chart.umd.js', { schema: { hide: true } }, async (_req, reply) => {
    chart ??= readFile(chartFile);
    return reply
      .type('text/javascript; charset=utf-8')
      .header('cache-control', 'public, max-age=86400')
      .send(await chart);
  });

  await pageRoutes(app, ctx);
  return app;
}
