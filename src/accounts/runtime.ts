// The accounts side of a running gateway, in one piece for startGateway: the store (opened
// from `store.url` unless one is handed in), the token sync (first load done before this
// resolves, so store tokens work from the first request) and the usage flush. `stop()` is for
// the end of a drain, after in-flight requests have finished: it writes the last usage, then
// closes the store it owns.

import type { Config } from '../config/schema.js';
import type { TokenTable } from '../gateway/token-table.js';
import type { Logger } from '../log.js';
import { openStore } from '../store/open.js';
import type { FullStore } from '../store/types.js';
import { startUsageFlush, type UsageFlush } from '../usage/flush.js';
import type { UsageMeter } from '../usage/meter.js';
import { startTokenSync, type TokenSync } from './token-sync.js';

export interface AccountsRuntime {
  readonly store: FullStore;
  readonly sync: TokenSync;
  readonly flush: UsageFlush;
  /** Final usage flush, timers off, store closed (when it owns it). Idempotent. */
  stop(): Promise<void>;
}

export interface AccountsOptions {
  tokens: TokenTable;
  usage: UsageMeter;
  log: Logger;
  /** Use this store instead of opening `config.store.url`; the caller keeps it (not closed by
   * stop()) unless `ownStore` is set. */
  store?: FullStore;
  /** stop() closes a handed-in store too: the gateway takes over the store it is given, so a
   * drain closes it whoever opened it. A store opened here is always closed. */
  ownStore?: boolean;
  /** Default 500 ms (docs/accounts.md "Accounts, tokens and the console": changes reach the gateway within 1 s). */
  syncIntervalMs?: number;
  /** Default 5000 ms (docs/accounts.md "Accounts, tokens and the console": usage visible within 10 s). */
  flushIntervalMs?: number;
}

export async function startAccounts(config: Config, opts: AccountsOptions): Promise<AccountsRuntime> {
  const owned = opts.store === undefined || opts.ownStore === true;
  const store = opts.store ?? (await openStore(config.store.url));
  const sync = startTokenSync(store, opts.tokens, config.tokens, { log: opts.log, intervalMs: opts.syncIntervalMs ?? 500 });
  await sync.syncNow();
  const flush = startUsageFlush(opts.usage, store, { log: opts.log, intervalMs: opts.flushIntervalMs ?? 5000, retentionDays: config.store.retentionDays });
  let stopping: Promise<void> | null = null;
  return {
    store,
    sync,
    flush,
    stop() {
      stopping ??= (async () => {
        sync.stop();
        await flush.stop();
        if (owned) await store.close();
      })();
      return stopping;
    },
  };
}
