// Metrics whose samples are computed at scrape time from state the gateway keeps anyway
// (shared counters, node views): nothing is recorded per request for them.

import type { Metric } from 'prom-client';

export type Labels = Record<string, string>;
export interface Sample {
  labels: Labels;
  value: number;
  metricName?: string;
}

/** A metric whose samples are computed at scrape time (prom-client calls `get()`). */
export function computed(name: string, help: string, type: 'counter' | 'gauge' | 'histogram', samples: () => Sample[]): Metric {
  const m = {
    name,
    help,
    type,
    aggregator: 'sum',
    get: async () => ({ name, help, type, aggregator: 'sum', values: samples() }),
    reset: () => {},
  };
  return m as unknown as Metric;
}
