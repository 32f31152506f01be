// The config file's shape (docs/configuration.md "Configuration" names are the contract). Every object is strict, every
// field is required here: defaults are merged in beforehand from defaults.ts, so `Config` is
// fully resolved. Each check's error text is the "expected …" half of a message; load.ts adds
// the field path and what was found. The checks' builders come from schema-kit.ts, and
// sections kept apart from landing-schema.ts and provider-schema.ts.

import { z } from 'zod';
import { API_TOKEN_RE, API_TOKEN_RULE } from '../token-format.js';
import { isCidr } from './cidr.js';
import { LandingSchema } from './landing-schema.js';
import { BudgetSchema, MethodListSchema } from './provider-schema.js';
import { COMMITMENTS, expected, int, method, methodList, obj, port, str, strList, urlWith } from './schema-kit.js';

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

export const BRAND_RE = /^[A-Za-z0-9]+(-[A-Za-z0-9]+)*$/;
export const NODE_ID_RE = /^[A-Za-z0-9._-]{1,64}$/;
const STORE_URL_RE = /^(sqlite|postgres|postgresql):\/\//;

const NodeSchema = obj({
  id: str('an id of 1-64 characters from [A-Za-z0-9._-]', NODE_ID_RE),
  url: str('an http:// or https:// URL', /^https?:\/\//i, urlWith(['http:', 'https:'])),
  ws: str('a ws:// or wss:// URL', /^wss?:\/\//i, urlWith(['ws:', 'wss:'])).optional(),
  weight: z.number(expected('a number >= 0')).min(0, expected('a number >= 0')),
  labels: z.record(z.string(), str('a string'), expected('a mapping of strings')).optional(),
  expectLag: z
    .boolean(expected('true or false'))
    .optional()
    .meta({ description: 'The node is meant to fall behind (a delayed replica): its changes between healthy and lagging are logged at info, not warn' }),
  kind: z.enum(['rpc', 'jito'], expected('one of rpc, jito')).optional().meta({ description: 'rpc (default), or jito: a Jito block engine (docs/jito.md)' }),
  headers: z
    .record(str('a header name from [A-Za-z0-9-]', /^[A-Za-z0-9-]{1,64}$/), str('a string'), expected('a mapping of header name to value'))
    .optional()
    .meta({ description: 'A block engine: headers sent with every call, e.g. { "x-jito-auth": "<uuid>" } (never logged)' }),
  rateLimit: z
    .number(expected('a number > 0'))
    .positive(expected('a number > 0'))
    .optional()
    .meta({ description: 'A block engine: calls a second at most (default 5)' }),
  budget: BudgetSchema.optional().meta({
    description: 'Provider budget: calls are spread so the node stays within it (docs/routing.md "Provider budgets")',
  }),
  methods: MethodListSchema.optional().meta({ description: 'Methods the node serves (docs/routing.md "Unsupported methods")' }),
});

/** docs/routing.md "Label routing": a method's calls go only to nodes carrying all these labels. */
const MethodRouteSchema = obj({
  labels: z
    .record(z.string(), str('a string'), expected('a mapping of strings'))
    .meta({ description: 'Labels a node must carry (all of them), e.g. { role: gpa }' }),
  fallback: z
    .enum(['any', 'none'], expected('one of any, none'))
    .meta({ description: 'No such node usable: any = route among all nodes; none = refuse (7503)' }),
});

const TokenSchema = obj({
  token: str(API_TOKEN_RULE, API_TOKEN_RE),
  stack: str('a stack name', /./),
  active: z.boolean(expected('true or false')),
});

/** Issue on the second of two list entries sharing `key`; names the first one's index. Runs even
 * when other fields of the entries are invalid, so duplicates show up with everything else. */
function unique(list: string, key: string, what: string, secret = false) {
  const check = (entries: unknown[], ctx: z.RefinementCtx<unknown[]>): void => {
    const seen = new Map<string, number>();
    entries.forEach((entry, i) => {
      const v = entry !== null && typeof entry === 'object' ? (entry as Record<string, unknown>)[key] : undefined;
      if (typeof v !== 'string') return;
      const first = seen.get(v);
      if (first === undefined) {
        seen.set(v, i);
        return;
      }
      const shown = secret ? '' : ` ${JSON.stringify(v)}`;
      ctx.addIssue({ code: 'custom', path: [i, key], message: `duplicate ${what}${shown} (already used by ${list}[${first}])`, input: v });
    });
  };
  return [check, { when: (payload: { value: unknown }) => Array.isArray(payload.value) }] as const;
}

/** docs/configuration.md "TLS": PEM files, read at start and again on every reload (load.ts checks them). */
const TlsSchema = obj({
  cert: str('a file path (PEM certificate, intermediates after it)', /./),
  key: str('a file path (PEM private key, not encrypted)', /./),
  ca: str('a file path (PEM CA certificates)', /./)
    .optional()
    .meta({ description: 'Clients are asked for a certificate; one that does not verify against these CAs is refused (clients without one still connect)' }),
});

/** docs/grpc.md "Configuration": an upstream Yellowstone gRPC endpoint. */
const GrpcSourceSchema = obj({
  id: str('an id of 1-64 characters from [A-Za-z0-9._-]', NODE_ID_RE),
  url: str('an http:// or https:// URL', /^https?:\/\//i, urlWith(['http:', 'https:'])),
  xToken: str('a string')
    .optional()
    .meta({ description: "Sent as the source's x-token metadata (none when absent); never logged; use ${ENV} to keep it out of the file" }),
});

/** docs/grpc.md: the Yellowstone gRPC listener (restart to change). */
const GrpcSchema = obj(
  {
    host: str('a host name or address'),
    port: port('Yellowstone gRPC (geyser.Geyser) port; 0 = off'),
    sources: z.array(GrpcSourceSchema, expected('a list of sources')).superRefine(...unique('grpc.sources', 'id', 'source id')),
    windowSlots: int(40, 100_000).meta({ description: 'Dedup window and from_slot replay: slots kept behind the newest' }),
    windowBytes: int(1_048_576).meta({ description: 'Bytes of updates the window keeps at most per commitment (oldest slots go first)' }),
    sourceStallMs: int(100, 600_000).meta({ description: 'A source silent this long after another delivered something new is resubscribed' }),
    limits: obj({
      maxStreamsPerToken: int(1),
      maxFiltersPerStream: int(1),
      maxAccountsPerFilter: int(1),
      maxOwnersPerFilter: int(1),
      maxDataFiltersPerFilter: int(0, 64),
      maxQueuedMessages: int(16).meta({ description: 'Updates queued for a client that does not read before its stream ends with RESOURCE_EXHAUSTED' }),
      maxRequestBytes: int(1024),
    }),
  },
  'Yellowstone gRPC listener and its sources (docs/grpc.md; restart to change)',
);

const RateSchema = obj({
  rate: z.number(expected('a number >= 0')).min(0, expected('a number >= 0')),
  burst: z.number(expected('a number >= 1')).min(1, expected('a number >= 1')),
});

export const ConfigSchema = obj({
  chain: z.enum(['solana', 'evm'], expected('one of solana, evm')).meta({ description: 'Chain family; selects health probes' }),
  rpc: obj(
    {
      host: str('a host name or address'),
      port: port('Public JSON-RPC port (HTTP and WS)'),
      wsPort: port('Extra WS-only port; 0 = none'),
      workers: z
        .union([int(0, 256), z.literal('auto')], expected("an integer from 0 to 256 or 'auto'"))
        .meta({ description: "Data-plane worker threads sharing the ports; 'auto' = one per core; 0 = inline on the control plane's event loop" }),
      server: z.enum(['auto', 'uws', 'node'], expected('one of auto, uws, node')).meta({
        description:
          "HTTP/WebSocket server: 'uws' (uWebSockets.js), 'node' (Node's http and ws), 'auto' = uws where a binary loads for this Node and libc, else node",
      }),
    },
    'Public RPC listener',
  ),
  console: obj(
    {
      host: str('a host name or address'),
      port: port('Console port; 0 = console off'),
      registration: z.enum(['open', 'closed'], expected('one of open, closed')),
    },
    'Account console listener',
  ),
  admin: obj(
    {
      host: str('a host name or address'),
      port: port('Admin/metrics port; 0 = off'),
      token: str('a string').meta({ description: "Bearer token; '' = admin API refuses all but /healthz" }),
    },
    'Admin API listener',
  ),
  tls: TlsSchema.nullable().meta({ description: 'TLS on the RPC, WebSocket and console listeners; null = plain HTTP' }),
  store: obj({
    url: str('a sqlite://, postgres:// or postgresql:// URL', STORE_URL_RE),
    retentionDays: int(1, 3650).meta({ description: 'Days of usage history kept (per-minute rows for the last 24 h, hourly before)' }),
  }),
  headers: obj({
    brand: str('a header-name word like "Service" or "My-Brand" ([A-Za-z0-9] words joined by "-")', BRAND_RE),
  }),
  exposeNode: z.boolean(expected('true or false')).meta({ description: 'Send the serving node id in a response header' }),
  cors: obj({ origins: strList('origin') }),
  trustedProxies: z
    .array(str('a CIDR like 10.0.0.0/8 or ::1/128, or a bare IP address', undefined, isCidr), expected('a list of CIDRs'))
    .meta({ description: 'CIDRs whose X-Forwarded-For is believed' }),
  nodes: z.array(NodeSchema, expected('a list of nodes')).superRefine(...unique('nodes', 'id', 'node id')),
  tokens: z
    .array(TokenSchema, expected('a list of tokens'))
    .superRefine(...unique('tokens', 'token', 'token', true))
    .meta({ description: 'Static tokens (bootstrap and tests)' }),
  limits: obj({
    maxBodyBytes: int(1024),
    maxBatch: int(1),
    streamAnswersOverBytes: int(1024).meta({ description: "A single call's node answer over this many bytes passes to the client as it arrives" }),
    maxBufferedAnswerBytes: int(1024).meta({
      description: 'The most of a node answer held in memory where it cannot stream (batch parts, coalesced, hedged, WebSocket calls); beyond: 7506',
    }),
    upstreamTimeoutMs: int(1),
    methodTimeoutMs: z.record(method, int(1), expected('a mapping of method name to milliseconds')),
  }),
  upstream: obj(
    {
      client: z.enum(['pipelined', 'undici'], expected('one of pipelined, undici')).meta({
        description:
          'pipelined: our HTTP/1.1 client (pipelining, one write per connection per loop turn); undici: undici Pool, one request per connection at a time',
      }),
      connections: int(1, 4096).meta({ description: 'Connections per node at most' }),
      pipelining: int(1, 128).meta({ description: 'pipelined client: unanswered requests per connection at most (1 = no pipelining)' }),
      pipelineStallMs: int(0).meta({ description: 'pipelined client: a connection whose oldest unanswered request is older than this takes no more' }),
    },
    'How the gateway talks to nodes (restart to change)',
  ),
  routing: obj({
    upstreamBatch: int(1),
    maxAttempts: int(1, 10),
    autoAffinityMethods: methodList,
    noRetryMethods: methodList,
    broadcast: obj(
      {
        methods: methodList,
        fanout: int(1, 16).meta({ description: 'Nodes each call goes to at once (1 = no broadcast)' }),
        engines: z.boolean(expected('true or false')).meta({ description: 'sendTransaction also goes to a Jito block engine (docs/jito.md)' }),
      },
      'Writes sent to several nodes at once; the first success answers (docs/routing.md "Broadcast sends")',
    ),
    hedge: obj(
      {
        methods: methodList,
        percentile: int(50, 99).meta({ description: "The node's latency percentile for the method after which the call also goes to the next best node" }),
        minDelayMs: int(0),
        maxDelayMs: int(1),
        maxExtra: int(1, 4).meta({ description: 'Extra nodes a call may be hedged to' }),
      },
      'Reads also sent to a second node when the first is slow (docs/routing.md "Hedged reads")',
    ),
    coalesce: obj(
      {
        methods: methodList,
        windowMs: int(0, 60_000).meta({ description: 'A call joins an identical one sent at most this long before it arrived (0: only one not yet written)' }),
      },
      'Identical calls share one upstream call (docs/routing.md "Coalescing")',
    ),
    methods: z
      .record(method, MethodRouteSchema, expected('a mapping of method name to { labels, fallback }'))
      .meta({ description: 'Label routing per method' }),
    unsupportedMs: int(0, 86_400_000).meta({
      description:
        'How long a node that answered "method not found" (or a provider\'s "method disabled") is not asked that method again; 0: never learn (docs/routing.md "Unsupported methods")',
    }),
    minContextSlotWaitMs: int(0, 60_000).meta({
      description:
        'How long a call with minContextSlot waits for a node that reached it before going to the freshest node (docs/solana-routing.md "minContextSlot routing")',
    }),
    blockhashWaitMs: int(0, 60_000).meta({
      description:
        'How long a sendTransaction waits for a node known to have its blockhash before going to the freshest node (docs/solana-routing.md "Blockhash-aware sends")',
    }),
    landing: LandingSchema,
  }),
  affinity: obj({
    seed: int(0),
    keyRate: z.number(expected('a number > 0')).gt(0, expected('a number > 0')),
    keyBurst: z.number(expected('a number >= 1')).min(1, expected('a number >= 1')),
    maxTrackedKeys: int(1000).meta({ description: 'Hot-key buckets kept at most (idle ones are dropped first)' }),
    monotonic: z.boolean(expected('true or false')).meta({ description: "Monotonic reads: a key's slots never go back when it changes node" }),
    monotonicWaitMs: int(0, 60000).meta({ description: 'How long a key waits for a node that caught up before 7505' }),
  }),
  rateLimits: obj(
    {
      token: RateSchema.meta({ description: 'Calls per second per token (batch elements count); rate 0 = unlimited' }),
      methods: z.record(method, RateSchema, expected('a mapping of method name to { rate, burst }')).meta({ description: 'Per token and method' }),
    },
    'Per-token rate limits (429, code 7429)',
  ),
  health: obj({
    intervalMs: int(50),
    maxSlotLag: int(0),
    timeoutMs: int(1),
    ejectAfterFailures: int(1),
    ejectBackoffMs: int(1),
    ejectBackoffMaxMs: int(1),
    chainPollMs: int(20, 10_000).meta({
      description:
        'Solana: how often the chain watch asks each node its confirmed slot and latest blockhash while a confirmation is due (with the slot stream it also asks at each new slot); sends wait on it (docs/solana-routing.md "Chain view")',
    }),
    chainWatch: z.boolean(expected('true or false')).meta({
      description:
        'Solana: follow each node\'s chain view (a slot stream and per-slot polls) for minContextSlot and blockhash-aware routing (docs/solana-routing.md "Chain view")',
    }),
  }).superRefine((h, ctx) => {
    if (h.ejectBackoffMaxMs < h.ejectBackoffMs) {
      ctx.addIssue({
        code: 'custom',
        path: ['ejectBackoffMaxMs'],
        message: `expected an integer >= health.ejectBackoffMs (${h.ejectBackoffMs})`,
        input: h.ejectBackoffMaxMs,
      });
    }
  }),
  grpc: GrpcSchema,
  cache: obj(
    {
      accounts: obj(
        {
          enabled: z.boolean(expected('true or false')).meta({ description: 'Hot account reads from memory (docs/account-cache.md)' }),
          maxBytes: int(1024).meta({ description: 'Bytes of account states kept at most; the least recently read keys go first' }),
          maxKeys: int(1).meta({ description: 'Keys held at most' }),
          idleMs: int(1000).meta({ description: 'A key not read for this long is dropped and unsubscribed' }),
          hotAfterReads: int(1).meta({ description: 'Reads of a key (within idleMs of each other) after which it is held' }),
          commitments: z.array(z.enum(COMMITMENTS, expected(COMMITMENTS.join(', '))), expected('a list')).meta({ description: 'Answered from memory' }),
          maxLagSlots: int(0).meta({ description: "Slots the cache's processed slot may trail the freshest node's before reads go to a node" }),
          maxAccountBytes: int(0).meta({ description: 'Accounts with more data than this are not held (read from a node)' }),
        },
        'The account cache: getAccountInfo, getMultipleAccounts and getBalance from memory',
      ),
    },
    'Reads answered from memory',
  ),
  fees: obj(
    {
      estimates: obj({
        enabled: z.boolean(expected('true or false')).meta({ description: 'Solana: the gateway answers getPriorityFeeEstimate from recent blocks' }),
        lookbackSlots: int(1, 150).meta({ description: 'Slots of blocks held (one getBlock each): the most a request may look back' }),
      }),
    },
    'Priority fee estimates (docs/priority-fees.md)',
  ),
  ws: obj({
    maxSubscriptionsPerConnection: int(1),
    maxConnectionsPerToken: int(1),
    maxMessageBytes: int(128),
    maxBufferedBytes: int(1024),
    idleTimeoutSec: int(8),
    redundancy: int(1, 5).meta({
      description:
        'Nodes each shared subscription is held on at once; every notification reaches clients once, from the first node to send it (docs/reliability.md "Redundant WebSocket subscriptions")',
    }),
  }),
  offload: obj(
    {
      threads: int(0, 64).meta({ description: 'Piscina threads for large bodies; 0 = all inline' }),
      parseThresholdBytes: int(0).meta({ description: 'Request bodies from this size are parsed in the pool' }),
      mergeThresholdBytes: int(0).meta({ description: 'Batch answers from this size are merged in the pool' }),
    },
    'The piscina pool that parses large bodies and merges large batch answers off the event loop (formerly `workers`)',
  ),
  redis: obj(
    {
      url: str('a redis:// or rediss:// URL like redis://127.0.0.1:6379/0', undefined, urlWith(['redis:', 'rediss:']))
        .nullable()
        .meta({
          description:
            'One Redis shared by every instance: hot-key, token and method limits hold across them, token changes reach them at once; null = each instance on its own',
        }),
      syncMs: int(10, 1000).meta({ description: "How often each instance sends its consumption to Redis and takes the others' from its buckets" }),
      keyPrefix: str('a string').meta({ description: 'Prefix of every Redis key and channel the gateway uses' }),
      maxKeysPerSync: int(100, 100_000).meta({ description: 'Distinct buckets shared per sync at most; takes from further ones stay local' }),
    },
    'Shared state across instances (restart to change)',
  ),
  log: obj({ level: z.enum(LOG_LEVELS, expected('one of ' + LOG_LEVELS.join(', '))) }),
  shutdown: obj(
    {
      readyDelayMs: int(0, 600000).meta({
        description:
          'On SIGTERM: /readyz answers 503 at once and the gateway keeps serving this long before it stops accepting (a balancer marks it down first); SIGINT skips it',
      }),
    },
    'Graceful stop behind a load balancer',
  ),
});

export type Config = z.infer<typeof ConfigSchema>;
export type NodeConfig = z.infer<typeof NodeSchema>;
export type TokenConfig = z.infer<typeof TokenSchema>;
export type TlsConfig = z.infer<typeof TlsSchema>;
export type GrpcConfig = z.infer<typeof GrpcSchema>;
