// Config loading (src/config): one test per option error, env substitution, YAML errors,
// defaults, a full example config, and the generated JSON Schema's drift.

import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { DEFAULTS } from '../../../src/config/defaults.js';
import { ConfigError, loadConfig, loadStoreUrl, parseConfig, resolveConfig } from '../../../src/config/load.js';
import { configJsonSchema } from '../../../src/config/json-schema.js';
import { ConfigSchema } from '../../../src/config/schema.js';
import { jitoNodes, rpcNodes } from '../../../src/config/node-kinds.js';

/** The ConfigError `fn` throws; fails loudly if it returns or throws something else. */
function errorOf(fn: () => unknown): ConfigError {
  try {
    fn();
  } catch (err) {
    if (err instanceof ConfigError) return err;
    throw err;
  }
  throw new Error('expected a ConfigError, but the config was accepted');
}

const fails = (yaml: string, env: NodeJS.ProcessEnv = {}): string => errorOf(() => parseConfig(yaml, env)).message;

t.test('empty file, {} and comments-only file all give DEFAULTS', async (t) => {
  t.same(parseConfig('', {}), DEFAULTS);
  t.same(parseConfig('{}\n', {}), DEFAULTS);
  t.same(parseConfig('# nothing here\n\n', {}), DEFAULTS);
  t.same(resolveConfig(undefined, {}), DEFAULTS);
  t.same(resolveConfig({}, {}), DEFAULTS);
  t.ok(ConfigSchema.safeParse(DEFAULTS).success, 'DEFAULTS satisfy the schema');
});

t.test('the resolved config is a fresh copy; DEFAULTS stay frozen', async (t) => {
  const c = parseConfig('', {});
  c.rpc.port = 1;
  c.cors.origins.push('x');
  t.equal(DEFAULTS.rpc.port, 8899);
  t.same(DEFAULTS.cors.origins, ['*']);
  t.ok(Object.isFrozen(DEFAULTS.rpc));
});

t.test('a key left out takes its default; nested mappings merge, arrays replace', async (t) => {
  const c = parseConfig('rpc: { port: 1234 }\ncors: { origins: [https://a.example] }\n', {});
  t.same(c.rpc, { host: '127.0.0.1', port: 1234, wsPort: 8900, workers: 1, server: 'auto' });
  t.same(c.cors.origins, ['https://a.example']);
  t.same(c.limits, DEFAULTS.limits);
});

t.test('an empty (null) value counts as not given', async (t) => {
  const c = parseConfig('rpc:\ntokens:\nnodes:\n  - { id: a, url: http://x, ws: }\n', {});
  t.same(c.rpc, DEFAULTS.rpc);
  t.same(c.tokens, []);
  t.same(c.nodes, [{ id: 'a', url: 'http://x', weight: 1 }]);
});

t.test('nodes entries get weight 1; tokens entries get active: true', async (t) => {
  const c = parseConfig(
    [
      'nodes:',
      '  - { id: a, url: http://127.0.0.1:9001 }',
      '  - { id: b, url: https://b.example/rpc, ws: wss://b.example/ws, weight: 2.5, labels: { region: eu } }',
      'tokens:',
      '  - { token: abcdefghijklmnop, stack: demo }',
      '',
    ].join('\n'),
    {},
  );
  t.same(c.nodes, [
    { id: 'a', url: 'http://127.0.0.1:9001', weight: 1 },
    { id: 'b', url: 'https://b.example/rpc', ws: 'wss://b.example/ws', weight: 2.5, labels: { region: 'eu' } },
  ]);
  t.notOk('ws' in (c.nodes[0] as object), 'optional ws stays absent');
  t.same(c.tokens, [{ token: 'abcdefghijklmnop', stack: 'demo', active: true }]);
});

t.test('unknown top-level key, with a did-you-mean', async (t) => {
  t.equal(fails('rpcc: { port: 1 }\n'), 'config: unknown key "rpcc" at top level (did you mean "rpc"?)');
  // The piscina pool's old key names the new one.
  t.equal(
    fails('workers: { threads: 0 }\n'),
    'config: "workers" was renamed: use offload (the piscina pool for large bodies: offload.threads, offload.parseThresholdBytes, offload.mergeThresholdBytes; data-plane threads are rpc.workers)',
  );
  t.equal(fails('Nodes: []\n'), 'config: unknown key "Nodes" at top level (did you mean "nodes"?)');
});

