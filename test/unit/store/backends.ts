// The store tests run against every backend: SQLite (in memory or in a temp file) and, when
// PostgreSQL is installed, a real server (test/helpers/postgres.ts): one cluster per test file,
// started on first use, and a fresh database for every store a test opens.

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import tap from 'tap';
import { openStore } from '../../../src/store/open.js';
import type { FullStore } from '../../../src/store/types.js';
import { postgresSkipReason, startPostgres, type Postgres } from '../../helpers/postgres.js';

type Test = Parameters<Parameters<typeof tap.test>[0]>[0];

export interface StoreBackend {
  name: 'sqlite' | 'postgres';
  /** Why this backend's tests are skipped here, or false. */
  skip: string | false;
  /** The URL of a new, empty database (a temp file for SQLite, so several stores can share it). */
  freshUrl(t: Test): Promise<string>;
  /** A store on a new, empty database, closed when `t` ends. */
  open(t: Test): Promise<FullStore>;
}

let cluster: Promise<Postgres> | null = null;
let databases = 0;

/** This file's PostgreSQL cluster, started on first use and stopped when the file's tests end. */
export function postgresCluster(): Promise<Postgres> {
  if (cluster === null) {
    cluster = startPostgres();
    tap.teardown(async () => (await cluster!).stop());
  }
  return cluster;
}

async function openIn(t: Test, url: string): Promise<FullStore> {
  const s = await openStore(url);
  t.teardown(() => s.close());
  return s;
}

export const SQLITE: StoreBackend = {
  name: 'sqlite',
  skip: false,
  async freshUrl(t) {
    const dir = mkdtempSync(join(tmpdir(), 'jg-store-'));
    t.teardown(() => rmSync(dir, { recursive: true, force: true }));
    return `sqlite://${join(dir, 'jg.db')}`;
  },
  open: (t) => openIn(t, 'sqlite://:memory:'),
};

export const POSTGRES: StoreBackend = {
  name: 'postgres',
  skip: postgresSkipReason(),
  async freshUrl() {
    return (await postgresCluster()).createDatabase(`jg_test_${++databases}`);
  },
  async open(t) {
    return openIn(t, await POSTGRES.freshUrl(t));
  },
};

/** Every backend, SQLite first. */
export const BACKENDS: readonly StoreBackend[] = [SQLITE, POSTGRES];
