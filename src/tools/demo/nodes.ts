// Demo mode (`jumpgate start` with no config): three simulated nodes (one fast, one slower,
// one lagging) and the banner with ready-to-paste commands; the demo account, stack and token
// live in the account store (account.ts).

import { startSim, type SimNode } from '../sim/node.js';

export interface DemoNodes {
  sims: SimNode[];
  nodes: { id: string; url: string; weight: number }[];
  close(): Promise<void>;
}

export async function startDemoNodes(): Promise<DemoNodes> {
  const sims = await Promise.all([
    startSim({ id: 'sim-fast', port: 0 }),
    startSim({ id: 'sim-slow', port: 0, latencyMs: [20, 60] }),
    startSim({ id: 'sim-lagging', port: 0, lag: 100 }),
  ]);
  return {
    sims,
    nodes: sims.map((s) => ({ id: s.id, url: s.url, weight: 1 })),
    close: async () => {
      await Promise.all(sims.map((s) => s.close()));
    },
  };
}

export function demoBanner(
  url: string,
  wsPort: number,
  token: string,
  brand: string,
  nodes: { id: string; url: string }[],
  consoleLogin: { url: string; email: string; password: string | null } | null,
): string {
  const body = `-H 'Content-Type: application/json' -d '{"jsonrpc":"2.0","id":1,"method":"getSlot"}'`;
  const ws = wsPort === 0 ? url.replace(/^http/, 'ws') : url.replace(/^http/, 'ws').replace(/:\d+$/, ':' + wsPort);
  const fast = nodes[0]!;
  return [
    '',
    'jumpgate demo is running',
    `  RPC endpoint:   ${url}/api-token/${token}`,
    `  WS endpoint:    ${ws}/api-token/${token}/  (also on the RPC port)`,
    `  Nodes:          ${nodes.map((n) => n.id).join(', ')} (simulated: one fast, one slower, one lagging)`,
    ...(consoleLogin === null
      ? []
      : [`  Console:        ${consoleLogin.url}  (log in as ${consoleLogin.email}${consoleLogin.password === null ? '' : ` / ${consoleLogin.password}`}, or register a new account)`]),
    '',
    'Try it:',
    `  curl -s ${url}/api-token/${token} ${body}`,
    `  curl -s ${url}/ -H 'X-${brand}-Api-Token: ${token}' -H 'Content-Type: application/json' -d '{"jsonrpc":"2.0","id":1,"method":"getIdentity"}'`,
    `  curl -s -i ${url}/api-token/wrong-token-0000000000 ${body}     # 401, code 7401`,
    `  npx jumpgate ws ${ws}/api-token/${token}/   # slots stream in (slotSubscribe)`,
    `  curl -s -X POST ${fast.url}/sim/control -d '{"wsDrop":true}'   # drop ${fast.id}'s WebSocket: the stream goes on`,
    '',
    'Stop with Ctrl-C (SIGTERM/SIGINT finish in-flight requests first).',
    '',
  ].join('\n');
}
