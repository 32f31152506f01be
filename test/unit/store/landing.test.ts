// The landing tables on SQLite (landing-suite.ts).

import { SQLITE } from './backends.js';
import { landingTests } from './landing-suite.js';

landingTests(SQLITE);
