// THE only place config defaults live. The loader deep-merges these under the
// operator's values (arrays replace, never merge); the JSON Schema for editors reads its
// `default`s from here too. docs/configuration.md's table documents the same values.

import type { Config, NodeConfig, TokenConfig } from './schema.js';

type DeepReadonly<T> = T extends (infer U)[] ? readonly DeepReadonly<U>[] : T extends object ? { readonly [K in keyof T]: DeepReadonly<T[K]> } : T;

function deepFreeze<T>(value: T): DeepReadonly<T> {
  if (value !== null && typeof value === 'object') {
    for (const v of Object.values(value)) deepFreeze(v);
    Object.freeze(value);
  }
  return value as DeepReadonly<T>;
}

export const DEFAULTS: DeepReadonly<Config> = deepFreeze<Config>({
  chain: 'solana',
  rpc: { host: '127.0.0.1', port: 8899, wsPort: 8900, workers: 1, server: 'auto' },
  console: { host: '127.0.0.1', port: 8080, registration: 'open' },
  admin: { host: '127.0.0.1', port: 9464, token: '' },
  tls: null,
  store: { url: 'sqlite://./data/jumpgate.db', retentionDays: 30 },
  headers: { brand: 'Service' },
  exposeNode: true,
  cors: { origins: ['*'] },
  trustedProxies: [],
  nodes: [],
  tokens: [],
  limits: {
    maxBodyBytes: 1048576,
    maxBatch: 1000,
    streamAnswersOverBytes: 1048576,
    maxBufferedAnswerBytes: 33554432,
    upstreamTimeoutMs: 30000,
    methodTimeoutMs: {},
  },
  upstream: { client: 'pipelined', connections: 64, pipelining: 4, pipelineStallMs: 5 },
  routing: {
    upstreamBatch: 100,
    maxAttempts: 3,
    autoAffinityMethods: ['getLatestBlockhash', 'isBlockhashValid', 'simulateTransaction'],
    noRetryMethods: [],
    broadcast: { methods: ['sendTransaction', 'eth_sendRawTransaction'], fanout: 1, engines: false },
    hedge: { methods: [], percentile: 90, minDelayMs: 2, maxDelayMs: 100, maxExtra: 1 },
    coalesce: { methods: [], windowMs: 0 },
    methods: {},
    unsupportedMs: 600_000,
    minContextSlotWaitMs: 500,
    blockhashWaitMs: 500,
    landing: {
      commitment: 'confirmed',
      maxTracked: 10000,
      rebroadcastMs: 0,
      ranking: { enabled: true, halfLifeMs: 20_000, overdueSlots: 20, fallbackSlots: 4, minSamples: 8, exploreShare: 0.05, slotWeight: 0.01 },
    },
  },
  affinity: { seed: 0, keyRate: 100, keyBurst: 200, maxTrackedKeys: 100000, monotonic: true, monotonicWaitMs: 1500 },
  rateLimits: { token: { rate: 0, burst: 1 }, methods: {} },
  health: {
    intervalMs: 1000,
    maxSlotLag: 32,
    timeoutMs: 2000,
    ejectAfterFailures: 3,
    ejectBackoffMs: 1000,
    ejectBackoffMaxMs: 30000,
    chainWatch: true,
    chainPollMs: 100,
  },
  grpc: {
    host: '127.0.0.1',
    port: 0,
    sources: [],
    windowSlots: 150,
    windowBytes: 67_108_864,
    sourceStallMs: 2000,
    limits: {
      maxStreamsPerToken: 10,
      maxFiltersPerStream: 16,
      maxAccountsPerFilter: 1000,
      maxOwnersPerFilter: 100,
      maxDataFiltersPerFilter: 4,
      maxQueuedMessages: 10_000,
      maxRequestBytes: 1_048_576,
    },
  },
  cache: {
    accounts: {
      enabled: false,
      maxBytes: 268_435_456,
      maxKeys: 100_000,
      idleMs: 60_000,
      hotAfterReads: 2,
      commitments: ['processed', 'confirmed', 'finalized'],
      maxLagSlots: 2,
      maxAccountBytes: 1_048_576,
    },
  },
  fees: { estimates: { enabled: false, lookbackSlots: 150 } },
  ws: {
    maxSubscriptionsPerConnection: 100,
    maxConnectionsPerToken: 100,
    maxMessageBytes: 65536,
    maxBufferedBytes: 1048576,
    idleTimeoutSec: 120,
    redundancy: 1,
  },
  offload: { threads: 1, parseThresholdBytes: 131072, mergeThresholdBytes: 131072 },
  redis: { url: null, syncMs: 50, keyPrefix: 'jumpgate:', maxKeysPerSync: 10000 },
  log: { level: 'info' },
  // A balancer checking /readyz every 1 s and marking a server down after 2 failures
  // (deploy/haproxy: `inter 1s fall 2`) stops sending within 2 s; 1 s more of margin.
  shutdown: { readyDelayMs: 3000 },
});

/** Per-entry defaults for list items (`nodes[*]`, `tokens[*]`); required fields have none. */
export const ENTRY_DEFAULTS: {
  readonly nodes: DeepReadonly<Partial<NodeConfig>>;
  readonly tokens: DeepReadonly<Partial<TokenConfig>>;
} = deepFreeze({
  nodes: { weight: 1 },
  tokens: { active: true },
});
