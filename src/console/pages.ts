// Page routes. Logged out, every page but /login and /register redirects to /login?next=…;
// a stack page of another account answers the same 404 as a missing stack.

import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Stack } from '../store/types.js';
import { endpointUrls, type ConsoleContext } from './context.js';
import type { Auth } from './session.js';
import { loginPage, messagePage, nodesPage, onboardingPage, overviewPage, registerPage, stacksPage, tokensPage } from './views.js';

const HIDE = { schema: { hide: true } };

function html(reply: FastifyReply, body: string, status = 200): FastifyReply {
  return reply.code(status).type('text/html; charset=utf-8').header('cache-control', 'no-store').send(body);
}

export async function pageRoutes(app: FastifyInstance, ctx: ConsoleContext): Promise<void> {
  /** The logged-in account, or null after sending a redirect to /login. */
  async function loggedIn(req: FastifyRequest, reply: FastifyReply): Promise<Auth | null> {
    const auth = await ctx.sessions.load(req);
    if (!auth) {
      reply.redirect(`/login?next=${encodeURIComponent(req.url)}`, 302);
      return null;
    }
    return auth;
  }

  /** The caller's stack, or null after sending a 404 page. */
  async function stackOf(req: FastifyRequest<{ Params: { id: string } }>, reply: FastifyReply, auth: Auth): Promise<Stack | null> {
    const stack = await ctx.store.stackById(auth.account.id, req.params.id);
    if (!stack) html(reply, messagePage('Not found', 'There is no such stack in your account.', { account: auth.account, csrf: auth.session.csrfToken }), 404);
    return stack;
  }

  app.get('/', HIDE, async (req, reply) => reply.redirect((await ctx.sessions.load(req)) ? '/stacks' : '/login', 302));

  app.get('/login', HIDE, async (req, reply) => {
    if (await ctx.sessions.load(req)) return reply.redirect('/stacks', 302);
    return html(reply, loginPage(ctx.registration === 'open'));
  });

  app.get('/register', HIDE, async (req, reply) => {
    if (await ctx.sessions.load(req)) return reply.redirect('/stacks', 302);
    return html(reply, registerPage(ctx.registration === 'open'));
  });

  app.get('/onboarding', HIDE, async (req, reply) => {
    const auth = await loggedIn(req, reply);
    if (!auth) return reply;
    return html(reply, onboardingPage(auth.account, auth.session.csrfToken));
  });

  app.get('/stacks', HIDE, async (req, reply) => {
    const auth = await loggedIn(req, reply);
    if (!auth) return reply;
    if ((await ctx.store.listStacks(auth.account.id)).length === 0) return reply.redirect('/onboarding', 302);
    return html(reply, stacksPage(auth.account, auth.session.csrfToken));
  });

  const stackPages = {
    '': overviewPage,
    '/tokens': tokensPage,
    '/nodes': (a: Auth['account'], csrf: string, s: Stack) => {
      const urls = endpointUrls(ctx.endpoints);
      return nodesPage(a, csrf, s, { http: urls.httpBase, ws: urls.wsBase });
    },
  };
  for (const [suffix, render] of Object.entries(stackPages)) {
    app.get<{ Params: { id: string } }>(`/stacks/:id${suffix}`, HIDE, async (req, reply) => {
      const auth = await loggedIn(req, reply);
      if (!auth) return reply;
      const stack = await stackOf(req, reply, auth);
      if (!stack) return reply;
      return html(reply, render(auth.account, auth.session.csrfToken, stack));
    });
  }
}

export { html };
