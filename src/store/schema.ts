// The store's tables as the queries see them (migrations.ts creates them). Numbers may come
// back as strings from PostgreSQL: coerce.

import type { LandingAmounts, LandingRow } from './types.js';

export interface AccountsTable {
  id: string;
  /** Lower-cased. */
  email: string;
  password_hash: string;
  created_at: number;
}

export interface SessionsTable {
  /** SHA-256 (hex) of the session id the cookie holds: a leaked database holds no live session. */
  id: string;
  account_id: string;
  csrf_token: string;
  created_at: number;
  expires_at: number;
}

export interface StacksTable {
  id: string;
  account_id: string;
  name: string;
  description: string | null;
  disabled: number;
  created_at: number;
}

export interface ApiTokensTable {
  id: string;
  account_id: string;
  stack_id: string;
  /** SHA-256 (hex) of the token; the token itself is never stored. */
  hash: string;
  prefix: string;
  label: string;
  active: number;
  created_at: number;
  last_used_at: number | null;
  /** Deleted tokens stay (their usage still counts for the stack) but never authenticate again. */
  deleted_at: number | null;
}

export interface MetaTable {
  key: string;
  value: number;
}

/**
 * Usage of one token and method over one span (usage_minute, usage_hour, usage_6h); `start_ms`
 * is the span's start. Minutes are what the usage flush writes; the longer spans are roll-ups
 * of them kept as they are written (docs/accounts.md "Accounts, tokens and the console").
 */
export interface UsageTable {
  token_id: string;
  method: string;
  start_ms: number;
  calls: number;
  errors: number;
  bytes_in: number;
  bytes_out: number;
  /** Encoded HDR histogram of latencies in µs, null when none. */
  histogram: string | null;
}

/** The same roll-ups summed over a stack's tokens (config tokens belong to no stack and have none). */
export interface StackUsageTable extends Omit<UsageTable, 'token_id'> {
  stack_id: string;
}

/**
 * Transaction landing of one token, one node or one token on one node over one hour
 * (docs/landing.md "Several instances"): every writer adds into the counts (`x = x + excluded.x`), so instances sharing
 * one database add up.
 */
export interface LandingHourTable extends Omit<LandingAmounts, 'slots'> {
  kind: LandingRow['kind'];
  key: string;
  start_ms: number;
}

/** Slots-to-land of one landing_hour key over one hour: one row per slot bucket with a count. */
export interface LandingSlotsHourTable {
  kind: LandingRow['kind'];
  key: string;
  start_ms: number;
  bucket: number;
  count: number;
}

export interface Database {
  accounts: AccountsTable;
  sessions: SessionsTable;
  stacks: StacksTable;
  api_tokens: ApiTokensTable;
  meta: MetaTable;
  usage_minute: UsageTable;
  usage_hour: UsageTable;
  usage_6h: UsageTable;
  stack_usage_minute: StackUsageTable;
  stack_usage_hour: StackUsageTable;
  stack_usage_6h: StackUsageTable;
  stack_usage_day: StackUsageTable;
  landing_hour: LandingHourTable;
  landing_slots_hour: LandingSlotsHourTable;
}

export const TOKEN_VERSION_KEY = 'token_version';
/**
 * Usage before this time (epoch ms) was deleted by retention; roll-up rows that straddle it
 * still hold some of that usage, so reads start here (sql/usage-spans.ts).
 */
export const USAGE_HORIZON_KEY = 'usage_horizon';