t.test('a file with three mistakes reports all three, each with its path', async (t) => {
  const e = errorOf(() => parseConfig('rpc: { prot: 1, port: -5 }\nlimits: { maxBatch: lots }\n', {}));
  t.equal(e.problems.length, 3, e.message);
  t.match(e.problems, [/^rpc: unknown key "prot" \(did you mean "port"\?\)$/, /^rpc\.port: expected/, /^limits\.maxBatch: expected .*got "lots"$/]);
});

t.test('unknown keys in several places and a wrong value are reported together', async (t) => {
  const e = errorOf(() => parseConfig('rpcc: { port: 1 }\nnodes: [{ id: a, url: http://x, wieght: 2 }]\nchain: bitcoin\n', {}));
  t.equal(e.problems.length, 3, e.message);
  t.ok(e.problems.some((p) => p.startsWith('unknown key "rpcc" at top level (did you mean "rpc"?)')));
  t.ok(e.problems.some((p) => p.startsWith('nodes[0]: unknown key "wieght" (did you mean "weight"?)')));
  t.ok(e.problems.some((p) => p.startsWith('chain: ')));
});

t.test('unknown top-level key with no near match lists the known keys', async (t) => {
  t.match(fails('zzzzzz: 1\n'), /^config: unknown key "zzzzzz" at top level; known keys: chain, rpc, console, admin, /);
});

t.test('unknown nested key', async (t) => {
  t.equal(fails('rpc: { prot: 1 }\n'), 'config: rpc: unknown key "prot" (did you mean "port"?)');
  t.equal(fails('nodes: [{ id: a, url: http://x, wieght: 2 }]\n'), 'config: nodes[0]: unknown key "wieght" (did you mean "weight"?)');
  t.equal(fails('limits: { maxbatch: 5 }\n'), 'config: limits: unknown key "maxbatch" (did you mean "maxBatch"?)');
});

t.test('port out of range', async (t) => {
  t.equal(fails('rpc: { port: 70000 }\n'), 'config: rpc.port: expected an integer from 0 to 65535, got 70000');
  t.equal(fails('admin: { port: -1 }\n'), 'config: admin.port: expected an integer from 0 to 65535, got -1');
  t.equal(fails('console: { port: 80.5 }\n'), 'config: console.port: expected an integer from 0 to 65535, got 80.5');
});

t.test('integer below its minimum, or not an integer', async (t) => {
  t.equal(fails('limits: { maxBatch: 0 }\n'), 'config: limits.maxBatch: expected an integer >= 1, got 0');
  t.equal(fails('limits: { maxBodyBytes: 1.5 }\n'), 'config: limits.maxBodyBytes: expected an integer >= 1024, got 1.5');
  t.equal(fails('routing: { maxAttempts: 11 }\n'), 'config: routing.maxAttempts: expected an integer from 1 to 10, got 11');
  t.equal(fails('offload: { threads: 65 }\n'), 'config: offload.threads: expected an integer from 0 to 64, got 65');
  t.equal(fails('affinity: { keyRate: 0 }\n'), 'config: affinity.keyRate: expected a number > 0, got 0');
  t.equal(fails('limits: { methodTimeoutMs: { getBlock: 0 } }\n'), 'config: limits.methodTimeoutMs.getBlock: expected an integer >= 1, got 0');
});

t.test('negative weight', async (t) => {
  t.equal(fails('nodes: [{ id: a, url: http://x, weight: -1 }]\n'), 'config: nodes[0].weight: expected a number >= 0, got -1');
  t.equal(fails('nodes: [{ id: a, url: http://x }, { id: b, url: http://y, weight: x }]\n'), 'config: nodes[1].weight: expected a number >= 0, got "x"');
});

t.test('bad URL', async (t) => {
  t.equal(fails('nodes: [{ id: a, url: "ftp://x" }]\n'), 'config: nodes[0].url: expected an http:// or https:// URL, got "ftp://x"');
  t.equal(fails('nodes: [{ id: a, url: "http://" }]\n'), 'config: nodes[0].url: expected an http:// or https:// URL, got "http://"');
  t.equal(fails('nodes: [{ id: a, url: http://x, ws: http://x }]\n'), 'config: nodes[0].ws: expected a ws:// or wss:// URL, got "http://x"');
  t.equal(fails('store: { url: mysql://db }\n'), 'config: store.url: expected a sqlite://, postgres:// or postgresql:// URL, got "mysql://db"');
  t.equal(parseConfig('store: { url: "postgresql://u:p@db/jg" }\n', {}).store.url, 'postgresql://u:p@db/jg');
});

