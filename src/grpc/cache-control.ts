// The account cache's control-plane side, assembled (docs/account-cache.md): this plane's store
// replica, the key directory, the feed on the gRPC hub and the Prometheus series. The data
// planes' counts come in through `counts`; the feed's events go out through `publish`.

import type { Registry } from 'prom-client';
import { MISS_REASONS, type CacheCounts } from '../cache/account-cache.js';
import { AccountStore } from '../cache/account-store.js';
import type { CacheEvent } from '../cache/cache-events.js';
import { KeyDirectory } from '../cache/key-directory.js';
import type { Config } from '../config/schema.js';
import type { Logger } from '../log.js';
import type { UpstreamNode } from '../upstream/node.js';
import { CacheFeed } from './cache-feed.js';
import { CacheMetrics } from './cache-metrics.js';
import type { GrpcHub } from './hub.js';

export interface AccountCacheControl {
  /** A data plane's counts since its last report. */
  counts(c: CacheCounts): void;
  /** `GET /admin/cache`. */
  view(): CacheView;
  reconfigure(next: Config): void;
  close(): void;
}

export interface CacheView {
  enabled: true;
  keys: number;
  bytes: number;
  maxBytes: number;
  maxKeys: number;
  slots: { processed: number; confirmed: number; finalized: number };
  hits: number;
  misses: Record<string, number>;
  /** Hits over all account reads since start (0 to 1). */
  hitShare: number;
  feed: CacheFeed['figures'];
}

export function startAccountCacheControl(
  config: Config,
  parts: { hub: GrpcHub; nodes: () => readonly UpstreamNode[]; publish: (events: CacheEvent[]) => void; registry: Registry | null; log: Logger },
): AccountCacheControl {
  let c = config.cache.accounts;
  const store = new AccountStore();
  const directory = new KeyDirectory({ hotAfterReads: c.hotAfterReads, idleMs: c.idleMs, maxKeys: c.maxKeys });
  const feed = new CacheFeed({
    hub: parts.hub,
    store,
    directory,
    nodes: parts.nodes,
    maxBytes: c.maxBytes,
    maxAccountBytes: c.maxAccountBytes,
    publish: parts.publish,
    log: parts.log,
  });
  const metrics = new CacheMetrics(parts.registry, {
    keys: () => store.keys,
    bytes: () => store.bytes,
    evictions: () => feed.figures.evictions,
    unholds: () => feed.figures.unholds,
  });
  return {
    counts(counts) {
      metrics.add(counts);
      if (counts.reads.size > 0) feed.reads(counts.reads);
    },
    view() {
      const misses: Record<string, number> = {};
      let missed = 0;
      MISS_REASONS.forEach((r, i) => {
        misses[r] = metrics.missesTotal[i]!;
        missed += metrics.missesTotal[i]!;
      });
      const total = metrics.hitsTotal + missed;
      return {
        enabled: true,
        keys: store.keys,
        bytes: store.bytes,
        maxBytes: c.maxBytes,
        maxKeys: c.maxKeys,
        slots: { processed: store.tip(0), confirmed: store.tip(1), finalized: store.tip(2) },
        hits: metrics.hitsTotal,
        misses,
        hitShare: total === 0 ? 0 : metrics.hitsTotal / total,
        feed: { ...feed.figures },
      };
    },
    reconfigure(next) {
      c = next.cache.accounts;
      directory.reconfigure({ hotAfterReads: c.hotAfterReads, idleMs: c.idleMs, maxKeys: c.maxKeys });
      feed.setLimits(c.maxBytes, c.maxAccountBytes);
    },
    close() {
      feed.close();
    },
  };
}
