// Test harness: simulated nodes plus a gateway on port 0, torn down with the test.

import { resolveConfig } from '../../src/config/load.js';
import type { Config } from '../../src/config/schema.js';
import { silentLogger } from '../../src/log.js';
import { startGateway, type Gateway } from '../../src/lifecycle/start-gateway.js';
import { startSim, type SimNode, type SimOptions } from '../../src/tools/sim/node.js';

export const TOKEN = 'test-token-0123456789abcdef';
export const TOKEN2 = 'test-token-second-0123456789';
export const INACTIVE = 'test-token-inactive-01234567';

export interface Harness {
  gw: Gateway;
  sims: SimNode[];
  /** http://127.0.0.1:PORT */
  url: string;
  /** POST a raw body (string) with the test token in the path unless `path` is given. */
  post(body: string, opts?: { path?: string; headers?: Record<string, string> }): Promise<{ status: number; headers: Headers; text: string }>;
  /** JSON-RPC call through the gateway; returns the parsed answer. */
  call(method: string, params?: unknown, headers?: Record<string, string>): Promise<{ status: number; json: any; node: string | null }>;
  close(): Promise<void>;
}

/**
 * The data-plane modes request-path tests run under: inline (`rpc.workers: 0`, where a test may
 * read the data plane's own objects) and the shipped default, one worker thread.
 */
export const PLANES = [
  { name: 'inline', workers: 0 },
  { name: 'rpc.workers 1', workers: 1 },
] as const;

export interface HarnessOptions {
  /** Data-plane worker threads (`rpc.workers`); default 0, inline. */
  workers?: number;
  /** Simulated nodes to start (ids default to n0, n1, …). */
  sims?: Partial<SimOptions>[];
  /** Extra nodes (e.g. scripted raw upstreams) appended after the sims. */
  extraNodes?: {
    id: string;
    url: string;
    weight?: number;
    labels?: Record<string, string>;
    kind?: 'rpc' | 'jito';
    rateLimit?: number;
    headers?: Record<string, string>;
    budget?: Record<string, unknown>;
    methods?: Record<string, unknown>;
  }[];
  /** Config overrides (merged over the harness defaults). */
  config?: Record<string, unknown>;
  /** Start the admin listener on an ephemeral port (`h.gw.admin`); set `config.admin.token` for auth. */
  admin?: boolean;
  /** Start the console on an ephemeral port (`h.gw.console`). */
  console?: boolean;
}

export async function startHarness(opts: HarnessOptions = {}): Promise<Harness> {
  const simOpts = opts.sims ?? [{}];
  // Synthetic mode (any key has an account, the identity is the node id) unless a test asks for the real chain.
  const sims = await Promise.all(simOpts.map((o, i) => startSim({ id: `n${i}`, port: 0, synthetic: true, ...o })));
  const nodes = [...sims.map((s) => ({ id: s.id, url: s.url, weight: 1 })), ...(opts.extraNodes ?? []).map((n) => ({ weight: 1, ...n }))];
  const base: Record<string, unknown> = {
    // Inline unless asked (no worker threads): tests may read the data plane's own pool and hub.
    rpc: { host: '127.0.0.1', port: 0, wsPort: 0, workers: opts.workers ?? 0 },
    console: { port: 0 },
    store: { url: 'sqlite://:memory:' },
    admin: { port: 0 },
    nodes,
    tokens: [
      { token: TOKEN, stack: 'test' },
      { token: TOKEN2, stack: 'test2' },
      { token: INACTIVE, stack: 'test', active: false },
    ],
    offload: { threads: 0 },
    // The chain watch's stream and polls would show in the nodes' own call counts that many
    // tests assert on: the Solana routing tests turn it on.
    health: { chainWatch: false },
    log: { level: 'silent' },
  };
  const config: Config = resolveConfig(deepMerge(base, opts.config ?? {}));
  const gw = await startGateway(config, { log: silentLogger(), adminEphemeral: opts.admin === true, consoleEphemeral: opts.console === true });
  const url = gw.url;
  const post: Harness['post'] = async (body, o = {}) => {
    const res = await fetch(url + (o.path ?? `/api-token/${TOKEN}`), {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(o.headers ?? {}) },
      body,
    });
    return { status: res.status, headers: res.headers, text: await res.text() };
  };
  return {
    gw,
    sims,
    url,
    post,
    async call(method, params, headers) {
      const r = await post(JSON.stringify({ jsonrpc: '2.0', id: 1, method, ...(params === undefined ? {} : { params }) }), { headers });
      return { status: r.status, json: r.text === '' ? null : JSON.parse(r.text), node: r.headers.get('x-service-node') };
    },
    async close() {
      await gw.close();
      await Promise.all(sims.map((s) => s.close()));
    },
  };
}

function deepMerge(a: Record<string, unknown>, b: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = { ...a };
  for (const [k, v] of Object.entries(b)) {
    const cur = out[k];
    out[k] = isPlain(cur) && isPlain(v) ? deepMerge(cur, v) : v;
  }
  return out;
}

function isPlain(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** An affinity key whose node (its first choice in the key map) is the pool's node `index`. */
export function keyOnNode(h: Harness, index: number): string {
  const pool = h.gw.pool;
  for (let i = 0; ; i++) if (pool.keyMap.primary(pool.slot(`k${i}`)) === index) return `k${i}`;
}