t.test('bad CIDR', async (t) => {
  const expect = 'expected a CIDR like 10.0.0.0/8 or ::1/128, or a bare IP address';
  t.equal(fails('trustedProxies: [10.0.0.0/33]\n'), `config: trustedProxies[0]: ${expect}, got "10.0.0.0/33"`);
  t.equal(fails('trustedProxies: [10.0.0.1, "::1/129"]\n'), `config: trustedProxies[1]: ${expect}, got "::1/129"`);
  t.equal(fails('trustedProxies: [10.0.0/8]\n'), `config: trustedProxies[0]: ${expect}, got "10.0.0/8"`);
  t.equal(fails('trustedProxies: [10.0.0.0/08]\n'), `config: trustedProxies[0]: ${expect}, got "10.0.0.0/08"`);
  t.same(parseConfig('trustedProxies: [10.0.0.0/8, "::1/128", 192.168.1.1, "fd00::/8", 0.0.0.0/0]\n', {}).trustedProxies, [
    '10.0.0.0/8',
    '::1/128',
    '192.168.1.1',
    'fd00::/8',
    '0.0.0.0/0',
  ]);
});

t.test('bad brand', async (t) => {
  t.match(fails('headers: { brand: "My Brand" }\n'), /^config: headers\.brand: expected a header-name word .*, got "My Brand"$/);
  t.match(fails('headers: { brand: "-x" }\n'), /^config: headers\.brand: .*got "-x"$/);
  t.equal(parseConfig('headers: { brand: My-Brand2 }\n', {}).headers.brand, 'My-Brand2');
});

t.test('bad node id', async (t) => {
  t.equal(fails('nodes: [{ id: "a b", url: http://x }]\n'), 'config: nodes[0].id: expected an id of 1-64 characters from [A-Za-z0-9._-], got "a b"');
});

t.test('duplicate node id names the index of both', async (t) => {
  t.equal(
    fails('nodes: [{ id: a, url: http://x }, { id: b, url: http://y }, { id: a, url: http://z }]\n'),
    'config: nodes[2].id: duplicate node id "a" (already used by nodes[0])',
  );
});

t.test('duplicate token; the token itself never appears in the message', async (t) => {
  const msg = fails('tokens: [{ token: abcdefghijklmnop, stack: a }, { token: abcdefghijklmnop, stack: b }]\n');
  t.equal(msg, 'config: tokens[1].token: duplicate token (already used by tokens[0])');
  t.notMatch(msg, /abcdefghijklmnop/);
});

t.test('short token or unsafe characters; the token itself never appears', async (t) => {
  t.equal(
    fails('tokens: [{ token: short, stack: a }]\n'),
    'config: tokens[0].token: expected at least 16 characters from [A-Za-z0-9_-], got a 5-character string',
  );
  const msg = fails('tokens: [{ token: "abcdefgh/ijklmnop", stack: a }]\n');
  t.match(msg, /^config: tokens\[0\]\.token: expected .* got a 17-character string$/);
  t.notMatch(msg, /abcdefgh/);
});

t.test('bad enum', async (t) => {
  t.equal(fails('chain: btc\n'), 'config: chain: expected one of solana, evm, got "btc"');
  t.equal(fails('log: { level: verbose }\n'), 'config: log.level: expected one of fatal, error, warn, info, debug, trace, silent, got "verbose"');
  t.equal(fails('console: { registration: maybe }\n'), 'config: console.registration: expected one of open, closed, got "maybe"');
});

t.test('wrong type', async (t) => {
  t.equal(fails('rpc: 5\n'), 'config: rpc: expected a mapping, got 5');
  t.equal(fails('cors: { origins: "*" }\n'), 'config: cors.origins: expected a list of origins, got "*"');
  t.equal(fails('exposeNode: "yes"\n'), 'config: exposeNode: expected true or false, got "yes"');
  t.equal(fails('nodes: { a: 1 }\n'), 'config: nodes: expected a list of nodes, got a mapping');
  t.equal(fails('- 1\n'), 'config: expected a mapping at top level, got a list');
});

t.test('missing required entry field', async (t) => {
  t.equal(fails('nodes: [{ id: a }]\n'), 'config: nodes[0].url: missing, expected an http:// or https:// URL');
  t.equal(fails('tokens: [{ token: abcdefghijklmnop }]\n'), 'config: tokens[0].stack: missing, expected a stack name');
});

