#!/usr/bin/env node
// The `jumpgate` command (docs/cli.md "Running the CLI"). It lives in a package of its own, linked
// into node_modules/.bin by the repository's dependency on it, because npm 11's npx installs a
// copy of a package whose own package.json names the command into its npx cache (slowly, and
// broken for good when interrupted); a command found in node_modules/.bin it runs in place.

import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

// Resolved from this file's real path: the link in node_modules/.bin points here.
const main = new URL('../dist/src/cli/main.js', import.meta.url);
if (!existsSync(fileURLToPath(main))) {
  process.stderr.write(`jumpgate: ${fileURLToPath(main)} is not built yet: run \`npm install\` (or \`npx tsc -p .\`) in the repository\n`);
  process.exit(1);
}
await import(main.href);
