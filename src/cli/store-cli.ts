// What `jumpgate tokens` and `jumpgate accounts` share: where output goes, the refusal that
// exits 1, and the store URL from --store or --config (only `store.url` is resolved there).

import { DEFAULTS } from '../config/defaults.js';
import { loadStoreUrl } from '../config/load.js';

export interface CliIo {
  out(line: string): void;
  err(line: string): void;
}

export const STDIO: CliIo = {
  out: (l) => process.stdout.write(l + '\n'),
  err: (l) => process.stderr.write(l + '\n'),
};

/** No such stack, account or token, or a conflict: exit status 1. */
export class RefusedError extends Error {}

/** --store wins; else `store.url` of --config (other keys and their ${VAR}s are not read); else the default. */
export function storeUrlOf(opts: { store?: string; config?: string }): string {
  if (opts.store !== undefined) return opts.store;
  return opts.config !== undefined ? loadStoreUrl(opts.config) : DEFAULTS.store.url;
}
