// A throwaway PostgreSQL cluster for tests: initdb into a temp folder, started on 127.0.0.1 at
// a free port with trust auth, durability off (fsync, full page writes, synchronous commit:
// nothing here must survive a crash) so it starts in a second or two. As root it runs as
// the `postgres` user (PostgreSQL refuses root). stop() removes everything; a process that
// exits without calling it still stops the server (an exit hook).
//
//   const pg = await startPostgres();           // or postgresSkipReason() first, for { skip }
//   t.teardown(() => pg.stop());
//   const url = await pg.createDatabase('jg1');  // postgres://postgres@127.0.0.1:PORT/jg1

import { execFile, execFileSync } from 'node:child_process';
import { chownSync, chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import { freePort } from './ports.js';

const run = promisify(execFile);

export interface Postgres {
  /** postgres://postgres@127.0.0.1:PORT/DB (default database `postgres`). */
  url(db?: string): string;
  /** Creates database `name` (letters, digits, _) and returns its URL. */
  createDatabase(name: string): Promise<string>;
  /** The server's port. */
  readonly port: number;
  stop(): Promise<void>;
}

/** The bin folder of the newest PostgreSQL installed under /usr/lib/postgresql, or null. */
export function postgresBinDir(): string | null {
  const root = '/usr/lib/postgresql';
  if (!existsSync(root)) return null;
  const versions = readdirSync(root)
    .filter((v) => existsSync(join(root, v, 'bin', 'initdb')) && existsSync(join(root, v, 'bin', 'pg_ctl')))
    .sort((a, b) => Number(b) - Number(a));
  return versions.length === 0 ? null : join(root, versions[0]!, 'bin');
}

const isRoot = (): boolean => process.getuid?.() === 0;

function postgresUser(): { uid: number; gid: number } | null {
  try {
    const uid = Number(execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8' }).trim());
    const gid = Number(execFileSync('id', ['-g', 'postgres'], { encoding: 'utf8' }).trim());
    return { uid, gid };
  } catch {
    return null;
  }
}

/** Why the PostgreSQL tests cannot run here (for tap's `skip`), or false when they can. */
export function postgresSkipReason(): string | false {
  if (postgresBinDir() === null) return 'PostgreSQL not installed (no /usr/lib/postgresql/*/bin/initdb): apt-get install -y postgresql';
  if (isRoot() && postgresUser() === null) return 'running as root and there is no postgres user to run PostgreSQL as';
  return false;
}

/** Starts a cluster; rejects (having cleaned up) when it cannot. */
export async function startPostgres(): Promise<Postgres> {
  const bin = postgresBinDir();
  if (bin === null) throw new Error(String(postgresSkipReason()));
  const dir = mkdtempSync(join(tmpdir(), 'jg-pg-'));
  const data = join(dir, 'data');
  const owner = isRoot() ? postgresUser() : null;
  if (isRoot() && owner === null) throw new Error(String(postgresSkipReason()));
  // As root, every PostgreSQL command runs as `postgres`, which must own the folder.
  const cmd = (file: string, args: string[]): Promise<unknown> =>
    owner === null ? run(join(bin, file), args, { cwd: dir }) : run('runuser', ['-u', 'postgres', '--', join(bin, file), ...args], { cwd: dir });
  if (owner !== null) chownSync(dir, owner.uid, owner.gid);
  chmodSync(dir, 0o700);
  let started = false;
  const stopSync = (): void => {
    if (!started) return;
    started = false;
    try {
      const args = [join(bin, 'pg_ctl'), 'stop', '-D', data, '-m', 'immediate', '-s'];
      if (owner === null) execFileSync(args[0]!, args.slice(1), { cwd: dir, stdio: 'ignore' });
      else execFileSync('runuser', ['-u', 'postgres', '--', ...args], { cwd: dir, stdio: 'ignore' });
    } catch {
      // Already gone.
    }
  };
  const onExit = (): void => {
    stopSync();
    rmSync(dir, { recursive: true, force: true });
  };
  process.once('exit', onExit);
  const cleanup = async (): Promise<void> => {
    process.removeListener('exit', onExit);
    if (started) {
      started = false;
      await cmd('pg_ctl', ['stop', '-D', data, '-m', 'immediate', '-s']).catch(() => {});
    }
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    await cmd('initdb', ['--no-sync', '-D', data, '-U', 'postgres', '-A', 'trust', '-E', 'UTF8', '--locale=C']);
    const sockets = join(dir, 'sock');
    mkdirSync(sockets);
    if (owner !== null) chownSync(sockets, owner.uid, owner.gid);
    let port = 0;
    // Another process may take the free port between the probe and the start: try again.
    for (let attempt = 0; ; attempt++) {
      port = await freePort();
      const opts = `-c listen_addresses=127.0.0.1 -p ${port} -c unix_socket_directories=${sockets} -c fsync=off -c full_page_writes=off -c synchronous_commit=off -c max_connections=200`;
      try {
        started = true;
        await cmd('pg_ctl', ['start', '-D', data, '-w', '-t', '60', '-s', '-l', join(dir, 'log'), '-o', opts]);
        break;
      } catch (err) {
        started = false;
        if (attempt >= 2) throw err;
      }
    }
    const url = (db = 'postgres'): string => `postgres://postgres@127.0.0.1:${port}/${db}`;
    return {
      port,
      url,
      async createDatabase(name: string): Promise<string> {
        if (!/^[a-z_][a-z0-9_]*$/.test(name)) throw new Error(`database name "${name}": letters, digits and _ only`);
        const c = new pg.Client({ connectionString: url() });
        await c.connect();
        try {
          await c.query(`CREATE DATABASE ${name}`);
        } finally {
          await c.end();
        }
        return url(name);
      },
      stop: cleanup,
    };
  } catch (err) {
    await cleanup();
    throw err;
  }
}
