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
  /** Stops the timers and writes one last time; `afterLast` then says what could not be written. */
  stop(): Promise<void>;
}

export interface BackgroundJobs {
  write(): Promise<void>;
  compact(): Promise<void>;
  intervalMs: number;
  /** 0: never compact. */
  compactEveryMs: number;
  /** After the last write of a stop. */
  afterLast(): void;
}

export function startBackgroundWrites(jobs: BackgroundJobs): BackgroundWrites {
  let stopped = false;
  let chain: Promise<void> = Promise.resolve();
  const serial = (job: () => Promise<void>): Promise<void> => {
    const next = chain.then(job, job);
    chain = next.catch(() => {});
    return next;
  };
  const flush = (): Promise<void> => serial(jobs.write);
  const compact = (): Promise<void> => serial(jobs.compact);

  const timer = setInterval(() => void flush(), jobs.intervalMs);
  timer.unref();
  let compactTimer: NodeJS.Timeout | null = null;
  if (jobs.compactEveryMs > 0) {
    compactTimer = setInterval(() => void compact(), jobs.compactEveryMs);
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
      jobs.afterLast();
    },
  };
}
