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

t.test('a module whose memory cannot grow says so instead of throwing', async (t) => {
  const { WasmModule } = await import('../../../src/rpc/wasm-module.js');
  const { WASM_BASE64 } = await import('../../../src/rpc/answer-scan-wasm.js');
  const mod = new WasmModule(WASM_BASE64, 1 << 20);
  t.equal(mod.fit(1000), true, 'within the first page');
  t.equal(mod.fit(2 << 20), false, 'above the limit');
  (mod as unknown as { memory: { grow(pages: number): number } }).memory.grow = () => {
    throw new RangeError('WebAssembly.Memory.grow(): Maximum memory size exceeded');
  };
  t.equal(mod.fit(200_000), false, 'the grow failed: the caller reads the bytes another way');
  t.equal(mod.bytes.length, 65536, 'the views are the ones it had');
});
