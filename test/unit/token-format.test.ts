// The API token format (src/token-format.ts): issued tokens, the pattern static tokens must
// match, the prefix shown in lists, and the hash the store keeps and the gateway looks up.

import { createHash } from 'node:crypto';
import t from 'tap';
import { ConfigError, resolveConfig } from '../../src/config/load.js';
import { staticTokenRecord, TokenTable } from '../../src/gateway/token-table.js';
import { openStore } from '../../src/store/open.js';
import { API_TOKEN_RE, API_TOKEN_RULE, hashToken, hashTokenBase64, newAdminToken, newApiToken, tokenPrefix } from '../../src/token-format.js';

t.test('issued API tokens: jg_ and 192 random bits in base64url, inside the accepted pattern', async (t) => {
  const seen = new Set<string>();
  for (let i = 0; i < 200; i++) {
    const token = newApiToken();
    t.match(token, /^jg_[A-Za-z0-9_-]{32}$/);
    t.ok(API_TOKEN_RE.test(token), 'a static-token config would accept it');
    t.equal(encodeURIComponent(token), token, 'needs no escaping in a URL path');
    seen.add(token);
  }
  t.equal(seen.size, 200, 'random: no repeats');
});

t.test('admin tokens: jga_ and 144 random bits, told apart from API tokens', async (t) => {
  const a = newAdminToken();
  t.match(a, /^jga_[A-Za-z0-9_-]{24}$/);
  t.not(a, newAdminToken());
  t.notOk(a.startsWith('jg_'));
});

t.test('the accepted pattern: 16 or more URL-path-safe characters', async (t) => {
  for (const ok of ['abcdefghijklmnop', 'A-Z_0-9-abcdefgh', 'x'.repeat(200)]) t.ok(API_TOKEN_RE.test(ok), ok);
  for (const bad of [
    '',
    'abcdefghijklmno',
    'abcdefgh/ijklmnop',
    'abcdefgh ijklmnop',
    'abcdefgh.ijklmnop',
    'abcdefgh~ijklmnop',
    'abcdefghijklmnop\n',
    'ääääääääääääääää',
  ]) {
    t.notOk(API_TOKEN_RE.test(bad), JSON.stringify(bad));
  }
  t.equal(API_TOKEN_RULE, 'at least 16 characters from [A-Za-z0-9_-]');
});

t.test('the config schema applies the same pattern to static tokens', async (t) => {
  const token = newApiToken();
  t.same(resolveConfig({ tokens: [{ token, stack: 'a' }] }).tokens, [{ token, stack: 'a', active: true }]);
  const err = t.throws(() => resolveConfig({ tokens: [{ token: 'abcdefghijklmno', stack: 'a' }] })) as ConfigError;
  t.ok(err instanceof ConfigError);
  t.match(err.message, `tokens[0].token: expected ${API_TOKEN_RULE}`);
});

t.test('the prefix shown and logged: the first 8 characters', async (t) => {
  t.equal(tokenPrefix('jg_abcdefghijklmnop'), 'jg_abcde');
  t.equal(tokenPrefix('short'), 'short');
  t.equal(staticTokenRecord('abcdefghijklmnop', 's', true).prefix, 'abcdefgh', 'config tokens show the same prefix');
});

t.test('the hash: SHA-256 of the token, the same in hex (store) and base64 (table lookup)', async (t) => {
  // FIPS 180-2 test vector.
  t.equal(hashToken('abc').toString('hex'), 'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
  const token = newApiToken();
  t.same(hashToken(token), createHash('sha256').update(token, 'utf8').digest());
  t.equal(hashTokenBase64(token), hashToken(token).toString('base64'));
  t.equal(hashTokenBase64('ünïcödé-tökén-1234'), hashToken('ünïcödé-tökén-1234').toString('base64'), 'UTF-8 either way');
});

t.test('a token the store issues is found by the table through the hash the store keeps', async (t) => {
  const store = await openStore('sqlite://:memory:');
  t.teardown(() => store.close());
  const account = await store.createAccount('a@example.com', 'h');
  const stack = await store.createStack(account.id, 'main', null);
  const { token, record } = await store.createToken(account.id, stack.id, 'ci');
  t.equal(record.prefix, tokenPrefix(token));
  const [row] = await store.tokensForGateway();
  t.same(row!.hash, hashToken(token), 'the store hashes as the format says');
  const table = new TokenTable();
  const rec = { id: row!.id, prefix: row!.prefix, stack: row!.stackId, active: row!.active };
  table.addHashed(row!.hash, rec);
  t.equal(table.find(token), rec, 'the table finds the plain token by the stored hash');
  t.equal(table.find(token.slice(0, -1)), null);
});
