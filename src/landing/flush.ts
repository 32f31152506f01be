// Moves landing figures into the store in the background, as the usage flush does for usage
// (usage/flush.ts): every interval the figures' pending rows are drained and added to the
// store. A failed write keeps the rows (merged by hour, kind and key, so a long outage holds
// one row per key and hour, not one per interval) and retries them next time, up to
// `maxPendingRows`, beyond which the oldest hours are dropped with a log line. `stop()` writes
// what is left, so a graceful stop loses nothing. Every `compactEveryMs`, hours older than
// `retentionDays` are deleted.

import type { LandingRow, Store } from '../store/types.js';
import { startStoreFlush, type StoreFlush, type StoreFlushOptions } from '../usage/background-writes.js';
import { mergeRows, type LandingFigures } from './figures.js';

export type LandingFlushOptions = StoreFlushOptions;
export type LandingFlush = StoreFlush;

type LandingStore = Pick<Store, 'addLanding' | 'compactLanding'>;

export function startLandingFlush(figures: LandingFigures, store: LandingStore, opts: LandingFlushOptions): LandingFlush {
  const log = opts.log;
  const maxPending = Math.max(1, opts.maxPendingRows ?? 50_000);

  let pending = new Map<string, LandingRow>();
  let failing = false;

  const writeOnce = async (): Promise<void> => {
    mergeRows(pending, figures.drain());
    if (pending.size === 0) return;
    const batch = pending;
    try {
      await store.addLanding([...batch.values()]);
      pending = new Map(); // nothing else ran meanwhile: writes are serial
      if (failing) log.info({ rows: batch.size }, 'landing store writes resumed');
      failing = false;
    } catch (err) {
      if (!failing) log.error({ err, rows: batch.size }, 'landing flush failed: keeping the rows in memory, retrying next interval');
      failing = true;
      if (pending.size > maxPending) {
        // Oldest hours first.
        const rows = [...pending.values()].sort((a, b) => a.hour - b.hour);
        const dropped = rows.length - maxPending;
        pending = new Map();
        mergeRows(pending, rows.slice(dropped));
        log.error({ dropped, kept: maxPending }, 'landing store unreachable for long: oldest landing rows dropped');
      }
    }
  };

  return startStoreFlush(opts, {
    what: 'landing',
    write: writeOnce,
    compact: (nowMs, days) => store.compactLanding(nowMs, days),
    pendingRows: () => pending.size,
  });
}
