// Each embedded WebAssembly module is the binary its .wat source in the repository assembles
// to: editing the source without `npm run gen:wasm` fails here.
import t from 'tap';
import { assembleWat, WASM_MODULES } from '../../../scripts/wasm-text.js';

const root = new URL('../../../../', import.meta.url);

t.test('embedded WebAssembly matches its source', async (t) => {
  t.ok(WASM_MODULES.length >= 2);
  for (const m of WASM_MODULES) {
    const wasm = await assembleWat(new URL(m.wat, root));
    const embedded = (await import(new URL('dist/' + m.ts.replace(/\.ts$/, '.js'), root).href)) as { WASM_BASE64: string };
    t.equal(embedded.WASM_BASE64, Buffer.from(wasm).toString('base64'), `${m.ts} is ${m.wat} assembled`);
  }
});
