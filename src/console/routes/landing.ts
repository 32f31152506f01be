// Transaction landing in the console (docs/landing.md "Where they show"), from the store, so
// the sum over every instance writing to it, over the last 24 h: per token of a stack (the
// overview's Transactions panel) and per node (the Elastic Nodes page). The per-node figures
// are summed over the caller's own tokens: the nodes are shared by every account, what was sent
// through them is not (every account's at once is the admin API's, docs/admin-api.md).

import type { FastifyInstance } from 'fastify';
import { addCounts, emptyCounts, type LandingCounts } from '../../landing/counts.js';
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

/** Landing per node of the transactions `tokenIds` sent since `from`, by node id. */
async function nodesOf(ctx: ConsoleContext, tokenIds: readonly string[], from: number, now: number) {
  const byNode = new Map<string, LandingCounts>();
  for (const pair of await ctx.store.landingByTokenNode(tokenIds, from)) {
    let c = byNode.get(pair.node);
    if (c === undefined) byNode.set(pair.node, (c = emptyCounts()));
    addCounts(c, pair);
  }
  const nodes = [...byNode].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([node, c]) => ({ node, ...landingJson(c) }));
  // Node-wide: where each node ranks for sends and why, without anyone's counts.
  return { from, to: now, nodes, ranking: ctx.sendRanking() };
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

  app.get<{ Params: { id: string } }>(
    '/stacks/:id/landing/nodes',
    {
      schema: {
        summary: "Transaction landing per node of the stack's transactions over the last 24 h, summed over every gateway instance",
        tags: ['landing'],
        security: SECURITY,
        params: stackParams,
        response: { 200: nodesLandingSchema, ...errors(401, 404) },
      },
      onRequest: ctx.guard,
    },
    async (req) => {
      const stack = await ownStack(ctx, req);
      const now = Date.now();
      const tokens = await ctx.store.listTokens(stack.accountId, stack.id);
      return nodesOf(
        ctx,
        tokens.map((t) => t.id),
        windowStart(now),
        now,
      );
    },
  );

  app.get(
    '/landing/nodes',
    {
      schema: {
        summary: "Transaction landing per node of the account's transactions (every stack's) over the last 24 h, summed over every gateway instance",
        tags: ['landing'],
        security: SECURITY,
        response: { 200: nodesLandingSchema, ...errors(401) },
      },
      onRequest: ctx.guard,
    },
    async (req) => {
      const account = requireAuth(req).account;
      const now = Date.now();
      const tokenIds: string[] = [];
      for (const stack of await ctx.store.listStacks(account.id)) for (const t of await ctx.store.listTokens(account.id, stack.id)) tokenIds.push(t.id);
      return nodesOf(ctx, tokenIds, windowStart(now), now);
    },
  );
}
