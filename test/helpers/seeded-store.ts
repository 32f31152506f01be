// A SQLite store file in a fresh temp folder holding one account, one stack ("prod") and one
// API token, made the way the console makes them: for tests that start a gateway on it and
// then read its usage back.

import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openStore } from '../../src/store/open.js';

export async function seedStore(prefix: string) {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  const dbUrl = `sqlite://${join(dir, 'jumpgate.db')}`;
  const store = await openStore(dbUrl);
  const account = await store.createAccount('ops@example.com', 'x');
  const stack = await store.createStack(account.id, 'prod', null);
  const { token, record } = await store.createToken(account.id, stack.id, 'bot');
  await store.close();
  return { dir, dbUrl, account, stack, token, record };
}
