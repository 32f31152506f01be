// One LISTEN connection per store, opened on the first subscription: PostgreSQL delivers every
// NOTIFY on the channel, from any instance, once the notifying transaction commits. When the
// connection drops it is opened again (backing off up to a few seconds) and subscribers are
// called once on every connect, since notifications sent before it are lost. The token sync
// still polls, so a listener that cannot connect only makes changes slower to arrive.

import pg from 'pg';

const RETRY_MIN_MS = 100;
const RETRY_MAX_MS = 5_000;

export class ChangeListener {
  private readonly subscribers = new Set<() => void>();
  private client: pg.Client | null = null;
  private retryMs = RETRY_MIN_MS;
  private timer: NodeJS.Timeout | null = null;
  private connecting = false;
  private closed = false;

  constructor(
    private readonly config: pg.ClientConfig,
    /** A plain identifier (letters, digits, _): it is written into the LISTEN statement. */
    private readonly channel: string,
  ) {
    if (!/^[a-z_][a-z0-9_]*$/.test(channel)) throw new Error(`listener channel "${channel}": expected a lower-case identifier`);
  }

  /** True while the LISTEN connection is up (tests). */
  get listening(): boolean {
    return this.client !== null;
  }

  subscribe(cb: () => void): () => void {
    this.subscribers.add(cb);
    if (this.client === null && this.timer === null && !this.connecting && !this.closed) void this.connect();
    return () => {
      this.subscribers.delete(cb);
    };
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
    const c = this.client;
    this.client = null;
    if (c !== null) await c.end().catch(() => {});
  }

  private fire(): void {
    for (const cb of this.subscribers) {
      try {
        cb();
      } catch {
        // A subscriber's failure is its own; the others still hear of the change.
      }
    }
  }

  private async connect(): Promise<void> {
    this.connecting = true;
    try {
      await this.connectOnce();
    } finally {
      this.connecting = false;
    }
  }

  private async connectOnce(): Promise<void> {
    const c = new pg.Client(this.config);
    let lost = false;
    const onLost = (): void => {
      if (lost) return;
      lost = true;
      if (this.client === c) this.client = null;
      void c.end().catch(() => {});
      this.retryLater();
    };
    c.on('error', onLost);
    c.on('end', onLost);
    c.on('notification', (n) => {
      if (n.channel === this.channel) this.fire();
    });
    try {
      await c.connect();
      await c.query(`LISTEN ${this.channel}`);
    } catch {
      onLost();
      return;
    }
    if (this.closed || lost) {
      await c.end().catch(() => {});
      return;
    }
    this.client = c;
    this.retryMs = RETRY_MIN_MS;
    // Changes made before LISTEN took effect (or while the connection was down) sent no
    // notification that reached us: one call makes the subscribers look.
    this.fire();
  }

  private retryLater(): void {
    if (this.closed || this.timer !== null) return;
    const wait = this.retryMs;
    this.retryMs = Math.min(this.retryMs * 2, RETRY_MAX_MS);
    this.timer = setTimeout(() => {
      this.timer = null;
      if (!this.closed) void this.connect();
    }, wait);
    this.timer.unref();
  }
}
