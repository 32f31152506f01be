// How the control plane's store writers run (usage/flush.ts, landing/flush.ts): a write every
// interval and a compaction every so often, one job at a time and in order (a write never
// overlaps another, so what a failed write kept is the only pending state), and a stop that
// clears the timers and writes one last time.

import type { Logger } from '../log.js';

/** What a store flush (usage, landing) is started with. */
export interface StoreFlushOptions {
  log: Logger;
  /** Default 5000. */
  intervalMs?: number;
  /** Default 10 minutes; 0 = never compact. */
  compactEveryMs?: number;
  /** Days kept (config `store.retentionDays`). Default 30. */
  retentionDays?: number;
  /** Rows kept for retry after failed writes, at most (each flush has its default). */
  maxPendingRows?: number;
  /** Wall clock (tests). */
  now?: () => number;
}

/** A running store flush. */
export interface StoreFlush extends BackgroundWrites {
  /** Rows waiting for a retry (after failed writes). */
  readonly pendingRows: number;
}

export interface BackgroundWrites {
  /** Drains and writes now (also what the timer does); resolves when written or kept for retry. */
  flush(): Promise<void>;
  /** Compacts now (also what the slow timer does). */
  compact(): Promise<void>;
  /** Stops the timers and writes one last time, then logs what could not be written. */
  stop(): Promise<void>;
}

/** What a store flush does; startStoreFlush runs it. */
export interface StoreFlushJobs {
  /** What the flush writes, in its log lines ('usage', 'landing'). */
  what: string;
  /** Drains and writes, keeping what failed for the next write (never throws). */
  write(): Promise<void>;
  /** Deletes what the store keeps beyond `retentionDays` as of `nowMs`. */
  compact(nowMs: number, retentionDays: number): Promise<void>;
  /** Rows kept for a retry. */
  pendingRows(): number;
}

/**
 * Runs `jobs` on `opts`' intervals (defaults: a write every 5 s, a compaction every 10 minutes,
 * 30 days kept): serial, a failed compaction logged and tried again next time, and a stop that
 * writes once more and logs what could not be written.
 */
export function startStoreFlush(opts: StoreFlushOptions, jobs: StoreFlushJobs): StoreFlush {
  const log = opts.log;
  const retentionDays = opts.retentionDays ?? 30;
  const now = opts.now ?? Date.now;
  let stopped = false;
  let chain: Promise<void> = Promise.resolve();
  const serial = (job: () => Promise<void>): Promise<void> => {
    const next = chain.then(job, job);
    chain = next.catch(() => {});
    return next;
  };
  const compactOnce = async (): Promise<void> => {
    try {
      await jobs.compact(now(), retentionDays);
    } catch (err) {
      log.error({ err }, `${jobs.what} compaction failed; retrying next time`);
    }
  };
  const flush = (): Promise<void> => serial(() => jobs.write());
  const compact = (): Promise<void> => serial(compactOnce);

  const timer = setInterval(() => void flush(), opts.intervalMs ?? 5000);
  timer.unref();
  const compactEveryMs = opts.compactEveryMs ?? 600_000;
  let compactTimer: NodeJS.Timeout | null = null;
  if (compactEveryMs > 0) {
    compactTimer = setInterval(() => void compact(), compactEveryMs);
    compactTimer.unref();
    void compact(); // catch up after downtime
  }
  return {
    flush,
    compact,
    async stop() {
      if (stopped) return chain;
      stopped = true;
      clearInterval(timer);
      if (compactTimer !== null) clearInterval(compactTimer);
      await flush();
      const left = jobs.pendingRows();
      if (left > 0) log.error({ rows: left }, `${jobs.what} rows could not be written before exit and are lost`);
    },
    get pendingRows() {
      return jobs.pendingRows();
    },
  };
}
