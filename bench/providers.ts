// In front of providers (docs/routing.md "Provider budgets"): two simulated providers capped at
// 100 and 50 credits/s (HTTP 429 with Retry-After beyond), getProgramAccounts costing 10 credits
// at both, and one own node without a cap. A bot's mix (getSlot and getBalance, 5%
// getProgramAccounts) is sent open-loop at 1.5× the larger provider's cap in credits, through
// jumpgate (budgets at 95% of each cap) and through nginx round-robin. Per path: client errors
// and 429s, 429s the providers answered, credits each provider charged against its cap, p50/p99.

import { Agent, request } from 'node:http';
import { rpc, startCluster } from './landing.js';
import { peerMissing, startNginx } from './peers.js';
import { startGatewayProc, type Proc } from './procs.js';

const TOKEN = 'bench-providers-token-0123456789';
const COSTS = { getProgramAccounts: 10 };
const CAPS = [100, 50, 0];
const GPA = '{"jsonrpc":"2.0","id":1,"method":"getProgramAccounts","params":["11111111111111111111111111111111",{"dataSlice":{"offset":0,"length":0}}]}';
const MIX = ['{"jsonrpc":"2.0","id":1,"method":"getSlot"}', '{"jsonrpc":"2.0","id":1,"method":"getBalance","params":["11111111111111111111111111111111"]}'];

export interface ProvidersPath {
  path: string;
  calls: number;
  /** Client answers other than 200 with a result, and of those HTTP 429. */
  clientErrors: number;
  client429: number;
  /** Per provider: credits charged, its cap × seconds, and 429s it answered. */
  providers: { id: string; cap: number; credits: number; allowed: number; limited: number }[];
  p50Ms: number;
  p99Ms: number;
  skipped: string | null;
}

export interface ProvidersBenchResult {
  seconds: number;
  creditsPerSecond: number;
  paths: ProvidersPath[];
}

async function stats(url: string): Promise<{ credits: number; limited: number }> {
  return (await (await fetch(url + '/sim/stats')).json()) as { credits: number; limited: number };
}

/** Open loop: `perSecond` calls of the mix for `seconds`; each answer's status and time. */
async function drive(url: string, perSecond: number, seconds: number): Promise<{ calls: number; errors: number; limited: number; ms: number[] }> {
  const agent = new Agent({ keepAlive: true, maxSockets: 64 });
  const ms: number[] = [];
  let errors = 0;
  let limited = 0;
  let calls = 0;
  const pending: Promise<void>[] = [];
  const t0 = performance.now();
  while (performance.now() - t0 < seconds * 1000) {
    const due = Math.floor(((performance.now() - t0) / 1000) * perSecond);
    for (; calls < due; calls++) {
      const body = calls % 20 === 0 ? GPA : MIX[calls % 2]!;
      const at = performance.now();
      pending.push(
        new Promise<void>((resolve) => {
          const req = request(url, { method: 'POST', agent, headers: { 'content-type': 'application/json' } }, (res) => {
            let text = '';
            res.on('data', (d: Buffer) => (text += d.toString()));
            res.on('end', () => {
              ms.push(performance.now() - at);
              if (res.statusCode === 429) limited++;
              if (res.statusCode !== 200 || !text.includes('"result"')) errors++;
              resolve();
            });
          });
          req.on('error', () => {
            errors++;
            resolve();
          });
          req.end(body);
        }),
      );
    }
    await new Promise((r) => setTimeout(r, 5));
  }
  await Promise.all(pending);
  agent.destroy();
  return { calls, errors, limited, ms: ms.sort((a, b) => a - b) };
}

