// Usage roll-ups against the naive reference, on SQLite (usage-rollups-suite.ts).

import { SQLITE } from './backends.js';
import { rollupTests } from './usage-rollups-suite.js';

rollupTests(SQLITE);
