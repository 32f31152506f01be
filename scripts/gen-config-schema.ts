// Writes config.schema.json (JSON Schema for editors) from src/config/json-schema.ts.
// Usage: node dist/scripts/gen-config-schema.js [OUT]   (default: the repo root)
import { writeFileSync } from 'node:fs';
import { configJsonSchema } from '../src/config/json-schema.js';

const out = process.argv[2] ?? new URL('../../config.schema.json', import.meta.url);
writeFileSync(out, JSON.stringify(configJsonSchema(), null, 2) + '\n');
