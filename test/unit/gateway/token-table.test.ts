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

t.test('revocations are told once per token that stops authenticating', async (t) => {
  const table = new TokenTable();
  const told: string[] = [];
  table.onRevoked((id) => told.push(id));
  const a = staticTokenRecord('token-a-0123456789abcdef', 's', true);
  const b = staticTokenRecord('token-b-0123456789abcdef', 's', true);
  table.addPlain('token-a-0123456789abcdef', a);
  table.addPlain('token-b-0123456789abcdef', b);
  t.same(told, [], 'adding tells nothing');
  table.addPlain('token-a-0123456789abcdef', staticTokenRecord('token-a-0123456789abcdef', 's', true));
  t.same(told, [], 'replaced by an active record of the same id: still valid');
  table.setActive(b, false);
  t.same(told, [b.id], 'flipped inactive in place');
  table.setActive(b, false);
  t.same(told, [b.id], 'already inactive: not told again');
  table.setActive(b, true);
  table.removeHashed(hashToken('token-b-0123456789abcdef'));
  t.same(told, [b.id, b.id], 'removed');
  table.removeHashed(hashToken('token-b-0123456789abcdef'));
  t.same(told, [b.id, b.id], 'removing an absent token tells nothing');
  table.addPlain('token-a-0123456789abcdef', staticTokenRecord('token-a-0123456789abcdef', 's', false));
  t.same(told, [b.id, b.id, a.id], 'replaced by an inactive record');
  told.length = 0;
  const c = staticTokenRecord('token-c-0123456789abcdef', 's', true);
  table.replaceAll([{ hash: hashToken('token-c-0123456789abcdef'), record: c }]);
  t.same(told, [a.id], 'replaceAll tells the tokens that left (a), not the new one');
});
