// Tenants apart (docs/accounts.md "What an account sees"): two accounts on one gateway, only A
// sends traffic (calls, an airdrop and a transfer that lands, on a simulated cluster), and so
// does a config token that belongs to no account. Then every console route, read from the
// fastify app itself so a route added later is visited too, is fetched as A and as B, with
// each account's own ids and with the other's: B sees none of A's stacks, tokens, usage or
// landing figures, and A sees its own and nothing of the config token's.

import { address, createSolanaRpc, generateKeyPairSigner, lamports, type KeyPairSigner } from '@solana/kit';
import t from 'tap';
import { buildConsole } from '../../src/console/app.js';
import { silentLogger } from '../../src/log.js';
import { tokenPrefix } from '../../src/token-format.js';
import { Cluster } from '../../src/tools/sim/cluster.js';
import { ConsoleClient, type ConsoleAnswer } from '../helpers/console-client.js';
import { eventually } from '../helpers/eventually.js';
import { startHarness, TOKEN, type Harness } from '../helpers/gateway.js';
import { signTx, transferIx } from '../helpers/kit-tx.js';

type Test = Parameters<Parameters<typeof t.test>[0]>[0];

const DEADLINE_MS = 30_000;

interface Route {
  method: string;
  url: string;
}

/**
 * Every route of a console app, from fastify's own route tree (printRoutes): one line per path
 * segment, four characters of tree drawing per level, the methods in brackets.
 */
export function routesOf(tree: string): Route[] {
  const out: Route[] = [];
  const stack: string[] = [];
  for (const line of tree.split('\n')) {
    const m = /^((?:[│ ] {3})*)[├└]── (.*?) \(([A-Z, ]+)\)$/.exec(line);
    if (m === null) continue;
    const depth = m[1]!.length / 4;
    stack.length = depth;
    stack.push(m[2]!);
    const url = stack.join('').replace(/^\/?/, '/').replace(/\/\/+/g, '/');
    for (const method of m[3]!.split(',').map((s) => s.trim())) if (method !== 'HEAD') out.push({ method, url });
  }
  return out;
}

interface Tenant {
  name: string;
  client: ConsoleClient;
  email: string;
  stack: string;
  tokenId: string;
  token: string;
  /** Texts only this tenant may see. */
  secrets: string[];
}

async function tenant(base: string, name: string): Promise<Tenant> {
  const client = new ConsoleClient(base);
  const email = `${name}-owner@example.com`;
  const stackName = `${name}-stack-7q`;
  const label = `${name}-label-7q`;
  const { stack, tokenId, token } = await client.stackWithToken(email, stackName, label);
  const prefix = (await client.get(`/api/v1/stacks/${stack}/tokens`)).json.tokens[0].prefix as string;
  return { name, client, email, stack, tokenId, token, secrets: [email, stackName, label, stack, tokenId, token, prefix] };
}

/** A transfer from `payer` signed and sent through `url`; its signature once the gateway accepted it. */
async function sendTransfer(url: string, payer: KeyPairSigner, amount: bigint): Promise<string> {
  const rpc = createSolanaRpc(url);
  const { value: latest } = await rpc.getLatestBlockhash({ commitment: 'confirmed' }).send();
  const to = address((await generateKeyPairSigner()).address);
  const tx = await signTx(payer, [transferIx(payer, to, amount)], latest.blockhash, latest.lastValidBlockHeight);
  const sig = await rpc.sendTransaction(tx.wire as never, { encoding: 'base64', preflightCommitment: 'confirmed' }).send();
  if (sig !== tx.signature) throw new Error(`send answered ${sig}`);
  return sig;
}

/** Activity a tenant that sent nothing must read as 0 or null wherever it shows. */
const ACTIVITY = new Set(['calls', 'errors', 'calls24h', 'bytes24h', 'bytesIn', 'bytesOut', 'sent', 'landed', 'failed', 'expired', 'untracked', 'resent']);
const FIGURES = new Set(['landedPct', 'p50', 'p90', 'p99']);

/** Paths (a.b[2].c) of every activity count above 0 and every figure that is not null in `v`. */
function activityIn(v: unknown, path = ''): string[] {
  if (Array.isArray(v)) return v.flatMap((x, i) => activityIn(x, `${path}[${i}]`));
  if (typeof v !== 'object' || v === null) return [];
  const out: string[] = [];
  for (const [k, x] of Object.entries(v)) {
    const at = path === '' ? k : `${path}.${k}`;
    if (ACTIVITY.has(k) && typeof x === 'number' && x !== 0) out.push(`${at}=${x}`);
    else if (FIGURES.has(k) && x !== null && typeof x !== 'object') out.push(`${at}=${String(x)}`);
    else out.push(...activityIn(x, at));
  }
  return out;
}

