// `--help` (or -h) on every command and subcommand: what it does, its options and their
// defaults (docs/cli.md "--help"). A command line with an unknown option prints the same text
// after the error, with exit status 2.

import { DEFAULTS } from '../config/defaults.js';

const STORE_OPTIONS = `  -c, --config FILE    read store.url from this config file (only that key is resolved)
  --store URL          use this store URL instead (sqlite://PATH or postgres://…)
                       default: ${DEFAULTS.store.url}`;

const ADMIN_OPTIONS = `  --admin URL          admin API; default: $JUMPGATE_ADMIN_URL or http://127.0.0.1:${DEFAULTS.admin.port}
  --token T            admin token; default: $JUMPGATE_ADMIN_TOKEN`;

const HELP_LINE = '  -h, --help           this text';

/** Help texts by command, and by "command subcommand". */
export const HELP: Readonly<Record<string, string>> = {
  start: `usage: jumpgate start [options]

Runs the gateway. Without --config: a demo with three simulated nodes (two with Yellowstone gRPC
sources behind the gateway's gRPC listener), an account and a token.

options:
  -c, --config FILE    config file (YAML); default: none, run the demo
  --port N             RPC port; the WebSocket port follows at N+1 (0: both ephemeral;
                       the demo: every listener, admin, console and gRPC too)
                       default: rpc.port of the config (${DEFAULTS.rpc.port})
  --workers N|auto     data-plane worker threads (rpc.workers); default: the config's (${DEFAULTS.rpc.workers})
  --data DIR           the demo's data folder (its SQLite store); default: ./data
${HELP_LINE}`,

  nodes: `usage: jumpgate nodes [list | set-weight ID WEIGHT | drain ID | undrain ID] [options]

Shows or changes the nodes of a running gateway through its admin API.

commands:
  list (the default)   state, weight, slot, lag, req/s, in-flight, p50/p99 per node
  set-weight ID W      change a node's weight (>= 0) live
  drain ID             stop sending new requests to a node (in-flight ones finish)
  undrain ID           let it take traffic again

options:
${ADMIN_OPTIONS}
  --json               machine-readable output; default: a table
${HELP_LINE}`,

  'nodes list': `usage: jumpgate nodes [list] [options]

Lists the nodes of a running gateway: state, weight, slot, lag, req/s, in-flight, p50/p99.

options:
${ADMIN_OPTIONS}
  --json               machine-readable output; default: a table
${HELP_LINE}`,

  'nodes set-weight': `usage: jumpgate nodes set-weight ID WEIGHT [options]

Changes a node's weight (a number >= 0; 0 sends it nothing) on the running gateway.

options:
${ADMIN_OPTIONS}
  --json               machine-readable output
${HELP_LINE}`,

  'nodes drain': `usage: jumpgate nodes drain ID [options]

Stops sending new requests to a node; the requests it has finish.

options:
${ADMIN_OPTIONS}
  --json               machine-readable output
${HELP_LINE}`,

  'nodes undrain': `usage: jumpgate nodes undrain ID [options]

Lets a drained node take traffic again.

options:
${ADMIN_OPTIONS}
  --json               machine-readable output
${HELP_LINE}`,

  reload: `usage: jumpgate reload [options]

Makes a running gateway re-read its config file (like SIGHUP) and prints what changed.

options:
${ADMIN_OPTIONS}
${HELP_LINE}`,

  tokens: `usage: jumpgate tokens <create | list | revoke> [options]

Manages API tokens in the account store (works while a gateway runs on it: it picks changes
up within a second).

commands:
  create --stack NAME [--label L]   create a token (and the stack, if new); prints it once
  list [--stack NAME]               list tokens: id, stack, prefix, label, state, last use
  revoke ID                         deactivate a token (the gateway answers 403 within 1 s)

options:
  --account EMAIL      the account; default: the only one, when there is exactly one
${STORE_OPTIONS}
  --json               machine-readable output
${HELP_LINE}`,

  'tokens create': `usage: jumpgate tokens create --stack NAME [options]

Creates an API token for a stack (and the stack, if it is new) and prints the token once: the
store keeps only its hash.

options:
  --stack NAME         the stack (required)
  --label L            a label to recognize the token by; default: none
  --account EMAIL      the account; default: the only one, when there is exactly one
${STORE_OPTIONS}
  --json               machine-readable output
${HELP_LINE}`,

  'tokens list': `usage: jumpgate tokens list [options]

Lists tokens: id, stack, prefix, label, state, created, last used (never the token itself).

options:
  --stack NAME         only this stack; default: all stacks of the account
  --account EMAIL      the account; default: the only one, when there is exactly one
${STORE_OPTIONS}
  --json               machine-readable output
${HELP_LINE}`,

  'tokens revoke': `usage: jumpgate tokens revoke ID [options]

Deactivates a token; a running gateway answers 403 for it within a second.

options:
  --account EMAIL      the account; default: the token's own
${STORE_OPTIONS}
  --json               machine-readable output
${HELP_LINE}`,

  accounts: `usage: jumpgate accounts create --email E [options]

Manages console accounts in the account store.

commands:
  create --email E     create an account (the first one, or another); then: jumpgate tokens create

options:
  --password-stdin     read the password from standard input; default: ask for it
${STORE_OPTIONS}
  --json               machine-readable output
${HELP_LINE}`,

  'accounts create': `usage: jumpgate accounts create --email E [options]

Creates a console account in the account store (SQLite or PostgreSQL), for example the first
one of a new store, so that \`jumpgate tokens create\` has an account to create tokens in.
The password (10 characters or more) is asked for, without echo, unless --password-stdin.

options:
  --email E            the account's email address (required)
  --password-stdin     read the password from standard input (one line); default: ask for it
${STORE_OPTIONS}
  --json               machine-readable output
${HELP_LINE}`,

  // The feed's defaults are written out, not imported: the generator would load protobuf for
  // every command's help (test/integration/cli-help.test.ts compares them with DEFAULT_FEED).
  'sim-grpc': `usage: jumpgate sim-grpc --port P [options]

Serves one simulated Yellowstone gRPC source (geyser.Geyser) of generated updates, for demos
and benchmarks (docs/grpc.md "Simulated sources"). Stops on Ctrl-C.

options:
  --port P             port to listen on (required; 0: a free one, printed)
  --host H             address to listen on; default: 127.0.0.1
  --slot-ms MS         slot time; default: 400
  --seed S             the feed's seed: sources with one seed send the same updates; default: 1
  --accounts N         account writes per slot; default: 8
  --transactions N     transactions per slot; default: 4
  --delay-ms MS        fixed delay added to every update; default: 0
  --jitter-ms MS       extra delay per update, 0 to MS; default: 0
  --drop-rate F        fraction of updates dropped, per stream (0-1); default: 0
  --stall-rate F       chance per slot that a stream stalls (0-1); default: 0
  --stall-ms MS        how long a stall lasts; default: 0
  --delay-seed S       seed of the delays, drops and stalls (sources meant to race need
                       different ones); default: 7
${HELP_LINE}`,

  ws: `usage: jumpgate ws URL [MESSAGE…] [options]

Opens a WebSocket to URL (ws://HOST:PORT/api-token/TOKEN/), sends each MESSAGE, prints every
frame received; stops on Ctrl-C or after --count frames.

options:
  --count N            stop after N frames; default: run until Ctrl-C
  MESSAGE              JSON-RPC text to send; default: {"jsonrpc":"2.0","id":1,"method":"slotSubscribe"}
${HELP_LINE}`,
};

/** Whether the command line asks for help. */
export function asksHelp(argv: readonly string[]): boolean {
  return argv.includes('--help') || argv.includes('-h');
}

/** The help text for `cmd` and its first positional (a subcommand), falling back to the command's. */
export function helpFor(cmd: string, argv: readonly string[]): string | undefined {
  const sub = argv.find((a) => !a.startsWith('-'));
  return (sub === undefined ? undefined : HELP[`${cmd} ${sub}`]) ?? HELP[cmd];
}
