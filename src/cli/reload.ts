// `jumpgate reload`: a running gateway re-reads its config file (like SIGHUP), through the
// admin API (admin-client.ts); prints what changed.

import { adminApi, parseAdminArgs, runAdminCommand } from './admin-client.js';
import { UsageError } from './usage-error.js';

async function reload(argv: string[]): Promise<void> {
  const { positionals, target } = parseAdminArgs(argv);
  if (positionals.length > 0) throw new UsageError(`unexpected argument "${positionals[0]}"`);
  const summary = await adminApi(target, 'POST', '/admin/reload');
  process.stdout.write(JSON.stringify(summary, null, 2) + '\n');
}

export const runReloadCli = (argv: string[]): Promise<void> => runAdminCommand('reload', reload, argv);