/** The URL with `:id` and `:tokenId` filled from `of`. */
function fill(url: string, of: Tenant): string {
  return url.replace(':id', encodeURIComponent(of.stack)).replace(':tokenId', encodeURIComponent(of.tokenId));
}

/** A GET's URL: an API route gets the query the analytics route needs, and another token to filter by when asked. */
function getUrl(url: string, of: Tenant, tokenQuery: Tenant | null = null): string {
  const path = fill(url, of);
  if (!path.startsWith('/api/')) return path;
  return `${path}?window=24h${tokenQuery === null ? '' : `&token=${encodeURIComponent(tokenQuery.tokenId)}`}`;
}

const BODIES: Record<string, unknown> = {
  'POST /api/v1/stacks/:id/tokens': { label: 'intruder' },
  'PATCH /api/v1/stacks/:id/tokens/:tokenId': { active: true },
};

/** Routes that change state and name no stack or token: they act on the caller alone (account.ts, stacks.ts). */
const CALLER_ONLY = new Set(['POST /api/v1/register', 'POST /api/v1/login', 'POST /api/v1/logout', 'POST /api/v1/stacks']);

interface Seen {
  what: string;
  answer: ConsoleAnswer;
}

/** Every route as `viewer`: GETs with its own ids and with `other`'s, state-changing ones with `other`'s only. */
async function visitAll(t: Test, routes: Route[], viewer: Tenant, other: Tenant): Promise<Seen[]> {
  const seen: Seen[] = [];
  for (const r of routes) {
    const key = `${r.method} ${r.url}`;
    const named = r.url.includes(':');
    if (r.method === 'GET') {
      const urls = new Set([getUrl(r.url, viewer)]);
      if (named) urls.add(getUrl(r.url, other)).add(getUrl(r.url, viewer, other));
      for (const url of urls) seen.push({ what: `${viewer.name}: GET ${url}`, answer: await viewer.client.get(url) });
      continue;
    }
    if (!named) {
      t.ok(CALLER_ONLY.has(key), `${key}: acts on the caller alone (else: check what it answers, and add it here)`);
      continue;
    }
    const url = fill(r.url, other);
    const answer = await viewer.client.send(r.method, url, BODIES[key] ?? {});
    t.equal(answer.status, 404, `${viewer.name}: ${r.method} ${url} on the other account's ids is 404`);
    seen.push({ what: `${viewer.name}: ${r.method} ${url}`, answer });
  }
  return seen;
}

function noneOf(t: Test, seen: Seen[], secrets: string[], whose: string): void {
  for (const { what, answer } of seen) {
    const found = secrets.filter((s) => answer.text.includes(s));
    t.same(found, [], `${what}: nothing of ${whose}`);
  }
}

