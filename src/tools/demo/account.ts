// The demo account (`jumpgate start` without a config): demo@jumpgate.local with a random
// password, a stack "demo" and a token labelled "demo". The plain password and token are kept
// in DATA_DIR/demo.json (mode 600) so every run prints the same ones. Idempotent: whatever
// is missing (the file, the stack, the token) is recreated; a lost file means a new password.
// The saved token is reused as long as a token with its prefix and label still exists (even if
// deactivated in the console: the user's choice stands).

import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { FullStore, Stack } from '../../store/types.js';
import { hashPassword, verifyPassword } from '../../accounts/password.js';
import { tokenPrefix } from '../../token-format.js';

export const DEMO_EMAIL = 'demo@jumpgate.local';
export const DEMO_STACK = 'demo';
export const DEMO_LABEL = 'demo';

export interface DemoAccount {
  email: string;
  /** Null when the account's password was changed since it was created (no longer the saved one). */
  password: string | null;
  stack: Stack;
  /** The demo token in full. */
  token: string;
}

interface DemoFile {
  email: string;
  password: string;
  token: string;
}

function readDemoFile(file: string): DemoFile | null {
  try {
    const j = JSON.parse(readFileSync(file, 'utf8')) as Partial<DemoFile>;
    if (typeof j.email === 'string' && typeof j.password === 'string' && typeof j.token === 'string')
      return { email: j.email, password: j.password, token: j.token };
  } catch {
    // first run, or unreadable: recreated below
  }
  return null;
}

function writeDemoFile(file: string, d: DemoFile): void {
  const tmp = file + '.tmp';
  writeFileSync(tmp, JSON.stringify(d, null, 2) + '\n', { mode: 0o600 });
  renameSync(tmp, file);
}

export async function ensureDemoAccount(store: FullStore, dataDir: string): Promise<DemoAccount> {
  mkdirSync(dataDir, { recursive: true });
  const file = join(dataDir, 'demo.json');
  const saved = readDemoFile(file);
  let password = saved?.password ?? '';
  let changed = false;
  let passwordChanged = false;

  let account = await store.accountByEmail(DEMO_EMAIL);
  if (account === null) {
    password = randomBytes(12).toString('base64url');
    account = await store.createAccount(DEMO_EMAIL, await hashPassword(password));
    changed = true;
  } else if (saved === null) {
    // The file was lost: a new password we can print.
    password = randomBytes(12).toString('base64url');
    await store.setPasswordHash(account.id, await hashPassword(password));
    changed = true;
  } else if (!(await verifyPassword(password, account.passwordHash))) {
    passwordChanged = true; // changed by its user: theirs now, not ours to reset
  }

  const stack = (await store.stackByName(account.id, DEMO_STACK)) ?? (await store.createStack(account.id, DEMO_STACK, 'Created by the demo'));

  let token = saved?.token ?? '';
  const tokens = await store.listTokens(account.id, stack.id);
  // The store keeps only hashes: the saved token is still good when a token with its prefix is.
  const kept = token !== '' && tokens.some((t) => t.prefix === tokenPrefix(token) && t.label === DEMO_LABEL);
  if (!kept) {
    token = (await store.createToken(account.id, stack.id, DEMO_LABEL)).token;
    changed = true;
  }
  if (changed || saved?.email !== DEMO_EMAIL) writeDemoFile(file, { email: DEMO_EMAIL, password, token });
  return { email: DEMO_EMAIL, password: passwordChanged ? null : password, stack, token };
}