t.test('bad method name in a method-keyed mapping', async (t) => {
  t.equal(
    fails('limits: { methodTimeoutMs: { "get block": 5 } }\n'),
    'config: limits.methodTimeoutMs["get block"]: invalid key, expected a JSON-RPC method name',
  );
});

t.test('health.ejectBackoffMaxMs below ejectBackoffMs', async (t) => {
  t.equal(
    fails('health: { ejectBackoffMs: 5000, ejectBackoffMaxMs: 100 }\n'),
    'config: health.ejectBackoffMaxMs: expected an integer >= health.ejectBackoffMs (5000), got 100',
  );
});

t.test('several problems: one line each, all reported', async (t) => {
  const err = errorOf(() => parseConfig('rpc: { port: 70000 }\nlimits: { maxBatch: 0 }\n', {}, 'x.yaml'));
  t.same(err.problems, ['rpc.port: expected an integer from 0 to 65535, got 70000', 'limits.maxBatch: expected an integer >= 1, got 0']);
  t.equal(err.message.split('\n').length, 2);
  t.equal(err.code, 'JG_CONFIG');
  t.equal(err.source, 'x.yaml');
  t.equal(err.name, 'ConfigError');
});

t.test('env: ${NAME} takes the variable', async (t) => {
  const c = parseConfig('admin: { token: ${ADMIN} }\nrpc: { host: "${HOST}" }\nstore: { url: "sqlite://${DIR}/j.db" }\n', {
    ADMIN: 'sekret',
    HOST: '0.0.0.0',
    DIR: '/var/lib',
  });
  t.equal(c.admin.token, 'sekret');
  t.equal(c.rpc.host, '0.0.0.0');
  t.equal(c.store.url, 'sqlite:///var/lib/j.db');
});

t.test("env: the variable's text is not parsed as YAML", async (t) => {
  const c = parseConfig('admin: { token: ${T}, host: h }\n', { T: 'a: b, c: [d] # e' });
  t.equal(c.admin.token, 'a: b, c: [d] # e');
  t.equal(c.admin.host, 'h');
});

t.test('env: ${NAME:-default} when unset or empty', async (t) => {
  const yaml = 'rpc: { host: ${H:-0.0.0.0} }\nadmin: { token: "${T:-x, y}" }\n';
  t.equal(parseConfig(yaml, {}).rpc.host, '0.0.0.0');
  t.equal(parseConfig(yaml, { H: '' }).rpc.host, '0.0.0.0');
  t.equal(parseConfig(yaml, { H: '10.1.1.1' }).rpc.host, '10.1.1.1');
  t.equal(parseConfig(yaml, {}).admin.token, 'x, y');
  t.equal(parseConfig('admin: { token: "${T}" }\n', { T: '' }).admin.token, '', 'set-but-empty without a default is empty');
});

t.test('env: unset without a default names the field and the variable', async (t) => {
  t.equal(
    fails('admin: { token: ${JUMPGATE_ADMIN_TOKEN} }\n'),
    'config: admin.token: environment variable JUMPGATE_ADMIN_TOKEN is not set ' +
      '(referenced as ${JUMPGATE_ADMIN_TOKEN}; set it, or write ${JUMPGATE_ADMIN_TOKEN:-default})',
  );
  t.match(fails('nodes:\n  - { id: a, url: "http://${NODE_HOST}:9001" }\n'), /^config: nodes\[0\]\.url: environment variable NODE_HOST is not set/);
});

t.test('env: malformed reference', async (t) => {
  t.match(fails('admin: { token: "${1X}" }\n'), /^config: admin\.token: malformed environment reference "\$\{1X\}"/);
});

t.test('env: $${ is a literal ${', async (t) => {
  t.equal(parseConfig('admin: { token: "$${T} ${T}" }\n', { T: 'v' }).admin.token, '${T} v');
});

t.test('env: numbers and booleans are coerced only when they came from env', async (t) => {
  const c = parseConfig(
    'rpc: { port: ${PORT}, wsPort: "${WS:-0}" }\nexposeNode: ${EXPOSE}\naffinity: { keyRate: ${RATE} }\nlimits: { methodTimeoutMs: { getBlock: ${GB} } }\n',
    { PORT: '9000', EXPOSE: 'false', RATE: '2.5', GB: '100' },
  );
  t.equal(c.rpc.port, 9000);
  t.equal(c.rpc.wsPort, 0);
  t.equal(c.exposeNode, false);
  t.equal(c.affinity.keyRate, 2.5);
  t.same(c.limits.methodTimeoutMs, { getBlock: 100 });
  t.equal(fails('rpc: { port: "9000" }\n'), 'config: rpc.port: expected an integer from 0 to 65535, got "9000"', 'a quoted literal stays a string');
  t.equal(fails('rpc: { port: ${PORT} }\n', { PORT: '9000x' }), 'config: rpc.port: expected an integer from 0 to 65535, got "9000x" (from ${PORT})');
  t.equal(fails('rpc: { port: ${PORT} }\n', { PORT: '70000' }), 'config: rpc.port: expected an integer from 0 to 65535, got 70000 (from ${PORT})');
  t.equal(parseConfig('admin: { token: ${T} }\n', { T: '12345' }).admin.token, '12345', 'string fields keep the text');
});

