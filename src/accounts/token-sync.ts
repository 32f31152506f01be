// Keeps the gateway's in-memory token table in step with the store: polls the store's token
// version (one indexed row, cheap) every `intervalMs`; at start and whenever it moved, loads
// every token and swaps the table's contents in one synchronous step, so a change (create,
// deactivate, delete, stack disabled) reaches the hot path within about one interval, or at
// once when the store pushes changes (onTokensChanged: PostgreSQL).
// Static config tokens stay in the table: the first load puts them next to the store's;
// afterwards only store entries are touched (a config reload manages the static ones).

import type { Config } from '../config/schema.js';
import { staticTokenRecord, type TokenRecord, type TokenTable } from '../gateway/token-table.js';
import type { Logger } from '../log.js';
import type { Store, TokenForGateway } from '../store/types.js';
import { hashToken } from '../token-format.js';

export interface TokenSyncOptions {
  log: Logger;
  /** Default 500. */
  intervalMs?: number;
}

export interface TokenSync {
  /**
   * Reloads now if the version moved (or on the first call); the table is current when it
   * resolves. A console write waits for this, then for the data planes (read your writes).
   */
  syncNow(): Promise<void>;
  /** Someone says tokens changed (a store notification, another instance through Redis): one sync soon, however many say so. */
  changed(): void;
  stop(): void;
  /** The store version the table reflects; -1 before the first load. */
  readonly version: number;
}

function recordOf(t: TokenForGateway): TokenRecord {
  // `stack` is the store's stack id (names can change; ids cannot).
  return { id: t.id, prefix: t.prefix, stack: t.stackId, active: t.active };
}

export function startTokenSync(store: Store, table: TokenTable, staticTokens: Config['tokens'], opts: TokenSyncOptions): TokenSync {
  const log = opts.log;
  const intervalMs = opts.intervalMs ?? 500;
  let version = -1;
  /** Store entries now in the table, by hash (base64), with the record object the table holds. */
  let mine = new Map<string, { t: TokenForGateway; record: TokenRecord }>();
  let running: Promise<void> | null = null;
  let failing = false;
  let stopped = false;

  const apply = (tokens: TokenForGateway[]): void => {
    const next = new Map<string, { t: TokenForGateway; record: TokenRecord }>();
    for (const t of tokens) {
      const key = t.hash.toString('base64');
      const o = mine.get(key);
      // Same token: flip `active` on the record object already in use (connections hold it).
      if (version !== -1 && o !== undefined && o.t.id === t.id && o.t.stackId === t.stackId) {
        table.setActive(o.record, t.active);
        next.set(key, { t, record: o.record });
      } else next.set(key, { t, record: recordOf(t) });
    }
    if (version === -1) {
      table.replaceAll([
        ...staticTokens.map((s) => ({ hash: hashToken(s.token), record: staticTokenRecord(s.token, s.stack, s.active) })),
        ...[...next.values()].map((e) => ({ hash: e.t.hash, record: e.record })),
      ]);
    } else {
      for (const [key, e] of mine) if (!next.has(key)) table.removeHashed(e.t.hash);
      for (const [key, e] of next) if (mine.get(key)?.record !== e.record) table.addHashed(e.t.hash, e.record);
    }
    mine = next;
  };

  const syncOnce = async (): Promise<void> => {
    try {
      // Version first: a change landing between the two reads shows up as a newer version next time.
      const v = await store.tokenVersion();
      if (v === version) return;
      const tokens = await store.tokensForGateway();
      if (stopped) return;
      apply(tokens);
      if (version !== -1 || failing) log.debug({ version: v, tokens: tokens.length }, 'token table synced from the store');
      version = v;
      if (failing) log.info('token store reachable again');
      failing = false;
    } catch (err) {
      if (!failing) log.error({ err }, 'token sync failed: keeping the current token table, retrying');
      failing = true;
    }
  };

  const syncNow = (): Promise<void> => {
    // One sync at a time; a call during a sync waits for it and then runs its own.
    const run = (running ?? Promise.resolve()).then(syncOnce);
    running = run;
    void run.finally(() => {
      if (running === run) running = null;
    });
    return run;
  };

  const timer = setInterval(() => {
    if (running === null) void syncNow();
  }, intervalMs);
  timer.unref();
  // A store that pushes changes (PostgreSQL's LISTEN/NOTIFY) makes the sync look at once;
  // polling stays, for changes whose notification was lost. A burst of notifications queues
  // one sync behind the running one, not one each: that sync reads the version after all of them.
  let changeQueued = false;
  const changed = (): void => {
    if (stopped || changeQueued) return;
    changeQueued = true;
    void (running ?? Promise.resolve()).then(() => {
      changeQueued = false;
      return syncNow();
    });
  };
  const unsubscribe = store.onTokensChanged?.(changed);

  return {
    syncNow,
    changed,
    stop() {
      stopped = true;
      clearInterval(timer);
      unsubscribe?.();
    },
    get version() {
      return version;
    },
  };
}
