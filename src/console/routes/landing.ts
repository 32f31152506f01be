// Transaction landing in the console (docs/landing.md "Where they show"), from the store, so
// the sum over every instance writing to it, over the last 24 h: per token of a stack (the
// overview's Transactions panel) and per node of the gateway (the Elastic Nodes page).

import type { FastifyInstance } from 'fastify';
import { landingJson } from '../../landing/view.js';
import type { ConsoleContext } from '../context.js';
import { errors, nodesLandingSchema, stackLandingSchema, stackParams } from '../schemas.js';
import { requireAuth } from '../session.js';
import { ownStack } from './stacks.js';

const SECURITY = [{ session: [] }];
const HOUR_MS = 3_600_000;
const DAY_MS = 24 * HOUR_MS;

/** The window's start: the start of the hour 24 h ago (the store keeps landing per hour). */
function windowStart(now: number): number {
  return Math.floor((now - DAY_MS) / HOUR_MS) * HOUR_MS;
}

export async function landingRoutes(app: FastifyInstance, ctx: ConsoleContext): Promise<void> {
  app.get<{ Params: { id: string } }>(
    '/stacks/:id/landing',
    {
      schema: {
        summary: 'Transaction landing per token of the stack over the last 24 h: sent, landed %, slots to land p50/p90, summed over every gateway instance',
        tags: ['landing'],
        security: SECURITY,
        params: stackParams,
        response: { 200: stackLandingSchema, ...errors(401, 404) },
      },
      onRequest: ctx.guard,
    },
    async (req) => {
      const stack = await ownStack(ctx, req);
      const now = Date.now();
      const from = windowStart(now);
      const tokens = await ctx.store.listTokens(stack.accountId, stack.id);
      const byId = new Map(tokens.map((t) => [t.id, t]));
      const totals = await ctx.store.landingByToken([...byId.keys()], from);
      const rows = totals.map((c) => {
        const t = byId.get(c.key)!;
        return { tokenId: t.id, label: t.label, prefix: t.prefix, ...landingJson(c) };
      });
      rows.sort((a, b) => a.label.localeCompare(b.label) || a.tokenId.localeCompare(b.tokenId));
      return { from, to: now, tokens: rows };
    },
  );

  app.get(
    '/landing/nodes',
    {
      schema: {
        summary: "Transaction landing per node of the gateway over the last 24 h (every account's transactions), summed over every gateway instance",
        tags: ['landing'],
        security: SECURITY,
        response: { 200: nodesLandingSchema, ...errors(401) },
      },
      onRequest: ctx.guard,
    },
    async (req) => {
      requireAuth(req);
      const now = Date.now();
      const from = windowStart(now);
      const totals = await ctx.store.landingByNode(from);
      return { from, to: now, nodes: totals.map((c) => ({ node: c.key, ...landingJson(c) })) };
    },
  );
}