t.test('env: resolveConfig substitutes too', async (t) => {
  const c = resolveConfig({ rpc: { port: '${P}' }, nodes: [{ id: 'a', url: 'http://${H}' }] }, { P: '1', H: 'h' });
  t.equal(c.rpc.port, 1);
  t.same(c.nodes, [{ id: 'a', url: 'http://h', weight: 1 }]);
});

t.test('invalid YAML: message has line and column', async (t) => {
  const err = errorOf(() => parseConfig('rpc: { port: 1 }\nnodes: [1, 2\nlimits: {}\n', {}, 'conf.yaml'));
  t.match(err.message, /^config: invalid YAML in conf\.yaml at line 3, column 1: /);
  t.equal(err.source, 'conf.yaml');
  t.match(fails('a: 1\na: 2\n'), /^config: invalid YAML at line 2, column 1: Map keys must be unique/);
  t.match(fails('rpc:\n  port: 1\n bad: 2\n'), /^config: invalid YAML at line 3, column/);
});

t.test('invalid YAML: line/column stay exact after ${…} references', async (t) => {
  t.match(fails('admin: { token: ${A_LONG_NAME}, host: [ }\n'), /^config: invalid YAML at line 1, column (4[0-9]):/);
});

t.test('a full example config with every section parses', async (t) => {
  const spec = `chain: solana                      # solana | evm (health probes)
rpc: { host: 127.0.0.1, port: 8899, wsPort: 8900 }   # wsPort 0: no extra WS port
console: { host: 127.0.0.1, port: 8080, registration: open }   # port 0: console off
admin: { host: 127.0.0.1, port: 9464, token: \${JUMPGATE_ADMIN_TOKEN} }
store: { url: sqlite://./data/jumpgate.db }            # or postgres://…
headers: { brand: Service }
exposeNode: true
cors: { origins: ["*"] }
trustedProxies: []                 # CIDRs whose X-Forwarded-For is believed
nodes:
  - { id: a, url: http://127.0.0.1:9001, ws: ws://127.0.0.1:9001, weight: 1 }
tokens:                            # static tokens, optional
  - { token: \${DEMO_TOKEN}, stack: demo }
limits: { maxBodyBytes: 1048576, maxBatch: 1000, upstreamTimeoutMs: 30000 }
routing: { upstreamBatch: 100, maxAttempts: 3, autoAffinityMethods: [getLatestBlockhash, isBlockhashValid, simulateTransaction], noRetryMethods: [] }
affinity: { seed: 0, keyRate: 100, keyBurst: 200 }
health: { intervalMs: 1000, maxSlotLag: 32 }
ws: { maxSubscriptionsPerConnection: 100, maxConnectionsPerToken: 100, maxMessageBytes: 65536 }
`;
  const c = parseConfig(spec, { JUMPGATE_ADMIN_TOKEN: 'admin-secret', DEMO_TOKEN: 'demo_token_0123456789' });
  t.equal(c.admin.token, 'admin-secret');
  t.same(c.tokens, [{ token: 'demo_token_0123456789', stack: 'demo', active: true }]);
  t.same(c.nodes, [{ id: 'a', url: 'http://127.0.0.1:9001', ws: 'ws://127.0.0.1:9001', weight: 1 }]);
  t.same({ ...c, admin: DEFAULTS.admin, nodes: [], tokens: [] }, DEFAULTS, 'every other value equals its default');
});

t.test('loadConfig reads a file; a missing file names the path', async (t) => {
  const dir = t.testdir({ 'jumpgate.yaml': 'rpc: { port: 1 }\n', 'bad.yaml': 'rpc: { port: x }\n' });
  t.equal(loadConfig(join(dir, 'jumpgate.yaml'), {}).rpc.port, 1);
  const missing = join(dir, 'nope.yaml');
  const err = errorOf(() => loadConfig(missing, {}));
  t.equal(err.message, `config: file not found: ${missing}`);
  t.equal(err.source, missing);
  t.equal(errorOf(() => loadConfig(join(dir, 'bad.yaml'), {})).source, join(dir, 'bad.yaml'));
  t.match(errorOf(() => loadConfig(dir, {})).message, /^config: cannot read /);
});

