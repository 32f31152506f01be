// Moves usage from the in-memory meter into the store in the background: every interval the
// meter is drained, its cells stamped with the current minute and added to the store. A failed
// write keeps the rows in memory and retries them with the next flush (bounded: the oldest are
// dropped, with a log line, beyond `maxPendingRows`). `stop()` writes what is left, so a
// graceful shutdown loses no counts. Also, every `compactEveryMs`, minutes older than 24 h are
// deleted (the hour roll-ups already hold them) and usage older than `retentionDays` deleted per span; and tokens seen in a flush get
// their last-used time (the flush time: the hot path reads no clock for it).

import type { Store, UsageRow } from '../store/types.js';
import { startStoreFlush, type StoreFlush, type StoreFlushOptions } from './background-writes.js';
import type { UsageMeter } from './meter.js';

export type UsageFlushOptions = StoreFlushOptions;
export type UsageFlush = StoreFlush;

const MINUTE_MS = 60_000;

export function startUsageFlush(meter: UsageMeter, store: Store, opts: UsageFlushOptions): UsageFlush {
  const log = opts.log;
  const maxPending = opts.maxPendingRows ?? 100_000;
  const now = opts.now ?? Date.now;

  let pending: UsageRow[] = [];
  let touched = new Map<string, number>();
  let failing = false;

  const writeOnce = async (): Promise<void> => {
    const t = now();
    const minute = Math.floor(t / MINUTE_MS) * MINUTE_MS;
    for (const c of meter.drain()) {
      pending.push({
        tokenId: c.tokenId,
        method: c.method,
        minute,
        calls: c.calls,
        errors: c.errors,
        bytesIn: c.bytesIn,
        bytesOut: c.bytesOut,
        histogram: c.histogram,
      });
      if (c.calls > 0) touched.set(c.tokenId, t);
    }
    if (pending.length > 0) {
      const batch = pending;
      try {
        await store.addUsage(batch);
        pending = []; // nothing else ran meanwhile: writes are serial
        if (failing) log.info({ rows: batch.length }, 'usage store writes resumed');
        failing = false;
      } catch (err) {
        if (!failing) log.error({ err, rows: batch.length }, 'usage flush failed: keeping the rows in memory, retrying next interval');
        failing = true;
        if (pending.length > maxPending) {
          const dropped = pending.length - maxPending;
          pending = pending.slice(dropped);
          log.error({ dropped, kept: maxPending }, 'usage store unreachable for long: oldest usage rows dropped');
        }
        return;
      }
    }
    if (touched.size > 0) {
      const batch = touched;
      touched = new Map();
      try {
        await store.touchTokens(batch);
      } catch (err) {
        // Keep the newest time per token for the next try.
        for (const [id, at] of batch) if ((touched.get(id) ?? 0) < at) touched.set(id, at);
        log.warn({ err }, 'updating token last-used times failed; retrying next interval');
      }
    }
  };

  return startStoreFlush(opts, {
    what: 'usage',
    write: writeOnce,
    compact: (nowMs, days) => store.compactUsage(nowMs, days),
    pendingRows: () => pending.length,
  });
}
