// What transaction tracking counts (docs/landing.md "Figures"), as plain data that crosses from
// a data-plane worker to the control plane in the once-a-second report and is added up there:
// per node and per token, the transactions sent, landed, expired, failed and dropped from
// tracking, the resends, and slots-to-land as counts per slot (exact up to 63, then one bucket).

import type { LandingAmounts } from '../store/types.js';
import type { RankSamples } from './ranking.js';

/** Slots-to-land buckets: 0…63 exactly, the last for 64 or more. */
export const SLOT_BUCKETS = 65;

export type LandingCounts = LandingAmounts;

/** Since the last report: node id → counts, token id → counts. */
export interface LandingDelta {
  nodes: Record<string, LandingCounts>;
  tokens: Record<string, LandingCounts>;
  /**
   * Token id → node id → counts: what each token's transactions did on each node. The
   * console's per-node figures are an account's own, summed over its tokens; `nodes` is
   * every account's (the admin API's).
   */
  tokenNodes?: Record<string, Record<string, LandingCounts>>;
  /** Node id → samples for the send ranking (ranking.ts); not stored. */
  rank?: Record<string, RankSamples>;
}

export function emptyCounts(): LandingCounts {
  return { sent: 0, landed: 0, expired: 0, failed: 0, untracked: 0, resent: 0, slots: new Array<number>(SLOT_BUCKETS).fill(0) };
}

export function addCounts(into: LandingCounts, from: LandingCounts): void {
  into.sent += from.sent;
  into.landed += from.landed;
  into.expired += from.expired;
  into.failed += from.failed;
  into.untracked += from.untracked;
  into.resent += from.resent;
  const n = Math.min(into.slots.length, from.slots.length);
  for (let i = 0; i < n; i++) into.slots[i]! += from.slots[i]!;
}

/** The bucket a transaction that took `slots` slots to land counts in. */
export function slotBucket(slots: number): number {
  return slots <= 0 ? 0 : slots >= SLOT_BUCKETS - 1 ? SLOT_BUCKETS - 1 : Math.floor(slots);
}

/** The p-th percentile (0–100) of slots-to-land, null when nothing landed; the last bucket reads as 64. */
export function slotPercentile(slots: readonly number[], p: number): number | null {
  let total = 0;
  for (const c of slots) total += c;
  if (total === 0) return null;
  const rank = Math.max(1, Math.ceil((p / 100) * total));
  let seen = 0;
  for (let i = 0; i < slots.length; i++) {
    seen += slots[i]!;
    if (seen >= rank) return i;
  }
  return slots.length - 1;
}

/** Landed share in percent (one decimal) of what ended (landed, failed or expired); null before anything ended. */
export function landedPct(c: LandingCounts): number | null {
  const ended = c.landed + c.failed + c.expired;
  return ended === 0 ? null : Math.round((1000 * c.landed) / ended) / 10;
}
