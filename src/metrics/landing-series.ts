// Prometheus series of transaction landing (docs/landing.md "Where they show"): this instance's
// counts per node since start, read at scrape time from the landing figures. The figures live
// above this layer, so they come in as a view of plain counts.

import type { Metric } from 'prom-client';
import { computed, type Sample } from './computed.js';

/** What the series read of one node's landing counts (landing/counts.ts LandingCounts). */
export interface LandingSeriesCounts {
  readonly sent: number;
  readonly landed: number;
  readonly expired: number;
  readonly failed: number;
  readonly untracked: number;
  readonly resent: number;
  /** Slots-to-land counts per slot; the last bucket holds 64 or more. */
  readonly slots: readonly number[];
}

export const LANDING_OUTCOMES = ['sent', 'landed', 'expired', 'failed', 'untracked', 'resent'] as const;
/** Histogram bounds in slots (`le`); above the last, +Inf. */
export const SLOTS_TO_LAND_BOUNDS = [0, 1, 2, 3, 4, 6, 8, 12, 16, 32, 64] as const;

/**
 * Cumulative buckets from the per-slot counts. The last count is "64 or more": it falls in +Inf
 * only, and `_sum` reads it as 64.
 */
function slotSamples(name: string, node: string, slots: readonly number[], out: Sample[]): void {
  const exact = slots.length - 1;
  let cum = 0;
  let sum = 0;
  let i = 0;
  for (const bound of SLOTS_TO_LAND_BOUNDS) {
    for (; i < exact && i <= bound; i++) {
      cum += slots[i]!;
      sum += slots[i]! * i;
    }
    out.push({ metricName: name + '_bucket', labels: { node, le: String(bound) }, value: cum });
  }
  for (; i <= exact; i++) {
    cum += slots[i]!;
    sum += slots[i]! * i;
  }
  out.push({ metricName: name + '_bucket', labels: { node, le: '+Inf' }, value: cum });
  out.push({ metricName: name + '_sum', labels: { node }, value: sum });
  out.push({ metricName: name + '_count', labels: { node }, value: cum });
}

export function landingSeries(nodes: () => ReadonlyMap<string, LandingSeriesCounts>): Metric[] {
  return [
    computed(
      'jumpgate_landing_transactions_total',
      'Transactions tracked until they landed, failed or expired, by node and outcome (docs/landing.md "Figures")',
      'counter',
      () => {
        const out: Sample[] = [];
        for (const [node, c] of nodes()) for (const outcome of LANDING_OUTCOMES) out.push({ labels: { node, outcome }, value: c[outcome] });
        return out;
      },
    ),
    computed('jumpgate_landing_slots_to_land', 'Slots from the first send to landing, of landed and failed transactions, by node', 'histogram', () => {
      const out: Sample[] = [];
      for (const [node, c] of nodes()) slotSamples('jumpgate_landing_slots_to_land', node, c.slots, out);
      return out;
    }),
  ];
}
