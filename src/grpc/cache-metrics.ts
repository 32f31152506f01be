// Prometheus series of the account cache (docs/account-cache.md "Seen"), on the gateway's
// registry: the data planes' counts (hits, misses by reason, update-to-visible delays) arrive
// in their reports; held keys, bytes and the feed's figures are read at scrape time.

import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import { MISS_REASONS, type CacheCounts } from '../cache/account-cache.js';

export interface CacheGauges {
  keys(): number;
  bytes(): number;
  evictions(): number;
  unholds(): number;
}

export class CacheMetrics {
  private readonly hits: Counter;
  private readonly misses: Counter<'reason'>;
  private readonly visible: Histogram;
  hitsTotal = 0;
  readonly missesTotal: number[] = MISS_REASONS.map(() => 0);

  constructor(registry: Registry | null, gauges: CacheGauges) {
    const registers = registry === null ? [] : [registry];
    this.hits = new Counter({ name: 'jumpgate_cache_hits_total', help: 'Account reads answered from memory', registers });
    this.misses = new Counter({ name: 'jumpgate_cache_misses_total', help: 'Account reads sent to a node, by why', labelNames: ['reason'], registers });
    this.visible = new Histogram({
      name: 'jumpgate_cache_update_visible_seconds',
      help: 'From the first arrival of the processed status that makes account writes answerable to the data plane answering with them',
      buckets: [0.0001, 0.00025, 0.0005, 0.001, 0.002, 0.005, 0.01, 0.05],
      registers,
    });
    new Gauge({
      name: 'jumpgate_cache_keys',
      help: 'Keys held',
      registers,
      collect: function () {
        this.set(gauges.keys());
      },
    });
    new Gauge({
      name: 'jumpgate_cache_bytes',
      help: 'Bytes of account states kept (one replica)',
      registers,
      collect: function () {
        this.set(gauges.bytes());
      },
    });
    new Gauge({
      name: 'jumpgate_cache_evictions',
      help: 'Keys dropped (idle or over cache.accounts.maxBytes) since start',
      registers,
      collect: function () {
        this.set(gauges.evictions());
      },
    });
    new Gauge({
      name: 'jumpgate_cache_unheld_marks',
      help: 'Keys marked unheld by a source gap since start (read again)',
      registers,
      collect: function () {
        this.set(gauges.unholds());
      },
    });
  }

  add(c: CacheCounts): void {
    if (c.hits > 0) this.hits.inc(c.hits);
    this.hitsTotal += c.hits;
    c.misses.forEach((n, i) => {
      if (n === 0) return;
      this.misses.labels(MISS_REASONS[i]!).inc(n);
      this.missesTotal[i]! += n;
    });
    for (const us of c.visibleUs) this.visible.observe(us / 1e6);
  }
}
