// The console's usage answers computed the naive way, straight from the usage rows that were
// written (what the store answered before it kept roll-ups): every row whose minute lies in
// the window, summed in JS, histograms merged with the HDR library. The roll-up tests compare
// the store's answers with these, number for number.

import { LatencyHistogram } from '../../../src/metrics/histogram.js';
import type { Analytics, AnalyticsWindow, MethodStats, Overview, UsageRow } from '../../../src/store/types.js';

export const MINUTE_MS = 60_000;
export const HOUR_MS = 3_600_000;
export const DAY_MS = 86_400_000;

const floorTo = (t: number, unit: number): number => Math.floor(t / unit) * unit;

const WINDOWS: Record<AnalyticsWindow, { bucket: number; count: number }> = {
  '1h': { bucket: MINUTE_MS, count: 60 },
  '24h': { bucket: HOUR_MS, count: 24 },
  '7d': { bucket: 6 * HOUR_MS, count: 28 },
};

/** Rows of `tokens` whose minute lies in [from, now] and at or after `keptFrom` (what retention kept). */
function* rowsIn(rows: readonly UsageRow[], tokens: ReadonlySet<string>, from: number, now: number, keptFrom: number): Generator<UsageRow & { start: number }> {
  for (const r of rows) {
    const start = floorTo(r.minute, MINUTE_MS);
    if (tokens.has(r.tokenId) && start >= from && start <= now && start >= keptFrom) yield { ...r, start };
  }
}

export function referenceOverview(rows: readonly UsageRow[], tokens: ReadonlySet<string>, activeTokens: number, now: number, keptFrom = 0): Overview {
  const firstDay = floorTo(now, DAY_MS) - 6 * DAY_MS;
  const daily = Array.from({ length: 7 }, (_, i) => ({ day: firstDay + i * DAY_MS, calls: 0 }));
  let calls24h = 0;
  let bytes24h = 0;
  for (const r of rowsIn(rows, tokens, Math.min(firstDay, now - DAY_MS), now, keptFrom)) {
    if (r.start >= now - DAY_MS) {
      calls24h += r.calls;
      bytes24h += r.bytesIn + r.bytesOut;
    }
    const i = Math.floor((r.start - firstDay) / DAY_MS);
    if (i >= 0 && i < 7) daily[i]!.calls += r.calls;
  }
  return { calls24h, bytes24h, activeTokens, daily };
}

export function referenceAnalytics(rows: readonly UsageRow[], tokens: ReadonlySet<string>, window: AnalyticsWindow, now: number, keptFrom = 0): Analytics {
  const w = WINDOWS[window];
  const from = floorTo(now, w.bucket) - (w.count - 1) * w.bucket;
  const series = Array.from({ length: w.count }, (_, i) => ({ t: from + i * w.bucket, calls: 0, errors: 0 }));
  const methods = new Map<string, { calls: number; errors: number; hist: LatencyHistogram | null }>();
  for (const r of rowsIn(rows, tokens, from, now, keptFrom)) {
    const s = series[Math.floor((r.start - from) / w.bucket)]!;
    s.calls += r.calls;
    s.errors += r.errors;
    let m = methods.get(r.method);
    if (m === undefined) methods.set(r.method, (m = { calls: 0, errors: 0, hist: null }));
    m.calls += r.calls;
    m.errors += r.errors;
    if (r.histogram !== null) {
      const h = LatencyHistogram.decode(r.histogram);
      if (m.hist === null) m.hist = h;
      else m.hist.add(h);
    }
  }
  const stats: MethodStats[] = [];
  for (const [method, m] of methods) {
    // Bytes-only rows ('(batch)', WS notifications) are not methods.
    if (m.calls === 0 && m.errors === 0) continue;
    const timed = m.hist !== null && m.hist.count > 0;
    stats.push({
      method,
      calls: m.calls,
      errors: m.errors,
      p50: timed ? m.hist!.percentile(50) / 1000 : null,
      p99: timed ? m.hist!.percentile(99) / 1000 : null,
    });
  }
  stats.sort((a, b) => b.calls - a.calls || b.errors - a.errors || (a.method < b.method ? -1 : a.method > b.method ? 1 : 0));
  return { from, to: now, methods: stats, series };
}
