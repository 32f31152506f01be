// JSON schemas of the console API: they validate requests, shape responses (fast-json-stringify
// drops any field not listed, so a password hash or full token can never leak through a record)
// and feed the OpenAPI document.

const str = (description: string, extra: Record<string, unknown> = {}) => ({ type: 'string', description, ...extra }) as const;
const int = (description: string) => ({ type: 'integer', description }) as const;
const ms = (description: string) => ({ type: 'integer', description: `${description} (epoch ms)` }) as const;
const nullable = (type: 'string' | 'integer' | 'number', description: string) => ({ type: [type, 'null'], description }) as const;

function object(properties: Record<string, unknown>, required: string[] = Object.keys(properties)) {
  return { type: 'object', properties, required, additionalProperties: false } as const;
}

export const errorSchema = object({
  error: object({ code: str('Stable error code'), message: str('Human-readable message') }),
});

export const accountSchema = object({ id: str('Account id'), email: str('Email address'), createdAt: ms('Created') });

export const authAnswer = object({
  account: accountSchema,
  csrfToken: str('Send as X-CSRF-Token on every POST/PATCH/DELETE'),
});

export const credentialsBody = object({
  email: str('Email address', { format: 'email', maxLength: 254 }),
  password: str('Password (10 characters or more)', { minLength: 10, maxLength: 1024 }),
});

export const loginBody = object({
  email: str('Email address', { maxLength: 254 }),
  password: str('Password', { maxLength: 1024 }),
});

export const stackSchema = object({
  id: str('Stack id'),
  name: str('Name, unique in the account'),
  description: nullable('string', 'Description'),
  disabled: { type: 'boolean', description: 'A disabled stack refuses all its tokens' },
  createdAt: ms('Created'),
});

export const stackCreateBody = object(
  {
    name: str('Name, unique in the account', { minLength: 1, maxLength: 64, pattern: '\\S' }),
    description: { type: ['string', 'null'], maxLength: 500, description: 'Optional description' },
  },
  ['name'],
);

export const tokenSchema = object({
  id: str('Token id'),
  stackId: str('Stack id'),
  label: str('Label'),
  prefix: str('First characters of the token'),
  active: { type: 'boolean', description: 'Inactive tokens are refused by the gateway' },
  createdAt: ms('Created'),
  lastUsedAt: nullable('integer', 'Last used (epoch ms), null if never'),
});

export const tokenCreateBody = object({ label: str('Label', { minLength: 1, maxLength: 64, pattern: '\\S' }) });

export const tokenCreated = object({
  token: str('The full token. Shown only in this answer: store it now'),
  record: tokenSchema,
});

export const tokenPatchBody = object({ active: { type: 'boolean', description: 'Activate or deactivate' } });

export const stackParams = object({ id: str('Stack id', { maxLength: 128 }) });
export const tokenParams = object({ id: str('Stack id', { maxLength: 128 }), tokenId: str('Token id', { maxLength: 128 }) });

export const endpointsSchema = object({
  http: str('HTTP endpoint with a <TOKEN> placeholder'),
  ws: str('WebSocket endpoint with a <TOKEN> placeholder'),
  httpBase: str('Gateway HTTP base URL'),
  wsBase: str('Gateway WebSocket base URL'),
});

export const overviewSchema = object({
  calls24h: int('RPC and WebSocket calls in the last 24 h'),
  bytes24h: int('Bytes in + out in the last 24 h'),
  activeTokens: int('Active API tokens of the stack'),
  daily: { type: 'array', description: 'Calls per UTC day, last 7 days, oldest first', items: object({ day: ms('Day start'), calls: int('Calls') }) },
  endpoints: endpointsSchema,
});

export const analyticsQuery = {
  type: 'object',
  properties: {
    window: { type: 'string', enum: ['1h', '24h', '7d'], default: '24h', description: 'Time window' },
    token: str('Only this token (id)', { maxLength: 128 }),
  },
  additionalProperties: false,
} as const;

export const analyticsSchema = object({
  window: { type: 'string', enum: ['1h', '24h', '7d'] },
  tokenId: nullable('string', 'Token filter, null for all tokens'),
  from: ms('Window start'),
  to: ms('Window end'),
  methods: {
    type: 'array',
    items: object({
      method: str('JSON-RPC method'),
      calls: int('Calls'),
      errors: int('Errors'),
      p50: nullable('number', 'Median latency, ms'),
      p99: nullable('number', '99th percentile latency, ms'),
    }),
  },
  series: {
    type: 'array',
    description: 'Calls per bucket (minute for 1h, hour for 24h, 6 h for 7d), oldest first',
    items: object({ t: ms('Bucket start'), calls: int('Calls'), errors: int('Errors') }),
  },
});

const landingCounts = {
  sent: int('Transactions a node accepted (once per node sent to)'),
  landed: int('Landed without an error'),
  expired: int('Blockhash expired before landing'),
  failed: int('Landed with an error'),
  untracked: int('Dropped from tracking (too many in flight)'),
  resent: int('Rebroadcast copies sent'),
  landedPct: nullable('number', 'landed / (landed + failed + expired) in percent, null before any ended'),
  slotsToLand: object({ p50: nullable('integer', 'Median slots to land'), p90: nullable('integer', '90th percentile slots to land') }),
};

export const stackLandingSchema = object({
  from: ms('Window start (the start of the hour 24 h ago)'),
  to: ms('Window end'),
  tokens: {
    type: 'array',
    description: 'Tokens of the stack that sent transactions in the window, by label',
    items: object({ tokenId: str('Token id'), label: str('Label'), prefix: str('First characters of the token'), ...landingCounts }),
  },
});

export const nodesLandingSchema = object({
  from: ms('Window start (the start of the hour 24 h ago)'),
  to: ms('Window end'),
  nodes: {
    type: 'array',
    description:
      "The gateway's nodes that the caller's transactions (the stack's, or the account's) went to in the window, by node id; nobody else's transactions are in the counts",
    items: object({ node: str('Node id'), ...landingCounts }),
  },
  ranking: {
    type: 'object',
    description:
      'Where each node of the gateway ranks for sendTransaction and why, by node id (docs/landing.md "Sends go where they land"): node-wide, from recent sends of every account, with no counts',
    additionalProperties: object({
      position: nullable('integer', '1 for the node sends go to; null while not ranked (explored)'),
      includedPct: nullable('number', 'Share of recent sends in a block in time, percent'),
      meanSlots: nullable('number', 'Mean slots to land of those'),
      reason: str('Why it ranks where it does'),
    }),
  },
});

/** Error responses for a route, by status. */
export function errors(...statuses: number[]): Record<number, typeof errorSchema> {
  return Object.fromEntries(statuses.map((s) => [s, errorSchema]));
}
