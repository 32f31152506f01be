// The CLI's documented short form (docs/cli.md "Running the CLI"): `npx jumpgate …` from the
// repository root after `npm install`. npm 11 runs a package's own bin by linking the package
// into its npx cache (building it there once with `prepare`); npm 10 looks in
// node_modules/.bin, where the devDependency on itself ("jumpgate": "file:.") puts the link. Either
// way npx runs dist/src/cli/main.js directly, so the build keeps it executable.

import { execFile } from 'node:child_process';
import { accessSync, constants, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import t from 'tap';

const run = promisify(execFile);
/** The repository root: this file runs from dist/test/integration/. */
const ROOT = fileURLToPath(new URL('../../../', import.meta.url));

t.test('package.json links its own bin for npx', async (t) => {
  const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { bin: Record<string, string>; devDependencies: Record<string, string> };
  t.equal(pkg.bin.jumpgate, 'dist/src/cli/main.js');
  t.equal(pkg.devDependencies.jumpgate, 'file:.', 'the devDependency on itself that links node_modules/.bin/jumpgate');
  t.doesNotThrow(() => accessSync(join(ROOT, pkg.bin.jumpgate), constants.X_OK), 'the built CLI is executable');
});

t.test('npx jumpgate --help runs the CLI from the repository root', async (t) => {
  // --no-install: the local package or nothing, never a download. A cache of its own, so an
  // interrupted run elsewhere cannot leave a half-made npx folder behind; no scripts, as
  // `npm test` has just built dist/ (npx would otherwise run `prepare` there once).
  const cache = mkdtempSync(join(tmpdir(), 'jumpgate-npx-'));
  t.teardown(() => rmSync(cache, { recursive: true, force: true }));
  const env = { ...process.env, npm_config_cache: cache, npm_config_ignore_scripts: 'true', npm_config_update_notifier: 'false' };
  const { stdout } = await run('npx', ['--no-install', 'jumpgate', '--help'], { cwd: ROOT, timeout: 60_000, env });
  t.match(stdout, /^usage: jumpgate <command> \[options\]/);
  t.match(stdout, /^\s+start \[--config FILE\]/m);
});
