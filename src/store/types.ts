// The account store's contract (docs/accounts.md "Accounts, tokens and the console"): what the console, the CLI, the gateway's token sync
// and the usage flush need. src/store/sql.ts implements it with Kysely over SQLite (default)
// and is written so PostgreSQL can use the same queries.

export interface Account {
  id: string;
  email: string;
  passwordHash: string;
  createdAt: number;
}

export interface Session {
  id: string;
  accountId: string;
  csrfToken: string;
  createdAt: number;
  expiresAt: number;
}

export interface Stack {
  id: string;
  accountId: string;
  name: string;
  description: string | null;
  disabled: boolean;
  createdAt: number;
}

export interface ApiToken {
  id: string;
  accountId: string;
  stackId: string;
  /** First characters of the token: safe to show and log. */
  prefix: string;
  label: string;
  active: boolean;
  createdAt: number;
  lastUsedAt: number | null;
}

/** A token as the gateway's in-memory table needs it. */
export interface TokenForGateway {
  id: string;
  /** SHA-256 of the token. */
  hash: Buffer;
  prefix: string;
  stackId: string;
  /** False when the token is inactive or its stack is disabled. */
  active: boolean;
}

/** One minute of one token and method, as the usage meter flushes it. */
export interface UsageRow {
  tokenId: string;
  method: string;
  /** Start of the minute, epoch ms. */
  minute: number;
  calls: number;
  errors: number;
  bytesIn: number;
  bytesOut: number;
  /** Encoded HDR histogram of latencies in µs (src/metrics/histogram.ts encode()), or null. */
  histogram: string | null;
}

/**
 * Transaction landing counts (docs/landing.md "Figures"), per node or per token: what the
 * landing tracker counts, the worker report carries and the store keeps (landing/counts.ts
 * names it LandingCounts).
 */
export interface LandingAmounts {
  /** Transactions a node accepted (an answer with a signature), each counted once per node it went to. */
  sent: number;
  landed: number;
  /** The blockhash expired before the transaction landed. */
  expired: number;
  /** Landed with an error (the status's `err`). */
  failed: number;
  /** Left tracking without a verdict: beyond routing.landing.maxTracked (the oldest first), or unwatchable after 90 s. */
  untracked: number;
  /** Rebroadcast copies sent (routing.landing.rebroadcastMs). */
  resent: number;
  /** Landed (or failed) transactions by slots from first send to landing: index = slots, the last bucket for 64 or more. */
  slots: number[];
}

/** One hour of one token's, one node's or one token's on one node landing counts, as the landing flush writes it. */
export interface LandingRow extends LandingAmounts {
  /** Start of the hour, epoch ms. */
  hour: number;
  kind: 'token' | 'node' | 'token-node';
  /** The token id, the node id, or tokenNodeKey(token id, node id). */
  key: string;
}

/**
 * The key of a `token-node` landing row. Node ids never hold a "/" (config NODE_ID_RE) and
 * token ids neither (`tok_` and base64url, or `static:` and hex), so no two pairs share a key.
 */
export function tokenNodeKey(tokenId: string, nodeId: string): string {
  return tokenId + '/' + nodeId;
}

/** Landing counts of one token or node summed over a time range. */
export interface LandingTotals extends LandingAmounts {
  key: string;
}

/** Landing counts of one token's transactions on one node summed over a time range. */
export interface TokenNodeLandingTotals extends LandingAmounts {
  tokenId: string;
  node: string;
}

export interface Overview {
  /** RPC and WebSocket calls in the last 24 h. */
  calls24h: number;
  /** Bytes in + out in the last 24 h. */
  bytes24h: number;
  activeTokens: number;
  /** Calls per day for the last 7 days, oldest first (7 entries; day = epoch ms of the UTC day start). */
  daily: { day: number; calls: number }[];
}

export interface MethodStats {
  method: string;
  calls: number;
  errors: number;
  /** Milliseconds; null when no latency was recorded. */
  p50: number | null;
  p99: number | null;
}

export interface Analytics {
  /** Window start and end, epoch ms. */
  from: number;
  to: number;
  methods: MethodStats[];
  /** Calls per bucket (minute for 1 h, hour for 24 h, 6 h for 7 d), oldest first. */
  series: { t: number; calls: number; errors: number }[];
}

export type AnalyticsWindow = '1h' | '24h' | '7d';

export class StoreError extends Error {
  constructor(
    readonly code: 'conflict' | 'not_found' | 'invalid',
    message: string,
  ) {
    super(message);
  }
}

