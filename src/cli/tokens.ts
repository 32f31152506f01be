// `jumpgate tokens …`: operator commands on the account store named by the config's
// `store.url` (works while a gateway runs on the same SQLite file: WAL, and the gateway's token
// sync picks changes up within a second). Exit codes: 0 done, 2 usage or config error,
// 1 refused (no such stack, account or token) or the store could not be opened.

import { parseArgs } from 'node:util';
import { ConfigError } from '../config/load.js';
import { openStore } from '../store/open.js';
import { StoreError, type Account, type ApiToken, type FullStore, type Stack } from '../store/types.js';
import { helpFor } from './help.js';
import { RefusedError, STDIO, storeUrlOf, type CliIo } from './store-cli.js';
import { UsageError } from './usage-error.js';

interface Opts {
  stack?: string;
  label?: string;
  account?: string;
  config?: string;
  store?: string;
  json: boolean;
}

function parse(argv: string[]): { positionals: string[]; opts: Opts } {
  try {
    const { values, positionals } = parseArgs({
      args: argv,
      strict: true,
      allowPositionals: true,
      options: {
        stack: { type: 'string' },
        label: { type: 'string' },
        account: { type: 'string' },
        config: { type: 'string', short: 'c' },
        store: { type: 'string' },
        json: { type: 'boolean' },
      },
    });
    return { positionals, opts: { ...values, json: values.json === true } };
  } catch (e) {
    throw new UsageError((e as Error).message.split('\n')[0]!);
  }
}

async function pickAccount(store: FullStore, email: string | undefined): Promise<Account> {
  if (email !== undefined) {
    const a = await store.accountByEmail(email);
    if (a === null) throw new RefusedError(`no account with email ${email}`);
    return a;
  }
  const all = await store.listAccounts();
  if (all.length === 1) return all[0]!;
  if (all.length === 0)
    throw new RefusedError('the store has no accounts yet: create one with `jumpgate accounts create --email E` (or register in the console), then retry');
  throw new RefusedError(`the store has ${all.length} accounts: choose one with --account EMAIL (${all.map((a) => a.email).join(', ')})`);
}

const when = (ms: number | null): string => (ms === null ? '-' : new Date(ms).toISOString().replace(/\.\d+Z$/, 'Z'));

function table(rows: string[][]): string[] {
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
  return rows.map((r) =>
    r
      .map((c, i) => c.padEnd(widths[i]!))
      .join('  ')
      .trimEnd(),
  );
}

async function create(store: FullStore, positionals: string[], opts: Opts, io: CliIo): Promise<void> {
  if (positionals.length > 0) throw new UsageError(`unexpected argument "${positionals[0]}"`);
  if (opts.stack === undefined || opts.stack.trim() === '') throw new UsageError('tokens create needs --stack NAME');
  const account = await pickAccount(store, opts.account);
  let stack = await store.stackByName(account.id, opts.stack);
  let stackCreated = false;
  if (stack === null) {
    stack = await store.createStack(account.id, opts.stack, null);
    stackCreated = true;
  }
  const { token, record } = await store.createToken(account.id, stack.id, opts.label ?? '');
  if (opts.json) {
    io.out(
      JSON.stringify(
        { token, id: record.id, prefix: record.prefix, label: record.label, stack: stack.name, stackId: stack.id, account: account.email, stackCreated },
        null,
        2,
      ),
    );
    return;
  }
  if (stackCreated) io.out(`created stack "${stack.name}" (${stack.id}) in ${account.email}`);
  io.out(
    `created token ${record.id} (prefix ${record.prefix}${record.label === '' ? '' : `, label "${record.label}"`}) for stack "${stack.name}" of ${account.email}`,
  );
  io.out('');
  io.out(`  ${token}`);
  io.out('');
  io.out('This is the only time the full token is shown: the store keeps only its hash.');
}

