// API tokens of a stack: create (the full token is in that answer and nowhere else), list,
// activate/deactivate, delete. Every write tells the gateway to resync its token table.

import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { ApiToken } from '../../store/types.js';
import type { ConsoleContext } from '../context.js';
import { tokenView } from '../context.js';
import { ApiError } from '../errors.js';
import { errors, stackParams, tokenCreateBody, tokenCreated, tokenParams, tokenPatchBody, tokenSchema } from '../schemas.js';
import { ownStack } from './stacks.js';

type TokenReq = FastifyRequest<{ Params: { id: string; tokenId: string } }>;

/** The caller's token `:tokenId` of stack `:id`, or 404. */
async function ownToken(ctx: ConsoleContext, req: TokenReq): Promise<ApiToken> {
  const stack = await ownStack(ctx, req);
  const token = (await ctx.store.listTokens(stack.accountId, stack.id)).find((t) => t.id === req.params.tokenId);
  if (!token) throw new ApiError('notFound', 'token not found');
  return token;
}

export async function tokenRoutes(app: FastifyInstance, ctx: ConsoleContext): Promise<void> {
  app.get<{ Params: { id: string } }>(
    '/stacks/:id/tokens',
    {
      schema: {
        summary: "The stack's API tokens (label and prefix; never the full token)",
        tags: ['tokens'],
        security: [{ session: [] }],
        params: stackParams,
        response: { 200: { type: 'object', properties: { tokens: { type: 'array', items: tokenSchema } }, required: ['tokens'] }, ...errors(401, 404) },
      },
      onRequest: ctx.guard,
    },
    async (req) => {
      const stack = await ownStack(ctx, req);
      const tokens = await ctx.store.listTokens(stack.accountId, stack.id);
      return { tokens: tokens.sort((a, b) => b.createdAt - a.createdAt).map(tokenView) };
    },
  );

  app.post<{ Params: { id: string }; Body: { label: string } }>(
    '/stacks/:id/tokens',
    {
      schema: {
        summary: 'Create an API token; the answer is the only place the full token ever appears',
        tags: ['tokens'],
        security: [{ session: [], csrf: [] }],
        params: stackParams,
        body: tokenCreateBody,
        response: { 201: tokenCreated, ...errors(400, 401, 403, 404) },
      },
      onRequest: ctx.guard,
    },
    async (req, reply) => {
      const stack = await ownStack(ctx, req);
      const { token, record } = await ctx.store.createToken(stack.accountId, stack.id, req.body.label.trim());
      ctx.tokensChanged();
      ctx.log.info({ stack: stack.id, token: record.prefix }, 'API token created');
      reply.code(201);
      reply.header('cache-control', 'no-store');
      return { token, record: tokenView(record) };
    },
  );

  app.patch<{ Params: { id: string; tokenId: string }; Body: { active: boolean } }>(
    '/stacks/:id/tokens/:tokenId',
    {
      schema: {
        summary: 'Activate or deactivate a token',
        tags: ['tokens'],
        security: [{ session: [], csrf: [] }],
        params: tokenParams,
        body: tokenPatchBody,
        response: { 200: tokenSchema, ...errors(400, 401, 403, 404) },
      },
      onRequest: ctx.guard,
    },
    async (req) => {
      const token = await ownToken(ctx, req);
      const updated = await ctx.store.setTokenActive(token.accountId, token.id, req.body.active);
      if (!updated) throw new ApiError('notFound', 'token not found');
      ctx.tokensChanged();
      ctx.log.info({ token: token.prefix, active: updated.active }, 'API token updated');
      return tokenView(updated);
    },
  );

  app.delete<{ Params: { id: string; tokenId: string } }>(
    '/stacks/:id/tokens/:tokenId',
    {
      schema: {
        summary: 'Delete a token',
        tags: ['tokens'],
        security: [{ session: [], csrf: [] }],
        params: tokenParams,
        response: { 204: { type: 'null', description: 'Deleted' }, ...errors(401, 403, 404) },
      },
      onRequest: ctx.guard,
    },
    async (req, reply) => {
      const token = await ownToken(ctx, req);
      if (!(await ctx.store.deleteToken(token.accountId, token.id))) throw new ApiError('notFound', 'token not found');
      ctx.tokensChanged();
      ctx.log.info({ token: token.prefix }, 'API token deleted');
      reply.code(204);
      return null;
    },
  );
}
