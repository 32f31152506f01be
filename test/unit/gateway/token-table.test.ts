// The in-memory token table the hot path authenticates against (src/gateway/token-table.ts).

import t from 'tap';
import { staticTokenRecord, TokenTable } from '../../../src/gateway/token-table.js';
import { hashToken } from '../../../src/token-format.js';

t.test('finds tokens by their hash only, whether added plain or hashed', async (t) => {
  const table = new TokenTable();
  const a = staticTokenRecord('token-aaaaaaaaaaaaaaaa', 'one', true);
  const b = staticTokenRecord('token-bbbbbbbbbbbbbbbb', 'two', false);
  table.addPlain('token-aaaaaaaaaaaaaaaa', a);
  table.addHashed(hashToken('token-bbbbbbbbbbbbbbbb'), b);
  t.equal(table.find('token-aaaaaaaaaaaaaaaa'), a);
  t.equal(table.find('token-bbbbbbbbbbbbbbbb'), b, 'inactive tokens are found (the caller answers 403)');
  t.equal(table.find('token-aaaaaaaaaaaaaaab'), null, 'one character off');
  t.equal(table.find('token-aaaaaaaaaaaaaaaa '), null, 'trailing space');
  t.equal(table.find(''), null);
  table.removeHashed(hashToken('token-aaaaaaaaaaaaaaaa'));
  t.equal(table.find('token-aaaaaaaaaaaaaaaa'), null, 'removed');
  t.equal(table.size, 1);
});
