// gRPC test harness: simulated Yellowstone sources and a gateway whose gRPC listener serves
// them on an ephemeral port, plus the official Yellowstone client's subscriptions collected
// into arrays.

import { createRequire } from 'node:module';
import type * as Yellowstone from '@triton-one/yellowstone-grpc';
import type { SubscribeUpdate } from '@triton-one/yellowstone-grpc';
import { resolveConfig } from '../../src/config/load.js';
import { silentLogger } from '../../src/log.js';
import { startGateway, type Gateway } from '../../src/lifecycle/start-gateway.js';
import { startSimGrpcSource, type SimGrpcOptions, type SimGrpcSource } from '../../src/tools/sim-grpc/server.js';

// Loaded through require: the package's ESM build is `.js` without `"type": "module"`, which
// the test runner's TypeScript hook cannot load. The CommonJS build has `exports.default = Client`.
const yellowstone = createRequire(import.meta.url)('@triton-one/yellowstone-grpc') as typeof Yellowstone & { default: typeof Yellowstone.default.default };
export const Client = yellowstone.default;
export const SubscribeRequest = yellowstone.SubscribeRequest;
type SubscribeRequest = Yellowstone.SubscribeRequest;

export const TOKEN = 'grpc-token-0123456789abcdef';
export const TOKEN2 = 'grpc-token-second-0123456789';
export const SLOT_MS = 100;

export interface GrpcHarness {
  gw: Gateway;
  sources: SimGrpcSource[];
  /** http://127.0.0.1:PORT of the gateway's gRPC listener. */
  url: string;
  close(): Promise<void>;
}

export async function startGrpcHarness(
  opts: { sources?: SimGrpcOptions[]; grpc?: Record<string, unknown>; limits?: Record<string, unknown>; config?: Record<string, unknown> } = {},
): Promise<GrpcHarness> {
  const sources = await Promise.all((opts.sources ?? [{}]).map((o, i) => startSimGrpcSource({ slotMs: SLOT_MS, seed: 100 + i, ...o })));
  const config = resolveConfig({
    rpc: { host: '127.0.0.1', port: 0, wsPort: 0, workers: 0 },
    console: { port: 0 },
    admin: { port: 0 },
    store: { url: 'sqlite://:memory:' },
    nodes: [],
    tokens: [
      { token: TOKEN, stack: 'test' },
      { token: TOKEN2, stack: 'test2' },
    ],
    offload: { threads: 0 },
    log: { level: 'silent' },
    grpc: { sources: sources.map((s, i) => ({ id: `src${i}`, url: s.url })), ...opts.grpc, limits: { ...opts.limits } },
    ...opts.config,
  });
  const gw = await startGateway(config, { log: silentLogger(), store: null, grpcEphemeral: true });
  return {
    gw,
    sources,
    url: gw.grpc!.url,
    async close() {
      await gw.close();
      await Promise.all(sources.map((s) => s.close()));
    },
  };
}

/** An official-client subscription: every update it received, and how it ended. */
export interface Sub {
  updates: SubscribeUpdate[];
  error: Error | null;
  ended: boolean;
  write(req: Partial<SubscribeRequest>): Promise<void>;
  close(): void;
}

/** Never rejects: a stream refused at its start comes back ended, with the error. */
export async function subscribe(url: string, token: string | undefined, req: Partial<SubscribeRequest>): Promise<Sub> {
  const client = new Client(url, token, undefined);
  await client.connect();
  let stream: Awaited<ReturnType<typeof client.subscribe>>;
  try {
    stream = await client.subscribe();
  } catch (e) {
    return { updates: [], error: e as Error, ended: true, write: () => Promise.reject(e as Error), close: () => {} };
  }
  const sub: Sub = {
    updates: [],
    error: null,
    ended: false,
    write: (r) =>
      new Promise<void>((resolve, reject) => stream.write(SubscribeRequest.fromPartial(r), (e: Error | null | undefined) => (e ? reject(e) : resolve()))),
    close: () => stream.destroy(),
  };
  stream.on('data', (u: SubscribeUpdate) => sub.updates.push(u));
  stream.on('error', (e: Error) => {
    sub.error = e;
    sub.ended = true;
  });
  stream.on('close', () => {
    sub.ended = true;
  });
  await sub.write(req);
  return sub;
}

/** The gRPC status text of a client error (the native client puts it in the cause). */
export function statusText(e: Error | null): string {
  if (e === null) return '';
  const cause = (e as Error & { cause?: unknown }).cause;
  return `${e.message} ${cause instanceof Error ? cause.message : String(cause ?? '')}`;
}