export interface Store {
  /** Runs pending migrations. */
  migrate(): Promise<void>;
  close(): Promise<void>;

  createAccount(email: string, passwordHash: string): Promise<Account>; // StoreError conflict when the email exists
  accountByEmail(email: string): Promise<Account | null>;
  accountById(id: string): Promise<Account | null>;

  createSession(accountId: string, ttlMs: number): Promise<Session>;
  sessionById(id: string): Promise<Session | null>; // null when expired
  deleteSession(id: string): Promise<void>;

  createStack(accountId: string, name: string, description: string | null): Promise<Stack>; // conflict on a duplicate name in the account
  listStacks(accountId: string): Promise<Stack[]>;
  /** Null when the stack does not exist OR belongs to another account. */
  stackById(accountId: string, stackId: string): Promise<Stack | null>;
  stackByName(accountId: string, name: string): Promise<Stack | null>;

  /** Creates a token (≥128 random bits, URL-path safe); the plain token is returned only here. */
  createToken(accountId: string, stackId: string, label: string): Promise<{ token: string; record: ApiToken }>;
  listTokens(accountId: string, stackId: string): Promise<ApiToken[]>;
  /** Null when not found or not the account's. */
  setTokenActive(accountId: string, tokenId: string, active: boolean): Promise<ApiToken | null>;
  /** The token stops authenticating (401) and leaves every list; its past usage still counts for the stack. */
  deleteToken(accountId: string, tokenId: string): Promise<boolean>;
  /** Every token of every account, for the gateway's in-memory table. */
  tokensForGateway(): Promise<TokenForGateway[]>;
  /** Monotonic counter bumped by every token or stack change (cheap polling). */
  tokenVersion(): Promise<number>;
  touchTokens(lastUsed: Map<string, number>): Promise<void>;

  /** Adds usage rows (merging into existing minutes: sums, histograms added), and into their roll-ups. */
  addUsage(rows: UsageRow[]): Promise<void>;
  overview(accountId: string, stackId: string, now: number): Promise<Overview>;
  analytics(accountId: string, stackId: string, window: AnalyticsWindow, now: number, tokenId?: string): Promise<Analytics>;
  /**
   * Deletes minutes older than 24 h (from the start of that hour; the hours already hold them)
   * and usage older than `retentionDays`; also deletes expired sessions.
   */
  compactUsage(now: number, retentionDays: number): Promise<void>;
  /** Adds landing rows into their hours: counts summed, so several instances on one database add up. */
  addLanding(rows: LandingRow[]): Promise<void>;
  /** Landing of these tokens from the start of `sinceMs`'s hour on, one entry per token with any. */
  landingByToken(tokenIds: readonly string[], sinceMs: number): Promise<LandingTotals[]>;
  /** Landing per node from the start of `sinceMs`'s hour on: every token's, so never for one account (the console). */
  landingByNode(sinceMs: number): Promise<LandingTotals[]>;
  /**
   * Landing of these tokens per node they went to, from the start of `sinceMs`'s hour on: one
   * entry per token and node with any, by token id then node id.
   */
  landingByTokenNode(tokenIds: readonly string[], sinceMs: number): Promise<TokenNodeLandingTotals[]>;
  /** Deletes landing hours older than `retentionDays`. */
  compactLanding(now: number, retentionDays: number): Promise<void>;
  /**
   * Calls `cb` soon after any store instance changed tokens or stacks (a hint: the caller still
   * reads tokenVersion); returns the unsubscribe. Only stores that can push offer it
   * (PostgreSQL's LISTEN/NOTIFY); the others are polled.
   */
  onTokensChanged?(cb: () => void): () => void;
}

/**
 * What the SQL store offers beyond `Store` (openStore returns both): the operator CLI and
 * stack management. Kept apart so other `Store` implementations (test doubles) need not grow.
 */
export interface StoreExtras {
  /** Every account, oldest first (operator CLI). */
  listAccounts(): Promise<Account[]>;
  /** Null when not found, deleted, or not the account's. */
  tokenById(accountId: string, tokenId: string): Promise<ApiToken | null>;
  /**
   * Renames, redescribes, disables or re-enables a stack (a disabled stack's tokens answer
   * 403). Null when not the account's; StoreError conflict on a duplicate name.
   */
  updateStack(accountId: string, stackId: string, patch: { name?: string; description?: string | null; disabled?: boolean }): Promise<Stack | null>;
  /** Replaces an account's password hash (password change, demo reset); false when no such account. */
  setPasswordHash(accountId: string, passwordHash: string): Promise<boolean>;
}

export type FullStore = Store & StoreExtras;
