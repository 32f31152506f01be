// A real EVM JSON-RPC node for tests: the anvil binary from the platform package of @foundry-rs/anvil
// ships in its platform package (@foundry-rs/anvil-<os>-<arch>/bin/anvil). Nothing is
// downloaded at run time: when the binary is missing (the optional platform package was not
// installed, or this platform has none) or does not run, `anvilUnavailable()` says why and the
// tests skip with that reason.
//
// anvil listens on 127.0.0.1 with `--port 0` and prints "Listening on 127.0.0.1:PORT"; HTTP and
// WS share that port. By default it mines only on demand (`mine()` → `evm_mine`), which keeps
// tests fast and deterministic; pass `blockTime` for interval mining.

import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { accessSync, constants, existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { eventually } from './eventually.js';

const require = createRequire(import.meta.url);

const START_TIMEOUT_MS = 10_000;

export interface Anvil {
  /** http://127.0.0.1:PORT */
  httpUrl: string;
  /** ws://127.0.0.1:PORT */
  wsUrl: string;
  pid: number;
  /** JSON-RPC call straight to anvil (not through the gateway); throws on an error answer. */
  rpc<T = unknown>(method: string, params?: unknown[]): Promise<T>;
  /** Mines `blocks` blocks now (anvil_mine), each emitting a newHeads notification. */
  mine(blocks?: number): Promise<void>;
  close(): Promise<void>;
}

export interface AnvilOptions {
  /** Interval mining every N seconds (`--block-time`); default: mine on demand only. */
  blockTime?: number;
}

function platformPackage(): string | null {
  const arch = process.arch === 'x64' ? 'amd64' : process.arch === 'arm64' ? 'arm64' : null;
  if (arch === null) return null;
  if (process.platform === 'linux' || process.platform === 'darwin') return `@foundry-rs/anvil-${process.platform}-${arch}`;
  if (process.platform === 'win32' && arch === 'amd64') return '@foundry-rs/anvil-win32-amd64';
  return null;
}

/** Where the package's binary is, the same way its `bin.mjs` looks for it; null if absent. */
export function anvilBinaryPath(): string | null {
  const exe = process.platform === 'win32' ? 'anvil.exe' : 'anvil';
  const candidates: string[] = [];
  const pkg = platformPackage();
  if (pkg !== null) {
    try {
      candidates.push(require.resolve(`${pkg}/bin/${exe}`));
    } catch {
      // optional dependency not installed
    }
  }
  try {
    // The package's postinstall fallback (it downloads there when the platform package is
    // missing; these tests never run it) and bin.mjs's `../dist` fallback.
    const main = dirname(require.resolve('@foundry-rs/anvil/package.json'));
    candidates.push(join(main, exe), join(main, '..', 'dist', exe));
  } catch {
    // @foundry-rs/anvil not installed
  }
  for (const c of candidates) {
    try {
      accessSync(c, constants.X_OK);
      return c;
    } catch {
      // try the next one
    }
  }
  return null;
}

let cachedReason: string | null | undefined;

/** Null when anvil can run here, else why not (used as the tests' skip reason). */
export function anvilUnavailable(): string | null {
  if (cachedReason !== undefined) return cachedReason;
  const bin = anvilBinaryPath();
  if (bin === null) {
    const pkg = platformPackage();
    cachedReason =
      pkg === null
        ? `no anvil binary for ${process.platform}/${process.arch}`
        : `anvil binary not found (npm package ${pkg} not installed; the devDependency @foundry-rs/anvil-linux-amd64 provides it on linux-x64)`;
    return cachedReason;
  }
  if (!existsSync(bin)) return (cachedReason = `anvil binary missing at ${bin}`);
  const r = spawnSync(bin, ['--version'], { encoding: 'utf8', timeout: 5000 });
  if (r.error !== undefined) cachedReason = `anvil binary at ${bin} does not run: ${r.error.message}`;
  else if (r.status !== 0) cachedReason = `anvil --version exited ${r.status}: ${(r.stderr || r.stdout).trim().slice(0, 200)}`;
  else cachedReason = null;
  return cachedReason;
}

async function rpcAt<T>(url: string, method: string, params: unknown[] = []): Promise<T> {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
    signal: AbortSignal.timeout(5000),
  });
  const body = (await res.json()) as { result?: T; error?: { code: number; message: string } };
  if (body.error !== undefined) throw new Error(`${method}: ${body.error.code} ${body.error.message}`);
  return body.result as T;
}

function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const kill = setTimeout(() => child.kill('SIGKILL'), 3000);
    child.once('exit', () => {
      clearTimeout(kill);
      resolve();
    });
    child.kill('SIGTERM');
  });
}

/** Starts anvil on a free port and resolves once it answers eth_blockNumber. */
export async function startAnvil(opts: AnvilOptions = {}): Promise<Anvil> {
  const reason = anvilUnavailable();
  if (reason !== null) throw new Error(reason);
  const bin = anvilBinaryPath()!;
  const args = ['--host', '127.0.0.1', '--port', '0', '--accounts', '2'];
  if (opts.blockTime !== undefined) args.push('--block-time', String(opts.blockTime));
  const child = spawn(bin, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  const port = await new Promise<number>((resolve, reject) => {
    const timer = setTimeout(() => fail(new Error(`anvil did not start within ${START_TIMEOUT_MS} ms: ${output.slice(-500)}`)), START_TIMEOUT_MS);
    const fail = (err: Error): void => {
      clearTimeout(timer);
      void stop(child).then(() => reject(err));
    };
    const onData = (chunk: Buffer): void => {
      output += chunk.toString();
      const m = /Listening on 127\.0\.0\.1:(\d+)/.exec(output);
      if (m !== null) {
        clearTimeout(timer);
        child.stdout!.off('data', onData);
        child.stdout!.resume(); // keep draining so anvil never blocks on a full pipe
        resolve(Number(m[1]));
      }
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.once('error', (err) => fail(err));
    child.once('exit', (code, signal) => fail(new Error(`anvil exited (${code ?? signal}) before listening: ${output.slice(-500)}`)));
  });
  child.removeAllListeners('exit');
  child.removeAllListeners('error');
  child.on('error', () => undefined);

  const httpUrl = `http://127.0.0.1:${port}`;
  let lastError = '';
  try {
    await eventually(
      () => `anvil on ${httpUrl} to answer eth_blockNumber (${lastError})`,
      async () => {
        try {
          await rpcAt<string>(httpUrl, 'eth_blockNumber');
          return true;
        } catch (err) {
          lastError = (err as Error).message;
          return false;
        }
      },
      START_TIMEOUT_MS,
      50,
    );
  } catch (err) {
    await stop(child);
    throw err;
  }
  return {
    httpUrl,
    wsUrl: `ws://127.0.0.1:${port}`,
    pid: child.pid!,
    rpc: (method, params) => rpcAt(httpUrl, method, params),
    async mine(blocks = 1) {
      await rpcAt(httpUrl, 'anvil_mine', ['0x' + blocks.toString(16)]);
    },
    close: () => stop(child),
  };
}
