// Register, log in, log out, who am I.

import type { FastifyInstance } from 'fastify';
import { hashPassword, verifyPassword } from '../../accounts/password.js';
import { StoreError } from '../../store/types.js';
import type { ConsoleContext } from '../context.js';
import { accountView, normalizeEmail } from '../context.js';
import { ApiError } from '../errors.js';
import { authAnswer, credentialsBody, errors, loginBody } from '../schemas.js';
import { requireAuth } from '../session.js';

interface Credentials {
  email: string;
  password: string;
}

export async function accountRoutes(app: FastifyInstance, ctx: ConsoleContext): Promise<void> {
  app.post<{ Body: Credentials }>(
    '/register',
    {
      schema: {
        summary: 'Create an account and log in',
        tags: ['account'],
        body: credentialsBody,
        description: 'Registrations are throttled per client IP: 429 with Retry-After.',
        response: { 201: authAnswer, ...errors(400, 403, 409, 429) },
      },
    },
    async (req, reply) => {
      if (ctx.registration !== 'open') throw new ApiError('registrationClosed');
      const ip = ctx.clientIp(req);
      const wait = ctx.registrations.begin(ip);
      if (wait > 0) {
        ctx.log.warn({ ip }, 'registration throttled');
        throw new ApiError('throttled', 'Too many registrations from this address; try again later', {
          'retry-after': String(Math.max(1, Math.ceil(wait / 1000))),
        });
      }
      const email = normalizeEmail(req.body.email);
      const hash = await hashPassword(req.body.password);
      let account;
      try {
        account = await ctx.store.createAccount(email, hash);
      } catch (e) {
        if (e instanceof StoreError && e.code === 'conflict') throw new ApiError('conflict', 'email: an account with this email already exists');
        throw e;
      }
      const session = await ctx.sessions.start(req, reply, account);
      ctx.log.info({ account: account.id }, 'account registered');
      reply.code(201);
      return { account: accountView(account), csrfToken: session.csrfToken };
    },
  );

  app.post<{ Body: Credentials }>(
    '/login',
    {
      schema: {
        summary: 'Log in (sets the session cookie)',
        description: 'Failed logins are throttled per client IP and per email: 429 with Retry-After.',
        tags: ['account'],
        body: loginBody,
        response: { 200: authAnswer, ...errors(400, 401, 429) },
      },
    },
    async (req, reply) => {
      const email = normalizeEmail(req.body.email);
      const ip = ctx.clientIp(req);
      const wait = ctx.throttle.begin(ip, email);
      if (wait > 0) {
        const seconds = Math.max(1, Math.ceil(wait / 1000));
        ctx.log.warn({ ip }, 'login throttled');
        throw new ApiError('throttled', undefined, { 'retry-after': String(seconds) });
      }
      const account = await ctx.store.accountByEmail(email);
      // Always one scrypt, known email or not, so timing does not tell which.
      const ok = await verifyPassword(req.body.password, account?.passwordHash ?? (await ctx.dummyHash)).catch(() => false);
      if (!account || !ok) throw new ApiError('badCredentials');
      ctx.throttle.succeeded(ip, email);
      const session = await ctx.sessions.start(req, reply, account);
      return { account: accountView(account), csrfToken: session.csrfToken };
    },
  );

  app.post(
    '/logout',
    {
      schema: {
        summary: 'Log out (ends the session)',
        tags: ['account'],
        security: [{ session: [], csrf: [] }],
        response: { 204: { type: 'null', description: 'Logged out' }, ...errors(401, 403) },
      },
      onRequest: ctx.guard,
    },
    async (req, reply) => {
      const auth = requireAuth(req);
      await ctx.sessions.end(auth, reply);
      reply.code(204);
      return null;
    },
  );

  app.get(
    '/me',
    {
      schema: {
        summary: 'The logged-in account and its CSRF token',
        tags: ['account'],
        security: [{ session: [] }],
        response: { 200: authAnswer, ...errors(401) },
      },
      onRequest: ctx.guard,
    },
    async (req) => {
      const auth = requireAuth(req);
      return { account: accountView(auth.account), csrfToken: auth.session.csrfToken };
    },
  );
}
