// Server-rendered page shells. They carry only what the account may see (email, stack name)
// and the CSRF token; the numbers come from the JSON API, fetched by the page scripts under
// /assets. Every interpolated value is escaped; there is no inline script (see the CSP).

import type { Account, Stack } from '../store/types.js';

export function esc(v: string): string {
  return v.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

interface Shell {
  title: string;
  page: string;
  body: string;
  account?: Account | null;
  csrf?: string;
  stack?: Stack;
  /** Extra data-* attributes on <body>. */
  data?: Record<string, string>;
  chart?: boolean;
}

function shell(s: Shell): string {
  const data = Object.entries({ page: s.page, ...(s.stack ? { stackId: s.stack.id } : {}), ...s.data })
    .map(([k, v]) => ` data-${k.replace(/[A-Z]/g, (c) => '-' + c.toLowerCase())}="${esc(v)}"`)
    .join('');
  const user = s.account
    ? `<nav class="user"><a href="/stacks" id="nav-stacks">Stacks</a><span id="account-email">${esc(s.account.email)}</span>` +
      `<button type="button" id="logout" class="link">Log out</button></nav>`
    : '';
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${esc(s.title)} · jumpgate</title>
${s.csrf ? `<meta name="csrf-token" content="${esc(s.csrf)}">\n` : ''}<link rel="icon" href="data:,">
<link rel="stylesheet" href="/assets/style.css">
</head>
<body${data}>
<header class="topbar"><a class="brand" href="/">jumpgate</a>${user}</header>
<main>
${s.stack ? stackNav(s.stack, s.page) : ''}${s.body}
</main>
${s.chart ? '<script src="/assets/chart.umd.js"></script>\n' : ''}<script type="module" src="/assets/${s.page.split('-')[0]}.js"></script>
</body>
</html>
`;
}

function stackNav(stack: Stack, page: string): string {
  const base = `/stacks/${encodeURIComponent(stack.id)}`;
  const tab = (id: string, href: string, label: string, active: boolean) =>
    `<a id="${id}" href="${href}"${active ? ' class="active" aria-current="page"' : ''}>${label}</a>`;
  return `<div class="stack-head">
<h1 id="stack-title">${esc(stack.name)}</h1>${stack.description ? `<p class="muted" id="stack-subtitle">${esc(stack.description)}</p>` : ''}
<nav class="tabs">${tab('link-overview', base, 'Overview', page === 'overview')}${tab('link-tokens', `${base}/tokens`, 'API tokens', page === 'tokens')}${tab('link-nodes', `${base}/nodes`, 'Elastic Nodes', page === 'nodes')}</nav>
</div>
`;
}

const errorBox = '<p class="error" id="error" role="alert" hidden></p>';

export function loginPage(registration: boolean): string {
  return shell({
    title: 'Log in',
    page: 'auth-login',
    body: `<section class="card narrow">
<h1>Log in</h1>
<form id="login-form">
<label>Email <input id="email" name="email" type="email" autocomplete="username" required></label>
<label>Password <input id="password" name="password" type="password" autocomplete="current-password" required></label>
${errorBox}
<button id="login-submit" type="submit">Log in</button>
</form>
${registration ? '<p class="muted">No account? <a href="/register" id="link-register">Register</a></p>' : ''}
</section>`,
  });
}

export function registerPage(open: boolean): string {
  const body = open
    ? `<form id="register-form">
<label>Email <input id="email" name="email" type="email" autocomplete="username" required></label>
<label>Password <input id="password" name="password" type="password" autocomplete="new-password" minlength="10" required>
<small class="muted">At least 10 characters.</small></label>
${errorBox}
<button id="register-submit" type="submit">Create account</button>
</form>`
    : '<p id="registration-closed">Registration is closed on this server. Ask its operator for an account.</p>';
  return shell({
    title: 'Register',
    page: 'auth-register',
    body: `<section class="card narrow">
<h1>Create an account</h1>
${body}
<p class="muted">Have an account? <a href="/login" id="link-login">Log in</a></p>
</section>`,
  });
}

export function onboardingPage(account: Account, csrf: string): string {
  return shell({
    title: 'Name your first stack',
    page: 'auth-onboarding',
    account,
    csrf,
    body: `<section class="card narrow">
<h1>Name your first stack</h1>
<p class="muted">A stack groups the API tokens of one project; its usage is counted together.</p>
<form id="onboarding-form">
<label>Stack name <input id="stack-name" name="name" required maxlength="64" placeholder="my-dapp" autofocus></label>
<label>Description <small class="muted">(optional)</small> <input id="stack-description" name="description" maxlength="500"></label>
${errorBox}
<button id="create-stack" type="submit">Create stack</button>
</form>
</section>`,
  });
}

export function stacksPage(account: Account, csrf: string): string {
  return shell({
    title: 'Stacks',
    page: 'stacks',
    account,
    csrf,
    body: `<h1>Stacks</h1>
<section class="card">
<table id="stacks-table" class="grid"><thead><tr><th>Name</th><th>Description</th><th>Created</th></tr></thead><tbody id="stacks-list"></tbody></table>
</section>
<section class="card">
<h2>New stack</h2>
<form id="new-stack-form" class="row">
<input id="stack-name" name="name" required maxlength="64" placeholder="Name">
<input id="stack-description" name="description" maxlength="500" placeholder="Description (optional)">
<button id="create-stack" type="submit">Create</button>
</form>
${errorBox}
</section>`,
  });
}

export function overviewPage(account: Account, csrf: string, stack: Stack): string {
  return shell({
    title: stack.name,
    page: 'overview',
    account,
    csrf,
    stack,
    chart: true,
    body: `<div class="toolbar"><span class="muted" id="updated"></span><button type="button" id="refresh">Refresh</button></div>
<section class="cards">
<div class="card stat"><h3>RPC/WS calls, last 24 h</h3><p class="big" id="overview-calls" data-testid="overview-calls">–</p></div>
<div class="card stat"><h3>Data transfer, last 24 h</h3><p class="big" id="overview-bytes" data-testid="overview-bytes">–</p></div>
<div class="card stat"><h3>Active API tokens</h3><p class="big" id="overview-tokens" data-testid="overview-tokens">–</p><a href="/stacks/${esc(encodeURIComponent(stack.id))}/tokens">Manage tokens</a></div>
</section>
${errorBox}
<section class="card">
<h2>RPC traffic, last 7 days</h2>
<div class="chart"><canvas id="traffic-chart" data-testid="traffic-chart" aria-label="Calls per day, last 7 days" role="img"></canvas></div>
</section>
<section class="card" id="landing-panel">
<h2>Transactions, last 24 h</h2>
<table id="landing-table" data-testid="landing-table" class="grid"><thead><tr><th>Token</th><th class="num">Sent</th><th class="num">Landed</th><th class="num">Slots to land p50</th><th class="num">p90</th></tr></thead>
<tbody id="landing-rows"></tbody></table>
<p id="landing-empty" class="muted" hidden>No transactions sent in the last 24 h.</p>
<p class="muted">Landed: of the transactions that ended, the share that landed without an error (failed and expired ones are the rest).</p>
</section>
<section class="card">
<h2>Next</h2>
<ul class="links">
<li><a href="/stacks/${esc(encodeURIComponent(stack.id))}/tokens" id="cta-tokens">Create an API token</a></li>
<li><a href="/stacks/${esc(encodeURIComponent(stack.id))}/nodes" id="cta-nodes">Elastic Nodes: endpoint URLs and RPC Analytics</a></li>
</ul>
</section>`,
  });
}

export function tokensPage(account: Account, csrf: string, stack: Stack): string {
  return shell({
    title: `${stack.name}: API tokens`,
    page: 'tokens',
    account,
    csrf,
    stack,
    body: `<section class="card">
<h2>New API token</h2>
<form id="token-form" class="row">
<input id="token-label" name="label" required maxlength="64" placeholder="Label, e.g. production">
<button id="create-token" type="submit">Create token</button>
</form>
<div id="token-created-box" class="notice" hidden>
<p><strong>Your new token.</strong> Copy it now: it is shown only once.</p>
<p class="token-line"><code id="token-created" data-testid="token-created"></code><button type="button" id="copy-token">Copy</button><span id="copy-status" class="muted"></span></p>
</div>
${errorBox}
</section>
<section class="card">
<h2>Tokens</h2>
<table id="tokens-table" class="grid"><thead><tr><th>Label</th><th>Prefix</th><th>Status</th><th>Created</th><th>Last used</th><th></th></tr></thead>
<tbody id="tokens-list"></tbody></table>
<p id="tokens-empty" class="muted" hidden>No tokens yet.</p>
</section>`,
  });
}

export function nodesPage(account: Account, csrf: string, stack: Stack, endpoints: { http: string; ws: string }): string {
  return shell({
    title: `${stack.name}: Elastic Nodes`,
    page: 'nodes',
    account,
    csrf,
    stack,
    chart: true,
    data: { httpBase: endpoints.http, wsBase: endpoints.ws },
    body: `<section class="card">
<h2>Endpoints</h2>
<label class="inline">Token <input id="endpoint-token" placeholder="paste a token to fill it in" autocomplete="off" spellcheck="false"></label>
<dl class="endpoints">
<dt>HTTP</dt><dd><code id="endpoint-http"></code> <button type="button" class="copy" data-copy="endpoint-http">Copy</button></dd>
<dt>WebSocket</dt><dd><code id="endpoint-ws"></code> <button type="button" class="copy" data-copy="endpoint-ws">Copy</button></dd>
</dl>
<p class="muted">Or send the token in the <code>X-Service-Api-Token</code> header to <code id="endpoint-http-base"></code>.</p>
</section>
<section class="card">
<div class="toolbar">
<h2>RPC Analytics</h2>
<label class="inline">Window <select id="analytics-window"><option value="1h">Last hour</option><option value="24h" selected>Last 24 h</option><option value="7d">Last 7 days</option></select></label>
<label class="inline">Token <select id="analytics-token"><option value="">All tokens</option></select></label>
<span class="muted" id="updated"></span>
<button type="button" id="refresh">Refresh</button>
</div>
${errorBox}
<section class="cards">
<div class="stat"><h3>Calls</h3><p class="big" id="analytics-calls-total" data-testid="analytics-calls-total">–</p></div>
<div class="stat"><h3>Errors</h3><p class="big" id="analytics-errors-total" data-testid="analytics-errors-total">–</p></div>
</section>
<div class="chart"><canvas id="analytics-chart" data-testid="analytics-chart" aria-label="Calls over the window" role="img"></canvas></div>
<table id="analytics-table" data-testid="analytics-table" class="grid"><thead><tr><th>Method</th><th class="num">Calls</th><th class="num">Errors</th><th class="num">p50 (ms)</th><th class="num">p99 (ms)</th></tr></thead>
<tbody id="analytics-rows"></tbody></table>
<p id="analytics-empty" class="muted" hidden>No calls in this window.</p>
</section>
<section class="card">
<h2>Transaction landing by node, last 24 h</h2>
<p class="muted">This stack's transactions, per node of the gateway they went to.</p>
<table id="nodes-landing-table" data-testid="nodes-landing-table" class="grid"><thead><tr><th>Node</th><th class="num">Sent</th><th class="num">Landing</th><th class="num">Slots to land p50</th><th class="num">Send rank</th></tr></thead>
<tbody id="nodes-landing-rows"></tbody></table>
<p id="nodes-landing-empty" class="muted" hidden>This stack sent no transactions in the last 24 h.</p>
</section>`,
  });
}

export function messagePage(title: string, message: string, auth?: { account: Account; csrf: string } | null): string {
  return shell({
    title,
    page: 'message',
    account: auth?.account ?? null,
    csrf: auth?.csrf ?? '',
    body: `<section class="card narrow"><h1>${esc(title)}</h1><p id="message">${esc(message)}</p><p><a href="/">Home</a></p></section>`,
  });
}