async function list(store: FullStore, positionals: string[], opts: Opts, io: CliIo): Promise<void> {
  if (positionals.length > 0) throw new UsageError(`unexpected argument "${positionals[0]}"`);
  const account = await pickAccount(store, opts.account);
  let stacks: Stack[];
  if (opts.stack !== undefined) {
    const s = await store.stackByName(account.id, opts.stack);
    if (s === null) throw new RefusedError(`no stack named "${opts.stack}" in ${account.email}`);
    stacks = [s];
  } else stacks = await store.listStacks(account.id);
  const rows: { stack: Stack; token: ApiToken }[] = [];
  for (const stack of stacks) for (const token of await store.listTokens(account.id, stack.id)) rows.push({ stack, token });
  if (opts.json) {
    io.out(
      JSON.stringify(
        rows.map(({ stack, token }) => ({ ...token, stack: stack.name, stackDisabled: stack.disabled })),
        null,
        2,
      ),
    );
    return;
  }
  if (rows.length === 0) {
    io.out(`no tokens in ${account.email}${opts.stack === undefined ? '' : ` stack "${opts.stack}"`}`);
    return;
  }
  const state = (s: Stack, t: ApiToken): string => (!t.active ? 'inactive' : s.disabled ? 'stack disabled' : 'active');
  const out = table([
    ['ID', 'STACK', 'PREFIX', 'LABEL', 'STATE', 'CREATED', 'LAST USED'],
    ...rows.map(({ stack, token }) => [token.id, stack.name, token.prefix, token.label, state(stack, token), when(token.createdAt), when(token.lastUsedAt)]),
  ]);
  for (const line of out) io.out(line);
}

async function revoke(store: FullStore, positionals: string[], opts: Opts, io: CliIo): Promise<void> {
  if (positionals.length !== 1) throw new UsageError('usage: jumpgate tokens revoke ID');
  const id = positionals[0]!;
  // Without --account, the token's own account (ids are unique across accounts).
  const accounts = opts.account !== undefined ? [await pickAccount(store, opts.account)] : await store.listAccounts();
  for (const a of accounts) {
    const t = await store.setTokenActive(a.id, id, false);
    if (t === null) continue;
    if (opts.json) io.out(JSON.stringify(t, null, 2));
    else io.out(`token ${t.id} (prefix ${t.prefix}) of ${a.email} is inactive; the gateway answers 403 for it within a second`);
    return;
  }
  throw new RefusedError(`no token with id ${id}${opts.account === undefined ? '' : ` in ${opts.account}`} (see jumpgate tokens list)`);
}

const COMMANDS: Record<string, (store: FullStore, positionals: string[], opts: Opts, io: CliIo) => Promise<void>> = { create, list, revoke };

/** `jumpgate tokens SUBCOMMAND …`; resolves to the exit code. */
export async function runTokensCli(argv: string[], io: CliIo = STDIO): Promise<number> {
  const [sub, ...rest] = argv;
  if (sub === undefined || sub === 'help' || argv.includes('--help') || argv.includes('-h')) {
    io.out(helpFor('tokens', argv)!);
    return sub === undefined ? 2 : 0;
  }
  let store: FullStore | null = null;
  try {
    const fn = COMMANDS[sub];
    if (fn === undefined) throw new UsageError(`unknown tokens command "${sub}"`);
    const { positionals, opts } = parse(rest);
    // Usage errors before the store is opened (opening creates a missing SQLite file).
    if (sub === 'create' && (opts.stack === undefined || opts.stack.trim() === '')) throw new UsageError('tokens create needs --stack NAME');
    if (sub === 'revoke' && positionals.length !== 1) throw new UsageError('usage: jumpgate tokens revoke ID');
    if (sub !== 'revoke' && positionals.length > 0) throw new UsageError(`unexpected argument "${positionals[0]}"`);
    store = await openStore(storeUrlOf(opts));
    await fn(store, positionals, opts, io);
    return 0;
  } catch (err) {
    if (err instanceof UsageError) {
      io.err(`jumpgate tokens: ${err.message}\n\n${helpFor('tokens', argv)!}`);
      return 2;
    }
    if (err instanceof ConfigError) {
      io.err(err.message);
      return 2;
    }
    if (err instanceof RefusedError || err instanceof StoreError) {
      io.err(`jumpgate tokens: ${err.message}`);
      return 1;
    }
    io.err(`jumpgate tokens: ${(err as Error).message}`);
    return 1;
  } finally {
    await store?.close();
  }
}