t.test("an account sees its own stacks, tokens, usage and landing, never another's", { timeout: 180_000 }, async (t) => {
  const cluster = new Cluster({ slotMs: 50 });
  const h: Harness = await startHarness({
    workers: 1,
    console: true,
    sims: [
      { cluster, synthetic: false },
      { cluster, synthetic: false },
    ],
    config: { health: { intervalMs: 200, chainWatch: true } },
  });
  t.teardown(() => h.close());
  const base = h.gw.console!.url;
  const a = await tenant(base, 'alpha');
  const b = await tenant(base, 'bravo');
  const staticId = h.gw.tokens.find(TOKEN)!.id;
  const operator = [staticId, tokenPrefix(TOKEN)];

  // Only A sends, and the config token, which no account owns.
  const aUrl = `${h.url}/api-token/${a.token}`;
  await eventually(
    'A token reaches the worker',
    async () =>
      (await fetch(aUrl, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"jsonrpc":"2.0","id":1,"method":"getSlot"}' })).status ===
      200,
  );
  const rpc = createSolanaRpc(aUrl);
  for (let i = 0; i < 3; i++) await rpc.getSlot().send();
  const payer = await generateKeyPairSigner();
  await rpc.requestAirdrop(payer.address, lamports(2_000_000_000n)).send();
  await eventually('the airdrop confirmed', async () => (await rpc.getBalance(payer.address, { commitment: 'confirmed' }).send()).value > 0n, DEADLINE_MS);
  const aSig = await sendTransfer(aUrl, payer, 5_000_000n);
  const opSig = await sendTransfer(`${h.url}/api-token/${TOKEN}`, payer, 6_000_000n);
  a.secrets.push(aSig);
  operator.push(opSig);
  await eventually(
    'both transfers landed',
    () => h.gw.landing.tokens().get(a.tokenId)?.landed === 1 && h.gw.landing.tokens().get(staticId)?.landed === 1,
    DEADLINE_MS,
  );
  let nodeWide = 0;
  for (const c of h.gw.landing.nodes().values()) nodeWide += c.landed;
  t.equal(nodeWide, 2, "node-wide: A's transfer and the config token's (the admin API's figures)");

  // The store has it all: A's usage on its overview, its landing on its Transactions panel.
  await eventually(
    "A's usage and landing in the store",
    async () => {
      await Promise.all([h.gw.usageFlush!.flush(), h.gw.landingFlush!.flush()]);
      const o = await a.client.get(`/api/v1/stacks/${a.stack}/overview`);
      const l = await a.client.get(`/api/v1/stacks/${a.stack}/landing`);
      return o.json.calls24h >= 6 && l.json.tokens[0]?.landed === 1;
    },
    DEADLINE_MS,
  );

  // Every route of the console, from the app itself.
  const app = await buildConsole(
    { store: h.gw.store!, host: '127.0.0.1', port: 0, registration: 'open', endpoints: { http: h.url, ws: h.url }, log: silentLogger() },
    silentLogger(),
  );
  await app.ready();
  const all = routesOf(app.printRoutes({ commonPrefix: false }));
  await app.close();
  const wildcards = all.filter((r) => r.url.includes('*'));
  t.same(
    wildcards.map((r) => r.url),
    ['/*'],
    'one wildcard: the static assets (/assets/), the same files for everyone',
  );
  const routes = all.filter((r) => !r.url.includes('*'));
  for (const known of ['GET /stacks/:id/nodes', 'GET /api/v1/stacks/:id/overview', 'GET /api/v1/landing/nodes', 'PATCH /api/v1/stacks/:id/tokens/:tokenId'])
    t.ok(
      routes.some((r) => `${r.method} ${r.url}` === known),
      `the route list holds ${known}`,
    );

  const bSaw = await visitAll(t, routes, b, a);
  noneOf(t, bSaw, [...a.secrets, ...operator], "A's or the config token's");
  for (const { what, answer } of bSaw) t.same(activityIn(answer.json), [], `${what}: no activity (B sent nothing)`);

  const aSaw = await visitAll(t, routes, a, b);
  noneOf(t, aSaw, [...b.secrets, ...operator], "B's or the config token's");

  // A sees its own, and only its own.
  const own = async (url: string) => (await a.client.get(url)).json;
  t.match(await own('/api/v1/stacks'), { stacks: [{ id: a.stack }] });
  t.equal((await own(`/api/v1/stacks/${a.stack}/tokens`)).tokens[0].id, a.tokenId);
  t.ok((await own(`/api/v1/stacks/${a.stack}/overview`)).calls24h >= 6, "A's calls on its overview");
  t.match((await own(`/api/v1/stacks/${a.stack}/landing`)).tokens, [{ tokenId: a.tokenId, sent: 1, landed: 1 }]);
  const nodeRoutes = routes.filter((r) => r.method === 'GET' && r.url.startsWith('/api/') && /landing\/nodes$/.test(r.url));
  t.ok(nodeRoutes.length > 0, 'a per-node landing route');
  for (const r of nodeRoutes) {
    const nodes = (await own(getUrl(r.url, a))).nodes as { node: string; sent: number; landed: number }[];
    t.equal(
      nodes.reduce((n, x) => n + x.landed, 0),
      1,
      `${r.url}: A's transfer landed once, the config token's is not in it`,
    );
    t.equal(
      nodes.reduce((n, x) => n + x.sent, 0),
      1,
      `${r.url}: A's transfer went to one node`,
    );
  }
  const after = await a.client.get(`/api/v1/stacks/${a.stack}/tokens`);
  t.equal(after.json.tokens.length, 1, "B's writes on A's ids changed nothing");
  t.equal(after.json.tokens[0].active, true);
});
