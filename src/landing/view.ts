// The JSON of landing counts that the admin API and the console answer (docs/landing.md
// "Where they show"): the counts, landed % and slots-to-land p50/p90.

import { landedPct, slotPercentile, type LandingCounts } from './counts.js';

/** The counts without their per-slot buckets, with what they give: landed % and slots-to-land p50/p90. */
export interface LandingJson extends Omit<LandingCounts, 'slots'> {
  /** landed / (landed + failed + expired), percent with one decimal; null before any ended. */
  landedPct: number | null;
  /** Slots from the first send to landing; null before any landed. */
  slotsToLand: { p50: number | null; p90: number | null };
}

export function landingJson(c: Readonly<LandingCounts>): LandingJson {
  return {
    sent: c.sent,
    landed: c.landed,
    expired: c.expired,
    failed: c.failed,
    untracked: c.untracked,
    resent: c.resent,
    landedPct: landedPct(c),
    slotsToLand: { p50: slotPercentile(c.slots, 50), p90: slotPercentile(c.slots, 90) },
  };
}

/** id → landingJson, for a map of counts. */
export function landingJsonById(counts: ReadonlyMap<string, Readonly<LandingCounts>>): Record<string, LandingJson> {
  const out: Record<string, LandingJson> = {};
  for (const [id, c] of counts) out[id] = landingJson(c);
  return out;
}