async function measure(
  path: string,
  url: string,
  providers: { id: string; url: string; cap: number }[],
  perSecond: number,
  seconds: number,
): Promise<ProvidersPath> {
  const before = await Promise.all(providers.map((p) => stats(p.url)));
  // The providers' buckets start full: a second's burst beyond the rate is theirs to allow.
  await new Promise((r) => setTimeout(r, 1000));
  const t0 = performance.now();
  const r = await drive(url, perSecond, seconds);
  const elapsed = (performance.now() - t0) / 1000;
  const after = await Promise.all(providers.map((p) => stats(p.url)));
  const pct = (p: number): number => Math.round(10 * (r.ms[Math.min(r.ms.length - 1, Math.floor(p * r.ms.length))] ?? 0)) / 10;
  return {
    path,
    calls: r.calls,
    clientErrors: r.errors,
    client429: r.limited,
    providers: providers.map((p, i) => ({
      id: p.id,
      cap: p.cap,
      credits: after[i]!.credits - before[i]!.credits,
      allowed: Math.round(p.cap * (elapsed + 1)),
      limited: after[i]!.limited - before[i]!.limited,
    })),
    p50Ms: pct(0.5),
    p99Ms: pct(0.99),
    skipped: null,
  };
}

export async function runProvidersBench(opts: { quick: boolean; log: (line: string) => void }): Promise<ProvidersBenchResult> {
  const seconds = opts.quick ? 3 : 20;
  // 1.5× the larger cap in credits: 150 credits/s at 1.45 credits a call on average.
  const creditsPerSecond = 1.5 * CAPS[0]!;
  const perSecond = Math.round(creditsPerSecond / (0.95 + 0.05 * COSTS.getProgramAccounts));
  const cluster = await startCluster(400);
  const procs: Proc[] = [cluster];
  try {
    const ids = ['p100', 'p50', 'own'];
    for (let i = 0; i < 3; i++) {
      const r = await fetch(cluster.urls[i] + '/sim/control', { method: 'POST', body: JSON.stringify({ rateCap: CAPS[i], methodCosts: COSTS }) });
      if (r.status !== 200) throw new Error(`sim control: ${await r.text()}`);
    }
    await rpc(cluster.urls[2]!, 'getSlot', []);
    const providers = [0, 1].map((i) => ({ id: ids[i]!, url: cluster.urls[i]!, cap: CAPS[i]! }));
    const nodes = ids.map((id, i) => {
      const budget = CAPS[i]! > 0 ? `, budget: { rate: ${CAPS[i]! * 0.95}, costs: { getProgramAccounts: 10 } }` : '';
      return `  - { id: ${id}, url: "${cluster.urls[i]}"${budget} }`;
    });
    const gw = await startGatewayProc([], TOKEN, ['nodes:', ...nodes].join('\n'));
    procs.push(gw);
    const paths: ProvidersPath[] = [];
    opts.log('[providers] jumpgate, budgets at 95% of the caps');
    paths.push(await measure('jumpgate, budgets at 95% of the caps', `${gw.url}/api-token/${TOKEN}`, providers, perSecond, seconds));
    await gw.stop();
    const missing = await peerMissing('nginx');
    if (missing !== null)
      paths.push({ path: 'nginx, round-robin', calls: 0, clientErrors: 0, client429: 0, providers: [], p50Ms: 0, p99Ms: 0, skipped: missing });
    else {
      const nginx = await startNginx(cluster.urls);
      procs.push(nginx);
      opts.log('[providers] nginx');
      paths.push(await measure('nginx, round-robin', nginx.url, providers, perSecond, seconds));
    }
    return { seconds, creditsPerSecond, paths };
  } finally {
    await Promise.all(procs.map((p) => p.stop().catch(() => {})));
  }
}

export function providersTable(r: ProvidersBenchResult): string {
  const rows = r.paths.map((p) =>
    p.skipped !== null
      ? `| ${p.path} | skipped: ${p.skipped} | | | | | |`
      : `| ${p.path} | ${p.calls} | ${p.clientErrors} | ${p.client429} | ${p.providers.map((x) => `${x.id}: ${x.credits} of ${x.allowed} (${x.limited} × 429)`).join('; ')} | ${p.p50Ms} | ${p.p99Ms} |`,
  );
  return [
    `In front of providers: capped at 100 and 50 credits/s (getProgramAccounts 10 credits) and one own node; ${r.creditsPerSecond} credits/s of a bot's mix (5% getProgramAccounts) for ${r.seconds} s`,
    '| path | calls | client errors | client 429s | credits charged of allowed (429s answered) | p50 ms | p99 ms |',
    '|---|---|---|---|---|---|---|',
    ...rows,
  ].join('\n');
}