t.test('config.schema.json is up to date with configJsonSchema()', async (t) => {
  const path = new URL('../../../../config.schema.json', import.meta.url);
  const onDisk: unknown = JSON.parse(readFileSync(path, 'utf8'));
  t.same(onDisk, configJsonSchema(), 'regenerate with: node dist/scripts/gen-config-schema.js');
});

t.test('JSON Schema: nothing top-level is required, defaults come from DEFAULTS', async (t) => {
  const s = configJsonSchema() as { required?: unknown; properties: Record<string, { default?: unknown }> };
  t.equal(s.required, undefined);
  for (const [k, v] of Object.entries(DEFAULTS)) t.same(s.properties[k]?.default, v, `default of ${k}`);
  const nodes = s.properties['nodes'] as unknown as { items: { required: string[] } };
  t.same(nodes.items.required, ['id', 'url']);
});

// A config written out as JSON (which is YAML) reads back unchanged.
t.test('a full config round-trips through a file', async (t) => {
  const dir = t.testdir({});
  const file = join(dir, 'full.yaml');
  writeFileSync(file, JSON.stringify({ ...DEFAULTS, nodes: [{ id: 'n1', url: 'http://n1', weight: 0 }] }));
  const c = loadConfig(file, {});
  t.same(c, { ...DEFAULTS, nodes: [{ id: 'n1', url: 'http://n1', weight: 0 }] }, 'JSON is YAML');
});

t.test('loadStoreUrl reads store.url alone: other keys and their variables are not resolved', async (t) => {
  const dir = t.testdir({
    'only.yaml': 'store: { url: "sqlite://${DIR}/jg.db" }\nadmin: { token: ${UNSET_TOKEN} }\nrpcc: nonsense\n',
    'none.yaml': 'rpc: { port: 1 }\n',
    'bad.yaml': 'store: { url: "mysql://x" }\n',
  });
  t.equal(loadStoreUrl(join(dir, 'only.yaml'), { DIR: '/srv' }), 'sqlite:///srv/jg.db');
  t.equal(loadStoreUrl(join(dir, 'none.yaml'), {}), DEFAULTS.store.url);
  t.match(errorOf(() => loadStoreUrl(join(dir, 'only.yaml'), {})).message, /^config: store\.url: .*DIR/);
  t.match(
    errorOf(() => loadStoreUrl(join(dir, 'bad.yaml'), {})).message,
    /^config: store\.url: expected a sqlite:\/\/, postgres:\/\/ or postgresql:\/\/ URL, got "mysql:\/\/x"/,
  );
  t.match(errorOf(() => loadStoreUrl(join(dir, 'missing.yaml'), {})).message, /file not found/);
});

t.test('block engine entries (docs/jito.md)', async (t) => {
  t.equal(fails('nodes: [{ id: a, url: http://x, kind: flashbots }]\n'), 'config: nodes[0].kind: expected one of rpc, jito, got "flashbots"');
  t.equal(fails('nodes: [{ id: a, url: http://x, kind: jito, rateLimit: 0 }]\n'), 'config: nodes[0].rateLimit: expected a number > 0, got 0');
  t.match(
    fails('nodes: [{ id: a, url: http://x, kind: jito, headers: { x-jito-auth: 5 } }]\n'),
    /^config: nodes\[0\]\.headers\["x-jito-auth"\]: expected a string, got 5$/,
  );
  t.equal(
    fails('nodes: [{ id: a, url: http://x, kind: jito, headers: { "bad header": x } }]\n'),
    'config: nodes[0].headers["bad header"]: invalid key, expected a header name from [A-Za-z0-9-]',
  );
  const c = parseConfig('nodes:\n  - { id: a, url: http://x }\n  - { id: j, url: http://y, kind: jito, headers: { x-jito-auth: u }, rateLimit: 2 }\n', {});
  t.same(
    rpcNodes(c.nodes).map((n) => n.id),
    ['a'],
  );
  t.same(
    jitoNodes(c.nodes).map((n) => [n.id, n.rateLimit, n.headers]),
    [['j', 2, { 'x-jito-auth': 'u' }]],
  );
  t.equal(c.routing.broadcast.engines, false);
});
