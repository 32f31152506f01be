// The connections to the one Redis every instance shares (docs/routing.md "Shared limits across instances
// (Redis)"), and whether it is usable. No request ever waits on Redis: commands are refused at
// once while the connection is down (no offline queue) and time out after `COMMAND_TIMEOUT_MS`,
// while ioredis reconnects in the background. Up and down are logged once per episode.

import { randomBytes } from 'node:crypto';
import { Redis, type RedisOptions } from 'ioredis';
import type { Logger } from '../log.js';

/** A sync slower than this counts as failed: limits are local meanwhile. */
const COMMAND_TIMEOUT_MS = 1000;
const CONNECT_TIMEOUT_MS = 1000;
/** Reconnect backoff: 100 ms more per attempt, at most one attempt a second. */
const RECONNECT_MAX_MS = 1000;

function options(): RedisOptions {
  return {
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    commandTimeout: COMMAND_TIMEOUT_MS,
    connectTimeout: CONNECT_TIMEOUT_MS,
    retryStrategy: (times) => Math.min(times * 100, RECONNECT_MAX_MS),
    lazyConnect: false,
  };
}

export class RedisLink {
  readonly client: Redis;
  /** Identifies this instance on the channels (its own messages are ignored). */
  readonly instanceId = randomBytes(8).toString('hex');
  /** Syncs that failed since the start. */
  syncFailures = 0;
  private state: 'starting' | 'up' | 'down' = 'starting';
  private readonly upListeners: (() => void)[] = [];
  private closed = false;

  constructor(
    readonly url: string,
    private readonly log: Logger,
  ) {
    this.client = new Redis(url, options());
    this.client.on('ready', () => this.markUp());
    this.client.on('error', (err: Error) => this.markDown(err.message));
    this.client.on('close', () => this.markDown('connection closed'));
  }

  /** True while the connection is ready and the last sync succeeded. */
  get up(): boolean {
    return this.state === 'up';
  }

  /** Called each time Redis becomes usable again (not at the first connection). */
  onBackUp(fn: () => void): void {
    this.upListeners.push(fn);
  }

  /**
   * A second connection to the same Redis, for subscriptions: its SUBSCRIBE waits for a
   * connection however long Redis stays away (one command, so bounded), and ioredis renews it
   * on every reconnection.
   */
  subscriber(): Redis {
    const sub = new Redis(this.url, { ...options(), enableOfflineQueue: true, maxRetriesPerRequest: null, commandTimeout: undefined });
    // Its failures are the main connection's to report.
    sub.on('error', () => {});
    return sub;
  }

  syncSucceeded(): void {
    this.markUp();
  }

  syncFailed(reason: string): void {
    this.syncFailures++;
    this.markDown(reason);
  }

  async close(): Promise<void> {
    this.closed = true;
    this.client.disconnect();
  }

  private markUp(): void {
    if (this.closed || this.state === 'up' || this.client.status !== 'ready') return;
    const was = this.state;
    this.state = 'up';
    if (was === 'starting') this.log.info({ redis: redacted(this.url) }, 'redis connected: limits are shared across instances');
    else {
      this.log.info({ redis: redacted(this.url) }, 'redis reachable again: limits are shared across instances again');
      for (const fn of this.upListeners) fn();
    }
  }

  private markDown(reason: string): void {
    if (this.closed || this.state === 'down') return;
    this.state = 'down';
    this.log.warn({ redis: redacted(this.url), reason }, 'redis unreachable: limits are enforced per instance until it is back');
  }
}

/** The URL without its password, for logs. */
function redacted(url: string): string {
  try {
    const u = new URL(url);
    if (u.password !== '') u.password = '***';
    return u.toString();
  } catch {
    return 'redis';
  }
}
