// Runs the built CLI (dist/src/cli/main.js) as a child process and collects its output.

import { spawn, type ChildProcess } from 'node:child_process';

export const CLI = new URL('../../src/cli/main.js', import.meta.url).pathname;

export interface CliProc {
  child: ChildProcess;
  out: () => string;
  /** Resolves with the first match of `re` in stdout+stderr. */
  waitFor(re: RegExp, timeoutMs?: number): Promise<RegExpMatchArray>;
  exited: Promise<number | null>;
}

export function runCli(args: string[], opts: { cwd?: string; env?: NodeJS.ProcessEnv } = {}): CliProc {
  const child = spawn(process.execPath, [CLI, ...args], { cwd: opts.cwd, env: { ...process.env, ...opts.env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  const waiters: (() => void)[] = [];
  const on = (d: Buffer): void => {
    out += d.toString();
    for (const w of waiters.splice(0)) w();
  };
  child.stdout!.on('data', on);
  child.stderr!.on('data', on);
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return {
    child,
    out: () => out,
    exited,
    waitFor(re, timeoutMs = 30_000) {
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`timed out waiting for ${re} in:\n${out}`)), timeoutMs);
        const check = (): void => {
          const m = out.match(re);
          if (m) {
            clearTimeout(timer);
            resolve(m);
          } else if (child.exitCode !== null) {
            clearTimeout(timer);
            reject(new Error(`process exited (${child.exitCode}) before ${re}:\n${out}`));
          } else waiters.push(check);
        };
        void exited.then(() => waiters.length > 0 && check());
        check();
      });
    },
  };
}
