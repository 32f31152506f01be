// The landing tables on PostgreSQL (landing-suite.ts); skipped with the reason when PostgreSQL
// is not installed.

import { POSTGRES } from './backends.js';
import { landingTests } from './landing-suite.js';

landingTests(POSTGRES);
