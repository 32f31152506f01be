// The CLI helps itself (docs/cli.md "--help"): --help on every command and subcommand lists its
// options and defaults; an unknown option prints the usage with exit status 2; `accounts
// create` then `tokens create` work on an empty SQLite and PostgreSQL store; --config gives
// `tokens` and `accounts` only store.url, whatever else the file references.

import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { openStore } from '../../src/store/open.js';
import { DEFAULT_FEED } from '../../src/tools/sim-grpc/feed.js';
import { CLI } from '../helpers/cli.js';
import { postgresSkipReason, startPostgres } from '../helpers/postgres.js';

type Test = Parameters<Parameters<typeof t.test>[0]>[0];

interface Run {
  code: number | null;
  out: string;
  err: string;
}

function run(args: string[], input?: string, env: NodeJS.ProcessEnv = {}): Promise<Run> {
  const child = spawn(process.execPath, [CLI, ...args], { env: { ...process.env, ...env }, stdio: ['pipe', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (err += d.toString()));
  child.stdin.end(input ?? '');
  return new Promise((resolve) => child.once('close', (code) => resolve({ code, out, err })));
}

/** Each command line asking for help, and what its text must list. */
const HELPS: [string[], RegExp[]][] = [
  [
    ['start', '--help'],
    [/^usage: jumpgate start/, /--config FILE/, /--port N/, /default: rpc\.port of the config \(8899\)/, /--workers N\|auto/, /--data DIR .*default: \.\/data/],
  ],
  [['bench', '--help'], [/--url/]],
  [
    ['tokens', '--help'],
    [/^usage: jumpgate tokens/, /create --stack NAME/, /--store URL/, /default: sqlite:\/\/\.\/data\/jumpgate\.db/],
  ],
  [
    ['tokens', 'create', '--help'],
    [/^usage: jumpgate tokens create --stack NAME/, /--label L/, /--account EMAIL/, /--config FILE/],
  ],
  [
    ['tokens', 'list', '-h'],
    [/^usage: jumpgate tokens list/, /--stack NAME .*default: all stacks/],
  ],
  [['tokens', 'revoke', '--help'], [/^usage: jumpgate tokens revoke ID/]],
  [['accounts', '--help'], [/^usage: jumpgate accounts create --email E/]],
  [
    ['accounts', 'create', '--help'],
    [/^usage: jumpgate accounts create --email E/, /--password-stdin/, /default: ask for it/, /--store URL/],
  ],
  [
    ['nodes', '--help'],
    [/^usage: jumpgate nodes/, /--admin URL .*default: \$JUMPGATE_ADMIN_URL or http:\/\/127\.0\.0\.1:9464/, /--token T/],
  ],
  [
    ['nodes', 'list', '--help'],
    [/^usage: jumpgate nodes \[list\]/, /--json/],
  ],
  [['nodes', 'set-weight', '--help'], [/^usage: jumpgate nodes set-weight ID WEIGHT/]],
  [['nodes', 'drain', '--help'], [/^usage: jumpgate nodes drain ID/]],
  [['nodes', 'undrain', '--help'], [/^usage: jumpgate nodes undrain ID/]],
  [
    ['reload', '--help'],
    [/^usage: jumpgate reload/, /--admin URL/],
  ],
  [
    ['ws', '--help'],
    [/^usage: jumpgate ws URL/, /--count N .*default: run until Ctrl-C/],
  ],
  [
    ['sim-grpc', '--help'],
    [
      /^usage: jumpgate sim-grpc --port P/,
      /--slot-ms MS .*default: 400/,
      // help.ts writes the feed's defaults out: they must still be the feed's.
      new RegExp(`--seed S .*default: ${DEFAULT_FEED.seed}\n`),
      new RegExp(`--accounts N .*default: ${DEFAULT_FEED.accountsPerSlot}\n`),
      new RegExp(`--transactions N .*default: ${DEFAULT_FEED.transactionsPerSlot}\n`),
      /--jitter-ms MS/,
      /--delay-seed S[^]*default: 7\n/,
    ],
  ],
  [['--help'], [/^usage: jumpgate <command>/, /accounts create --email E/, /--help shows a command's options/]],
];

t.test('--help on every command and subcommand: exit 0, its options and defaults on stdout', async (t) => {
  for (const [args, wants] of HELPS) {
    const r = await run(args);
    t.equal(r.code, 0, `jumpgate ${args.join(' ')}: exit 0 ${r.err}`);
    for (const re of wants) t.match(r.out, re, `jumpgate ${args.join(' ')}: ${re}`);
  }
});

t.test('an unknown option: the error, then the command usage, exit 2', async (t) => {
  for (const [args, usage] of [
    [['start', '--bogus'], /usage: jumpgate start/],
    [['ws', '--bogus', 'ws://x'], /usage: jumpgate ws/],
    [['tokens', 'create', '--bogus'], /usage: jumpgate tokens create/],
    [['accounts', 'create', '--bogus'], /usage: jumpgate accounts create/],
    [['nodes', '--bogus'], /usage: jumpgate nodes/],
    [['reload', '--bogus'], /usage: jumpgate reload/],
    [['sim-grpc', '--port', '0', '--bogus'], /usage: jumpgate sim-grpc/],
  ] as const) {
    const r = await run([...args]);
    t.equal(r.code, 2, `jumpgate ${args.join(' ')}`);
    t.match(r.err, /Unknown option '--bogus'/);
    t.match(r.err, usage);
  }
});

/** accounts create (password on stdin), then tokens create, on the store at `url`. */
async function firstAccountThenToken(t: Test, url: string): Promise<void> {
  const empty = await run(['tokens', 'create', '--stack', 'prod', '--store', url]);
  t.equal(empty.code, 1, 'tokens create on a store without accounts is refused');
  t.match(empty.err, /jumpgate accounts create --email E/, 'and says how to create one');

  const short = await run(['accounts', 'create', '--email', 'ops@example.com', '--password-stdin', '--store', url], 'short\n');
  t.equal(short.code, 1, 'a password under 10 characters is refused');
  t.match(short.err, /10 characters or more/);

  const made = await run(['accounts', 'create', '--email', 'Ops@Example.com', '--password-stdin', '--store', url, '--json'], 'correct horse battery\n');
  t.equal(made.code, 0, made.err);
  t.match(JSON.parse(made.out), { email: 'ops@example.com', id: /.+/ });

  const twice = await run(['accounts', 'create', '--email', 'ops@example.com', '--password-stdin', '--store', url], 'correct horse battery\n');
  t.equal(twice.code, 1);
  t.match(twice.err, /already exists/);

  const token = await run(['tokens', 'create', '--stack', 'prod', '--store', url]);
  t.equal(token.code, 0, token.err);
  t.match(token.out, /jg_[A-Za-z0-9_-]{20,}/, 'the token is printed');
  t.match(token.out, /of ops@example\.com/);

  // The console accepts the password the CLI stored.
  const store = await openStore(url);
  try {
    const a = await store.accountByEmail('ops@example.com');
    const { verifyPassword } = await import('../../src/accounts/password.js');
    t.ok(a !== null && (await verifyPassword('correct horse battery', a.passwordHash)), 'the password verifies');
  } finally {
    await store.close();
  }
}

t.test('accounts create then tokens create on an empty SQLite store', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'jg-accounts-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  await firstAccountThenToken(t, `sqlite://${join(dir, 'jg.db')}`);
});

t.test('accounts create then tokens create on an empty PostgreSQL store', { skip: postgresSkipReason() }, async (t) => {
  const pg = await startPostgres();
  t.teardown(() => pg.stop());
  await firstAccountThenToken(t, await pg.createDatabase('jg_cli'));
});

t.test('accounts create without a terminal and without --password-stdin says what to do', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'jg-accounts-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const r = await run(['accounts', 'create', '--email', 'a@example.com', '--store', `sqlite://${join(dir, 'jg.db')}`]);
  t.equal(r.code, 2);
  t.match(r.err, /--password-stdin/);
  t.notOk(existsSync(join(dir, 'jg.db')), 'no store file was created');
});

t.test('tokens and accounts with --config resolve store.url only: an unrelated unset ${VAR} is no obstacle', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'jg-config-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const config = join(dir, 'jumpgate.yaml');
  writeFileSync(
    config,
    [
      `store: { url: "sqlite://\${JG_TEST_DIR}/jg.db" }`,
      'admin: { token: ${JG_UNSET_ADMIN_TOKEN} }',
      'nodes: [{ id: a, url: "${JG_UNSET_NODE_URL}" }]',
      '',
    ].join('\n'),
  );
  const env = { JG_TEST_DIR: dir, JG_UNSET_ADMIN_TOKEN: undefined, JG_UNSET_NODE_URL: undefined };
  const made = await run(['accounts', 'create', '--email', 'ops@example.com', '--password-stdin', '--config', config], 'correct horse battery\n', env);
  t.equal(made.code, 0, made.err);
  const token = await run(['tokens', 'create', '--stack', 'prod', '--config', config], undefined, env);
  t.equal(token.code, 0, token.err);
  t.ok(existsSync(join(dir, 'jg.db')), 'the store named by store.url');
  const list = await run(['tokens', 'list', '--config', config, '--json'], undefined, env);
  t.equal(JSON.parse(list.out).length, 1);

  const unset = await run(['tokens', 'list', '--config', config], undefined, { JG_TEST_DIR: undefined });
  t.equal(unset.code, 2, 'a variable store.url needs is still required');
  t.match(unset.err, /store\.url: .*JG_TEST_DIR/);
});
