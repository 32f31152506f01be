// Usage roll-ups against the naive reference, on PostgreSQL (usage-rollups-suite.ts); skipped
// with the reason when PostgreSQL is not installed.

import { POSTGRES } from './backends.js';
import { rollupTests } from './usage-rollups-suite.js';

rollupTests(POSTGRES);
