// `jumpgate accounts create --email E`: a console account in the account store (SQLite or
// PostgreSQL) without the console, e.g. the first one of a new store, so `jumpgate tokens
// create` has an account to work in. The password comes from standard input
// (--password-stdin) or a prompt without echo; the same rules as the console's registration
// (docs/cli.md "accounts create"). Exit codes: 0 done, 2 usage or config error, 1 refused or store error.

import { parseArgs } from 'node:util';
import { hashPassword } from '../accounts/password.js';
import { ConfigError } from '../config/load.js';
import { normalizeEmail } from '../console/context.js';
import { openStore } from '../store/open.js';
import { StoreError, type FullStore } from '../store/types.js';
import { asksHelp, helpFor } from './help.js';
import { readPassword, type PasswordSource } from './password-input.js';
import { RefusedError, STDIO, storeUrlOf, type CliIo } from './store-cli.js';
import { UsageError } from './usage-error.js';

/** As the console's registration (src/console/schemas.ts credentialsBody). */
const MIN_PASSWORD = 10;
const MAX_PASSWORD = 1024;
const MAX_EMAIL = 254;
const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

interface Opts {
  email?: string;
  passwordStdin: boolean;
  config?: string;
  store?: string;
  json: boolean;
}

function parse(argv: string[]): Opts {
  try {
    const { values, positionals } = parseArgs({
      args: argv,
      strict: true,
      allowPositionals: true,
      options: {
        email: { type: 'string' },
        'password-stdin': { type: 'boolean' },
        config: { type: 'string', short: 'c' },
        store: { type: 'string' },
        json: { type: 'boolean' },
      },
    });
    if (positionals.length > 0) throw new UsageError(`unexpected argument "${positionals[0]}"`);
    return { email: values.email, passwordStdin: values['password-stdin'] === true, config: values.config, store: values.store, json: values.json === true };
  } catch (e) {
    if (e instanceof UsageError) throw e;
    throw new UsageError((e as Error).message.split('\n')[0]!);
  }
}

function checkEmail(raw: string | undefined): string {
  if (raw === undefined || raw.trim() === '') throw new UsageError('accounts create needs --email E');
  const email = normalizeEmail(raw);
  if (email.length > MAX_EMAIL || !EMAIL.test(email)) throw new UsageError(`--email must be an email address, got "${raw}"`);
  return email;
}

async function create(opts: Opts, io: CliIo, source: PasswordSource): Promise<void> {
  const email = checkEmail(opts.email);
  // The password before the store: a refused one leaves no new SQLite file behind.
  const password = await readPassword(source, opts.passwordStdin);
  if (password.length < MIN_PASSWORD) throw new RefusedError(`the password must have ${MIN_PASSWORD} characters or more`);
  if (password.length > MAX_PASSWORD) throw new RefusedError(`the password must have at most ${MAX_PASSWORD} characters`);
  const hash = await hashPassword(password);
  let store: FullStore | null = null;
  try {
    store = await openStore(storeUrlOf(opts));
    const account = await store.createAccount(email, hash).catch((e: unknown) => {
      if (e instanceof StoreError && e.code === 'conflict') throw new RefusedError(`an account with email ${email} already exists`);
      throw e;
    });
    if (opts.json) io.out(JSON.stringify({ id: account.id, email: account.email, createdAt: account.createdAt }, null, 2));
    else {
      io.out(`created account ${account.id} (${account.email})`);
      io.out(
        `next: jumpgate tokens create --stack NAME${opts.config !== undefined ? ` --config ${opts.config}` : opts.store !== undefined ? ` --store ${opts.store}` : ''}`,
      );
    }
  } finally {
    await store?.close();
  }
}

/** `jumpgate accounts SUBCOMMAND …`; resolves to the exit code. */
export async function runAccountsCli(argv: string[], io: CliIo = STDIO, source: PasswordSource = process.stdin): Promise<number> {
  const [sub, ...rest] = argv;
  if (sub === undefined || sub === 'help' || asksHelp(argv)) {
    io.out(helpFor('accounts', argv)!);
    return sub === undefined ? 2 : 0;
  }
  try {
    if (sub !== 'create') throw new UsageError(`unknown accounts command "${sub}"`);
    await create(parse(rest), io, source);
    return 0;
  } catch (err) {
    if (err instanceof UsageError) {
      io.err(`jumpgate accounts: ${err.message}\n\n${helpFor('accounts', argv)!}`);
      return 2;
    }
    if (err instanceof ConfigError) {
      io.err(err.message);
      return 2;
    }
    io.err(`jumpgate accounts: ${(err as Error).message}`);
    return 1;
  }
}
