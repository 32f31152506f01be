// The accounts side of a running gateway, in one piece for startGateway: the store (opened
// from `store.url` unless one is handed in), the token sync (first load done before this
// resolves, so store tokens work from the first request), the usage flush and, beside it, the
// landing flush (docs/landing.md "Several instances"). `stop()` is for the end of a drain,
// after in-flight requests have finished: it writes the last usage and landing figures, then
// closes the store it owns.

import type { Config } from '../config/schema.js';
import type { TokenTable } from '../gateway/token-table.js';
import type { LandingFigures } from '../landing/figures.js';
import { startLandingFlush, type LandingFlush } from '../landing/flush.js';
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
  /** Null when no landing figures were handed in. */
  readonly landingFlush: LandingFlush | null;
  /** Final usage and landing flush, timers off, store closed (when it owns it). Idempotent. */
  stop(): Promise<void>;
}

export interface AccountsOptions {
  tokens: TokenTable;
  usage: UsageMeter;
  /** Transaction landing figures to write to the store beside usage (docs/landing.md "Figures"). */
  landing?: LandingFigures;
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
  const landingFlush =
    opts.landing === undefined
      ? null
      : startLandingFlush(opts.landing, store, { log: opts.log, intervalMs: opts.flushIntervalMs ?? 5000, retentionDays: config.store.retentionDays });
  let stopping: Promise<void> | null = null;
  return {
    store,
    sync,
    flush,
    landingFlush,
    stop() {
      stopping ??= (async () => {
        sync.stop();
        await Promise.all([flush.stop(), landingFlush?.stop()]);
        if (owned) await store.close();
      })();
      return stopping;
    },
  };
}
