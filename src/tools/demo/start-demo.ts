// The demo's part of `jumpgate start` without --config: the account store under the data
// directory with the demo account in it, three simulated nodes, and a config that routes to
// them; once the gateway runs, the text that tells the user what to try. Imported only when
// the demo runs (a gateway started from a config never loads the simulator).

import { join } from 'node:path';
import { DEFAULTS } from '../../config/defaults.js';
import { resolveConfig } from '../../config/load.js';
import type { Config } from '../../config/schema.js';
import { openStore } from '../../store/open.js';
import type { FullStore } from '../../store/types.js';
import { newAdminToken } from '../../token-format.js';
import { ensureDemoAccount, type DemoAccount } from './account.js';
import { DEMO_GRPC_PORT, demoGrpcPort } from './grpc.js';
import { demoBanner, startDemoNodes, type DemoNodes } from './nodes.js';
import { ensureDemoWallet } from './wallet.js';

export interface Demo {
  config: Config;
  /** The demo's account store (DATA_DIR/jumpgate.db), handed to the gateway. */
  store: FullStore;
  account: DemoAccount;
  nodes: DemoNodes;
  /** The funded demo key's address, and the data directory holding its keypair file. */
  wallet: { address: string; dataDir: string };
  /** DEMO_GRPC_PORT was busy: the gRPC listener took a free port. */
  grpcPortTaken: boolean;
}

/** What the demo text needs from the started gateway. */
export interface StartedGateway {
  url: string;
  wsPort: number;
  console: { url: string } | null;
  admin: { url: string } | null;
  grpc: { url: string } | null;
  listener: { engine: string; reason: string };
}

/** `port`: the --port flag (0 = every listener on an ephemeral port, as tests run it). */
export async function prepareDemo(dataDir: string, port: number | undefined): Promise<Demo> {
  // The demo keeps its account store, account, stack and token under --data (default ./data).
  const store = await openStore(`sqlite://${join(dataDir, 'jumpgate.db')}`);
  const account = await ensureDemoAccount(store, dataDir);
  const signer = ensureDemoWallet(dataDir);
  const nodes = await startDemoNodes(signer);
  // The demo's admin API gets a fresh token each run (printed by startedText); a busy port only skips it.
  const admin = { token: newAdminToken() };
  const ephemeral = port === 0;
  const grpcPort = ephemeral ? 0 : await demoGrpcPort(DEFAULTS.grpc.host);
  const config = resolveConfig({
    nodes: nodes.nodes,
    // Port 0 for the admin and console: the gateway starts them on free ports (start.ts).
    admin: ephemeral ? { ...admin, port: 0 } : admin,
    console: ephemeral ? { port: 0 } : {},
    rpc: port === undefined ? {} : { port, wsPort: ephemeral ? 0 : port + 1 },
    // Port 0 (tests, or DEMO_GRPC_PORT busy): the gateway still starts the listener for the demo, on a free port.
    grpc: { port: grpcPort, sources: nodes.grpcSources },
  });
  return { config, store, account, nodes, wallet: { address: signer.address, dataDir }, grpcPortTaken: !ephemeral && grpcPort === 0 };
}

/** The banner with ready-to-paste commands, and the admin API line when its listener is up. */
export function startedText(demo: Demo, gw: StartedGateway): string {
  const { account, config } = demo;
  const consoleLogin = gw.console === null ? null : { url: gw.console.url, email: account.email, password: account.password };
  let text =
    demoBanner(
      gw.url,
      gw.wsPort,
      account.token,
      config.headers.brand,
      demo.nodes.sims.map((n) => ({ id: n.id, url: n.url })),
      consoleLogin,
      demo.wallet,
      gw.grpc === null ? null : { url: gw.grpc.url, taken: demo.grpcPortTaken ? DEMO_GRPC_PORT : null },
    ) + '\n';
  // Which server engine serves the RPC port, and why (docs/runtimes.md).
  text += `Listener: ${gw.listener.engine} (${gw.listener.reason})\n\n`;
  if (gw.admin !== null) {
    const a = `--admin ${gw.admin.url} --token ${config.admin.token}`;
    text += `Admin API (this run's token): npx jumpgate nodes ${a}\n  e.g. npx jumpgate nodes set-weight sim-slow 0 ${a}\n`;
    text += `  after the transfer, what landed: curl -s ${gw.admin.url}/admin/landing -H 'Authorization: Bearer ${config.admin.token}'\n\n`;
  }
  return text;
}
