// Where the page scripts, the stylesheet and Chart.js live. tsc copies no non-TS file, so the
// public folder is read from the source tree (src/console/public), found from this module's
// location whether it runs compiled (dist/src/console/) or from source (src/console/).
// Chart.js is served from its own package, never a CDN: console machines may be offline.

import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));

/** The folder holding app scripts and styles. */
export function publicDir(): string {
  const candidates = [
    join(here, 'public'), // running from src/console (tsx, ts-node)
    join(here, '..', '..', '..', 'src', 'console', 'public'), // running from dist/src/console
  ];
  for (const dir of candidates) if (existsSync(join(dir, 'common.js'))) return dir;
  throw new Error(`console assets not found; looked in ${candidates.join(', ')}`);
}

/** The folder holding Chart.js's UMD build (chart.umd.js). */
export function chartDir(): string {
  // The package's exports map has no entry for the UMD file; resolve the main entry instead.
  const dir = dirname(createRequire(import.meta.url).resolve('chart.js'));
  if (!existsSync(join(dir, 'chart.umd.js'))) throw new Error(`chart.umd.js not found in ${dir}`);
  return dir;
}
