// Writes each WebAssembly module's embedding TypeScript file from its .wat source.
// Usage: npm run gen:wasm
import { writeFileSync } from 'node:fs';
import { assembleWat, WASM_MODULES, wasmModuleText } from './wasm-text.js';

const root = new URL('../../', import.meta.url);
for (const m of WASM_MODULES) {
  const wasm = await assembleWat(new URL(m.wat, root));
  writeFileSync(new URL(m.ts, root), wasmModuleText(m.wat, wasm));
  console.log(`${m.ts}: ${wasm.length} bytes of WebAssembly`);
}
