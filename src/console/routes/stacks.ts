// Stacks: list, create, read, overview, RPC analytics. Another account's stack answers 404,
// exactly like a stack that does not exist.

import type { FastifyInstance, FastifyRequest } from 'fastify';
import { StoreError, type AnalyticsWindow, type Stack } from '../../store/types.js';
import type { ConsoleContext } from '../context.js';
import { endpointUrls, stackView } from '../context.js';
import { ApiError } from '../errors.js';
import { analyticsQuery, analyticsSchema, errors, overviewSchema, stackCreateBody, stackParams, stackSchema } from '../schemas.js';
import { requireAuth } from '../session.js';

const SECURITY = [{ session: [] }];
const SECURITY_CSRF = [{ session: [], csrf: [] }];

/** The caller's stack `:id`, or 404. */
export async function ownStack(ctx: ConsoleContext, req: FastifyRequest<{ Params: { id: string } }>): Promise<Stack> {
  const auth = requireAuth(req);
  const stack = await ctx.store.stackById(auth.account.id, req.params.id);
  if (!stack) throw new ApiError('notFound', 'stack not found');
  return stack;
}

export async function stackRoutes(app: FastifyInstance, ctx: ConsoleContext): Promise<void> {
  app.get(
    '/stacks',
    {
      schema: {
        summary: "The account's stacks",
        tags: ['stacks'],
        security: SECURITY,
        response: { 200: { type: 'object', properties: { stacks: { type: 'array', items: stackSchema } }, required: ['stacks'] }, ...errors(401) },
      },
      onRequest: ctx.guard,
    },
    async (req) => {
      const stacks = await ctx.store.listStacks(requireAuth(req).account.id);
      return { stacks: stacks.map(stackView) };
    },
  );

  app.post<{ Body: { name: string; description?: string | null } }>(
    '/stacks',
    {
      schema: {
        summary: 'Create a stack',
        tags: ['stacks'],
        security: SECURITY_CSRF,
        body: stackCreateBody,
        response: { 201: stackSchema, ...errors(400, 401, 403, 409) },
      },
      onRequest: ctx.guard,
    },
    async (req, reply) => {
      const auth = requireAuth(req);
      const name = req.body.name.trim();
      const description = req.body.description?.trim() || null;
      let stack;
      try {
        stack = await ctx.store.createStack(auth.account.id, name, description);
      } catch (e) {
        if (e instanceof StoreError && e.code === 'conflict') throw new ApiError('conflict', `name: a stack named "${name}" already exists`);
        throw e;
      }
      ctx.tokensChanged();
      reply.code(201);
      return stackView(stack);
    },
  );

  app.get<{ Params: { id: string } }>(
    '/stacks/:id',
    {
      schema: { summary: 'One stack', tags: ['stacks'], security: SECURITY, params: stackParams, response: { 200: stackSchema, ...errors(401, 404) } },
      onRequest: ctx.guard,
    },
    async (req) => stackView(await ownStack(ctx, req)),
  );

  app.get<{ Params: { id: string } }>(
    '/stacks/:id/overview',
    {
      schema: {
        summary: 'Stack overview: calls and data transfer in the last 24 h, active tokens, daily calls for 7 days, endpoint URLs',
        tags: ['stacks'],
        security: SECURITY,
        params: stackParams,
        response: { 200: overviewSchema, ...errors(401, 404) },
      },
      onRequest: ctx.guard,
    },
    async (req) => {
      const stack = await ownStack(ctx, req);
      const overview = await ctx.store.overview(stack.accountId, stack.id, Date.now());
      return { ...overview, endpoints: endpointUrls(ctx.endpoints) };
    },
  );

  app.get<{ Params: { id: string }; Querystring: { window: AnalyticsWindow; token?: string } }>(
    '/stacks/:id/analytics',
    {
      schema: {
        summary: 'RPC analytics: calls, errors, p50/p99 latency per method and a time series over a window, optionally for one token',
        tags: ['stacks'],
        security: SECURITY,
        params: stackParams,
        querystring: analyticsQuery,
        response: { 200: analyticsSchema, ...errors(400, 401, 404) },
      },
      onRequest: ctx.guard,
    },
    async (req) => {
      const stack = await ownStack(ctx, req);
      const tokenId = req.query.token || undefined;
      if (tokenId) {
        const tokens = await ctx.store.listTokens(stack.accountId, stack.id);
        if (!tokens.some((t) => t.id === tokenId)) throw new ApiError('notFound', 'token not found');
      }
      const a = await ctx.store.analytics(stack.accountId, stack.id, req.query.window, Date.now(), tokenId);
      return { window: req.query.window, tokenId: tokenId ?? null, ...a };
    },
  );
}
