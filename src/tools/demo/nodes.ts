// Demo mode (`jumpgate start` with no config): three simulated nodes of one cluster (one fast,
// one slower, one lagging), the funded demo key, and the banner with ready-to-paste commands;
// the demo account, stack and token live in the account store (account.ts).

import { startClusterGrpcSource } from '../sim-grpc/cluster-source.js';
import type { SimGrpcSource } from '../sim-grpc/server.js';
import { blockhashOf, Cluster, startSim, type SimNode } from '../sim/node.js';
import type { Signer } from '../sim/wire.js';
import { grpcClientSnippet } from './grpc.js';
import { DEMO_AIRDROP_LAMPORTS } from './wallet.js';

export interface DemoNodes {
  sims: SimNode[];
  cluster: Cluster;
  nodes: { id: string; url: string; weight: number; expectLag?: boolean }[];
  /** Yellowstone gRPC sources fed by the cluster (docs/grpc.md "Simulated sources"), for `grpc.sources`. */
  grpcSources: { id: string; url: string }[];
  close(): Promise<void>;
}

/** Lag of the demo's lagging node: beyond the gateway's maxSlotLag (32), so the gateway routes around it. */
export const DEMO_LAG = 100;

/** The three nodes of one cluster; `wallet` (the demo key) is airdropped in the first slot. */
export async function startDemoNodes(wallet: Signer): Promise<DemoNodes> {
  const cluster = new Cluster();
  const sims = await Promise.all([
    startSim({ id: 'sim-fast', port: 0, cluster }),
    startSim({ id: 'sim-slow', port: 0, cluster, latencyMs: [20, 60], landingMs: 400 }),
    startSim({ id: 'sim-lagging', port: 0, cluster, lag: DEMO_LAG }),
  ]);
  // Two gRPC sources, each with its own random delay: the gateway streams the first arrival of each update.
  const grpc: SimGrpcSource[] = await Promise.all([
    startClusterGrpcSource(sims[0]!, { seed: 1, knobs: { jitterMs: 20 } }),
    startClusterGrpcSource(sims[1]!, { seed: 2, knobs: { jitterMs: 20 } }),
  ]);
  // The chain lives in memory: each start funds the saved key again.
  cluster.forward(cluster.ledger.airdropTx(wallet.pubkey, DEMO_AIRDROP_LAMPORTS, blockhashOf(sims[0]!.slot())), 0, 0);
  return {
    sims,
    cluster,
    // sim-lagging lags by design: its falling behind is logged at info (nodes[].expectLag).
    nodes: sims.map((s) => ({ id: s.id, url: s.url, weight: 1, ...(s.id === 'sim-lagging' ? { expectLag: true } : {}) })),
    grpcSources: grpc.map((g, i) => ({ id: sims[i]!.id, url: g.url })),
    close: async () => {
      await Promise.all([...grpc.map((g) => g.close()), ...sims.map((s) => s.close())]);
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
  wallet: { address: string; dataDir: string } | null = null,
  /** The gRPC listener; `taken`: the fixed port it could not have. */
  grpc: { url: string; taken: number | null } | null = null,
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
      : [
          `  Console:        ${consoleLogin.url}  (log in as ${consoleLogin.email}${consoleLogin.password === null ? '' : ` / ${consoleLogin.password}`}, or register a new account)`,
        ]),
    ...(grpc === null
      ? []
      : [
          `  gRPC endpoint:  ${grpc.url}  (Yellowstone geyser.Geyser; the token in x-token; sources: gRPC of sim-fast and sim-slow${grpc.taken === null ? '' : `; port ${grpc.taken} was taken`})`,
        ]),
    '',
    'Try it:',
    `  curl -s ${url}/api-token/${token} ${body}`,
    `  curl -s ${url}/ -H 'X-${brand}-Api-Token: ${token}' -H 'Content-Type: application/json' -d '{"jsonrpc":"2.0","id":1,"method":"getIdentity"}'`,
    `  curl -s -i ${url}/api-token/wrong-token-0000000000 ${body}     # 401, code 7401`,
    `  npx jumpgate ws ${ws}/api-token/${token}/   # slots stream in (slotSubscribe)`,
    `  curl -s -X POST ${fast.url}/sim/control -d '{"wsDrop":true}'   # drop ${fast.id}'s WebSocket: the stream goes on`,
    `  curl -s -X POST ${fast.url}/sim/control -d '{"wsDrop":false}'  # and take it back`,
    ...(grpc === null
      ? []
      : [
          '',
          'Slots over Yellowstone gRPC with the official client (in the repository: @triton-one/yellowstone-grpc is a dev dependency):',
          ...grpcClientSnippet(grpc.url, token)
            .split('\n')
            .map((l) => '  ' + l),
        ]),
    ...(wallet === null
      ? []
      : [
          '',
          `A real transfer from the demo key ${wallet.address} (100 SOL at each start), through the gateway:`,
          `  npx jumpgate transfer --url ${url}/api-token/${token}${wallet.dataDir === './data' ? '' : ` --key ${wallet.dataDir}/demo-wallet.json`}`,
          '  # prints the signature going processed → confirmed → finalized and both balances moving',
        ]),
    '',
    'Stop with Ctrl-C (SIGTERM/SIGINT finish in-flight requests first).',
    '',
  ].join('\n');
}
