// The CLI's documented short form (docs/cli.md "Running the CLI"): `npx jumpgate …` from the
// repository after `npm install`. The command comes from the small package in cli/, which the
// install links into node_modules/.bin; npx runs it from there in place. Had the root
// package.json named the command itself, npm 11's npx would install the whole repository with
// its dependencies into its cache first (about 50 s of silence with an empty cache), and a run
// interrupted during that install left a folder in the cache that broke every later run.

import { execFile, spawn } from 'node:child_process';
import { accessSync, constants, existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import t from 'tap';
import { eventually } from '../helpers/eventually.js';

type Test = Parameters<Parameters<typeof t.test>[0]>[0];

const run = promisify(execFile);
/** The repository root: this file runs from dist/test/integration/. */
const ROOT = fileURLToPath(new URL('../../../', import.meta.url));

/** npx with a cache of its own, empty; offline: the command is local or nothing, never a download. */
function npxEnv(t: Test): { env: NodeJS.ProcessEnv; cache: string } {
  const cache = mkdtempSync(join(tmpdir(), 'jumpgate-npx-'));
  t.teardown(() => rmSync(cache, { recursive: true, force: true }));
  return { cache, env: { ...process.env, npm_config_cache: cache, npm_config_offline: 'true', npm_config_update_notifier: 'false' } };
}

/** `npx jumpgate --help` answers; the deadline is generous, the speed is what `_npx` being absent shows. */
async function helpAnswers(t: Test, env: NodeJS.ProcessEnv, cwd = ROOT): Promise<void> {
  const { stdout } = await run('npx', ['jumpgate', '--help'], { cwd, timeout: 20_000, env });
  t.match(stdout, /^usage: jumpgate <command> \[options\]/);
  t.match(stdout, /^\s+start \[--config FILE\]/m);
}

t.test('the jumpgate command comes from cli/, linked by the dependency on it', async (t) => {
  const read = (p: string): any => JSON.parse(readFileSync(join(ROOT, p), 'utf8'));
  const root = read('package.json');
  t.equal(root.bin?.jumpgate, undefined, 'the root package names no jumpgate command (npx would install the repository into its cache)');
  t.equal(root.dependencies['jumpgate-cli'], 'file:cli', 'a dependency, so that a production install keeps the command');
  t.equal(root.devDependencies.jumpgate, undefined);
  const cli = read('cli/package.json');
  t.same(cli.bin, { jumpgate: 'jumpgate.js' });
  t.doesNotThrow(() => accessSync(join(ROOT, 'cli/jumpgate.js'), constants.X_OK), 'cli/jumpgate.js is executable');
  t.doesNotThrow(() => accessSync(join(ROOT, 'node_modules/.bin/jumpgate'), constants.X_OK), 'npm install linked it into node_modules/.bin');
});

t.test('npx jumpgate --help with an empty npm cache: answers, installs nothing into the cache', async (t) => {
  const { env, cache } = npxEnv(t);
  await helpAnswers(t, env);
  t.notOk(existsSync(join(cache, '_npx')), 'npx made no _npx folder: it ran node_modules/.bin/jumpgate in place');
  // From a folder below the root too: npx looks for node_modules/.bin up the tree.
  await helpAnswers(t, env, join(ROOT, 'docs'));
  t.notOk(existsSync(join(cache, '_npx')));
});

for (const signal of ['SIGINT', 'SIGKILL'] as const) {
  t.test(`an npx jumpgate interrupted by ${signal} leaves nothing that breaks the next one`, async (t) => {
    const { env, cache } = npxEnv(t);
    const child = spawn('npx', ['jumpgate', '--help'], { cwd: ROOT, env, stdio: 'ignore' });
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    t.teardown(() => void child.kill('SIGKILL'));
    // Where an install into the cache would be under way (its folder made), or shortly after the start.
    const started = Date.now();
    await eventually('npx to start on its cache', () => child.exitCode !== null || existsSync(join(cache, '_npx')) || Date.now() - started > 500, 10_000);
    child.kill(signal);
    await exited;
    await helpAnswers(t, env);
    t.notOk(existsSync(join(cache, '_npx')), 'still no _npx folder');
  });
}
