// State shared by every instance of a deployment through one Redis (`redis.url`; docs/routing.md "Shared
// limits across instances (Redis)"): rate-limit consumption and token change events. Started
// by the control plane after the data plane; null when `redis.url` is null (each instance on
// its own, as with one instance).

import type { Config } from '../config/schema.js';
import type { RateLimiter } from '../limits/limiter.js';
import type { Logger } from '../log.js';
import type { GatewayMetrics } from '../metrics/prometheus.js';
import { ConsumptionTally } from '../limits/consumption-tally.js';
import { LimitSync } from './limit-sync.js';
import { RedisLink } from './redis-link.js';
import { TokenEvents } from './token-events.js';

/** Counters' last totals kept per instance, in multiples of `redis.maxKeysPerSync`. */
const SEEN_PER_SYNC_CAP = 8;

export interface SharedStateParts {
  /** The control plane's limiter: inline, the one requests take from; with workers, one over the same shared buffers. */
  limiter: RateLimiter;
  log: Logger;
  metrics: GatewayMetrics;
  /** Another instance changed tokens: sync the token table now. */
  onRemoteTokens(): void;
}

export class SharedState {
  readonly link: RedisLink;
  readonly limits: LimitSync;
  readonly tokens: TokenEvents;

  constructor(config: Config, url: string, parts: SharedStateParts) {
    const r = config.redis;
    const log = parts.log.child({ part: 'redis' });
    this.link = new RedisLink(url, log);
    const tally = new ConsumptionTally(r.maxKeysPerSync);
    this.limits = new LimitSync(
      this.link,
      parts.limiter,
      tally,
      { syncMs: r.syncMs, keyPrefix: r.keyPrefix, maxSeen: SEEN_PER_SYNC_CAP * r.maxKeysPerSync },
      log,
    );
    this.tokens = new TokenEvents(this.link, r.keyPrefix, parts.onRemoteTokens, log);
    const link = this.link;
    parts.metrics.watchRedis({ up: () => link.up, syncFailures: () => link.syncFailures });
  }

  /** Where this instance's limiters add their consumption. */
  get tally(): ConsumptionTally {
    return this.limits.tally;
  }

  async close(): Promise<void> {
    this.limits.stop();
    this.tokens.close();
    await this.link.close();
  }
}

export function startSharedState(config: Config, parts: SharedStateParts): SharedState | null {
  return config.redis.url === null ? null : new SharedState(config, config.redis.url, parts);
}
